//! The gates an estimate must pass before a number is given, each with
//! its figure: enough exceedances, goodness of fit, a shape inside the
//! fit's bounds, a shape stable over higher thresholds, stationary window
//! maxima, a held-out check, and agreement between the histogram's and
//! the windows' estimates.
//!
//! Every gate can fail, and one whose input is missing is "not
//! evaluated" (never a pass); the figure a gate shows is the one its rule
//! judged, and a figure that is not a number is none.

use serde::Serialize;
use statrs::distribution::{DiscreteCDF, Poisson};

use super::gev;
use super::gpd::{self, Exceedances};
use super::levels::ReturnLevel;
use super::threshold::ThresholdTest;
use super::{Bin, WindowMaxima};

/// The gates, in the order they are judged.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GateName {
    Exceedances,
    GoodnessOfFit,
    ShapeBound,
    ShapeStability,
    Stationarity,
    HeldOut,
    Agreement,
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    Pass,
    Fail,
    /// The input lacks what the gate needs (said in `detail`); the
    /// assumption it would check stands untested.
    NotEvaluated,
}

/// One gate: its figure (null when there is none), the limit it is held
/// to and what was seen.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Gate {
    pub name: GateName,
    pub status: GateStatus,
    pub figure: Option<f64>,
    pub limit: String,
    pub detail: String,
}

fn gate(name: GateName, pass: bool, figure: Option<f64>, limit: &str, detail: String) -> Gate {
    let status = if pass {
        GateStatus::Pass
    } else {
        GateStatus::Fail
    };
    Gate {
        name,
        status,
        figure: figure.filter(|f| f.is_finite()),
        limit: limit.into(),
        detail,
    }
}

fn not_evaluated(name: GateName, limit: &str, why: &str) -> Gate {
    Gate {
        name,
        status: GateStatus::NotEvaluated,
        figure: None,
        limit: limit.into(),
        detail: why.into(),
    }
}

pub fn exceedances(tests: &[ThresholdTest], chosen: Option<usize>, min: u64) -> Gate {
    let chosen = chosen.map(|k| &tests[k]);
    if chosen.is_none() && !tests.is_empty() {
        // There were thresholds to test and none fitted: the refusal is
        // goodness of fit's, not a want of samples.
        return not_evaluated(
            GateName::Exceedances,
            &format!(">= {min}"),
            "no threshold was chosen (every candidate was rejected: see goodness of fit)",
        );
    }
    let n = chosen.map_or(0, |t| t.exceedances);
    let detail = match chosen {
        Some(t) => format!(
            "{n} samples above the threshold {}",
            us(t.threshold_ns as f64)
        ),
        None => "too few samples for a candidate threshold".into(),
    };
    gate(
        GateName::Exceedances,
        n >= min,
        Some(n as f64),
        &format!(">= {min}"),
        detail,
    )
}

/// The Anderson-Darling p-value at the threshold ForwardStop chose; when
/// ForwardStop rejected every candidate, its own statistic (the mean of
/// `−ln(1 − p)` over all of them), which is what decided.
pub fn goodness_of_fit(
    tests: &[ThresholdTest],
    chosen: Option<usize>,
    min_p: f64,
    alpha: f64,
) -> Gate {
    let limit = format!("p >= {min_p}");
    if tests.is_empty() {
        return not_evaluated(
            GateName::GoodnessOfFit,
            &limit,
            "no candidate threshold to test (see exceedances)",
        );
    }
    match chosen {
        Some(k) => {
            let t = &tests[k];
            let detail = format!(
                "Anderson-Darling A2 = {} at {}, the threshold ForwardStop chose \
                 ({} of {} candidates rejected below it)",
                fmt3(t.ad_statistic),
                us(t.threshold_ns as f64),
                k,
                tests.len()
            );
            gate(
                GateName::GoodnessOfFit,
                t.ad_p_value >= min_p,
                Some(t.ad_p_value),
                &limit,
                detail,
            )
        }
        None => {
            let p: Vec<f64> = tests.iter().map(|t| t.ad_p_value).collect();
            let k = super::ad::forward_stop(&p, alpha);
            if k < tests.len() {
                return gate(
                    GateName::GoodnessOfFit,
                    false,
                    None,
                    &limit,
                    format!(
                        "no GPD fit at {}, the threshold ForwardStop chose",
                        us(tests[k].threshold_ns as f64)
                    ),
                );
            }
            let f = super::ad::forward_stop_statistic(&p);
            let detail = format!(
                "ForwardStop rejected all {} candidate thresholds: the mean of -ln(1 - p) over \
                 them is {} <= {alpha} (the figure; the highest threshold's own p-value is {})",
                tests.len(),
                fmt3(f),
                fmt3(tests[tests.len() - 1].ad_p_value)
            );
            Gate {
                name: GateName::GoodnessOfFit,
                status: GateStatus::Fail,
                figure: Some(f).filter(|f| f.is_finite()),
                limit: format!("ForwardStop statistic > {alpha} at the last candidate"),
                detail,
            }
        }
    }
}

