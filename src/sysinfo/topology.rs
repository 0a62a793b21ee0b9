//! CPU topology: simultaneous multithreading (SMT, hyper-threads) and the
//! sibling threads that share each CPU's core.

use super::SysRoot;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Smt {
    /// `/sys/devices/system/cpu/smt/control`: on, off, forceoff,
    /// notsupported, notimplemented.
    pub control: Option<String>,
    pub active: Option<bool>,
    /// Largest number of hardware threads per core seen among online CPUs.
    pub threads_per_core: u32,
}

/// CPUs sharing `cpu`'s core, itself included.
pub fn siblings(root: &SysRoot, cpu: usize) -> Vec<usize> {
    root.read_cpus(&format!(
        "/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
    ))
    .or_else(|| {
        root.read_cpus(&format!(
            "/sys/devices/system/cpu/cpu{cpu}/topology/core_cpus_list"
        ))
    })
    .unwrap_or_else(|| vec![cpu])
}

/// SMT state; `threads_per_core` is the largest number of [`siblings`]
/// among online CPUs.
pub fn smt(root: &SysRoot, threads_per_core: u32) -> Smt {
    Smt {
        control: root.read("/sys/devices/system/cpu/smt/control"),
        active: root
            .read("/sys/devices/system/cpu/smt/active")
            .map(|v| v == "1"),
        threads_per_core,
    }
}
