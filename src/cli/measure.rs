//! `rtscope measure`: flags (cyclictest's common ones keep their meaning),
//! their conversion to a measuring [`Request`], and the [`Session`]'s
//! outcome to printed text and an exit code.

use super::Exit;
use crate::engine::{Fanout, TimerMethod};
use crate::measure::{Request, Session, Settings, Status};
use crate::metrics::MetricsObserver;
use crate::text::rank::Rows;
use crate::ui::live::{LiveMode, LiveObserver, Signals};
use anyhow::{Context, Result, bail};
use clap::{ArgAction, Args};
use std::io::Write;
use std::path::Path;

/// Measure how late periodic real-time threads wake up (cyclictest's
/// flags work).
///
/// By default one SCHED_FIFO thread at priority 95 per allowed CPU, pinned,
/// waking every 1 ms with clock_nanosleep(TIMER_ABSTIME), until Ctrl-C.
/// Memory is locked and /dev/cpu_dma_latency is held at 0 during the run.
/// Latency = time the thread runs - time it was meant to wake. Every
/// period lands in the histogram: a wake-up so late that later deadlines
/// have passed counts those periods as missed and records each with the
/// lateness it suffered (--no-omission-correction records the wake-up
/// only, as cyclictest does).
///
/// Differences from cyclictest: times take units (1000 = 1000us, 250us,
/// 2ms; -D 10 = 10 seconds), -n is the default, -d defaults to 0 (all
/// threads at the same interval; cyclictest uses 500us), -m is the default,
/// -a is implied (threads are always pinned, round-robin over the CPUs),
/// and -h writes cyclictest's histogram format from a histogram that never
/// overflows.
///
/// Exit status: 0 done, 1 a latency limit (--max-latency, -b) was
/// exceeded, 2 bad options or a system error.
#[derive(Args, Debug, Clone)]
#[command(disable_help_flag = true)]
pub struct MeasureArgs {
    /// The measurement: every option that is a setting, declared once in
    /// [`Settings`] (the same keys in study files and remote runs).
    #[command(flatten)]
    pub settings: Settings,

    /// cyclictest's -n: clock_nanosleep (rtscope's default anyway).
    #[arg(short = 'n', long = "nanosleep")]
    pub nanosleep: bool,
    /// cyclictest's -r: relative sleeps (= --timer rel). rtscope sleeps for
    /// the time left until the deadline, so periods do not drift.
    #[arg(short = 'r', long = "relative")]
    pub relative: bool,
    /// cyclictest's -s: with -n the nanosleep syscall, else setitimer.
    #[arg(short = 's', long = "system")]
    pub system: bool,
    /// cyclictest's -x: POSIX timers (= --timer posix).
    #[arg(short = 'x', long = "posix_timers", alias = "posix-timers")]
    pub posix_timers: bool,
    /// cyclictest's -m: lock memory (rtscope's default anyway).
    #[arg(short = 'm', long = "mlockall", conflicts_with = "no_mlock")]
    pub mlockall: bool,

    /// No live display; print only the summary at the end.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Live display even when standard error is not a terminal (one line
    /// per thread per second, on standard error).
    #[arg(long = "live", conflicts_with = "quiet")]
    pub live: bool,
    /// A row for every thread in the summary at the end and in the live
    /// display. By default, above 16 threads, the 8 worst (by max, then
    /// p99) and one line for the others.
    #[arg(long = "all")]
    pub all: bool,

    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,

    /// Print help.
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
}

/// Long options of `measure` that are no key of [`Settings`], and why:
/// how the command shows or serves what it measures, and cyclictest's
/// compatibility flags, which lower into `timer` and `no-mlock`.
pub const NOT_SETTINGS: &[(&str, &str)] = &[
    ("quiet", "how the command shows progress"),
    ("live", "how the command shows progress"),
    ("all", "how the command shows its threads"),
    ("help", "prints help"),
    ("metrics", "the command serves the endpoint"),
    ("metrics-auth", "the command serves the endpoint"),
    ("metrics-linger", "the command serves the endpoint"),
    (
        "nanosleep",
        "cyclictest's -n: clock_nanosleep is the default",
    ),
    ("relative", "cyclictest's -r: lowers into timer = rel"),
    (
        "system",
        "cyclictest's -s: lowers into timer = nanosleep or itimer",
    ),
    ("posix_timers", "cyclictest's -x: lowers into timer = posix"),
    ("mlockall", "cyclictest's -m: memory is locked by default"),
];

