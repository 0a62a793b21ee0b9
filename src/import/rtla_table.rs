//! What `rtla timerlat hist` and `rtla osnoise hist` print, read into
//! columns (shared by both readers): the `# RTLA … histogram` header
//! (unit, duration), the `Index` line naming one column per CPU and
//! context (`IRQ-000`, `Thr-000`, `Usr-000`, `CPU-000`), one row per
//! non-empty bucket (`%-6d` index = bucket × bucket size, `%9d` counts),
//! then `over:`, `count:`, `min:`, `avg:`, `max:` (a `-` where a column
//! counted nothing). The `ALL:` block that newer rtla prints after them
//! sums the columns and is not read. Written from rtla's
//! `timerlat_hist.c` / `osnoise_hist.c`.
//!
//! The bucket size (`-b`) is not printed: it is the largest step that
//! divides every index, a warning says so. Output printed with
//! `--no-index` or `--no-header` is refused (its rows and columns cannot
//! be named). Pure: no files, no system.

use super::build;
use super::{ImportError, excerpt, numbered_lines};
use crate::histogram::Histogram;

/// One column of the histogram: its name and CPU, its rows and summary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Column {
    /// `IRQ`, `Thr`, `Usr` or `CPU`.
    pub kind: String,
    pub cpu: u32,
    /// `(index, count)` of every printed row with a count.
    pub rows: Vec<(u64, u64)>,
    pub over: Option<u64>,
    pub count: Option<u64>,
    pub min: Option<u64>,
    pub avg: Option<u64>,
    pub max: Option<u64>,
}

/// The whole table.
#[derive(Clone, Debug, Default)]
pub struct Table {
    /// ns per printed unit: 1000 (us), 1 (`--nano`).
    pub unit_ns: u64,
    pub duration_ns: Option<u64>,
    pub columns: Vec<Column>,
    /// Step between indices (the `-b` bucket size), and whether it had
    /// to be assumed (a single row).
    pub bucket: u64,
    pub bucket_assumed: bool,
    /// Line of the `count:` row, for messages.
    pub count_line: usize,
}

/// Where each further rtla output begins in a file holding several (a
/// pasted log of two sessions), after the first: a histogram's `# RTLA
/// ... histogram` line, or a top screen whose elapsed time falls back
/// (a top that refreshes repeats its screen with a growing time: one run,
/// whose last screen counts).
pub fn run_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut opened = false;
    let mut last_elapsed: Option<u64> = None;
    let mut title: Option<usize> = None;
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.starts_with("# RTLA ") && l.ends_with("histogram") {
            if opened {
                starts.push(i);
            }
            opened = true;
        } else if l.contains("Timer Latency") && !l.contains('|')
            || l.contains("Operating System Noise")
        {
            title = Some(i);
        } else if let Some(t) = title.take() {
            let before_bar = l.split('|').next().unwrap_or("");
            let elapsed = duration_ns(before_bar.trim_start_matches("duration:"));
            if opened && elapsed.is_some() && elapsed <= last_elapsed {
                starts.push(t);
            }
            opened = true;
            last_elapsed = elapsed.or(last_elapsed);
        }
    }
    starts
}

/// `  0 00:01:00` (days, then hh:mm:ss, as rtla's get_duration prints)
/// in ns.
pub fn duration_ns(s: &str) -> Option<u64> {
    let mut it = s.split_whitespace();
    let days: u64 = it.next()?.parse().ok()?;
    let hms: Vec<u64> = it
        .next()?
        .split(':')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    if hms.len() != 3 || it.next().is_some() {
        return None;
    }
    let s = days
        .checked_mul(86_400)?
        .checked_add(hms[0].checked_mul(3600)?)?
        .checked_add(hms[1].checked_mul(60)?)?
        .checked_add(hms[2])?;
    s.checked_mul(1_000_000_000)
}

fn number(no: usize, line: &str, w: &str) -> Result<u64, ImportError> {
    w.parse::<u64>().map_err(|_| {
        ImportError::at(
            no,
            format!("expected a count, found '{w}' in '{}'", excerpt(line)),
        )
    })
}

