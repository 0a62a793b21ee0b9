//! The data contract of `explain`: a latency spike to explain and its
//! explanation. Serialized into JSON (`explain --json`) and meant to
//! become an optional field of the run record, so every time names its
//! unit and closed sets are enums.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One late wake-up of a measuring thread. Times are CLOCK_MONOTONIC
/// nanoseconds (the clock rtscope's trace instance uses).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Spike {
    /// Index of the measuring thread in its run (0 for traces of other
    /// tools, which do not say).
    pub thread: u32,
    pub cpu: usize,
    /// Kernel thread id of the measuring thread.
    pub tid: i32,
    /// When the thread should have woken.
    pub deadline_ns: u64,
    /// When it read the clock after waking.
    pub wake_ns: u64,
    pub latency_ns: u64,
    /// The period's number, when the source says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle: Option<u64>,
}

/// A task's scheduling class and priority, decoded from the kernel's
/// `prio` (below 100: real-time priority `99 - prio`, FIFO and RR look
/// the same; 100..139: normal, `120 + nice`; -1: SCHED_DEADLINE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "class", rename_all = "snake_case")]
pub enum Priority {
    Realtime { rt_priority: u32 },
    Normal { nice: i32 },
    Deadline,
    Unknown,
}

impl Priority {
    pub fn from_kernel(prio: Option<i32>) -> Priority {
        match prio {
            Some(p) if p < 0 => Priority::Deadline,
            Some(p) if p < 100 => Priority::Realtime {
                rt_priority: (99 - p) as u32,
            },
            Some(p) if p < 140 => Priority::Normal { nice: p - 120 },
            _ => Priority::Unknown,
        }
    }
}

impl std::fmt::Display for Priority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Priority::Realtime { rt_priority } => write!(f, "RT {rt_priority}"),
            Priority::Normal { nice } => write!(f, "nice {nice}"),
            Priority::Deadline => write!(f, "DEADLINE"),
            Priority::Unknown => write!(f, "priority unknown"),
        }
    }
}

/// What took a share of the latency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Culprit {
    /// The timer fired after its deadline while no handler ran: interrupts
    /// were off or the hypervisor did not run this CPU (a trace cannot
    /// tell these apart). `idle`: the CPU was idle, so the exit from an
    /// idle state is part of it.
    TimerDelay {
        idle: bool,
    },
    /// A device interrupt handler.
    Irq {
        irq: u32,
        name: String,
    },
    /// An architecture vector or IPI handler (`local_timer`,
    /// `reschedule`, `call_function_single`, ...).
    Vector {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        vector: Option<u32>,
    },
    Softirq {
        vec: u32,
        action: String,
    },
    /// Another thread ran on the CPU instead.
    Thread {
        comm: String,
        pid: i32,
        priority: Priority,
        /// Workqueue functions it ran meanwhile (kworkers).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        work: Vec<String>,
        /// Of lower priority than the late thread, in a trace without
        /// the thread's timer and wake-up (the lean set): it ran because
        /// the timer fired late or because it held the CPU in the
        /// kernel, which such a trace cannot tell apart.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        outranked: bool,
    },
    /// The CPU was idle after the timer fired: leaving an idle state,
    /// or, when long, a hypervisor stall or RT throttling.
    Idle,
    /// From the switch to the thread until it read the clock.
    Switch,
}

/// One named share of the latency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Part {
    pub culprit: Culprit,
    /// The culprit in words.
    pub label: String,
    pub duration_ns: u64,
    /// Share of the spike's latency, in percent.
    pub share_pct: f64,
    /// How many separate times it ran in the interval.
    pub occurrences: u32,
}

/// A step of the timeline from the deadline to the thread running.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    pub at_ns: u64,
    /// Time since the deadline (negative: before it).
    pub since_deadline_ns: i64,
    pub what: String,
}

/// Whether the trace held every event of the interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Completeness {
    Complete,
    /// Events of the interval are missing: never read as the whole story.
    Partial,
}

/// Why one wake-up was late.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Explanation {
    pub spike: Spike,
    /// The measuring thread's name in the trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_comm: Option<String>,
    pub completeness: Completeness,
    /// What is missing when `completeness` is partial.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partial_reasons: Vec<String>,
    /// When the thread's timer fired (`hrtimer_expire_entry`'s `now`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_fired_ns: Option<u64>,
    /// When the thread was woken (`sched_waking`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waking_ns: Option<u64>,
    /// When the CPU switched to the thread (`sched_switch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switched_in_ns: Option<u64>,
    /// The latency split into IRQ and thread latency, as rtla timerlat
    /// splits it (absent from explanations made before it was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq_thread: Option<IrqThreadSplit>,
    pub timeline: Vec<Step>,
    /// Largest first.
    pub parts: Vec<Part>,
    pub unexplained_ns: u64,
    pub unexplained_pct: f64,
    /// One line: the main cause.
    pub cause: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A wake-up's latency split as rtla timerlat splits it: the IRQ latency
/// (the deadline to the timer's interrupt handler running the thread's
/// hrtimer) and the thread latency (the deadline to the thread running),
/// or why the trace cannot tell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum IrqThreadSplit {
    Known(KnownSplit),
    Unknown { why: SplitUnknown },
}

/// The split, from the expiry of the thread's own timer in the trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KnownSplit {
    /// rtla's IRQ latency: the expiry of the thread's timer
    /// (`hrtimer_expire_entry`'s `now`, else its time) less the deadline.
    pub irq_latency_ns: u64,
    /// From the expiry to the thread's wake-up (`sched_waking`): the
    /// timer handler's own work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry_to_waking_ns: Option<u64>,
    /// From the expiry to the switch to the thread (traced, or inferred
    /// from the CPU leaving idle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry_to_switch_ns: Option<u64>,
    /// From the switch to the thread until it read the clock: switch-in
    /// and return to user space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch_to_run_ns: Option<u64>,
    /// rtla's thread latency: the deadline to the thread running, which
    /// is the measured wake-up latency (the trace's expiry and switch are
    /// checked to lie within it).
    pub thread_latency_ns: u64,
    /// Which took more: the IRQ latency, or what followed the expiry.
    pub dominant: SplitSide,
    /// What took most of the side that dominated, with its time
    /// ("blocked by perl:11979 (RT 95) for 37.2 ms").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by: Option<String>,
}

/// The side of the split that took more of the latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SplitSide {
    /// The timer's interrupt handler ran late.
    Irq,
    /// The thread ran late after its timer fired.
    Thread,
}

/// Why the split is not known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SplitUnknown {
    /// The lean event set leaves the timer's expiry out (by design).
    LeanSet,
    /// The trace holds no expiry of the thread's own timer.
    NoExpiry,
    /// The expiry found lies after the thread's clock read: the trace
    /// and the measurement disagree, so no split is given.
    Inconsistent,
}
