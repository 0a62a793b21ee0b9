//! The analysis in named steps: check the input, choose the threshold,
//! judge the gates, then give the levels or the refusal.

use super::gates::{self, Gate, GateStatus};
use super::levels::{self, Horizon, ReturnLevel, Tail};
use super::threshold::{self, ThresholdTest};
use super::{
    Bin, ExtremalIndex, GevFit, PotFit, TailError, TailEstimate, TailInput, TailOptions,
    TailResult, cluster, gev, gpd,
};

/// Check the input; returns the observed maximum (the exact one when
/// the input gives it, else the highest bin's upper edge) and whether it
/// is exact.
fn validate(input: &TailInput, opts: &TailOptions) -> Result<(u64, bool), TailError> {
    if input.period_ns == 0 {
        return Err(TailError::Period);
    }
    if !(opts.probability > 0.0 && opts.probability < 1.0) {
        return Err(TailError::Probability(opts.probability));
    }
    check_bins(&input.bins, input.samples)?;
    if let Some(h) = &input.halves {
        for half in h {
            check_bins(half, half.iter().map(|b| b.count).sum())?;
        }
    }
    if let Some(w) = &input.windows {
        if !(w.length_s > 0.0) || w.max_ns.iter().any(|v| !v.is_finite()) {
            return Err(TailError::Windows(w.length_s));
        }
    }
    let top = input
        .bins
        .iter()
        .rev()
        .find(|b| b.count > 0)
        .ok_or(TailError::Empty)?;
    match input.max_ns {
        Some(m) if m < top.lo_ns || m >= top.hi_ns => Err(TailError::MaxOutsideBins {
            max_ns: m,
            lo_ns: top.lo_ns,
            hi_ns: top.hi_ns,
        }),
        Some(m) => Ok((m, true)),
        None => Ok((top.hi_ns - 1, false)),
    }
}

fn check_bins(bins: &[Bin], samples: u64) -> Result<(), TailError> {
    let mut sum = 0u64;
    let mut prev_hi = 0u64;
    for b in bins {
        if b.hi_ns <= b.lo_ns {
            return Err(TailError::BadBin {
                lo_ns: b.lo_ns,
                hi_ns: b.hi_ns,
            });
        }
        if b.lo_ns < prev_hi {
            return Err(TailError::Unordered { lo_ns: b.lo_ns });
        }
        prev_hi = b.hi_ns;
        sum = sum.saturating_add(b.count);
    }
    if sum == 0 {
        return Err(TailError::Empty);
    }
    if sum != samples {
        return Err(TailError::CountMismatch { bins: sum, samples });
    }
    Ok(())
}

/// Exceedances θ needs at the fit's threshold before it is taken there.
const MIN_THETA_EXCEEDANCES: usize = 30;

/// θ and what it rests on. Only exceedance times (wake-up scale) change
/// the levels; the windows' θ is shown, the levels keep θ = 1.
fn extremal_index(input: &TailInput, fit_threshold_ns: Option<u64>) -> (ExtremalIndex, f64) {
    if let Some(all) = &input.exceedance_times {
        // At the fit's threshold when the table holds enough above it (the
        // clustering of the exceedances the levels are made of), else at
        // the table's own.
        let at_fit = fit_threshold_ns
            .and_then(|u| all.above(u))
            .filter(|t| t.wakeups.len() >= MIN_THETA_EXCEEDANCES);
        let t = at_fit.as_ref().unwrap_or(all);
        if let Some(theta) = cluster::intervals_estimator(&t.wakeups) {
            let independence = cluster::cluster_dispersion(&t.wakeups, theta, input.samples);
            let (use_, used) = match &independence {
                Some(i) if !i.holds => (
                    format!(
                        "shown only: the {} clusters do not arrive as independent events of one \
                         rate (dispersion over {} spans of the run, p = {:.2e}); the levels assume \
                         theta = 1 (the cautious side)",
                        i.clusters, i.blocks, i.p_value
                    ),
                    1.0,
                ),
                Some(i) => (
                    format!(
                        "wake-ups over the horizon are counted as N·θ independent ones (its {} \
                         clusters arrive as independent events: dispersion over {} spans, p = {:.2})",
                        i.clusters, i.blocks, i.p_value
                    ),
                    theta,
                ),
                None => (
                    "wake-ups over the horizon are counted as N·θ independent ones (too few \
                     clusters to check that they are independent)"
                        .to_string(),
                    theta,
                ),
            };
            let from = format!(
                "exceedance_times over {} µs",
                crate::units::us1(t.threshold_ns)
            );
            return (
                ExtremalIndex::Estimated {
                    theta,
                    from,
                    exceedances: t.wakeups.len(),
                    use_,
                    independence,
                },
                used,
            );
        }
    }
    if let Some((theta, n)) = input
        .windows
        .as_ref()
        .and_then(|w| cluster::windows_theta(&w.max_ns))
    {
        let use_ = "shown only: clustering of extreme windows, not of wake-ups; the levels assume theta = 1 (no fewer independent wake-ups, the cautious side)".to_string();
        return (
            ExtremalIndex::Estimated {
                theta,
                from: "windows".into(),
                exceedances: n,
                use_,
                independence: None,
            },
            1.0,
        );
    }
    let assumption = "unknown (a histogram keeps no order): theta = 1 is assumed, the cautious side for the chance of at least one late wake-up".to_string();
    (ExtremalIndex::Unknown { assumption }, 1.0)
}

