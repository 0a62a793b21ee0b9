//! Kernel facts: uname, the build configuration, and the preemption model
//! (PREEMPT_RT and friends), found from every place that can tell.

use super::SysRoot;
use crate::kinds::{Named, PreemptionModel};
use flate2::read::GzDecoder;
use std::collections::BTreeMap;
use std::io::Read;

/// `uname` fields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Uname {
    pub nodename: String,
    pub release: String,
    pub version: String,
    pub machine: String,
}

/// uname of the running kernel; in a fake tree, read from
/// `proc/sys/kernel/{hostname,osrelease,version}` and `machine`.
pub fn uname(root: &SysRoot) -> Uname {
    if root.is_host() {
        let u = rustix::system::uname();
        let s = |c: &std::ffi::CStr| c.to_string_lossy().into_owned();
        return Uname {
            nodename: s(u.nodename()),
            release: s(u.release()),
            version: s(u.version()),
            machine: s(u.machine()),
        };
    }
    Uname {
        nodename: root.read("/proc/sys/kernel/hostname").unwrap_or_default(),
        release: root.read("/proc/sys/kernel/osrelease").unwrap_or_default(),
        version: root.read("/proc/sys/kernel/version").unwrap_or_default(),
        machine: root.read("/machine").unwrap_or_default(),
    }
}

/// The id of this boot (`/proc/sys/kernel/random/boot_id`): a new one
/// at every boot.
pub fn boot_id(root: &SysRoot) -> Option<String> {
    root.read("/proc/sys/kernel/random/boot_id")
}

/// The kernel build configuration, from `/proc/config.gz` or
/// `/boot/config-RELEASE`. Keys keep their `CONFIG_` prefix; "is not set"
/// lines are stored as "n".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelConfig {
    pub source: String,
    pub values: BTreeMap<String, String>,
}

impl KernelConfig {
    pub fn parse(text: &str, source: &str) -> KernelConfig {
        let mut values = BTreeMap::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("# ") {
                if let Some(name) = rest.strip_suffix(" is not set") {
                    values.insert(name.to_string(), "n".to_string());
                }
            } else if let Some((k, v)) = line.split_once('=')
                && k.starts_with("CONFIG_")
            {
                values.insert(k.to_string(), v.trim_matches('"').to_string());
            }
        }
        KernelConfig {
            source: source.to_string(),
            values,
        }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// True when `key` is built in (`y`) or a module (`m`).
    pub fn enabled(&self, key: &str) -> bool {
        matches!(self.get(key), Some("y") | Some("m"))
    }
}

/// Read the kernel configuration, if the system exposes it.
pub fn config(root: &SysRoot, release: &str) -> Option<KernelConfig> {
    if let Some(gz) = root.read_bytes("/proc/config.gz") {
        let mut text = String::new();
        if GzDecoder::new(&gz[..]).read_to_string(&mut text).is_ok() {
            return Some(KernelConfig::parse(&text, "/proc/config.gz"));
        }
    }
    let boot = format!("/boot/config-{release}");
    root.read(&boot).map(|t| KernelConfig::parse(&t, &boot))
}

/// The preemption model and how it was found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preemption {
    /// none, voluntary, full, lazy, rt, dynamic (mode unknown), unknown.
    pub model: Named<PreemptionModel>,
    pub dynamic: bool,
    /// For PREEMPT_DYNAMIC: the mode in force, when readable.
    pub dynamic_mode: Option<String>,
    pub evidence: Vec<String>,
}

impl Preemption {
    pub fn is_rt(&self) -> bool {
        self.model.is(PreemptionModel::Rt)
    }
}

/// Find the preemption model from `/sys/kernel/realtime`, the uname
/// version string (old "PREEMPT RT" and new "PREEMPT_RT" spellings,
/// "PREEMPT_DYNAMIC", "PREEMPT"), the kernel config, and for dynamic
/// kernels `/sys/kernel/debug/sched/preempt` or `preempt=` on the
/// command line.
pub fn preemption(
    root: &SysRoot,
    version: &str,
    config: Option<&KernelConfig>,
    cmdline: &str,
) -> Preemption {
    let mut p = Preemption {
        model: PreemptionModel::Unknown.into(),
        ..Default::default()
    };
    let realtime_file = says_realtime_file(root, &mut p);
    let (rt_uname, from_uname) = from_uname(version, &mut p);
    let (rt_config, from_config) = match config {
        Some(c) => from_config(c, &mut p),
        None => (false, None),
    };
    if realtime_file || rt_uname || rt_config {
        p.model = PreemptionModel::Rt.into();
        return p;
    }
    if p.dynamic {
        find_dynamic_mode(root, cmdline, from_config, &mut p);
        p.model = match &p.dynamic_mode {
            Some(m) => Named::parse(m),
            None => PreemptionModel::Dynamic.into(),
        };
        return p;
    }
    if let Some(m) = from_uname.or(from_config) {
        p.model = m.into();
    } else if !version.is_empty() {
        // A version string without any PREEMPT word: no forced preemption.
        p.model = PreemptionModel::None.into();
        p.evidence.push("uname -v names no PREEMPT option".into());
    }
    p
}