/// `IRQ-000` → (`IRQ`, 0).
fn column_name(w: &str) -> Option<(String, u32)> {
    let (kind, cpu) = w.split_once('-')?;
    if !["IRQ", "Thr", "Usr", "CPU"].contains(&kind) {
        return None;
    }
    Some((kind.to_string(), cpu.parse().ok()?))
}

/// Read the table of `tool`'s hist output (`timerlat` or `osnoise`).
pub fn read(text: &str, tool: &str) -> Result<Table, ImportError> {
    let title = format!("# RTLA {tool} histogram");
    let mut t = Table {
        unit_ns: 1000,
        ..Default::default()
    };
    let mut seen_title = false;
    let mut in_table = false;
    for (no, raw) in numbered_lines(text) {
        let line = raw.trim_end();
        let l = line.trim();
        if l.starts_with(&title) {
            seen_title = true;
        } else if let Some(u) = l.strip_prefix("# Time unit is ") {
            t.unit_ns = if u.starts_with("nanoseconds") {
                1
            } else {
                1000
            };
        } else if let Some(d) = l.strip_prefix("# Duration:") {
            t.duration_ns = duration_ns(d);
        } else if l.starts_with("Index") {
            t.columns = header(no, l)?;
            in_table = true;
        } else if l.starts_with("ALL:") {
            break;
        } else if in_table && !l.is_empty() {
            if !t.row(no, l)? {
                break;
            }
        }
    }
    if !seen_title {
        return Err(ImportError::whole(format!(
            "expected '{title}' (the start of rtla {tool} hist's output), found none"
        )));
    }
    if !in_table {
        return Err(ImportError::whole(
            "expected the 'Index' line naming the columns, found none (output printed with --no-index or --no-header cannot be read)",
        ));
    }
    t.finish()?;
    Ok(t)
}

/// The `Index` line: a column per CPU and context.
fn header(no: usize, l: &str) -> Result<Vec<Column>, ImportError> {
    l.split_whitespace()
        .skip(1)
        .map(|w| {
            let (kind, cpu) = column_name(w).ok_or_else(|| {
                ImportError::at(
                    no,
                    format!(
                        "expected column names such as IRQ-000, Thr-000, Usr-000 or CPU-000, found '{w}'"
                    ),
                )
            })?;
            Ok(Column {
                kind,
                cpu,
                ..Default::default()
            })
        })
        .collect()
}

impl Table {
    /// One line of the table: a bucket row or a summary row. `false`
    /// once past the table (a line that is neither).
    fn row(&mut self, no: usize, l: &str) -> Result<bool, ImportError> {
        let mut words = l.split_whitespace();
        let first = words.next().unwrap_or("");
        let rest: Vec<&str> = words.collect();
        let n = self.columns.len();
        let label = first.strip_suffix(':');
        if label.is_none() && first.parse::<u64>().is_err() {
            return Ok(false);
        }
        if rest.len() != n {
            return Err(ImportError::at(
                no,
                format!(
                    "expected {n} value(s) after '{first}' (one per column of the Index line), found {}",
                    rest.len()
                ),
            ));
        }
        let value = |w: &str| -> Result<Option<u64>, ImportError> {
            if w == "-" {
                Ok(None)
            } else {
                number(no, l, w).map(Some)
            }
        };
        for (c, w) in self.columns.iter_mut().zip(&rest) {
            let v = value(w)?;
            match label {
                None => {
                    let count = v.ok_or_else(|| {
                        ImportError::at(
                            no,
                            format!("expected a count, found '-' in '{}'", excerpt(l)),
                        )
                    })?;
                    if count > 0 {
                        c.rows.push((number(no, l, first)?, count));
                    }
                }
                Some("over") => c.over = v,
                Some("count") => c.count = v,
                Some("min") => c.min = v,
                Some("avg") => c.avg = v,
                Some("max") => c.max = v,
                Some(other) => {
                    return Err(ImportError::at(
                        no,
                        format!("expected over:, count:, min:, avg: or max:, found '{other}:'"),
                    ));
                }
            }
        }
        if label == Some("count") {
            self.count_line = no;
        }
        Ok(true)
    }

