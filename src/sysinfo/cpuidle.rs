//! CPU idle states per CPU: the driver and governor, and each state's name,
//! exit latency and whether it is disabled
//! (`/sys/devices/system/cpu/cpuN/cpuidle/stateK`). Waking from a deep
//! state takes up to its exit latency, added to a timer's wake-up.

use super::SysRoot;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdleState {
    pub index: usize,
    pub name: String,
    pub desc: String,
    /// Worst-case time to leave the state, as the driver declares it.
    pub exit_latency_us: u64,
    pub disabled: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuIdle {
    pub driver: Option<String>,
    pub governor: Option<String>,
}

pub fn state_path(cpu: usize, index: usize, file: &str) -> String {
    format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{index}/{file}")
}

pub fn cpuidle(root: &SysRoot) -> CpuIdle {
    let ok = |v: Option<String>| v.filter(|s| !s.is_empty() && s != "none");
    CpuIdle {
        driver: ok(root.read("/sys/devices/system/cpu/cpuidle/current_driver")),
        governor: ok(root.read("/sys/devices/system/cpu/cpuidle/current_governor")),
    }
}

/// The idle states of `cpu` (empty without a cpuidle driver).
pub fn states(root: &SysRoot, cpu: usize) -> Vec<IdleState> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
    root.list(&dir)
        .iter()
        .filter_map(|n| n.strip_prefix("state")?.parse::<usize>().ok())
        .map(|index| IdleState {
            index,
            name: root
                .read(&state_path(cpu, index, "name"))
                .unwrap_or_default(),
            desc: root
                .read(&state_path(cpu, index, "desc"))
                .unwrap_or_default(),
            exit_latency_us: root
                .read(&state_path(cpu, index, "latency"))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            disabled: root.read(&state_path(cpu, index, "disable")).as_deref() == Some("1"),
        })
        .collect()
}
