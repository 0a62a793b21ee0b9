//! The end-of-run summary table: one row per thread and one for all
//! threads, in microseconds with 0.1 µs precision (above
//! [`MANY_THREADS`] threads, the [`WORST_ROWS`] worst, ranked by max then
//! p99, and a line for the others, unless `--all`); for a run measured
//! with `--explain`, a line per thread on why its largest wake-up was
//! late, and the counts (`super::why`). An import's overflows (samples
//! its source counted beyond its histogram, values unknown) get a line.
//! Text that came with the record reaches the terminal only through
//! `text::for_terminal`.

use super::known;
use crate::record::{LatencyStats, METRICS, RunRecord, ThreadRecord, Unknowable};
use crate::text::rank::{self, MANY_THREADS, Rows, WORST_ROWS};
use crate::units::{fmt_duration, us_cell_stated, us1};
use std::fmt::Write;

fn header() -> Vec<String> {
    ["T", "CPU", "P", "I", "count"]
        .into_iter()
        .chain(METRICS)
        .chain(["missed"])
        .map(str::to_string)
        .collect()
}

fn cells(run: &RunRecord, stats: &LatencyStats) -> Vec<String> {
    let mut out = vec![known(run, Unknowable::Count, || stats.samples.to_string())];
    out.extend(METRICS.iter().map(|m| us_cell_stated(stats.metric(m))));
    out.push(known(run, Unknowable::MissedPeriods, || {
        stats.missed_periods.to_string()
    }));
    out
}

/// Why a run's missed periods are unknown.
fn missed_unknown(run: &RunRecord) -> &'static str {
    match run.source.format.as_deref() {
        Some(f) if f.starts_with("cyclictest") => "not counted by cyclictest",
        _ => "not in the source",
    }
}

/// The threads of `run`, worst first: by max, then p99, then p99.9
/// (highest first), ties in thread order.
pub fn worst_first(run: &RunRecord) -> Vec<&ThreadRecord> {
    ranked(run).into_iter().map(|i| &run.threads[i]).collect()
}

/// The positions in `run.threads` of [`worst_first`]'s order.
pub fn ranked(run: &RunRecord) -> Vec<usize> {
    let keys: Vec<_> = run
        .threads
        .iter()
        .map(|t| (t.stats.max_ns, t.stats.p99_ns, t.stats.p999_ns))
        .collect();
    rank::worst_first(&keys)
}

/// The summary table of `run` (latencies in µs), the worst threads only
/// when there are many ([`Rows::Fit`]).
pub fn render(run: &RunRecord) -> String {
    render_rows(run, Rows::Fit)
}

/// The summary table of `run` with a row for every thread (`--all`).
pub fn render_all(run: &RunRecord) -> String {
    render_rows(run, Rows::All)
}

/// The line on the threads a summarised table leaves out: how many, on
/// which CPUs, and the range of their max and p99.
fn others_line(others: &[&ThreadRecord]) -> String {
    let on = rank::on_cpus(others.iter().filter_map(|t| t.cpu).map(|c| c as usize));
    let span = |name: &str, r: Option<(u64, u64)>| match r {
        Some((lo, hi)) if lo == hi => format!("{name} {}us", us1(hi)),
        Some((lo, hi)) => format!("{name} {}us to {}us", us1(lo), us1(hi)),
        None => format!("{name} -"),
    };
    // A p99 among an import's overflows is a lower bound.
    let p99 = rank::stated_range(others.iter().map(|t| t.stats.quantile("p99")));
    format!(
        "the other {} threads{on}: {}, p99 {}",
        others.len(),
        span("max", rank::range(others.iter().map(|t| t.stats.max_ns))),
        rank::us_stated_range(p99, "us to ")
            .map(|r| format!("{r}us"))
            .unwrap_or_else(|| "-".into())
    )
}

