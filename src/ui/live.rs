//! The live display of `measure`: one refreshed line per thread
//! (T / CPU / P / I / C / Min / Act / Avg / Max, with units) and a
//! progress bar with ETA on a terminal; plain lines once a second with
//! `--live` on a pipe; nothing with `-q`. Above
//! [`MANY_THREADS`](rank::MANY_THREADS) threads (unless `--all`) it keeps to one screen: the
//! [`WORST_ROWS`] worst threads so far (by max, then the p99 of their
//! last window), a line for the others and one for all threads; the
//! number of lines drawn is fixed when the run starts ([`frame_len`]),
//! so every redraw moves the cursor over as many lines as it printed.
//! Also the control signals:
//! SIGINT / SIGTERM / SIGHUP end the run cleanly (a second one exits at
//! once), SIGUSR1 prints the summary so far.

use crate::engine::build::{self, RecordContext};
use crate::engine::shared::LiveStats;
use crate::engine::{Control, Observer, Plan, RunView, ThreadPlan};
use crate::record::RunRecord;
use crate::text::rank::{self, Rows, WORST_ROWS};
use crate::units::{fmt_duration, format_cpu_list, us_cell, us_cell_f, us1};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveMode {
    Off,
    Terminal,
    Plain,
}

impl LiveMode {
    pub fn choose(quiet: bool, forced: bool) -> LiveMode {
        if quiet {
            LiveMode::Off
        } else if std::io::stderr().is_terminal() {
            LiveMode::Terminal
        } else if forced {
            LiveMode::Plain
        } else {
            LiveMode::Off
        }
    }
}

/// Flags set by signal handlers, read by the control thread.
///
/// The first SIGINT, SIGTERM or SIGHUP asks to stop: rtscope finishes
/// writing its results and putting the system back. A second one exits
/// at once, as `kill -9` would: the store keeps the last checkpoint (or
/// the local spool does) and `rtscope tune --revert` restores a tuning.
/// What a second signal prints before it exits.
const SECOND_SIGNAL: &str = "rtscope: second signal: exiting at once, without finishing the run (the run store keeps its last checkpoint; if a tuning was applied, `sudo rtscope tune --revert` puts it back)\n";

#[derive(Clone)]
pub struct Signals {
    pub stop: Arc<AtomicBool>,
    pub summary: Arc<AtomicBool>,
}

impl Signals {
    /// Register the handlers (signal-hook's registrations).
    pub fn install() -> std::io::Result<Signals> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR1};
        let stop = Arc::new(AtomicBool::new(false));
        let summary = Arc::new(AtomicBool::new(false));
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            crate::sys::signal::exit_when_set(sig, stop.clone(), SECOND_SIGNAL, 2)?;
            signal_hook::flag::register(sig, stop.clone())?;
        }
        signal_hook::flag::register(SIGUSR1, summary.clone())?;
        Ok(Signals { stop, summary })
    }

    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

pub struct LiveObserver {
    mode: LiveMode,
    signals: Signals,
    ctx: RecordContext,
    multi: Option<MultiProgress>,
    lines: Vec<ProgressBar>,
    progress: Option<ProgressBar>,
    last_draw: Option<Instant>,
    duration_ns: Option<u64>,
    summary: Summarize,
    rows: Rows,
}

/// Renders the summary so far for SIGUSR1 (the caller's: the end-of-run
/// summary table lives with the reports, above this module).
pub type Summarize = fn(&RunRecord) -> String;

impl LiveObserver {
    pub fn new(
        mode: LiveMode,
        plan: &Plan,
        ctx: &RecordContext,
        signals: Signals,
        summary: Summarize,
        rows: Rows,
    ) -> LiveObserver {
        let mut o = LiveObserver {
            mode,
            signals,
            ctx: ctx.clone(),
            multi: None,
            lines: Vec::new(),
            progress: None,
            last_draw: None,
            duration_ns: plan.config.duration_ns,
            summary,
            rows,
        };
        if mode == LiveMode::Terminal {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
            let style = ProgressStyle::with_template("{msg}").expect("static template");
            for _ in 0..frame_len(plan.threads.len(), rows) {
                o.lines
                    .push(multi.add(ProgressBar::new_spinner().with_style(style.clone())));
            }
            let bar = match plan.config.duration_ns {
                Some(d) => multi.add(ProgressBar::new(d / 1_000_000)).with_style(
                    ProgressStyle::with_template(
                        "{elapsed_precise} [{wide_bar}] {percent:>3}%  ETA {eta}",
                    )
                    .expect("static template")
                    .progress_chars("=> "),
                ),
                None => multi.add(ProgressBar::new_spinner()).with_style(
                    ProgressStyle::with_template(
                        "{elapsed_precise}  Ctrl-C to stop, SIGUSR1 for a summary",
                    )
                    .expect("static template"),
                ),
            };
            o.progress = Some(bar);
            o.multi = Some(multi);
        }
        o
    }

