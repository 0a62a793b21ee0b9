//! `characterize`: the platform tables of seed 001 (mutex, priority
//! changes, timers: min/avg/max in ns) plus the newer rows (clock read
//! cost, contended hand-off, thread wake-up, context switch, OS noise,
//! priority inversion with and without PI), each benchmark kept as a
//! lossless histogram.
//!
//! This module owns the registry of benchmarks (a plain static list, one
//! file per benchmark that describes itself), the checks of the options
//! and the run of a selection of them ([`run_benches`]); `session` owns
//! one characterization from [`Settings`] to [`Outcome`] ([`run`]:
//! isolation, store, `--json`); `crate::characterization` owns the record
//! (its JSON has units in field names), `text`, `compare` and `html` its
//! views. It never parses flags or prints results: the command layer
//! passes [`Settings`] and a [`Progress`], and prints the [`Outcome`].

pub mod cause;
pub mod clock_gettime;
pub mod compare;
pub mod ctxswitch;
pub mod handoff;
pub mod harness;
pub mod html;
pub mod inversion;
pub mod mutex;
pub mod nanosleep;
pub mod noise;
pub mod session;
pub mod setschedparam;
pub mod setschedprio;
#[cfg(test)]
mod tests;
pub mod text;
pub mod wakeup;

use crate::engine::EngineError;
use crate::engine::run::Hygiene;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use thiserror::Error;

pub use crate::characterization::{
    BenchResult, Characterization, Check, Gap, InversionDetail, NoiseDetail, PiVerdict, SCHEMA,
    SparseHistogram, Stats, pi_verdict,
};
pub use session::{Outcome, Saved, Settings, run};

/// Why a characterization could not be made.
#[derive(Debug, Error)]
pub enum CharError {
    /// `--only` names a benchmark the registry does not have.
    #[error("unknown benchmark '{name}': valid names are {valid}")]
    UnknownBench { name: String, valid: String },
    /// Options that cannot work, refused before anything runs: a value
    /// out of range, CPUs offline or not allowed, options that do not go
    /// together. The text names the option and what to give.
    #[error("{0}")]
    Invalid(String),
    /// SCHED_FIFO at the asked priority is not allowed to this process
    /// ([`privilege_refusal`]: not root, no CAP_SYS_NICE, RLIMIT_RTPRIO
    /// too low).
    #[error("{0}")]
    Privilege(String),
    /// A system call of a benchmark or of its set-up failed (`what`: the
    /// call, with advice when there is some).
    #[error("{what} failed: {err}")]
    Sys { what: String, err: std::io::Error },
    /// A benchmark's thread ended because another of its threads failed
    /// (that one's error is the one reported).
    #[error("another thread of the benchmark failed to start")]
    Aborted,
    /// The CPUs this process may use cannot be read.
    #[error("sched_getaffinity failed")]
    Affinity(#[source] std::io::Error),
    /// `--explain`: kernel tracing could not start (no tracefs, not
    /// permitted, an event missing): the system's refusal, not an option.
    #[error("--explain: tracing could not start: {0}")]
    Explain(crate::trace::TraceError),
    /// Another rtscope measures these CPUs (or the locks failed).
    #[error(transparent)]
    CpusBusy(#[from] crate::cpulock::CpuLockError),
    /// `--isolate` could not be set up (the tuning's own error, with its
    /// causes).
    #[error("isolating the CPUs")]
    Isolation(#[source] crate::tune::session::IsolateError),
    /// The `--json` file cannot be written.
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    /// The characterization cannot be written as JSON (`--json`).
    #[error("serializing the characterization")]
    Serialize(#[source] serde_json::Error),
    /// The engine's hygiene (memory locking, cpu_dma_latency) failed
    /// other than by mlockall, which is [`CharError::Sys`].
    #[error(transparent)]
    Engine(EngineError),
}

/// One benchmark of the registry.
pub struct Bench {
    /// The name on the command line (`--only`) and in records.
    pub name: &'static str,
    /// The table it belongs to (seed 001 groups rows this way).
    pub group: Group,
    /// One line for `--help` and the docs.
    pub help: &'static str,
    /// What exactly is timed, for the report.
    pub measures: &'static str,
    pub run: fn(&Ctx) -> Result<BenchOutcome, CharError>,
}

/// The table a benchmark's rows are printed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Clock,
    Mutex,
    Priority,
    Timers,
    Threads,
    Noise,
    Inversion,
}

impl Group {
    pub fn title(self) -> &'static str {
        match self {
            Group::Clock => "Clock",
            Group::Mutex => "Mutexes",
            Group::Priority => "Priority changes",
            Group::Timers => "Timers",
            Group::Threads => "Threads",
            Group::Noise => "OS noise (busy loop, gaps between clock reads)",
            Group::Inversion => "Priority inversion (wait of the high-priority thread)",
        }
    }
}

/// Every benchmark, in the order they run and print.
pub const BENCHES: &[&Bench] = &[
    &clock_gettime::BENCH,
    &mutex::BENCH,
    &handoff::BENCH,
    &setschedparam::BENCH,
    &setschedprio::BENCH,
    &nanosleep::BENCH,
    &wakeup::BENCH,
    &ctxswitch::BENCH,
    &noise::BENCH,
    &inversion::BENCH,
];

/// The benchmark called `name`.
pub fn find(name: &str) -> Option<&'static Bench> {
    BENCHES.iter().copied().find(|b| b.name == name)
}

/// The valid names, comma-separated (for messages).
pub fn valid_names() -> String {
    BENCHES
        .iter()
        .map(|b| b.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Resolve `--only` names (all benchmarks when empty), in registry order.
pub fn select(names: &[String]) -> Result<Vec<&'static Bench>, CharError> {
    for n in names {
        if find(n).is_none() {
            return Err(CharError::UnknownBench {
                name: n.clone(),
                valid: valid_names(),
            });
        }
    }
    Ok(BENCHES
        .iter()
        .copied()
        .filter(|b| names.is_empty() || names.iter().any(|n| n == b.name))
        .collect())
}

/// What the command asks for.
#[derive(Clone, Debug)]
pub struct Options {
    pub only: Vec<String>,
    pub per_bench_ns: u64,
    pub interval_ns: u64,
    pub priority: i32,
    /// CPUs to use (checked against the CPUs this process may use).
    pub cpus: Vec<usize>,
    pub label: Option<String>,
    /// The host recorded (`--host`; none: this machine's name).
    pub host: Option<String>,
    pub command_line: Vec<String>,
    pub isolated_cpus: Option<Vec<usize>>,
    /// `--explain`: explain OS-noise gaps at least this long.
    pub explain_above_ns: Option<u64>,
}

/// What a benchmark sees.
pub struct Ctx<'a> {
    pub cpus: &'a [usize],
    pub per_bench_ns: u64,
    pub interval_ns: u64,
    pub priority: i32,
    /// The clock's read cost, subtracted from timed calls.
    pub clock_read_ns: u64,
    pub stop: &'a AtomicBool,
    /// Explain OS-noise gaps at least this long (`--explain`).
    pub explain_above_ns: Option<u64>,
    /// CPUs this process may use outside `cpus` (for the trace reader).
    pub housekeeping: Vec<usize>,
}

impl Ctx<'_> {
    /// The CPU single-CPU benchmarks run on: the first of `--cpus`.
    pub fn cpu(&self) -> usize {
        self.cpus[0]
    }

