//! Two runs side by side on one latency metric: per CPU and overall, with
//! the ratio B/A, the comparability warnings of [`super::fairness`], and
//! the regression gate (`--fail-if-worse PCT`). A is the baseline, B the
//! candidate; a higher latency is worse.

use super::fairness;
use super::plot::data::thread_name;
use super::{NamedRun, known};
use crate::record::{LatencyStats, METRICS, RunRecord};
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

/// Compare `b` against `a` on `metric`.
pub fn compare(a: &NamedRun, b: &NamedRun, metric: &str) -> Result<Comparison, CompareError> {
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
            let find = |r: &RunRecord| {
                r.threads
                    .iter()
                    .find(|t| t.cpu == Some(cpu))
                    .and_then(|t| metric_of(&t.stats, metric))
            };
            rows.push(Row {
                label: format!("CPU {cpu}"),
                a_ns: find(ra),
                b_ns: find(rb),
            });
        }
    } else {
        let n = ra.threads.len().max(rb.threads.len());
        for i in 0..n {
            let get = |r: &RunRecord| r.threads.get(i).and_then(|t| metric_of(&t.stats, metric));
            let label = ra
                .threads
                .get(i)
                .or(rb.threads.get(i))
                .map(|t| {
                    let owner = if ra.threads.get(i).is_some() { ra } else { rb };
                    format!("T{i} {}", thread_name(owner, t))
                })
                .unwrap_or_else(|| format!("T{i}"));
            rows.push(Row {
                label,
                a_ns: get(ra),
                b_ns: get(rb),
            });
        }
    }
    let all = Row {
        label: "all".into(),
        a_ns: metric_of(&ra.overall, metric),
        b_ns: metric_of(&rb.overall, metric),
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
    let warnings = fairness::warning("A", ra, "B", rb).into_iter().collect();
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

    /// Fails when B's overall metric is more than `pct` % above A's.
    pub fn gate(&self, pct: f64) -> Gate {
        let all = self.overall();
        let (a, b) = (all.a_ns.unwrap_or(0.0), all.b_ns.unwrap_or(0.0));
        let limit = a * (1.0 + pct / 100.0);
        let passed = b <= limit;
        let change = all
            .change_pct()
            .map(|c| format!("{c:+.1}%"))
            .unwrap_or_else(|| "from 0".into());
        let message = format!(
            "regression gate: B's overall {} is {:.1}us, A's {:.1}us ({change}; allowed up to +{pct}%, {:.1}us): {}",
            self.metric,
            b / 1e3,
            a / 1e3,
            limit / 1e3,
            if passed { "passed" } else { "FAILED" }
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
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        out
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
}
