//! The live display of `measure`: one refreshed line per thread
//! (T / CPU / P / I / C / Min / Act / Avg / Max, with units) and a
//! progress bar with ETA on a terminal; plain lines once a second with
//! `--live` on a pipe; nothing with `-q`. Also the control signals:
//! SIGINT / SIGTERM / SIGHUP end the run cleanly (a second one exits at
//! once), SIGUSR1 prints the summary so far.

use crate::engine::build::{self, RecordContext};
use crate::engine::{Control, Observer, Plan, RunView};
use crate::record::RunRecord;
use crate::units::{fmt_duration, us_cell, us_cell_f};
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
        };
        if mode == LiveMode::Terminal {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
            let style = ProgressStyle::with_template("{msg}").expect("static template");
            for _ in &plan.threads {
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

    /// The fields of thread `i`'s line, each with its rank: when the
    /// line is too wide, the highest ranks go first (0: always kept).
    fn fields(view: &RunView, i: usize) -> Vec<(String, u8)> {
        let t = &view.plan.threads[i];
        let l = view.live(i);
        let mut f = vec![
            (format!("T:{i:>3}"), 0),
            (format!("({:>7})", view.tid(i)), 7),
            (
                format!(
                    "CPU:{:>3}",
                    t.cpu.map(|c| c.to_string()).unwrap_or_else(|| "-".into())
                ),
                0,
            ),
            (format!("P:{:>2}", t.priority), 5),
            (format!("I:{:>7}", fmt_duration(t.interval_ns)), 6),
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

    fn line(view: &RunView, i: usize, columns: Option<u16>) -> String {
        let fields = Self::fields(view, i);
        match columns {
            // A line as wide as the terminal wraps on some: one less.
            Some(c) => fit(fields, usize::from(c).saturating_sub(1)),
            None => fit(fields, usize::MAX),
        }
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
                for i in 0..view.thread_count() {
                    self.lines[i].set_message(Self::line(view, i, columns));
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
                for i in 0..view.thread_count() {
                    let _ = writeln!(err, "{}", Self::line(view, i, None));
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
    use super::fit;

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
