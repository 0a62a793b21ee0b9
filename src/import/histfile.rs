//! cyclictest's histogram output (`-h N`, `--histfile FILE`): one row per
//! microsecond (`000012 000345\t000001`: bucket, then one count per
//! thread, `-H` adds an all-threads column), then a footer of `#` lines.
//!
//! Both layouts are read: before rt-tests 2.7 every row is printed, zero
//! rows included, and the footer starts with `# Total:`; from 2.7 on only
//! non-zero rows are printed and there is no `# Total:` line. Samples
//! beyond the last row are counted in `# Histogram Overflows:` without
//! their values: the largest is the thread's max, the others are recorded
//! at the first value beyond the rows (a lower bound), and a warning says
//! so. Lines the live display left before `# Histogram` (`T: 0 (…) P:…`)
//! give priorities, intervals and thread ids when present.

use super::build::{self, RunIn, ThreadIn};
use super::cyclictest_summary::{self, TLine};
use super::{ImportError, Importer, Source, excerpt, numbered_lines};
use crate::histogram::Histogram;
use crate::record::{Overflow, RunRecord};

pub static IMPORTER: Importer = Importer {
    name: "cyclictest-histfile",
    description: "cyclictest -h/--histfile histogram, with or without `# Total:` and zero rows (rt-tests before and after 2.7)",
    detect,
    parse,
};

fn detect(text: &str) -> u8 {
    let mut histogram = false;
    let mut footer = false;
    for l in text.lines().take(20_000_000) {
        let l = l.trim_end();
        if l == "# Histogram" {
            histogram = true;
        } else if l.starts_with("# Max Latencies:") || l.starts_with("# Histogram Overflows:") {
            footer = true;
        }
        if histogram && footer {
            return 95;
        }
    }
    if histogram { 60 } else { 0 }
}

/// Numbers after a `# Name:` label.
fn numbers(line_no: usize, rest: &str, what: &str) -> Result<Vec<u64>, ImportError> {
    rest.split_whitespace()
        .map(|w| {
            w.parse::<u64>().map_err(|_| {
                ImportError::at(
                    line_no,
                    format!("expected numbers after '{what}', found '{w}'"),
                )
            })
        })
        .collect()
}

#[derive(Default)]
struct Footer {
    total: Option<(usize, Vec<u64>)>,
    min: Option<(usize, Vec<u64>)>,
    avg: Option<(usize, Vec<u64>)>,
    max: Option<(usize, Vec<u64>)>,
    overflows: Option<(usize, Vec<u64>)>,
    tids: Option<Vec<u64>>,
}

/// One histogram row: its line, bucket (us) and counts (per thread,
/// maybe an all-threads column).
type Row = (usize, u64, Vec<u64>);

/// The file read line by line: the header the live display left, the
/// rows, and the footer.
struct Reader {
    run: RunIn,
    t_lines: Vec<TLine>,
    /// The line of `# Histogram`, once seen.
    hist_line: Option<usize>,
    rows: Vec<Row>,
    f: Footer,
    after_footer: bool,
}

fn parse(src: &Source) -> Result<RunRecord, ImportError> {
    let mut r = Reader {
        run: RunIn::new(IMPORTER.name, "cyclictest", 1000),
        t_lines: Vec::new(),
        hist_line: None,
        rows: Vec::new(),
        f: Footer::default(),
        after_footer: false,
    };
    for (no, line) in numbered_lines(src.text) {
        let l = cyclictest_summary::strip_escapes(line);
        let l = l.trim();
        if !l.is_empty() {
            r.line(no, l)?;
        }
    }
    if r.hist_line.is_none() {
        return Err(ImportError::whole(
            "expected a '# Histogram' line (cyclictest -h output), found none",
        ));
    }
    let cols = r.f.columns()?;
    let per_thread = per_thread(&r.rows, cols.n)?;
    r.f.check_totals(&per_thread, cols.n)?;
    // Rows printed: all of them (before 2.7: contiguous from 0 with a
    // total) tells the histogram size; otherwise only a lower bound.
    let contiguous = r
        .rows
        .iter()
        .enumerate()
        .all(|(i, (_, b, _))| *b == i as u64);
    let full_layout = r.f.total.is_some() && contiguous && !r.rows.is_empty();
    let limit_us = r.rows.last().map(|(_, b, _)| b + 1).unwrap_or(0);
    let mut overflow_note = false;
    for (j, rows) in per_thread.iter().enumerate() {
        let mut t = cols.thread(j, rows, limit_us)?;
        overflow_note |= cols.overflows[j] > 1;
        if let Some(tl) = r.t_lines.iter().rev().find(|tl| tl.thread == j as u32) {
            t.priority = tl.priority;
            t.interval_ns = tl.interval_us.saturating_mul(1000);
            t.tid = tl.tid;
        } else if let Some(tids) = &r.f.tids {
            t.tid = tids.get(j).map(|v| *v as u32);
        }
        r.run.threads.push(t);
    }
    let mut run = r.run;
    if overflow_note {
        run.warnings.push(format!(
            "samples above the histogram's {limit_us} us{} are counted without their values: the largest is each thread's max, the others are recorded at {limit_us} us, so quantiles above it are lower bounds",
            if full_layout { "" } else { " (or more)" }
        ));
    }
    if let Some(first) = run.threads.first()
        && first.interval_ns > 0
    {
        run.options.interval_ns = first.interval_ns;
        run.options.priority = first.priority;
        run.priority_known = true;
    }
    build::finish(src, run)
}

