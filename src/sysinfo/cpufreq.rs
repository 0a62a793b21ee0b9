//! CPU frequency scaling per CPU: driver, governor, and the limits the
//! frequency may move between (`/sys/devices/system/cpu/cpuN/cpufreq`).

use super::SysRoot;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuFreq {
    pub cpu: usize,
    pub driver: Option<String>,
    pub governor: Option<String>,
    pub available_governors: Vec<String>,
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    pub hw_max_khz: Option<u64>,
}

/// The sysfs path of a CPU's cpufreq file.
pub fn path(cpu: usize, file: &str) -> String {
    format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/{file}")
}

/// Frequency facts of `cpu`; `None` when it has no cpufreq policy (no
/// driver, as in most virtual machines).
pub fn cpufreq(root: &SysRoot, cpu: usize) -> Option<CpuFreq> {
    let governor = root.read(&path(cpu, "scaling_governor"));
    let driver = root.read(&path(cpu, "scaling_driver"));
    if governor.is_none() && driver.is_none() {
        return None;
    }
    let khz = |f: &str| root.read(&path(cpu, f)).and_then(|v| v.parse().ok());
    Some(CpuFreq {
        cpu,
        driver,
        governor,
        available_governors: root
            .read(&path(cpu, "scaling_available_governors"))
            .map(|s| s.split_whitespace().map(String::from).collect())
            .unwrap_or_default(),
        min_khz: khz("scaling_min_freq"),
        max_khz: khz("scaling_max_freq"),
        hw_max_khz: khz("cpuinfo_max_freq"),
    })
}
