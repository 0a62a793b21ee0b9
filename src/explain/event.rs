//! The kernel trace events the analysis reads, as typed values: one
//! [`Event`] per trace line, with its time in nanoseconds of the trace
//! clock (`mono` for rtscope's own recordings, CLOCK_MONOTONIC). Plain
//! data: no parsing and no I/O here.

/// A scheduling priority as the kernel prints it (`prio=`, `prev_prio=`):
/// below 100 real-time (`99 - prio` is the RT priority), 100..140 normal
/// (`120 + nice`), -1 SCHED_DEADLINE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelPrio(pub i32);

/// One event from a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Trace clock time in nanoseconds (text traces give microseconds).
    pub ts_ns: u64,
    pub cpu: usize,
    /// The task current on `cpu` when the event was written (the
    /// interrupted task for events in interrupt context).
    pub pid: i32,
    /// Its name as the trace line shows it (may be `<...>`).
    pub comm: String,
    pub kind: EventKind,
}

/// What happened. Unknown events are kept by name so that a reader can
/// tell "nothing happened" from "something we do not read happened".
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    SchedSwitch {
        prev_comm: String,
        prev_pid: i32,
        prev_prio: Option<KernelPrio>,
        prev_state: String,
        next_comm: String,
        next_pid: i32,
        next_prio: Option<KernelPrio>,
    },
    /// `sched_waking` (the wake-up starts, on the waker's CPU).
    SchedWaking {
        comm: String,
        pid: i32,
        prio: Option<KernelPrio>,
        target_cpu: Option<usize>,
    },
    /// `sched_wakeup` (the task is on a run queue).
    SchedWakeup {
        comm: String,
        pid: i32,
        prio: Option<KernelPrio>,
        target_cpu: Option<usize>,
    },
    HrtimerStart {
        hrtimer: String,
        function: String,
        expires_ns: Option<u64>,
    },
    HrtimerExpireEntry {
        hrtimer: String,
        function: String,
        /// The `now=` of the expiry, in ns (more precise than `ts_ns`).
        now_ns: Option<u64>,
    },
    HrtimerExpireExit {
        hrtimer: String,
    },
    IrqEntry {
        irq: u32,
        name: String,
    },
    IrqExit {
        irq: u32,
    },
    SoftirqEntry {
        vec: u32,
        action: String,
    },
    SoftirqExit {
        vec: u32,
    },
    /// An x86 vector handler (`irq_vectors:<name>_entry`) or an IPI
    /// handler (`ipi:ipi_entry`): `name` is `local_timer`, `reschedule`,
    /// `call_function_single` ...
    VectorEntry {
        name: String,
        vector: Option<u32>,
    },
    VectorExit {
        name: String,
    },
    WorkStart {
        function: String,
    },
    WorkEnd,
    /// A `trace_marker` write (`tracing_mark_write: TEXT`, trace-cmd's
    /// `print:` event).
    Marker {
        text: String,
    },
    /// An event this analysis does not read.
    Other {
        name: String,
    },
}

impl EventKind {
    /// The task woken, for `sched_waking` / `sched_wakeup`.
    pub fn woken_pid(&self) -> Option<i32> {
        match self {
            EventKind::SchedWaking { pid, .. } | EventKind::SchedWakeup { pid, .. } => Some(*pid),
            _ => None,
        }
    }
}

/// A run of events a trace lost on one CPU: between `after_ns` (the last
/// event seen before the loss, 0 when none) and `before_ns` (the first
/// seen after it, `u64::MAX` while none came yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loss {
    pub cpu: usize,
    pub after_ns: u64,
    pub before_ns: u64,
    /// Events lost, when the trace says how many.
    pub count: Option<u64>,
}

impl Loss {
    /// Does this loss touch the interval `[from_ns, to_ns]`?
    pub fn overlaps(&self, from_ns: u64, to_ns: u64) -> bool {
        self.after_ns <= to_ns && self.before_ns >= from_ns
    }
}

/// The events of one CPU around a spike, as the analysis reads them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Window {
    pub cpu: usize,
    /// In time order.
    pub events: Vec<Event>,
    pub losses: Vec<Loss>,
    /// From when on the window holds every event the trace recorded
    /// (earlier ones were dropped to bound it, or came before the trace
    /// began). `None`: from its first event.
    pub complete_from_ns: Option<u64>,
    /// The trace leaves out the spike's thread's wake-up and (filtered)
    /// its switches to idle: the lean event set. Their absence is by
    /// design, not a loss.
    pub own_events_filtered: bool,
}