/// A figure to three decimals, or "none" when it is not a number.
fn fmt3(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.3}")
    } else {
        "none".into()
    }
}

/// The GPD's shape at the chosen threshold strictly inside the range the
/// fit allows (−0.5, 1): at a bound the likelihood wanted a shape past
/// it, so the fit is the optimiser's edge, not an estimate.
pub fn shape_bound(pot: Option<&super::PotFit>) -> Gate {
    let limit = "-0.5 < xi < 1 (inside the fit's bounds)";
    let Some(p) = pot else {
        return not_evaluated(GateName::ShapeBound, limit, "no threshold was chosen");
    };
    let detail = if p.at_bound {
        format!(
            "xi = {:.3} is the optimiser's bound, not an estimate: the data ask for a shape outside the model's range",
            p.xi
        )
    } else {
        format!("xi = {:.3}", p.xi)
    };
    gate(GateName::ShapeBound, !p.at_bound, Some(p.xi), limit, detail)
}

/// ξ at the chosen threshold inside the 95 % interval of ξ at each of
/// the next (up to 3) higher thresholds whose fit has a standard error;
/// the figure is the largest `|ξ_j − ξ| / (1.96 se_j)` (≤ 1 passes).
/// Fewer than 2 such thresholds: not evaluated.
pub fn shape_stability(tests: &[ThresholdTest], chosen: Option<usize>) -> Gate {
    let limit = "<= 1 (xi within 1.96 se of each of the next 3 thresholds)";
    let Some(k) = chosen else {
        return not_evaluated(GateName::ShapeStability, limit, "no threshold was chosen");
    };
    let xi = tests[k].xi;
    let usable = |t: &&ThresholdTest| {
        t.fit.is_some() && t.xi.is_finite() && t.xi_se.is_finite() && t.xi_se > 0.0
    };
    let higher: Vec<&ThresholdTest> = tests[k + 1..].iter().filter(usable).take(3).collect();
    if higher.len() < 2 {
        let without = tests[k + 1..].iter().filter(|t| !usable(t)).count();
        return not_evaluated(
            GateName::ShapeStability,
            limit,
            &format!(
                "only {} higher threshold(s) with a shape and its standard error ({} without): \
                 stability not checked",
                higher.len(),
                without
            ),
        );
    }
    let worst = higher
        .iter()
        .map(|t| (t.xi - xi).abs() / (1.96 * t.xi_se))
        .fold(0.0, f64::max);
    let shapes: Vec<String> = higher
        .iter()
        .map(|t| format!("{:.3} ± {:.3}", t.xi, 1.96 * t.xi_se))
        .collect();
    let detail = format!("xi {xi:.3} at the threshold; higher: {}", shapes.join(", "));
    gate(
        GateName::ShapeStability,
        worst <= 1.0,
        Some(worst),
        limit,
        detail,
    )
}

/// Mann-Kendall on the window maxima: no monotonic trend at 5 %.
pub fn stationarity(windows: Option<&WindowMaxima>) -> Gate {
    let limit = "p > 0.05 (Mann-Kendall, window maxima)";
    let Some(w) = windows else {
        return not_evaluated(
            GateName::Stationarity,
            limit,
            "no window series: stationarity is assumed, not tested",
        );
    };
    match super::cluster::mann_kendall(&w.max_ns) {
        Some((p, s)) => gate(
            GateName::Stationarity,
            p > 0.05,
            Some(p),
            limit,
            format!("{} windows, Kendall S = {s}", w.max_ns.len()),
        ),
        None => not_evaluated(
            GateName::Stationarity,
            limit,
            "fewer than 8 windows: stationarity is assumed, not tested",
        ),
    }
}

/// The central 99 % range of a Poisson count of mean `mean`.
fn poisson_range(mean: f64) -> Option<(u64, u64)> {
    let p = Poisson::new(mean.max(1e-9)).ok()?;
    let q = |a: f64| (0..).find(|&k| p.cdf(k) >= a).unwrap_or(0);
    Some((q(0.005), q(0.995)))
}

pub const HELD_OUT_LIMIT: &str =
    "observed count within the central 99 % Poisson range of the prediction";

fn held_out_gate(observed: u64, expected: f64, what: String) -> Gate {
    let limit = HELD_OUT_LIMIT;
    match poisson_range(expected) {
        Some((lo, hi)) => {
            let detail =
                format!("{what}: {observed} observed, {expected:.1} predicted (range {lo}..={hi})");
            gate(
                GateName::HeldOut,
                (lo..=hi).contains(&observed),
                Some(observed as f64),
                limit,
                detail,
            )
        }
        None => not_evaluated(
            GateName::HeldOut,
            limit,
            &format!("{what}: no prediction, not checked"),
        ),
    }
}

