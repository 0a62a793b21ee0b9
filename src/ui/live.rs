//! The live display of `measure`: one refreshed line per thread
//! (T / CPU / P / I / C / Min / Act / Avg / Max, with units) and a
//! progress bar with ETA on a terminal; plain lines once a second with
//! `--live` on a pipe; nothing with `-q`. Also the control signals:
//! SIGINT / SIGTERM / SIGHUP end the run cleanly (a second one exits at
//! once), SIGUSR1 prints the summary so far.

use crate::engine::build::{self, RecordContext};
use crate::engine::{Control, Observer, Plan, RunView};
use crate::report::summary;
use crate::units::{fmt_duration, us_cell, us_cell_f};
use anyhow::Result;
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
    pub fn install() -> Result<Signals> {
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
}

impl LiveObserver {
    pub fn new(
        mode: LiveMode,
        plan: &Plan,
        ctx: &RecordContext,
        signals: Signals,
    ) -> Result<LiveObserver> {
        let mut o = LiveObserver {
            mode,
            signals,
            ctx: ctx.clone(),
            multi: None,
            lines: Vec::new(),
            progress: None,
            last_draw: None,
            duration_ns: plan.config.duration_ns,
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
        Ok(o)
    }

    fn line(view: &RunView, i: usize) -> String {
        let t = &view.plan.threads[i];
        let l = view.live(i);
        let mut s = format!(
            "T:{i:>3} ({:>7}) CPU:{:>3} P:{:>2} I:{:>7} C:{:>10} Min:{:>9}us Act:{:>9}us Avg:{:>9}us Max:{:>10}us",
            view.tid(i),
            t.cpu.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
            t.priority,
            fmt_duration(t.interval_ns),
            l.wakeups,
            us_cell(l.min_ns),
            us_cell(l.last_ns),
            us_cell_f(l.avg_ns),
            us_cell(l.max_ns),
        );
        if l.missed > 0 {
            s.push_str(&format!(" missed:{}", l.missed));
        }
        s
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
                for i in 0..view.thread_count() {
                    self.lines[i].set_message(Self::line(view, i));
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
                    let _ = writeln!(err, "{}", Self::line(view, i));
                }
            }
            LiveMode::Off => {}
        }
    }

    fn print_summary(&self, view: &RunView) {
        let rec = build::running(view, &self.ctx);
        let text = format!(
            "summary after {}:\n{}",
            fmt_duration(rec.duration_ns),
            summary::render(&rec)
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

    /// Remove the live lines (the summary follows).
    /// Clear the lines and the bar.
    fn clear(&mut self) {
        for l in &self.lines {
            l.finish_and_clear();
        }
        if let Some(p) = &self.progress {
            p.finish_and_clear();
        }
        if let Some(m) = &self.multi {
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
