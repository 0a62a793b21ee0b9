//! `characterize`: the platform tables of seed 001 (mutex, priority
//! changes, timers: min/avg/max in ns) plus the newer rows (clock read
//! cost, contended hand-off, thread wake-up, context switch, OS noise,
//! priority inversion with and without PI), each benchmark kept as a
//! lossless histogram.
//!
//! This module owns the record of a characterization (its JSON has units
//! in field names), the registry of benchmarks (a plain static list, one
//! file per benchmark that describes itself) and the run of a selection
//! of them. It never parses flags, prints, or touches the store: the
//! command layer passes [`Options`] and a [`Progress`] that saves each
//! benchmark as it ends.

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
pub mod setschedparam;
pub mod setschedprio;
pub mod text;
pub mod wakeup;

use crate::record::Fingerprint;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The `schema` field of a characterization's JSON.
pub const SCHEMA: &str = "rtscope-characterization/1";

/// Why a characterization could not be made.
#[derive(Debug, Error)]
pub enum CharError {
    #[error("unknown benchmark '{name}': valid names are {valid}")]
    UnknownBench { name: String, valid: String },
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Privilege(String),
    #[error("{what} failed: {err}")]
    Sys { what: String, err: std::io::Error },
    #[error("another thread of the benchmark failed to start")]
    Aborted,
    #[error("interrupted")]
    Interrupted,
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
    pub run: fn(&Ctx) -> Result<Outcome, CharError>,
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
    pub stop: &'a std::sync::atomic::AtomicBool,
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
pub struct Outcome {
    pub results: Vec<BenchResult>,
    pub checks: Vec<Check>,
}

/// min, avg, p50, p99, p99.99, max of one row, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    pub count: u64,
    pub min_ns: u64,
    pub avg_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p9999_ns: u64,
    pub max_ns: u64,
}

/// A histogram as `[bucket lower bound in ns, count]` pairs (the repo's
/// log-linear histogram, `sub_bucket_bits` precision).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SparseHistogram {
    pub sub_bucket_bits: u32,
    pub buckets: Vec<[u64; 2]>,
}

/// One row of a table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    pub bench: String,
    /// Which call or case of the benchmark (`lock, plain`, `absolute`...).
    pub variant: String,
    pub cpu: usize,
    /// What the row's values are.
    pub what: String,
    /// Taken off every value (the clock's read cost), in ns.
    pub subtracted_ns: u64,
    pub stats: Stats,
    pub histogram: SparseHistogram,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<NoiseDetail>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inversion: Option<InversionDetail>,
}

impl BenchResult {
    /// The row's name in tables: `bench (variant)`.
    pub fn title(&self) -> String {
        if self.variant.is_empty() {
            self.bench.clone()
        } else {
            format!("{} ({})", self.bench, self.variant)
        }
    }
}

/// One of the largest gaps of the busy loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    pub gap_ns: u64,
    /// When it began, from the start of the loop.
    pub at_ns: u64,
}

/// The OS-noise figures of one CPU (as oslat and osnoise give them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoiseDetail {
    pub duration_ns: u64,
    pub loops: u64,
    /// Gaps longer than this count as noise.
    pub threshold_ns: u64,
    pub gaps_above_threshold: u64,
    /// Sum of the gaps above the threshold.
    pub noise_ns: u64,
    /// Share of the CPU the loop had: 100 × (1 − noise / duration).
    pub cpu_left_to_loop_percent: f64,
    /// Largest first.
    pub largest_gaps: Vec<Gap>,
    /// With `--explain`: the largest gaps (at least `explained_above_ns`)
    /// explained from kernel trace events, largest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explained_above_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explanations: Vec<crate::explain::Explanation>,
}

/// The set-up of a priority-inversion row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InversionDetail {
    /// `plain` or `pi`.
    pub protocol: String,
    /// How long the medium-priority hog busies the CPU.
    pub hog_busy_ns: u64,
    /// How long the low-priority thread holds the mutex.
    pub critical_section_ns: u64,
    pub trials: u64,
}

/// A fact a benchmark checked about itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub bench: String,
    pub fact: String,
    pub held: bool,
}

/// The verdict of the priority-inversion benchmark.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PiVerdict {
    pub pi_works: bool,
    pub text: String,
}