/// Fit the first half's histogram at `threshold_ns`, predict how many of
/// the second half's samples lie above the level where 10 are expected.
pub fn held_out_histogram(halves: &[Vec<Bin>; 2], threshold_ns: u64) -> Gate {
    let n1: u64 = halves[0].iter().map(|b| b.count).sum();
    let n2: u64 = halves[1].iter().map(|b| b.count).sum();
    let ex1 = Exceedances::over(&halves[0], threshold_ns);
    let Some(fit) = gpd::fit(&ex1).filter(|f| ex1.n >= 10 && n2 > 0 && !gpd::xi_at_bound(f.xi))
    else {
        return not_evaluated(
            GateName::HeldOut,
            HELD_OUT_LIMIT,
            &format!(
                "the first half has {} samples above {}: no sound fit to predict from, not checked",
                ex1.n,
                us(threshold_ns as f64)
            ),
        );
    };
    let rate = ex1.n as f64 / n1 as f64;
    let lr = (10.0 / (n2 as f64 * rate)).ln().min(0.0);
    let x = threshold_ns as f64 + gpd::quantile_offset(lr, fit.sigma_ns, fit.xi);
    let edge = halves[1]
        .iter()
        .map(|b| b.lo_ns)
        .find(|&lo| lo as f64 >= x)
        .unwrap_or(u64::MAX);
    let observed: u64 = halves[1]
        .iter()
        .filter(|b| b.lo_ns >= edge)
        .map(|b| b.count)
        .sum();
    let y = (edge as f64 - threshold_ns as f64).max(0.0);
    let expected = n2 as f64 * rate * gpd::ln_sf(y, fit.sigma_ns, fit.xi).exp();
    held_out_gate(
        observed,
        expected,
        format!("second half above {}", us(edge as f64)),
    )
}

/// Fit a GEV on the first half of the windows, predict how many of the
/// second half's maxima exceed the level where 5 are expected.
pub fn held_out_windows(w: &WindowMaxima) -> Gate {
    let half = w.max_ns.len() / 2;
    let (first, second) = w.max_ns.split_at(half);
    let Some(fit) = gev::fit(first) else {
        return not_evaluated(
            GateName::HeldOut,
            HELD_OUT_LIMIT,
            &format!("{half} windows in the first half: too few to fit, not checked"),
        );
    };
    if fit.at_bound {
        return not_evaluated(
            GateName::HeldOut,
            HELD_OUT_LIMIT,
            &format!(
                "the first half's GEV fit sits at the optimiser's bound (xi = {:.3}): no prediction, not checked",
                fit.xi
            ),
        );
    }
    let p = (5.0 / second.len() as f64).min(0.5);
    let z = gev::level(&fit, gev::ln_y_for(p, 1.0));
    let observed = second.iter().filter(|&&v| v > z).count() as u64;
    held_out_gate(
        observed,
        p * second.len() as f64,
        format!("second half's window maxima above {}", us(z)),
    )
}

/// The histogram's and the windows' return levels for an hour agree
/// when either point estimate lies inside the other's 95 % interval
/// (the less precise interval holds the more precise estimate). The
/// figure is the ratio GEV / POT. An interval end that is unknown is no
/// pass: the gate then fails only if the known ends already show the
/// two apart, and is not evaluated otherwise.
pub fn agreement(pot: Option<&ReturnLevel>, gev: Option<&ReturnLevel>, why_none: &str) -> Gate {
    let limit = "one estimate inside the other's 95 % interval";
    let (Some(a), Some(b)) = (pot, gev) else {
        return not_evaluated(GateName::Agreement, limit, why_none);
    };
    // Some(inside) when the end that decides is known.
    let inside = |v: f64, r: &ReturnLevel| -> Option<bool> {
        if v >= r.level_ns {
            r.upper95_ns.map(|u| v <= u)
        } else {
            r.lower95_ns.map(|l| v >= l)
        }
    };
    let (ab, ba) = (inside(a.level_ns, b), inside(b.level_ns, a));
    let complete = |r: &ReturnLevel| r.lower95_ns.is_some() && r.upper95_ns.is_some();
    let show = |r: &ReturnLevel| {
        format!(
            "{} ({} .. {})",
            us(r.level_ns),
            opt(r.lower95_ns),
            opt(r.upper95_ns)
        )
    };
    let detail = format!("hour: POT {}, GEV {}", show(a), show(b));
    let ratio = Some(b.level_ns / a.level_ns);
    if ab == Some(false) && ba == Some(false) {
        return gate(GateName::Agreement, false, ratio, limit, detail);
    }
    if !(complete(a) && complete(b)) {
        return Gate {
            figure: None,
            ..not_evaluated(
                GateName::Agreement,
                limit,
                &format!("{detail}: an interval end is unknown, so agreement is not checked"),
            )
        };
    }
    gate(
        GateName::Agreement,
        ab == Some(true) || ba == Some(true),
        ratio,
        limit,
        detail,
    )
}

fn opt(v: Option<f64>) -> String {
    v.map_or("unknown".into(), us)
}

/// A latency in the gates' texts, as the tail's other texts write it
/// (`41.9 µs`): the numbers a reader compares carry one unit.
fn us(ns: f64) -> String {
    if ns.is_finite() {
        format!("{:.1} µs", ns / 1000.0)
    } else {
        "unknown".into()
    }
}