    /// The bucket size, and every column's rows checked against its count.
    fn finish(&mut self) -> Result<(), ImportError> {
        let g = self
            .columns
            .iter()
            .flat_map(|c| c.rows.iter().map(|r| r.0))
            .fold(0, gcd);
        self.bucket_assumed = g == 0;
        self.bucket = g.max(1);
        for c in &self.columns {
            let in_rows = c
                .rows
                .iter()
                .try_fold(c.over.unwrap_or(0), |a, r| a.checked_add(r.1))
                .ok_or_else(|| {
                    ImportError::at(
                        self.count_line,
                        format!(
                            "{}-{:03}'s rows and over add up past {}: the file is damaged or was edited",
                            c.kind,
                            c.cpu,
                            u64::MAX
                        ),
                    )
                })?;
            self.extremes_fit(c)?;
            if let Some(count) = c.count
                && count != in_rows
            {
                return Err(ImportError::at(
                    self.count_line,
                    format!(
                        "expected {}-{:03}'s count to be the sum of its rows and over: ({in_rows}), found {count}",
                        c.kind, c.cpu
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A column's min and max lie where its rows say.
    fn extremes_fit(&self, c: &Column) -> Result<(), ImportError> {
        let (Some(first), Some(last)) = (c.rows.first(), c.rows.last()) else {
            return Ok(());
        };
        let name = format!("{}-{:03}", c.kind, c.cpu);
        if let Some(min) = c.min
            && min < first.0
        {
            return Err(ImportError::at(
                self.count_line + 1,
                format!(
                    "expected {name}'s min to be at least {} (its lowest row), found {min}",
                    first.0
                ),
            ));
        }
        if let Some(max) = c.max {
            let beyond = last.0.saturating_add(self.bucket);
            let over = c.over.unwrap_or(0) > 0;
            if max < last.0 || (!over && max >= beyond) {
                return Err(ImportError::at(
                    self.count_line + 3,
                    format!(
                        "expected {name}'s max to lie in its highest row ({}) or, with over: samples, beyond it; found {max}",
                        last.0
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The histogram of column `c` (samples at their bucket's middle;
    /// overflows at the max, and the others at the first value beyond the
    /// rows: a lower bound), with its count, min, avg, max in ns.
    pub fn histogram(&self, c: &Column) -> Result<(Histogram, Stats), ImportError> {
        let width = self.bucket.saturating_mul(self.unit_ns);
        let mut h = Histogram::latency();
        for (idx, n) in &c.rows {
            build::count_into(&mut h, build::bucket_ns(idx / self.bucket, width), *n)?;
        }
        let over = c.over.unwrap_or(0);
        let max_ns = c.max.map(|m| m.saturating_mul(self.unit_ns));
        let beyond = c
            .rows
            .last()
            .map_or(0, |r| r.0.saturating_add(self.bucket))
            .saturating_mul(self.unit_ns);
        if over > 0 {
            let top = max_ns.unwrap_or(beyond).max(beyond);
            build::count_into(&mut h, top, 1)?;
            build::count_into(&mut h, beyond, over - 1)?;
        }
        let stats = Stats {
            count: h.total(),
            min_ns: c.min.map(|v| v.saturating_mul(self.unit_ns)),
            avg_ns: c.avg.map(|v| v as f64 * self.unit_ns as f64),
            max_ns,
            overflows: over,
            overflow_from_ns: beyond,
        };
        Ok((h, stats))
    }

    /// Warnings every reader of this table gives.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.bucket_assumed {
            w.push(
                "the bucket size (-b) is not printed and one row cannot tell it: 1 is assumed"
                    .into(),
            );
        } else if self.bucket > 1 {
            w.push(format!(
                "the bucket size (-b) is not printed: {} (the step between the printed indices) is assumed",
                self.bucket
            ));
        }
        if self.columns.iter().any(|c| c.over.unwrap_or(0) > 1) {
            w.push(
                "samples beyond the last bucket (over:) are recorded at the first value beyond it, the largest at the max: quantiles among them are lower bounds"
                    .into(),
            );
        }
        if self.unit_ns == 1000 {
            w.push("rtla prints whole microseconds (truncated): a sample is recorded at the middle of its bucket".into());
        }
        w
    }
}

/// A column's figures in ns.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    pub count: u64,
    pub min_ns: Option<u64>,
    pub avg_ns: Option<f64>,
    pub max_ns: Option<u64>,
    pub overflows: u64,
    /// The first value beyond the rows: every overflow is at least this.
    pub overflow_from_ns: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OSNOISE: &str = "# RTLA osnoise histogram
# Time unit is microseconds (us)
# Duration:   0 00:01:00
Index   CPU-000   CPU-001
0           430       434
10           88        88
30            6         0
over:         0         1
count:      524       523
min:          0         0
avg:          2         3
max:         37       412
";

    /// Rows adding past 2^64 (found by the timerlat property test, which
    /// panicked summing them): refused at the count line.
    #[test]
    fn rows_adding_past_2_64_are_refused() {
        let text = OSNOISE.replace("10           88", "10           18446744073709551615");
        assert_ne!(text, OSNOISE);
        let e = read(&text, "osnoise").unwrap_err();
        assert!(e.message.contains("add up past"), "{e}");
        assert_eq!(e.line, Some(9), "{e}");
    }

    #[test]
    fn columns_rows_summary_and_bucket_size() {
        let t = read(OSNOISE, "osnoise").unwrap();
        assert_eq!(t.unit_ns, 1000);
        assert_eq!(t.duration_ns, Some(60_000_000_000));
        assert_eq!(t.bucket, 10);
        assert!(!t.bucket_assumed);
        assert_eq!(t.columns.len(), 2);
        let c1 = &t.columns[1];
        assert_eq!((c1.kind.as_str(), c1.cpu), ("CPU", 1));
        assert_eq!(c1.rows, vec![(0, 434), (10, 88)]);
        assert_eq!((c1.over, c1.count, c1.max), (Some(1), Some(523), Some(412)));
        let (h, s) = t.histogram(c1).unwrap();
        assert_eq!(h.total(), 523);
        assert_eq!(s.max_ns, Some(412_000));
        assert_eq!(s.avg_ns, Some(3000.0));
        // Bucket 10 (10–19.999 us) is recorded at its middle, 15 us; the
        // overflow at the max.
        assert_eq!(h.count_above(411_000), 1);
        assert_eq!(h.count_above(16_000), 1);
        assert!(t.warnings().iter().any(|w| w.contains("10 (the step")));
    }

    #[test]
    fn indented_pastes_are_read() {
        // As `import` reads them: de-indented first, for every reader.
        let pasted: String = OSNOISE.lines().map(|l| format!("    {l}\n")).collect();
        let t = read(&crate::import::text::dedent(&pasted), "osnoise").unwrap();
        assert_eq!(t.columns[0].count, Some(524));
    }

    #[test]
    fn a_count_that_is_not_the_sum_of_the_rows_is_refused() {
        let bad = OSNOISE.replace("count:      524", "count:      525");
        let e = read(&bad, "osnoise").unwrap_err();
        assert_eq!(e.line, Some(9));
        assert!(e.message.contains("CPU-000's count"), "{e}");
    }

    #[test]
    fn rows_of_the_wrong_width_and_missing_parts_are_refused() {
        let bad = OSNOISE.replace("10           88        88", "10           88");
        assert_eq!(read(&bad, "osnoise").unwrap_err().line, Some(6));
        let e = read("# RTLA osnoise histogram\n0 1\n", "osnoise").unwrap_err();
        assert!(e.message.contains("Index"), "{e}");
        assert!(read(OSNOISE, "timerlat").is_err());
    }

    #[test]
    fn durations_as_rtla_prints_them() {
        assert_eq!(
            duration_ns("  1 02:03:04"),
            Some((86_400 + 7384) * 1_000_000_000)
        );
        assert_eq!(duration_ns("00:01"), None);
    }
}
