//! The probabilistic worst case of a stored run, for people: the
//! [`crate::tail`] input built from a [`RunRecord`] (the threads'
//! lossless histograms merged, their window maxima, the loop's period),
//! and the one rendering of a [`TailEstimate`] that `rtscope tail`
//! prints, the HTML report shows as a section and a study cell shortens
//! to a line. Pure: no I/O, no clock; a figure the analysis did not give
//! is shown as "unknown (why)", never as 0.

use crate::histogram::{Histogram, HistogramError};
use crate::record::{Quantity, RunRecord, ThreadRecord, Unknowable};
use crate::tail::{
    self, Bin, DeadlineRisk, ExtremalIndex, Gate, GateName, GateStatus, ReturnLevel, TailError,
    TailEstimate, TailInput, TailOptions, TailResult, WindowMaxima,
};
use crate::text::num;
use serde::Serialize;
use thiserror::Error;

/// A run the analysis cannot be given (or that it cannot read).
#[derive(Debug, Error)]
pub enum TailRunError {
    #[error(
        "this run measures {0}: the tail is estimated for timer wake-up latencies at a loop's period"
    )]
    Quantity(&'static str),
    #[error("the run has no thread {asked} (its threads: {have}): pick one of them with --thread")]
    NoThread { asked: u32, have: String },
    #[error("the run holds no histogram (imported from a summary): nothing to analyse")]
    NoHistogram,
    #[error(
        "the loop's period is unknown (the source did not record its interval): the levels per hour need it; give it with --period (e.g. --period 1ms)"
    )]
    PeriodUnknown,
    #[error(
        "--period {given} contradicts the run's own period {recorded}: leave --period out, or give {recorded}"
    )]
    PeriodContradicts { given: String, recorded: String },
    #[error(
        "the threads ran at different periods ({0}): their histograms cannot be merged; pick one with --thread N"
    )]
    PeriodsDiffer(String),
    #[error(
        "the histogram counts samples beyond its last row without their values (the source's overflows, see the run's warnings): the tail there is unknown"
    )]
    Overflows,
    #[error("thread {thread}'s histogram cannot be read: {source}")]
    Histogram {
        thread: u32,
        #[source]
        source: HistogramError,
    },
    #[error("the analysis cannot read the run: {0}")]
    Analysis(#[from] TailError),
}

/// The analysis' input, and what was left out of it and why.
#[derive(Clone, Debug)]
pub struct RunInput {
    pub input: TailInput,
    pub notes: Vec<String>,
}

