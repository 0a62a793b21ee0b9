//! Several characterizations side by side, as seed 001 compares its
//! configurations: one row per benchmark row (matched by benchmark and
//! variant), min / avg / max in ns per characterization, and the ratio of
//! the last to the first, headed as the run comparison heads it (`B/A`
//! for two, `C/A` for three...). Pure: records in, text (or a table) out.

use super::{BenchResult, Characterization};
use crate::text::table;
use crate::units::format_cpu_list;
use std::fmt::Write;

/// Row titles in first-seen order over all characterizations.
pub fn titles(cs: &[&Characterization]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in cs {
        for r in &c.results {
            let t = r.title();
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// The row called `title` in `c`.
pub fn row<'a>(c: &'a Characterization, title: &str) -> Option<&'a BenchResult> {
    c.results.iter().find(|r| r.title() == title)
}

/// `b / a`, formatted (`-` when either is missing or a is 0).
pub fn ratio(a: Option<u64>, b: Option<u64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a > 0 => format!("{:.2}", b as f64 / a as f64),
        _ => "-".into(),
    }
}

/// What differs between the characterizations' systems and set-ups.
pub fn differences(cs: &[&Characterization]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(first) = cs.first() else { return out };
    let mut differ = |what: &str, f: &dyn Fn(&Characterization) -> String| {
        let v0 = f(first);
        if cs.iter().any(|c| f(c) != v0) {
            let all: Vec<String> = cs.iter().map(|c| f(c)).collect();
            out.push(format!("{what} differs: {}", all.join(" / ")));
        }
    };
    differ("kernel", &|c| c.fingerprint.kernel_release.clone());
    differ("preemption model", &|c| {
        c.fingerprint.preemption_model.to_string()
    });
    differ("host", &|c| c.fingerprint.hostname.clone());
    differ("CPUs", &|c| format_cpu_list(&c.cpus));
    differ("isolation", &|c| {
        c.isolated_cpus
            .as_ref()
            .map(|i| format!("CPUs {} isolated", format_cpu_list(i)))
            .unwrap_or_else(|| "none".into())
    });
    differ("duration per benchmark", &|c| {
        crate::units::fmt_duration(c.per_bench_ns)
    });
    differ("kernel command line", &|c| c.fingerprint.cmdline.clone());
    out
}

/// The letter that names the `i`-th characterization (A, B, ...).
fn letter(i: usize) -> char {
    (b'A' + (i % 26) as u8) as char
}

/// The side-by-side table (header first).
pub fn table_rows(cs: &[&Characterization]) -> Vec<Vec<String>> {
    let mut head = vec!["benchmark (ns)".to_string()];
    for (i, _) in cs.iter().enumerate() {
        let n = letter(i);
        head.extend([format!("{n} min"), format!("{n} avg"), format!("{n} max")]);
    }
    if cs.len() >= 2 {
        let last = letter(cs.len() - 1);
        head.extend([format!("{last}/A avg"), format!("{last}/A max")]);
    }
    let mut rows = vec![head];
    for t in titles(cs) {
        let mut line = vec![t.clone()];
        for c in cs {
            match row(c, &t) {
                Some(r) => line.extend([
                    r.stats.min_ns.to_string(),
                    r.stats.avg_ns.to_string(),
                    r.stats.max_ns.to_string(),
                ]),
                None => line.extend(["-".into(), "-".into(), "-".into()]),
            }
        }
        if cs.len() >= 2 {
            let first = row(cs[0], &t);
            let last = row(cs[cs.len() - 1], &t);
            line.push(ratio(
                first.map(|r| r.stats.avg_ns),
                last.map(|r| r.stats.avg_ns),
            ));
            line.push(ratio(
                first.map(|r| r.stats.max_ns),
                last.map(|r| r.stats.max_ns),
            ));
        }
        rows.push(line);
    }
    rows
}

/// The whole comparison text; `names[i]` names `cs[i]` (as given on the
/// command line).
pub fn render(cs: &[&Characterization], names: &[String]) -> String {
    let mut s = String::new();
    for (i, c) in cs.iter().enumerate() {
        let n = letter(i);
        let _ = writeln!(
            s,
            "{n} = {} ({}): {}, kernel {} ({}), CPUs {}",
            names.get(i).map(String::as_str).unwrap_or("?"),
            c.name(),
            crate::units::fmt_unix_utc(c.started_at_unix_ns),
            c.fingerprint.kernel_release,
            c.fingerprint.preemption_model,
            format_cpu_list(&c.cpus),
        );
    }
    for d in differences(cs) {
        let _ = writeln!(s, "note: {d}");
    }
    s.push('\n');
    s.push_str(&table::render(&table_rows(cs)));
    for (i, c) in cs.iter().enumerate() {
        let n = letter(i);
        if let Some(v) = &c.pi_verdict {
            let _ = writeln!(s, "{n}: {}", v.text);
        }
    }
    s
}
