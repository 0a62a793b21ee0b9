//! Turning what a reader found into a run record: statistics from the
//! histogram when there is one (from the source's own numbers when not),
//! times from the source or the file, a uuid derived from the content (so
//! importing a file twice is noticed), and the warnings that say what had
//! to be assumed. Pure: no files, no system.

use super::{ImportError, Source};
use crate::histogram::Histogram;
use crate::kinds::{Named, PreemptionModel, SourceKind};
use crate::record::{
    EndReason, Fingerprint, HistogramRecord, LatencyStats, Limits, MeasureOptions, Overflow,
    RunRecord, RunSource, RunStatus, SCHEMA_NAME, SCHEMA_VERSION, ThreadRecord, ToolInfo,
    Unknowable, WindowSeries,
};
use std::collections::BTreeMap;

/// One measuring thread as a source describes it.
#[derive(Clone, Debug)]
pub struct ThreadIn {
    pub cpu: Option<u32>,
    pub tid: Option<u32>,
    pub priority: i32,
    pub interval_ns: u64,
    /// Every sample, when the source has a histogram.
    pub hist: Option<Histogram>,
    /// Samples (periods) measured; with a histogram, its total.
    pub samples: u64,
    pub min_ns: Option<u64>,
    pub avg_ns: Option<f64>,
    pub max_ns: Option<u64>,
    pub missed: u64,
    pub windows: WindowSeries,
    /// Samples the source counted beyond its histogram, values unknown.
    pub overflow: Option<Overflow>,
}

impl ThreadIn {
    pub fn new(interval_ns: u64) -> ThreadIn {
        ThreadIn {
            cpu: None,
            tid: None,
            priority: 0,
            interval_ns,
            hist: None,
            samples: 0,
            min_ns: None,
            avg_ns: None,
            max_ns: None,
            missed: 0,
            windows: WindowSeries::default(),
            overflow: None,
        }
    }
}

/// A whole run as a source describes it.
#[derive(Clone, Debug)]
pub struct RunIn {
    pub format: &'static str,
    pub tool: ToolInfo,
    /// Resolution of the source's values (1000 for microsecond tools).
    pub resolution_ns: u64,
    pub threads: Vec<ThreadIn>,
    pub started_at_unix_ns: Option<u64>,
    pub ended_at_unix_ns: Option<u64>,
    pub duration_ns: Option<u64>,
    pub options: MeasureOptions,
    pub fingerprint: Fingerprint,
    pub command_line: Vec<String>,
    pub warnings: Vec<String>,
    /// Whether the source said the priority, whether it locked memory,
    /// and whether it counts missed periods (an interval of 0, policy
    /// "unknown" and no duration say themselves that they are unknown).
    pub priority_known: bool,
    pub mlockall_known: bool,
    pub missed_known: bool,
    /// Whether the source says how many samples its figures stand on.
    pub count_known: bool,
}

impl RunIn {
    pub fn new(format: &'static str, tool: &str, resolution_ns: u64) -> RunIn {
        RunIn {
            format,
            tool: ToolInfo {
                name: tool.into(),
                version: "unknown".into(),
            },
            resolution_ns,
            threads: Vec::new(),
            started_at_unix_ns: None,
            ended_at_unix_ns: None,
            duration_ns: None,
            options: unknown_options(),
            fingerprint: Fingerprint {
                preemption_model: "unknown".into(),
                ..Default::default()
            },
            command_line: Vec::new(),
            warnings: Vec::new(),
            priority_known: false,
            mlockall_known: false,
            missed_known: false,
            count_known: true,
        }
    }
}

/// Options of a run whose source does not say them.
pub fn unknown_options() -> MeasureOptions {
    MeasureOptions {
        interval_ns: 0,
        distance_ns: 0,
        policy: "unknown".into(),
        priority: 0,
        priospread: false,
        timer: "unknown".into(),
        clock: "unknown".into(),
        duration_ns: None,
        loops: None,
        warmup_ns: 0,
        window_ns: 0,
        omission_correction: false,
        mlockall: false,
        dma_latency_us: None,
        cpus: Vec::new(),
        main_affinity: None,
        deadline: None,
    }
}

/// A 32-hex-digit id from the content (FNV-1a, 128 bits): the same file
/// read by the same reader always gets the same id.
pub fn content_uuid(format: &str, text: &str) -> String {
    content_uuid_bytes(format, text.as_bytes())
}

