//! The kernel a cell needs, matched against the running kernel's
//! fingerprint: a preemption model (`rt`, `full`, `voluntary`, `none`,
//! `lazy`; `PREEMPT_RT` and `preempt_rt` mean `rt`; `vanilla` any but
//! `rt`) or a release
//! (`6.18.0-rt3`, with `*` as a wildcard: `6.18*`, `*-rt*`). Pure.

use crate::kinds::{Named, PreemptionModel};

/// The running kernel, as far as cells care: its release and model, and
/// the boot it was started with (the command line and what of it took
/// effect).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub release: String,
    pub preemption_model: Named<PreemptionModel>,
    /// `/proc/cmdline`.
    pub cmdline: String,
    /// `/sys/devices/system/cpu/isolated`: the CPUs isolcpus took.
    pub isolated_cpus: Vec<usize>,
    /// `/sys/devices/system/cpu/nohz_full`: the CPUs nohz_full took.
    pub nohz_full_cpus: Vec<usize>,
}

impl Kernel {
    /// This machine's kernel.
    pub fn running() -> Kernel {
        Kernel::of(&crate::sysinfo::facts::Facts::gather(
            &crate::sysinfo::SysRoot::host(),
        ))
    }

    /// The kernel `facts` describe.
    pub fn of(f: &crate::sysinfo::facts::Facts) -> Kernel {
        Kernel {
            release: f.uname.release.clone(),
            preemption_model: f.preemption.model.clone(),
            cmdline: f.boot.raw.trim().to_string(),
            isolated_cpus: f.kernel_isolated.clone().unwrap_or_default(),
            nohz_full_cpus: f.timers.nohz_full_cpus.clone().unwrap_or_default(),
        }
    }

    /// A kernel known by its release and model only (no boot facts).
    pub fn plain(release: &str, model: &str) -> Kernel {
        Kernel {
            release: release.into(),
            preemption_model: model.into(),
            cmdline: String::new(),
            isolated_cpus: Vec::new(),
            nohz_full_cpus: Vec::new(),
        }
    }

    /// `release (model)`, e.g. `6.18.0-1-amd64 (none)`.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.release, self.preemption_model)
    }
}

/// The preemption model a requirement names, if it names one.
fn model_of(req: &str) -> Option<PreemptionModel> {
    Some(match req.to_ascii_lowercase().as_str() {
        "rt" | "preempt_rt" | "preempt-rt" => PreemptionModel::Rt,
        "full" | "preempt" => PreemptionModel::Full,
        "voluntary" | "preempt_voluntary" => PreemptionModel::Voluntary,
        "none" | "preempt_none" | "server" => PreemptionModel::None,
        "lazy" | "preempt_lazy" => PreemptionModel::Lazy,
        _ => return None,
    })
}

/// `text` matches `pattern`, where `*` stands for any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    if !text.ends_with(last) {
        return false;
    }
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// Whether `req` names any kernel but a PREEMPT_RT one.
pub fn is_vanilla(req: &str) -> bool {
    matches!(
        req.to_ascii_lowercase().as_str(),
        "vanilla" | "mainline" | "non-rt"
    )
}

/// Whether `kernel` is one a cell requiring `req` can run on.
pub fn satisfies(kernel: &Kernel, req: &str) -> bool {
    if is_vanilla(req) {
        return kernel
            .preemption_model
            .known()
            .is_some_and(|m| m != PreemptionModel::Rt);
    }
    match model_of(req) {
        Some(m) => kernel.preemption_model.is(m),
        None => glob(req, &kernel.release),
    }
}

/// The preemption model `req` names, if it names one (`vanilla` names
/// none: it is any model but rt).
pub fn model_named(req: &str) -> Option<PreemptionModel> {
    model_of(req)
}

/// Whether `release` matches the release pattern `req` (`*` a wildcard).
pub fn release_matches(req: &str, release: &str) -> bool {
    glob(req, release)
}

/// A kernel requirement that names nothing.
#[derive(Debug, thiserror::Error)]
#[error(
    "an empty kernel requirement: name a preemption model (rt, full, voluntary, none, lazy) or a release such as \"6.18*\""
)]
pub struct EmptyRequirement;

/// Whether `req` is a requirement this module understands (every text
/// is: a release pattern; an empty one is not).
pub fn check(req: &str) -> Result<(), EmptyRequirement> {
    if req.trim().is_empty() {
        return Err(EmptyRequirement);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(release: &str, model: &str) -> Kernel {
        Kernel::plain(release, model)
    }

    #[test]
    fn models_and_their_spellings() {
        let rt = k("6.18.0-rt3", "rt");
        let van = k("6.18.0-1-amd64", "none");
        for r in ["rt", "PREEMPT_RT", "preempt-rt"] {
            assert!(satisfies(&rt, r), "{r}");
            assert!(!satisfies(&van, r), "{r}");
        }
        assert!(satisfies(&van, "none"));
        assert!(satisfies(&van, "vanilla"));
        assert!(!satisfies(&rt, "vanilla"));
        assert!(!satisfies(&rt, "none"));
    }

    #[test]
    fn releases_with_wildcards() {
        let rt = k("6.18.0-rt3", "rt");
        assert!(satisfies(&rt, "6.18.0-rt3"));
        assert!(satisfies(&rt, "6.18*"));
        assert!(satisfies(&rt, "*-rt*"));
        assert!(satisfies(&rt, "*"));
        assert!(!satisfies(&rt, "6.1*-amd64"));
        assert!(!satisfies(&rt, "6.18"));
        assert!(!satisfies(&k("6.1", "none"), "6.1*6.1"));
        assert!(check("").is_err());
    }
}
