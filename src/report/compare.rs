//! Two runs side by side on one latency metric: per CPU and overall, with
//! the ratio B/A, the comparability warnings of [`super::fairness`], and
//! the regression gate (`--fail-if-worse PCT`). A is the baseline, B the
//! candidate; a higher latency is worse. Each row says whether its
//! difference is beyond the noise of the runs' windows ([`super::noise`]),
//! and the gate fires only on a difference beyond it.

use super::fairness;
use super::noise::{self, Judgement, RunWindows, Verdict};
use super::plot::data::thread_name;
use super::{NamedRun, known};
use crate::record::{LatencyStats, METRICS, RunRecord, ThreadRecord};
use crate::units::us_cell_f;
use std::fmt::Write;
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum CompareError {
    #[error("unknown metric '{0}': use one of min, avg, p50, p90, p99, p99.9, p99.99, max")]
    Metric(String),
    #[error("run {run} has no {metric} (it holds no samples, or its source did not record it)")]
    Missing { run: String, metric: String },
}

/// One line of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub label: String,
    pub a_ns: Option<f64>,
    pub b_ns: Option<f64>,
    /// Whether the difference is beyond the noise (`None`: a side has no
    /// figure).
    pub noise: Option<Judgement>,
}

impl Row {
    /// B/A, when both exist and A is not zero.
    pub fn ratio(&self) -> Option<f64> {
        match (self.a_ns, self.b_ns) {
            (Some(a), Some(b)) if a > 0.0 => Some(b / a),
            _ => None,
        }
    }

    /// How much worse B is than A, in percent (negative: better).
    pub fn change_pct(&self) -> Option<f64> {
        self.ratio().map(|r| (r - 1.0) * 100.0)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub metric: String,
    pub a_name: String,
    pub b_name: String,
    /// Per CPU (or per thread when threads are not pinned to distinct
    /// CPUs), then `all`.
    pub rows: Vec<Row>,
    pub warnings: Vec<String>,
}

/// Result of the regression gate.
#[derive(Clone, Debug, PartialEq)]
pub struct Gate {
    pub passed: bool,
    pub message: String,
}

fn metric_of(s: &LatencyStats, metric: &str) -> Option<f64> {
    if s.samples == 0 {
        return None;
    }
    s.metric_ns(metric)
}

/// Threads are matched by CPU when each run has its threads on distinct
/// CPUs, else by thread number.
fn by_cpu(r: &RunRecord) -> bool {
    let mut cpus: Vec<u32> = Vec::new();
    for t in &r.threads {
        match t.cpu {
            Some(c) if !cpus.contains(&c) => cpus.push(c),
            _ => return false,
        }
    }
    true
}

/// The noise judgement of one row: the figures and the threads' windows
/// of each side.
fn judge<'t>(
    metric: &str,
    (a_ns, ta): (&Option<f64>, impl Iterator<Item = &'t ThreadRecord>),
    (b_ns, tb): (&Option<f64>, impl Iterator<Item = &'t ThreadRecord>),
) -> Option<Judgement> {
    let (a_ns, b_ns) = ((*a_ns)?, (*b_ns)?);
    let (a, b) = (RunWindows::of("A", ta), RunWindows::of("B", tb));
    Some(noise::judge(metric, &a, &b, (a_ns, b_ns)))
}

/// The row of one thread (or CPU) of each side.
fn row(label: String, metric: &str, ta: Option<&ThreadRecord>, tb: Option<&ThreadRecord>) -> Row {
    let a_ns = ta.and_then(|t| metric_of(&t.stats, metric));
    let b_ns = tb.and_then(|t| metric_of(&t.stats, metric));
    let noise = judge(metric, (&a_ns, ta.into_iter()), (&b_ns, tb.into_iter()));
    Row {
        label,
        a_ns,
        b_ns,
        noise,
    }
}

/// Compare `b` against `a` on `metric`.
pub fn compare<'a>(
    a: &'a NamedRun,
    b: &'a NamedRun,
    metric: &str,
) -> Result<Comparison, CompareError> {
    if !METRICS.contains(&metric) {
        return Err(CompareError::Metric(metric.to_string()));
    }
    let (ra, rb) = (&a.record, &b.record);
    let mut rows = Vec::new();
    if by_cpu(ra) && by_cpu(rb) {
        let mut cpus: Vec<u32> = ra
            .threads
            .iter()
            .chain(rb.threads.iter())
            .filter_map(|t| t.cpu)
            .collect();
        cpus.sort_unstable();
        cpus.dedup();
        for cpu in cpus {
            let find = |r: &'a RunRecord| r.threads.iter().find(|t| t.cpu == Some(cpu));
            rows.push(row(format!("CPU {cpu}"), metric, find(ra), find(rb)));
        }
    } else {
        let n = ra.threads.len().max(rb.threads.len());
        for i in 0..n {
            let label = ra
                .threads
                .get(i)
                .or(rb.threads.get(i))
                .map(|t| {
                    let owner = if ra.threads.get(i).is_some() { ra } else { rb };
                    format!("T{i} {}", thread_name(owner, t))
                })
                .unwrap_or_else(|| format!("T{i}"));
            rows.push(row(label, metric, ra.threads.get(i), rb.threads.get(i)));
        }
    }
    let (a_ns, b_ns) = (
        metric_of(&ra.overall, metric),
        metric_of(&rb.overall, metric),
    );
    let all = Row {
        label: "all".into(),
        noise: judge(
            metric,
            (&a_ns, ra.threads.iter()),
            (&b_ns, rb.threads.iter()),
        ),
        a_ns,
        b_ns,
    };
    if all.a_ns.is_none() {
        return Err(CompareError::Missing {
            run: a.name.clone(),
            metric: metric.into(),
        });
    }
    if all.b_ns.is_none() {
        return Err(CompareError::Missing {
            run: b.name.clone(),
            metric: metric.into(),
        });
    }
    rows.push(all);
    let warnings = fairness::warning("A", ra, "B", rb)
        .into_iter()
        .chain(super::split::compare_warning(ra, rb))
        .collect();
    Ok(Comparison {
        metric: metric.into(),
        a_name: a.name.clone(),
        b_name: b.name.clone(),
        rows,
        warnings,
    })
}

impl Comparison {
    pub fn overall(&self) -> &Row {
        self.rows.last().expect("a comparison has its overall row")
    }

