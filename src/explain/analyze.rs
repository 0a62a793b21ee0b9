//! The analysis: given the events of one CPU and a late wake-up on it,
//! walk from the deadline to the switch to the thread and say what the
//! CPU did meanwhile, in the spirit of rtla's timerlat auto-analysis:
//! the delay before the timer fired, the interrupt handlers and softirqs
//! that ran, the threads that ran instead, and what no event explains.
//! Pure: no I/O, no panic on any input.

use super::event::{Event, EventKind, KernelPrio, Window};
use super::model::{
    Completeness, Culprit, Explanation, IrqThreadSplit, KnownSplit, Part, Priority, Spike,
    SplitSide, SplitUnknown, Step,
};
use std::collections::HashMap;

/// Text traces give microseconds: times within this are "the same".
const TOLERANCE_NS: u64 = 1_000;
/// The timer's expiry is looked for this long before the wake-up.
const FIRE_LOOKBACK_NS: u64 = 1_000_000;
/// The timeline keeps at most this many steps (the middle is elided).
const MAX_STEPS: usize = 48;
/// Workqueue functions kept per thread.
const MAX_WORK: usize = 4;

#[derive(Clone, Debug, PartialEq)]
struct Task {
    pid: i32,
    comm: String,
    prio: Option<KernelPrio>,
}

#[derive(Clone, Debug, PartialEq)]
enum Ctx {
    Irq { irq: u32, name: String },
    Softirq { vec: u32, action: String },
    Vector { name: String, vector: Option<u32> },
}

/// What the CPU was doing, replayed event by event.
#[derive(Default)]
struct Cpu {
    task: Option<Task>,
    stack: Vec<Ctx>,
    /// Workqueue function running per kworker.
    work: HashMap<i32, String>,
}

/// Names and priorities by pid.
type Names = HashMap<i32, (String, Option<KernelPrio>)>;

/// Names and priorities by pid: the latest the trace shows (sched_switch
/// and wake-ups carry them; a task that exec'd keeps its last name).
fn names(events: &[&Event]) -> Names {
    let mut m: Names = HashMap::new();
    for e in events {
        match &e.kind {
            EventKind::SchedSwitch {
                prev_comm,
                prev_pid,
                prev_prio,
                next_comm,
                next_pid,
                next_prio,
                ..
            } => {
                m.insert(*prev_pid, (prev_comm.clone(), *prev_prio));
                m.insert(*next_pid, (next_comm.clone(), *next_prio));
            }
            EventKind::SchedWaking {
                comm, pid, prio, ..
            }
            | EventKind::SchedWakeup {
                comm, pid, prio, ..
            } => {
                m.insert(*pid, (comm.clone(), *prio));
            }
            _ => {
                m.entry(e.pid).or_insert_with(|| (e.comm.clone(), None));
            }
        }
    }
    m
}

impl Cpu {
    /// Is the idle task current?
    fn idle(&self) -> bool {
        self.task.as_ref().is_some_and(|t| t.pid == 0)
    }

    fn apply(&mut self, e: &Event, names: &Names) {
        let task_of = |pid: i32, comm: &str, prio: Option<KernelPrio>| {
            let (n, p) = names
                .get(&pid)
                .cloned()
                .unwrap_or_else(|| (comm.to_string(), prio));
            // The latest priority up to the switch to the thread is the
            // one the task ran at (chrt may change it while it runs).
            Task {
                pid,
                comm: if pid == 0 { comm.to_string() } else { n },
                prio: p.or(prio),
            }
        };
        match &e.kind {
            EventKind::SchedSwitch {
                next_comm,
                next_pid,
                next_prio,
                ..
            } => {
                self.task = Some(task_of(*next_pid, next_comm, *next_prio));
                self.stack.clear();
                return;
            }
            EventKind::IrqEntry { irq, name } => self.stack.push(Ctx::Irq {
                irq: *irq,
                name: name.clone(),
            }),
            EventKind::IrqExit { irq } => {
                self.pop(|c| matches!(c, Ctx::Irq { irq: i, .. } if i == irq))
            }
            EventKind::SoftirqEntry { vec, action } => self.stack.push(Ctx::Softirq {
                vec: *vec,
                action: action.clone(),
            }),
            EventKind::SoftirqExit { vec } => {
                self.pop(|c| matches!(c, Ctx::Softirq { vec: v, .. } if v == vec))
            }
            EventKind::VectorEntry { name, vector } => self.stack.push(Ctx::Vector {
                name: name.clone(),
                vector: *vector,
            }),
            EventKind::VectorExit { name } => {
                self.pop(|c| matches!(c, Ctx::Vector { name: n, .. } if n == name))
            }
            EventKind::WorkStart { function } => {
                self.work.insert(e.pid, function.clone());
            }
            EventKind::WorkEnd => {
                self.work.remove(&e.pid);
            }
            _ => {}
        }
        // Every event names the task current on its CPU.
        if self.task.as_ref().map(|t| t.pid) != Some(e.pid) {
            self.task = Some(task_of(e.pid, &e.comm, None));
        }
    }