impl MeasureArgs {
    /// The timer these flags ask for: --timer, or one of cyclictest's
    /// -r, -s, -x (refused together).
    fn timer(&self) -> Result<Option<TimerMethod>> {
        let compat = [
            (self.relative, TimerMethod::Rel),
            (self.posix_timers, TimerMethod::Posix),
            (
                self.system,
                if self.nanosleep {
                    TimerMethod::Nanosleep
                } else {
                    TimerMethod::Itimer
                },
            ),
        ];
        let chosen: Vec<TimerMethod> = compat
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, m)| *m)
            .collect();
        let timer = self.settings.timer;
        if chosen.len() > 1 || (timer.is_some() && !chosen.is_empty()) {
            bail!("conflicting timer options: choose one of --timer, -r, -s, -x");
        }
        Ok(timer.or(chosen.first().copied()))
    }

    /// The measurement these flags describe, saved in `db` (`--db`):
    /// the settings, with the timer cyclictest's flags ask for.
    pub fn settings(&self, db: Option<&Path>) -> Result<Settings> {
        Ok(Settings {
            timer: self.timer()?,
            db: db.map(Path::to_path_buf),
            ..self.settings.clone()
        })
    }

    /// The measurement these flags ask for, recorded with this process's
    /// command line.
    pub fn request(&self, db: Option<&Path>) -> Result<Request> {
        let mut request = self.settings(db)?.request()?;
        request.command_line = crate::redact::own_command_line();
        Ok(request)
    }
}

/// clap value parser for `--host`: a non-empty name without control
/// characters, at most 255 bytes.
pub(super) fn host_name(s: &str) -> Result<String, crate::measure::settings::ValueError> {
    crate::measure::settings::parse::host(s)
}

/// How `measure` shows its run (the flags that are no setting).
#[derive(Clone, Copy, Debug, Default)]
pub struct Display {
    /// `-q`.
    pub quiet: bool,
    /// `--live`.
    pub live: bool,
    /// `--all`: a row for every thread.
    pub all: bool,
}

pub fn run(args: &MeasureArgs, db: Option<&Path>) -> Result<Exit> {
    let request = args.request(db)?;
    let warmup_ns = args.settings.warmup_ns.unwrap_or(0);
    if let Some(d) = args.settings.duration_ns
        && warmup_ns > 0
        && warmup_ns >= d
        // Above the maximum, the plan refuses it: one message, not two.
        && warmup_ns <= crate::engine::plan::MAX_WARMUP_NS
    {
        eprintln!(
            "rtscope: warning: --warmup {} is as long as -D {} or longer: the run lasts {} and only its last {} is measured",
            crate::units::fmt_duration(warmup_ns),
            crate::units::fmt_duration(d),
            crate::units::fmt_duration(warmup_ns.saturating_add(d)),
            crate::units::fmt_duration(d)
        );
    }
    let display = Display {
        quiet: args.quiet,
        live: args.live,
        all: args.all,
    };
    run_request(request, display, &args.metrics, None)
}

/// Measure `settings` (a remote run's, read from its file); the run's
/// uuid is written to `uuid_file` as soon as it is known.
pub fn run_settings(
    settings: &Settings,
    display: Display,
    metrics: &super::metrics::MetricsArgs,
    uuid_file: Option<&Path>,
) -> Result<Exit> {
    run_request(settings.request()?, display, metrics, uuid_file)
}