impl Reader {
    /// One non-empty line, trimmed.
    fn line(&mut self, no: usize, l: &str) -> Result<(), ImportError> {
        let Some(hist_line) = self.hist_line else {
            return self.header(no, l);
        };
        if l.as_bytes()[0].is_ascii_digit() {
            return self.row(no, l);
        }
        let Some(rest) = l.strip_prefix('#') else {
            if self.after_footer || self.f.min.is_some() {
                // Output that follows the histogram (e.g. a final status
                // block): not ours to read.
                self.after_footer = true;
                return Ok(());
            }
            return Err(ImportError::at(
                no,
                format!(
                    "expected a histogram row (bucket in us, then one count per thread) or a '# ...' line, found '{}'",
                    excerpt(l)
                ),
            ));
        };
        self.f.line(no, rest.trim_start(), hist_line)
    }

    /// A line before `# Histogram`: the live display's, or settings.
    fn header(&mut self, no: usize, l: &str) -> Result<(), ImportError> {
        if l == "# Histogram" {
            self.hist_line = Some(no);
        } else if let Some(us) = l
            .strip_prefix("# /dev/cpu_dma_latency set to ")
            .and_then(|r| r.strip_suffix("us"))
        {
            self.run.options.dma_latency_us = us.trim().parse().ok();
        } else if let Some(t) = cyclictest_summary::parse_t_line(l, no)? {
            self.t_lines.push(t);
        } else if let Some(p) = l.strip_prefix("policy: ") {
            self.run.options.policy = p.split(':').next().unwrap_or("").trim().into();
        }
        Ok(())
    }

    /// A histogram row: a bucket above the previous, then its counts.
    fn row(&mut self, no: usize, l: &str) -> Result<(), ImportError> {
        if self.f.min.is_some() || self.f.total.is_some() || self.after_footer {
            return Err(ImportError::at(
                no,
                format!(
                    "expected footer lines ('# ...'), found a histogram row '{}'",
                    excerpt(l)
                ),
            ));
        }
        let mut it = l.split_whitespace();
        let bucket: u64 = it.next().and_then(|w| w.parse().ok()).ok_or_else(|| {
            ImportError::at(
                no,
                format!("expected a bucket number, found '{}'", excerpt(l)),
            )
        })?;
        let counts = numbers(
            no,
            &l[l.find(char::is_whitespace).unwrap_or(l.len())..],
            "the bucket",
        )?;
        if counts.is_empty() {
            return Err(ImportError::at(
                no,
                format!("expected counts after bucket {bucket}, found none"),
            ));
        }
        if let Some((_, prev, _)) = self.rows.last()
            && bucket <= *prev
        {
            return Err(ImportError::at(
                no,
                format!("expected buckets in increasing order, found {bucket} after {prev}"),
            ));
        }
        self.rows.push((no, bucket, counts));
        Ok(())
    }
}

/// The footer's per-thread columns, checked against each other.
struct Columns {
    n: usize,
    min_line: usize,
    max_line: usize,
    mins: Vec<u64>,
    avgs: Vec<u64>,
    maxs: Vec<u64>,
    overflows: Vec<u64>,
}