    fn pop(&mut self, is: impl Fn(&Ctx) -> bool) {
        if let Some(i) = self.stack.iter().rposition(is) {
            self.stack.truncate(i);
        }
    }
}

/// One culprit being summed up.
struct Acc {
    culprit: Culprit,
    duration_ns: u64,
    occurrences: u32,
    order: usize,
}

#[derive(Default)]
struct Parts {
    by_key: HashMap<String, Acc>,
    last_key: Option<String>,
    /// Contiguous runs (key, culprit, from, to), for the timeline.
    runs: Vec<(String, Culprit, u64, u64)>,
}

fn key_of(c: &Culprit) -> String {
    match c {
        Culprit::TimerDelay { .. } => "timer".into(),
        Culprit::Irq { irq, .. } => format!("irq:{irq}"),
        Culprit::Vector { name, .. } => format!("vector:{name}"),
        Culprit::Softirq { vec, .. } => format!("softirq:{vec}"),
        Culprit::Thread { pid, .. } => format!("thread:{pid}"),
        Culprit::Idle => "idle".into(),
        Culprit::Switch => "switch".into(),
    }
}

impl Parts {
    fn add(&mut self, culprit: Culprit, from_ns: u64, to_ns: u64) {
        if to_ns <= from_ns {
            return;
        }
        let key = key_of(&culprit);
        let new_run = self.last_key.as_deref() != Some(key.as_str());
        match self.runs.last_mut() {
            Some(r) if !new_run => r.3 = to_ns,
            _ => self
                .runs
                .push((key.clone(), culprit.clone(), from_ns, to_ns)),
        }
        let order = self.by_key.len();
        let acc = self.by_key.entry(key.clone()).or_insert(Acc {
            culprit: culprit.clone(),
            duration_ns: 0,
            occurrences: 0,
            order,
        });
        acc.duration_ns += to_ns - from_ns;
        if new_run {
            acc.occurrences += 1;
        }
        if let (Culprit::Thread { work: have, .. }, Culprit::Thread { work: more, .. }) =
            (&mut acc.culprit, &culprit)
        {
            for w in more {
                if have.len() < MAX_WORK && !have.contains(w) {
                    have.push(w.clone());
                }
            }
        }
        self.last_key = Some(key);
    }

    /// A gap no event explains breaks a run.
    fn gap(&mut self) {
        self.last_key = None;
    }
}

fn step(at_ns: u64, deadline_ns: u64, what: String) -> Step {
    Step {
        at_ns,
        since_deadline_ns: at_ns as i64 - deadline_ns as i64,
        what,
    }
}

fn fmt_task(comm: &str, pid: i32, priority: &Priority) -> String {
    let what = if threaded_irq(comm) {
        "threaded interrupt "
    } else {
        ""
    };
    match priority {
        Priority::Unknown => format!("{what}{comm}:{pid}"),
        p => format!("{what}{comm}:{pid} ({p})"),
    }
}

/// Is `comm` an interrupt's thread (`irq/24-virtio0`, `irq/9-s-acpi`:
/// every handler on a PREEMPT_RT kernel, or one requested threaded)?
pub fn threaded_irq(comm: &str) -> bool {
    comm.strip_prefix("irq/")
        .and_then(|r| r.split_once('-'))
        .is_some_and(|(n, name)| {
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && !name.is_empty()
        })
}

/// The culprit in words.
pub fn label(c: &Culprit) -> String {
    match c {
        Culprit::TimerDelay { idle: false } => {
            "the timer fired late: interrupts were off or the hypervisor stalled this CPU (a trace cannot tell which)".into()
        }
        Culprit::TimerDelay { idle: true } => {
            "the timer fired late while the CPU was idle: leaving an idle state, interrupts off, or a hypervisor stall (a trace cannot tell which)".into()
        }
        Culprit::Irq { irq, name } => format!("IRQ {irq} {name}"),
        Culprit::Vector {
            name,
            vector: Some(v),
        } => format!("{name} interrupt (vector {v})"),
        Culprit::Vector { name, vector: None } => format!("{name} interrupt"),
        Culprit::Softirq { vec, action } => format!("softirq {action} (vec {vec})"),
        Culprit::Thread {
            comm,
            pid,
            priority,
            work,
            outranked,
        } => {
            let mut s = fmt_task(comm, *pid, priority);
            if !work.is_empty() {
                s.push_str(&format!(" running {}", work.join(", ")));
            }
            if *outranked {
                s.push_str(OUTRANKED);
                s.push_str(OUTRANKED_CAVEAT);
            }
            s
        }
        Culprit::Idle => "the CPU stayed idle (when long: a hypervisor stall or RT throttling, which a trace cannot tell apart)".into(),
        Culprit::Switch => {
            "switch-in and return to user space (the kernel's wake-up path: from the switch to the thread until it read the clock)".into()
        }
    }
}

/// What a task of lower priority that ran instead is said to have done.
pub const OUTRANKED: &str = " ran instead, at a lower priority";
/// Why, in a trace without the timer's events (the lean set): the same
/// words end every such cause, so a summary may say them once.
pub const OUTRANKED_CAVEAT: &str = ": the timer fired late (interrupts off or a hypervisor stall) \
     or it held the CPU in the kernel (a trace without the timer's events cannot tell which)";