/// A characterization: the record saved in the store and written by
/// `--json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Characterization {
    pub schema: String,
    pub uuid: String,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub command_line: Vec<String>,
    pub started_at_unix_ns: u64,
    pub duration_ns: u64,
    pub per_bench_ns: u64,
    pub interval_ns: u64,
    pub priority: i32,
    pub cpus: Vec<usize>,
    #[serde(default)]
    pub isolated_cpus: Option<Vec<usize>>,
    /// One monotonic clock read (trimmed mean), subtracted from timed calls.
    pub clock_read_ns: u64,
    /// Benchmarks asked for, in order.
    pub benches: Vec<String>,
    pub results: Vec<BenchResult>,
    pub checks: Vec<Check>,
    #[serde(default)]
    pub pi_verdict: Option<PiVerdict>,
    /// False when it was cut short (Ctrl-C, an error): `results` holds
    /// the benchmarks that ended.
    pub complete: bool,
    pub fingerprint: Fingerprint,
}

impl Characterization {
    /// The display name: its label, else `characterization <start>`.
    pub fn name(&self) -> String {
        self.label.clone().unwrap_or_else(|| {
            format!(
                "characterization {}",
                crate::units::fmt_unix_utc(self.started_at_unix_ns)
            )
        })
    }

    /// Read one from JSON (`--json` files).
    pub fn from_json(text: &str) -> Result<Characterization, String> {
        let c: Characterization = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if c.schema != SCHEMA {
            return Err(format!("unknown schema '{}' (expected {SCHEMA})", c.schema));
        }
        Ok(c)
    }
}

/// Told as the characterization goes (the command saves and prints).
pub trait Progress {
    fn started(&mut self, _c: &Characterization) {}
    fn bench_started(&mut self, _bench: &Bench) {}
    /// A benchmark ended: `c` holds it.
    fn bench_done(&mut self, _c: &Characterization, _bench: &Bench) {}
}

