//! The run record: the one data contract between measuring, the JSON
//! file, the store and the reports. Versioned (`schema_version`), every
//! time field names its unit (`_ns`), histograms are lossless.
//!
//! Readers must ignore fields they do not know (new optional fields do not
//! bump the version); removing or changing the meaning of a field does.
//! The JSON Schema is generated from these types (`rtscope schema`) and
//! kept in `docs/run-record.schema.json`.

use crate::explain::Explanation;
use crate::histogram::{Histogram, HistogramError, LATENCY_SUB_BITS};
use crate::kinds::{Named, Policy, PreemptionModel, SourceKind, TimerMethod};
use crate::sys::clock::Clock;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod validate;
pub use crate::stated::Stated;
pub use validate::{TAG_KEY_MAX_BYTES, TEXT_MAX_BYTES, is_kept_text};

/// Version of this record's layout.
pub const SCHEMA_VERSION: u32 = 1;
/// Constant tag at the top of every record.
pub const SCHEMA_NAME: &str = "rtscope.run";

/// The latency metrics summaries show and comparisons accept, in the
/// order tables show them; each is a name [`LatencyStats::metric_ns`]
/// knows.
pub const METRICS: [&str; 8] = ["min", "avg", "p50", "p90", "p99", "p99.9", "p99.99", "max"];

/// A run's facts given as `--tag KEY=VALUE`, by key.
pub type Tags = BTreeMap<String, String>;

/// One measurement run, whether measured by rtscope or imported.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunRecord {
    /// Always "rtscope.run".
    pub schema: String,
    /// Layout version; see [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Random identifier (32 hex digits), unique across machines.
    pub run_uuid: String,
    pub tool: ToolInfo,
    pub status: RunStatus,
    pub source: RunSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: Tags,
    /// Wall-clock time of the first measured deadline (after warm-up).
    pub started_at_unix_ns: u64,
    /// Wall-clock time at which measuring stopped (`None` while running).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at_unix_ns: Option<u64>,
    /// Time covered by measured samples, from the first measured deadline
    /// to the last wake-up.
    pub duration_ns: u64,
    pub end_reason: EndReason,
    pub options: MeasureOptions,
    pub threads: Vec<ThreadRecord>,
    /// All threads together.
    pub overall: LatencyStats,
    pub limits: Limits,
    pub fingerprint: Fingerprint,
    /// The load the run was measured under, as run and as achieved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadRecord>,
    /// Things the user should know about how this run went.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Why the largest wake-ups were late, from kernel trace events
    /// (`measure --explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<ExplainRecord>,
    /// What the threads' latencies measure (absent: a timer wake-up
    /// latency, as rtscope and cyclictest measure it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<Quantity>,
}

/// What a run's numbers measure. Runs of different quantities are never
/// compared as if they were the same thing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    /// How late a thread woke after its timer expired (rtscope,
    /// cyclictest, rtla timerlat's thread or user context).
    WakeupLatency,
    /// Gaps between two reads of a clock in a busy loop (oslat): time
    /// taken from a running thread, with no timer involved.
    BusyLoopGap,
    /// Noise seen by a busy thread (rtla osnoise): each sample is one
    /// interference's length; counts per source in `ThreadRecord::noise`.
    OsNoise,
}

impl Quantity {
    /// The quantity of `rec` (absent means a wake-up latency).
    pub fn of(rec: &RunRecord) -> Quantity {
        rec.quantity.unwrap_or(Quantity::WakeupLatency)
    }

    /// In words, for tables and messages.
    pub fn describe(self) -> &'static str {
        match self {
            Quantity::WakeupLatency => "timer wake-up latency",
            Quantity::BusyLoopGap => "busy-loop gap (oslat): no timer, not a wake-up latency",
            Quantity::OsNoise => {
                "OS noise (rtla osnoise): interference lengths, not a wake-up latency"
            }
        }
    }
}

/// Where a timer latency was taken (rtla timerlat measures three at each
/// expiry of the same timer).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LatencyContext {
    /// In the timer's interrupt handler.
    Irq,
    /// When the woken kernel thread ran (comparable to rtscope's and
    /// cyclictest's wake-up latency).
    Thread,
    /// When the woken user-space thread returned to user space
    /// (`rtla timerlat -u`).
    User,
}

impl LatencyContext {
    pub fn name(self) -> &'static str {
        match self {
            LatencyContext::Irq => "irq",
            LatencyContext::Thread => "thread",
            LatencyContext::User => "user",
        }
    }
}

/// One more context's latencies for the same CPU and timer as the
/// thread that holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContextRecord {
    pub context: LatencyContext,
    pub stats: LatencyStats,
    pub histogram: HistogramRecord,
}

/// What rtla osnoise counts per CPU besides the noise lengths; every
/// field is what the tool printed (times in ns).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NoiseRecord {
    /// Time the busy thread ran.
    pub runtime_ns: u64,
    /// Noise in that time, all sources together.
    pub noise_ns: u64,
    /// Share of the runtime left to the thread, percent.
    pub cpu_available_pct: f64,
    /// The largest noise in one period.
    pub max_noise_ns: u64,
    /// Interference counts per source; `None`: not printed (`hwnoise`
    /// prints hardware and NMI only).
    pub hw: u64,
    pub nmi: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softirq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<u64>,
}

/// What `measure --explain` found: the wake-ups at least `threshold_ns`
/// late, each explained from the kernel's trace events on its CPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExplainRecord {
    /// Wake-ups at least this late were explained.
    pub threshold_ns: u64,
    /// Trace events recorded, and those this kernel does not have.
    pub events: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_events: Vec<String>,
    /// Kernel filters on those events, as `group:name: filter` (the
    /// lean set leaves the measured threads' switches to idle out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<String>,
    /// Wake-ups at least `threshold_ns` late.
    pub spikes_seen: u64,
    /// Of those, how many were explained (at most one per thread every
    /// 50 ms: the largest of each such interval).
    pub spikes_explained: u64,
    /// Trace events read, and those the kernel dropped (buffer overrun):
    /// explanations whose window lost events are marked partial.
    pub events_read: u64,
    pub events_lost: u64,
    /// The explanations kept, largest wake-up first (each thread's
    /// largest, then the largest of the rest, up to a bound).
    pub explanations: Vec<Explanation>,
    /// Whether the kernel offers the timerlat tracer (`available_tracers`):
    /// then `rtla timerlat` can cross-check the IRQ and thread latencies
    /// (rtscope never starts it). Absent: not looked at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timerlat_available: Option<bool>,
}