/// What the gates and levels share.
struct Found {
    tests: Vec<ThresholdTest>,
    chosen: Option<usize>,
    pot: Option<PotFit>,
    gev: Option<GevFit>,
    theta: f64,
}

fn pot_of(t: &ThresholdTest, samples: u64) -> Option<PotFit> {
    let f = t.fit.as_ref()?;
    Some(PotFit {
        threshold_ns: t.threshold_ns,
        exceedances: t.exceedances,
        rate: t.exceedances as f64 / samples as f64,
        sigma_ns: f.sigma_ns,
        xi: f.xi,
        xi_se: f.xi_se.is_finite().then_some(f.xi_se),
        at_bound: gpd::xi_at_bound(f.xi),
    })
}

/// The fitted tail the levels come from; none when no threshold was
/// chosen or its shape sits at a bound (no estimate to extrapolate).
fn tail_of<'a>(
    found: &'a Found,
    ex: &'a gpd::Exceedances,
    input: &TailInput,
    opts: &TailOptions,
) -> Option<Tail<'a>> {
    let k = found.chosen?;
    let fit = found.tests[k].fit.as_ref()?;
    let pot = found.pot.as_ref().filter(|p| !p.at_bound)?;
    Some(Tail {
        ex,
        fit,
        rate: pot.rate,
        period_ns: input.period_ns as f64,
        theta: found.theta,
        samples: input.samples,
        max_extrapolation: opts.max_extrapolation,
    })
}

/// The windows' levels; none when the GEV fit sits at a bound.
fn gev_levels(input: &TailInput, fit: &GevFit, opts: &TailOptions) -> Vec<ReturnLevel> {
    let Some(w) = input.windows.as_ref().filter(|_| !fit.at_bound) else {
        return vec![];
    };
    let observed_s = w.length_s * w.max_ns.len() as f64;
    let p = opts.probability;
    Horizon::ALL
        .iter()
        .map(|&h| {
            let m = h.seconds() / w.length_s;
            let ly = gev::ln_y_for(p, m);
            let (lo, hi) = gev::level_interval(&w.max_ns, fit, ly);
            ReturnLevel {
                horizon: h,
                probability: p,
                wakeups: m,
                level_ns: gev::level(fit, ly),
                lower95_ns: lo,
                upper95_ns: hi,
                extrapolation: 0.0,
                supported: false,
            }
            .reaching(h.seconds() / observed_s, opts.max_extrapolation)
        })
        .collect()
}

fn held_out(input: &TailInput, found: &Found) -> Gate {
    match (&input.halves, found.pot.as_ref(), &input.windows) {
        (Some(h), Some(p), _) => gates::held_out_histogram(h, p.threshold_ns),
        (_, _, Some(w)) => gates::held_out_windows(w),
        _ => Gate {
            name: gates::GateName::HeldOut,
            status: GateStatus::NotEvaluated,
            figure: None,
            limit: gates::HELD_OUT_LIMIT.into(),
            detail: "neither the run's halves nor a window series: not checked".into(),
        },
    }
}