impl Footer {
    /// A `# ...` line after `# Histogram` (its text after the `#`).
    fn line(&mut self, no: usize, rest: &str, hist_line: usize) -> Result<(), ImportError> {
        let field = |name: &str| rest.strip_prefix(name);
        if let Some(v) = field("Total:") {
            self.total = Some((no, numbers(no, v, "# Total:")?));
        } else if let Some(v) = field("Min Latencies:") {
            self.min = Some((no, numbers(no, v, "# Min Latencies:")?));
        } else if let Some(v) = field("Avg Latencies:") {
            self.avg = Some((no, numbers(no, v, "# Avg Latencies:")?));
        } else if let Some(v) = field("Max Latencies:") {
            self.max = Some((no, numbers(no, v, "# Max Latencies:")?));
        } else if let Some(v) = field("Histogram Overflows:") {
            self.overflows = Some((no, numbers(no, v, "# Histogram Overflows:")?));
        } else if let Some(v) = field("Thread Ids:") {
            self.tids = Some(numbers(no, v, "# Thread Ids:")?);
        } else if rest == "Histogram" {
            return Err(ImportError::at(
                no,
                format!(
                    "expected one histogram, found a second '# Histogram' (the first is on line {hist_line})"
                ),
            ));
        }
        // Other comments (overflow cycle numbers, notes) carry nothing
        // the record holds.
        Ok(())
    }

    /// Minimum, average, maximum (and overflows): present, one per
    /// thread (maxima and overflows may add an all-threads value).
    fn columns(&self) -> Result<Columns, ImportError> {
        let need = |v: &Option<(usize, Vec<u64>)>, name: &str| {
            v.clone().ok_or_else(|| {
                ImportError::whole(format!(
                    "expected a '# {name}' line after the histogram (it ends too early), found none"
                ))
            })
        };
        let (min_line, mins) = need(&self.min, "Min Latencies:")?;
        let (avg_line, avgs) = need(&self.avg, "Avg Latencies:")?;
        let (max_line, maxs) = need(&self.max, "Max Latencies:")?;
        let n = mins.len();
        if n == 0 {
            return Err(ImportError::at(
                min_line,
                "expected one minimum per thread, found none",
            ));
        }
        if avgs.len() != n {
            return Err(ImportError::at(
                avg_line,
                format!(
                    "expected {n} averages (one per thread, as on line {min_line}), found {}",
                    avgs.len()
                ),
            ));
        }
        if maxs.len() != n && maxs.len() != n + 1 {
            return Err(ImportError::at(
                max_line,
                format!("expected {n} maxima (one per thread), found {}", maxs.len()),
            ));
        }
        let overflows = match &self.overflows {
            Some((no, v)) => {
                if v.len() != n && v.len() != n + 1 {
                    return Err(ImportError::at(
                        *no,
                        format!(
                            "expected {n} overflow counts (one per thread), found {}",
                            v.len()
                        ),
                    ));
                }
                v[..n].to_vec()
            }
            None => vec![0; n],
        };
        Ok(Columns {
            n,
            min_line,
            max_line,
            mins,
            avgs,
            maxs,
            overflows,
        })
    }