    /// Fails when B's overall metric is more than `pct` % above A's and
    /// the difference is beyond the noise; when the noise is unknown, on
    /// the figure alone. The message says which.
    pub fn gate(&self, pct: f64) -> Gate {
        let all = self.overall();
        let (a, b) = (all.a_ns.unwrap_or(0.0), all.b_ns.unwrap_or(0.0));
        let limit = a * (1.0 + pct / 100.0);
        let change = all
            .change_pct()
            .map(|c| format!("{c:+.1}%"))
            .unwrap_or_else(|| "from 0".into());
        let (passed, outcome) = if b <= limit {
            (true, "passed".to_string())
        } else {
            gate_outcome(all.noise.as_ref().map(|j| &j.verdict))
        };
        let message = format!(
            "regression gate: B's overall {} is {:.1}us, A's {:.1}us ({change}; allowed up to +{pct}%, {:.1}us): {outcome}",
            self.metric,
            b / 1e3,
            a / 1e3,
            limit / 1e3,
        );
        Gate { passed, message }
    }

    /// The terminal table (latencies in µs, printed `us`).
    pub fn render(&self, a: &NamedRun, b: &NamedRun) -> String {
        let mut out = String::new();
        for (tag, r) in [("A", a), ("B", b)] {
            let rec = &r.record;
            let _ = writeln!(
                out,
                "{tag}: {} ({}): kernel {} ({}), {} samples over {}, {} thread{}",
                r.name,
                r.reference,
                if rec.fingerprint.kernel_release.is_empty() {
                    "unknown"
                } else {
                    &rec.fingerprint.kernel_release
                },
                rec.fingerprint.preemption_model,
                rec.overall.samples,
                known(rec, crate::record::Unknowable::Duration, || {
                    crate::units::fmt_duration(rec.duration_ns)
                }),
                rec.threads.len(),
                if rec.threads.len() == 1 { "" } else { "s" },
            );
            let _ = writeln!(out, "   verdict: {}", super::verdict::status_line(rec));
        }
        let _ = writeln!(
            out,
            "{} latency in microseconds (us); B/A above 1 means B is worse",
            self.metric
        );
        let mut table: Vec<[String; 5]> = vec![[
            String::new(),
            "A".into(),
            "B".into(),
            "B/A".into(),
            "change".into(),
        ]];
        for r in &self.rows {
            table.push([
                r.label.clone(),
                us_cell_f(r.a_ns),
                us_cell_f(r.b_ns),
                r.ratio()
                    .map(|x| format!("{x:.2}"))
                    .unwrap_or_else(|| "-".into()),
                r.change_pct()
                    .map(|c| format!("{c:+.1}%"))
                    .unwrap_or_else(|| "-".into()),
            ]);
        }
        let rows: Vec<Vec<String>> = table.iter().map(|r| r.to_vec()).collect();
        out.push_str(&crate::text::table::render(&rows));
        out.push_str(&self.render_noise());
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        out
    }
}

impl Comparison {
    /// Each row's noise: the runs' ranges and the verdict; one line when
    /// every row is unknown for the same reason.
    fn render_noise(&self) -> String {
        let judged: Vec<&Judgement> = self.rows.iter().filter_map(|r| r.noise.as_ref()).collect();
        if let Some(first) = judged.first() {
            let same = judged
                .iter()
                .all(|j| j.verdict == first.verdict && j.a.is_none() && j.b.is_none());
            if same && matches!(first.verdict, Verdict::Unknown(_)) {
                return format!("{}\n", first.verdict.words());
            }
        }
        let range = |i: Option<noise::Interval>| {
            i.map(|i| format!("{}..{}", us_cell_f(Some(i.lo_ns)), us_cell_f(Some(i.hi_ns))))
                .unwrap_or_else(|| "-".into())
        };
        let mut table: Vec<Vec<String>> = vec![vec![
            String::new(),
            "A range".into(),
            "B range".into(),
            "difference".into(),
        ]];
        for r in &self.rows {
            let (a, b, words) = match &r.noise {
                Some(j) => (range(j.a), range(j.b), j.verdict.words()),
                None => ("-".into(), "-".into(), "no figure on one side".into()),
            };
            table.push(vec![r.label.clone(), a, b, words]);
        }
        format!(
            "noise of the {} from each run's windows (us): the 95 % range of each run's figure \
             (a bootstrap over its windows) and whether B - A is beyond the noise (a \
             permutation test of the windows at the 5 % level)\n{}",
            self.metric,
            crate::text::table::render(&table)
        )
    }
}

/// B is worse than the allowance: whether the gate fires, and why.
fn gate_outcome(v: Option<&Verdict>) -> (bool, String) {
    match v {
        Some(Verdict::Beyond { b_worse: true, p }) => (
            false,
            format!(
                "FAILED (the difference is beyond the noise of the runs' windows, {})",
                noise::p_text(*p)
            ),
        ),
        Some(Verdict::Within { p }) => (
            true,
            format!(
                "passed: the gate did not fire because the difference is within the noise of \
                 the runs' windows ({})",
                noise::p_text(*p)
            ),
        ),
        Some(Verdict::Beyond { p, .. }) => (
            true,
            format!(
                "passed: the gate did not fire because the runs' windows put B below A ({})",
                noise::p_text(*p)
            ),
        ),
        Some(Verdict::Unknown(why)) => (
            false,
            format!("FAILED (the noise could not be judged: {why}; gated on the figure alone)"),
        ),
        None => (
            false,
            "FAILED (the noise could not be judged; gated on the figure alone)".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::synthetic;

    fn named(name: &str, r: RunRecord) -> NamedRun {
        NamedRun {
            name: name.into(),
            reference: format!("{name}.json"),
            record: r,
        }
    }

    #[test]
    fn per_cpu_rows_ratios_and_gate() {
        let a = named("a", synthetic(&[vec![10_000], vec![20_000]]));
        let b = named("b", synthetic(&[vec![15_000], vec![20_000]]));
        let c = compare(&a, &b, "max").unwrap();
        let labels: Vec<&str> = c.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["CPU 0", "CPU 1", "all"]);
        assert_eq!(c.rows[0].ratio(), Some(1.5));
        assert_eq!(c.rows[1].change_pct(), Some(0.0));
        assert_eq!(c.overall().ratio(), Some(1.0));
        assert!(c.gate(0.0).passed);
        assert!(c.warnings.is_empty());
        let text = c.render(&a, &b);
        assert!(text.contains("CPU 0  10.0  15.0  1.50  +50.0%"), "{text}");
        // Each run's verdict and whether it is provisional (60 s, no load).
        assert_eq!(
            text.matches(
                "   verdict: tens of µs (co-kernel, e.g. Xenomai) (provisional: 60 s, no load)\n"
            )
            .count(),
            2,
            "{text}"
        );
        // B worse overall by 50 %.
        let b2 = named("b2", synthetic(&[vec![15_000], vec![30_000]]));
        let c2 = compare(&a, &b2, "max").unwrap();
        assert!(!c2.gate(49.0).passed);
        assert!(c2.gate(50.0).passed);
        assert!(c2.gate(49.0).message.contains("FAILED"));
        assert!(c2.gate(49.0).message.contains("+50.0%"));
    }

    #[test]
    fn unknown_metrics_and_missing_values_are_errors() {
        let a = named("a", synthetic(&[vec![10_000]]));
        let empty = named("e", synthetic(&[vec![]]));
        assert_eq!(
            compare(&a, &a, "p42"),
            Err(CompareError::Metric("p42".into()))
        );
        assert!(matches!(
            compare(&a, &empty, "p99.99"),
            Err(CompareError::Missing { .. })
        ));
    }

    #[test]
    fn different_cpus_and_unfair_pairs() {
        let a = named("a", synthetic(&[vec![10_000]]));
        let mut rb = synthetic(&[vec![5_000], vec![6_000]]);
        rb.fingerprint.preemption_model = "rt".into();
        let b = named("b", rb);
        let c = compare(&a, &b, "p99").unwrap();
        assert_eq!(c.rows.len(), 3);
        assert_eq!(c.rows[1].a_ns, None);
        assert_eq!(c.rows[1].ratio(), None);
        assert_eq!(c.warnings.len(), 1);
        assert!(
            c.warnings[0].contains("preemption_model"),
            "{}",
            c.warnings[0]
        );
        let text = c.render(&a, &b);
        assert!(text.contains("warning: A and B differ"), "{text}");
        assert!(text.contains("CPU 1     -"), "{text}");
    }

    use crate::report::noise::test_series as windows;

    fn with_windows(max_ns: u64, w: crate::record::WindowSeries) -> NamedRun {
        let mut r = synthetic(&[vec![10_000, max_ns]]);
        r.threads[0].windows = w;
        named("w", r)
    }

    #[test]
    fn the_gate_fires_only_beyond_the_noise() {
        // One stall each (5 ms, 10 ms): +100 % but within the noise.
        let a = with_windows(5_000_000, windows(30, 1.0, 5_000_000));
        let b = with_windows(10_000_000, windows(30, 1.0, 10_000_000));
        let c = compare(&a, &b, "max").unwrap();
        let g = c.gate(10.0);
        assert!(g.passed, "{}", g.message);
        assert!(
            g.message.contains("+100.0%")
                && g.message
                    .contains("the gate did not fire because the difference is within the noise"),
            "{}",
            g.message
        );
        let text = c.render(&a, &b);
        assert!(
            text.contains("noise of the max from each run's windows"),
            "{text}"
        );
        assert!(text.contains("within the noise (p = "), "{text}");
        // Every window twice as late: beyond the noise, the gate fires.
        let a = with_windows(150_000, windows(30, 1.0, 0));
        let b2 = with_windows(300_000, windows(30, 2.0, 0));
        let c = compare(&a, &b2, "max").unwrap();
        assert!(
            matches!(
                c.overall().noise.as_ref().unwrap().verdict,
                Verdict::Beyond { b_worse: true, .. }
            ),
            "{c:?}"
        );
        let g = c.gate(10.0);
        assert!(
            !g.passed
                && g.message
                    .contains("FAILED (the difference is beyond the noise"),
            "{}",
            g.message
        );
        // Too few windows: gated on the figure, and said.
        let b3 = with_windows(10_000_000, windows(5, 1.0, 10_000_000));
        let g = compare(&a, &b3, "max").unwrap().gate(10.0);
        assert!(!g.passed, "{}", g.message);
        assert!(
            g.message.contains("the noise could not be judged: run B has 5 windows, fewer than 10; gated on the figure alone"),
            "{}",
            g.message
        );
        // A metric the windows do not keep: one line says so.
        let text = compare(&a, &b, "p99.99").unwrap().render(&a, &b);
        assert!(
            text.contains("\nnoise unknown (the windows keep max, min, avg and p99, not p99.99)\n"),
            "{text}"
        );
    }
}
