//! `rtscope measure`: flags (cyclictest's common ones keep their meaning),
//! their conversion to a measuring [`Request`], and the [`Session`]'s
//! outcome to printed text and an exit code.

use super::Exit;
use super::{cpulist, duration};
use crate::engine::{Fanout, Policy, TimerMethod};
use crate::measure::{Request, Session, Settings, Status};
use crate::metrics::MetricsObserver;
use crate::sys::clock::Clock;
use crate::text::rank::Rows;
use crate::trace::EventSet;
use crate::ui::live::{LiveMode, LiveObserver, Signals};
use crate::units::CpuList;
use anyhow::{Context, Result, bail};
use clap::{ArgAction, Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::measure::settings::parse::{clock, deadline, micros, policy, timer};

/// `--explain-events`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExplainEventsArg {
    #[default]
    Lean,
    Full,
}

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
    /// Pin threads to these CPUs, round-robin (e.g. 2-3 or 0,2). Without a
    /// list, or without -a: every CPU this process may use.
    #[arg(short = 'a', long = "affinity", value_name = "CPULIST", num_args = 0..=1, value_parser = cpulist)]
    pub affinity: Option<Option<CpuList>>,

    /// Number of threads. Without N (or without -t): one per CPU of -a.
    /// At most 64 per CPU measured, 1024 in all.
    #[arg(short = 't', long = "threads", value_name = "N", num_args = 0..=1)]
    pub threads: Option<Option<usize>>,

    /// Pin the main (non-real-time) thread to these CPUs.
    #[arg(long = "main-affinity", alias = "mainaffinity", value_name = "CPULIST", value_parser = cpulist)]
    pub main_affinity: Option<CpuList>,

    /// Period of the threads; a bare number is in microseconds.
    #[arg(short = 'i', long = "interval", value_name = "DUR", default_value = "1000", value_parser = micros)]
    pub interval_ns: u64,

    /// Added to the interval of each next thread (bare number: us).
    /// Default 0: every thread at the same interval (cyclictest: 500us).
    #[arg(short = 'd', long = "distance", value_name = "DUR", default_value = "0", value_parser = micros)]
    pub distance_ns: u64,

    /// Scheduling policy: other, batch, idle, fifo, rr or deadline.
    #[arg(long = "policy", value_name = "NAME", default_value = "fifo", value_parser = policy)]
    pub policy: Policy,

    /// Priority of the threads (fifo, rr: 1-99). Default 95; 0 for other.
    #[arg(
        short = 'p',
        long = "priority",
        value_name = "PRIO",
        allow_negative_numbers = true
    )]
    pub priority: Option<i32>,

    /// Give thread N priority PRIO-N instead of PRIO for all.
    #[arg(long = "priospread")]
    pub priospread: bool,

    /// SCHED_DEADLINE runtime (default: 10% of the period, at least 10us).
    #[arg(long = "dl-runtime", value_name = "DUR", value_parser = micros)]
    pub dl_runtime_ns: Option<u64>,
    /// SCHED_DEADLINE relative deadline (default: the period).
    #[arg(long = "dl-deadline", value_name = "DUR", value_parser = micros)]
    pub dl_deadline_ns: Option<u64>,
    /// SCHED_DEADLINE period (default: the interval).
    #[arg(long = "dl-period", value_name = "DUR", value_parser = micros)]
    pub dl_period_ns: Option<u64>,

    /// How to wait: abs (clock_nanosleep TIMER_ABSTIME), rel
    /// (clock_nanosleep relative), nanosleep, itimer (setitimer + SIGALRM,
    /// one thread), posix (timer_create + signal), timerfd.
    #[arg(long = "timer", value_name = "METHOD", value_parser = timer)]
    pub timer: Option<TimerMethod>,

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

    /// Clock of deadlines and wake-ups: monotonic (0) or realtime (1).
    #[arg(short = 'c', long = "clock", value_name = "CLOCK", default_value = "monotonic", value_parser = clock)]
    pub clock: Clock,

    /// Run for this long (bare number: seconds; 10m, 1h, 2d). Default:
    /// until Ctrl-C.
    #[arg(short = 'D', long = "duration", value_name = "DUR", value_parser = duration)]
    pub duration_ns: Option<u64>,

    /// Stop each thread after this many wake-ups.
    #[arg(short = 'l', long = "loops", value_name = "N")]
    pub loops: Option<u64>,

    /// Measure this long first and keep it apart from the result (bare
    /// number: seconds).
    #[arg(long = "warmup", value_name = "DUR", default_value = "0", value_parser = duration)]
    pub warmup_ns: u64,

    /// Length of a window of the min/avg/max-over-time series.
    #[arg(long = "window", value_name = "DUR", default_value = "1s", value_parser = duration)]
    pub window_ns: u64,

    /// Record only the late wake-up, not the periods it missed
    /// (cyclictest's counting). Missed periods are still counted.
    #[arg(long = "no-omission-correction")]
    pub no_omission_correction: bool,

    /// cyclictest's -m: lock memory (rtscope's default anyway).
    #[arg(short = 'm', long = "mlockall")]
    pub mlockall: bool,
    /// Do not lock memory (mlockall) before measuring.
    #[arg(long = "no-mlock", conflicts_with = "mlockall")]
    pub no_mlock: bool,

    /// Value held on /dev/cpu_dma_latency during the run, in us.
    #[arg(long = "latency", value_name = "US", default_value_t = 0)]
    pub latency_us: i32,
    /// Leave /dev/cpu_dma_latency alone (CPUs may enter deep idle states).
    #[arg(long = "no-dma-latency", conflicts_with = "latency_us")]
    pub no_dma_latency: bool,

    /// Stop the run when a latency exceeds this (bare number: us); exit 1.
    #[arg(short = 'b', long = "breaktrace", value_name = "DUR", value_parser = micros)]
    pub break_ns: Option<u64>,
    /// With -b: write a marker into the kernel trace and stop tracing.
    #[arg(long = "tracemark")]
    pub tracemark: bool,

    /// Exit 1 if any thread's maximum exceeds this (bare number: us). The
    /// run goes on; everything is written first.
    #[arg(long = "max-latency", value_name = "DUR", value_parser = micros)]
    pub max_latency_ns: Option<u64>,

    /// The deadline a wake-up is judged against (bare number: us; 250us,
    /// 2ms). Default: the period, past which a wake-up has missed its
    /// next deadline. The verdict says first whether it was met; it sets
    /// no exit status (--max-latency does). Recorded with the run.
    #[arg(long = "deadline", value_name = "DUR", value_parser = deadline)]
    pub deadline_ns: Option<u64>,

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

    /// Print cyclictest's histogram (N rows of 1us) on standard output at
    /// the end (the summary goes to standard error).
    #[arg(short = 'h', long = "histogram", value_name = "N")]
    pub histogram: Option<usize>,
    /// Like -h, with an extra all-threads column.
    #[arg(
        short = 'H',
        long = "histofall",
        value_name = "N",
        conflicts_with = "histogram"
    )]
    pub histofall: Option<usize>,
    /// Write the cyclictest histogram here instead of standard output
    /// (rows: -h N, default 1000).
    #[arg(long = "histfile", value_name = "FILE")]
    pub histfile: Option<PathBuf>,

    /// Write the run record here; - for standard output. The layout is
    /// rtscope's run record (`rtscope schema`), not cyclictest's.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Isolate these CPUs for this run only and measure on them (cpusets,
    /// IRQs, governor ...: as `rtscope tune isolate`); everything is put
    /// back at the end, on Ctrl-C, SIGTERM or an error. Needs root.
    #[arg(long = "isolate", value_name = "CPULIST", value_parser = cpulist)]
    pub isolate: Option<CpuList>,

    /// Explain every wake-up at least ABOVE late (bare number: us; default
    /// 100us) from kernel trace events while the run goes on: what ran
    /// instead, which IRQ, for how long. Uses a tracefs instance of its
    /// own (mounted if needed, removed at the end). Needs root.
    #[arg(long = "explain", value_name = "ABOVE", num_args = 0..=1, default_missing_value = "100", value_parser = micros)]
    pub explain_ns: Option<u64>,

    /// Trace events --explain records: "lean" (the default) leaves out
    /// the events every timer wake-up of a measured thread writes before
    /// it runs (timer interrupt, hrtimer expiry, wake-ups) and filters
    /// out its switches to idle, so the thread pays next to nothing;
    /// "full" records them too, naming the timer's own part and the
    /// wake-up, at a cost on the project's VM of about a tenth of the
    /// average latency at 1ms and a third at 100us. See docs/explain.md.
    #[arg(
        long = "explain-events",
        value_name = "SET",
        value_enum,
        default_value = "lean",
        requires = "explain_ns"
    )]
    pub explain_events: ExplainEventsArg,

    /// Do not save the run in the run store (by default every run is
    /// saved, as it goes: see --checkpoint and --db).
    #[arg(long = "no-save")]
    pub no_save: bool,

    /// Measure even when another rtscope measures the same CPUs (by
    /// default refused, naming it: both measurements would be disturbed).
    #[arg(long = "force")]
    pub force: bool,
    /// What is being tried, shown by `rtscope runs` and in reports (e.g.
    /// "PREEMPT_RT, CPU 1 isolated").
    #[arg(long = "label", value_name = "TEXT")]
    pub label: Option<String>,
    /// Host name the run records (default: this machine's, from
    /// /proc/sys/kernel/hostname): the board's name in a shared store,
    /// selected later with `rtscope runs --host NAME`.
    #[arg(long = "host", value_name = "NAME", value_parser = host_name)]
    pub host: Option<String>,
    /// KEY=VALUE fact about the run (repeatable), e.g. --tag load=hackbench.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = crate::measure::settings::parse::tag)]
    pub tags: Vec<(String, String)>,
    /// Save the state of the run in the store every DUR while it runs
    /// (bare number: seconds; at least 1s): a killed run or a power cut
    /// loses at most this much.
    #[arg(long = "checkpoint", value_name = "DUR", default_value = "10s", value_parser = duration, conflicts_with = "no_save")]
    pub checkpoint_ns: u64,

    #[command(flatten)]
    pub load: super::load::LoadArgs,

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
        if chosen.len() > 1 || (self.timer.is_some() && !chosen.is_empty()) {
            bail!("conflicting timer options: choose one of --timer, -r, -s, -x");
        }
        Ok(self.timer.or(chosen.first().copied()))
    }

    /// The measurement these flags describe, saved in `db` (`--db`).
    pub fn settings(&self, db: Option<&Path>) -> Result<Settings> {
        Ok(Settings {
            affinity: self.affinity.clone().flatten().map(|c| c.0),
            threads: self.threads.flatten(),
            main_affinity: self.main_affinity.clone().map(|c| c.0),
            interval_ns: Some(self.interval_ns),
            distance_ns: Some(self.distance_ns),
            policy: Some(self.policy),
            priority: self.priority,
            priospread: self.priospread,
            dl_runtime_ns: self.dl_runtime_ns,
            dl_deadline_ns: self.dl_deadline_ns,
            dl_period_ns: self.dl_period_ns,
            timer: self.timer()?,
            clock: Some(self.clock),
            duration_ns: self.duration_ns,
            loops: self.loops,
            warmup_ns: Some(self.warmup_ns),
            window_ns: Some(self.window_ns),
            no_omission_correction: self.no_omission_correction,
            no_mlock: self.no_mlock,
            latency_us: (!self.no_dma_latency).then_some(self.latency_us),
            no_dma_latency: self.no_dma_latency,
            break_ns: self.break_ns,
            tracemark: self.tracemark,
            max_latency_ns: self.max_latency_ns,
            deadline_ns: self.deadline_ns,
            histogram: self.histogram,
            histofall: self.histofall,
            histfile: self.histfile.clone(),
            json: self.json.clone(),
            isolate: self.isolate.clone().map(|c| c.0),
            explain_ns: self.explain_ns,
            explain_events: self.explain_ns.map(|_| match self.explain_events {
                ExplainEventsArg::Full => EventSet::Full,
                ExplainEventsArg::Lean => EventSet::Lean,
            }),
            no_save: self.no_save,
            force: self.force,
            label: self.label.clone(),
            host: self.host.clone(),
            tags: self.tags.clone(),
            checkpoint_ns: (!self.no_save).then_some(self.checkpoint_ns),
            load: self.load.load.clone(),
            load_file: self.load.load_file.clone(),
            load_cpus: self.load.load_cpus.clone().map(|c| c.0),
            load_dir: self.load.load_dir.clone(),
            db: db.map(Path::to_path_buf),
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
    if let Some(d) = args.duration_ns
        && args.warmup_ns > 0
        && args.warmup_ns >= d
        // Above the maximum, the plan refuses it: one message, not two.
        && args.warmup_ns <= crate::engine::plan::MAX_WARMUP_NS
    {
        eprintln!(
            "rtscope: warning: --warmup {} is as long as -D {} or longer: the run lasts {} and only its last {} is measured",
            crate::units::fmt_duration(args.warmup_ns),
            crate::units::fmt_duration(d),
            crate::units::fmt_duration(args.warmup_ns.saturating_add(d)),
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
    use clap::{CommandFactory, Parser};

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
                KEYS.contains(&long) != excluded,
                "--{long}: make it a key of measure::Settings, or say in NOT_SETTINGS why not"
            );
            for alias in a.get_all_aliases().unwrap_or_default() {
                assert!(
                    excluded || ALIASES.contains(&(alias, long)),
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
