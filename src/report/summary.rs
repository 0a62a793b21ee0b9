//! The end-of-run summary table: one row per thread and one for all
//! threads, in microseconds with 0.1 µs precision; for a run measured
//! with `--explain`, a line per thread on why its largest wake-up was
//! late, and the counts (`super::why`). An import's overflows (samples
//! its source counted beyond its histogram, values unknown) get a line.

use super::known;
use crate::record::{LatencyStats, METRICS, RunRecord, Unknowable};
use crate::units::{fmt_duration, us_cell_f, us1};
use std::fmt::Write;

fn header() -> Vec<String> {
    ["T", "CPU", "P", "I", "count"]
        .into_iter()
        .chain(METRICS)
        .chain(["missed"])
        .map(str::to_string)
        .collect()
}

fn cells(run: &RunRecord, stats: &LatencyStats) -> Vec<String> {
    let mut out = vec![known(run, Unknowable::Count, || stats.samples.to_string())];
    out.extend(METRICS.iter().map(|m| us_cell_f(stats.metric_ns(m))));
    out.push(known(run, Unknowable::MissedPeriods, || {
        stats.missed_periods.to_string()
    }));
    out
}

/// Why a run's missed periods are unknown.
fn missed_unknown(run: &RunRecord) -> &'static str {
    match run.source.format.as_deref() {
        Some(f) if f.starts_with("cyclictest") => "not counted by cyclictest",
        _ => "not in the source",
    }
}

/// The summary table of `run` (latencies in µs).
pub fn render(run: &RunRecord) -> String {
    let mut rows: Vec<Vec<String>> = vec![header()];
    for t in &run.threads {
        let mut r = vec![
            t.index.to_string(),
            t.cpu.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
            known(run, Unknowable::Priority, || t.priority.to_string()),
            if t.interval_ns > 0 || run.knows(Unknowable::Interval) {
                fmt_duration(t.interval_ns)
            } else {
                "unknown".into()
            },
        ];
        r.extend(cells(run, &t.stats));
        rows.push(r);
    }
    if run.threads.len() > 1 {
        let mut r = vec!["all".into(), "".into(), "".into(), "".into()];
        r.extend(cells(run, &run.overall));
        rows.push(r);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Latency in microseconds (us); count = periods recorded, missed = periods that began before the thread woke for an earlier one (no wake-up of their own)"
    );
    out.push_str(&crate::text::table::render(&rows));
    if !run.knows(Unknowable::MissedPeriods) {
        let _ = writeln!(out, "missed: unknown ({})", missed_unknown(run));
    }
    if let Some(o) = super::verdict::overflow_text(run) {
        let _ = writeln!(out, "{}", o.replacen("Overflows", "overflows", 1));
    }
    if let (Some(max), Some(at)) = (run.overall.max_ns, run.overall.max_at) {
        let _ = writeln!(
            out,
            "max {}us at cycle {} ({} into the run)",
            us1(max),
            at.cycle,
            fmt_duration(at.offset_ns)
        );
    }
    if run.options.warmup_ns > 0 {
        let _ = writeln!(
            out,
            "the first {} (warm-up) are not in the statistics",
            fmt_duration(run.options.warmup_ns)
        );
    }
    if run.overall.early_wakeups > 0 {
        let _ = writeln!(
            out,
            "early wake-ups: {} (up to {}us before the deadline; not in the histogram)",
            run.overall.early_wakeups,
            us1(run.overall.max_early_ns.unwrap_or(0))
        );
    }
    if let Some(limit) = run.limits.max_latency_ns {
        let verdict = if run.limits.exceeded {
            "EXCEEDED"
        } else {
            "met"
        };
        let _ = writeln!(out, "max-latency limit {}us: {verdict}", us1(limit));
    }
    if run.overall.samples > 0 {
        let _ = writeln!(out, "deadline {}", super::verdict::deadline_status(run));
        let _ = writeln!(out, "verdict: {}", super::verdict::status_line(run));
    }
    if let Some(b) = run.limits.break_event {
        let _ = writeln!(
            out,
            "stopped: thread {} woke {}us late at cycle {}, above the break threshold {}us",
            b.thread,
            us1(b.latency_ns),
            b.at.cycle,
            us1(run.limits.break_ns.unwrap_or(0))
        );
    }
    for line in super::why::summary_lines(run) {
        let _ = writeln!(out, "{line}");
    }
    out
}