/// A load run beside the measurement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadRecord {
    /// Profile name (e.g. "hell", "rt-interference").
    pub profile: String,
    /// Seed of the randomised burst schedule.
    #[serde(default)]
    pub seed: u64,
    /// Every command line actually started.
    #[serde(default)]
    pub commands: Vec<LoadCommand>,
    /// When each part was on, from the start of the run.
    #[serde(default)]
    pub phases: Vec<LoadPhase>,
    /// What the load achieved, as sampled from /proc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved: Option<serde_json::Value>,
    /// Parts that ended early or failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// CPUs the load was confined to (kernel cpulist, e.g. "0-1").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// Each part and its schedule, as drawn from the seed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<LoadPart>,
    /// Directory the load's scratch files lived in (removed at the end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scratch_dir: Option<String>,
    /// cgroups the load ran in (removed at the end).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cgroups: Vec<String>,
    /// Session of the load supervisor: every load process belonged to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<u32>,
    /// What the clean-up could not do (empty: nothing was left behind).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leftovers: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadCommand {
    pub part: String,
    pub argv: Vec<String>,
    /// Times the command was started (each start in a process group of
    /// its own: a new burst, or a restart after it ended by itself).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub starts: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One part of a load and when it was meant to be on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadPart {
    pub name: String,
    /// The registered load it runs (cpu, io, hackbench, rt-interference...).
    pub load: String,
    /// Always on (no bursts).
    pub steady: bool,
    /// This part's burst period (0 when steady).
    #[serde(default)]
    pub period_ns: u64,
    /// Start of its first burst, from the start of the load (bursts then
    /// start every `period_ns`).
    #[serde(default)]
    pub first_burst_ns: u64,
    /// Shortest and longest burst.
    #[serde(default)]
    pub active_min_ns: u64,
    #[serde(default)]
    pub active_max_ns: u64,
}

/// One burst of one load part: `[start_offset_ns, end_offset_ns)` from
/// the start of the run (offsets before 0 are clipped).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadPhase {
    pub part: String,
    pub start_offset_ns: u64,
    pub end_offset_ns: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

impl ToolInfo {
    pub fn this() -> ToolInfo {
        ToolInfo {
            name: "rtscope".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Measuring now (a checkpoint).
    Running,
    /// Ended as planned, or stopped by the user (see `end_reason`).
    Complete,
    /// The process died before writing its end; holds the last checkpoint.
    Interrupted,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunSource {
    /// "measured" or "imported".
    pub kind: Named<SourceKind>,
    /// For imports: the format read (e.g. "cyclictest-histfile").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// For imports: the file read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Full command line of the producing program, when known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command_line: Vec<String>,
    /// For imports: what the source did not record; the record holds a
    /// placeholder (0, false, "unknown") there, shown as unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<Unknowable>,
}

impl RunSource {
    /// Whether a run of this source recorded `what`, when the source
    /// decides it: measured runs know everything, imports say what they
    /// did not know (`unknown`). `None`: an import recorded before that
    /// list existed, judged by its placeholders ([`RunRecord::knows`]).
    pub fn recorded(&self, what: Unknowable) -> Option<bool> {
        if !self.kind.is(crate::kinds::SourceKind::Imported) {
            return Some(true);
        }
        if !self.unknown.is_empty() {
            return Some(!self.unknown.contains(&what));
        }
        None
    }
}

/// What an imported source may leave unsaid (cyclictest never counts
/// missed periods; a histogram file may hold no interval or priority).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Unknowable {
    Interval,
    Priority,
    Policy,
    Duration,
    Mlockall,
    MissedPeriods,
    /// How many samples the figures stand on (rtla osnoise top counts
    /// none).
    Count,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The requested duration elapsed.
    Duration,
    /// Every thread did its requested number of loops.
    Loops,
    /// SIGINT / SIGTERM / Ctrl-C.
    Signal,
    /// A latency above the break threshold (`-b`) stopped the run.
    BreakThreshold,
    /// A thread failed while measuring.
    Error,
    /// Still running (checkpoint) or unknown (imports).
    Unknown,
}

impl EndReason {
    /// How much a reason says about a run's end: when threads end for
    /// different reasons, the run ends for the one that ranks highest.
    pub fn rank(self) -> u8 {
        match self {
            EndReason::Error => 5,
            EndReason::BreakThreshold => 4,
            EndReason::Signal => 3,
            EndReason::Duration => 2,
            EndReason::Loops => 1,
            EndReason::Unknown => 0,
        }
    }

    /// The reason that ranks higher of `self` and `other`.
    pub fn max(self, other: EndReason) -> EndReason {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }
}

/// What was asked for, in units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MeasureOptions {
    pub interval_ns: u64,
    pub distance_ns: u64,
    /// other, batch, idle, fifo, rr or deadline (imports may hold
    /// another tool's name).
    pub policy: Named<Policy>,
    pub priority: i32,
    pub priospread: bool,
    /// abs, rel, nanosleep, itimer, posix or timerfd (imports may hold
    /// another tool's name).
    pub timer: Named<TimerMethod>,
    /// monotonic or realtime.
    pub clock: Named<Clock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<u64>,
    pub warmup_ns: u64,
    pub window_ns: u64,
    /// Missed periods recorded with the lateness they suffered.
    pub omission_correction: bool,
    pub mlockall: bool,
    /// Value held on /dev/cpu_dma_latency, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dma_latency_us: Option<i32>,
    /// CPUs the measuring threads were placed on, in thread order.
    pub cpus: Vec<Option<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_affinity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<DeadlineParams>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DeadlineParams {
    pub runtime_ns: u64,
    pub deadline_ns: u64,
    pub period_ns: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadRecord {
    pub index: u32,
    /// CPU the thread was pinned to (`None`: not pinned).
    pub cpu: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tid: Option<u32>,
    pub policy: Named<Policy>,
    pub priority: i32,
    pub interval_ns: u64,
    pub stats: LatencyStats,
    /// Samples taken during warm-up, kept apart from `stats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<WarmupStats>,
    pub histogram: HistogramRecord,
    pub windows: WindowSeries,
    /// The largest wake-ups (up to 32), largest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outliers: Vec<Outlier>,
    /// Where `stats` were taken, for sources that tell (rtla timerlat);
    /// absent: the wake-up of the measuring thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<LatencyContext>,
    /// The other contexts measured at the same timer expiries (rtla
    /// timerlat's IRQ, and its thread latency beside `-u`'s user one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contexts: Vec<ContextRecord>,
    /// rtla osnoise's per-CPU counts (quantity `os_noise`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<NoiseRecord>,
    /// Every wake-up later than a threshold, with its cycle (rtscope's own
    /// runs since exceedance times were kept): the order a histogram
    /// loses, from which `tail` estimates how late wake-ups cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exceedances: Option<ExceedanceRecord>,
}

/// The wake-ups of one thread later than `threshold_ns` (strictly), all of
/// them: the table is bounded (1024 per thread) by raising the threshold
/// during the run, never by dropping a value above it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExceedanceRecord {
    pub threshold_ns: u64,
    /// Cycles (periods since the first measured one), ascending.
    pub cycles: Vec<u64>,
    /// The latency of each, in the order of `cycles`.
    pub latencies_ns: Vec<u64>,
}

/// One of the largest wake-up latencies of a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Outlier {
    pub latency_ns: u64,
    pub at: SampleAt,
}

/// Summary of a set of latency samples. Quantiles come from the histogram
/// (within 0.1 %), `min_ns`, `max_ns` and `avg_ns` are exact.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LatencyStats {
    /// Samples in the histogram (one per period, including corrected
    /// missed periods unless omission correction was off).
    pub samples: u64,
    /// Times the thread actually woke up.
    pub wakeups: u64,
    pub min_ns: Option<u64>,
    pub avg_ns: Option<f64>,
    pub p50_ns: Option<u64>,
    pub p90_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p999_ns: Option<u64>,
    pub p9999_ns: Option<u64>,
    pub max_ns: Option<u64>,
    /// Periods whose deadline passed before the thread woke for an
    /// earlier one.
    pub missed_periods: u64,
    /// Wake-ups before the deadline (not in the histogram).
    pub early_wakeups: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_early_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_at: Option<SampleAt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_at: Option<SampleAt>,
    /// Samples an imported source counted beyond its histogram without
    /// their values (cyclictest's `# Histogram Overflows:`); absent when
    /// none or for measured runs. They are in the histogram at
    /// `Overflow::from_ns` (a lower bound), the largest at `max_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow: Option<Overflow>,
}