/// `/sys/kernel/realtime` reads 1 (PREEMPT_RT kernels).
fn says_realtime_file(root: &SysRoot, p: &mut Preemption) -> bool {
    if let Some(v) = root.read("/sys/kernel/realtime")
        && v == "1"
    {
        p.evidence.push("/sys/kernel/realtime = 1".into());
        return true;
    }
    false
}

/// What the uname version string says: PREEMPT_RT (either spelling),
/// and the model it names, if any (marks `p` dynamic for
/// PREEMPT_DYNAMIC).
fn from_uname(version: &str, p: &mut Preemption) -> (bool, Option<PreemptionModel>) {
    let words: Vec<&str> = version.split_whitespace().collect();
    let has = |w: &str| words.contains(&w);
    let old_rt = words.windows(2).any(|w| w[0] == "PREEMPT" && w[1] == "RT");
    let rt = has("PREEMPT_RT") || old_rt;
    if rt {
        p.evidence.push(format!(
            "uname -v says {}",
            if old_rt { "PREEMPT RT" } else { "PREEMPT_RT" }
        ));
    }
    let mut model = None;
    if has("PREEMPT_DYNAMIC") {
        p.dynamic = true;
        p.evidence.push("uname -v says PREEMPT_DYNAMIC".into());
    } else if has("PREEMPT_LAZY") {
        model = Some(PreemptionModel::Lazy);
        p.evidence.push("uname -v says PREEMPT_LAZY".into());
    } else if has("PREEMPT") && !old_rt {
        model = Some(PreemptionModel::Full);
        p.evidence.push("uname -v says PREEMPT".into());
    }
    (rt, model)
}

/// What the kernel config says: CONFIG_PREEMPT_RT, and the first model
/// it enables (marks `p` dynamic for CONFIG_PREEMPT_DYNAMIC).
pub(crate) fn from_config(c: &KernelConfig, p: &mut Preemption) -> (bool, Option<PreemptionModel>) {
    let rt = c.get("CONFIG_PREEMPT_RT") == Some("y");
    if rt {
        p.evidence
            .push(format!("CONFIG_PREEMPT_RT=y in {}", c.source));
    }
    if c.get("CONFIG_PREEMPT_DYNAMIC") == Some("y") {
        p.dynamic = true;
        p.evidence
            .push(format!("CONFIG_PREEMPT_DYNAMIC=y in {}", c.source));
    }
    let mut model = None;
    for (key, m) in [
        ("CONFIG_PREEMPT_LAZY", PreemptionModel::Lazy),
        ("CONFIG_PREEMPT", PreemptionModel::Full),
        ("CONFIG_PREEMPT_VOLUNTARY", PreemptionModel::Voluntary),
        ("CONFIG_PREEMPT_NONE", PreemptionModel::None),
    ] {
        if c.get(key) == Some("y") && model.is_none() {
            model = Some(m);
            p.evidence.push(format!("{key}=y in {}", c.source));
        }
    }
    (rt, model)
}

