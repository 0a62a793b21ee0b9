//! Scheduler knobs: real-time throttling (`sched_rt_runtime_us` out of
//! `sched_rt_period_us`), and the heavy debug options of the kernel
//! configuration that slow every path real-time work goes through.

use super::SysRoot;
use super::kernel::KernelConfig;

pub const RT_RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";
pub const RT_PERIOD: &str = "/proc/sys/kernel/sched_rt_period_us";

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sched {
    /// -1: no throttling.
    pub rt_runtime_us: Option<i64>,
    pub rt_period_us: Option<i64>,
    /// Debug options built into the kernel that cost latency.
    pub debug_options: Vec<String>,
}

/// Kernel options known to add latency to locking, scheduling, memory
/// or interrupt paths (each is meant for debugging kernels, not for
/// measuring them).
pub const HEAVY_DEBUG_OPTIONS: &[&str] = &[
    "CONFIG_LOCKDEP",
    "CONFIG_PROVE_LOCKING",
    "CONFIG_DEBUG_LOCK_ALLOC",
    "CONFIG_LOCK_STAT",
    "CONFIG_DEBUG_PREEMPT",
    "CONFIG_DEBUG_ATOMIC_SLEEP",
    "CONFIG_DEBUG_OBJECTS",
    "CONFIG_DEBUG_PAGEALLOC",
    "CONFIG_DEBUG_KMEMLEAK",
    "CONFIG_DEBUG_VM",
    "CONFIG_KASAN",
    "CONFIG_KCSAN",
    "CONFIG_KMSAN",
    "CONFIG_UBSAN",
    "CONFIG_SLUB_DEBUG_ON",
    "CONFIG_PAGE_POISONING",
    "CONFIG_PREEMPT_TRACER",
    "CONFIG_IRQSOFF_TRACER",
    "CONFIG_SCHED_TRACER",
    "CONFIG_FUNCTION_GRAPH_TRACER",
    "CONFIG_DEBUG_RT_MUTEXES",
    "CONFIG_DEBUG_SPINLOCK",
    "CONFIG_DEBUG_MUTEXES",
    "CONFIG_RCU_TORTURE_TEST",
];

pub fn sched(root: &SysRoot, config: Option<&KernelConfig>) -> Sched {
    Sched {
        rt_runtime_us: root.read_i64(RT_RUNTIME),
        rt_period_us: root.read_i64(RT_PERIOD),
        debug_options: config
            .map(|c| {
                HEAVY_DEBUG_OPTIONS
                    .iter()
                    .filter(|k| c.get(k) == Some("y"))
                    .map(|k| k.to_string())
                    .collect()
            })
            .unwrap_or_default(),
    }
}
