//! The explanations of a run (`measure --explain`) as reports show them:
//! each thread's largest explained wake-up, the counts in words, and the
//! culprits sorted into the few kinds that the HTML report's stacked bars
//! colour. Reads the record only: the analysis itself is
//! `crate::explain`, and nothing here prints.

pub use crate::explain::text::SPLIT_NAME;
use crate::explain::text::split_lines;
use crate::explain::{Completeness, Culprit, Explanation, IrqThreadSplit, SplitUnknown};
use crate::record::{ExplainRecord, RunRecord};
use crate::text::num;
use crate::text::rank::{self, MANY_THREADS, Rows, WORST_ROWS};

/// What a share of the latency was, in the few kinds a reader compares
/// at a glance (the parts name each culprit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PartKind {
    /// The timer fired late: interrupts off or a hypervisor stall.
    TimerDelay,
    /// Device interrupts and architecture vectors (IPIs, local timer).
    Irq,
    Softirq,
    /// Threads that ran instead.
    Thread,
    /// Leaving idle, and the switch to the thread.
    IdleSwitch,
    Unexplained,
}

impl PartKind {
    pub const ALL: [PartKind; 6] = [
        PartKind::TimerDelay,
        PartKind::Irq,
        PartKind::Softirq,
        PartKind::Thread,
        PartKind::IdleSwitch,
        PartKind::Unexplained,
    ];

    pub fn of(c: &Culprit) -> PartKind {
        match c {
            Culprit::TimerDelay { .. } => PartKind::TimerDelay,
            Culprit::Irq { .. } | Culprit::Vector { .. } => PartKind::Irq,
            Culprit::Softirq { .. } => PartKind::Softirq,
            Culprit::Thread { .. } => PartKind::Thread,
            Culprit::Idle | Culprit::Switch => PartKind::IdleSwitch,
        }
    }

    /// For legends.
    pub fn name(self) -> &'static str {
        match self {
            PartKind::TimerDelay => "timer delay (interrupts off or hypervisor)",
            PartKind::Irq => "interrupts",
            PartKind::Softirq => "softirqs",
            PartKind::Thread => "threads that ran instead",
            PartKind::IdleSwitch => "idle exit and switch",
            PartKind::Unexplained => "unexplained",
        }
    }

    /// A short key for CSS classes.
    pub fn key(self) -> &'static str {
        match self {
            PartKind::TimerDelay => "timer",
            PartKind::Irq => "irq",
            PartKind::Softirq => "softirq",
            PartKind::Thread => "thread",
            PartKind::IdleSwitch => "switch",
            PartKind::Unexplained => "unexplained",
        }
    }

    /// Its colour in the figures (from the report's palette; grey for
    /// what nothing explains).
    pub fn color(self) -> &'static str {
        match self {
            PartKind::TimerDelay => "#9c755f",
            PartKind::Irq => "#f28e2b",
            PartKind::Softirq => "#edc948",
            PartKind::Thread => "#e15759",
            PartKind::IdleSwitch => "#76b7b2",
            PartKind::Unexplained => "#c9c9c9",
        }
    }
}

/// Who a spike happened to, for headings: `thread 0 (CPU 1)`.
pub fn who(x: &Explanation) -> String {
    format!("thread {} (CPU {})", x.spike.thread, x.spike.cpu)
}

/// The cause line, marked when the story is partial (the analysis marks
/// it already; this keeps the mark whatever wrote the record).
pub fn cause(x: &Explanation) -> String {
    if x.completeness == Completeness::Partial && !x.cause.contains("partial") {
        format!("{} (partial: the trace misses events)", x.cause)
    } else {
        x.cause.clone()
    }
}

/// Each thread's largest explained wake-up, by thread index.
pub fn largest_per_thread(x: &ExplainRecord) -> Vec<&Explanation> {
    let mut best: Vec<&Explanation> = Vec::new();
    for e in &x.explanations {
        match best.iter_mut().find(|b| b.spike.thread == e.spike.thread) {
            Some(b) if e.spike.latency_ns > b.spike.latency_ns => *b = e,
            Some(_) => {}
            None => best.push(e),
        }
    }
    best.sort_by_key(|e| e.spike.thread);
    best
}

