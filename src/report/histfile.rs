//! cyclictest's histogram text format (`-h N`, `--histfile`), so plot
//! scripts written for cyclictest keep working: one row per microsecond
//! `000012 000345\t000001` (bucket, then a count per thread, `-H` adds an
//! all-threads column), then the `# Total:` … `# Histogram Overflows:` and
//! `# Histogram Overflow at cycle number:` footer.
//!
//! Values come from the lossless log-linear histogram: below 512 µs every
//! row is exact; above, each log-linear bucket (at most 0.2 % wide) goes
//! to the row of its midpoint. Latencies are truncated to whole µs as
//! cyclictest does.

use crate::histogram::{Histogram, HistogramError, bucket_index, bucket_value};
use crate::record::RunRecord;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Most rows a histogram may have (cyclictest's -h N).
pub const MAX_ROWS: usize = 10_000_000;
/// Most counts a histogram may print (rows × columns): about 7 bytes of
/// text each, so this bounds the text at some 700 MB.
pub const MAX_CELLS: usize = 100_000_000;

/// Why a run's cyclictest histogram cannot be written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HistfileError {
    #[error("histogram rows must be between 1 and {MAX_ROWS} (got {0})")]
    Rows(usize),
    #[error(
        "a histogram of {rows} rows by {columns} columns holds {cells} counts, above the limit of {MAX_CELLS}: use fewer rows"
    )]
    Cells {
        rows: usize,
        columns: usize,
        cells: usize,
    },
    /// A thread's histogram that cannot be read.
    #[error(transparent)]
    Histogram(#[from] HistogramError),
}

/// Why a histogram of that size is refused, if it is.
pub fn check_size(rows: usize, columns: usize) -> Result<(), HistfileError> {
    if rows == 0 || rows > MAX_ROWS {
        return Err(HistfileError::Rows(rows));
    }
    let cells = rows.saturating_mul(columns.max(1));
    if cells > MAX_CELLS {
        return Err(HistfileError::Cells {
            rows,
            columns,
            cells,
        });
    }
    Ok(())
}

/// Render `run` as a cyclictest histogram of `buckets` rows of 1 µs.
/// `all_column` adds cyclictest's `-H` summary column. Sizes beyond
/// [`check_size`] are refused; memory is that of the non-empty rows plus
/// the text.
pub fn render(run: &RunRecord, buckets: usize, all_column: bool) -> Result<String, HistfileError> {
    let n = run.threads.len();
    let all = all_column && n > 1;
    check_size(buckets, n + usize::from(all))?;
    let counts = Counts::of(run, buckets)?;
    let mut out = String::with_capacity(buckets.saturating_mul(8 + 7 * n));
    out.push_str("# Histogram\n");
    counts.write_rows(&mut out, buckets, all);
    counts.write_totals(&mut out, run, all);
    counts.write_overflow_cycles(&mut out, run, buckets);
    out.push('\n');
    Ok(out)
}

/// A run's counts per 1 µs row and thread: only rows that hold
/// something are kept (the others print zeros), with each thread's
/// total in range and above the last row.
struct Counts {
    threads: usize,
    rows: BTreeMap<usize, Vec<u64>>,
    in_range: Vec<u64>,
    overflows: Vec<u64>,
}

impl Counts {
    fn of(run: &RunRecord, buckets: usize) -> Result<Counts, HistogramError> {
        let n = run.threads.len();
        let mut c = Counts {
            threads: n,
            rows: BTreeMap::new(),
            in_range: vec![0u64; n],
            overflows: vec![0u64; n],
        };
        for (j, t) in run.threads.iter().enumerate() {
            let h: Histogram = t.histogram.to_histogram()?;
            for (lower, count) in h.iter_nonzero() {
                let v = bucket_value(bucket_index(lower, h.sub_bits()), h.sub_bits());
                let us = (v / 1000) as usize;
                if us < buckets {
                    c.rows.entry(us).or_insert_with(|| vec![0u64; n])[j] += count;
                    c.in_range[j] += count;
                } else {
                    c.overflows[j] += count;
                }
            }
        }
        Ok(c)
    }

    /// `000012 000003\t000000`: one line per row, a column per thread
    /// (and the sum over threads with `all`).
    fn write_rows(&self, out: &mut String, buckets: usize, all: bool) {
        let zeros = vec![0u64; self.threads];
        for i in 0..buckets {
            let row = self.rows.get(&i).unwrap_or(&zeros);
            let _ = write!(out, "{i:06} ");
            for (j, c) in row.iter().enumerate() {
                let _ = write!(out, "{c:06}");
                if j + 1 < self.threads {
                    out.push('\t');
                }
            }
            if all {
                let _ = write!(out, "\t{:06}", row.iter().sum::<u64>());
            }
            out.push('\n');
        }
    }