/// The timeline's runs: interruptions shorter than 2 % of the latency
/// are left to the parts table, and the runs they split are joined.
fn timeline_runs(
    runs: &[(String, Culprit, u64, u64)],
    latency_ns: u64,
    deadline: u64,
) -> Vec<Step> {
    let short = latency_ns / 50;
    let mut kept: Vec<(&String, &Culprit, u64, u64)> = Vec::new();
    for (k, c, a, b) in runs {
        let brief = matches!(
            c,
            Culprit::Irq { .. } | Culprit::Softirq { .. } | Culprit::Vector { .. }
        ) && b - a < short;
        if brief {
            continue;
        }
        match kept.last_mut() {
            Some(last) if last.0 == k => last.3 = *b,
            _ => kept.push((k, c, *a, *b)),
        }
    }
    kept.into_iter()
        .map(|(_, c, a, b)| step(a, deadline, format!("{} for {}", starts(c), fmt_ns(b - a))))
        .collect()
}

fn starts(c: &Culprit) -> String {
    match c {
        Culprit::TimerDelay { .. } => "waiting for the timer to fire".into(),
        Culprit::Thread {
            comm,
            pid,
            priority,
            outranked: true,
            ..
        } => format!(
            "{} runs, at a lower priority",
            fmt_task(comm, *pid, priority)
        ),
        Culprit::Thread { .. } => format!("{} runs", label(c)),
        Culprit::Idle => "the CPU stays idle".into(),
        Culprit::Switch => "the thread runs".into(),
        _ => format!("{} runs", label(c)),
    }
}

/// Durations the way the cause line prints them.
pub fn fmt_ns(ns: u64) -> String {
    if ns >= 1_000_000 {
        format!("{:.1} ms", ns as f64 / 1e6)
    } else {
        format!("{:.1} µs", ns as f64 / 1e3)
    }
}

fn pct(part_ns: u64, whole_ns: u64) -> f64 {
    if whole_ns == 0 {
        return 0.0;
    }
    ((part_ns as f64 / whole_ns as f64) * 1000.0).round() / 10.0
}

/// Explain `spike` from the events of its CPU: find the thread's
/// landmarks (`Scene::find`), say what the trace misses (`Scene::gaps`),
/// replay the CPU to the deadline and sweep to the switch, summing what
/// held it up (`Scene::sweep`), then lay out the timeline and the parts.
pub fn analyze(window: &Window, spike: &Spike) -> Explanation {
    let scene = Scene::find(window, spike);
    let mut says = scene.gaps(window);
    let parts = scene.sweep(&mut says.notes);
    let timeline = scene.timeline(&parts.runs);
    let split = scene.split(&parts.runs);
    let parts = scene.parts(parts.by_key);
    let mut x = scene.verdict(parts, timeline, says);
    x.irq_thread = Some(split);
    x
}

/// One spike on its CPU: the CPU's events in time order and the
/// landmarks found in them, which every step of the analysis reads.
struct Scene<'a> {
    spike: &'a Spike,
    events: Vec<&'a Event>,
    /// Names and priorities as of the end of the sweep.
    names: Names,
    tid: i32,
    deadline: u64,
    /// The clock read, not before the deadline.
    wake: u64,
    /// The deadline less the tolerance: where events start to count.
    lo: u64,
    /// The traced switch to the thread.
    switched_in: Option<u64>,
    /// The thread's wake-up.
    waking_ns: Option<u64>,
    /// The CPU's last event while idle, standing for an untraced switch.
    left_idle: Option<u64>,
    /// The timer's expiry as traced.
    fire: Option<u64>,
    /// When the timer is taken to have fired (traced, or the wake-up).
    fired: Option<u64>,
    /// The thread's own events are filtered out and its wake-up missing.
    filtered: bool,
    /// The trace is of the lean set (no timer expiries, by design).
    lean: bool,
    /// From idle straight to the thread, leaving no event.
    from_idle_unrecorded: bool,
    /// Where the switch to the thread begins, traced or inferred.
    switch_from: Option<u64>,
    /// Where the sweep ends.
    end: u64,
    /// The thread's own priority, as far as the trace says.
    own_prio: Option<KernelPrio>,
}

/// What the explanation says besides the parts: why it is partial, and
/// notes on what was inferred.
#[derive(Default)]
struct Says {
    partial: Vec<String>,
    notes: Vec<String>,
}