/// The sentence when no wake-up reached the threshold.
pub fn nothing_line(x: &ExplainRecord) -> Option<String> {
    (x.spikes_seen == 0).then(|| {
        format!(
            "no wake-up reached {}: nothing to explain",
            num::period(x.threshold_ns)
        )
    })
}

/// The counts in one line: threshold, spikes seen and explained, trace
/// events read and lost, events this kernel lacks.
pub fn counts_line(x: &ExplainRecord) -> String {
    // `measure --explain` explains, at each tick of the run's supervisor,
    // the largest late wake-up of each thread since the previous tick.
    let rule = if x.spikes_explained < x.spikes_seen {
        format!(
            " (each thread's largest in every {} tick of the run's supervisor)",
            num::period(crate::engine::run::TICK.as_nanos() as u64)
        )
    } else {
        String::new()
    };
    let mut s = format!(
        "explain: {} of {} wake-ups that reached {} explained{rule}; trace events: {} read, {} lost",
        num::count(x.spikes_explained),
        num::count(x.spikes_seen),
        num::period(x.threshold_ns),
        num::count(x.events_read),
        num::count(x.events_lost),
    );
    if x.events_lost > 0 {
        s.push_str(" (explanations whose interval lost events are marked partial)");
    }
    if !x.missing_events.is_empty() {
        s.push_str(&format!(
            "; not on this kernel: {}",
            x.missing_events.join(", ")
        ));
    }
    if let Some(t) = timerlat_line(x) {
        s.push_str(&format!("; {t}"));
    }
    s
}

/// That `rtla timerlat` can cross-check, when the kernel offers its
/// tracer (recorded by `measure --explain`, which never starts it).
pub fn timerlat_line(x: &ExplainRecord) -> Option<String> {
    (x.timerlat_available == Some(true)).then(|| {
        "this kernel has the timerlat tracer: `rtla timerlat` can cross-check the IRQ and thread latencies".to_string()
    })
}

/// Every explanation of the run lacks the IRQ/thread split because the
/// lean set leaves the timer's expiry out: said once for the run.
fn lean_unknown(x: &ExplainRecord) -> bool {
    !x.explanations.is_empty()
        && x.explanations.iter().all(|e| {
            e.irq_thread
                == Some(IrqThreadSplit::Unknown {
                    why: SplitUnknown::LeanSet,
                })
        })
}

/// The IRQ/thread split for the whole run (after [`SPLIT_NAME`]), when
/// it is said once: every explanation lacks it for the lean set.
pub fn split_once_line(x: &ExplainRecord) -> Option<String> {
    lean_unknown(x).then(|| crate::explain::text::unknown_why(SplitUnknown::LeanSet).to_string())
}

/// The IRQ/thread split of one explanation of `run`, for a report that
/// shows [`split_once_line`] when the run says it once.
pub fn item_split_lines(run: &ExplainRecord, x: &Explanation) -> Vec<String> {
    if lean_unknown(run) {
        return vec![];
    }
    split_lines(x)
}

/// The lines the terminal summary adds for a run measured with
/// `--explain`: one per thread (its largest explained wake-up, or that
/// its maximum was not explained), then the counts. Above
/// [`MANY_THREADS`] such lines ([`Rows::Fit`]), the [`WORST_ROWS`] of
/// the largest wake-ups first and a line for the others. Empty without
/// `explain`.
pub fn summary_lines(run: &RunRecord, rows: Rows) -> Vec<String> {
    let Some(x) = &run.explain else {
        return vec![];
    };
    let mut out = Vec::new();
    if let Some(nothing) = nothing_line(x) {
        out.push(nothing);
    }
    let threads = thread_lines(run, x);
    if rows.summarises(threads.len()) {
        let keys: Vec<u64> = threads.iter().map(|t| t.latency_ns).collect();
        let ranked = rank::worst_first(&keys);
        let (worst, others) = ranked.split_at(WORST_ROWS.min(ranked.len()));
        out.push(format!(
            "{} threads with a wake-up to explain (more than {MANY_THREADS}): the {} largest; --all prints every thread",
            threads.len(),
            worst.len()
        ));
        out.extend(worst.iter().map(|&i| threads[i].line.clone()));
        let others: Vec<&ThreadLine> = others.iter().map(|&i| &threads[i]).collect();
        out.push(others_line(&others));
    } else {
        out.extend(threads.into_iter().map(|t| t.line));
    }
    if out.iter().any(|l| l.contains(MARK)) {
        out.push(LEAN_CAVEAT.to_string());
    }
    out.push(counts_line(x));
    out
}