/// The quantiles a record keeps: name (as [`METRICS`] spells it), the key
/// of its field (`p999` for `p999_ns`) and its fraction.
pub const QUANTILES: [(&str, &str, f64); 5] = [
    ("p50", "p50", 0.5),
    ("p90", "p90", 0.9),
    ("p99", "p99", 0.99),
    ("p99.9", "p999", 0.999),
    ("p99.99", "p9999", 0.9999),
];

/// Samples beyond a source's histogram, values unknown: each lies in
/// `[from_ns, max_ns]` of its stats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Overflow {
    /// How many (the one at the max included).
    pub count: u64,
    /// The first value beyond the histogram's rows: every overflow is at
    /// least this late.
    pub from_ns: u64,
}

/// Where in the run a sample was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SampleAt {
    /// Period number (0 = first measured deadline).
    pub cycle: u64,
    /// Deadline of that period, from the start of the run.
    pub offset_ns: u64,
    /// Wall-clock time of that deadline.
    pub unix_ns: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WarmupStats {
    /// Wake-ups during warm-up.
    pub samples: u64,
    /// Warm-up periods whose deadline passed before the wake-up.
    #[serde(default)]
    pub missed_periods: u64,
    pub min_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub avg_ns: Option<f64>,
}

/// A lossless histogram: sparse log-linear buckets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HistogramRecord {
    /// "log-linear": values below 2^(b+1) ns have their own bucket, each
    /// power of two above is cut into 2^b buckets.
    pub encoding: String,
    pub sub_bucket_bits: u32,
    /// Resolution of the source values (1 for rtscope; 1000 for
    /// microsecond tools such as cyclictest).
    pub resolution_ns: u64,
    /// `[lower_ns, count]` of every non-empty bucket, ascending.
    pub buckets: Vec<[u64; 2]>,
}

impl HistogramRecord {
    pub fn from_histogram(h: &Histogram, resolution_ns: u64) -> HistogramRecord {
        HistogramRecord {
            encoding: "log-linear".into(),
            sub_bucket_bits: h.sub_bits(),
            resolution_ns,
            buckets: h.iter_nonzero().map(|(l, c)| [l, c]).collect(),
        }
    }

    pub fn to_histogram(&self) -> Result<Histogram, HistogramError> {
        if self.encoding != "log-linear" {
            return Err(HistogramError::Encoding(self.encoding.clone()));
        }
        let pairs: Vec<(u64, u64)> = self.buckets.iter().map(|b| (b[0], b[1])).collect();
        Histogram::from_sparse(self.sub_bucket_bits, &pairs)
    }

    pub fn empty() -> HistogramRecord {
        HistogramRecord::from_histogram(&Histogram::new(LATENCY_SUB_BITS), 1)
    }

    /// The non-empty buckets as `(lower, upper, count)`, ascending, what
    /// `to_histogram()?.iter_buckets()` gives, with the same refusals;
    /// read from the sparse list as written (ascending) without making
    /// the dense table of 28 672 buckets, which a report of thousands of
    /// threads made and scanned for each thread several times.
    pub fn nonzero_buckets(&self) -> Result<Vec<(u64, u64, u64)>, HistogramError> {
        use crate::histogram::{bucket_index, bucket_lower, bucket_upper};
        let b = self.sub_bucket_bits;
        if self.encoding != "log-linear" || !(1..=16).contains(&b) {
            return Ok(self.to_histogram()?.iter_buckets().collect());
        }
        let mut out = Vec::with_capacity(self.buckets.len());
        let mut total = 0u64;
        for &[lower, count] in &self.buckets {
            let i = bucket_index(lower, b);
            if bucket_lower(i, b) != lower {
                return Err(HistogramError::NotBucketStart(lower));
            }
            total = total.checked_add(count).ok_or(HistogramError::TooMany)?;
            if out.last().is_some_and(|l: &(u64, u64, u64)| l.0 >= lower) {
                // Not as written: the dense table sorts and adds them.
                return Ok(self.to_histogram()?.iter_buckets().collect());
            }
            if count > 0 {
                out.push((lower, bucket_upper(i, b), count));
            }
        }
        Ok(out)
    }

    /// Add this histogram into `h`, as `h.merge(&self.to_histogram()?)`
    /// does, without the dense table when the precisions agree.
    pub fn merge_into(&self, h: &mut Histogram) -> Result<(), HistogramError> {
        if self.sub_bucket_bits != h.sub_bits() {
            h.merge(&self.to_histogram()?);
            return Ok(());
        }
        for (lower, _, count) in self.nonzero_buckets()? {
            h.total()
                .checked_add(count)
                .ok_or(HistogramError::TooMany)?;
            h.record_n(lower, count);
        }
        Ok(())
    }
}

/// Per-window statistics, columnar: point `i` covers
/// `[i·window_ns, (i+1)·window_ns)` from the start of the run. Empty
/// windows have `count` 0. Long runs are compacted by merging neighbours
/// (the window doubles), so the series stays bounded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WindowSeries {
    pub window_ns: u64,
    pub count: Vec<u64>,
    pub min_ns: Vec<u64>,
    pub avg_ns: Vec<u64>,
    pub max_ns: Vec<u64>,
    /// 99th percentile of the window (±1.6 %); after compaction, the
    /// larger of the merged windows' values (an upper bound).
    pub p99_ns: Vec<u64>,
    pub missed: Vec<u64>,
    /// True once windows have been merged (p99 is then an upper bound).
    #[serde(default)]
    pub compacted: bool,
}

/// One point of a [`WindowSeries`], as a row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowPoint {
    pub count: u64,
    pub min_ns: u64,
    pub avg_ns: u64,
    pub max_ns: u64,
    pub p99_ns: u64,
    pub missed: u64,
}

impl WindowPoint {
    /// Fold `o` in, as if both windows were one: counts and misses add,
    /// the average is weighted by count, min and max are kept, and p99
    /// takes the larger (an upper bound). An empty side changes nothing.
    pub fn merge(&mut self, o: &WindowPoint) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *o;
            return;
        }
        let total = self.count + o.count;
        self.avg_ns = ((self.avg_ns as u128 * self.count as u128
            + o.avg_ns as u128 * o.count as u128)
            / total as u128) as u64;
        self.count = total;
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.p99_ns = self.p99_ns.max(o.p99_ns);
        self.missed += o.missed;
    }
}

impl WindowSeries {
    /// The points every column has (all of them in a valid record; a
    /// malformed one is read up to its shortest column, never past it).
    pub fn len(&self) -> usize {
        [
            self.count.len(),
            self.min_ns.len(),
            self.avg_ns.len(),
            self.max_ns.len(),
            self.p99_ns.len(),
            self.missed.len(),
        ]
        .into_iter()
        .min()
        .unwrap_or(0)
    }