impl<'a> Scene<'a> {
    /// The timeline's landmarks: the switch to the thread, its wake-up,
    /// the timer expiry that caused it, and where the sweep ends.
    fn find(window: &'a Window, spike: &'a Spike) -> Scene<'a> {
        let deadline = spike.deadline_ns;
        let wake = spike.wake_ns.max(deadline);
        let mut events: Vec<&Event> = window
            .events
            .iter()
            .filter(|e| e.cpu == spike.cpu)
            .collect();
        events.sort_by_key(|e| e.ts_ns);
        let tid = spike.tid;
        let lo = deadline.saturating_sub(TOLERANCE_NS);
        let run = switch_to(&events, tid, lo, wake);
        let switched_in = run.map(|i| events[i].ts_ns);
        let upto = switched_in.map_or(wake, |t| t.clamp(deadline, wake));
        let waking = woken(&events, tid, lo, upto);
        let waking_ns = waking.map(|i| events[i].ts_ns);
        // Some kernels do not trace the switch out of idle: then the CPU's
        // last event while idle stands for it (see `left_idle_by`).
        let left_idle = match (run, waking) {
            (None, Some(w)) => left_idle_by(&events, w, wake, tid),
            _ => None,
        };
        // The lean set leaves wake-ups and the thread's switches to idle out:
        // from idle straight to it, the CPU then leaves no event.
        let filtered = window.own_events_filtered && waking.is_none();
        let from_idle_unrecorded =
            filtered && run.is_none() && idle_through(&events, deadline, wake, tid);
        let switch_from = switched_in.or(left_idle);
        let end = switch_from.map_or(wake, |t| t.clamp(deadline, wake));
        let known = events.partition_point(|e| e.ts_ns <= end);
        let names = names(&events[..known]);
        let fire = waking.and_then(|w| timer_expiry(&events[..=w]));
        let lean = window.own_events_filtered;
        let fired = match (fire, waking_ns) {
            (Some(f), _) => Some(f.clamp(deadline, end)),
            (None, Some(w)) => Some(w.clamp(deadline, end)),
            (None, None) => None,
        };
        let own_prio = names.get(&tid).and_then(|n| n.1);
        Scene {
            spike,
            events,
            names,
            tid,
            deadline,
            wake,
            lo,
            switched_in,
            waking_ns,
            left_idle,
            fire,
            fired,
            filtered,
            lean,
            from_idle_unrecorded,
            switch_from,
            end,
            own_prio,
        }
    }

    /// The verdict on completeness: what the trace misses (the switch,
    /// the wake-up, its start, lost events) and what stands in for it.
    fn gaps(&self, window: &Window) -> Says {
        let mut says = Says::default();
        self.switch_gap(&mut says);
        self.timer_gap(&mut says);
        self.coverage_gaps(window, &mut says.partial);
        says
    }

    fn switch_gap(&self, says: &mut Says) {
        let tid = self.tid;
        match (self.switched_in, self.left_idle) {
            (None, None) if self.from_idle_unrecorded => {}
            (None, None) => says.partial.push(format!(
                "the switch to thread {tid} is not in the trace of CPU {}",
                self.spike.cpu
            )),
            (None, Some(_)) => says.notes.push(format!(
                "this kernel did not trace the switch from idle to thread {tid}: \
                 from the CPU's last event to the thread's clock read counts as the switch"
            )),
            (Some(_), _) => {}
        }
    }

    fn timer_gap(&self, says: &mut Says) {
        let tid = self.tid;
        match (self.fire, self.waking_ns) {
            (Some(_), _) => {}
            (None, Some(_)) => says.notes.push(
                "the timer's expiry is not in the trace (the lean event set, or a trace without hrtimer events): \
                 the thread's wake-up stands for it, so the timer's delay includes the \
                 timer interrupt's own work before the wake-up"
                    .into(),
            ),
            (None, None) if self.filtered => says.notes.push(format!(
                "the lean event set leaves wake-ups and thread {tid}'s switches to idle out of \
                 the trace (they would cost it time on every period): when its timer fired is not \
                 known, so the time its CPU stayed idle after the deadline counts as the timer's \
                 delay (leaving idle, the wake-up and the switch included) and the time another \
                 task ran counts to that task"
            )),
            (None, None) => says.partial.push(format!(
                "the wake-up of thread {tid} is not in the trace of CPU {}",
                self.spike.cpu
            )),
        }
    }

    /// Coverage and losses: a trace that begins late, holds nothing of
    /// the CPU, or lost events in the interval.
    fn coverage_gaps(&self, window: &Window, partial: &mut Vec<String>) {
        let cpu = self.spike.cpu;
        let deadline = self.deadline;
        if let Some(from) = window
            .complete_from_ns
            .or(self.events.first().map(|e| e.ts_ns))
            && from > deadline
        {
            partial.push(format!(
                "the trace of CPU {cpu} begins {} after the deadline",
                fmt_ns(from - deadline)
            ));
        }
        if self.events.is_empty() {
            partial.push(format!("the trace holds no event of CPU {cpu}"));
        }
        let lost: Vec<_> = window
            .losses
            .iter()
            .filter(|l| l.cpu == cpu && l.overlaps(self.lo, self.wake))
            .collect();
        if !lost.is_empty() {
            let counted: u64 = lost.iter().filter_map(|l| l.count).sum();
            partial.push(if counted > 0 {
                format!("the trace lost {counted} events of CPU {cpu} in this interval")
            } else {
                format!("the trace lost events of CPU {cpu} in this interval")
            });
        }
    }

    /// Replay the CPU up to the deadline, then sweep to the switch,
    /// summing what held it up. Notes a task taken to have run unseen.
    fn sweep(&self, notes: &mut Vec<String>) -> Parts {
        let (mut cpu, mut i) = self.at_deadline();
        let unseen = self.unseen(&cpu, i);
        if let Some((_, task)) = &unseen {
            notes.push(format!(
                "this kernel did not trace the switch from idle to {}: it outranks thread {}, \
                 so it is taken to have run from the CPU's last idle event",
                fmt_task(
                    &task.comm,
                    task.pid,
                    &Priority::from_kernel(task.prio.map(|p| p.0))
                ),
                self.tid
            ));
        }
        let mut parts = Parts::default();
        let mut t = self.deadline;
        while i < self.events.len() && self.events[i].ts_ns < self.end {
            let e = self.events[i];
            if let Some((at, task)) = &unseen
                && *at >= t
                && *at < e.ts_ns
                && cpu.idle()
            {
                self.attribute(&cpu, &mut parts, t, *at);
                t = *at;
                cpu.task = Some(task.clone());
            }
            self.attribute(&cpu, &mut parts, t, e.ts_ns);
            t = t.max(e.ts_ns);
            cpu.apply(e, &self.names);
            i += 1;
        }
        self.attribute(&cpu, &mut parts, t, self.end);
        parts
    }

    /// The CPU as of the deadline, and the index of the first event
    /// after it.
    fn at_deadline(&self) -> (Cpu, usize) {
        let events = &self.events;
        let mut cpu = Cpu::default();
        let mut i = 0;
        while i < events.len() && events[i].ts_ns <= self.deadline {
            cpu.apply(events[i], &self.names);
            i += 1;
        }
        if self.filtered && cpu.task.as_ref().is_some_and(|t| t.pid == self.tid) {
            // Its switch to idle or to another task is not in the trace.
            cpu.task = None;
        }
        if self.from_idle_unrecorded {
            cpu.task = Some(Task {
                pid: 0,
                comm: "<idle>".into(),
                prio: None,
            });
        }
        if cpu.task.is_none() {
            // The first event after the deadline names the task current since.
            cpu.task = events.get(i).map(|e| self.current_before(e));
        }
        (cpu, i)
    }

    /// The task current before event `e`.
    fn current_before(&self, e: &Event) -> Task {
        match &e.kind {
            EventKind::SchedSwitch {
                prev_comm,
                prev_pid,
                prev_prio,
                ..
            } => Task {
                pid: *prev_pid,
                comm: prev_comm.clone(),
                prio: *prev_prio,
            },
            _ => Task {
                pid: e.pid,
                comm: self
                    .names
                    .get(&e.pid)
                    .map(|n| n.0.clone())
                    .unwrap_or(e.comm.clone()),
                prio: self.names.get(&e.pid).and_then(|n| n.1),
            },
        }
    }

    /// A task that outranks the thread and shows up on the CPU idle at
    /// the deadline (`cpu`, first event after it `i`), with no traced
    /// switch to it, took the CPU unseen.
    fn unseen(&self, cpu: &Cpu, i: usize) -> Option<(u64, Task)> {
        if !(self.filtered && cpu.idle()) {
            return None;
        }
        unseen_start(
            &self.events[i..],
            self.deadline,
            self.end,
            self.tid,
            self.own_prio,
            &self.names,
        )
    }

    /// Count `from..to` to what `cpu` was doing, split where the timer
    /// fired.
    fn attribute(&self, cpu: &Cpu, parts: &mut Parts, from: u64, to: u64) {
        if to <= from {
            return;
        }
        let fired = self.fired;
        let split = fired.filter(|&f| f > from && f < to);
        let segs: &[(u64, u64)] = &match split {
            Some(f) => [(from, f), (f, to)],
            None => [(from, to), (to, to)],
        };
        for &(a, b) in segs {
            let before_fire = fired.is_none_or(|f| a < f);
            match self.culprit(cpu, before_fire) {
                Some(c) => parts.add(c, a, b),
                None => parts.gap(),
            }
        }
    }

    /// Each kind of part: what held the CPU, from the innermost handler
    /// out to the task that ran (`None`: no event says).
    fn culprit(&self, cpu: &Cpu, before_fire: bool) -> Option<Culprit> {
        let (tid, filtered) = (self.tid, self.filtered);
        match cpu.stack.last() {
            Some(Ctx::Irq { irq, name }) => Some(Culprit::Irq {
                irq: *irq,
                name: name.clone(),
            }),
            Some(Ctx::Softirq { vec, action }) => Some(Culprit::Softirq {
                vec: *vec,
                action: action.clone(),
            }),
            Some(Ctx::Vector { name, vector }) => Some(Culprit::Vector {
                name: name.clone(),
                vector: *vector,
            }),
            None if before_fire && self.fired.is_some() => {
                Some(Culprit::TimerDelay { idle: cpu.idle() })
            }
            None if filtered && cpu.idle() => Some(Culprit::TimerDelay { idle: true }),
            None => match &cpu.task {
                Some(t) if t.pid == 0 => Some(Culprit::Idle),
                Some(t) if t.pid == tid => Some(Culprit::Switch),
                // Without the thread's timer and wake-up, a lower-priority
                // task that ran instead may have done so only because the
                // timer fired late.
                Some(t) => Some(Culprit::Thread {
                    comm: t.comm.clone(),
                    pid: t.pid,
                    priority: Priority::from_kernel(t.prio.map(|p| p.0)),
                    work: cpu.work.get(&t.pid).cloned().into_iter().collect(),
                    outranked: filtered
                        && matches!((t.prio, self.own_prio), (Some(p), Some(o)) if p.0 > o.0),
                }),
                None => None,
            },
        }
    }

    /// The timeline: the landmarks, then the runs, in time order and
    /// elided in the middle when long.
    fn timeline(&self, runs: &[(String, Culprit, u64, u64)]) -> Vec<Step> {
        let (tid, deadline, spike) = (self.tid, self.deadline, self.spike);
        let mut steps = vec![step(
            deadline,
            deadline,
            format!("deadline of thread {tid}"),
        )];
        if let Some(f) = self.fired {
            steps.push(step(
                f,
                deadline,
                format!("the timer of thread {tid} fires"),
            ));
        }
        if let Some(w) = self.waking_ns {
            steps.push(step(w, deadline, format!("thread {tid} is woken")));
        }
        if let Some(s) = self.switched_in {
            steps.push(step(
                s,
                deadline,
                format!("CPU {} switches to thread {tid}", spike.cpu),
            ));
        }
        steps.push(step(
            spike.wake_ns,
            deadline,
            format!(
                "thread {tid} reads the clock: {} late",
                fmt_ns(spike.latency_ns)
            ),
        ));
        steps.extend(timeline_runs(runs, spike.latency_ns, deadline));
        // Stable: at equal times the marks come before the runs.
        steps.sort_by_key(|s| s.at_ns);
        elide(steps, deadline)
    }

    /// The parts, largest first, with the switch to the thread after the
    /// sweep's end.
    fn parts(&self, by_key: HashMap<String, Acc>) -> Vec<Part> {
        let mut accs: Vec<Acc> = by_key.into_values().collect();
        if self.switch_from.is_some() && self.end < self.spike.wake_ns {
            accs.push(Acc {
                culprit: Culprit::Switch,
                duration_ns: self.spike.wake_ns - self.end,
                occurrences: 1,
                order: usize::MAX,
            });
        }
        accs.sort_by(|a, b| {
            b.duration_ns
                .cmp(&a.duration_ns)
                .then(a.order.cmp(&b.order))
        });
        let latency = self.spike.latency_ns;
        accs.into_iter()
            .map(|a| Part {
                label: label(&a.culprit),
                share_pct: pct(a.duration_ns, latency).min(100.0),
                duration_ns: a.duration_ns,
                culprit: a.culprit,
                occurrences: a.occurrences,
            })
            .collect()
    }

    /// The explanation: the parts, what they leave unexplained, and the
    /// one-line cause.
    fn verdict(self, parts: Vec<Part>, timeline: Vec<Step>, says: Says) -> Explanation {
        let latency = self.spike.latency_ns;
        let explained: u64 = parts.iter().map(|p| p.duration_ns).sum();
        let unexplained_ns = latency.saturating_sub(explained);
        let completeness = if says.partial.is_empty() {
            Completeness::Complete
        } else {
            Completeness::Partial
        };
        let cause = cause(&parts, unexplained_ns, latency, completeness);
        Explanation {
            thread_comm: self.names.get(&self.tid).map(|n| n.0.clone()),
            spike: self.spike.clone(),
            completeness,
            partial_reasons: says.partial,
            timer_fired_ns: self.fired,
            waking_ns: self.waking_ns,
            switched_in_ns: self.switched_in,
            irq_thread: None,
            timeline,
            parts,
            unexplained_ns,
            unexplained_pct: pct(unexplained_ns, latency),
            cause,
            notes: says.notes,
        }
    }
}

