//! `rtscope measure`: flags (cyclictest's common ones keep their meaning),
//! their conversion to a [`MeasureConfig`], and the run from flags to
//! files and exit code.

use super::Exit;
use super::{allowed_cpus, cpulist, duration};
use crate::engine::build::{self, RecordContext};
use crate::engine::{self, Fanout, MeasureConfig, Plan, Policy, TimerMethod};
use crate::load::{LoadSession, Verbosity};
use crate::record::{RunRecord, RunStatus};
use crate::report::{histfile, summary};
use crate::store::Store;
use crate::store::checkpoint::RunSaver;
use crate::sys::clock::Clock;
use crate::sysinfo::{SysRoot, fingerprint};
use crate::ui::live::{LiveMode, LiveObserver, Signals};
use crate::units::{CpuList, parse_micros_ns};
use crate::{output, record};
use anyhow::{Context, Result, bail};
use clap::{ArgAction, Args};
use std::io::Write;
use std::path::PathBuf;

fn micros(s: &str) -> Result<u64, String> {
    parse_micros_ns(s).map_err(|e| e.to_string())
}

fn policy(s: &str) -> Result<Policy, String> {
    Policy::parse(s).ok_or_else(|| {
        format!("unknown policy '{s}': use other, batch, idle, fifo, rr or deadline")
    })
}

fn timer(s: &str) -> Result<TimerMethod, String> {
    TimerMethod::parse(s).ok_or_else(|| {
        format!("unknown timer '{s}': use abs, rel, nanosleep, itimer, posix or timerfd")
    })
}

fn clock(s: &str) -> Result<Clock, String> {
    match s {
        "0" | "monotonic" => Ok(Clock::Monotonic),
        "1" | "realtime" => Ok(Clock::Realtime),
        _ => Err(format!(
            "unknown clock '{s}': use monotonic (0) or realtime (1)"
        )),
    }
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

    /// No live display; print only the summary at the end.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Live display even when standard error is not a terminal (one line
    /// per thread per second, on standard error).
    #[arg(long = "live", conflicts_with = "quiet")]
    pub live: bool,

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

    /// Do not save the run in the run store (by default every run is
    /// saved, as it goes: see --checkpoint and --db).
    #[arg(long = "no-save")]
    pub no_save: bool,
    /// What is being tried, shown by `rtscope runs` and in reports (e.g.
    /// "PREEMPT_RT, CPU 1 isolated").
    #[arg(long = "label", value_name = "TEXT")]
    pub label: Option<String>,
    /// KEY=VALUE fact about the run (repeatable), e.g. --tag load=hackbench.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = super::import::tag)]
    pub tags: Vec<(String, String)>,
    /// Save the state of the run in the store every DUR while it runs
    /// (bare number: seconds; at least 1s): a killed run or a power cut
    /// loses at most this much.
    #[arg(long = "checkpoint", value_name = "DUR", default_value = "10s", value_parser = duration, conflicts_with = "no_save")]
    pub checkpoint_ns: u64,

    #[command(flatten)]
    pub load: super::load::LoadArgs,

    /// Print help.
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
}

impl MeasureArgs {
    /// The engine configuration these flags ask for.
    pub fn config(&self) -> Result<MeasureConfig> {
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
        let timer = self
            .timer
            .or(chosen.first().copied())
            .unwrap_or(TimerMethod::Abs);
        let cpus = self.affinity.clone().flatten().map(|c| c.0);
        Ok(MeasureConfig {
            cpus,
            threads: self.threads.flatten(),
            interval_ns: self.interval_ns,
            distance_ns: self.distance_ns,
            policy: self.policy,
            priority: self.priority,
            priospread: self.priospread,
            dl_runtime_ns: self.dl_runtime_ns,
            dl_deadline_ns: self.dl_deadline_ns,
            dl_period_ns: self.dl_period_ns,
            timer,
            clock: self.clock,
            duration_ns: self.duration_ns,
            loops: self.loops,
            warmup_ns: self.warmup_ns,
            window_ns: self.window_ns,
            omission_correction: !self.no_omission_correction,
            lock_memory: !self.no_mlock,
            dma_latency_us: if self.no_dma_latency {
                None
            } else {
                Some(self.latency_us)
            },
            dma_path: std::env::var_os("RTSCOPE_CPU_DMA_LATENCY")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(crate::sys::dma::DEFAULT_PATH)),
            break_ns: self.break_ns,
            tracemark: self.tracemark,
            main_affinity: self.main_affinity.clone().map(|c| c.0),
        })
    }

    fn hist_rows(&self) -> Option<(usize, bool)> {
        match (self.histogram, self.histofall, &self.histfile) {
            (Some(n), _, _) => Some((n, false)),
            (_, Some(n), _) => Some((n, true)),
            (None, None, Some(_)) => Some((1000, false)),
            _ => None,
        }
    }
}