fn run_request(
    request: Request,
    display: Display,
    metrics_args: &super::metrics::MetricsArgs,
    uuid_file: Option<&Path>,
) -> Result<Exit> {
    // Timer signals are taken synchronously by measuring threads: block
    // them before any thread exists (helper threads inherit the mask), so
    // a process-wide SIGALRM can never land on a thread with the default
    // action. Ctrl-C and friends only ask to stop, from now on.
    let _ = crate::sys::signal::timer_signals().block();
    let signals = Signals::install().context("installing signal handlers")?;
    // Before anything is touched: a port in use is exit 2 here.
    let metrics = metrics_args.start()?;
    let session = Session::prepare(request, &signals.stop)?;
    if let Some(f) = uuid_file {
        std::fs::write(f, format!("{}\n", session.context().run_uuid))
            .with_context(|| format!("writing {}", f.display()))?;
    }
    let mode = LiveMode::choose(display.quiet, display.live);
    let mut live = LiveObserver::new(
        mode,
        session.plan(),
        session.context(),
        signals.clone(),
        if display.all {
            crate::report::summary::render_all
        } else {
            crate::report::summary::render
        },
        Rows::from_all(display.all),
    );
    let outcome = match &metrics {
        Some(m) => {
            let mut exporter = MetricsObserver::new(m.feed(), session.plan(), session.context());
            session.run(
                &mut Fanout::new(vec![&mut live, &mut exporter]),
                &signals.stop,
            )?
        }
        None => session.run(&mut live, &signals.stop)?,
    };
    // A closed standard output (`| head`) must not turn into an error now
    // that everything is written.
    let table = outcome.summary_text(Rows::from_all(display.all));
    if outcome.stdout_taken {
        let _ = std::io::stderr().write_all(table.as_bytes());
    } else {
        let _ = std::io::stdout().write_all(table.as_bytes());
    }
    for e in &outcome.thread_errors {
        eprintln!("rtscope: error: {e}");
    }
    metrics_args.linger(&metrics);
    match outcome.status() {
        Status::Ok => Ok(Exit::Ok),
        Status::LimitExceeded => Ok(Exit::LimitExceeded),
        Status::NotWritten(failures) => bail!("{}", failures.join("; ")),
        Status::ThreadFailed => {
            bail!("measuring stopped on an error; the results above cover the time before it")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::settings::{ALIASES, KEYS};
    use crate::trace::EventSet;
    use clap::{CommandFactory, Parser};
    use std::path::PathBuf;

    #[derive(Parser, Debug)]
    #[command(name = "measure", disable_help_flag = true)]
    struct Line {
        #[command(flatten)]
        args: MeasureArgs,
    }

    fn parsed(words: &[&str]) -> MeasureArgs {
        Line::try_parse_from(std::iter::once("measure").chain(words.iter().copied()))
            .unwrap()
            .args
    }

    /// Every long option of `measure` is a key of Settings (so studies
    /// and later remote runs take it) or excluded with a reason; every
    /// key of Settings is a long option (`db` the global one).
    #[test]
    fn long_options_and_settings_keys_are_in_step() {
        let command = Line::command();
        let mut longs: Vec<&str> = Vec::new();
        for a in command.get_arguments() {
            let long = a
                .get_long()
                .expect("measure's options all have a long name");
            longs.push(long);
            let excluded = NOT_SETTINGS.iter().any(|(k, _)| *k == long);
            assert!(
                KEYS.iter().any(|k| *k == long) != excluded,
                "--{long}: make it a key of measure::Settings, or say in NOT_SETTINGS why not"
            );
            for alias in a.get_all_aliases().unwrap_or_default() {
                assert!(
                    excluded || ALIASES.iter().any(|p| *p == (alias, long)),
                    "alias --{alias} of --{long} is not read by Settings"
                );
            }
        }
        let global = crate::cli::Cli::command();
        assert!(global.get_arguments().any(|a| a.get_long() == Some("db")));
        for key in KEYS.iter().filter(|k| **k != "db") {
            assert!(
                longs.contains(key),
                "Settings key '{key}' is no option of measure"
            );
        }
        for (k, _) in NOT_SETTINGS {
            assert!(
                longs.contains(k),
                "NOT_SETTINGS names '{k}', no option of measure"
            );
        }
    }

    /// The flags' defaults are Settings' defaults.
    #[test]
    fn no_flags_ask_for_the_default_settings() {
        let mut from_flags = parsed(&[]).request(None).unwrap();
        let mut default = Settings::default().request().unwrap();
        from_flags.command_line.clear();
        default.command_line.clear();
        assert_eq!(format!("{from_flags:?}"), format!("{default:?}"));
    }

    /// What cyclictest's flags lower into.
    #[test]
    fn cyclictest_s_flags_lower_into_settings() {
        let s = parsed(&[
            "-a",
            "-t",
            "-r",
            "-h",
            "50",
            "--tag",
            "a=1",
            "--no-dma-latency",
        ])
        .settings(Some(Path::new("x.db")))
        .unwrap();
        assert_eq!((s.affinity, s.threads), (None, None));
        assert_eq!(s.timer, Some(TimerMethod::Rel));
        assert_eq!(s.histogram, Some(50));
        assert_eq!(s.tags, [("a".to_string(), "1".to_string())]);
        assert_eq!((s.latency_us, s.no_dma_latency), (None, true));
        assert_eq!(s.db, Some(PathBuf::from("x.db")));
        let e = parsed(&["-r", "--timer", "abs"])
            .settings(None)
            .unwrap_err();
        assert!(e.to_string().contains("conflicting timer options"), "{e}");
        let s = parsed(&[
            "-s",
            "-n",
            "-a",
            "1",
            "--explain",
            "--explain-events",
            "full",
        ])
        .settings(None)
        .unwrap();
        assert_eq!(s.timer, Some(TimerMethod::Nanosleep));
        assert_eq!(s.affinity, Some(vec![1]));
        assert_eq!(s.explain_events, Some(EventSet::Full));
        assert_eq!(s.explain_ns, Some(100_000));
        // Flags and a file read the same settings.
        let file = Settings::from_table(s.to_table()).unwrap();
        assert_eq!(file, s);
    }
}
