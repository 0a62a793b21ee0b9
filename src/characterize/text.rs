//! The terminal text of a characterization: seed 001's tables (one per
//! group: clock, mutexes, priority changes, timers, threads, OS noise,
//! priority inversion), values in ns with min / avg / p50 / p99 / p99.99
//! / max, then the OS-noise figures, the PI verdict and the self-checks.
//! Pure: a record in, text out.

use super::{BENCHES, BenchResult, Characterization, Group};
use crate::text::table;
use crate::units::{fmt_duration, fmt_unix_utc, format_cpu_list};
use std::fmt::Write;

/// The group a stored row belongs to (rows of unknown benchmarks, from a
/// newer rtscope, go with the threads).
pub fn group_of(r: &BenchResult) -> Group {
    super::find(&r.bench)
        .map(|b| b.group)
        .unwrap_or(Group::Threads)
}

/// The groups that have rows, in registry order.
pub fn groups(c: &Characterization) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for b in BENCHES {
        if !out.contains(&b.group) && c.results.iter().any(|r| group_of(r) == b.group) {
            out.push(b.group);
        }
    }
    out
}

/// The head lines: what system, how it was measured.
pub fn head(c: &Characterization) -> String {
    let f = &c.fingerprint;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} on {} ({}), kernel {} ({}), started {}",
        c.name(),
        if f.hostname.is_empty() {
            "?"
        } else {
            &f.hostname
        },
        if f.cpu_model.is_empty() {
            "?"
        } else {
            &f.cpu_model
        },
        f.kernel_release,
        f.preemption_model,
        fmt_unix_utc(c.started_at_unix_ns),
    );
    let _ = writeln!(
        s,
        "CPUs {}{}, -D {} per benchmark, SCHED_FIFO priority {}, timer interval {}{}",
        format_cpu_list(&c.cpus),
        match &c.isolated_cpus {
            Some(i) => format!(" (isolated: {})", format_cpu_list(i)),
            None => String::new(),
        },
        fmt_duration(c.per_bench_ns),
        c.priority,
        fmt_duration(c.interval_ns),
        if c.complete {
            ""
        } else {
            " -- cut short: only the benchmarks shown ended"
        },
    );
    let _ = writeln!(
        s,
        "Clock read cost: {} ns (mean of back-to-back clock_gettime pairs), subtracted from the timed calls",
        c.clock_read_ns
    );
    s
}

/// One group's rows, header first: benchmark, CPU, count, then the
/// figures, each header followed by `unit` (" ns" in HTML, where the
/// table has no caption saying so, and numbers get thousands
/// separators). Shared by the text and the HTML.
pub fn group_rows(c: &Characterization, g: Group, unit: &str) -> Vec<Vec<String>> {
    let mut head = vec!["benchmark".to_string(), "CPU".into(), "count".into()];
    head.extend(
        ["min", "avg", "p50", "p99", "p99.99", "max"]
            .iter()
            .map(|h| format!("{h}{unit}")),
    );
    let mut rows = vec![head];
    let num = |v: u64| {
        if unit.is_empty() {
            v.to_string()
        } else {
            crate::text::num::count(v)
        }
    };
    for r in c.results.iter().filter(|r| group_of(r) == g) {
        let st = &r.stats;
        rows.push(vec![
            r.title(),
            r.cpu.to_string(),
            num(st.count),
            num(st.min_ns),
            num(st.avg_ns),
            num(st.p50_ns),
            num(st.p99_ns),
            num(st.p9999_ns),
            num(st.max_ns),
        ]);
    }
    rows
}

/// One group's table.
pub fn group_table(c: &Characterization, g: Group) -> String {
    table::render(&group_rows(c, g, ""))
}

/// The OS-noise figures, one line per CPU.
pub fn noise_lines(c: &Characterization) -> String {
    let mut s = String::new();
    for r in &c.results {
        let Some(n) = &r.noise else { continue };
        let gaps: Vec<String> = n
            .largest_gaps
            .iter()
            .take(5)
            .map(|g| format!("{} at {}", fmt_duration(g.gap_ns), fmt_duration(g.at_ns)))
            .collect();
        let _ = writeln!(
            s,
            "CPU {}: {:.3}% of the CPU left to the loop; {} gaps above {} ({} in all) in {}; largest: {}",
            r.cpu,
            n.cpu_left_to_loop_percent,
            n.gaps_above_threshold,
            fmt_duration(n.threshold_ns),
            fmt_duration(n.noise_ns),
            fmt_duration(n.duration_ns),
            if gaps.is_empty() {
                "none".into()
            } else {
                gaps.join(", ")
            }
        );
        for cause in super::cause::likely_causes(n, &c.fingerprint) {
            let _ = writeln!(s, "CPU {}: {cause}", r.cpu);
        }
    }
    s
}

/// The explained gaps (`--explain`), each as `measure --explain` shows
/// a late wake-up.
pub fn explanations(c: &Characterization) -> String {
    let mut s = String::new();
    for r in &c.results {
        let Some(n) = &r.noise else { continue };
        for x in &n.explanations {
            let _ = writeln!(
                s,
                "\nGap of {} on CPU {} (explained from kernel trace events):",
                fmt_duration(x.spike.latency_ns),
                r.cpu
            );
            s.push_str(&crate::explain::text::render(x));
        }
        if n.explanations.is_empty()
            && let Some(above) = n.explained_above_ns
        {
            let _ = writeln!(
                s,
                "CPU {}: no gap of {} or more to explain",
                r.cpu,
                fmt_duration(above)
            );
        }
    }
    s
}

/// The self-checks: one line when all held, else each failure.
pub fn checks(c: &Characterization) -> String {
    let failed: Vec<_> = c.checks.iter().filter(|k| !k.held).collect();
    let mut s = String::new();
    if failed.is_empty() {
        let _ = writeln!(s, "Self-checks: all {} held.", c.checks.len());
    } else {
        for k in failed {
            let _ = writeln!(s, "Self-check FAILED ({}): {}", k.bench, k.fact);
        }
    }
    s
}

/// The whole text.
pub fn render(c: &Characterization) -> String {
    let mut s = head(c);
    let _ = writeln!(s, "All values in nanoseconds (ns).");
    for g in groups(c) {
        let _ = writeln!(s, "\n{}", g.title());
        s.push_str(&group_table(c, g));
        if g == Group::Noise {
            s.push_str(&noise_lines(c));
            s.push_str(&explanations(c));
        }
        if g == Group::Inversion
            && let Some(v) = &c.pi_verdict
        {
            let _ = writeln!(s, "{}", v.text);
        }
    }
    if !c.checks.is_empty() {
        s.push('\n');
        s.push_str(&checks(c));
    }
    s
}