/// The threads asked for: one (`--thread`), else all of them.
fn pick_threads(rec: &RunRecord, thread: Option<u32>) -> Result<Vec<&ThreadRecord>, TailRunError> {
    let Some(asked) = thread else {
        return Ok(rec.threads.iter().collect());
    };
    match rec.threads.iter().find(|t| t.index == asked) {
        Some(t) => Ok(vec![t]),
        None => Err(TailRunError::NoThread {
            asked,
            have: rec
                .threads
                .iter()
                .map(|t| t.index.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The loop's period, the same for every thread merged; `given` (the
/// user's `--period`) where the run does not say it, and refused when it
/// contradicts a period the run gives.
fn common_period(
    rec: &RunRecord,
    threads: &[&ThreadRecord],
    given: Option<u64>,
) -> Result<u64, TailRunError> {
    let known = rec.knows(Unknowable::Interval);
    let period = |t: &ThreadRecord| match t.interval_ns {
        0 if known => rec.options.interval_ns,
        p => p,
    };
    let first = threads.first().map(|t| period(t)).unwrap_or(0);
    if threads.iter().any(|t| period(t) != first) {
        let each: Vec<String> = threads
            .iter()
            .map(|t| format!("thread {}: {}", t.index, num::period(period(t))))
            .collect();
        return Err(TailRunError::PeriodsDiffer(each.join(", ")));
    }
    match (first, given) {
        (0, Some(g)) => Ok(g),
        (0, None) => Err(TailRunError::PeriodUnknown),
        (p, Some(g)) if g != p => Err(TailRunError::PeriodContradicts {
            given: num::period(g),
            recorded: num::period(p),
        }),
        (p, _) => Ok(p),
    }
}

/// Bins of a histogram whose source had `resolution_ns` classes: a
/// sample of class `k` is recorded at its middle (`import::build`), so a
/// bucket holding the middles of classes `k0..=k1` is the interval
/// `[k0·r, (k1+1)·r)`. A resolution of 1 ns keeps the buckets' bounds.
pub fn bins_at(h: &Histogram, resolution_ns: u64) -> Vec<Bin> {
    let r = resolution_ns;
    if r <= 1 {
        return tail::bins_of(h);
    }
    h.iter_buckets()
        .map(|(lo, hi, count)| {
            let k0 = lo.saturating_sub(r / 2).div_ceil(r);
            let k1 = hi.saturating_sub(r / 2) / r;
            match hi >= r / 2 && k1 >= k0 {
                // Saturating: a record may state any resolution.
                true => Bin {
                    lo_ns: k0.saturating_mul(r),
                    hi_ns: k1.saturating_add(1).saturating_mul(r),
                    count,
                },
                false => Bin {
                    lo_ns: lo,
                    hi_ns: hi.saturating_add(1),
                    count,
                },
            }
        })
        .collect()
}

/// The threads' histograms merged, as bins at the source's resolution.
fn merged_bins(threads: &[&ThreadRecord]) -> Result<(Vec<Bin>, u64), TailRunError> {
    let mut merged: Option<Histogram> = None;
    let mut resolution = 1;
    for t in threads {
        let failed = |source| TailRunError::Histogram {
            thread: t.index,
            source,
        };
        resolution = resolution.max(t.histogram.resolution_ns);
        // The first thread's table, the others added from their sparse
        // buckets (no dense table a thread).
        match merged.as_mut() {
            Some(m) => t.histogram.merge_into(m).map_err(failed)?,
            None => merged = Some(t.histogram.to_histogram().map_err(failed)?),
        }
    }
    let h = merged
        .filter(|h| h.total() > 0)
        .ok_or(TailRunError::NoHistogram)?;
    Ok((bins_at(&h, resolution), h.total()))
}

/// The window maxima of `threads`: per window, the largest of the
/// threads' maxima; windows where no thread woke (count 0) are left out.
/// `None` when there are none, or when the threads' windows differ in
/// length (said in `notes`).
pub fn windows_of(threads: &[&ThreadRecord], notes: &mut Vec<String>) -> Option<WindowMaxima> {
    let window_ns = threads.first()?.windows.window_ns;
    if threads.iter().any(|t| t.windows.window_ns != window_ns) {
        notes.push("the threads' windows differ in length: no window series".into());
        return None;
    }
    let len = threads.iter().map(|t| t.windows.len()).max().unwrap_or(0);
    // Window i of every thread in one block, as compare's noise has them.
    let run = super::noise::RunWindows::of("", threads.iter().copied());
    let max_ns: Vec<f64> = super::noise::blocks(&run, window_ns)
        .iter()
        .map(|b| b.max_ns as f64)
        .collect();
    if window_ns == 0 || max_ns.is_empty() {
        notes.push("the run holds no window series".into());
        return None;
    }
    let dropped = len - max_ns.len();
    notes.push(format!(
        "{} windows of {}{}",
        max_ns.len(),
        num::duration(window_ns),
        match dropped {
            0 => String::new(),
            d => format!(" ({d} empty ones left out)"),
        }
    ));
    Some(WindowMaxima {
        length_s: window_ns as f64 / 1e9,
        max_ns,
    })
}

/// Imports say in a warning that samples beyond their histogram were
/// recorded without their values ("... are lower bounds").
fn has_overflows(rec: &RunRecord) -> bool {
    rec.source.kind.is(crate::kinds::SourceKind::Imported)
        && rec.warnings.iter().any(|w| w.contains("lower bound"))
}

/// The threads' exact maximum (their stats' largest), when every one
/// kept it and it lies in the highest non-empty bin; else `None` and a
/// note (the observed maximum is then that bin's upper edge).
fn exact_max(threads: &[&ThreadRecord], bins: &[Bin], notes: &mut Vec<String>) -> Option<u64> {
    let each: Option<Vec<u64>> = threads.iter().map(|t| t.stats.max_ns).collect();
    let top = bins.iter().rev().find(|b| b.count > 0)?;
    match each.and_then(|v| v.into_iter().max()) {
        Some(m) if top.lo_ns <= m && m < top.hi_ns => Some(m),
        Some(m) => {
            notes.push(format!(
                "the record's maximum {} lies outside its histogram's highest bin: the observed \
                 maximum is that bin's upper edge",
                max_latency(m)
            ));
            None
        }
        None => {
            notes.push(
                "the source kept no exact maximum: the observed maximum is the histogram's \
                 highest bin edge"
                    .into(),
            );
            None
        }
    }
}

/// Build the analysis' input from `rec` (all threads merged, or one);
/// `period_ns` is the user's `--period`, for runs that do not say theirs.
pub fn input_of(
    rec: &RunRecord,
    thread: Option<u32>,
    period_ns: Option<u64>,
) -> Result<RunInput, TailRunError> {
    let q = Quantity::of(rec);
    if q != Quantity::WakeupLatency {
        return Err(TailRunError::Quantity(q.describe()));
    }
    let threads = pick_threads(rec, thread)?;
    let period_ns = common_period(rec, &threads, period_ns)?;
    let (bins, samples) = merged_bins(&threads)?;
    if has_overflows(rec) {
        return Err(TailRunError::Overflows);
    }
    let mut notes = vec![match thread {
        Some(t) => format!("thread {t}'s histogram"),
        None if threads.len() > 1 => format!("{} threads' histograms merged", threads.len()),
        None => "the histogram of the run's one thread".into(),
    }];
    let windows = windows_of(&threads, &mut notes);
    let max_ns = exact_max(&threads, &bins, &mut notes);
    let exceedance_times = super::exceedances::exceedance_times(&threads, &mut notes);
    Ok(RunInput {
        input: TailInput {
            bins,
            samples,
            period_ns,
            windows,
            halves: None,
            exceedance_times,
            max_ns,
        },
        notes,
    })
}

/// What `rtscope tail` and the report ask of the analysis.
#[derive(Clone, Copy, Debug)]
pub struct Ask {
    pub thread: Option<u32>,
    pub probability: f64,
    /// `None`: the run's deadline ([`RunRecord::deadline_ns`]).
    pub deadline_ns: Option<u64>,
    /// The loop's period for a run that does not say it (`--period`).
    pub period_ns: Option<u64>,
}

impl Default for Ask {
    fn default() -> Self {
        Ask {
            thread: None,
            probability: TailOptions::default().probability,
            deadline_ns: None,
            period_ns: None,
        }
    }
}

/// Analyse `rec`: the estimate and the notes on its input.
pub fn analyze_run(
    rec: &RunRecord,
    ask: &Ask,
) -> Result<(TailEstimate, Vec<String>), TailRunError> {
    let RunInput { input, notes } = input_of(rec, ask.thread, ask.period_ns)?;
    let opts = TailOptions {
        probability: ask.probability,
        deadline_ns: ask
            .deadline_ns
            .or_else(|| rec.deadline_ns())
            .or(ask.period_ns),
        ..TailOptions::default()
    };
    Ok((tail::analyze(&input, &opts)?, notes))
}

// ------------------------------------------------------------ rendering

/// One gate as shown: its status, figure, limit and what was seen.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GateRow {
    pub name: String,
    pub status: String,
    pub figure: String,
    pub limit: String,
    pub detail: String,
}

/// The tail of a run for people: the answer in a sentence or two, every
/// gate, then the fits and the input. The command prints it as text
/// ([`text`]); the HTML report lays the same fields out.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TailView {
    pub answer: String,
    pub gates: Vec<GateRow>,
    pub fit: Vec<String>,
    pub inputs: Vec<String>,
}

/// A gate's name in words.
pub fn gate_name(g: GateName) -> &'static str {
    match g {
        GateName::Exceedances => "exceedances",
        GateName::GoodnessOfFit => "goodness of fit",
        GateName::ShapeBound => "shape inside bounds",
        GateName::ShapeStability => "shape stability",
        GateName::Stationarity => "stationarity",
        GateName::HeldOut => "held-out check",
        GateName::Agreement => "agreement",
    }
}

/// A run's exact latency as the tables write it (`12817.4 µs`), so the
/// tail's maximum reads as the run's.
fn max_latency(ns: u64) -> String {
    format!("{} µs", crate::units::us1(ns))
}

/// A figure with three significant digits (`0.0412`, `1.37`, `142`).
fn sig3(f: f64) -> String {
    let a = f.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{f:.0}")
    } else if a >= 1.0 {
        format!("{f:.2}")
    } else if a >= 0.001 {
        format!("{:.3}", f)
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{f:.1e}")
    }
}

/// A probability as a percentage: `1 %`, `0.1 %`.
fn percent(p: f64) -> String {
    let s = format!("{:.4}", p * 100.0);
    format!("{} %", s.trim_end_matches('0').trim_end_matches('.'))
}

fn latency(ns: f64) -> String {
    num::latency(ns.max(0.0).round() as u64)
}

/// A gate's figure: counts as integers, others to three digits; none:
/// "unknown (why)".
fn gate_figure(g: &Gate) -> String {
    match (g.figure, g.status) {
        (Some(f), _) if matches!(g.name, GateName::Exceedances | GateName::HeldOut) => {
            format!("{f:.0}")
        }
        (Some(f), _) => sig3(f),
        (None, GateStatus::NotEvaluated) => "none".into(),
        (None, _) => "unknown".into(),
    }
}

/// A probability with three significant digits (`0.0075`), smaller ones
/// as `7.5·10⁻⁶`.
fn prob3(p: f64) -> String {
    if !(p >= 0.001) {
        return num::probability(p);
    }
    let digits = (2 - p.log10().floor() as i32).max(0) as usize;
    let s = format!("{p:.digits$}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn gate_row(g: &Gate) -> GateRow {
    GateRow {
        name: gate_name(g.name).into(),
        status: match g.status {
            GateStatus::Pass => "pass",
            GateStatus::Fail => "FAIL",
            GateStatus::NotEvaluated => "not evaluated",
        }
        .into(),
        figure: gate_figure(g),
        limit: if g.limit.is_empty() {
            "none".into()
        } else {
            g.limit.clone()
        },
        detail: g.detail.clone(),
    }
}

const NO_UPPER: &str = "unknown (the likelihood does not bound it below 10⁴ times the level)";

/// How many times what was observed: `2.4`, `120`, `8 766`, `1.0·10⁶`.
fn times(f: f64) -> String {
    if !f.is_finite() {
        "unknown".into()
    } else if f < 10.0 {
        format!("{f:.1}")
    } else if f < 100_000.0 {
        num::count(f.round() as u64)
    } else {
        let e = f.log10().floor() as i32;
        format!("{:.1}·{}", f / 10f64.powi(e), num::power_of_ten(e))
    }
}

/// The time a reach of `extrapolation` over `horizon_s` was measured
/// from (the samples' time, or the windows').
fn observed_ns(horizon_s: f64, extrapolation: f64) -> u64 {
    (horizon_s / extrapolation * 1e9).round() as u64
}

/// `120 × the 30 s observed`.
fn reach_text(l: &ReturnLevel) -> String {
    format!(
        "{} × the {} observed",
        times(l.extrapolation),
        num::duration(observed_ns(l.horizon.seconds(), l.extrapolation))
    )
}

/// Words for a level past the reach the run supports.
fn beyond(est: &TailEstimate, l: &ReturnLevel) -> String {
    format!(
        "beyond what the run supports ({}; an estimate reaches at most {} ×)",
        reach_text(l),
        times(est.max_extrapolation)
    )
}

/// `52.3 µs (95 % upper bound 61.0 µs; 120 × the 30 s observed)`, or
/// "beyond what the run supports (…)".
fn level_text(est: &TailEstimate, l: Option<&ReturnLevel>) -> String {
    match l {
        Some(l) if !l.supported => beyond(est, l),
        Some(l) => format!(
            "{} (95 % upper bound {}; {})",
            latency(l.level_ns),
            l.upper95_ns.map_or(NO_UPPER.into(), latency),
            reach_text(l)
        ),
        None => {
            "unknown (the level lies below the fitted threshold: read it in the histogram)".into()
        }
    }
}

fn level_of(levels: &[ReturnLevel], h: tail::Horizon) -> Option<&ReturnLevel> {
    levels.iter().find(|l| l.horizon == h)
}

/// Below this a deadline risk is printed as a bound, not a number: a
/// fitted model's own error (a cause the run never met) is far larger
/// than such figures (5.3·10⁻³⁰¹ is a double's rounding, not a risk).
/// The JSON keeps the number.
const RISK_FLOOR: f64 = 1e-12;

/// A probability of at least one late wake-up; below [`RISK_FLOOR`]
/// (zero included) the bound `< 10⁻¹²`.
fn risk_prob(p: f64) -> String {
    if p >= RISK_FLOOR {
        num::probability(p)
    } else {
        format!("< {}", num::power_of_ten(RISK_FLOOR.log10().round() as i32))
    }
}

/// `= 3.4·10⁻⁷`, or `< 10⁻¹²` below [`RISK_FLOOR`].
fn risk_is(p: f64) -> String {
    let r = risk_prob(p);
    if r.starts_with('<') {
        r
    } else {
        format!("= {r}")
    }
}

fn deadline_text(est: &TailEstimate, d: Option<&DeadlineRisk>) -> String {
    let Some(d) = d else {
        return "P(a wake-up beyond the deadline in one hour) is unknown (no deadline: the \
                run's period is unknown; give --deadline)."
            .into();
    };
    let dl = latency(d.deadline_ns);
    if d.from == "histogram" {
        let est = if d.p_hour > 0.0 {
            num::probability(d.p_hour)
        } else {
            "0 counted (no wake-up beyond it in the run)".into()
        };
        return format!(
            "P(a wake-up beyond the deadline {dl} in one hour) = {est} (95 % upper bound {}; \
             the deadline lies inside the data: counted in the histogram, not extrapolated).",
            num::probability(d.p_hour_upper95)
        );
    }
    if !d.supported {
        return format!(
            "P(a wake-up beyond the deadline {dl} in one hour) is beyond what the run supports \
             (an hour is {} × the {} observed; an estimate reaches at most {} ×).",
            times(d.extrapolation),
            num::duration(observed_ns(3600.0, d.extrapolation)),
            times(est.max_extrapolation)
        );
    }
    format!(
        "P(a wake-up beyond the deadline {dl} in one hour) {} (95 % upper bound {}).",
        risk_is(d.p_hour),
        risk_prob(d.p_hour_upper95)
    )
}

/// The gates that were not evaluated, with why: what the estimate lacks.
fn unchecked(est: &TailEstimate) -> Option<String> {
    let lacks: Vec<String> = est
        .gates
        .iter()
        .filter(|g| g.status == GateStatus::NotEvaluated)
        .map(|g| format!("{} ({})", gate_name(g.name), g.detail))
        .collect();
    (!lacks.is_empty()).then(|| format!("Not checked: {}.", lacks.join("; ")))
}

/// What the run supports without a model: its exact maximum and 3/N.
fn supports(est: &TailEstimate) -> String {
    let max = observed_max(est);
    format!(
        "observed maximum {max}, and P(one wake-up exceeds {max}) < 3/N = 3/{} = {} at 95 % if \
         wake-ups were independent",
        num::count(est.samples),
        prob3(est.bound_3_over_n)
    )
}

/// The observed maximum as every view writes it (exact), or the bin
/// edge said as such.
fn observed_max(est: &TailEstimate) -> String {
    if est.observed_max_exact {
        max_latency(est.observed_max_ns)
    } else {
        format!(
            "{} (a histogram bin's upper edge: the source kept no exact maximum)",
            max_latency(est.observed_max_ns)
        )
    }
}

/// The answer of an estimate that passed every gate: the supported
/// levels; when none is, what the run supports instead.
fn estimate_answer(est: &TailEstimate, levels: &[ReturnLevel], d: Option<&DeadlineRisk>) -> String {
    use tail::Horizon::{Day, Hour, Year};
    let lacks = unchecked(est).map_or(String::new(), |u| format!(" {u}"));
    if !levels.iter().any(|l| l.supported) {
        let first = levels.first().map_or(String::new(), |l| {
            format!(
                ": even {} is {}, past the {} × an estimate may reach (an hour's level needs \
                 a run of at least {})",
                horizon_words(l.horizon),
                reach_text(l),
                times(est.max_extrapolation),
                num::duration((l.horizon.seconds() / est.max_extrapolation * 1e9) as u64)
            )
        });
        return format!(
            "No estimate beyond the run{first}; what the run supports: {}.{lacks}",
            supports(est)
        );
    }
    format!(
        "Estimated: the latency exceeded with probability {} in an hour of operation is {}; \
         in a day {}; in a year {}. {}{lacks}",
        percent(est.probability),
        level_text(est, level_of(levels, Hour)),
        level_text(est, level_of(levels, Day)),
        level_text(est, level_of(levels, Year)),
        deadline_text(est, d)
    )
}

fn horizon_words(h: tail::Horizon) -> &'static str {
    match h {
        tail::Horizon::Hour => "an hour",
        tail::Horizon::Day => "a day",
        tail::Horizon::Year => "a year",
    }
}

/// The answer of a refusal: the gate with its figure, and what the run
/// does support.
fn refusal_answer(est: &TailEstimate, gate: GateName) -> String {
    let why = match est.gates.iter().find(|g| g.name == gate) {
        Some(g) if g.figure.is_none() => format!(
            "{} unknown ({}) (limit {})",
            gate_name(gate),
            g.detail,
            gate_row(g).limit
        ),
        Some(g) => format!(
            "{} {} (limit {}: {})",
            gate_name(gate),
            gate_figure(g),
            gate_row(g).limit,
            g.detail
        ),
        None => gate_name(gate).into(),
    };
    format!(
        "Insufficient evidence: {why}; what the run supports: {}.",
        supports(est)
    )
}

/// The answer in one or two sentences.
pub fn answer(est: &TailEstimate) -> String {
    match &est.result {
        TailResult::Estimate {
            return_levels,
            deadline,
            ..
        } => estimate_answer(est, return_levels, deadline.as_ref()),
        TailResult::Insufficient { gate, .. } => refusal_answer(est, *gate),
    }
}

/// The threshold ForwardStop chose (or why none).
fn threshold_line(est: &TailEstimate) -> String {
    let n = est.thresholds.len();
    match (est.chosen, &est.pot) {
        (_, _) if n == 0 => format!(
            "Threshold: no candidate: {} samples leave too few above any bin edge to fit a tail",
            num::count(est.samples)
        ),
        (Some(k), Some(p)) => format!(
            "Threshold: {} ({} samples above it, rate {}), chosen by ForwardStop among {n} \
             candidates ({k} rejected below it)",
            num::latency(p.threshold_ns),
            num::count(p.exceedances),
            prob3(p.rate)
        ),
        _ => format!(
            "Threshold: none: ForwardStop rejected all {n} candidates ({} to {})",
            num::latency(est.thresholds[0].threshold_ns),
            num::latency(est.thresholds[n - 1].threshold_ns)
        ),
    }
}

fn gpd_line(est: &TailEstimate) -> String {
    match &est.pot {
        Some(p) if p.at_bound => format!(
            "Generalized Pareto fit above it: refused: shape ξ = {:.3} is the optimiser's bound \
             (the data ask for a shape outside [-0.5, 1]), not an estimate: no level from it",
            p.xi
        ),
        Some(p) => format!(
            "Generalized Pareto fit above it (interval-censored likelihood): scale {}, shape ξ = {:.3} (standard error {})",
            latency(p.sigma_ns),
            p.xi,
            p.xi_se
                .map_or("unknown: the likelihood is flat there".into(), |s| format!(
                    "{s:.3}"
                ))
        ),
        None => "Generalized Pareto fit: none (no threshold chosen)".into(),
    }
}

/// `hour 52.3 µs (95 %: 48.0 µs to 61.0 µs; 120 × the 30 s observed), …`;
/// a level past the supported reach is said so, without its number.
fn levels_line(est: &TailEstimate, levels: &[ReturnLevel]) -> String {
    let end = |v: Option<f64>| v.map_or("unknown".into(), latency);
    levels
        .iter()
        .map(|l| {
            let h = num::serde_name(&l.horizon);
            if !l.supported {
                return format!("{h} {}", beyond(est, l));
            }
            format!(
                "{h} {} (95 %: {} to {}; {})",
                latency(l.level_ns),
                end(l.lower95_ns),
                end(l.upper95_ns),
                reach_text(l)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn gev_line(est: &TailEstimate, inputs: &[String]) -> String {
    match &est.gev {
        Some(g) if g.at_bound => format!(
            "GEV fit on {} window maxima (block maxima): refused: shape ξ = {:.3} is the \
             optimiser's bound, not an estimate: no level from the windows",
            g.windows, g.xi
        ),
        Some(g) => format!(
            "GEV fit on {} window maxima (block maxima): location {}, scale {}, shape ξ = {:.3}",
            g.windows,
            latency(g.location_ns),
            latency(g.scale_ns),
            g.xi
        ),
        None if inputs.iter().any(|n| n.contains("no window series")) => {
            "GEV (block maxima): not fitted: the run holds no window series".into()
        }
        None => "GEV (block maxima): not fitted (fewer than 10 windows, or no fit)".into(),
    }
}

fn theta_line(est: &TailEstimate) -> String {
    match &est.extremal_index {
        ExtremalIndex::Unknown { assumption } => format!("Extremal index: {assumption}"),
        ExtremalIndex::Estimated {
            theta,
            from,
            exceedances,
            use_,
            ..
        } => format!(
            "Extremal index: θ = {theta:.2} from {from} ({exceedances} exceedances); {use_}"
        ),
    }
}

/// The fits behind the answer; the levels only where the gates passed.
fn fit_lines(est: &TailEstimate, inputs: &[String]) -> Vec<String> {
    let mut out = vec![threshold_line(est), gpd_line(est)];
    if let TailResult::Estimate {
        return_levels,
        gev_return_levels,
        ..
    } = &est.result
    {
        out.push(format!(
            "Return levels (probability {}) from the histogram: {}",
            percent(est.probability),
            levels_line(est, return_levels)
        ));
        out.push(gev_line(est, inputs));
        if !gev_return_levels.is_empty() {
            out.push(format!(
                "Return levels from the window maxima: {}",
                levels_line(est, gev_return_levels)
            ));
        }
    } else {
        out.push(gev_line(est, inputs));
    }
    out.push(theta_line(est));
    out
}

/// The one rendering of an estimate.
pub fn view(est: &TailEstimate, inputs: &[String]) -> TailView {
    let mut all_inputs = vec![format!(
        "{} samples at a period of {}",
        num::count(est.samples),
        num::period(est.period_ns)
    )];
    all_inputs.extend(inputs.iter().cloned());
    TailView {
        answer: answer(est),
        gates: est.gates.iter().map(gate_row).collect(),
        fit: fit_lines(est, inputs),
        inputs: all_inputs,
    }
}

/// The view as terminal text (`rtscope tail`).
pub fn text(v: &TailView) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "{}\n\nGates (in the order judged; the first that fails refuses):\n",
        v.answer
    );
    let w = v
        .gates
        .iter()
        .map(|g| g.name.chars().count())
        .max()
        .unwrap_or(0);
    for g in &v.gates {
        let _ = writeln!(
            out,
            "  {:<w$}  {:<13}  {} (limit {}): {}",
            g.name, g.status, g.figure, g.limit, g.detail
        );
    }
    out.push('\n');
    for l in &v.fit {
        let _ = writeln!(out, "{l}.");
    }
    let _ = writeln!(out, "Input: {}.", v.inputs.join("; "));
    out
}

/// A study cell's line: the hourly level with its bound, or the gate
/// that refused.
pub fn compact(est: &TailEstimate) -> String {
    match &est.result {
        TailResult::Estimate { return_levels, .. } => format!(
            "1 h level at {}: {}",
            percent(est.probability),
            level_text(est, level_of(return_levels, tail::Horizon::Hour))
        ),
        TailResult::Insufficient { gate, .. } => {
            let figure = est
                .gates
                .iter()
                .find(|g| g.name == *gate)
                .map(gate_figure)
                .unwrap_or_else(|| "unknown".into());
            format!("insufficient: {} ({figure})", gate_name(*gate))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{WindowPoint, synthetic};

    fn spread(n: u64, seed: u64) -> Vec<u64> {
        (0..n).map(|i| 2000 + (i * 7919 + seed) % 5000).collect()
    }

    fn windows(t: &mut ThreadRecord, points: &[(u64, u64)]) {
        for &(count, max_ns) in points {
            t.windows.push(WindowPoint {
                count,
                max_ns,
                min_ns: max_ns.min(1),
                ..Default::default()
            });
        }
    }

    #[test]
    fn tail_input_merges_threads_and_their_windows() {
        let mut rec = synthetic(&[spread(3000, 1), spread(2000, 7)]);
        windows(&mut rec.threads[0], &[(5, 4000), (0, 0), (3, 3000)]);
        windows(
            &mut rec.threads[1],
            &[(2, 6000), (0, 0), (4, 2500), (1, 5000)],
        );
        let r = input_of(&rec, None, None).unwrap();
        assert_eq!(r.input.samples, 5000);
        assert_eq!(r.input.bins.iter().map(|b| b.count).sum::<u64>(), 5000);
        assert_eq!(r.input.period_ns, 1_000_000);
        let w = r.input.windows.unwrap();
        // window 1 is empty in both threads: left out; the rest take the max
        assert_eq!(w.max_ns, vec![6000.0, 3000.0, 5000.0]);
        assert_eq!(w.length_s, 1.0);
        assert!(r.notes.iter().any(|n| n.contains("1 empty ones left out")));
        assert!(r.input.exceedance_times.is_none());
        // one thread alone
        let one = input_of(&rec, Some(1), None).unwrap();
        assert_eq!(one.input.samples, 2000);
        assert_eq!(
            one.input.windows.unwrap().max_ns,
            vec![6000.0, 2500.0, 5000.0]
        );
        assert!(matches!(
            input_of(&rec, Some(9), None),
            Err(TailRunError::NoThread { asked: 9, .. })
        ));
    }

    #[test]
    fn tail_input_refuses_threads_of_different_periods() {
        let mut rec = synthetic(&[spread(100, 1), spread(100, 2)]);
        rec.threads[1].interval_ns = 2_000_000;
        let e = input_of(&rec, None, None).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, TailRunError::PeriodsDiffer(_)), "{msg}");
        assert!(
            msg.contains("thread 0: 1 ms") && msg.contains("thread 1: 2 ms"),
            "{msg}"
        );
        assert!(msg.contains("--thread"), "{msg}");
        assert_eq!(
            input_of(&rec, Some(1), None).unwrap().input.period_ns,
            2_000_000
        );
    }

    /// A bucket at the top of the u64 range (an import stating such a
    /// latency) once overflowed `(k1 + 1) · r` in the report's tail section.
    #[test]
    fn bins_of_a_latency_near_2_64_end_there() {
        let mut h = Histogram::latency();
        h.record(u64::MAX - 10);
        let bins = bins_at(&h, 1000);
        assert_eq!(bins.len(), 1);
        assert_eq!(bins[0].hi_ns, u64::MAX);
        assert!(bins[0].lo_ns <= u64::MAX - 10);
    }

    #[test]
    fn tail_input_of_imports_uses_their_classes_and_refuses_overflows() {
        let mut h = Histogram::latency();
        h.record_n(crate::import::build::bucket_ns(5, 1000), 3);
        h.record_n(crate::import::build::bucket_ns(900, 1000), 2);
        let bins = bins_at(&h, 1000);
        assert_eq!(
            bins.iter()
                .map(|b| (b.lo_ns, b.hi_ns, b.count))
                .collect::<Vec<_>>(),
            vec![(5000, 6000, 3), (900_000, 901_000, 2)]
        );
        let mut rec = synthetic(&[spread(100, 1)]);
        rec.source.kind = crate::kinds::SourceKind::Imported.into();
        rec.warnings
            .push("samples beyond ... so quantiles above it are lower bounds".into());
        assert!(matches!(
            input_of(&rec, None, None),
            Err(TailRunError::Overflows)
        ));
        rec.quantity = Some(Quantity::BusyLoopGap);
        assert!(matches!(
            input_of(&rec, None, None),
            Err(TailRunError::Quantity(_))
        ));
    }

    #[test]
    fn tail_refusal_names_the_gate_its_figure_and_3_over_n() {
        let rec = synthetic(&[spread(400, 3)]);
        let (est, inputs) = analyze_run(&rec, &Ask::default()).unwrap();
        let TailResult::Insufficient { gate, .. } = est.result else {
            panic!("{:?}", est.result)
        };
        let out = text(&view(&est, &inputs));
        let first = out.lines().next().unwrap();
        assert!(first.starts_with("Insufficient evidence: "), "{out}");
        assert!(first.contains(gate_name(gate)), "{out}");
        assert!(first.contains("3/N = 3/400 = 0.0075"), "{out}");
        assert!(first.contains("observed maximum"), "{out}");
        for g in &est.gates {
            assert!(out.contains(gate_name(g.name)), "{out}");
        }
        assert!(compact(&est).starts_with("insufficient: "));
    }

    #[test]
    fn tail_unknown_bounds_are_said_never_zero() {
        let rec = synthetic(&[spread(400, 3)]);
        let (mut est, inputs) = analyze_run(&rec, &Ask::default()).unwrap();
        let level = |h| ReturnLevel {
            horizon: h,
            probability: 0.01,
            wakeups: 3.6e6,
            level_ns: 52_300.0,
            lower95_ns: None,
            upper95_ns: None,
            extrapolation: 3.0,
            supported: true,
        };
        est.result = TailResult::Estimate {
            return_levels: vec![level(tail::Horizon::Hour), level(tail::Horizon::Day)],
            gev_return_levels: vec![],
            deadline: None,
        };
        let out = text(&view(&est, &inputs));
        let first = out.lines().next().unwrap();
        assert!(first.starts_with("Estimated: "), "{out}");
        assert!(
            first.contains("52.3 µs (95 % upper bound unknown ("),
            "{out}"
        );
        assert!(first.contains("in a year unknown ("), "{out}");
        assert!(
            first.contains("deadline in one hour) is unknown ("),
            "{out}"
        );
        assert!(
            out.contains("(95 %: unknown to unknown; 3.0 × the "),
            "{out}"
        );
        assert!(!out.contains("bound 0") && !out.contains(" 0 ns"), "{out}");
        assert!(compact(&est).contains("upper bound unknown ("));
    }

    #[test]
    fn tail_tiny_deadline_risks_are_a_bound_a_person_can_read() {
        let rec = synthetic(&[spread(400, 3)]);
        let (est, _) = analyze_run(&rec, &Ask::default()).unwrap();
        let d = DeadlineRisk {
            deadline_ns: 1e6,
            p_hour: 5.3e-301,
            p_hour_upper95: 2.0e-9,
            from: "tail".into(),
            extrapolation: 9.0,
            supported: true,
        };
        let t = deadline_text(&est, Some(&d));
        assert!(
            t.contains("in one hour) < 10⁻¹² (95 % upper bound 2·10⁻⁹)"),
            "{t}"
        );
        assert!(!t.contains("301"), "{t}");
        assert_eq!(risk_prob(0.0), "< 10⁻¹²");
        assert_eq!(risk_prob(1e-12), "10⁻¹²");
        assert_eq!(risk_prob(3.4e-7), "3.4·10⁻⁷");
    }

    #[test]
    fn tail_period_is_given_where_the_run_has_none_and_refused_when_it_contradicts() {
        let mut rec = synthetic(&[spread(400, 3)]);
        // as its own run says: 1 ms, and --period 1ms agrees
        assert_eq!(
            input_of(&rec, None, Some(1_000_000))
                .unwrap()
                .input
                .period_ns,
            1_000_000
        );
        let e = input_of(&rec, None, Some(2_000_000)).unwrap_err();
        assert!(matches!(e, TailRunError::PeriodContradicts { .. }), "{e}");
        assert!(e.to_string().contains("2 ms") && e.to_string().contains("1 ms"));
        // an import that did not record its interval
        rec.source.kind = crate::kinds::SourceKind::Imported.into();
        rec.source.unknown = vec![Unknowable::Interval];
        rec.options.interval_ns = 0;
        rec.threads[0].interval_ns = 0;
        let e = input_of(&rec, None, None).unwrap_err();
        assert!(matches!(e, TailRunError::PeriodUnknown), "{e}");
        assert!(e.to_string().contains("--period"), "{e}");
        let r = input_of(&rec, None, Some(200_000)).unwrap();
        assert_eq!(r.input.period_ns, 200_000);
    }

    #[test]
    fn tail_input_keeps_the_exact_maximum_and_says_the_reach() {
        let rec = synthetic(&[spread(400, 3), spread(300, 5)]);
        let r = input_of(&rec, None, None).unwrap();
        let max = rec.threads.iter().filter_map(|t| t.stats.max_ns).max();
        assert!(max.is_some());
        assert_eq!(r.input.max_ns, max);
        let (est, inputs) = analyze_run(&rec, &Ask::default()).unwrap();
        assert_eq!(Some(est.observed_max_ns), max);
        let out = text(&view(&est, &inputs));
        let us = crate::units::us1(max.unwrap());
        assert!(out.contains(&format!("observed maximum {us} µs")), "{out}");
        // a level past the reach is words, not a number
        let (mut est, inputs) = analyze_run(&rec, &Ask::default()).unwrap();
        let lvl = |h, supported| ReturnLevel {
            horizon: h,
            probability: 0.01,
            wakeups: 3.6e6,
            level_ns: 60_930_000.0,
            lower95_ns: Some(1e6),
            upper95_ns: Some(3.79e9),
            extrapolation: if supported { 50.0 } else { 1.05e6 },
            supported,
        };
        est.gates.retain(|g| g.status != GateStatus::Fail);
        est.result = TailResult::Estimate {
            return_levels: vec![
                lvl(tail::Horizon::Hour, true),
                lvl(tail::Horizon::Year, false),
            ],
            gev_return_levels: vec![],
            deadline: None,
        };
        let out = text(&view(&est, &inputs));
        let first = out.lines().next().unwrap();
        assert!(
            first.contains("60.93 ms (95 % upper bound 3.79 s; 50 × the "),
            "{out}"
        );
        assert!(
            first.contains("in a year beyond what the run supports (1.1·10⁶ × the "),
            "{out}"
        );
        assert_eq!(first.matches("60.93 ms").count(), 1, "{out}");
        assert!(first.contains("Not checked: "), "{out}");
        // none supported: no estimate, what the run supports instead
        if let TailResult::Estimate { return_levels, .. } = &mut est.result {
            return_levels[0] = lvl(tail::Horizon::Hour, false);
        }
        let first = answer(&est);
        assert!(
            first.starts_with("No estimate beyond the run: even an hour is 1.1·10⁶ × "),
            "{first}"
        );
        assert!(
            !first.contains("60.93 ms") && first.contains("3/N = 3/700 = "),
            "{first}"
        );
        assert!(compact(&est).contains("beyond what the run supports"));
    }
}