    /// Has the user asked to stop (Ctrl-C)?
    pub fn stopped(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// What one benchmark produced.
#[derive(Clone, Debug, Default)]
pub struct BenchOutcome {
    pub results: Vec<BenchResult>,
    pub checks: Vec<Check>,
}

/// Told as the characterization goes (the command prints).
pub trait Progress {
    /// Something that does not stop the characterization went wrong.
    fn warning(&mut self, _message: &str) {}
    fn started(&mut self, _c: &Characterization) {}
    fn bench_started(&mut self, _bench: &Bench) {}
    /// A benchmark ended: `c` holds it.
    fn bench_done(&mut self, _c: &Characterization, _bench: &Bench) {}
}

/// Check `opts` before anything runs.
pub fn validate(opts: &Options, allowed: &[usize]) -> Result<Vec<&'static Bench>, CharError> {
    let benches = select(&opts.only)?;
    if opts.per_bench_ns < 1_000_000 || opts.per_bench_ns > 3_600_000_000_000 {
        return Err(CharError::Invalid(format!(
            "-D {} ns per benchmark is out of range: give 1ms to 1h (e.g. -D 1s)",
            opts.per_bench_ns
        )));
    }
    if opts.interval_ns < 1_000 || opts.interval_ns > 1_000_000_000 {
        return Err(CharError::Invalid(format!(
            "--interval {} ns is out of range: give 1us to 1s",
            opts.interval_ns
        )));
    }
    if !(3..=99).contains(&opts.priority) {
        return Err(CharError::Invalid(format!(
            "--priority {} is out of range: give 3 to 99 (the inversion benchmark uses it and the two below it)",
            opts.priority
        )));
    }
    if opts.cpus.is_empty() {
        return Err(CharError::Invalid("--cpus is empty".into()));
    }
    if opts.explain_above_ns.is_some() && allowed.iter().all(|c| opts.cpus.contains(c)) {
        return Err(CharError::Invalid(
            "--explain needs a CPU outside --cpus for the trace reader (the busy loops hold theirs): give --cpus, e.g. --cpus 1".into(),
        ));
    }
    if let Some(bad) = opts.cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(CharError::Invalid(format!(
            "CPU {bad} is offline or not allowed to this process: valid CPUs are {}",
            crate::units::format_cpu_list(allowed)
        )));
    }
    Ok(benches)
}