/// The switch to thread `tid`: the last one from `lo` up to its wake-up.
fn switch_to(events: &[&Event], tid: i32, lo: u64, wake: u64) -> Option<usize> {
    events.iter().rposition(|e| {
        e.ts_ns >= lo
            && e.ts_ns <= wake + TOLERANCE_NS
            && matches!(e.kind, EventKind::SchedSwitch { next_pid, .. } if next_pid == tid)
    })
}

/// The wake-up of thread `tid` from `lo` up to `upto`: its waking, else
/// its wakeup.
fn woken(events: &[&Event], tid: i32, lo: u64, upto: u64) -> Option<usize> {
    let within = |e: &Event| e.ts_ns >= lo && e.ts_ns <= upto + TOLERANCE_NS;
    events
        .iter()
        .position(|e| {
            within(e) && matches!(e.kind, EventKind::SchedWaking { pid, .. } if pid == tid)
        })
        .or_else(|| {
            events.iter().position(|e| {
                within(e) && matches!(e.kind, EventKind::SchedWakeup { pid, .. } if pid == tid)
            })
        })
}

/// The expiry of the thread's own timer, for its wake-up (the last of
/// `upto_waking`): the latest `hrtimer_expire_entry` of an
/// `hrtimer_wakeup` timer shortly before it whose handler had not
/// returned (no `hrtimer_expire_exit` of that timer in between): the
/// handler that woke it. Its `now`, else its time.
fn timer_expiry(upto_waking: &[&Event]) -> Option<u64> {
    let (waking, before) = upto_waking.split_last()?;
    let w_ts = waking.ts_ns;
    let mut returned: Vec<&str> = Vec::new();
    for e in before
        .iter()
        .rev()
        .take_while(|e| e.ts_ns + FIRE_LOOKBACK_NS >= w_ts)
    {
        match &e.kind {
            EventKind::HrtimerExpireExit { hrtimer } => returned.push(timer_id(hrtimer)),
            EventKind::HrtimerExpireEntry {
                hrtimer,
                function,
                now_ns,
            } if (function.is_empty() || function == "hrtimer_wakeup")
                && !returned.contains(&timer_id(hrtimer)) =>
            {
                return Some(now_ns.unwrap_or(e.ts_ns));
            }
            _ => {}
        }
    }
    None
}

