//! A probabilistic worst case from a run's histogram (and, when there is
//! one, its series of window maxima), or a refusal that says why not.
//!
//! Pure functions, no I/O. [`analyze`] takes a [`TailInput`] (the
//! histogram's bins as intervals, the loop's period, optionally the
//! window maxima, the two halves of the run, the times of exceedances)
//! and returns a [`TailEstimate`]: every candidate threshold with its
//! test, the fits, the extremal index, every gate with its figure, and
//! either return levels with their 95 % bounds or `Insufficient` (the
//! first failed gate, with what the run does support: its observed
//! maximum and the 3/N bound). Method and limits: docs/tail.md.

mod ad;
mod ad_table;
mod cluster;
mod gates;
mod gev;
mod gpd;
mod levels;
mod optim;
mod threshold;

#[cfg(test)]
mod coverage;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use cluster::ExtremalIndex;
pub use gates::{Gate, GateName, GateStatus};
pub use gev::GevFit;
pub use levels::{DeadlineRisk, Horizon, ReturnLevel};
pub use threshold::ThresholdTest;

use crate::histogram::Histogram;

/// One bin of a histogram: `count` samples in `[lo_ns, hi_ns)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bin {
    pub lo_ns: u64,
    pub hi_ns: u64,
    pub count: u64,
}

/// The maxima of consecutive windows of equal length, in time order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowMaxima {
    pub length_s: f64,
    pub max_ns: Vec<f64>,
}

/// Wake-ups (numbered from the start of the run) whose latency was above
/// `threshold_ns`: the order a histogram loses, for the extremal index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExceedanceTimes {
    pub threshold_ns: u64,
    pub wakeups: Vec<u64>,
    /// The latency of each, in the order of `wakeups` (empty when the
    /// source gave none): θ is then taken at the fit's threshold when that
    /// is higher, where it matters for the levels.
    #[serde(default)]
    pub latencies_ns: Vec<u64>,
}

impl ExceedanceTimes {
    /// The exceedances above `threshold_ns` (no higher than the table's
    /// own: a lower one would need values the table did not keep), when
    /// the latencies are known.
    pub fn above(&self, threshold_ns: u64) -> Option<ExceedanceTimes> {
        if threshold_ns <= self.threshold_ns || self.latencies_ns.len() != self.wakeups.len() {
            return None;
        }
        let (wakeups, latencies_ns) = self
            .wakeups
            .iter()
            .zip(&self.latencies_ns)
            .filter(|&(_, &l)| l > threshold_ns)
            .map(|(&w, &l)| (w, l))
            .unzip();
        Some(ExceedanceTimes {
            threshold_ns,
            wakeups,
            latencies_ns,
        })
    }
}

/// What the analysis reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TailInput {
    /// Ascending, not overlapping; empty bins may be left out.
    pub bins: Vec<Bin>,
    /// Total count (must equal the bins' sum).
    pub samples: u64,
    pub period_ns: u64,
    #[serde(default)]
    pub windows: Option<WindowMaxima>,
    /// The first and second half of the run's histogram (held-out check).
    #[serde(default)]
    pub halves: Option<[Vec<Bin>; 2]>,
    #[serde(default)]
    pub exceedance_times: Option<ExceedanceTimes>,
    /// The run's exact largest sample, when the source kept it: the
    /// observed maximum then is this, never a bin's upper edge. It must
    /// lie in the highest non-empty bin.
    #[serde(default)]
    pub max_ns: Option<u64>,
}

/// Bins of an rtscope histogram (`[lower, upper + 1)` per bucket).
pub fn bins_of(h: &Histogram) -> Vec<Bin> {
    h.iter_buckets()
        .map(|(lo, hi, count)| Bin {
            lo_ns: lo,
            hi_ns: hi.saturating_add(1),
            count,
        })
        .collect()
}

impl TailInput {
    /// The input of a histogram alone.
    pub fn from_histogram(h: &Histogram, period_ns: u64) -> TailInput {
        TailInput {
            bins: bins_of(h),
            samples: h.total(),
            period_ns,
            windows: None,
            halves: None,
            exceedance_times: None,
            max_ns: None,
        }
    }
}

/// Settings of the analysis; [`Default`] gives the documented ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TailOptions {
    /// The return levels are exceeded with this probability per horizon.
    pub probability: f64,
    /// A deadline whose risk per hour is estimated.
    pub deadline_ns: Option<u64>,
    /// The exceedances gate's minimum.
    pub min_exceedances: u64,
    /// ForwardStop's level.
    pub alpha: f64,
    /// The goodness-of-fit gate's minimum p-value.
    pub min_p_value: f64,
    /// Number of candidate thresholds, and the exceedances of the lowest.
    pub candidates: usize,
    pub max_exceedances: u64,
    /// A return level is an estimate only while its horizon is at most
    /// this many times what was observed (wake-ups ÷ samples for the
    /// histogram, horizon ÷ the windows' length for the windows); past
    /// it the level is computed but marked unsupported. Why 100:
    /// docs/tail.md, "How far a run reaches".
    pub max_extrapolation: f64,
}