/// Refusal when SCHED_FIFO at `priority` cannot be had.
pub fn privilege_refusal(priority: i32) -> Option<String> {
    if crate::engine::preflight::privileged() {
        return None;
    }
    let limit = crate::sys::sched::rtprio_limit()
        .ok()
        .and_then(|l| l.soft)
        .unwrap_or(u64::MAX);
    if limit >= priority as u64 {
        return None;
    }
    Some(format!(
        "characterize runs SCHED_FIFO threads at priority {priority} with memory locked: it needs root or CAP_SYS_NICE (RLIMIT_RTPRIO is {limit}); run it with sudo"
    ))
}

/// Run the selected benchmarks. `progress` hears of each as it ends;
/// `stop` set (Ctrl-C) ends the run after the current benchmark, with
/// `complete` false.
pub fn run_benches(
    opts: &Options,
    allowed: &[usize],
    stop: &AtomicBool,
    progress: &mut dyn Progress,
) -> Result<Characterization, CharError> {
    let benches = validate(opts, allowed)?;
    if let Some(why) = privilege_refusal(opts.priority) {
        return Err(CharError::Privilege(why));
    }
    let _hygiene = hold_hygiene()?;
    let clock_read_ns = harness::on_fifo(opts.cpus[0], opts.priority, || {
        Ok(harness::clock_read_cost_ns(200_000))
    })?;
    let start_mono = harness::now();
    let mut c = begun(opts, &benches, clock_read_ns);
    progress.started(&c);
    let ctx = Ctx {
        cpus: &opts.cpus,
        per_bench_ns: opts.per_bench_ns,
        interval_ns: opts.interval_ns,
        priority: opts.priority,
        clock_read_ns,
        stop,
        explain_above_ns: opts.explain_above_ns,
        housekeeping: allowed
            .iter()
            .copied()
            .filter(|c| !opts.cpus.contains(c))
            .collect(),
    };
    for b in &benches {
        if ctx.stopped() {
            return Ok(c);
        }
        progress.bench_started(b);
        let out = (b.run)(&ctx)?;
        c.results.extend(out.results);
        c.checks.extend(out.checks);
        c.pi_verdict = pi_verdict(&c.results);
        c.duration_ns = harness::now() - start_mono;
        progress.bench_done(&c, b);
    }
    c.complete = !ctx.stopped();
    Ok(c)
}

/// Lock memory and keep the CPUs out of deep idle states, as measure
/// does, with the engine's guard: both are put back when it drops. The
/// PM QoS request is best effort and, as ever here, silent when it
/// cannot be held.
fn hold_hygiene() -> Result<Hygiene, CharError> {
    let dma = (Path::new(crate::sys::dma::DEFAULT_PATH), 0);
    Hygiene::hold(true, Some(dma), &mut |_| {}).map_err(|e| match e {
        EngineError::Mlock(err) => CharError::Sys {
            what: "locking memory (mlockall; raise RLIMIT_MEMLOCK, e.g. memlock in /etc/security/limits.conf, or run with sudo)".into(),
            err,
        },
        other => CharError::Engine(other),
    })
}

/// The record of a characterization about to run `benches`, no row yet.
fn begun(opts: &Options, benches: &[&Bench], clock_read_ns: u64) -> Characterization {
    Characterization {
        schema: SCHEMA.into(),
        uuid: crate::record::new_run_uuid(),
        label: opts.label.clone(),
        command_line: opts.command_line.clone(),
        started_at_unix_ns: crate::sys::clock::unix_now_ns(),
        duration_ns: 0,
        per_bench_ns: opts.per_bench_ns,
        interval_ns: opts.interval_ns,
        priority: opts.priority,
        cpus: opts.cpus.clone(),
        isolated_cpus: opts.isolated_cpus.clone(),
        clock_read_ns,
        benches: benches.iter().map(|b| b.name.to_string()).collect(),
        results: Vec::new(),
        checks: Vec::new(),
        pi_verdict: None,
        complete: false,
        fingerprint: {
            let mut f = crate::sysinfo::fingerprint::take(&crate::sysinfo::SysRoot::host());
            if let Some(h) = &opts.host {
                f.hostname = h.clone();
            }
            f
        },
    }
}