/// One thread's line of the terminal summary, and what ranks it.
struct ThreadLine {
    /// Its largest explained wake-up, or its max when none is.
    latency_ns: u64,
    cpu: Option<usize>,
    explained: bool,
    line: String,
}

/// Each thread's line, in thread order, then explanations of threads
/// the record does not list (a record from elsewhere).
fn thread_lines(run: &RunRecord, x: &ExplainRecord) -> Vec<ThreadLine> {
    let best = largest_per_thread(x);
    let mut out = Vec::new();
    for t in &run.threads {
        let max = t.stats.max_ns.filter(|m| *m >= x.threshold_ns);
        match best.iter().find(|e| e.spike.thread == t.index) {
            Some(e) => {
                let what = if max.is_none_or(|m| m == e.spike.latency_ns) {
                    "max"
                } else {
                    "largest explained"
                };
                out.push(ThreadLine {
                    latency_ns: e.spike.latency_ns,
                    cpu: Some(e.spike.cpu),
                    explained: true,
                    line: format!(
                        "{} {what} {}: {}",
                        who(e),
                        num::latency(e.spike.latency_ns),
                        short_cause(e)
                    ),
                });
            }
            None => {
                if let Some(m) = max {
                    let cpu = t.cpu.map(|c| c.to_string()).unwrap_or_else(|| "-".into());
                    out.push(ThreadLine {
                        latency_ns: m,
                        cpu: t.cpu.map(|c| c as usize),
                        explained: false,
                        line: format!(
                            "thread {} (CPU {cpu}) max {}: not explained",
                            t.index,
                            num::latency(m)
                        ),
                    });
                }
            }
        }
    }
    for e in &best {
        if !run.threads.iter().any(|t| t.index == e.spike.thread) {
            out.push(ThreadLine {
                latency_ns: e.spike.latency_ns,
                cpu: Some(e.spike.cpu),
                explained: true,
                line: format!(
                    "{} max {}: {}",
                    who(e),
                    num::latency(e.spike.latency_ns),
                    short_cause(e)
                ),
            });
        }
    }
    out
}

/// The line on the threads a summarised list leaves out: how many, how
/// many of them explained, on which CPUs, the range of their wake-ups.
fn others_line(others: &[&ThreadLine]) -> String {
    let on = rank::on_cpus(others.iter().filter_map(|t| t.cpu));
    let explained = others.iter().filter(|t| t.explained).count();
    let span = match rank::range(others.iter().map(|t| Some(t.latency_ns))) {
        Some((lo, hi)) if lo == hi => num::latency(hi),
        Some((lo, hi)) => format!("{} to {}", num::latency(lo), num::latency(hi)),
        None => "-".into(),
    };
    format!(
        "the other {} threads{on}: {explained} explained, {} not; largest wake-ups {span}",
        others.len(),
        others.len() - explained
    )
}

/// The cause for the terminal summary: the lean set's caveat, which
/// ends every cause of a lower-priority task that ran instead, becomes a
/// mark, and [`LEAN_CAVEAT`] says it once after the causes.
fn short_cause(x: &Explanation) -> String {
    let c = cause(x);
    match c.split_once(crate::explain::analyze::OUTRANKED_CAVEAT) {
        Some((head, tail)) => format!("{head}{MARK}{tail}"),
        None => c,
    }
}

const MARK: &str = " (*)";

/// The caveat of the causes marked `(*)`, said once.
pub const LEAN_CAVEAT: &str = "(*) the lean event set leaves the timer's events out: when a task \
     of lower priority ran instead, the timer fired late (interrupts off or a hypervisor stall) \
     or that task held the CPU in the kernel, and the trace cannot tell which; \
     `--explain-events full` records the timer's events and tells (at a cost: docs/explain.md)";