/// The mode a PREEMPT_DYNAMIC kernel runs in: from debugfs, else
/// `preempt=` on the command line, else the configured boot default.
fn find_dynamic_mode(
    root: &SysRoot,
    cmdline: &str,
    boot_default: Option<PreemptionModel>,
    p: &mut Preemption,
) {
    if let Some(s) = root.read("/sys/kernel/debug/sched/preempt") {
        // e.g. "none voluntary (full) lazy": the current one is in parentheses.
        if let Some(cur) = s.split_whitespace().find(|w| w.starts_with('(')) {
            let mode = cur.trim_matches(|c| c == '(' || c == ')').to_string();
            p.evidence
                .push(format!("/sys/kernel/debug/sched/preempt = {s}"));
            p.dynamic_mode = Some(mode);
        }
    }
    if p.dynamic_mode.is_none()
        && let Some(mode) = cmdline
            .split_whitespace()
            .find_map(|w| w.strip_prefix("preempt="))
    {
        p.evidence
            .push(format!("preempt={mode} on the kernel command line"));
        p.dynamic_mode = Some(mode.to_string());
    }
    if p.dynamic_mode.is_none() {
        // Without debugfs or preempt=, the boot default is the model
        // the kernel was configured with.
        if let Some(m) = boot_default {
            p.evidence.push(format!(
                "no preempt= on the command line: boot default {}",
                m.name()
            ));
            p.dynamic_mode = Some(m.name().to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::sysinfo::FakeTree;

    fn fake(files: &[(&str, &str)]) -> (SysRoot, FakeTree) {
        let t = FakeTree::new(files);
        (t.root(), t)
    }

    #[test]
    fn rt_from_every_source() {
        let (root, d) = fake(&[("/sys/kernel/realtime", "1\n")]);
        assert!(preemption(&root, "#1 SMP", None, "").is_rt());
        drop(d);
        let (root, d) = fake(&[]);
        assert!(preemption(&root, "#1 SMP PREEMPT_RT Thu Jan 1", None, "").is_rt());
        assert!(preemption(&root, "#1 SMP PREEMPT RT Thu Jan 1", None, "").is_rt());
        let cfg = KernelConfig::parse("CONFIG_PREEMPT_RT=y\n", "/boot/config-x");
        let p = preemption(&root, "#1 SMP", Some(&cfg), "");
        assert!(p.is_rt());
        assert!(p.evidence.iter().any(|e| e.contains("CONFIG_PREEMPT_RT")));
        drop(d);
    }

    #[test]
    fn dynamic_mode_from_debugfs_or_cmdline() {
        let (root, d) = fake(&[("/sys/kernel/debug/sched/preempt", "none (voluntary) full\n")]);
        let p = preemption(&root, "#1 SMP PREEMPT_DYNAMIC", None, "");
        assert!(p.dynamic);
        assert_eq!(p.model, "voluntary");
        drop(d);
        let (root, d) = fake(&[]);
        assert_eq!(
            preemption(&root, "#1 SMP PREEMPT_DYNAMIC", None, "quiet preempt=full").model,
            "full"
        );
        assert_eq!(
            preemption(&root, "#1 SMP PREEMPT_DYNAMIC", None, "").model,
            "dynamic"
        );
        assert_eq!(
            preemption(&root, "#1 SMP PREEMPT Mon", None, "").model,
            "full"
        );
        assert_eq!(preemption(&root, "#1 SMP Mon", None, "").model, "none");
        let dyn_none =
            KernelConfig::parse("CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_NONE=y\n", "c");
        let p = preemption(&root, "#1 SMP PREEMPT_DYNAMIC", Some(&dyn_none), "");
        assert_eq!((p.model.as_str(), p.dynamic), ("none", true));
        assert_eq!(
            preemption(
                &root,
                "#1 SMP PREEMPT_DYNAMIC",
                Some(&dyn_none),
                "preempt=full"
            )
            .model,
            "full"
        );
        let cfg = KernelConfig::parse(
            "# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_VOLUNTARY=y\n",
            "c",
        );
        assert_eq!(cfg.get("CONFIG_PREEMPT"), Some("n"));
        assert_eq!(preemption(&root, "", Some(&cfg), "").model, "voluntary");
        drop(d);
    }

    #[test]
    fn config_from_proc_gz() {
        use flate2::{Compression, write::GzEncoder};
        use std::io::Write;
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(b"CONFIG_HZ=1000\nCONFIG_LOCALVERSION=\"-rt\"\n")
            .unwrap();
        let gz = enc.finish().unwrap();
        let d = std::env::temp_dir().join(format!("rtscope-cfg-{}", crate::record::new_run_uuid()));
        std::fs::create_dir_all(d.join("proc")).unwrap();
        std::fs::write(d.join("proc/config.gz"), gz).unwrap();
        let c = config(&SysRoot::at(&d), "x").unwrap();
        assert_eq!(c.get("CONFIG_HZ"), Some("1000"));
        assert_eq!(c.get("CONFIG_LOCALVERSION"), Some("-rt"));
        std::fs::remove_dir_all(d).ok();
    }
}