/// [`content_uuid`] of a binary content.
pub fn content_uuid_bytes(format: &str, bytes: &[u8]) -> String {
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    for &b in format.as_bytes().iter().chain(&[0u8]).chain(bytes) {
        h ^= b as u128;
        h = h.wrapping_mul(0x0000000001000000000000000000013B);
    }
    format!("{h:032x}")
}

/// What a thread's own figures must agree on before they become a record
/// (a file may contradict itself: a hand edit, a truncated or corrupted
/// write). `tolerance_ns` is the source's resolution, within which its
/// rounding may put an average a hair outside its extremes.
fn check_thread(i: usize, t: &ThreadIn, tolerance_ns: u64) -> Result<(), ImportError> {
    let refuse = |what: String| {
        ImportError::whole(format!(
            "thread {i} contradicts itself: {what}; the file is damaged or was edited"
        ))
    };
    if let (Some(min), Some(max)) = (t.min_ns, t.max_ns)
        && min > max
    {
        return Err(refuse(format!(
            "its min ({min} ns) is above its max ({max} ns)"
        )));
    }
    if let Some(avg) = t.avg_ns {
        if !avg.is_finite() || avg < 0.0 {
            return Err(refuse(format!("its avg ({avg} ns) is not a latency")));
        }
        let tol = tolerance_ns.max(1) as f64;
        if let Some(min) = t.min_ns
            && avg < min as f64 - tol
        {
            return Err(refuse(format!(
                "its avg ({avg:.0} ns) is below its min ({min} ns)"
            )));
        }
        if let Some(max) = t.max_ns
            && avg > max as f64 + tol
        {
            return Err(refuse(format!(
                "its avg ({avg:.0} ns) is above its max ({max} ns)"
            )));
        }
    }
    Ok(())
}

/// Build the record, or refuse a source whose threads contradict
/// themselves (no record leaves here that statistics cannot be drawn from).
pub fn finish(src: &Source, mut run: RunIn) -> Result<RunRecord, ImportError> {
    for (i, t) in run.threads.iter().enumerate() {
        check_thread(i, t, run.resolution_ns)?;
    }
    let mut warnings = std::mem::take(&mut run.warnings);
    let (threads, hists, any_without_hist) = thread_records(&mut run);
    // The summary merges the threads: their samples together must fit.
    let fits = threads
        .iter()
        .try_fold(0u64, |a, t| a.checked_add(t.stats.samples))
        .is_some();
    if !fits {
        return Err(ImportError::whole(format!(
            "the threads hold more than {} samples together; the file is damaged or was edited",
            u64::MAX
        )));
    }
    if any_without_hist {
        warnings.push(
            "the source has no histogram: count, min, avg and max are its own; quantiles are unknown"
                .into(),
        );
    }
    let parts: Vec<_> = threads
        .iter()
        .zip(hists.iter())
        .map(|(t, h)| (&t.stats, h))
        .collect();
    let (overall, _) = LatencyStats::combine(&parts);
    let duration_ns = run.duration_ns.unwrap_or(0);
    let (started, ended) = when(src, &run, &mut warnings);
    if run.duration_ns.is_none() {
        warnings.push("the source does not say how long it ran".into());
    }
    let unknown = unknowns(&run);
    Ok(RunRecord {
        schema: SCHEMA_NAME.into(),
        schema_version: SCHEMA_VERSION,
        run_uuid: content_uuid(run.format, src.text),
        tool: run.tool,
        status: RunStatus::Complete,
        source: RunSource {
            kind: SourceKind::Imported.into(),
            format: Some(run.format.into()),
            file: Some(src.path.display().to_string()),
            command_line: run.command_line,
            unknown,
        },
        label: None,
        tags: BTreeMap::new(),
        started_at_unix_ns: started,
        ended_at_unix_ns: ended,
        duration_ns,
        end_reason: EndReason::Unknown,
        options: run.options,
        threads,
        overall,
        limits: Limits::default(),
        fingerprint: run.fingerprint,
        load: None,
        warnings,
        explain: None,
        quantity: None,
    })
}

