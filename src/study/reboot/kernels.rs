//! The kernels installed in `/boot` (`vmlinuz-RELEASE`, its
//! `initrd.img-RELEASE` and `config-RELEASE`), and which one a boot
//! configuration asks for: a preemption model (read from the kernel's
//! config, `preempt=` choosing it on a PREEMPT_DYNAMIC kernel), `vanilla`
//! (any but PREEMPT_RT) or a release pattern. The kernel the machine
//! started from is preferred, then the newest release. Reads files only.

use super::super::boots::{Arg, BootNeed};
use crate::kinds::PreemptionModel;
use crate::sysinfo::SysRoot;
use crate::sysinfo::kernel::{KernelConfig, Preemption, from_config};
use crate::sysinfo::kernel_match;

/// One kernel in `/boot`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Installed {
    pub release: String,
    /// `/boot/vmlinuz-RELEASE`.
    pub image: String,
    /// `/boot/initrd.img-RELEASE`, if there is one.
    pub initrd: Option<String>,
    /// The model it boots into without `preempt=`, from its config.
    pub model: Option<PreemptionModel>,
    /// PREEMPT_DYNAMIC: `preempt=` chooses the model at boot.
    pub dynamic: bool,
}

impl Installed {
    /// The model this kernel runs with `args` on its command line.
    pub fn model_with(&self, args: &[Arg]) -> Option<PreemptionModel> {
        let chosen = args
            .iter()
            .find(|a| a.name == "preempt")
            .and_then(|a| a.value.as_deref())
            .and_then(kernel_match::model_named);
        match chosen {
            Some(m) if self.dynamic && self.model != Some(PreemptionModel::Rt) => Some(m),
            _ => self.model,
        }
    }

    fn describe(&self) -> String {
        match self.model {
            Some(m) => format!("{} ({})", self.release, crate::kinds::Named::from(m)),
            None => format!(
                "{} (model unknown: no /boot/config-{})",
                self.release, self.release
            ),
        }
    }
}

/// The model and dynamic flag a kernel config (`config-RELEASE`) says,
/// read as `doctor` reads the running kernel's.
fn model_of_config(text: &str, source: &str) -> (Option<PreemptionModel>, bool) {
    let c = KernelConfig::parse(text, source);
    let mut p = Preemption::default();
    let (rt, model) = from_config(&c, &mut p);
    (
        if rt { Some(PreemptionModel::Rt) } else { model },
        p.dynamic,
    )
}

/// Every kernel in `/boot` under `root`, by release.
pub fn installed(root: &SysRoot) -> Vec<Installed> {
    let mut out: Vec<Installed> = root
        .list("/boot")
        .into_iter()
        .filter_map(|n| n.strip_prefix("vmlinuz-").map(str::to_string))
        .filter(|r| !r.is_empty())
        .map(|release| {
            let initrd = format!("/boot/initrd.img-{release}");
            let config = format!("/boot/config-{release}");
            let (model, dynamic) = root
                .read(&config)
                .map(|t| model_of_config(&t, &config))
                .unwrap_or((None, false));
            Installed {
                image: format!("/boot/vmlinuz-{release}"),
                initrd: root.exists(&initrd).then_some(initrd),
                model,
                dynamic,
                release,
            }
        })
        .collect();
    out.sort_by_key(|k| crate::sysinfo::natural(&k.release));
    out
}

/// Whether `k`, booted with the need's arguments, is the need's kernel.
fn fits(k: &Installed, need: &BootNeed) -> bool {
    let Some(req) = &need.kernel else {
        return true;
    };
    if kernel_match::is_vanilla(req) {
        return k.model.is_some_and(|m| m != PreemptionModel::Rt);
    }
    match kernel_match::model_named(req) {
        Some(m) => k.model_with(&need.args) == Some(m),
        None => kernel_match::release_matches(req, &k.release),
    }
}

/// No installed kernel fits a boot configuration (`wanted`: its kernel
/// requirement, or `any`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoKernel {
    #[error("no kernel is installed in /boot (vmlinuz-*) to boot {wanted}")]
    NoneInstalled { wanted: String },
    /// Kernels are installed (`found`, described), none of them fits.
    #[error("no kernel installed in /boot is {wanted} (found: {found})")]
    NoneFits { wanted: String, found: String },
}