impl Default for TailOptions {
    fn default() -> Self {
        TailOptions {
            probability: 0.01,
            deadline_ns: None,
            min_exceedances: 50,
            alpha: 0.1,
            min_p_value: 0.05,
            candidates: 20,
            max_exceedances: 20_000,
            max_extrapolation: MAX_EXTRAPOLATION,
        }
    }
}

/// The default of [`TailOptions::max_extrapolation`]: two orders of
/// magnitude past the run. Measurement-based probabilistic timing
/// analysis asks for more data the rarer the level it states (MBPTA-CV,
/// Abella et al. 2017: at least 50 tail values and i.i.d. tests before
/// any pWCET; chronovise, Reghenzani et al. 2018: a minimum sample size
/// that grows with the reliability asked), and a level can only be
/// checked against data where the data's size makes exceedances of it
/// expected (the binomial reliability test of Arcaro et al. 2020; here
/// the held-out check, at the run's own scale). Beyond that check the
/// error that dominates is the model's (a cause the run never met),
/// which no confidence interval holds; 100 × keeps that reach to two
/// orders of magnitude and says so past it.
pub const MAX_EXTRAPOLATION: f64 = 100.0;

/// Input the analysis cannot read at all (degenerate data that can be
/// read give an `Insufficient` result instead).
#[derive(Debug, Error, PartialEq)]
pub enum TailError {
    #[error("the histogram is empty: nothing to analyse")]
    Empty,
    #[error("bin [{lo_ns}, {hi_ns}) ns is empty or reversed")]
    BadBin { lo_ns: u64, hi_ns: u64 },
    #[error("bins overlap or are out of order at {lo_ns} ns")]
    Unordered { lo_ns: u64 },
    #[error("the bins hold {bins} samples but the total says {samples}")]
    CountMismatch { bins: u64, samples: u64 },
    #[error("the period must be above 0 ns")]
    Period,
    #[error("probability {0} is outside (0, 1)")]
    Probability(f64),
    #[error("the window length {0} s must be above 0 and every window maximum finite")]
    Windows(f64),
    #[error(
        "the exact maximum {max_ns} ns lies outside the highest non-empty bin [{lo_ns}, {hi_ns}) ns"
    )]
    MaxOutsideBins { max_ns: u64, lo_ns: u64, hi_ns: u64 },
}

/// The fit the estimate rests on.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PotFit {
    pub threshold_ns: u64,
    pub exceedances: u64,
    /// `ζ = exceedances / samples`.
    pub rate: f64,
    pub sigma_ns: f64,
    pub xi: f64,
    pub xi_se: Option<f64>,
    /// ξ sits at the optimiser's bound (−0.5 or 1): not an estimate.
    pub at_bound: bool,
}

/// The outcome: figures with their evidence, or a refusal.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TailResult {
    Estimate {
        /// From the histogram's tail (peaks over threshold).
        return_levels: Vec<ReturnLevel>,
        /// From the window maxima (block maxima); empty without windows.
        gev_return_levels: Vec<ReturnLevel>,
        deadline: Option<DeadlineRisk>,
    },
    /// What the run does support: its observed maximum, and the 95 %
    /// upper bound 3/N of the probability that one wake-up exceeds it.
    Insufficient {
        gate: GateName,
        figure: Option<f64>,
        observed_max_ns: u64,
        bound_3_over_n: f64,
    },
}

/// Everything the analysis found.
#[derive(Clone, Debug, Serialize)]
pub struct TailEstimate {
    pub samples: u64,
    pub period_ns: u64,
    /// The run's exact maximum when the input gives it, else the upper
    /// edge of the highest non-empty bin (`observed_max_exact` says which).
    pub observed_max_ns: u64,
    pub observed_max_exact: bool,
    pub bound_3_over_n: f64,
    pub probability: f64,
    /// The reach past the run within which a level is an estimate.
    pub max_extrapolation: f64,
    pub thresholds: Vec<ThresholdTest>,
    /// Index of ForwardStop's threshold in `thresholds`.
    pub chosen: Option<usize>,
    pub pot: Option<PotFit>,
    pub gev: Option<GevFit>,
    pub extremal_index: ExtremalIndex,
    pub gates: Vec<Gate>,
    pub result: TailResult,
}

mod analysis;
pub use analysis::analyze;