    /// Point `i` as a row.
    pub fn point(&self, i: usize) -> WindowPoint {
        WindowPoint {
            count: self.count[i],
            min_ns: self.min_ns[i],
            avg_ns: self.avg_ns[i],
            max_ns: self.max_ns[i],
            p99_ns: self.p99_ns[i],
            missed: self.missed[i],
        }
    }

    /// Replace point `i`.
    pub fn set(&mut self, i: usize, p: WindowPoint) {
        self.count[i] = p.count;
        self.min_ns[i] = p.min_ns;
        self.avg_ns[i] = p.avg_ns;
        self.max_ns[i] = p.max_ns;
        self.p99_ns[i] = p.p99_ns;
        self.missed[i] = p.missed;
    }

    /// Append a point at the end.
    pub fn push(&mut self, p: WindowPoint) {
        self.count.push(p.count);
        self.min_ns.push(p.min_ns);
        self.avg_ns.push(p.avg_ns);
        self.max_ns.push(p.max_ns);
        self.p99_ns.push(p.p99_ns);
        self.missed.push(p.missed);
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Latency limits asked for and whether they were crossed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Limits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_latency_ns: Option<u64>,
    /// Some thread's max exceeded `max_latency_ns`.
    pub exceeded: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_event: Option<BreakEvent>,
    /// The user's deadline for a wake-up (`--deadline`); absent: the
    /// period, past which a wake-up has missed its next deadline. See
    /// [`RunRecord::deadline_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ns: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BreakEvent {
    pub thread: u32,
    pub latency_ns: u64,
    pub at: SampleAt,
}

/// What the system was when the run was made. Two runs compare fairly
/// only where these agree, except for what the user chose to vary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Fingerprint {
    #[serde(default)]
    pub hostname: String,
    pub kernel_release: String,
    pub kernel_version: String,
    #[serde(default)]
    pub machine: String,
    /// none, voluntary, full, rt, lazy, or unknown.
    pub preemption_model: Named<PreemptionModel>,
    /// For PREEMPT_DYNAMIC kernels: the mode in force, when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt_dynamic_mode: Option<String>,
    /// How the preemption model was found (realtime file, uname, config).
    #[serde(default)]
    pub preemption_evidence: Vec<String>,
    pub cpu_model: String,
    pub cpus_online: u32,
    pub cmdline: String,
    /// Facts added by later fingerprint versions, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, String>,
    /// Where the kernel configuration was read (/proc/config.gz or
    /// /boot/config-RELEASE); not compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_config_source: Option<String>,
    /// CONFIG_HZ: scheduler ticks per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hz: Option<u32>,
    /// High-resolution timers in force (CONFIG_HIGH_RES_TIMERS, and a
    /// 1 ns CLOCK_MONOTONIC resolution when measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_res_timers: Option<bool>,
    /// CONFIG_NO_HZ_FULL: tickless CPUs are possible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_hz_full: Option<bool>,
    /// CPUs running without a periodic tick (kernel list, e.g. "2-3").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nohz_full_cpus: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcu: Option<FingerprintRcu>,
    /// Latency-related options of the kernel command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_options: Option<FingerprintBoot>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smt: Option<FingerprintSmt>,
    /// Per online CPU: frequency governor and limits, idle states.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<FingerprintCpu>,
    /// cpuidle driver in use (none when idle is left to the platform).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuidle_driver: Option<String>,
    /// Current clocksource (tsc, arch_sys_counter, hpet ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource: Option<String>,
    /// Real-time throttling: runtime allowed per period, us (-1: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_rt_runtime_us: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_rt_period_us: Option<i64>,
    /// "none" on bare metal, else the hypervisor (kvm, xen ...) or "vm".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtualization: Option<String>,
    /// The rtscope tuning in force during the run (none: untuned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuning: Option<FingerprintTuning>,
}

/// RCU configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FingerprintRcu {
    /// CONFIG_PREEMPT_RCU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt_rcu: Option<bool>,
    /// CONFIG_RCU_BOOST: priority boosting of preempted readers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boost: Option<bool>,
    /// CONFIG_RCU_NOCB_CPU: callbacks can be offloaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nocb_cpu: Option<bool>,
    /// CPUs whose callbacks are offloaded (kernel list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nocb_cpus: Option<String>,
}

/// Kernel command-line options that change latency, as given.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FingerprintBoot {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolcpus: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nohz_full: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcu_nocbs: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irqaffinity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intel_idle_max_cstate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processor_max_cstate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuidle_off: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub threadirqs: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nosmt: Option<String>,
}

/// Simultaneous multithreading.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FingerprintSmt {
    /// on, off, forceoff, notsupported, notimplemented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<bool>,
    pub threads_per_core: u32,
}

/// One online CPU.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FingerprintCpu {
    pub cpu: u32,
    /// cpufreq governor (none without a cpufreq driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_khz: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_khz: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idle_states: Vec<FingerprintIdleState>,
    /// The core within its package (`topology/core_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_id: Option<u32>,
    /// The package, or socket (`topology/physical_package_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_id: Option<u32>,
    /// The NUMA node (none on a kernel without NUMA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_node: Option<u32>,
    /// The hardware threads of this CPU's core, itself included (kernel
    /// list, e.g. "5,69").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smt_siblings: Option<String>,
}

impl FingerprintCpu {
    /// Where the CPU sits, fields a comparison leaves out: records
    /// written before they existed would otherwise differ from newer
    /// ones of the same machine, which `cpu_model`, `cpus_online` and
    /// `smt` already tell apart.
    pub const PLACE: &'static [&'static str] =
        &["core_id", "package_id", "numa_node", "smt_siblings"];
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FingerprintIdleState {
    pub name: String,
    pub exit_latency_us: u64,
    pub disabled: bool,
}

/// Tuning rtscope applied (`rtscope tune`, `measure --isolate`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FingerprintTuning {
    /// "run" (measure --isolate) or "persistent" (rtscope tune isolate).
    pub mode: String,
    /// The command that applied it; not compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    pub isolated_cpus: String,
    pub housekeeping_cpus: String,
    /// Settings changed (cpuset, tasks, irq-affinity, governor ...).
    pub settings: Vec<String>,
}

impl Fingerprint {
    /// Fields that describe how a fact was found rather than the system;
    /// they never make two runs incomparable.
    pub const NOT_COMPARED: &'static [&'static str] = &[
        "preemption_evidence",
        "hostname",
        "kernel_config_source",
        "tuning.command",
    ];

    /// The fingerprint as flat `dotted.path = value` pairs, sorted.
    pub fn flatten(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let v = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        flatten_into("", &v, &mut out);
        out
    }

    /// The comparable part: every flattened field except
    /// [`Self::NOT_COMPARED`] and where each CPU sits
    /// ([`FingerprintCpu::PLACE`]).
    pub fn comparable(&self) -> BTreeMap<String, String> {
        let mut f = self.flatten();
        f.retain(|k, _| {
            let place = k
                .strip_prefix("cpus.")
                .and_then(|r| r.split_once('.'))
                .is_some_and(|(_, field)| FingerprintCpu::PLACE.contains(&field));
            !place
                && !Self::NOT_COMPARED
                    .iter()
                    .any(|n| k == n || k.starts_with(&format!("{n}.")))
        });
        f
    }

    /// A stable hash (FNV-1a 64, hex) of the comparable part: equal
    /// hashes mean the systems agree on everything recorded.
    pub fn comparable_hash(&self) -> String {
        let mut h: u64 = 0xcbf29ce484222325;
        for (k, v) in self.comparable() {
            for b in k.bytes().chain([0u8]).chain(v.bytes()).chain([0xffu8]) {
                h ^= b as u64;
                h = h.wrapping_mul(0x100000001b3);
            }
        }
        format!("{h:016x}")
    }

    /// Comparable fields that differ: `(field, self's value, other's value)`
    /// (a missing field shows as an empty value).
    pub fn differences(&self, other: &Fingerprint) -> Vec<(String, String, String)> {
        let a = self.comparable();
        let b = other.comparable();
        let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .filter_map(|k| {
                let (x, y) = (
                    a.get(k).cloned().unwrap_or_default(),
                    b.get(k).cloned().unwrap_or_default(),
                );
                (x != y).then(|| (k.clone(), x, y))
            })
            .collect()
    }
}