    /// `# Total:`, when present: one per thread, each the sum of its rows.
    fn check_totals(&self, per_thread: &[Vec<(u64, u64)>], n: usize) -> Result<(), ImportError> {
        let Some((no, totals)) = &self.total else {
            return Ok(());
        };
        if totals.len() != n && totals.len() != n + 1 {
            return Err(ImportError::at(
                *no,
                format!(
                    "expected {n} totals (one per thread), found {}",
                    totals.len()
                ),
            ));
        }
        for (j, rows) in per_thread.iter().enumerate() {
            let sum: u64 = rows.iter().map(|(_, c)| c).sum();
            if sum != totals[j] {
                return Err(ImportError::at(
                    *no,
                    format!(
                        "expected thread {j}'s total to be the sum of its rows ({sum}), found {}",
                        totals[j]
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The rows split per thread (non-zero counts only), each row checked
/// for one count per thread and its all-threads column, if any.
fn per_thread(rows: &[Row], n: usize) -> Result<Vec<Vec<(u64, u64)>>, ImportError> {
    let mut per_thread = vec![vec![]; n];
    for (no, bucket, counts) in rows {
        let all_column = counts.len() == n + 1;
        if counts.len() != n && !all_column {
            return Err(ImportError::at(
                *no,
                format!(
                    "expected {n} counts (one per thread) after bucket {bucket}, found {}",
                    counts.len()
                ),
            ));
        }
        if all_column && counts[n] != counts[..n].iter().sum::<u64>() {
            return Err(ImportError::at(
                *no,
                format!(
                    "expected the last column (all threads, -H) to be the sum {}, found {}",
                    counts[..n].iter().sum::<u64>(),
                    counts[n]
                ),
            ));
        }
        for j in 0..n {
            if counts[j] > 0 {
                per_thread[j].push((*bucket, counts[j]));
            }
        }
    }
    Ok(per_thread)
}

impl Columns {
    /// Thread `j` from its `rows` and footer values; overflows go to its
    /// max and to `limit_us` (the first value beyond the rows).
    fn thread(
        &self,
        j: usize,
        rows: &[(u64, u64)],
        limit_us: u64,
    ) -> Result<ThreadIn, ImportError> {
        let (mins, avgs, maxs) = (&self.mins, &self.avgs, &self.maxs);
        let mut h = Histogram::latency();
        for (b, c) in rows {
            build::count_into(&mut h, build::bucket_ns(*b, 1000), *c)?;
        }
        let o = self.overflows[j];
        let samples = h.total().checked_add(o).ok_or_else(|| {
            ImportError::whole(format!(
                "thread {j}: its rows and overflows add up past 2^64 samples: the file is damaged"
            ))
        })?;
        let mut t = ThreadIn::new(0);
        if samples > 0 {
            if let Some((lo, _)) = rows.first()
                && mins[j] > *lo
            {
                return Err(ImportError::at(
                    self.min_line,
                    format!(
                        "expected thread {j}'s minimum to be at most {lo} us (its lowest row), found {}",
                        mins[j]
                    ),
                ));
            }
            if let Some((hi, _)) = rows.last()
                && maxs[j] < *hi
            {
                return Err(ImportError::at(
                    self.max_line,
                    format!(
                        "expected thread {j}'s maximum to be at least {hi} us (its highest row), found {}",
                        maxs[j]
                    ),
                ));
            }
            if o > 0 {
                if maxs[j] < limit_us {
                    return Err(ImportError::at(
                        self.max_line,
                        format!(
                            "expected thread {j}'s maximum to lie beyond the rows ({o} overflows), found {} us",
                            maxs[j]
                        ),
                    ));
                }
                build::count_into(&mut h, build::bucket_ns(maxs[j], 1000), 1)?;
                build::count_into(&mut h, build::bucket_ns(limit_us, 1000), o - 1)?;
                t.overflow = Some(Overflow {
                    count: o,
                    from_ns: limit_us.saturating_mul(1000),
                });
            }
            t.min_ns = Some(mins[j].saturating_mul(1000));
            t.avg_ns = Some(avgs[j] as f64 * 1000.0);
            t.max_ns = Some(maxs[j].saturating_mul(1000));
        }
        t.samples = samples;
        t.hist = Some(h);
        Ok(t)
    }
}

/// Where a second, third… histogram's run starts in `text` (0-based
/// line indices): for every `# Histogram` after the first, the
/// `# /dev/cpu_dma_latency` header before it (after the previous
/// histogram), else the first status or policy line after the previous
/// histogram's `# Max Latencies:`, else the `# Histogram` line itself.
pub fn run_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut seen_hist = false;
    let mut header: Option<usize> = None;
    let mut status: Option<usize> = None;
    let mut after_max = false;
    for (i, line) in text.lines().enumerate() {
        let l = cyclictest_summary::strip_escapes(line);
        let l = l.trim();
        if l == "# Histogram" {
            if seen_hist {
                starts.push(header.or(status).unwrap_or(i));
            }
            seen_hist = true;
            (header, status, after_max) = (None, None, false);
        } else if !seen_hist {
            continue;
        } else if l.starts_with("# /dev/cpu_dma_latency") {
            header = header.or(Some(i));
        } else if l.starts_with("# Max Latencies:") {
            after_max = true;
        } else if after_max && (l.starts_with("T:") || l.starts_with("policy:")) {
            status = status.or(Some(i));
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::ImportOptions;
    use std::path::Path;

    fn read(text: &str) -> Result<RunRecord, ImportError> {
        let o = ImportOptions::default();
        parse(&Source {
            path: Path::new("h.txt"),
            text,
            modified_unix_ns: Some(1_700_000_000_000_000_000),
            options: &o,
        })
    }

    const OLD: &str = "# /dev/cpu_dma_latency set to 0us\n# Histogram\n000000 000000\t000000\n000001 000002\t000000\n000002 000003\t000001\n000003 000000\t000004\n# Total: 000000005 000000005\n# Min Latencies: 00001 00002\n# Avg Latencies: 00001 00002\n# Max Latencies: 00002 00003\n# Histogram Overflows: 00000 00000\n# Histogram Overflow at cycle number:\n# Thread 0:\n# Thread 1:\n";

    #[test]
    fn old_layout_with_total_and_zero_rows() {
        assert_eq!(detect(OLD), 95);
        let r = read(OLD).unwrap();
        assert_eq!(r.threads.len(), 2);
        assert_eq!(r.threads[0].stats.samples, 5);
        assert_eq!(r.threads[1].stats.max_ns, Some(3000));
        assert_eq!(r.threads[0].histogram.resolution_ns, 1000);
        assert_eq!(r.options.dma_latency_us, Some(0));
        assert_eq!(r.overall.samples, 10);
    }

    #[test]
    fn new_layout_without_total_or_zero_rows_and_overflows() {
        let text = "# Histogram\n000005 000002\n000007 000001\n# Min Latencies: 00005\n# Avg Latencies: 00009\n# Max Latencies: 00120\n# Histogram Overflows: 00003\n# Histogram Overflow at cycle number:\n# Thread 0: 00011 00012 00013\n";
        let r = read(text).unwrap();
        let t = &r.threads[0];
        assert_eq!(t.stats.samples, 6);
        assert_eq!(t.stats.max_ns, Some(120_000));
        let h = t.histogram.to_histogram().unwrap();
        assert_eq!(h.count_above(100_000), 1);
        assert!(r.warnings.iter().any(|w| w.contains("lower bounds")));
    }

    #[test]
    fn counts_past_2_64_are_refused_never_an_overflow() {
        let big = u64::MAX / 2 + 1;
        let rows = format!(
            "# Histogram\n000001 {big}\n000002 {big}\n# Min Latencies: 00001\n# Avg Latencies: 00001\n# Max Latencies: 00002\n# Histogram Overflows: 00000\n"
        );
        let e = read(&rows).unwrap_err();
        assert!(e.message.contains("past 2^64"), "{e}");
        let over = format!(
            "# Histogram\n000001 {}\n# Min Latencies: 00001\n# Avg Latencies: 00001\n# Max Latencies: 00009\n# Histogram Overflows: 00002\n",
            u64::MAX - 1
        );
        let e = read(&over).unwrap_err();
        assert!(e.message.contains("past 2^64"), "{e}");
    }

    #[test]
    fn histofall_column_is_checked_and_dropped() {
        let text = "# Histogram\n000001 000001\t000002\t000003\n# Min Latencies: 00001 00001\n# Avg Latencies: 00001 00001\n# Max Latencies: 00001 00001 00001\n# Histogram Overflows: 00000 00000 00000\n";
        let r = read(text).unwrap();
        assert_eq!(r.threads.len(), 2);
        assert_eq!(r.overall.samples, 3);
        let bad = text.replace("000003\n", "000004\n");
        let e = read(&bad).unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
    }

    #[test]
    fn malformed_files_name_the_line_and_what_was_expected() {
        let cases: &[(&str, Option<usize>, &str)] = &[
            (
                &OLD.replace("000002 000003\t000001", "000002 0000x3\t000001"),
                Some(5),
                "expected numbers",
            ),
            (
                &OLD.replace(
                    "# Total: 000000005 000000005",
                    "# Total: 000000006 000000005",
                ),
                Some(7),
                "sum of its rows",
            ),
            (
                &OLD.replace("000003 000000\t000004\n", "000003 000000\n"),
                Some(6),
                "expected 2 counts",
            ),
            (
                &OLD.replace("# Max Latencies: 00002 00003\n", ""),
                None,
                "# Max Latencies:",
            ),
            (
                &OLD.replace("000001 000002\t000000", "000009 000002\t000000"),
                Some(5),
                "increasing order",
            ),
            (
                &OLD.replace(
                    "# Max Latencies: 00002 00003",
                    "# Max Latencies: 00001 00003",
                ),
                Some(10),
                "at least 2 us",
            ),
            (
                &OLD.replace("000000 000000\t000000", "hello there"),
                Some(3),
                "expected a histogram row",
            ),
        ];
        for (text, line, needle) in cases {
            let e = read(text).unwrap_err();
            assert_eq!(e.line, *line, "{e}");
            assert!(e.to_string().contains(needle), "'{needle}' not in: {e}");
        }
    }
}