    fn draw(&mut self, view: &RunView) {
        let now = Instant::now();
        let every = match self.mode {
            LiveMode::Terminal => Duration::from_millis(250),
            LiveMode::Plain => Duration::from_secs(1),
            LiveMode::Off => return,
        };
        if self
            .last_draw
            .is_some_and(|t| now.duration_since(t) < every)
        {
            return;
        }
        self.last_draw = Some(now);
        match self.mode {
            LiveMode::Terminal => {
                let columns = crate::sys::term::columns(&std::io::stderr());
                let frame = frame(&threads(view), self.rows, columns);
                debug_assert_eq!(frame.len(), self.lines.len());
                for (bar, line) in self.lines.iter().zip(frame) {
                    bar.set_message(line);
                }
                if let Some(p) = &self.progress {
                    match self.duration_ns {
                        Some(d) => p.set_position((view.elapsed_ns().min(d)) / 1_000_000),
                        None => p.tick(),
                    }
                }
            }
            LiveMode::Plain => {
                // On standard error: standard output may carry the JSON
                // record or the histogram, and a closed pipe must not end
                // the run.
                let mut err = std::io::stderr().lock();
                for line in frame(&threads(view), self.rows, None) {
                    let _ = writeln!(err, "{line}");
                }
            }
            LiveMode::Off => {}
        }
    }

    fn print_summary(&self, view: &RunView) {
        let rec = build::running(view, &self.ctx);
        let text = format!(
            "summary after {}:\n{}",
            crate::units::fmt_run_length(rec.duration_ns),
            (self.summary)(&rec)
        );
        match &self.multi {
            Some(m) => {
                for line in text.lines() {
                    let _ = m.println(line);
                }
            }
            None => eprint!("{text}"),
        }
    }

    /// Remove the live lines (the summary follows). A run that measured
    /// its whole duration leaves its bar at 100 %; one stopped early
    /// leaves nothing.
    fn clear(&mut self) {
        for l in &self.lines {
            l.finish_and_clear();
        }
        let complete = !self.signals.stop.load(Ordering::SeqCst);
        if let Some(p) = &self.progress {
            match (self.duration_ns, complete) {
                (Some(d), true) => {
                    p.set_position(d / 1_000_000);
                    p.finish();
                    // The bar stays; what follows starts on a line of its own.
                    eprintln!();
                }
                _ => p.finish_and_clear(),
            }
        }
        if !complete && let Some(m) = &self.multi {
            let _ = m.clear();
        }
    }
}

impl Observer for LiveObserver {
    fn ended(&mut self) {
        self.clear();
    }

    fn warning(&mut self, message: &str) {
        match &self.multi {
            Some(m) if self.last_draw.is_some() => {
                let _ = m.println(format!("rtscope: warning: {message}"));
            }
            _ => eprintln!("rtscope: warning: {message}"),
        }
    }

    fn started(&mut self, view: &RunView) {
        self.draw(view);
    }

    fn tick(&mut self, view: &RunView) -> Control {
        if self.signals.summary.swap(false, Ordering::SeqCst) {
            self.print_summary(view);
        }
        if self.signals.stop.load(Ordering::SeqCst) {
            return Control::Stop;
        }
        self.draw(view);
        Control::Continue
    }
}

/// One thread as the live view shows it.
#[derive(Clone, Debug)]
struct Thread {
    plan: ThreadPlan,
    tid: i32,
    live: LiveStats,
    /// The p99 of its last finished window that holds samples.
    recent_p99_ns: Option<u64>,
}