fn flatten_into(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, String>) {
    use serde_json::Value;
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                flatten_into(&key(k), v, out);
            }
        }
        Value::Array(items) => {
            let scalar = items.iter().all(|i| !i.is_object() && !i.is_array());
            if scalar {
                let parts: Vec<String> = items
                    .iter()
                    .map(|i| match i {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect();
                out.insert(prefix.to_string(), parts.join(","));
            } else {
                for (i, item) in items.iter().enumerate() {
                    flatten_into(&key(&i.to_string()), item, out);
                }
            }
        }
        Value::Null => {}
        Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

impl LatencyStats {
    /// Quantiles from `h`, clamped into the exact `[min, max]` (into the
    /// one of them known, when a source gave only one). Stats whose min is
    /// above their max (refused by [`LatencyStats::check`], so they should
    /// never get here) keep the histogram's quantiles.
    pub fn fill_quantiles(&mut self, h: &Histogram) {
        let clamp = |v: Option<u64>| match (v, self.min_ns, self.max_ns) {
            (Some(v), Some(lo), Some(hi)) if lo <= hi => Some(v.clamp(lo, hi)),
            (Some(_), Some(lo), Some(hi)) if lo > hi => v,
            (Some(v), lo, hi) => Some(v.max(lo.unwrap_or(0)).min(hi.unwrap_or(u64::MAX))),
            (None, _, _) => None,
        };
        self.p50_ns = clamp(h.quantile(0.5));
        self.p90_ns = clamp(h.quantile(0.9));
        self.p99_ns = clamp(h.quantile(0.99));
        self.p999_ns = clamp(h.quantile(0.999));
        self.p9999_ns = clamp(h.quantile(0.9999));
    }

    /// What every reader relies on: the extremes in order, the
    /// percentiles between them, and an average that is a number. (The
    /// average may lie below the minimum: it counts corrected samples, the
    /// minimum only real wake-ups.)
    pub fn check(&self) -> Result<(), StatsError> {
        if let (Some(min_ns), Some(max_ns)) = (self.min_ns, self.max_ns)
            && min_ns > max_ns
        {
            return Err(StatsError::MinAboveMax { min_ns, max_ns });
        }
        if let Some(avg) = self.avg_ns
            && !(avg.is_finite() && avg >= 0.0)
        {
            return Err(StatsError::Avg(avg));
        }
        validate::check_quantiles(self)
    }

    /// Value of a named metric (`min`, `avg`, `p50` … `p99.99`, `max`), ns,
    /// as the record keeps it: a quantile in the overflow is the value the
    /// histogram puts there, not a fact; a view states it through
    /// [`LatencyStats::metric`].
    pub fn metric_ns(&self, name: &str) -> Option<f64> {
        Some(match name {
            "min" => self.min_ns? as f64,
            "avg" => self.avg_ns?,
            "p50" => self.p50_ns? as f64,
            "p90" => self.p90_ns? as f64,
            "p99" => self.p99_ns? as f64,
            "p99.9" | "p999" => self.p999_ns? as f64,
            "p99.99" | "p9999" => self.p9999_ns? as f64,
            "max" => self.max_ns? as f64,
            _ => return None,
        })
    }

    /// The quantile `q` whose figure the record keeps as `value`, as the
    /// samples allow it to be stated. The overflows are the largest
    /// samples: when the quantile's rank ([`crate::histogram::rank_for`]
    /// of `samples`) falls among them, its value is unknown and at least
    /// the overflow's `from_ns` ([`Stated::AtLeast`]), except at the last
    /// rank, the maximum, which the source gave exactly. The one rule of
    /// a quantile in the overflow, for every view. (A bound does not need
    /// `value`: a record whose quantile among the overflows was written
    /// `null`, as `serve`'s JSON gives it, reads as the same bound.)
    pub fn stated(&self, q: f64, value: Option<u64>) -> Option<Stated<u64>> {
        let Some(o) = self.overflow.filter(|o| o.count > 0 && self.samples > 0) else {
            return value.map(Stated::Exact);
        };
        let rank = crate::histogram::rank_for(q, self.samples);
        if rank <= self.samples.saturating_sub(o.count) {
            value.map(Stated::Exact)
        } else if rank == self.samples
            && let Some(max) = self.max_ns
        {
            Some(Stated::Exact(max))
        } else {
            Some(Stated::AtLeast(o.from_ns))
        }
    }

    /// A named quantile (`p50` … `p99.99`, or its key `p999`), as the
    /// samples allow it to be stated ([`LatencyStats::stated`]).
    pub fn quantile(&self, name: &str) -> Option<Stated<u64>> {
        let &(_, key, q) = QUANTILES
            .iter()
            .find(|(n, k, _)| *n == name || *k == name)?;
        let value = match key {
            "p50" => self.p50_ns,
            "p90" => self.p90_ns,
            "p99" => self.p99_ns,
            "p999" => self.p999_ns,
            _ => self.p9999_ns,
        };
        self.stated(q, value)
    }

    /// A named metric ([`METRICS`]), as the samples allow it to be
    /// stated: a quantile in the overflow is a bound; min, avg and max
    /// are exact.
    pub fn metric(&self, name: &str) -> Option<Stated<f64>> {
        match self.quantile(name) {
            Some(q) => Some(q.map(|v| v as f64)),
            None => self.metric_ns(name).map(Stated::Exact),
        }
    }

    /// Combine per-thread stats (with their histograms) into one.
    pub fn combine(parts: &[(&LatencyStats, &Histogram)]) -> (LatencyStats, Histogram) {
        let mut h = Histogram::new(LATENCY_SUB_BITS);
        let mut out = LatencyStats::default();
        let mut weighted = 0.0f64;
        for (s, hist) in parts {
            h.merge(hist);
            out.samples += s.samples;
            out.wakeups += s.wakeups;
            out.missed_periods += s.missed_periods;
            out.early_wakeups += s.early_wakeups;
            out.max_early_ns = out.max_early_ns.max(s.max_early_ns);
            if let Some(avg) = s.avg_ns {
                weighted += avg * s.samples as f64;
            }
            if let Some(m) = s.min_ns
                && out.min_ns.is_none_or(|o| m < o)
            {
                out.min_ns = Some(m);
                out.min_at = s.min_at;
            }
            if let Some(m) = s.max_ns
                && out.max_ns.is_none_or(|o| m > o)
            {
                out.max_ns = Some(m);
                out.max_at = s.max_at;
            }
            if let Some(o) = s.overflow.filter(|o| o.count > 0) {
                out.overflow = Some(match out.overflow {
                    Some(a) => Overflow {
                        count: a.count + o.count,
                        from_ns: a.from_ns.min(o.from_ns),
                    },
                    None => o,
                });
            }
        }
        if out.samples > 0 {
            out.avg_ns = Some(weighted / out.samples as f64);
        }
        out.fill_quantiles(&h);
        (out, h)
    }
}

impl RunRecord {
    /// The deadline a wake-up is judged against: the user's
    /// (`limits.deadline_ns`), else the period; unknown when neither is
    /// (an import that did not know its interval).
    pub fn deadline_ns(&self) -> Option<u64> {
        self.limits.deadline_ns.or_else(|| {
            (self.knows(Unknowable::Interval) && self.options.interval_ns > 0)
                .then_some(self.options.interval_ns)
        })
    }

    /// Whether the run's source recorded `what`. Measured runs know
    /// everything; imports say what they did not know
    /// (`source.unknown`); imports recorded before that list existed are
    /// judged by their placeholders (an interval or duration of 0, policy
    /// "unknown" and priority 0, a cyclictest format's missed periods).
    pub fn knows(&self, what: Unknowable) -> bool {
        if let Some(known) = self.source.recorded(what) {
            return known;
        }
        let cyclictest = self
            .source
            .format
            .as_deref()
            .is_some_and(|f| f.starts_with("cyclictest"));
        match what {
            Unknowable::Interval => self.options.interval_ns > 0,
            Unknowable::Duration => self.duration_ns > 0,
            Unknowable::Policy => self.options.policy != "unknown",
            Unknowable::Priority => self.options.priority != 0 || self.options.policy != "unknown",
            Unknowable::Mlockall => self.options.mlockall,
            Unknowable::MissedPeriods => !cyclictest || self.overall.missed_periods > 0,
            Unknowable::Count => true,
        }
    }

    /// Merged histogram of all threads.
    pub fn overall_histogram(&self) -> Result<Histogram, HistogramError> {
        let mut h = Histogram::new(LATENCY_SUB_BITS);
        for t in &self.threads {
            t.histogram.merge_into(&mut h)?;
        }
        Ok(h)
    }

    /// Check the parts of a record a reader relies on: what every stored
    /// run (those saved by older versions too) and every run the engine
    /// builds must hold. Records from files and boards come in through
    /// [`RunRecord::admit`], which repairs what it can first and checks
    /// their texts and counts as well.
    pub fn validate(&self) -> Result<(), InvalidRecord> {
        if self.schema != SCHEMA_NAME {
            return Err(InvalidRecord::Schema(self.schema.clone()));
        }
        if self.schema_version > SCHEMA_VERSION {
            return Err(InvalidRecord::Newer(self.schema_version));
        }
        self.overall.check().map_err(InvalidRecord::Overall)?;
        let mut all_samples = 0u64;
        for t in &self.threads {
            let thread = t.index;
            t.stats
                .check()
                .map_err(|stats| InvalidRecord::Thread { thread, stats })?;
            let h = t
                .histogram
                .to_histogram()
                .map_err(|error| InvalidRecord::Histogram { thread, error })?;
            // Imports from sources without a histogram (summary lines)
            // keep the source's count beside an empty histogram.
            let no_histogram =
                self.source.kind.is(SourceKind::Imported) && t.histogram.buckets.is_empty();
            if !no_histogram && h.total() != t.stats.samples {
                return Err(InvalidRecord::Samples {
                    thread,
                    histogram: h.total(),
                    stats: t.stats.samples,
                });
            }
            // Readers merge the threads: their sum must fit too.
            all_samples = all_samples
                .checked_add(h.total().max(t.stats.samples))
                .ok_or(InvalidRecord::TooManySamples { thread })?;
            let w = &t.windows;
            let n = w.count.len();
            if [
                w.min_ns.len(),
                w.avg_ns.len(),
                w.max_ns.len(),
                w.p99_ns.len(),
                w.missed.len(),
            ]
            .iter()
            .any(|&l| l != n)
            {
                return Err(InvalidRecord::WindowColumns(thread));
            }
            if let Some(window) = (0..n).find(|&i| w.count[i] > 0 && w.min_ns[i] > w.max_ns[i]) {
                return Err(InvalidRecord::Window {
                    thread,
                    window,
                    min_ns: w.min_ns[window],
                    max_ns: w.max_ns[window],
                });
            }
        }
        Ok(())
    }
}

/// Why latency stats contradict themselves ([`LatencyStats::check`]).
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum StatsError {
    #[error("its min ({min_ns} ns) is above its max ({max_ns} ns)")]
    MinAboveMax { min_ns: u64, max_ns: u64 },
    #[error("its avg ({0}) is not a latency")]
    Avg(f64),
    #[error("its {name} ({value_ns} ns) is above its max ({max_ns} ns)")]
    QuantileAboveMax {
        name: &'static str,
        value_ns: u64,
        max_ns: u64,
    },
    #[error("its {name} ({value_ns} ns) is below its min ({min_ns} ns)")]
    QuantileBelowMin {
        name: &'static str,
        value_ns: u64,
        min_ns: u64,
    },
}

/// Why a record's parts disagree ([`RunRecord::validate`]): each names
/// the part a reader cannot rely on.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum InvalidRecord {
    #[error("not an rtscope run record (schema '{0}')")]
    Schema(String),
    #[error(
        "run record schema version {0} is newer than this rtscope understands ({SCHEMA_VERSION}): upgrade rtscope"
    )]
    Newer(u32),
    #[error("the all-threads summary contradicts itself: {0}")]
    Overall(StatsError),
    #[error("thread {thread} contradicts itself: {stats}")]
    Thread { thread: u32, stats: StatsError },
    #[error("thread {thread}: {error}")]
    Histogram { thread: u32, error: HistogramError },
    #[error("thread {thread}: histogram holds {histogram} samples but stats say {stats}")]
    Samples {
        thread: u32,
        histogram: u64,
        stats: u64,
    },
    #[error(
        "the threads hold more than {max} samples together (up to thread {thread})",
        max = u64::MAX
    )]
    TooManySamples { thread: u32 },
    /// A field no writer of records gives such a value.
    #[error("{field}: {why}")]
    Field { field: String, why: String },
    #[error("thread {0}: window columns differ in length")]
    WindowColumns(u32),
    #[error(
        "thread {thread} contradicts itself: window {window} has its min ({min_ns} ns) above its max ({max_ns} ns)"
    )]
    Window {
        thread: u32,
        window: usize,
        min_ns: u64,
        max_ns: u64,
    },
}