/// The threads' records (taken out of `run`) with their histograms, and
/// whether one had none.
fn thread_records(run: &mut RunIn) -> (Vec<ThreadRecord>, Vec<Histogram>, bool) {
    let ins = std::mem::take(&mut run.threads);
    let mut threads = Vec::with_capacity(ins.len());
    let mut hists = Vec::with_capacity(ins.len());
    let mut any_without_hist = false;
    for (i, t) in ins.into_iter().enumerate() {
        let hist = match t.hist {
            Some(h) => h,
            None => {
                any_without_hist = true;
                Histogram::latency()
            }
        };
        let samples = if hist.is_empty() {
            t.samples
        } else {
            hist.total()
        };
        let mut stats = LatencyStats {
            samples,
            wakeups: samples,
            min_ns: t.min_ns,
            avg_ns: t.avg_ns,
            max_ns: t.max_ns,
            missed_periods: t.missed,
            overflow: t.overflow.filter(|o| o.count > 0),
            ..Default::default()
        };
        stats.fill_quantiles(&hist);
        threads.push(ThreadRecord {
            index: i as u32,
            cpu: t.cpu,
            tid: t.tid,
            policy: run.options.policy.clone(),
            priority: t.priority,
            interval_ns: t.interval_ns,
            stats,
            warmup: None,
            histogram: HistogramRecord::from_histogram(&hist, run.resolution_ns),
            windows: t.windows,
            outliers: Vec::new(),
            context: None,
            contexts: Vec::new(),
            noise: None,
            exceedances: None,
        });
        hists.push(hist);
    }
    (threads, hists, any_without_hist)
}

/// When the run started and ended: as the source says, or one from the
/// other and the duration. A source that says neither has an unknown
/// start (0) and end: the file's modification time is when it was last
/// written, copied or unpacked, not when the run ran, so it is only
/// named in a warning.
fn when(src: &Source, run: &RunIn, warnings: &mut Vec<String>) -> (u64, Option<u64>) {
    let duration_ns = run.duration_ns.unwrap_or(0);
    match (run.started_at_unix_ns, run.ended_at_unix_ns) {
        (Some(s), e) => (s, e.or(Some(s.saturating_add(duration_ns)))),
        (None, Some(e)) => (e.saturating_sub(duration_ns), Some(e)),
        (None, None) => {
            warnings.push(match src.modified_unix_ns {
                Some(m) => format!(
                    "the source does not say when it ran: its start is unknown (the file was last modified {}, which may be when it was written, copied or unpacked)",
                    crate::units::fmt_unix_utc(m)
                ),
                None => "the source does not say when it ran: its start is unknown".into(),
            });
            (0, None)
        }
    }
}

/// What the source leaves unknown.
fn unknowns(run: &RunIn) -> Vec<Unknowable> {
    [
        (Unknowable::Interval, run.options.interval_ns == 0),
        (Unknowable::Priority, !run.priority_known),
        (Unknowable::Policy, run.options.policy == "unknown"),
        (Unknowable::Duration, run.duration_ns.is_none()),
        (Unknowable::Mlockall, !run.mlockall_known),
        (Unknowable::MissedPeriods, !run.missed_known),
        (Unknowable::Count, !run.count_known),
    ]
    .into_iter()
    .filter_map(|(what, unknown)| unknown.then_some(what))
    .collect()
}

/// Where a histogram sample of bucket `v` (in `unit` ns) is recorded:
/// tools that truncate to µs put a latency of 12.0–12.999 µs in bucket
/// 12, so its middle (12 500 ns) stands for it (and the bucket maps back
/// to row 12 when written as a cyclictest histogram again). Values of ns
/// tools are recorded as they are.
/// Count `n` samples at `v_ns` into `h`: the one way a reader adds a
/// file's counts, refused when they add up past 2^64 (no tool counts that
/// many; a file that says so is damaged), never an overflow.
pub fn count_into(h: &mut Histogram, v_ns: u64, n: u64) -> Result<(), ImportError> {
    if h.total().checked_add(n).is_none() {
        return Err(ImportError::whole(format!(
            "the histogram's counts add up past 2^64 samples (at {n} more): no tool counts that many, the file is damaged"
        )));
    }
    h.record_n(v_ns, n);
    Ok(())
}

pub fn bucket_ns(v: u64, unit: u64) -> u64 {
    v.saturating_mul(unit).saturating_add(unit / 2)
}

/// A `us`-resolution value (`12` µs, or `3.507` µs from Xenomai) in ns.
pub fn us_to_ns(us: f64) -> u64 {
    if us <= 0.0 {
        0
    } else {
        (us * 1000.0).round() as u64
    }
}