/// The summary table of `run` (latencies in µs), with the thread rows
/// `rows` asks for.
pub fn render_rows(run: &RunRecord, rows_shown: Rows) -> String {
    let summarise = rows_shown.summarises(run.threads.len());
    let (shown, others): (Vec<&ThreadRecord>, Vec<&ThreadRecord>) = if summarise {
        let ranked = worst_first(run);
        let (a, b) = ranked.split_at(WORST_ROWS.min(ranked.len()));
        (a.to_vec(), b.to_vec())
    } else {
        (run.threads.iter().collect(), Vec::new())
    };
    let worst = shown.len();
    let mut rows: Vec<Vec<String>> = vec![header()];
    for t in shown {
        let mut r = vec![
            t.index.to_string(),
            t.cpu.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
            known(run, Unknowable::Priority, || t.priority.to_string()),
            if t.interval_ns > 0 || run.knows(Unknowable::Interval) {
                fmt_duration(t.interval_ns)
            } else {
                "unknown".into()
            },
        ];
        r.extend(cells(run, &t.stats));
        rows.push(r);
    }
    if run.threads.len() > 1 {
        let mut r = vec!["all".into(), "".into(), "".into(), "".into()];
        r.extend(cells(run, &run.overall));
        rows.push(r);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Latency in microseconds (us); count = periods recorded, missed = periods that began before the thread woke for an earlier one (no wake-up of their own)"
    );
    if summarise {
        let _ = writeln!(
            out,
            "{} threads (more than {MANY_THREADS}): the {} worst, ranked by max then p99; --all prints every thread",
            run.threads.len(),
            worst
        );
    }
    let table = crate::text::table::render(&rows);
    match table.trim_end_matches('\n').rsplit_once('\n') {
        // The others between the worst rows and the all-threads row.
        Some((worst_rows, all_row)) if summarise => {
            let _ = writeln!(out, "{worst_rows}");
            let _ = writeln!(out, "{}", others_line(&others));
            let _ = writeln!(out, "{all_row}");
        }
        _ => out.push_str(&table),
    }
    if !run.knows(Unknowable::MissedPeriods) {
        let _ = writeln!(out, "missed: unknown ({})", missed_unknown(run));
    }
    if let Some(o) = super::verdict::overflow_text(run) {
        let _ = writeln!(out, "{}", o.replacen("Overflows", "overflows", 1));
    }
    if let (Some(max), Some(at)) = (run.overall.max_ns, run.overall.max_at) {
        let _ = writeln!(
            out,
            "max {}us at cycle {} ({} into the run)",
            us1(max),
            at.cycle,
            fmt_duration(at.offset_ns)
        );
    }
    if run.options.warmup_ns > 0 {
        let _ = writeln!(
            out,
            "the first {} (warm-up) are not in the statistics",
            fmt_duration(run.options.warmup_ns)
        );
    }
    if run.overall.early_wakeups > 0 {
        let _ = writeln!(
            out,
            "early wake-ups: {} (up to {}us before the deadline; not in the histogram)",
            run.overall.early_wakeups,
            us1(run.overall.max_early_ns.unwrap_or(0))
        );
    }
    if let Some(limit) = run.limits.max_latency_ns {
        let verdict = if run.limits.exceeded {
            "EXCEEDED"
        } else {
            "met"
        };
        let _ = writeln!(out, "max-latency limit {}us: {verdict}", us1(limit));
    }
    if run.overall.samples > 0 {
        let _ = writeln!(out, "deadline {}", super::verdict::deadline_status(run));
        let _ = writeln!(out, "verdict: {}", super::verdict::status_line(run));
    }
    if let Some(b) = run.limits.break_event {
        let _ = writeln!(
            out,
            "stopped: thread {} woke {}us late at cycle {}, above the break threshold {}us",
            b.thread,
            us1(b.latency_ns),
            b.at.cycle,
            us1(run.limits.break_ns.unwrap_or(0))
        );
    }
    for line in super::why::summary_lines(run, rows_shown) {
        let _ = writeln!(out, "{}", crate::text::for_terminal(&line));
    }
    // A record read from a file or a board (its warnings, the tasks a
    // trace named) never sends a control character to the terminal.
    crate::text::for_terminal_lines(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::synthetic;

    /// `n` threads on CPUs 0..n: thread i's max is 10 µs + i ns, but
    /// thread 77 reaches 500 µs and threads 3 and 100 both 400 µs (100
    /// with the higher p99).
    fn many(n: usize) -> RunRecord {
        let threads: Vec<Vec<u64>> = (0..n)
            .map(|i| {
                let mut v = vec![2_000; 200];
                v.push(10_000 + i as u64);
                match i {
                    77 => v.push(500_000),
                    3 => v.push(400_000),
                    100 => v.extend([400_000, 300_000, 300_000, 300_000]),
                    _ => {}
                }
                v
            })
            .collect();
        synthetic(&threads)
    }

    /// The thread column of each row of the table (the lines between
    /// the rule and the end, "all" included).
    fn row_threads(text: &str) -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.starts_with("---"))
            .skip(1)
            .take_while(|l| !l.starts_with("max "))
            .filter(|l| !l.starts_with("the other"))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect()
    }

    #[test]
    fn many_threads_show_the_worst_first_and_summarise_the_rest() {
        let run = many(128);
        let text = render(&run);
        let rows = row_threads(&text);
        assert_eq!(rows.len(), WORST_ROWS + 1, "{text}");
        assert_eq!(&rows[..3], ["77", "100", "3"], "{text}");
        // Then the highest max of the ordinary threads: 127, 126, ...
        assert_eq!(&rows[3..WORST_ROWS], ["127", "126", "125", "124", "123"]);
        assert!(
            text.contains(
                "128 threads (more than 16): the 8 worst, ranked by max then p99; --all prints every thread"
            ),
            "{text}"
        );
        let others = text
            .lines()
            .find(|l| l.starts_with("the other"))
            .expect("a line for the others");
        assert_eq!(
            others,
            "the other 120 threads (CPU 0-2,4-76,78-99,101-122): max 10.0us to 10.1us, p99 2.0us"
        );
        // The others line sits above the all-threads row, which stays.
        let lines: Vec<&str> = text.lines().collect();
        let at = lines.iter().position(|l| *l == others).unwrap();
        assert!(lines[at + 1].starts_with("all "), "{text}");
        assert!(text.contains("max 500.0us at cycle 42"), "{text}");
        assert!(text.lines().count() < 24, "{text}");
    }

    #[test]
    fn all_prints_every_thread_in_thread_order() {
        let run = many(128);
        let text = render_all(&run);
        let rows = row_threads(&text);
        assert_eq!(rows.len(), 129, "{text}");
        let expected: Vec<String> = (0..128)
            .map(|i| i.to_string())
            .chain(["all".into()])
            .collect();
        assert_eq!(rows, expected);
        assert!(!text.contains("the other"), "{text}");
        assert!(!text.contains("--all"), "{text}");
    }

    #[test]
    fn up_to_the_threshold_the_table_is_as_it_was() {
        for n in [1, 2, MANY_THREADS] {
            let run = many(n);
            assert_eq!(render(&run), render_all(&run));
            let rows = row_threads(&render(&run));
            let expected = n + usize::from(n > 1);
            assert_eq!(rows.len(), expected);
            assert_eq!(rows[0], "0");
        }
        let run = many(MANY_THREADS + 1);
        assert_eq!(row_threads(&render(&run)).len(), WORST_ROWS + 1);
    }
}