/// Analyse a run's tail. Errors only for input that cannot be read;
/// data too poor for an estimate give [`TailResult::Insufficient`].
pub fn analyze(input: &TailInput, opts: &TailOptions) -> Result<TailEstimate, TailError> {
    let (observed_max_ns, observed_max_exact) = validate(input, opts)?;
    let n = input.samples;
    let edges = threshold::candidates(
        &input.bins,
        n,
        opts.max_exceedances,
        opts.min_exceedances / 2,
        opts.candidates,
    );
    let (tests, chosen) = threshold::choose(&input.bins, &edges, opts.alpha);
    let pot = chosen.and_then(|k| pot_of(&tests[k], n));
    let (extremal_index, theta) = extremal_index(input, pot.as_ref().map(|p| p.threshold_ns));
    let gev = input.windows.as_ref().and_then(|w| gev::fit(&w.max_ns));
    let found = Found {
        tests,
        chosen,
        pot,
        gev,
        theta,
    };
    let ex = found
        .pot
        .as_ref()
        .map(|p| gpd::Exceedances::over(&input.bins, p.threshold_ns));
    let tail = ex.as_ref().and_then(|ex| tail_of(&found, ex, input, opts));
    let p = opts.probability;
    let pot_levels: Vec<ReturnLevel> = tail
        .iter()
        .flat_map(|t| Horizon::ALL.map(|h| t.return_level(h, p)))
        .flatten()
        .collect();
    let gev_levels = found
        .gev
        .as_ref()
        .map_or(vec![], |g| gev_levels(input, g, opts));
    let gates = vec![
        gates::exceedances(&found.tests, found.chosen, opts.min_exceedances),
        gates::goodness_of_fit(&found.tests, found.chosen, opts.min_p_value, opts.alpha),
        gates::shape_bound(found.pot.as_ref()),
        gates::shape_stability(&found.tests, found.chosen),
        gates::stationarity(input.windows.as_ref()),
        held_out(input, &found),
        gates::agreement(
            pot_levels.first(),
            gev_levels.first(),
            agreement_why(input, &found),
        ),
    ];
    let bound_3_over_n = 3.0 / n as f64;
    let result = match gates.iter().find(|g| g.status == GateStatus::Fail) {
        Some(g) => TailResult::Insufficient {
            gate: g.name,
            figure: g.figure,
            observed_max_ns,
            bound_3_over_n,
        },
        None => estimate(
            tail.as_ref(),
            input,
            opts,
            observed_max_ns,
            pot_levels,
            gev_levels,
        ),
    };
    Ok(TailEstimate {
        samples: n,
        period_ns: input.period_ns,
        observed_max_ns,
        observed_max_exact,
        bound_3_over_n,
        probability: p,
        max_extrapolation: opts.max_extrapolation,
        thresholds: found.tests,
        chosen: found.chosen,
        pot: found.pot,
        gev: found.gev,
        extremal_index,
        gates,
        result,
    })
}

fn agreement_why(input: &TailInput, found: &Found) -> &'static str {
    match (&input.windows, &found.gev) {
        (None, _) => "no window series: one estimate only",
        (Some(_), None) => "the window maxima could not be fitted (fewer than 10?)",
        (Some(_), Some(g)) if g.at_bound => {
            "the windows' GEV fit sits at the optimiser's bound of xi: no level from the windows"
        }
        _ => "no return level from the histogram",
    }
}

fn estimate(
    tail: Option<&Tail>,
    input: &TailInput,
    opts: &TailOptions,
    observed_max_ns: u64,
    pot: Vec<ReturnLevel>,
    gev: Vec<ReturnLevel>,
) -> TailResult {
    let deadline = opts.deadline_ns.and_then(|d| {
        let t = tail?;
        t.deadline_risk(d as f64).or_else(|| {
            // Samples in bins reaching past the deadline (the cautious
            // side for a bin that straddles it); none when the run's
            // exact maximum is at or below it.
            let k: u64 = input
                .bins
                .iter()
                .filter(|b| b.hi_ns > d && observed_max_ns > d)
                .map(|b| b.count)
                .sum();
            Some(levels::empirical_risk(
                d as f64,
                k,
                input.samples,
                3600e9 / input.period_ns as f64 * t.theta,
            ))
        })
    });
    TailResult::Estimate {
        return_levels: pot,
        gev_return_levels: gev,
        deadline,
    }
}
