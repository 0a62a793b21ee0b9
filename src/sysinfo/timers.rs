//! Timer facts: the tick rate (CONFIG_HZ), high-resolution timers, tickless
//! operation (NO_HZ_FULL and the CPUs it covers), the clocksource, and
//! timer migration.

use super::SysRoot;
use super::kernel::KernelConfig;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timers {
    /// CONFIG_HZ, ticks per second.
    pub hz: Option<u32>,
    /// CONFIG_HIGH_RES_TIMERS.
    pub high_res_config: Option<bool>,
    /// Resolution of CLOCK_MONOTONIC as `clock_getres` reports it (running
    /// system only): 1 ns when high-resolution timers are active.
    pub monotonic_resolution_ns: Option<u64>,
    /// CONFIG_NO_HZ_FULL.
    pub no_hz_full_config: Option<bool>,
    /// CPUs running without a periodic tick
    /// (`/sys/devices/system/cpu/nohz_full`).
    pub nohz_full_cpus: Option<Vec<usize>>,
    pub clocksource: Option<String>,
    pub clocksources_available: Vec<String>,
    /// `kernel.timer_migration` (1: timers may move to busy CPUs).
    pub timer_migration: Option<i64>,
}

pub const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
pub const TIMER_MIGRATION: &str = "/proc/sys/kernel/timer_migration";

pub fn timers(root: &SysRoot, config: Option<&KernelConfig>) -> Timers {
    let flag = |key: &str| config.map(|c| c.enabled(key));
    Timers {
        hz: config
            .and_then(|c| c.get("CONFIG_HZ"))
            .and_then(|v| v.parse().ok()),
        high_res_config: flag("CONFIG_HIGH_RES_TIMERS"),
        monotonic_resolution_ns: if root.is_host() {
            crate::sys::clock::resolution_ns(crate::sys::clock::Clock::Monotonic).ok()
        } else {
            root.read("/monotonic_resolution_ns")
                .and_then(|v| v.parse().ok())
        },
        no_hz_full_config: flag("CONFIG_NO_HZ_FULL"),
        nohz_full_cpus: root.read_cpus("/sys/devices/system/cpu/nohz_full"),
        clocksource: root.read(CLOCKSOURCE),
        clocksources_available: root
            .read("/sys/devices/system/clocksource/clocksource0/available_clocksource")
            .map(|s| s.split_whitespace().map(String::from).collect())
            .unwrap_or_default(),
        timer_migration: root.read_i64(TIMER_MIGRATION),
    }
}