/// An hrtimer's address as one text whatever the layout (trace-cmd
/// prints `0x0000...` in some events and `0000...` in others).
fn timer_id(hrtimer: &str) -> &str {
    let h = hrtimer.trim();
    let h = h.strip_prefix("0x").unwrap_or(h);
    let t = h.trim_start_matches('0');
    if t.is_empty() && !h.is_empty() {
        "0"
    } else {
        t
    }
}

/// A timeline longer than `MAX_STEPS` keeps its two ends and says how
/// many steps it left out between them.
fn elide(steps: Vec<Step>, deadline: u64) -> Vec<Step> {
    if steps.len() <= MAX_STEPS {
        return steps;
    }
    let keep = MAX_STEPS / 2;
    let elided = steps.len() - 2 * keep;
    let mut short: Vec<Step> = steps[..keep].to_vec();
    let at = steps[keep].at_ns;
    short.push(step(at, deadline, format!("... {elided} more steps ...")));
    short.extend_from_slice(&steps[steps.len() - keep..]);
    short
}

/// When the switch to thread `tid` is not in the trace: if it was woken
/// (event `waking`) while its CPU was idle and nothing but the idle task
/// (or the thread itself) left an event from then to its clock read at
/// `wake`, the CPU went from idle straight to the thread. A kernel that
/// does not trace that switch (some do not) lost nothing else: another
/// task running in between would have needed a traced switch to the
/// thread. Returns the time of the CPU's last event while idle, where
/// the switch is taken to begin.
fn left_idle_by(events: &[&Event], waking: usize, wake: u64, tid: i32) -> Option<u64> {
    if events[waking].pid != 0 {
        return None;
    }
    let mut last = events[waking].ts_ns;
    for e in &events[waking + 1..] {
        if e.ts_ns > wake + TOLERANCE_NS || e.pid == tid {
            break;
        }
        if e.pid != 0 || matches!(e.kind, EventKind::SchedSwitch { .. }) {
            return None;
        }
        last = e.ts_ns;
    }
    Some(last)
}

