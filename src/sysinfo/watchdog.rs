//! Lockup watchdogs: the soft-lockup watchdog (a per-CPU timer and
//! thread) and the hard-lockup (NMI) watchdog, which fires a
//! non-maskable interrupt on every watched CPU periodically.

use super::SysRoot;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Watchdogs {
    pub watchdog: Option<i64>,
    pub nmi_watchdog: Option<i64>,
    pub soft_watchdog: Option<i64>,
    /// CPUs the watchdogs run on.
    pub cpus: Option<Vec<usize>>,
}

pub fn watchdogs(root: &SysRoot) -> Watchdogs {
    Watchdogs {
        watchdog: root.read_i64("/proc/sys/kernel/watchdog"),
        nmi_watchdog: root.read_i64("/proc/sys/kernel/nmi_watchdog"),
        soft_watchdog: root.read_i64("/proc/sys/kernel/soft_watchdog"),
        cpus: root.read_cpus("/proc/sys/kernel/watchdog_cpumask"),
    }
}