/// A made-up explanation for tests of readers and writers: a SCHED_FIFO
/// 90 hog (`rtscope-hog:4242`) ran on `cpu` for most of `latency_ns`, a
/// network interrupt came meanwhile; with `lost`, the trace lost events
/// in the interval (the explanation is partial). `latency_ns` is used to
/// the microsecond and should be at least 100 µs.
#[doc(hidden)]
pub fn synthetic(thread: u32, cpu: usize, latency_ns: u64, lost: bool) -> Explanation {
    use crate::explain::{Spike, TraceText, analyze};
    let lat_us = (latency_ns / 1000).max(100);
    let l = lat_us as i64;
    let deadline_us = 10_000_000 + u64::from(thread) * 1_000_000;
    let tid = 100 + thread as i32;
    // Trace text time of `us` microseconds after the deadline.
    let at = |us: i64| {
        let t = deadline_us.saturating_add_signed(us);
        format!("{}.{:06}", t / 1_000_000, t % 1_000_000)
    };
    let me = format!("rtscope-t{thread}");
    let mut lines = vec![
        format!(
            "rtscope-hog-4242 [{cpu:03}] {}: sched_switch: prev_comm={me} prev_pid={tid} prev_prio=4 prev_state=S ==> next_comm=rtscope-hog next_pid=4242 next_prio=9",
            at(-50)
        ),
        format!(
            "rtscope-hog-4242 [{cpu:03}] {}: local_timer_entry: vector=236",
            at(2)
        ),
        format!(
            "rtscope-hog-4242 [{cpu:03}] {}: hrtimer_expire_entry: hrtimer=1 function=hrtimer_wakeup now={}",
            at(3),
            (deadline_us + 3) * 1000
        ),
        format!(
            "rtscope-hog-4242 [{cpu:03}] {}: sched_waking: comm={me} pid={tid} prio=4 target_cpu={cpu:03}",
            at(4)
        ),
        format!(
            "rtscope-hog-4242 [{cpu:03}] {}: hrtimer_expire_exit: hrtimer=1",
            at(5)
        ),
        format!(
            "rtscope-hog-4242 [{cpu:03}] {}: local_timer_exit: vector=236",
            at(6)
        ),
        format!(
            "rtscope-hog-4242 [{cpu:03}] {}: irq_handler_entry: irq=24 name=eth0",
            at(l / 2)
        ),
    ];
    if lost {
        lines.push(format!("CPU:{cpu} [LOST 42 EVENTS]"));
    }
    lines.extend([
        format!(
            "rtscope-hog-4242 [{cpu:03}] {}: irq_handler_exit: irq=24 ret=handled",
            at(l / 2 + l / 50)
        ),
        format!(
            "rtscope-hog-4242 [{cpu:03}] {}: sched_switch: prev_comm=rtscope-hog prev_pid=4242 prev_prio=9 prev_state=R ==> next_comm={me} next_pid={tid} next_prio=4",
            at(l - 3)
        ),
    ]);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let window = TraceText::parse(&text, std::path::Path::new("synthetic"))
        .map(|t| t.window(cpu))
        .unwrap_or_default();
    let spike = Spike {
        thread,
        cpu,
        tid,
        deadline_ns: deadline_us * 1000,
        wake_ns: (deadline_us + lat_us) * 1000,
        latency_ns: lat_us * 1000,
        cycle: Some(42),
    };
    analyze(&window, &spike)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::synthetic as run_of;
    use crate::text::rank::WORST_ROWS;

    fn explained(run: &RunRecord, lost_on: Option<u32>) -> ExplainRecord {
        let explanations: Vec<Explanation> = run
            .threads
            .iter()
            .map(|t| {
                synthetic(
                    t.index,
                    t.cpu.unwrap_or(0) as usize,
                    t.stats.max_ns.unwrap_or(0),
                    lost_on == Some(t.index),
                )
            })
            .collect();
        ExplainRecord {
            threshold_ns: 100_000,
            events: vec!["sched:sched_switch".into()],
            missing_events: vec![],
            filters: vec![],
            spikes_seen: 7,
            spikes_explained: explanations.len() as u64,
            events_read: 12_345,
            events_lost: if lost_on.is_some() { 42 } else { 0 },
            explanations,
            timerlat_available: None,
        }
    }

    #[test]
    fn the_synthetic_explanation_names_the_hog() {
        let x = synthetic(0, 1, 20_000_000, false);
        assert_eq!(x.completeness, Completeness::Complete, "{x:#?}");
        assert!(
            x.cause
                .starts_with("blocked by rtscope-hog:4242 (RT 90) for 19."),
            "{}",
            x.cause
        );
        assert_eq!(PartKind::of(&x.parts[0].culprit), PartKind::Thread);
        assert!(
            x.parts
                .iter()
                .any(|p| PartKind::of(&p.culprit) == PartKind::Irq)
        );
        let x = synthetic(0, 1, 20_000_000, true);
        assert_eq!(x.completeness, Completeness::Partial, "{x:#?}");
    }

    #[test]
    fn summary_lines_name_each_threads_largest_and_the_counts() {
        let mut run = run_of(&[vec![5_000, 20_000_000], vec![4_000, 300_000]]);
        run.explain = Some(explained(&run, Some(1)));
        let lines = summary_lines(&run, Rows::Fit);
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert!(
            lines[0].starts_with(
                "thread 0 (CPU 0) max 20.00 ms: blocked by rtscope-hog:4242 (RT 90) for"
            ),
            "{lines:#?}"
        );
        assert!(
            lines[1].starts_with("thread 1 (CPU 1) max 300 µs: "),
            "{lines:#?}"
        );
        assert!(
            lines[1].ends_with("(partial: the trace misses events)"),
            "{lines:#?}"
        );
        assert_eq!(
            lines[2],
            "explain: 2 of 7 wake-ups that reached 100 µs explained (each thread's largest in every 50 ms tick of the run's supervisor); trace events: 12\u{202f}345 read, 42 lost (explanations whose interval lost events are marked partial)"
        );
    }

    /// `n` threads: thread i's max is 200 µs + i µs, thread 77's 5 ms,
    /// thread 3's 4 ms; thread 11 stays below the threshold, thread 10's
    /// maximum is not explained; the others' are.
    fn many(n: usize) -> RunRecord {
        let threads: Vec<Vec<u64>> = (0..n as u64)
            .map(|i| {
                let max = match i {
                    77 => 5_000_000,
                    3 => 4_000_000,
                    11 => 50_000,
                    _ => 200_000 + i * 1_000,
                };
                vec![5_000, max]
            })
            .collect();
        let mut run = run_of(&threads);
        let mut x = explained(&run, None);
        x.explanations
            .retain(|e| e.spike.thread != 10 && e.spike.thread != 11);
        x.spikes_seen = n as u64;
        x.spikes_explained = x.explanations.len() as u64;
        run.explain = Some(x);
        run
    }

    /// The thread of each thread line.
    fn threads_named(lines: &[String]) -> Vec<u32> {
        lines
            .iter()
            .filter_map(|l| l.strip_prefix("thread "))
            .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
            .collect()
    }

    #[test]
    fn few_threads_have_a_line_each_in_thread_order() {
        let run = many(2);
        let lines = summary_lines(&run, Rows::Fit);
        assert_eq!(threads_named(&lines), [0, 1]);
        assert_eq!(lines.len(), 3, "{lines:#?}");
        let run = many(16);
        let lines = summary_lines(&run, Rows::Fit);
        assert_eq!(lines, summary_lines(&run, Rows::All));
        let expected: Vec<u32> = (0..16).filter(|i| *i != 11).collect();
        assert_eq!(threads_named(&lines), expected);
        assert_eq!(lines[10], "thread 10 (CPU 10) max 210 µs: not explained");
        assert!(!lines.iter().any(|l| l.contains("--all")));
    }

    #[test]
    fn many_threads_show_the_largest_first_and_summarise_the_rest() {
        let run = many(128);
        let lines = summary_lines(&run, Rows::Fit);
        assert_eq!(lines.len(), 1 + WORST_ROWS + 1 + 1, "{lines:#?}");
        assert_eq!(
            lines[0],
            "127 threads with a wake-up to explain (more than 16): the 8 largest; --all prints every thread"
        );
        assert_eq!(threads_named(&lines), [77, 3, 127, 126, 125, 124, 123, 122]);
        assert!(
            lines[1].starts_with("thread 77 (CPU 77) max 5.00 ms: blocked by rtscope-hog"),
            "{}",
            lines[1]
        );
        assert_eq!(
            lines[WORST_ROWS + 1],
            "the other 119 threads (CPU 0-2,4-10,12-76,78-121): 118 explained, 1 not; largest wake-ups 200 µs to 321 µs"
        );
        assert!(lines[WORST_ROWS + 2].starts_with("explain: 126 of 128 wake-ups"));
        let all = summary_lines(&run, Rows::All);
        assert_eq!(all.len(), 127 + 1);
        let expected: Vec<u32> = (0..128).filter(|i| *i != 11).collect();
        assert_eq!(threads_named(&all), expected);
    }

    #[test]
    fn the_lean_sets_caveat_is_said_once() {
        let mut run = run_of(&[vec![5_000, 400_000], vec![4_000, 300_000]]);
        let mut x = explained(&run, None);
        for e in &mut x.explanations {
            e.cause = format!(
                "kworker/1:1:77 (nice 0){}{}",
                crate::explain::analyze::OUTRANKED,
                crate::explain::analyze::OUTRANKED_CAVEAT
            );
        }
        x.spikes_seen = 2;
        run.explain = Some(x);
        let lines = summary_lines(&run, Rows::Fit);
        let text = lines.join("\n");
        assert_eq!(lines.len(), 4, "{text}");
        assert!(
            lines[0].ends_with("kworker/1:1:77 (nice 0) ran instead, at a lower priority (*)"),
            "{text}"
        );
        assert_eq!(text.matches("cannot tell").count(), 1, "{text}");
        assert_eq!(lines[2], LEAN_CAVEAT);
        assert!(lines[2].contains("--explain-events full"));
        // All explained: no rule to state.
        assert!(lines[3].starts_with("explain: 2 of 2 wake-ups that reached 100 µs explained;"));
    }

    #[test]
    fn the_irq_thread_split_is_shown_per_explanation_or_said_once() {
        let run = run_of(&[vec![5_000, 20_000_000], vec![4_000, 300_000]]);
        let mut x = explained(&run, None);
        // The synthetic trace holds the timer's expiry, 3 µs late.
        let lines = item_split_lines(&x, &x.explanations[0]);
        assert!(
            lines[0].starts_with(
                "IRQ and thread latency (as rtla timerlat splits them): IRQ latency 3.0 µs, thread latency 20.0 ms: the thread latency dominated"
            ),
            "{lines:#?}"
        );
        assert!(
            lines[0].contains("blocked by rtscope-hog:4242 (RT 90)"),
            "{lines:#?}"
        );
        assert_eq!(split_once_line(&x), None);
        // The lean set: said once for the run, not per explanation.
        for e in &mut x.explanations {
            e.irq_thread = Some(IrqThreadSplit::Unknown {
                why: SplitUnknown::LeanSet,
            });
        }
        assert!(item_split_lines(&x, &x.explanations[0]).is_empty());
        assert!(
            split_once_line(&x)
                .unwrap()
                .starts_with("unknown in the lean event set")
        );
        // Explanations stored before the split: nothing said.
        for e in &mut x.explanations {
            e.irq_thread = None;
        }
        assert_eq!(split_once_line(&x), None);
        assert!(item_split_lines(&x, &x.explanations[0]).is_empty());
    }

    #[test]
    fn a_kernel_with_timerlat_is_said_to_allow_a_cross_check() {
        let run = run_of(&[vec![5_000, 20_000_000]]);
        let mut x = explained(&run, None);
        assert!(!counts_line(&x).contains("timerlat"));
        x.timerlat_available = Some(false);
        assert!(!counts_line(&x).contains("timerlat"));
        x.timerlat_available = Some(true);
        assert!(
            counts_line(&x).ends_with(
                "; this kernel has the timerlat tracer: `rtla timerlat` can cross-check the IRQ and thread latencies"
            ),
            "{}",
            counts_line(&x)
        );
    }

    #[test]
    fn a_run_with_nothing_above_the_threshold_says_so() {
        let mut run = run_of(&[vec![5_000, 20_000]]);
        run.explain = Some(ExplainRecord {
            threshold_ns: 100_000,
            ..Default::default()
        });
        let lines = summary_lines(&run, Rows::Fit);
        assert_eq!(lines[0], "no wake-up reached 100 µs: nothing to explain");
        assert_eq!(lines.len(), 2, "{lines:#?}");
        run.explain = None;
        assert!(summary_lines(&run, Rows::Fit).is_empty());
    }

    #[test]
    fn a_maximum_left_unexplained_is_said() {
        let mut run = run_of(&[vec![5_000, 900_000]]);
        run.explain = Some(ExplainRecord {
            threshold_ns: 100_000,
            spikes_seen: 1,
            ..Default::default()
        });
        let lines = summary_lines(&run, Rows::Fit);
        assert_eq!(lines[0], "thread 0 (CPU 0) max 900 µs: not explained");
    }
}