    /// The `# Total:` to `# Histogram Overflows:` lines.
    fn write_totals(&self, out: &mut String, run: &RunRecord, all: bool) {
        let us = |v: Option<u64>| v.unwrap_or(0) / 1000;
        let mins: Vec<u64> = run.threads.iter().map(|t| us(t.stats.min_ns)).collect();
        let avgs: Vec<u64> = run
            .threads
            .iter()
            .map(|t| t.stats.avg_ns.map(|a| (a / 1000.0) as u64).unwrap_or(0))
            .collect();
        let maxs: Vec<u64> = run.threads.iter().map(|t| us(t.stats.max_ns)).collect();
        let in_range_all = all.then(|| self.in_range.iter().sum());
        total_line(out, "# Total:", &self.in_range, 9, in_range_all);
        total_line(out, "# Min Latencies:", &mins, 5, None);
        total_line(out, "# Avg Latencies:", &avgs, 5, None);
        let max_all = all.then(|| maxs.iter().copied().max().unwrap_or(0));
        total_line(out, "# Max Latencies:", &maxs, 5, max_all);
        let overflows_all = all.then(|| self.overflows.iter().sum());
        total_line(
            out,
            "# Histogram Overflows:",
            &self.overflows,
            5,
            overflows_all,
        );
    }

    /// The cycles of the kept outliers above the last row, per thread.
    fn write_overflow_cycles(&self, out: &mut String, run: &RunRecord, buckets: usize) {
        out.push_str("# Histogram Overflow at cycle number:\n");
        for (j, t) in run.threads.iter().enumerate() {
            let _ = write!(out, "# Thread {j}:");
            // The kept outliers above the last row, in cycle order; the rest
            // are counted, as cyclictest does past its outlier buffer.
            let limit_ns = buckets as u64 * 1000;
            let mut cycles: Vec<u64> = t
                .outliers
                .iter()
                .filter(|o| o.latency_ns >= limit_ns)
                .map(|o| o.at.cycle)
                .collect();
            cycles.sort_unstable();
            for c in &cycles {
                let _ = write!(out, " {c:05}");
            }
            let listed = cycles.len() as u64;
            if self.overflows[j] > listed {
                let _ = write!(out, " # {:05} others", self.overflows[j] - listed);
            }
            out.push('\n');
        }
    }
}

/// `name` then each value zero-padded to `width`, and `extra` (the
/// summary column) if any.
fn total_line(out: &mut String, name: &str, vals: &[u64], width: usize, extra: Option<u64>) {
    out.push_str(name);
    for v in vals {
        let _ = write!(out, " {v:0width$}");
    }
    if let Some(e) = extra {
        let _ = write!(out, " {e:0width$}");
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::synthetic;

    #[test]
    fn sizes_beyond_the_limits_are_refused() {
        let run = synthetic(&[vec![4_200], vec![5_100]]);
        let e = render(&run, 0, false).unwrap_err().to_string();
        assert!(e.contains("between 1 and 10000000 (got 0)"), "{e}");
        let e = render(&run, MAX_ROWS + 1, false).unwrap_err().to_string();
        assert!(e.contains("got 10000001"), "{e}");
        let e = check_size(MAX_ROWS, 11).unwrap_err().to_string();
        assert!(
            e.contains("110000000 counts") && e.contains("100000000"),
            "{e}"
        );
        assert!(check_size(MAX_ROWS, 10).is_ok());
    }

    #[test]
    fn cyclictest_layout_counts_and_overflows() {
        let run = synthetic(&[vec![4_200, 4_900, 12_300, 7_000_000], vec![5_100, 9_999]]);
        let text = render(&run, 10, true).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "# Histogram");
        assert_eq!(lines[1], "000000 000000\t000000\t000000");
        assert_eq!(lines[5], "000004 000002\t000000\t000002");
        assert_eq!(lines[6], "000005 000000\t000001\t000001");
        assert_eq!(lines[10], "000009 000000\t000001\t000001");
        assert_eq!(lines[11], "# Total: 000000002 000000002 000000004");
        assert_eq!(lines[12], "# Min Latencies: 00004 00005");
        assert_eq!(lines[14], "# Max Latencies: 07000 00009 07000");
        assert_eq!(lines[15], "# Histogram Overflows: 00002 00000 00002");
        assert_eq!(lines[16], "# Histogram Overflow at cycle number:");
        assert_eq!(lines[17], "# Thread 0: 00042 # 00001 others");
        assert_eq!(lines[18], "# Thread 1:");
    }
}