/// Every thread of `view`, now.
fn threads(view: &RunView) -> Vec<Thread> {
    (0..view.thread_count())
        .map(|i| Thread {
            plan: view.plan.threads[i].clone(),
            tid: view.tid(i),
            live: view.live(i),
            recent_p99_ns: view.last_window(i).map(|(_, w)| w.p99_ns),
        })
        .collect()
}

/// The lines the live view of `threads` threads draws (the progress bar
/// aside): one per thread, or above [`MANY_THREADS`](rank::MANY_THREADS) ([`Rows::Fit`]) the
/// worst [`WORST_ROWS`], the others and all threads. Fixed for a run.
pub fn frame_len(threads: usize, rows: Rows) -> usize {
    if rows.summarises(threads) {
        WORST_ROWS.min(threads) + 2
    } else {
        threads
    }
}

/// The lines of one redraw, [`frame_len`] of them, each at most one
/// less than `columns` wide (it never wraps, so the cursor moves back
/// over exactly the lines printed).
fn frame(threads: &[Thread], rows: Rows, columns: Option<u16>) -> Vec<String> {
    // A line as wide as the terminal wraps on some: one less.
    let width = columns.map_or(usize::MAX, |c| usize::from(c).saturating_sub(1));
    if !rows.summarises(threads.len()) {
        return threads.iter().map(|t| fit(fields(t), width)).collect();
    }
    let keys: Vec<_> = threads
        .iter()
        .map(|t| (t.live.max_ns, t.recent_p99_ns))
        .collect();
    let ranked = rank::worst_first(&keys);
    let (worst, others) = ranked.split_at(WORST_ROWS.min(ranked.len()));
    let mut out: Vec<String> = worst
        .iter()
        .map(|&i| fit(fields(&threads[i]), width))
        .collect();
    let others: Vec<&Thread> = others.iter().map(|&i| &threads[i]).collect();
    out.push(fit(others_fields(&others), width));
    out.push(fit(all_fields(threads), width));
    out
}

/// The fields of a thread's line, each with its rank: when the line is
/// too wide, the highest ranks go first (0: always kept).
fn fields(t: &Thread) -> Vec<(String, u8)> {
    let (p, l) = (&t.plan, &t.live);
    let mut f = vec![
        (format!("T:{:>3}", p.index), 0),
        (format!("({:>7})", t.tid), 7),
        (
            format!(
                "CPU:{:>3}",
                p.cpu.map(|c| c.to_string()).unwrap_or_else(|| "-".into())
            ),
            0,
        ),
        (format!("P:{:>2}", p.priority), 5),
        (format!("I:{:>7}", fmt_duration(p.interval_ns)), 6),
        (format!("C:{:>10}", l.wakeups), 3),
        (format!("Min:{:>9}us", us_cell(l.min_ns)), 2),
        (format!("Act:{:>9}us", us_cell(l.last_ns)), 4),
        (format!("Avg:{:>9}us", us_cell_f(l.avg_ns)), 1),
        (format!("Max:{:>10}us", us_cell(l.max_ns)), 0),
    ];
    if l.missed > 0 {
        f.push((format!("missed:{}", l.missed), 0));
    }
    f
}

/// The line on the threads not shown: how many, on which CPUs, and the
/// range of their max.
fn others_fields(others: &[&Thread]) -> Vec<(String, u8)> {
    let cpus: Vec<usize> = others.iter().filter_map(|t| t.plan.cpu).collect();
    let max = match rank::range(others.iter().map(|t| t.live.max_ns)) {
        Some((lo, hi)) if lo == hi => format!("max {}us", us1(hi)),
        Some((lo, hi)) => format!("max {}us to {}us", us1(lo), us1(hi)),
        None => "max -".into(),
    };
    let mut f = vec![(format!("the other {} threads", others.len()), 0)];
    if !cpus.is_empty() {
        f.push((format!("(CPU {})", format_cpu_list(&cpus)), 2));
    }
    f.push((max, 0));
    f.push(("(--all shows every thread)".into(), 1));
    f
}