/// The preemption model a uname version string tells (`PREEMPT_RT`,
/// `PREEMPT RT`, `PREEMPT_DYNAMIC`, `PREEMPT`), without looking at this
/// machine: the file may come from another one.
pub fn preemption_from_version(
    version: &str,
    realtime: bool,
) -> (Named<PreemptionModel>, Vec<String>) {
    let nowhere = crate::sysinfo::SysRoot::at("/nonexistent/rtscope-import");
    let p = crate::sysinfo::kernel::preemption(&nowhere, version, None, "");
    let mut model = p.model;
    let mut evidence = p.evidence;
    if realtime && model != "rt" {
        model = "rt".into();
        evidence.push("the source says realtime = 1 (/sys/kernel/realtime)".into());
    }
    (model, evidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::ImportOptions;
    use std::path::Path;

    #[test]
    fn a_run_without_histogram_keeps_its_numbers_and_says_so() {
        let o = ImportOptions::default();
        let src = Source {
            path: Path::new("out.txt"),
            text: "x",
            modified_unix_ns: Some(2_000_000_000_000),
            options: &o,
        };
        let mut run = RunIn::new("test", "cyclictest", 1000);
        let mut t = ThreadIn::new(1_000_000);
        t.samples = 500;
        t.min_ns = Some(3000);
        t.avg_ns = Some(7000.0);
        t.max_ns = Some(40_000);
        run.threads.push(t);
        run.options.interval_ns = 1_000_000;
        run.duration_ns = Some(1_000_000_000);
        let rec = finish(&src, run).unwrap();
        rec.validate().unwrap();
        assert_eq!(rec.overall.samples, 500);
        assert_eq!(rec.overall.max_ns, Some(40_000));
        assert_eq!(rec.overall.p99_ns, None);
        // No date in the source: the start is unknown, the file's
        // modification time only named (it was taken as the run's end).
        assert_eq!(rec.ended_at_unix_ns, None);
        assert_eq!(rec.started_at_unix_ns, 0);
        assert!(
            rec.warnings.iter().any(|w| w
                == "the source does not say when it ran: its start is unknown (the file was last modified 1970-01-01 00:33:20 UTC, which may be when it was written, copied or unpacked)"),
            "{:?}",
            rec.warnings
        );
        assert_eq!(rec.source.kind, "imported");
        assert!(rec.warnings.iter().any(|w| w.contains("no histogram")));
        assert_eq!(rec.run_uuid, content_uuid("test", "x"));
        // Nothing said the priority, policy, memory locking or missed
        // periods: the record says so instead of holding 0 and false.
        use crate::record::Unknowable as U;
        assert_eq!(
            rec.source.unknown,
            vec![U::Priority, U::Policy, U::Mlockall, U::MissedPeriods]
        );
        for u in [U::Priority, U::Policy, U::Mlockall, U::MissedPeriods] {
            assert!(!rec.knows(u), "{u:?}");
        }
        assert!(rec.knows(U::Interval) && rec.knows(U::Duration));
        assert_ne!(rec.run_uuid, content_uuid("test", "y"));
    }

    /// Two threads whose histograms hold 2^63 samples each: merging them
    /// for the summary overflowed (found by the rtla osnoise property
    /// test); refused instead.
    #[test]
    fn threads_past_2_64_samples_together_are_refused() {
        let o = ImportOptions::default();
        let src = Source {
            path: Path::new("out.txt"),
            text: "x",
            modified_unix_ns: None,
            options: &o,
        };
        let mut run = RunIn::new("test", "rtla", 1000);
        for _ in 0..2 {
            let mut t = ThreadIn::new(0);
            let mut h = Histogram::latency();
            h.record_n(5_000, 1 << 63);
            t.hist = Some(h);
            run.threads.push(t);
        }
        let e = finish(&src, run).unwrap_err();
        assert!(e.message.contains("more than 18446744073709551615"), "{e}");
    }

    #[test]
    fn preemption_from_both_spellings() {
        assert_eq!(
            preemption_from_version("#1 SMP PREEMPT_RT Fri", false).0,
            "rt"
        );
        assert_eq!(
            preemption_from_version("#1 SMP PREEMPT RT Fri", false).0,
            "rt"
        );
        assert_eq!(preemption_from_version("#1 SMP", true).0, "rt");
        assert_ne!(
            preemption_from_version("#1 SMP PREEMPT_DYNAMIC", false).0,
            "rt"
        );
    }
}
