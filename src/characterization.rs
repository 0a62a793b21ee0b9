//! The record of a characterization (`rtscope characterize`): the one
//! data contract of it, as `record.rs` is for runs. What `--json` writes,
//! the store keeps and the reports read (units in field names), and the
//! verdict of the priority-inversion rows. Plain data: nothing here
//! measures, and it imports nothing above it (`characterize` re-exports
//! it; the store reads it from here).

use crate::record::Fingerprint;
use serde::{Deserialize, Serialize};

/// The `schema` field of a characterization's JSON.
pub const SCHEMA: &str = "rtscope-characterization/1";

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
    /// Of the counted trials, how many gave the high thread the mutex only
    /// after the hog's busy time (all of them without PI). Absent from
    /// records written before the order of events was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_hog: Option<u64>,
    /// Of the counted trials, how many gave it the mutex before the hog
    /// had begun (all of them with PI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_hog: Option<u64>,
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
    pub fn from_json(text: &str) -> Result<Characterization, ReadError> {
        let c: Characterization = serde_json::from_str(text).map_err(ReadError::Json)?;
        if c.schema != SCHEMA {
            return Err(ReadError::Schema(c.schema));
        }
        Ok(c)
    }
}

/// Why a text is not a characterization this rtscope reads.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Not JSON, or not a characterization's layout.
    #[error("{0}")]
    Json(serde_json::Error),
    #[error("unknown schema '{0}' (expected {SCHEMA})")]
    Schema(String),
}

/// The verdict from the inversion rows, when both were measured.
pub fn pi_verdict(results: &[BenchResult]) -> Option<PiVerdict> {
    let row = |p: &str| {
        results
            .iter()
            .find(|r| r.inversion.as_ref().is_some_and(|d| d.protocol == p))
    };
    let (plain, pi) = (row("plain")?, row("pi")?);
    let (plain_d, pi_d) = (plain.inversion.as_ref()?, pi.inversion.as_ref()?);
    let hog = plain_d.hog_busy_ns;
    // The order of events where the record keeps it; older records only
    // have the waits.
    let shown = plain.stats.count > 0
        && match plain_d.after_hog {
            Some(n) => n == plain_d.trials,
            None => plain.stats.min_ns >= hog,
        };
    let solved = pi.stats.count > 0
        && match pi_d.before_hog {
            Some(n) => n == pi_d.trials,
            None => pi.stats.max_ns < hog,
        };
    let us = |ns: u64| format!("{:.1} µs", ns as f64 / 1000.0);
    let text = match (shown, solved) {
        (true, true) => format!(
            "PI works on this system: without PI the high-priority thread waited for the hog every time, at least {} (the hog runs {}); with PI it got the mutex before the hog ran, waiting at most {}",
            us(plain.stats.min_ns),
            us(hog),
            us(pi.stats.max_ns)
        ),
        (_, false) => format!(
            "PI does NOT work on this system: with a PI mutex the high-priority thread still waited for the hog in {} of {} trials, up to {} (the hog runs {})",
            pi_d.before_hog.map_or(pi_d.trials, |n| pi_d.trials - n),
            pi_d.trials,
            us(pi.stats.max_ns),
            us(hog)
        ),
        (false, true) => format!(
            "inversion not shown: without PI the high-priority thread waited for the hog in {} of {} trials, at least {} (the hog runs {}); PI waited at most {}",
            plain_d.after_hog.unwrap_or(0),
            plain_d.trials,
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