/// Why a text is not a usable run record.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ReadError {
    /// Not JSON, or not the record's layout.
    #[error("line {line}: {message}")]
    Json { line: usize, message: String },
    /// A record whose parts disagree ([`RunRecord::validate`]).
    #[error(transparent)]
    Invalid(#[from] InvalidRecord),
}

/// Read a run record from JSON and check it: the one way records written
/// by `--json` or `runs export` come back in (`report`, `import`, …), so
/// none reaches the statistics unchecked.
pub fn from_json(text: &str) -> Result<RunRecord, ReadError> {
    let mut rec: RunRecord = serde_json::from_str(text).map_err(|e| ReadError::Json {
        line: e.line(),
        message: e.to_string(),
    })?;
    rec.admit()?;
    Ok(rec)
}

/// A fresh random run id: 32 hex digits from the kernel's random source.
pub fn new_run_uuid() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_ok();
    if !ok {
        // Fall back on time and pid: unique enough on one machine.
        let t = crate::sys::clock::unix_now_ns() as u128;
        let v = t ^ ((std::process::id() as u128) << 64);
        bytes = v.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A small, complete record built from raw latencies (one list per thread,
/// 1 ms interval, max at cycle 42): for tests of readers and writers.
#[doc(hidden)]
pub fn synthetic(threads: &[Vec<u64>]) -> RunRecord {
    let (trs, hists): (Vec<ThreadRecord>, Vec<Histogram>) = threads
        .iter()
        .enumerate()
        .map(|(i, vals)| synthetic_thread(i, vals))
        .unzip();
    let parts: Vec<_> = trs
        .iter()
        .zip(hists.iter())
        .map(|(t, h)| (&t.stats, h))
        .collect();
    let (overall, _) = LatencyStats::combine(&parts);
    RunRecord {
        schema: SCHEMA_NAME.into(),
        schema_version: SCHEMA_VERSION,
        run_uuid: "0123456789abcdef0123456789abcdef".into(),
        tool: ToolInfo::this(),
        status: RunStatus::Complete,
        source: RunSource {
            kind: SourceKind::Measured.into(),
            format: None,
            file: None,
            command_line: vec![],
            unknown: vec![],
        },
        label: None,
        tags: BTreeMap::new(),
        started_at_unix_ns: 1_700_000_000_000_000_000,
        ended_at_unix_ns: Some(1_700_000_060_000_000_000),
        duration_ns: 60_000_000_000,
        end_reason: EndReason::Duration,
        options: synthetic_options(threads.len()),
        threads: trs,
        overall,
        limits: Limits::default(),
        load: None,
        fingerprint: Fingerprint {
            hostname: "testhost".into(),
            kernel_release: "6.1.0-test".into(),
            kernel_version: "#1 SMP PREEMPT_DYNAMIC".into(),
            machine: "x86_64".into(),
            preemption_model: PreemptionModel::Dynamic.into(),
            cpu_model: "Test CPU".into(),
            cpus_online: threads.len() as u32,
            ..Default::default()
        },
        warnings: vec![],
        explain: None,
        quantity: None,
    }
}

/// Thread `i` of [`synthetic`] (on CPU `i`), and its histogram.
fn synthetic_thread(i: usize, vals: &[u64]) -> (ThreadRecord, Histogram) {
    let mut h = Histogram::latency();
    for v in vals {
        h.record(*v);
    }
    let at = |cycle: u64| SampleAt {
        cycle,
        offset_ns: cycle * 1_000_000,
        unix_ns: 1_700_000_000_000_000_000 + cycle * 1_000_000,
    };
    let mut stats = LatencyStats {
        samples: vals.len() as u64,
        wakeups: vals.len() as u64,
        min_ns: vals.iter().copied().min(),
        max_ns: vals.iter().copied().max(),
        avg_ns: (!vals.is_empty()).then(|| vals.iter().sum::<u64>() as f64 / vals.len() as f64),
        min_at: (!vals.is_empty()).then(|| at(0)),
        max_at: (!vals.is_empty()).then(|| at(42)),
        ..Default::default()
    };
    stats.fill_quantiles(&h);
    let thread = ThreadRecord {
        index: i as u32,
        cpu: Some(i as u32),
        tid: None,
        policy: "fifo".into(),
        priority: 95,
        interval_ns: 1_000_000,
        stats,
        warmup: None,
        histogram: HistogramRecord::from_histogram(&h, 1),
        windows: WindowSeries {
            window_ns: 1_000_000_000,
            ..Default::default()
        },
        outliers: vals
            .iter()
            .copied()
            .max()
            .map(|m| {
                vec![Outlier {
                    latency_ns: m,
                    at: at(42),
                }]
            })
            .unwrap_or_default(),
        context: None,
        contexts: Vec::new(),
        noise: None,
        exceedances: None,
    };
    (thread, h)
}

/// The options of [`synthetic`]: `n` threads at SCHED_FIFO 95, 1 ms,
/// for 60 s.
fn synthetic_options(n: usize) -> MeasureOptions {
    MeasureOptions {
        interval_ns: 1_000_000,
        distance_ns: 0,
        policy: "fifo".into(),
        priority: 95,
        priospread: false,
        timer: "abs".into(),
        clock: "monotonic".into(),
        duration_ns: Some(60_000_000_000),
        loops: None,
        warmup_ns: 0,
        window_ns: 1_000_000_000,
        omission_correction: true,
        mlockall: true,
        dma_latency_us: Some(0),
        cpus: (0..n as u32).map(Some).collect(),
        main_affinity: None,
        deadline: None,
    }
}

/// The JSON Schema of [`RunRecord`], pretty-printed.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(RunRecord);
    serde_json::to_string_pretty(&schema).expect("schema serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 54: cyclictest-old-hist.txt (20 000 periods, 40 overflows
    /// from 40 µs, the largest 19 085 µs) and a run of 2 575 samples with
    /// 44 overflows.
    #[test]
    fn a_quantile_among_the_overflows_is_a_lower_bound() {
        let mut s = LatencyStats {
            samples: 20_000,
            p50_ns: Some(17_500),
            p99_ns: Some(33_500),
            p999_ns: Some(40_500),
            p9999_ns: Some(40_500),
            min_ns: Some(2_000),
            max_ns: Some(19_085_000),
            overflow: Some(Overflow {
                count: 40,
                from_ns: 40_000,
            }),
            ..Default::default()
        };
        assert_eq!(s.quantile("p50"), Some(Stated::Exact(17_500)));
        // Rank 19 800 of 20 000: below the 40 overflows.
        assert_eq!(s.quantile("p99"), Some(Stated::Exact(33_500)));
        // Ranks 19 980 and 19 998: among them.
        assert_eq!(s.quantile("p99.9"), Some(Stated::AtLeast(40_000)));
        assert_eq!(s.quantile("p9999"), Some(Stated::AtLeast(40_000)));
        assert_eq!(s.metric("p99.9"), Some(Stated::AtLeast(40_000.0)));
        assert_eq!(s.metric("max"), Some(Stated::Exact(19_085_000.0)));
        assert_eq!(s.quantile("p90"), None, "no figure stays no figure");
        // A bound written null (serve's JSON) reads as the same bound.
        let mut nulled = s.clone();
        nulled.p999_ns = None;
        assert_eq!(nulled.quantile("p99.9"), Some(Stated::AtLeast(40_000)));
        // 2 575 samples, 44 overflows: p99 (rank 2 550) is a bound too.
        s.samples = 2_575;
        s.overflow = Some(Overflow {
            count: 44,
            from_ns: 50_000,
        });
        assert_eq!(s.quantile("p99"), Some(Stated::AtLeast(50_000)));
        assert_eq!(s.quantile("p50"), Some(Stated::Exact(17_500)));
        // The last rank is the maximum, which the source gave.
        s.samples = 10;
        s.overflow = Some(Overflow {
            count: 2,
            from_ns: 50_000,
        });
        assert_eq!(s.quantile("p99.99"), Some(Stated::Exact(19_085_000)));
        assert_eq!(s.quantile("p50"), Some(Stated::Exact(17_500)));
        // Without overflows every quantile is a figure.
        s.overflow = None;
        assert_eq!(s.quantile("p99.9"), Some(Stated::Exact(40_500)));
    }

    #[test]
    fn combine_keeps_exact_extremes_and_weights_average() {
        let mut h1 = Histogram::latency();
        let mut h2 = Histogram::latency();
        for v in [1000, 2000, 3000] {
            h1.record(v);
        }
        h2.record(10_000);
        let at = |c| {
            Some(SampleAt {
                cycle: c,
                offset_ns: c,
                unix_ns: c,
            })
        };
        let s1 = LatencyStats {
            samples: 3,
            wakeups: 3,
            min_ns: Some(1000),
            max_ns: Some(3000),
            avg_ns: Some(2000.0),
            min_at: at(1),
            max_at: at(2),
            ..Default::default()
        };
        let s2 = LatencyStats {
            samples: 1,
            wakeups: 1,
            min_ns: Some(10_000),
            max_ns: Some(10_000),
            avg_ns: Some(10_000.0),
            missed_periods: 2,
            min_at: at(7),
            max_at: at(7),
            ..Default::default()
        };
        let (all, h) = LatencyStats::combine(&[(&s1, &h1), (&s2, &h2)]);
        assert_eq!(all.samples, 4);
        assert_eq!(all.min_ns, Some(1000));
        assert_eq!(all.max_ns, Some(10_000));
        assert_eq!(all.max_at.unwrap().cycle, 7);
        assert_eq!(all.avg_ns, Some(4000.0));
        assert_eq!(all.missed_periods, 2);
        assert_eq!(h.total(), 4);
        // 2000 lies in the 2-ns bucket [2000, 2001]: its midpoint is reported.
        assert_eq!(all.p50_ns, Some(2001));
        assert_eq!(all.metric_ns("max"), Some(10_000.0));
        assert_eq!(all.metric_ns("bogus"), None);
    }

    #[test]
    fn contradictory_stats_never_panic_and_are_refused() {
        let h = {
            let mut h = Histogram::latency();
            h.record_n(7_000, 10);
            h
        };
        let mut s = LatencyStats {
            samples: 10,
            wakeups: 10,
            min_ns: Some(15_000),
            max_ns: Some(0),
            ..Default::default()
        };
        s.fill_quantiles(&h);
        assert!(s.p50_ns.is_some());
        assert!(
            s.check()
                .unwrap_err()
                .to_string()
                .contains("min (15000 ns) is above its max (0 ns)")
        );
        let mut rec = synthetic(&[vec![1_000, 2_000]]);
        rec.validate().unwrap();
        rec.threads[0].stats.min_ns = Some(15_000);
        let e = rec.validate().unwrap_err().to_string();
        assert!(e.starts_with("thread 0 contradicts itself"), "{e}");
        let mut rec = synthetic(&[vec![1_000, 2_000]]);
        rec.overall.max_ns = Some(1);
        assert!(
            rec.validate()
                .unwrap_err()
                .to_string()
                .contains("all-threads summary")
        );
        let mut rec = synthetic(&[vec![1_000, 2_000]]);
        rec.threads[0].windows.push(WindowPoint {
            count: 2,
            min_ns: 5,
            avg_ns: 4,
            max_ns: 3,
            p99_ns: 3,
            missed: 0,
        });
        assert!(rec.validate().unwrap_err().to_string().contains("window 0"));
    }

    #[test]
    fn from_json_reads_checks_and_says_where() {
        let rec = synthetic(&[vec![1_000, 2_000]]);
        let text = serde_json::to_string_pretty(&rec).unwrap();
        assert_eq!(from_json(&text).unwrap(), rec);
        assert!(matches!(
            from_json("{\n  \"schema\": 3\n}"),
            Err(ReadError::Json { line: 2, .. })
        ));
        let bad = text.replace("\"min_ns\": 1000", "\"min_ns\": 9000");
        assert!(matches!(from_json(&bad), Err(ReadError::Invalid(_))));
    }

    /// The sparse readers give what the dense table gives: as written,
    /// out of order or repeated, of another precision, and refuse what it
    /// refuses.
    #[test]
    fn sparse_buckets_read_as_the_dense_table() {
        let mut h = Histogram::latency();
        for (v, n) in [(5, 1), (999, 3), (123_456, 7), (9_000_000, 2)] {
            h.record_n(v, n);
        }
        let written = HistogramRecord::from_histogram(&h, 1);
        let mut shuffled = written.clone();
        shuffled.buckets.reverse();
        shuffled.buckets.push(shuffled.buckets[0]);
        let mut coarse = Histogram::new(4);
        coarse.record_n(70_000, 5);
        let coarse = HistogramRecord::from_histogram(&coarse, 1);
        for r in [&written, &shuffled, &coarse] {
            let dense = r.to_histogram().unwrap();
            let want: Vec<_> = dense.iter_buckets().collect();
            assert_eq!(r.nonzero_buckets().unwrap(), want);
            let (mut a, mut b) = (h.clone(), h.clone());
            a.merge(&dense);
            r.merge_into(&mut b).unwrap();
            assert_eq!(a, b);
        }
        let mut bad = written.clone();
        bad.buckets[2][0] += 1;
        assert!(matches!(
            bad.nonzero_buckets(),
            Err(HistogramError::NotBucketStart(_))
        ));
        let mut huge = written.clone();
        huge.buckets[0][1] = u64::MAX;
        assert!(huge.nonzero_buckets().is_err());
        let mut full = Histogram::latency();
        full.record_n(1, u64::MAX - 1);
        assert!(matches!(
            written.merge_into(&mut full),
            Err(HistogramError::TooMany)
        ));
    }

    #[test]
    fn histogram_record_round_trip() {
        let mut h = Histogram::latency();
        h.record_n(123_456, 7);
        h.record(5);
        let r = HistogramRecord::from_histogram(&h, 1);
        assert_eq!(r.to_histogram().unwrap(), h);
        let json = serde_json::to_string(&r).unwrap();
        let back: HistogramRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn fingerprint_hash_and_differences() {
        let a = synthetic(&[vec![1000]]).fingerprint;
        let mut b = a.clone();
        b.hostname = "other".into();
        b.preemption_evidence = vec!["x".into()];
        assert_eq!(
            a.comparable_hash(),
            b.comparable_hash(),
            "evidence and hostname are not compared"
        );
        b.preemption_model = "rt".into();
        b.extra.insert("governor".into(), "performance".into());
        assert_ne!(a.comparable_hash(), b.comparable_hash());
        let d = a.differences(&b);
        assert_eq!(
            d,
            vec![
                (
                    "extra.governor".to_string(),
                    "".to_string(),
                    "performance".to_string()
                ),
                (
                    "preemption_model".to_string(),
                    "dynamic".to_string(),
                    "rt".to_string()
                ),
            ]
        );
        assert_eq!(a.comparable_hash().len(), 16);
    }

    #[test]
    fn uuids_are_distinct_hex() {
        let a = new_run_uuid();
        let b = new_run_uuid();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