pub fn run(args: &MeasureArgs) -> Result<Exit> {
    // Timer signals are taken synchronously by measuring threads: block
    // them before any thread exists (helper threads inherit the mask), so
    // a process-wide SIGALRM can never land on a thread with the default
    // action. Ctrl-C and friends only ask to stop, from now on.
    let _ = crate::sys::signal::timer_signals().block();
    let signals = Signals::install().context("installing signal handlers")?;
    let config = args.config()?;
    // Everything that can be refused is checked before the system is
    // touched (loads, isolation) and before anything is measured.
    let allowed = allowed_cpus()?;
    let check = Plan::build(config.clone(), &allowed)?;
    // Loads run beside the measurement: under --isolate, on the other CPUs.
    let load_cpus: Vec<usize> = match &args.isolate {
        Some(iso) => allowed
            .iter()
            .copied()
            .filter(|c| !iso.0.contains(c))
            .collect(),
        None => allowed.clone(),
    };
    if let (Some(iso), Some(cpus)) = (&args.isolate, &args.load.load_cpus)
        && let Some(c) = cpus.0.iter().find(|c| iso.0.contains(c))
    {
        bail!(
            "--load-cpus includes CPU {c}, which --isolate keeps for measuring: leave --load-cpus out (loads then run on the other CPUs)"
        );
    }
    let load_plan = args.load.plan(&load_cpus)?;
    if load_plan.is_some()
        && let Some(why) = engine::preflight::realtime_refusal(&check)
    {
        bail!("{why}");
    }
    if let Some((rows, _)) = args.hist_rows()
        && (rows == 0 || rows > 10_000_000)
    {
        bail!("-h/--histogram rows must be between 1 and 10000000 (got {rows})");
    }
    if !args.no_save && args.checkpoint_ns < crate::store::checkpoint::MIN_INTERVAL_NS {
        bail!(
            "--checkpoint {} is below the 1s minimum",
            crate::units::fmt_duration(args.checkpoint_ns)
        );
    }
    for (path, what) in [(&args.json, "--json"), (&args.histfile, "--histfile")] {
        if let Some(p) = path {
            output::check_writable(p, what)?;
        }
    }
    let tags = super::import::tag_map(&args.tags)?;
    let store = if args.no_save {
        None
    } else {
        Some(
            Store::open_default()
                .context("the run store cannot be used (--no-save measures without it)")?,
        )
    };
    let interrupted =
        || anyhow::anyhow!("stopped by a signal before measuring began; nothing was measured");
    // The load starts first, so that isolation (which moves every task)
    // puts it on the housekeeping CPUs like the rest of the system, and the
    // first measured period is already loaded. It stops after measuring,
    // on every path (stop() below, or its Drop on errors).
    let mut load = match load_plan {
        Some(mut p) => {
            if !config.policy.is_realtime() {
                // Keep the load below a SCHED_OTHER measurement too.
                p.nice = 19;
            }
            Some(LoadSession::start(p, Verbosity::Problems)?)
        }
        None => None,
    };
    if signals.stop_requested() {
        return Err(interrupted());
    }
    // Reverted when dropped: at the end, on an error, or on a panic.
    let isolation = crate::tune::session::for_measure(
        args.isolate.as_ref().map(|c| c.0.as_slice()),
        config.cpus.as_deref(),
        config.main_affinity.is_some(),
        &signals.stop,
    )?;
    if signals.stop_requested() {
        return Err(interrupted());
    }
    // Under isolation this process now sits on the isolated CPUs: the
    // measuring threads are placed there.
    let plan = Plan::build(config, &allowed_cpus()?)?;
    let ctx = RecordContext {
        run_uuid: record::new_run_uuid(),
        command_line: std::env::args().collect(),
        label: args.label.clone(),
        tags,
        max_latency_ns: args.max_latency_ns,
        // Taken after isolation, so it records the tuning in force.
        fingerprint: fingerprint::take(&SysRoot::host()),
        ..Default::default()
    };
    // The run is recorded in the store before measuring: a store that
    // cannot be written is found now, not at the end of a long run.
    let mut saver = match store {
        Some(store) => Some(RunSaver::begin(store, &plan, &ctx, args.checkpoint_ns)?),
        None => None,
    };
    if let (Some(s), Some(l)) = (saver.as_mut(), &load) {
        s.attach_load(l.shared_record());
    }
    let hist_on_stdout = args.hist_rows().is_some() && args.histfile.is_none();
    let json_on_stdout = args.json.as_deref().is_some_and(|p| p.as_os_str() == "-");
    let mode = LiveMode::choose(args.quiet, args.live);
    let mut observer = match LiveObserver::new(mode, &plan, &ctx, signals.clone()) {
        Ok(o) => o,
        Err(e) => {
            if let Some(s) = saver {
                s.abandon();
            }
            return Err(e);
        }
    };
    let outcome = {
        let mut live = crate::tune::session::observe(isolation.as_ref(), &mut observer);
        let mut parts: Vec<&mut dyn engine::Observer> = vec![&mut live];
        if let Some(s) = saver.as_mut() {
            parts.push(s);
        }
        if let Some(l) = load.as_mut() {
            parts.push(l);
        }
        engine::run(&plan, &mut Fanout::new(parts))
    };
    observer.finish();
    if let Some(l) = load.as_mut() {
        l.stop();
    }
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            // Nothing was measured: the run leaves no trace in the store.
            if let Some(s) = saver {
                s.abandon();
            }
            return Err(e.into());
        }
    };

    let mut ctx = ctx;
    ctx.warnings = outcome.warnings.clone();
    ctx.warnings.extend(outcome.thread_errors.iter().cloned());
    if let Some(l) = &load {
        ctx.warnings.extend(l.run_warnings());
    }
    let mut rec: RunRecord = build::record(
        &plan,
        &outcome.snapshot,
        RunStatus::Complete,
        outcome.end_reason,
        Some(outcome.ended_unix_ns),
        &ctx,
    );
    rec.limits.break_event = outcome.break_event;
    rec.load = load.as_ref().map(|l| l.record(Some(rec.duration_ns)));

    // Write everything before deciding the exit code; a failure of one
    // output never keeps the others (or the store) from being written.
    let mut failures = Vec::new();
    if let Some(p) = &args.json {
        let written = serde_json::to_string(&rec)
            .context("serializing the run record")
            .and_then(|text| output::write_atomic(p, format!("{text}\n").as_bytes()));
        if let Err(e) = written {
            failures.push(format!("{e:#}"));
        }
    }
    if let Some((rows, all)) = args.hist_rows() {
        let target = args.histfile.clone().unwrap_or_else(|| PathBuf::from("-"));
        let written = histfile::render(&rec, rows, all)
            .map_err(anyhow::Error::msg)
            .and_then(|text| output::write_atomic(&target, text.as_bytes()));
        if let Err(e) = written {
            failures.push(format!("{e:#}"));
        }
    }
    let mut saved = None;
    if let Some(s) = saver {
        let path = s.store_path().to_path_buf();
        match s.finish(&rec) {
            Ok(id) => saved = Some((id, path)),
            Err(e) => failures.push(format!(
                "the run could not be saved in the store: {e} (its last checkpoint is there, marked interrupted)"
            )),
        }
    }
    let mut table = summary::render(&rec);
    if let Some((id, path)) = saved {
        table.push_str(&format!(
            "saved as run {id} in {} (rtscope runs show {id})\n",
            path.display()
        ));
    }
    if let Some(l) = &load {
        table.push_str(&l.describe());
        table.push('\n');
    }
    // A closed standard output (`| head`) must not turn into an error now
    // that everything is written.
    if hist_on_stdout || json_on_stdout {
        let _ = std::io::stderr().write_all(table.as_bytes());
    } else {
        let _ = std::io::stdout().write_all(table.as_bytes());
    }
    for e in &outcome.thread_errors {
        eprintln!("rtscope: error: {e}");
    }
    if !failures.is_empty() {
        bail!("{}", failures.join("; "));
    }
    if !outcome.thread_errors.is_empty() {
        bail!("measuring stopped on an error; the results above cover the time before it");
    }
    Ok(if rec.limits.exceeded || rec.limits.break_event.is_some() {
        Exit::LimitExceeded
    } else {
        Exit::Ok
    })
}