/// With thread `tid`'s own events filtered out and no switch to it
/// traced: was its CPU idle from its last traced switch before the
/// `deadline` (to idle, or to the thread, whose switch to idle is
/// filtered) until the thread read the clock at `wake`, with only the
/// idle task's events (interrupts taken while idle) in between? Any
/// other task would have left events, and a traced switch to the thread.
fn idle_through(events: &[&Event], deadline: u64, wake: u64, tid: i32) -> bool {
    let idle_at_deadline = events
        .iter()
        .rev()
        .filter(|e| e.ts_ns <= deadline)
        .find_map(|e| match e.kind {
            EventKind::SchedSwitch { next_pid, .. } => Some(next_pid == 0 || next_pid == tid),
            _ => None,
        })
        .unwrap_or(true);
    idle_at_deadline
        && events
            .iter()
            .filter(|e| e.ts_ns > deadline && e.ts_ns <= wake + TOLERANCE_NS)
            .all(|e| {
                (e.pid == 0 || e.pid == tid) && !matches!(e.kind, EventKind::SchedSwitch { .. })
            })
}

/// On a CPU idle at the deadline, in a trace without the thread's
/// wake-up on a kernel that does not trace switches out of idle: the
/// first task other than the thread to leave an event (`after`, the
/// events after the deadline), if no switch was traced before it and it
/// outranks the thread (`own_prio`), with the time of the CPU's last
/// idle event before it (or the deadline), from which it is taken to
/// have run.
fn unseen_start(
    after: &[&Event],
    deadline: u64,
    end: u64,
    tid: i32,
    own_prio: Option<KernelPrio>,
    names: &Names,
) -> Option<(u64, Task)> {
    let mut last_idle = deadline;
    for e in after.iter().take_while(|e| e.ts_ns < end) {
        if matches!(e.kind, EventKind::SchedSwitch { .. }) || e.pid == tid {
            return None;
        }
        if e.pid == 0 {
            last_idle = e.ts_ns;
            continue;
        }
        let (comm, prio) = names.get(&e.pid).cloned()?;
        return match (prio, own_prio) {
            (Some(p), Some(o)) if p.0 < o.0 => Some((
                last_idle,
                Task {
                    pid: e.pid,
                    comm,
                    prio,
                },
            )),
            _ => None,
        };
    }
    None
}

