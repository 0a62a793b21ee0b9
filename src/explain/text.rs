//! The terminal rendering of an [`Explanation`]: the cause, the parts
//! with durations and shares, the timeline, and what is missing. Text
//! only; nothing is printed here.

use super::analyze::fmt_ns;
use super::model::{
    Completeness, Explanation, IrqThreadSplit, KnownSplit, SplitSide, SplitUnknown,
};
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
    for l in split_lines(x) {
        let _ = writeln!(o, "{l}");
    }
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

/// What rtla timerlat calls the split, for the first line.
pub const SPLIT_NAME: &str = "IRQ and thread latency (as rtla timerlat splits them)";

/// The split into IRQ and thread latency in words: a line with both and
/// the side that dominated, a line with the steps after the expiry; one
/// line saying why when unknown; nothing for an explanation made before
/// the split was.
pub fn split_lines(x: &Explanation) -> Vec<String> {
    match &x.irq_thread {
        None => vec![],
        Some(IrqThreadSplit::Unknown { why }) => {
            vec![format!("{SPLIT_NAME}: {}", unknown_why(*why))]
        }
        Some(IrqThreadSplit::Known(k)) => known_lines(k),
    }
}

/// Why the split is unknown, in words.
pub fn unknown_why(why: SplitUnknown) -> &'static str {
    match why {
        SplitUnknown::LeanSet => {
            "unknown in the lean event set (it leaves the timer's expiry out; --explain-events full records it)"
        }
        SplitUnknown::NoExpiry => {
            "unknown: the trace holds no expiry of the thread's own timer (hrtimer_expire_entry)"
        }
        SplitUnknown::Inconsistent => {
            "unknown: the timer's expiry in the trace lies after the thread's clock read (the trace and the measurement disagree)"
        }
    }
}

fn known_lines(k: &KnownSplit) -> Vec<String> {
    let rest = k.thread_latency_ns - k.irq_latency_ns.min(k.thread_latency_ns);
    let side = match k.dominant {
        SplitSide::Irq => "the IRQ latency dominated".to_string(),
        SplitSide::Thread => format!(
            "the thread latency dominated ({} after the timer fired)",
            fmt_ns(rest)
        ),
    };
    let held = k
        .held_by
        .as_ref()
        .map(|h| format!("; {h}"))
        .unwrap_or_default();
    let mut out = vec![format!(
        "{SPLIT_NAME}: IRQ latency {}, thread latency {}: {side}{held}",
        fmt_ns(k.irq_latency_ns),
        fmt_ns(k.thread_latency_ns)
    )];
    let steps: Vec<String> = [
        (k.expiry_to_waking_ns, "the thread's wake-up"),
        (k.expiry_to_switch_ns, "the switch to it"),
    ]
    .iter()
    .filter_map(|(ns, what)| ns.map(|n| format!("{what} +{}", fmt_ns(n))))
    .collect();
    if !steps.is_empty() {
        let tail = k
            .switch_to_run_ns
            .map(|n| format!(", then {} to user space and the clock read", fmt_ns(n)))
            .unwrap_or_default();
        out.push(format!(
            "  after the timer's handler began: {}{tail}",
            steps.join(", ")
        ));
    }
    out
}