/// The kernel to boot for `need`: the home kernel (`home`) if it fits,
/// else the newest that does; `Err` says what is installed.
pub fn choose<'a>(
    need: &BootNeed,
    home: &str,
    installed: &'a [Installed],
) -> Result<&'a Installed, NoKernel> {
    let fitting: Vec<&Installed> = installed.iter().filter(|k| fits(k, need)).collect();
    if let Some(k) = fitting.iter().find(|k| k.release == home) {
        return Ok(k);
    }
    if let Some(k) = fitting.last() {
        return Ok(k);
    }
    let wanted = need.kernel.as_deref().unwrap_or("any").to_string();
    if installed.is_empty() {
        return Err(NoKernel::NoneInstalled { wanted });
    }
    let found: Vec<String> = installed.iter().map(Installed::describe).collect();
    Err(NoKernel::NoneFits {
        wanted,
        found: found.join(", "),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::study::boots::parse_args;
    use crate::sysinfo::FakeTree;

    pub(crate) fn boot_tree() -> FakeTree {
        FakeTree::new(&[
            ("/boot/vmlinuz-6.1.0-27-amd64", "x"),
            ("/boot/initrd.img-6.1.0-27-amd64", "x"),
            (
                "/boot/config-6.1.0-27-amd64",
                "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n",
            ),
            ("/boot/vmlinuz-6.1.0-27-rt-amd64", "x"),
            ("/boot/initrd.img-6.1.0-27-rt-amd64", "x"),
            ("/boot/config-6.1.0-27-rt-amd64", "CONFIG_PREEMPT_RT=y\n"),
            ("/boot/vmlinuz-6.1.0-9-amd64", "x"),
            (
                "/boot/config-6.1.0-9-amd64",
                "# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_NONE=y\n",
            ),
        ])
    }

    fn need(kernel: Option<&str>, args: &str) -> BootNeed {
        BootNeed {
            kernel: kernel.map(str::to_string),
            args: parse_args(args).unwrap(),
        }
    }

    #[test]
    fn the_kernels_in_boot_and_the_one_each_need_takes() {
        let t = boot_tree();
        let k = installed(&t.root());
        let releases: Vec<&str> = k.iter().map(|k| k.release.as_str()).collect();
        assert_eq!(
            releases,
            ["6.1.0-9-amd64", "6.1.0-27-amd64", "6.1.0-27-rt-amd64"]
        );
        assert_eq!(k[1].model, Some(PreemptionModel::Voluntary));
        assert!(k[1].dynamic);
        assert_eq!(k[0].initrd, None);
        let home = "6.1.0-27-amd64";
        let pick = |n: BootNeed| choose(&n, home, &k).map(|k| k.release.clone());
        assert_eq!(pick(need(Some("rt"), "")).unwrap(), "6.1.0-27-rt-amd64");
        assert_eq!(
            pick(need(Some("PREEMPT_RT"), "isolcpus=1")).unwrap(),
            "6.1.0-27-rt-amd64"
        );
        // The home kernel first, when it fits.
        assert_eq!(pick(need(Some("vanilla"), "")).unwrap(), home);
        assert_eq!(pick(need(None, "isolcpus=1")).unwrap(), home);
        // A model: the kernel built with it, or a dynamic one told so.
        assert_eq!(pick(need(Some("none"), "")).unwrap(), "6.1.0-9-amd64");
        assert_eq!(pick(need(Some("full"), "preempt=full")).unwrap(), home);
        let e = pick(need(Some("full"), "")).unwrap_err().to_string();
        assert!(
            e.starts_with("no kernel installed in /boot is full (found: 6.1.0-9-amd64 (none), "),
            "{e}"
        );
        assert_eq!(pick(need(Some("6.1.0-9*"), "")).unwrap(), "6.1.0-9-amd64");
        assert!(pick(need(Some("6.99*"), "")).is_err());
        let e = choose(&need(Some("rt"), ""), home, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("no kernel is installed"), "{e}");
    }
}