/// The one-line cause: the largest part when it dominates, else the
/// first few.
fn cause(parts: &[Part], unexplained_ns: u64, latency_ns: u64, c: Completeness) -> String {
    let verb = |p: &Part| verb(&p.culprit, &p.label);
    let top = parts.first().filter(|p| p.duration_ns >= unexplained_ns);
    let mut s = match top {
        Some(p) if p.share_pct >= 50.0 => format!(
            "{} for {}, {:.1} %",
            verb(p),
            fmt_ns(p.duration_ns),
            p.share_pct
        ),
        Some(_) => {
            let list: Vec<String> = parts
                .iter()
                .take(3)
                .map(|p| format!("{} {:.0} %", p.label, p.share_pct))
                .collect();
            format!("no single cause: {}", list.join(", "))
        }
        None if latency_ns == 0 => "no latency to explain".into(),
        None => format!(
            "unexplained: no event accounts for {} ({:.0} %)",
            fmt_ns(unexplained_ns),
            pct(unexplained_ns, latency_ns)
        ),
    };
    if c == Completeness::Partial {
        s.push_str(" (partial: the trace misses events)");
    }
    s
}

/// A culprit as the subject of a cause: "blocked by X", "held up by
/// IRQ 24 eth0", ...
fn verb(c: &Culprit, label: &str) -> String {
    match c {
        Culprit::Thread {
            outranked: true, ..
        } => label.to_string(),
        Culprit::Thread { .. } => format!("blocked by {label}"),
        Culprit::TimerDelay { .. } => label.to_string(),
        Culprit::Idle => "the CPU was idle".into(),
        Culprit::Switch => "switch-in and return to user space".into(),
        _ => format!("held up by {label}"),
    }
}

/// The culprit that took most of `from..to` in `runs` (the sweep's
/// contiguous runs), plus `extra` (a culprit and its time counted
/// outside the runs), in words with its time.
fn largest_within(
    runs: &[(String, Culprit, u64, u64)],
    from: u64,
    to: u64,
    extra: Option<(Culprit, u64)>,
) -> Option<String> {
    let mut sums: Vec<(&str, Culprit, u64)> = Vec::new();
    for (k, c, a, b) in runs {
        let (a, b) = ((*a).max(from), (*b).min(to));
        if b <= a {
            continue;
        }
        match sums.iter_mut().find(|s| s.0 == k) {
            Some(s) => s.2 += b - a,
            None => sums.push((k, c.clone(), b - a)),
        }
    }
    if let Some((c, ns)) = extra.filter(|e| e.1 > 0) {
        sums.push(("", c, ns));
    }
    let (_, c, ns) = sums.into_iter().rev().max_by_key(|s| s.2)?;
    Some(format!("{} for {}", verb(&c, &label(&c)), fmt_ns(ns)))
}

impl Scene<'_> {
    /// The latency split as rtla timerlat splits it: the IRQ latency (the
    /// deadline to the expiry of the thread's own timer) and the thread
    /// latency (the measured latency), with the steps between and what
    /// took most of the side that dominated. Unknown without the expiry,
    /// never 0.
    fn split(&self, runs: &[(String, Culprit, u64, u64)]) -> IrqThreadSplit {
        let unknown = |why| IrqThreadSplit::Unknown { why };
        let Some(fire) = self.fire else {
            return unknown(if self.lean {
                SplitUnknown::LeanSet
            } else {
                SplitUnknown::NoExpiry
            });
        };
        let (deadline, wake) = (self.deadline, self.spike.wake_ns);
        if fire > wake.max(deadline) + TOLERANCE_NS {
            return unknown(SplitUnknown::Inconsistent);
        }
        let thread = self.spike.latency_ns;
        // Within the text trace's microsecond of the clock read.
        let irq = fire.saturating_sub(deadline).min(thread);
        let dominant = if irq >= thread - irq {
            SplitSide::Irq
        } else {
            SplitSide::Thread
        };
        let split_at = self.fired.unwrap_or(fire);
        let switch_tail = self
            .switch_from
            .map(|_| (Culprit::Switch, wake.saturating_sub(self.end)));
        let held_by = match dominant {
            SplitSide::Irq => largest_within(runs, deadline, split_at, None),
            SplitSide::Thread => largest_within(runs, split_at, self.end, switch_tail),
        };
        IrqThreadSplit::Known(KnownSplit {
            irq_latency_ns: irq,
            expiry_to_waking_ns: self.waking_ns.map(|w| w.saturating_sub(fire)),
            expiry_to_switch_ns: self.switch_from.map(|s| s.saturating_sub(fire)),
            switch_to_run_ns: self.switch_from.map(|s| wake.saturating_sub(s)),
            thread_latency_ns: thread,
            dominant,
            held_by,
        })
    }
}