/// The verdict from the inversion rows, when both were measured.
pub fn pi_verdict(results: &[BenchResult]) -> Option<PiVerdict> {
    let row = |p: &str| {
        results
            .iter()
            .find(|r| r.inversion.as_ref().is_some_and(|d| d.protocol == p))
    };
    let (plain, pi) = (row("plain")?, row("pi")?);
    let hog = plain.inversion.as_ref()?.hog_busy_ns;
    let shown = plain.stats.min_ns >= hog;
    let solved = pi.stats.max_ns < hog;
    let us = |ns: u64| format!("{:.1} us", ns as f64 / 1000.0);
    let text = match (shown, solved) {
        (true, true) => format!(
            "PI works on this system: without PI the high-priority thread waited at least {} (the hog runs {}), with PI at most {}",
            us(plain.stats.min_ns),
            us(hog),
            us(pi.stats.max_ns)
        ),
        (_, false) => format!(
            "PI does NOT work on this system: with a PI mutex the high-priority thread still waited up to {} (the hog runs {})",
            us(pi.stats.max_ns),
            us(hog)
        ),
        (false, true) => format!(
            "inversion not shown: without PI the high-priority thread waited only {} at least (the hog runs {}); PI waited at most {}",
            us(plain.stats.min_ns),
            us(hog),
            us(pi.stats.max_ns)
        ),
    };
    Some(PiVerdict {
        pi_works: shown && solved,
        text,
    })
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
pub fn run(
    opts: &Options,
    allowed: &[usize],
    stop: &std::sync::atomic::AtomicBool,
    progress: &mut dyn Progress,
) -> Result<Characterization, CharError> {
    let benches = validate(opts, allowed)?;
    if let Some(why) = privilege_refusal(opts.priority) {
        return Err(CharError::Privilege(why));
    }
    crate::sys::mem::keep_heap();
    crate::sys::mem::lock_all().map_err(|err| CharError::Sys {
        what: "locking memory (mlockall; raise RLIMIT_MEMLOCK, e.g. memlock in /etc/security/limits.conf, or run with sudo)".into(),
        err,
    })?;
    let _unlock = Unlock;
    // Keep CPUs out of deep idle states, as measure does (best effort).
    let _dma = crate::sys::dma::CpuDmaLatency::hold(
        std::path::Path::new(crate::sys::dma::DEFAULT_PATH),
        0,
    )
    .ok();
    let cpu = opts.cpus[0];
    let clock_read_ns = harness::on_fifo(cpu, opts.priority, || {
        Ok(harness::clock_read_cost_ns(200_000))
    })?;
    let start_mono = harness::now();
    let mut c = Characterization {
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
        fingerprint: crate::sysinfo::fingerprint::take(&crate::sysinfo::SysRoot::host()),
    };
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

/// Unlocks memory when the characterization ends (puts back what `run`
/// changed).
struct Unlock;

impl Drop for Unlock {
    fn drop(&mut self) {
        let _ = crate::sys::mem::unlock_all();
    }
}

/// A small characterization for the rendering tests: a mutex row, an
/// OS-noise row and both inversion rows.
#[cfg(test)]
pub(crate) fn sample(label: &str, scale: u64) -> Characterization {
    let row = |bench: &str, variant: &str, base: u64| BenchResult {
        bench: bench.into(),
        variant: variant.into(),
        cpu: 1,
        what: "test".into(),
        subtracted_ns: 30,
        stats: Stats {
            count: 10,
            min_ns: base,
            avg_ns: base * 2,
            p50_ns: base * 2,
            p99_ns: base * 3,
            p9999_ns: base * 4,
            max_ns: base * 5,
        },
        histogram: SparseHistogram::default(),
        noise: None,
        inversion: None,
    };
    let mut noise = row("os-noise", "CPU 1", 30 * scale);
    noise.noise = Some(NoiseDetail {
        duration_ns: 1_000_000_000,
        loops: 10,
        threshold_ns: 1_000,
        gaps_above_threshold: 2,
        noise_ns: 70_000,
        cpu_left_to_loop_percent: 99.993,
        explained_above_ns: None,
        explanations: vec![],
        largest_gaps: vec![
            Gap {
                gap_ns: 50_000,
                at_ns: 2_000_000,
            },
            Gap {
                gap_ns: 20_000,
                at_ns: 5_000,
            },
        ],
    });
    let inv = |p: &str, base: u64| {
        let mut r = row("priority-inversion", p, base);
        r.inversion = Some(InversionDetail {
            protocol: p.into(),
            hog_busy_ns: 10_000_000,
            critical_section_ns: 2_000_000,
            trials: 10,
        });
        r
    };
    let results = vec![
        row("mutex", "lock, plain", 10 * scale),
        noise,
        inv("plain", 10_500_000),
        inv("pi", 300_000),
    ];
    Characterization {
        schema: SCHEMA.into(),
        uuid: "00".into(),
        label: Some(label.into()),
        command_line: vec![],
        started_at_unix_ns: 1_700_000_000_000_000_000,
        duration_ns: 1,
        per_bench_ns: 1_000_000_000,
        interval_ns: 1_000_000,
        priority: 99,
        cpus: vec![1],
        isolated_cpus: None,
        clock_read_ns: 30,
        benches: vec![],
        pi_verdict: pi_verdict(&results),
        results,
        checks: vec![Check {
            bench: "mutex".into(),
            fact: "trylock of a held plain mutex fails".into(),
            held: true,
        }],
        complete: true,
        fingerprint: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_has_each_table_the_noise_figures_the_verdict_and_checks() {
        let t = text::render(&sample("base", 1));
        for needle in [
            "base on ?",
            "Clock read cost: 30 ns",
            "Mutexes\nbenchmark",
            "mutex (lock, plain)",
            "OS noise",
            "CPU 1: 99.993% of the CPU left to the loop; 2 gaps above 1us (70us in all) in 1s; largest: 50us at 2ms, 20us at 5us",
            "PI works on this system",
            "Self-checks: all 1 held.",
        ] {
            assert!(t.contains(needle), "no '{needle}' in:\n{t}");
        }
        // Groups in registry order: mutexes before noise before inversion.
        let (m, n, i) = (
            t.find("Mutexes").unwrap(),
            t.find("OS noise").unwrap(),
            t.find("Priority inversion").unwrap(),
        );
        assert!(m < n && n < i);
        assert!(!t.contains("Timers"), "no empty tables");
    }

    #[test]
    fn compare_puts_rows_side_by_side_with_ratios_and_differences() {
        let a = sample("base", 1);
        let mut b = sample("isolated", 2);
        b.isolated_cpus = Some(vec![1]);
        b.results.remove(1);
        let t = compare::render(&[&a, &b], &["1".into(), "2".into()]);
        assert!(
            t.contains("A = 1 (base)") && t.contains("B = 2 (isolated)"),
            "{t}"
        );
        assert!(
            t.contains("note: isolation differs: none / CPUs 1 isolated"),
            "{t}"
        );
        let line = t
            .lines()
            .find(|l| l.starts_with("mutex (lock, plain)"))
            .unwrap();
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            &cells[cells.len() - 8..],
            ["10", "20", "50", "20", "40", "100", "2.00", "2.00"]
        );
        let noise = t.lines().find(|l| l.starts_with("os-noise")).unwrap();
        assert_eq!(
            noise.split_whitespace().filter(|c| *c == "-").count(),
            5,
            "{noise}"
        );
        let html = html::render(&[&a, &b], &["1".into(), "2".into()], None);
        assert!(html.starts_with("<!DOCTYPE html>") && html.contains("Side by side"));
        assert_eq!(html.matches("<section>").count(), 3);
        assert!(!html.contains("<script"));
    }

    #[test]
    fn registry_names_are_unique_and_described() {
        let mut names: Vec<&str> = BENCHES.iter().map(|b| b.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), BENCHES.len());
        for b in BENCHES {
            assert!(!b.help.is_empty() && !b.measures.is_empty(), "{}", b.name);
            assert!(b.name.chars().all(|c| c.is_ascii_lowercase() || c == '-'));
        }
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let e = select(&["mutex".into(), "nope".into()]).err().unwrap();
        let m = e.to_string();
        assert!(
            m.contains("'nope'") && m.contains("os-noise") && m.contains("mutex"),
            "{m}"
        );
        let s = select(&["os-noise".into(), "mutex".into()]).unwrap();
        // Registry order, not command-line order.
        assert_eq!(s[0].name, "mutex");
        assert_eq!(select(&[]).unwrap().len(), BENCHES.len());
    }

    fn row(protocol: &str, min_ns: u64, max_ns: u64) -> BenchResult {
        BenchResult {
            bench: "priority-inversion".into(),
            variant: protocol.into(),
            cpu: 0,
            what: String::new(),
            subtracted_ns: 0,
            stats: Stats {
                count: 3,
                min_ns,
                max_ns,
                ..Default::default()
            },
            histogram: SparseHistogram::default(),
            noise: None,
            inversion: Some(InversionDetail {
                protocol: protocol.into(),
                hog_busy_ns: 10_000_000,
                critical_section_ns: 1_000_000,
                trials: 3,
            }),
        }
    }

    #[test]
    fn verdict_needs_inversion_shown_and_solved() {
        let ok = pi_verdict(&[
            row("plain", 10_500_000, 11_000_000),
            row("pi", 500_000, 900_000),
        ]);
        let ok = ok.unwrap();
        assert!(ok.pi_works);
        assert!(
            ok.text.starts_with("PI works on this system"),
            "{}",
            ok.text
        );
        let bad = pi_verdict(&[
            row("plain", 10_500_000, 11_000_000),
            row("pi", 10_400_000, 10_900_000),
        ]);
        assert!(!bad.unwrap().pi_works);
        assert!(pi_verdict(&[row("plain", 1, 2)]).is_none());
    }

    #[test]
    fn validation_refuses_bad_cpus_durations_and_priorities() {
        let ok = Options {
            only: vec![],
            per_bench_ns: 200_000_000,
            interval_ns: 1_000_000,
            priority: 99,
            cpus: vec![0],
            label: None,
            command_line: vec![],
            isolated_cpus: None,
            explain_above_ns: None,
        };
        assert!(validate(&ok, &[0, 1]).is_ok());
        let e = validate(
            &Options {
                cpus: vec![5],
                ..ok.clone()
            },
            &[0, 1],
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("valid CPUs are 0-1"), "{e}");
        assert!(
            validate(
                &Options {
                    per_bench_ns: 10,
                    ..ok.clone()
                },
                &[0]
            )
            .is_err()
        );
        assert!(
            validate(
                &Options {
                    priority: 2,
                    ..ok.clone()
                },
                &[0]
            )
            .is_err()
        );
    }
}
