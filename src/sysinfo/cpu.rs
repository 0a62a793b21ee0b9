//! CPU facts: online, offline and allowed CPUs, the model name.

use super::SysRoot;
use crate::sys::sched;
use crate::units::parse_cpu_list;

/// CPUs the kernel has online (`/sys/devices/system/cpu/online`).
pub fn online_cpus(root: &SysRoot) -> Option<Vec<usize>> {
    root.read("/sys/devices/system/cpu/online")
        .and_then(|s| parse_cpu_list(&s).ok())
}

/// CPUs this process may use: its affinity, limited to online CPUs.
pub fn allowed_cpus() -> std::io::Result<Vec<usize>> {
    let mut cpus = sched::affinity_current()?;
    if let Some(online) = online_cpus(&SysRoot::host()) {
        cpus.retain(|c| online.contains(c));
    }
    Ok(cpus)
}

/// CPUs that exist but are offline (`/sys/devices/system/cpu/offline`).
pub fn offline_cpus(root: &SysRoot) -> Vec<usize> {
    root.read_cpus("/sys/devices/system/cpu/offline")
        .unwrap_or_default()
}

/// CPU model name from `/proc/cpuinfo` ("model name", or "Hardware" /
/// "Model" / "cpu model" on ARM and MIPS).
pub fn model_name(root: &SysRoot) -> String {
    let Some(info) = root.read("/proc/cpuinfo") else {
        return "unknown".into();
    };
    for key in ["model name", "Model", "Hardware", "cpu model", "Processor"] {
        for line in info.lines() {
            if let Some((k, v)) = line.split_once(':')
                && k.trim() == key
                && !v.trim().is_empty()
            {
                return v.trim().to_string();
            }
        }
    }
    "unknown".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    #[test]
    fn reads_model_and_online_from_fake_tree() {
        let t = FakeTree::new(&[
            (
                "/proc/cpuinfo",
                "processor\t: 0\nBogoMIPS\t: 108\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n",
            ),
            ("/sys/devices/system/cpu/online", "0-3\n"),
        ]);
        let root = t.root();
        assert_eq!(model_name(&root), "Raspberry Pi 4 Model B Rev 1.4");
        assert_eq!(online_cpus(&root), Some(vec![0, 1, 2, 3]));
    }
}
