//! The terminal rendering of an [`Explanation`]: the cause, the parts
//! with durations and shares, the timeline, and what is missing. Text
//! only; nothing is printed here.

use super::analyze::fmt_ns;
use super::model::{Completeness, Explanation};
use std::fmt::Write as _;

/// Signed offset from the deadline, for the timeline.
fn offset(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "+" };
    format!("{sign}{}", fmt_ns(ns.unsigned_abs()))
}

/// A readable explanation, several lines, ending with a newline.
pub fn render(x: &Explanation) -> String {
    let s = &x.spike;
    let mut o = String::new();
    let who = match &x.thread_comm {
        Some(c) => format!("{c}:{}", s.tid),
        None => format!("thread {}", s.tid),
    };
    let _ = writeln!(
        o,
        "{who} on CPU {} woke {} late{}",
        s.cpu,
        fmt_ns(s.latency_ns),
        s.cycle.map(|c| format!(" (cycle {c})")).unwrap_or_default()
    );
    if x.completeness == Completeness::Partial {
        let _ = writeln!(o, "PARTIAL: this is not the whole story:");
        for r in &x.partial_reasons {
            let _ = writeln!(o, "  - {r}");
        }
    }
    let _ = writeln!(o, "cause: {}", x.cause);
    let _ = writeln!(o, "where the time went:");
    for p in &x.parts {
        let times = if p.occurrences > 1 {
            format!(" ({} times)", p.occurrences)
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "  {:>10}  {:>5.1} %  {}{times}",
            fmt_ns(p.duration_ns),
            p.share_pct,
            p.label
        );
    }
    let _ = writeln!(
        o,
        "  {:>10}  {:>5.1} %  unexplained",
        fmt_ns(x.unexplained_ns),
        x.unexplained_pct
    );
    let _ = writeln!(o, "timeline (from the deadline):");
    for st in &x.timeline {
        let _ = writeln!(o, "  {:>11}  {}", offset(st.since_deadline_ns), st.what);
    }
    for n in &x.notes {
        let _ = writeln!(o, "note: {n}");
    }
    o
}