/// The line of all threads together: their wake-ups, the lowest min,
/// the average weighted by wake-ups, the highest max, the missed periods.
fn all_fields(threads: &[Thread]) -> Vec<(String, u8)> {
    let wakeups: u64 = threads.iter().map(|t| t.live.wakeups).sum();
    let missed: u64 = threads.iter().map(|t| t.live.missed).sum();
    let (sum, n) = threads
        .iter()
        .filter_map(|t| t.live.avg_ns.map(|a| (a, t.live.wakeups)))
        .fold((0.0, 0u64), |(s, n), (a, w)| (s + a * w as f64, n + w));
    let avg = (n > 0).then(|| sum / n as f64);
    let min = threads.iter().filter_map(|t| t.live.min_ns).min();
    let max = threads.iter().filter_map(|t| t.live.max_ns).max();
    let mut f = vec![
        (format!("all {} threads", threads.len()), 0),
        (format!("C:{wakeups:>10}"), 3),
        (format!("Min:{:>9}us", us_cell(min)), 2),
        (format!("Avg:{:>9}us", us_cell_f(avg)), 1),
        (format!("Max:{:>10}us", us_cell(max)), 0),
    ];
    if missed > 0 {
        f.push((format!("missed:{missed}"), 0));
    }
    f
}

/// `fields` joined by spaces in at most `width` characters: the fields of
/// highest rank are left out first; when those of rank 0 are still too
/// wide, the line is cut (it never wraps).
fn fit(mut fields: Vec<(String, u8)>, width: usize) -> String {
    let len = |f: &[(String, u8)]| -> usize {
        f.iter().map(|(s, _)| s.chars().count()).sum::<usize>() + f.len().saturating_sub(1)
    };
    while len(&fields) > width {
        let Some((at, _)) = fields
            .iter()
            .enumerate()
            .filter(|(_, (_, r))| *r > 0)
            .max_by_key(|(k, (_, r))| (*r, *k))
        else {
            break;
        };
        fields.remove(at);
    }
    let line: Vec<&str> = fields.iter().map(|(s, _)| s.as_str()).collect();
    line.join(" ").chars().take(width).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` threads on CPUs 0..n: thread i's max is 10 µs + i ns, but
    /// thread 77 reaches 500 µs and threads 3 and 100 both 400 µs (100
    /// with the higher p99 in its last window); thread 5 has measured
    /// nothing yet.
    fn many(n: usize) -> Vec<Thread> {
        (0..n)
            .map(|i| {
                let (max, p99) = match i {
                    77 => (500_000, 3_000),
                    3 => (400_000, 3_000),
                    100 => (400_000, 9_000),
                    _ => (10_000 + i as u64, 2_000),
                };
                let measured = i != 5;
                Thread {
                    plan: ThreadPlan {
                        index: i,
                        cpu: Some(i),
                        priority: 95,
                        interval_ns: 1_000_000,
                    },
                    tid: 1000 + i as i32,
                    live: LiveStats {
                        wakeups: if measured { 100 } else { 0 },
                        missed: u64::from(i == 100),
                        min_ns: measured.then_some(1_000),
                        last_ns: measured.then_some(2_000),
                        avg_ns: measured.then_some(2_000.0 + i as f64),
                        max_ns: measured.then_some(max),
                    },
                    recent_p99_ns: measured.then_some(p99),
                }
            })
            .collect()
    }

    /// The thread number of each thread line (`T: 12`).
    fn shown(lines: &[String]) -> Vec<usize> {
        lines
            .iter()
            .filter_map(|l| l.strip_prefix("T:"))
            .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
            .collect()
    }

    #[test]
    fn up_to_sixteen_threads_a_line_each_in_thread_order() {
        for n in [2, rank::MANY_THREADS] {
            let t = many(n);
            let lines = frame(&t, Rows::Fit, Some(200));
            assert_eq!(lines.len(), n);
            assert_eq!(lines.len(), frame_len(n, Rows::Fit));
            assert_eq!(shown(&lines), (0..n).collect::<Vec<_>>());
            assert_eq!(lines, frame(&t, Rows::All, Some(200)));
        }
        let two = frame(&many(2), Rows::Fit, None);
        assert_eq!(
            two[1],
            "T:  1 (   1001) CPU:  1 P:95 I:    1ms C:       100 Min:      1.0us Act:      2.0us Avg:      2.0us Max:      10.0us"
        );
    }

    #[test]
    fn many_threads_fit_one_screen_worst_first() {
        let t = many(128);
        let lines = frame(&t, Rows::Fit, Some(120));
        assert_eq!(lines.len(), WORST_ROWS + 2);
        assert_eq!(lines.len(), frame_len(128, Rows::Fit));
        // 100 before 3: same max, higher recent p99.
        assert_eq!(shown(&lines), [77, 100, 3, 127, 126, 125, 124, 123]);
        assert_eq!(
            lines[WORST_ROWS],
            "the other 120 threads (CPU 0-2,4-76,78-99,101-122) max 10.0us to 10.1us (--all shows every thread)"
        );
        assert!(
            lines[WORST_ROWS + 1].starts_with("all 128 threads C:     12700 Min:      1.0us"),
            "{}",
            lines[WORST_ROWS + 1]
        );
        assert!(lines[WORST_ROWS + 1].ends_with("Max:     500.0us missed:1"));
        for l in &lines {
            assert!(l.chars().count() <= 119, "{l}");
        }
    }

    #[test]
    fn seventeen_threads_summarise_and_all_shows_every_line() {
        let t = many(17);
        let lines = frame(&t, Rows::Fit, None);
        assert_eq!(lines.len(), WORST_ROWS + 2);
        assert!(lines[WORST_ROWS].starts_with("the other 9 threads (CPU "));
        let all = frame(&many(128), Rows::All, Some(100));
        assert_eq!(all.len(), 128);
        assert_eq!(frame_len(128, Rows::All), 128);
        assert_eq!(shown(&all), (0..128).collect::<Vec<_>>());
    }

    #[test]
    fn the_lines_drawn_stay_the_same_in_number_and_never_wrap() {
        // However the ranking changes between redraws and however narrow
        // the terminal, a redraw prints the lines the bars were made for,
        // each shorter than the terminal is wide.
        let mut t = many(128);
        for (round, columns) in [(0, 200u16), (1, 80), (2, 40), (3, 10)] {
            t[round * 30].live.max_ns = Some(900_000 + round as u64);
            let lines = frame(&t, Rows::Fit, Some(columns));
            assert_eq!(lines.len(), frame_len(t.len(), Rows::Fit));
            assert_eq!(shown(&lines)[0], round * 30, "{lines:?}");
            for l in &lines {
                assert!(!l.contains('\n'));
                assert!(l.chars().count() < usize::from(columns), "{columns}: {l}");
            }
        }
        // No thread has measured yet: still the same lines.
        let mut idle = many(20);
        for x in &mut idle {
            x.live = LiveStats::default();
            x.recent_p99_ns = None;
        }
        let lines = frame(&idle, Rows::Fit, Some(120));
        assert_eq!(lines.len(), WORST_ROWS + 2);
        assert_eq!(shown(&lines), (0..WORST_ROWS).collect::<Vec<_>>());
        assert!(
            lines[WORST_ROWS].contains(" max -"),
            "{}",
            lines[WORST_ROWS]
        );
        assert!(
            lines[WORST_ROWS + 1].contains("Max:         -us"),
            "{}",
            lines[WORST_ROWS + 1]
        );
    }

    fn fields() -> Vec<(String, u8)> {
        vec![
            ("T:  0".into(), 0),
            ("(  12345)".into(), 7),
            ("CPU:  1".into(), 0),
            ("P:95".into(), 5),
            ("I:    1ms".into(), 6),
            ("C:  12345678".into(), 3),
            ("Min:      1.2us".into(), 2),
            ("Act:      3.4us".into(), 4),
            ("Avg:      2.1us".into(), 1),
            ("Max:  123456.7us".into(), 0),
            ("missed:12".into(), 0),
        ]
    }

    #[test]
    fn a_line_fits_the_terminal_by_leaving_fields_out() {
        let wide = fit(fields(), usize::MAX);
        assert!(
            wide.contains("(  12345)") && wide.contains("Act:"),
            "{wide}"
        );
        let l = fit(fields(), 79);
        assert!(l.chars().count() <= 79, "{l}");
        // Whole fields only, the maximum and the missed periods kept.
        assert!(l.starts_with("T:  0 CPU:  1 "), "{l}");
        assert!(l.ends_with("Max:  123456.7us missed:12"), "{l}");
        assert!(
            l.contains("Avg:      2.1us") && !l.contains("12345)"),
            "{l}"
        );
        let narrow = fit(fields(), 40);
        assert!(narrow.chars().count() <= 40, "{narrow}");
        assert!(narrow.starts_with("T:  0 CPU:  1 Max:"), "{narrow}");
    }
}
