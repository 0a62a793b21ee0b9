//! CSV exports of a run record for spreadsheets and scripts: the summary
//! (one row per thread and one for all), the histogram (one row per
//! non-empty bucket), or the window series (one row per window). Every
//! column names its unit; empty cells mean "unknown", `>=N` a quantile
//! known only as a lower bound (among an import's overflows). Reads
//! records only.

use crate::histogram::HistogramError;
use crate::record::{LatencyStats, RunRecord, Stated, Unknowable};
use std::fmt::Write;

/// Which table to write (`summary`, `histogram`, `windows`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Table {
    Summary,
    Histogram,
    Windows,
}

impl Table {
    pub fn parse(s: &str) -> Option<Table> {
        Some(match s {
            "summary" => Table::Summary,
            "histogram" => Table::Histogram,
            "windows" => Table::Windows,
            _ => return None,
        })
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// A quantile: its figure, `>=N` when it is only a lower bound (among an
/// import's overflows: no number a script would take for the figure).
fn quantile(s: &LatencyStats, name: &str) -> String {
    match s.quantile(name) {
        Some(Stated::AtLeast(ns)) => format!(">={ns}"),
        v => opt(v.map(Stated::value)),
    }
}

/// An unknown value (an import's placeholder) is an empty cell.
fn stats_cells(run: &RunRecord, s: &LatencyStats) -> String {
    format!(
        "{},{},{},{},{},{},{},{},{},{}",
        opt(run.knows(Unknowable::Count).then_some(s.samples)),
        opt(s.min_ns),
        s.avg_ns.map(|a| format!("{a:.1}")).unwrap_or_default(),
        quantile(s, "p50"),
        quantile(s, "p90"),
        quantile(s, "p99"),
        quantile(s, "p99.9"),
        quantile(s, "p99.99"),
        opt(s.max_ns),
        opt(run
            .knows(Unknowable::MissedPeriods)
            .then_some(s.missed_periods))
    )
}

/// Render `table` of `run`.
pub fn render(run: &RunRecord, table: Table) -> Result<String, HistogramError> {
    let mut out = String::new();
    match table {
        Table::Summary => {
            out.push_str("thread,cpu,priority,interval_ns,samples,min_ns,avg_ns,p50_ns,p90_ns,p99_ns,p99.9_ns,p99.99_ns,max_ns,missed_periods\n");
            for t in &run.threads {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{}",
                    t.index,
                    opt(t.cpu),
                    opt(run.knows(Unknowable::Priority).then_some(t.priority)),
                    opt((t.interval_ns > 0 || run.knows(Unknowable::Interval))
                        .then_some(t.interval_ns)),
                    stats_cells(run, &t.stats)
                );
            }
            let _ = writeln!(out, "all,,,,{}", stats_cells(run, &run.overall));
        }
        Table::Histogram => {
            out.push_str("thread,cpu,lower_ns,upper_ns,count\n");
            for t in &run.threads {
                let h = t.histogram.to_histogram()?;
                for (lo, hi, c) in h.iter_buckets() {
                    let _ = writeln!(out, "{},{},{lo},{hi},{c}", t.index, opt(t.cpu));
                }
            }
        }
        Table::Windows => {
            out.push_str(
                "thread,cpu,start_offset_ns,window_ns,count,min_ns,avg_ns,max_ns,p99_ns,missed\n",
            );
            for t in &run.threads {
                let w = &t.windows;
                for i in 0..w.len() {
                    let _ = writeln!(
                        out,
                        "{},{},{},{},{},{},{},{},{},{}",
                        t.index,
                        opt(t.cpu),
                        i as u64 * w.window_ns,
                        w.window_ns,
                        w.count[i],
                        w.min_ns[i],
                        w.avg_ns[i],
                        w.max_ns[i],
                        w.p99_ns[i],
                        w.missed[i]
                    );
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{WindowPoint, synthetic};

    #[test]
    fn tables_have_units_and_one_row_per_item() {
        let mut run = synthetic(&[vec![1000, 2000, 2000], vec![5000]]);
        run.threads[0].windows.push(WindowPoint {
            count: 3,
            min_ns: 1000,
            avg_ns: 1666,
            max_ns: 2000,
            p99_ns: 2000,
            missed: 0,
        });
        run.threads[0].windows.push(WindowPoint::default());
        let s = render(&run, Table::Summary).unwrap();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].contains("max_ns"));
        assert!(lines[3].starts_with("all,,,,4,1000,"));
        let h = render(&run, Table::Histogram).unwrap();
        assert_eq!(h.lines().count(), 1 + 3);
        assert!(h.contains("\n0,0,2000,2001,2\n"), "{h}");
        let w = render(&run, Table::Windows).unwrap();
        assert_eq!(
            w.lines().nth(2).unwrap(),
            "0,0,1000000000,1000000000,0,0,0,0,0,0"
        );
    }
}
