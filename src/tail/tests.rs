//! The tail analysis against scipy's reference vectors
//! (tests/fixtures/tail/, written by scripts/tail-reference.py) and on
//! degenerate input.

use serde_json::Value;

use super::*;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/tail/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn bins(v: &Value) -> Vec<Bin> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| Bin {
            lo_ns: r[0].as_u64().unwrap(),
            hi_ns: r[1].as_u64().unwrap(),
            count: r[2].as_u64().unwrap(),
        })
        .collect()
}

fn input(f: &Value) -> TailInput {
    let b = bins(&f["bins"]);
    let samples = b.iter().map(|b| b.count).sum();
    let w = &f["windows"];
    TailInput {
        bins: b,
        samples,
        period_ns: f["period_ns"].as_u64().unwrap(),
        windows: Some(WindowMaxima {
            length_s: w["length_s"].as_f64().unwrap(),
            max_ns: w["max_ns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect(),
        }),
        halves: Some([bins(&f["halves"][0]), bins(&f["halves"][1])]),
        exceedance_times: None,
        max_ns: None,
    }
}

const FITTED: [&str; 5] = ["gpd-neg", "gpd-zero", "gpd-pos", "gpd-zero-us", "bounded"];

#[test]
fn tail_binned_fit_matches_scipy() {
    for name in FITTED {
        let f = fixture(name);
        let s = &f["scipy"];
        let ex = gpd::Exceedances::over(
            &bins(&f["bins"]),
            s["threshold_ns"].as_f64().unwrap() as u64,
        );
        let fit = gpd::fit(&ex).unwrap();
        let (xi, sigma) = (
            s["binned"]["xi"].as_f64().unwrap(),
            s["binned"]["sigma_ns"].as_f64().unwrap(),
        );
        assert_eq!(ex.n, s["binned"]["exceedances"].as_u64().unwrap(), "{name}");
        // the same likelihood on the same bins: the optimisers agree
        assert!(
            (fit.xi - xi).abs() < 2e-3,
            "{name}: xi {} vs scipy {xi}",
            fit.xi
        );
        assert!(
            (fit.sigma_ns / sigma - 1.0).abs() < 2e-3,
            "{name}: sigma {} vs scipy {sigma}",
            fit.sigma_ns
        );
        assert!(
            fit.nll <= s["binned"]["nll"].as_f64().unwrap() + 1e-3,
            "{name}: a worse optimum than scipy's"
        );
        // scipy's genpareto.fit on the exact values: binning costs little
        let (xe, se) = (
            s["exact"]["xi"].as_f64().unwrap(),
            s["exact"]["sigma_ns"].as_f64().unwrap(),
        );
        assert!(
            (fit.xi - xe).abs() < 0.01 && (fit.sigma_ns / se - 1.0).abs() < 0.01,
            "{name}: {fit:?} vs exact {xe} {se}"
        );
    }
}

#[test]
fn tail_bounds_cover_the_true_level() {
    for name in FITTED {
        let f = fixture(name);
        let est = analyze(&input(&f), &TailOptions::default()).unwrap();
        let truth = f["truth"]["return_level_hour_ns"].as_f64().unwrap();
        let TailResult::Estimate {
            return_levels,
            gev_return_levels,
            ..
        } = &est.result
        else {
            panic!("{name}: refused: {:#?}", est.gates);
        };
        let hour = &return_levels[0];
        assert_eq!(hour.horizon, Horizon::Hour);
        let (lo, hi) = (hour.lower95_ns.unwrap(), hour.upper95_ns.unwrap());
        assert!(
            lo <= truth && truth <= hi,
            "{name}: {truth} not in {lo}..{hi} ({hour:?})"
        );
        assert!(
            hi <= truth * 1.5,
            "{name}: the bound {hi} is too loose to be useful (truth {truth})"
        );
        assert_eq!(return_levels.len(), 3);
        assert_eq!(gev_return_levels.len(), 3);
        assert!(
            est.gates.iter().all(|g| g.status == GateStatus::Pass),
            "{name}: {:#?}",
            est.gates
        );
    }
}

fn refused_by(name: &str) -> (GateName, TailEstimate) {
    let f = fixture(name);
    let est = analyze(&input(&f), &TailOptions::default()).unwrap();
    match est.result {
        TailResult::Insufficient {
            gate,
            observed_max_ns,
            bound_3_over_n,
            ..
        } => {
            assert_eq!(observed_max_ns, est.observed_max_ns);
            assert_eq!(bound_3_over_n, 3.0 / est.samples as f64);
            (gate, est)
        }
        _ => panic!(
            "{name}: an estimate where a refusal was due: {:#?}",
            est.gates
        ),
    }
}

fn status(est: &TailEstimate, gate: GateName) -> GateStatus {
    est.gates.iter().find(|g| g.name == gate).unwrap().status
}

fn failed(est: &TailEstimate, gate: GateName) -> bool {
    est.gates
        .iter()
        .any(|g| g.name == gate && g.status == GateStatus::Fail)
}

#[test]
fn tail_mixture_of_two_causes_is_refused() {
    // Anderson-Darling rejects every threshold below the second cause,
    // ForwardStop climbs to its few samples: too few exceedances, and
    // the windows' estimate disagrees.
    // The few samples left want a shape below -0.5, and the windows'
    // GEV sits at a bound too: both fits are the optimiser's edge, so
    // the agreement of two edges is not evaluated (it once "failed").
    let (gate, est) = refused_by("mixture");
    assert_eq!(gate, GateName::Exceedances, "{:#?}", est.gates);
    assert!(failed(&est, GateName::ShapeBound), "{:#?}", est.gates);
    assert!(est.pot.as_ref().unwrap().at_bound);
    assert!(est.gev.as_ref().unwrap().at_bound);
    assert_eq!(status(&est, GateName::Agreement), GateStatus::NotEvaluated);
    assert!(est.thresholds.iter().take(10).all(|t| t.ad_p_value < 0.01));
}

#[test]
fn tail_drift_is_refused_by_stationarity() {
    let (_, est) = refused_by("drift");
    assert!(failed(&est, GateName::Stationarity), "{:#?}", est.gates);
}

fn one_bin(count: u64) -> TailInput {
    TailInput {
        bins: vec![Bin {
            lo_ns: 5000,
            hi_ns: 5001,
            count,
        }],
        samples: count,
        period_ns: 1_000_000,
        windows: None,
        halves: None,
        exceedance_times: None,
        max_ns: None,
    }
}

#[test]
fn tail_degenerate_input_is_refused_not_panicking() {
    let est = analyze(&one_bin(1_000_000), &TailOptions::default()).unwrap();
    assert!(matches!(
        est.result,
        TailResult::Insufficient {
            gate: GateName::Exceedances,
            observed_max_ns: 5000,
            ..
        }
    ));
    assert!(matches!(est.extremal_index, ExtremalIndex::Unknown { .. }));
    let o = TailOptions::default();
    assert_eq!(analyze(&one_bin(0), &o).unwrap_err(), TailError::Empty);
    let mut i = one_bin(10);
    i.samples = 11;
    assert_eq!(
        analyze(&i, &o).unwrap_err(),
        TailError::CountMismatch {
            bins: 10,
            samples: 11
        }
    );
    i = one_bin(10);
    i.windows = Some(WindowMaxima {
        length_s: 1.0,
        max_ns: vec![f64::NAN],
    });
    assert!(matches!(
        analyze(&i, &o).unwrap_err(),
        TailError::Windows(_)
    ));
    i = one_bin(10);
    i.bins.push(Bin {
        lo_ns: 4000,
        hi_ns: 4001,
        count: 0,
    });
    assert!(matches!(
        analyze(&i, &o).unwrap_err(),
        TailError::Unordered { .. }
    ));
    let bad = TailOptions {
        probability: f64::NAN,
        ..TailOptions::default()
    };
    assert!(matches!(
        analyze(&one_bin(10), &bad).unwrap_err(),
        TailError::Probability(_)
    ));
    // a few samples spread out: too few exceedances, never a number
    let few = TailInput::from_histogram(&spread(300), 1_000_000);
    let est = analyze(&few, &o).unwrap();
    assert!(
        matches!(
            est.result,
            TailResult::Insufficient {
                gate: GateName::Exceedances,
                ..
            }
        ),
        "{:?}",
        est.result
    );
}

fn spread(n: u64) -> Histogram {
    let mut h = Histogram::latency();
    for i in 0..n {
        h.record(2000 + (i * 7919) % 5000);
    }
    h
}

#[test]
fn tail_histogram_bins_keep_every_sample() {
    let h = spread(10_000);
    let input = TailInput::from_histogram(&h, 1000);
    assert_eq!(input.bins.iter().map(|b| b.count).sum::<u64>(), 10_000);
    assert!(input.bins.iter().all(|b| b.hi_ns > b.lo_ns));
    assert!(input.bins.windows(2).all(|w| w[0].hi_ns <= w[1].lo_ns));
}

#[test]
fn tail_ad_table_is_the_scripts() {
    let f = fixture("ad-table");
    let rows = f["rows"].as_array().unwrap();
    assert_eq!(rows.len(), ad_table::ROWS.len());
    for (r, row) in rows.iter().zip(ad_table::ROWS.iter()) {
        for (q, v) in r["quantiles"].as_array().unwrap().iter().zip(row) {
            assert!((q.as_f64().unwrap() - v).abs() < 5e-5);
        }
    }
}

#[test]
fn tail_deadline_risk_comes_with_its_bound() {
    let f = fixture("gpd-zero");
    let truth = f["truth"]["return_level_hour_ns"].as_f64().unwrap();
    let opts = TailOptions {
        deadline_ns: Some(truth as u64),
        ..TailOptions::default()
    };
    let est = analyze(&input(&f), &opts).unwrap();
    let TailResult::Estimate {
        deadline: Some(d), ..
    } = est.result
    else {
        panic!("{:?}", est.result)
    };
    // at the true 1 %-per-hour level the risk is about 1 %
    assert!(d.p_hour > 0.001 && d.p_hour < 0.05, "{d:?}");
    assert!(
        d.p_hour_upper95 >= 0.01 && d.p_hour_upper95 > d.p_hour,
        "{d:?}"
    );
    assert_eq!(d.from, "tail");
}

/// Prints each fixture's estimate and how long it took (not a test:
/// `cargo test --release --lib -- tail_dump --ignored --nocapture`).
#[test]
#[ignore]
fn tail_dump() {
    for name in [
        "gpd-neg",
        "gpd-zero",
        "gpd-pos",
        "gpd-zero-us",
        "bounded",
        "mixture",
        "drift",
    ] {
        let t = std::time::Instant::now();
        let est = analyze(&input(&fixture(name)), &TailOptions::default()).unwrap();
        let dt = t.elapsed();
        eprintln!("== {name} ({dt:?}) truth {}", fixture(name)["truth"]);
        for t in &est.thresholds {
            eprintln!(
                "  u {} n {} xi {:.3}±{:.3} A2 {:.3} p {:.3}",
                t.threshold_ns, t.exceedances, t.xi, t.xi_se, t.ad_statistic, t.ad_p_value
            );
        }
        eprintln!("  chosen {:?} theta {:?}", est.chosen, est.extremal_index);
        for g in &est.gates {
            eprintln!("  {:?} {:?} {:?} {}", g.name, g.status, g.figure, g.detail);
        }
        eprintln!("  {}", serde_json::to_string(&est.result).unwrap());
    }
}

/// `n` maxima of a GEV(μ, σ, ξ) by its inverse CDF, from a fixed seed.
fn gev_maxima(n: usize, mu: f64, sigma: f64, xi: f64, mut state: u64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            (mu + sigma * ((-u.ln()).powf(-xi) - 1.0) / xi).round()
        })
        .collect()
}

#[test]
fn tail_a_day_of_one_second_windows_is_analysed() {
    // 86 400 one-second maxima of a GEV(20 µs, 2 µs, 0.1), each second's
    // maximum recorded with 10 000 samples of a body below it at 100 µs.
    let (mu, sigma, xi) = (20_000.0, 2_000.0, 0.1);
    let max_ns = gev_maxima(86_400, mu, sigma, xi, 37);
    let mut h = Histogram::latency();
    for (i, &m) in max_ns.iter().enumerate() {
        h.record(m as u64);
        h.record_n(2_000 + (i as u64 * 7919) % 6_000, 9_999);
    }
    let mut input = TailInput::from_histogram(&h, 100_000);
    input.windows = Some(WindowMaxima {
        length_s: 1.0,
        max_ns: max_ns.clone(),
    });
    let est = analyze(&input, &TailOptions::default()).unwrap();
    let g = est.gev.as_ref().expect("a GEV fit of 86 400 maxima");
    assert_eq!(g.windows, 86_400);
    // the standard errors at n = 86 400 are about 8 ns, 6 ns and 0.003
    assert!((g.location_ns - mu).abs() < 50.0, "{g:?}");
    assert!((g.scale_ns - sigma).abs() < 50.0, "{g:?}");
    assert!((g.xi - xi).abs() < 0.02, "{g:?}");
    let stationarity = est
        .gates
        .iter()
        .find(|g| g.name == GateName::Stationarity)
        .unwrap();
    assert_ne!(stationarity.status, GateStatus::NotEvaluated);
    assert!(stationarity.figure.is_some_and(|p| p > 0.0 && p <= 1.0));
    // merging the maxima (gev.rs) changes the fit by far less than its
    // standard errors: the same maxima unmerged give the same optimum
    let exact = gev::fit_on(&max_ns, &gev::Maxima::exact(&max_ns)).unwrap();
    assert!(
        (g.location_ns - exact.location_ns).abs() < 0.5,
        "{g:?} {exact:?}"
    );
    assert!((g.scale_ns - exact.scale_ns).abs() < 0.5, "{g:?} {exact:?}");
    assert!((g.xi - exact.xi).abs() < 2e-4, "{g:?} {exact:?}");
    // the hour's level (p = 0.01 over 3600 windows): an interval around
    // its estimate, which lies near the truth (the shape's error of 0.003
    // moves a level 2.8·10⁻⁶ into the tail by about 2 %)
    let ly = gev::ln_y_for(0.01, 3600.0);
    let truth = mu + sigma * (-xi * ly).exp_m1() / xi;
    let z = gev::level(g, ly);
    let (lo, hi) = gev::level_interval(&max_ns, g, ly);
    let (lo, hi) = (lo.unwrap(), hi.unwrap());
    assert!(lo < z && z < hi, "{lo} {z} {hi}");
    assert!((z - truth).abs() < 0.05 * truth, "{z} vs {truth}");
    assert!(hi - lo < 0.2 * truth, "{lo}..{hi}");
    // the same level and bound are what the result reports: a day of
    // windows of a clean GEV passes every gate, so the result is an
    // estimate (anything else fails here, never skips these checks)
    let TailResult::Estimate {
        gev_return_levels, ..
    } = &est.result
    else {
        panic!("a day of windows gives no estimate: {:?}", est.result);
    };
    assert_eq!(gev_return_levels[0].level_ns, z);
    assert_eq!(gev_return_levels[0].upper95_ns, Some(hi));
}

// ------------------------------------------------ every gate can fail

fn level(level_ns: f64, lo: Option<f64>, hi: Option<f64>) -> ReturnLevel {
    ReturnLevel {
        horizon: Horizon::Hour,
        probability: 0.01,
        wakeups: 3.6e6,
        level_ns,
        lower95_ns: lo,
        upper95_ns: hi,
        extrapolation: 1.0,
        supported: true,
    }
}

#[test]
fn tail_agreement_fails_passes_and_is_not_evaluated_on_unknown_ends() {
    let a = level(41e6, Some(35e6), Some(50e6));
    // apart on known ends: fails, with the ratio as its figure
    let far = level(257.85e9, Some(100e6), None);
    let g = gates::agreement(Some(&a), Some(&far), "");
    assert_eq!(g.status, GateStatus::Fail, "{g:?}");
    assert!((g.figure.unwrap() - 257.85e9 / 41e6).abs() < 1e-6);
    // the windows' interval unknown where it would decide: never a pass
    let open = level(257.85e9, None, None);
    let g = gates::agreement(Some(&a), Some(&open), "");
    assert_eq!(g.status, GateStatus::NotEvaluated, "{g:?}");
    assert_eq!(g.figure, None);
    let low_known = level(60e6, Some(30e6), None);
    let g = gates::agreement(Some(&a), Some(&low_known), "");
    assert_eq!(g.status, GateStatus::NotEvaluated, "{g:?}");
    // both known and overlapping: passes
    let near = level(45e6, Some(40e6), Some(52e6));
    assert_eq!(
        gates::agreement(Some(&a), Some(&near), "").status,
        GateStatus::Pass
    );
    assert_eq!(
        gates::agreement(Some(&a), None, "no windows").status,
        GateStatus::NotEvaluated
    );
}

fn tested(threshold_ns: u64, xi: f64, xi_se: f64, p: f64) -> ThresholdTest {
    ThresholdTest {
        threshold_ns,
        exceedances: 100,
        sigma_ns: 1000.0,
        xi,
        xi_se,
        ad_statistic: 0.5,
        ad_p_value: p,
        fit: Some(gpd::GpdFit {
            sigma_ns: 1000.0,
            xi,
            nll: 0.0,
            xi_se,
        }),
    }
}

#[test]
fn tail_shape_gates_fail_and_are_not_evaluated_without_input() {
    let stable = [
        tested(10, 0.1, 0.05, 0.5),
        tested(20, 0.12, 0.05, 0.5),
        tested(30, 0.09, 0.06, 0.5),
    ];
    assert_eq!(
        gates::shape_stability(&stable, Some(0)).status,
        GateStatus::Pass
    );
    let drifting = [
        tested(10, 0.1, 0.05, 0.5),
        tested(20, 0.5, 0.05, 0.5),
        tested(30, 0.6, 0.05, 0.5),
    ];
    let g = gates::shape_stability(&drifting, Some(0));
    assert_eq!(g.status, GateStatus::Fail, "{g:?}");
    assert!(g.figure.unwrap() > 1.0);
    // no threshold, or higher ones without a standard error: no NaN, no
    // FAIL, not evaluated
    assert_eq!(
        gates::shape_stability(&stable, None).status,
        GateStatus::NotEvaluated
    );
    let flat = [
        tested(10, -0.5, f64::NAN, 0.5),
        tested(20, -0.5, f64::NAN, 0.5),
        tested(30, -0.5, f64::NAN, 0.5),
    ];
    let g = gates::shape_stability(&flat, Some(0));
    assert_eq!(g.status, GateStatus::NotEvaluated, "{g:?}");
    assert!(!g.detail.contains("NaN"), "{g:?}");
    // a shape at the optimiser's bound is refused, and named
    let pot = |xi: f64| PotFit {
        threshold_ns: 10,
        exceedances: 100,
        rate: 0.01,
        sigma_ns: 1000.0,
        xi,
        xi_se: None,
        at_bound: gpd::xi_at_bound(xi),
    };
    let g = gates::shape_bound(Some(&pot(-0.5)));
    assert_eq!(g.status, GateStatus::Fail);
    assert!(g.detail.contains("bound"), "{g:?}");
    assert_eq!(gates::shape_bound(Some(&pot(1.0))).status, GateStatus::Fail);
    assert_eq!(gates::shape_bound(Some(&pot(0.2))).status, GateStatus::Pass);
    assert_eq!(gates::shape_bound(None).status, GateStatus::NotEvaluated);
}

#[test]
fn tail_goodness_of_fit_shows_the_figure_that_decided() {
    // ForwardStop rejects all: the figure is its statistic (at most
    // alpha), not the last candidate's p-value (0.3, above the limit)
    let tests = [
        tested(10, 0.1, 0.05, 1e-6),
        tested(20, 0.1, 0.05, 1e-5),
        tested(30, 0.1, 0.05, 0.3),
    ];
    let p: Vec<f64> = tests.iter().map(|t| t.ad_p_value).collect();
    assert_eq!(ad::forward_stop(&p, 0.2), 3);
    let g = gates::goodness_of_fit(&tests, None, 0.05, 0.2);
    assert_eq!(g.status, GateStatus::Fail);
    let f = g.figure.unwrap();
    assert!(
        f <= 0.2 && (f - ad::forward_stop_statistic(&p)).abs() < 1e-12,
        "{g:?}"
    );
    assert!(g.limit.contains("ForwardStop"), "{g:?}");
    // chosen, with a p-value below the limit: fails on that p-value
    let g = gates::goodness_of_fit(&tests, Some(1), 0.05, 0.1);
    assert_eq!((g.status, g.figure), (GateStatus::Fail, Some(1e-5)));
    assert_eq!(
        gates::goodness_of_fit(&tests, Some(2), 0.05, 0.1).status,
        GateStatus::Pass
    );
    assert_eq!(
        gates::goodness_of_fit(&[], None, 0.05, 0.1).status,
        GateStatus::NotEvaluated
    );
    // exceedances: too few fails; candidates all rejected: not its call
    assert_eq!(
        gates::exceedances(&tests, Some(0), 500).status,
        GateStatus::Fail
    );
    assert_eq!(
        gates::exceedances(&tests, None, 50).status,
        GateStatus::NotEvaluated
    );
}

#[test]
fn tail_window_gates_fail_and_are_not_evaluated_without_windows() {
    assert_eq!(gates::stationarity(None).status, GateStatus::NotEvaluated);
    let few = WindowMaxima {
        length_s: 1.0,
        max_ns: vec![1.0; 5],
    };
    assert_eq!(
        gates::stationarity(Some(&few)).status,
        GateStatus::NotEvaluated
    );
    assert_eq!(
        gates::held_out_windows(&few).status,
        GateStatus::NotEvaluated
    );
    // the second half's maxima far above what the first predicts
    let mut max_ns = gev_maxima(200, 20_000.0, 2_000.0, 0.1, 11);
    for v in &mut max_ns[100..] {
        *v += 30_000.0;
    }
    let shifted = WindowMaxima {
        length_s: 1.0,
        max_ns,
    };
    let g = gates::held_out_windows(&shifted);
    assert_eq!(g.status, GateStatus::Fail, "{g:?}");
    let same = WindowMaxima {
        length_s: 1.0,
        max_ns: gev_maxima(200, 20_000.0, 2_000.0, 0.1, 11),
    };
    assert_eq!(gates::held_out_windows(&same).status, GateStatus::Pass);
}

// ------------------------------------------- reach, maximum, no NaN

#[test]
fn tail_levels_past_the_supported_reach_are_marked_not_estimates() {
    let f = fixture("gpd-zero");
    let inp = input(&f);
    let est = analyze(&inp, &TailOptions::default()).unwrap();
    let TailResult::Estimate {
        return_levels,
        gev_return_levels,
        ..
    } = &est.result
    else {
        panic!("{:#?}", est.gates)
    };
    let observed_s = inp.samples as f64 * inp.period_ns as f64 / 1e9;
    for l in return_levels {
        let reach = l.horizon.seconds() / observed_s;
        assert!((l.extrapolation / reach - 1.0).abs() < 1e-9, "{l:?}");
        assert_eq!(l.supported, reach <= MAX_EXTRAPOLATION, "{l:?}");
    }
    let w = inp.windows.as_ref().unwrap();
    for l in gev_return_levels {
        let reach = l.horizon.seconds() / (w.length_s * w.max_ns.len() as f64);
        assert!((l.extrapolation / reach - 1.0).abs() < 1e-9, "{l:?}");
        assert_eq!(l.supported, reach <= MAX_EXTRAPOLATION, "{l:?}");
    }
    // a year is past 100 × any fixture: never supported
    let year = return_levels.iter().find(|l| l.horizon == Horizon::Year);
    assert!(year.is_some_and(|l| !l.supported && l.extrapolation > 100.0));
    // a tighter reach refuses even the hour
    let tight = TailOptions {
        max_extrapolation: 1e-3,
        ..TailOptions::default()
    };
    let est = analyze(&inp, &tight).unwrap();
    let TailResult::Estimate { return_levels, .. } = &est.result else {
        panic!()
    };
    assert!(!return_levels.is_empty() && return_levels.iter().all(|l| !l.supported));
    // no NaN anywhere in the JSON
    let json = serde_json::to_string(&est).unwrap();
    assert!(!json.contains("NaN"), "{json}");
}

#[test]
fn tail_observed_maximum_is_the_exact_one() {
    let mut i = one_bin(10);
    i.max_ns = Some(5000);
    let est = analyze(&i, &TailOptions::default()).unwrap();
    assert_eq!(est.observed_max_ns, 5000);
    assert!(est.observed_max_exact);
    let mut h = Histogram::latency();
    h.record_n(9_902_112, 1);
    h.record_n(10_000, 99);
    let mut i = TailInput::from_histogram(&h, 200_000);
    i.max_ns = Some(9_902_112);
    let est = analyze(&i, &TailOptions::default()).unwrap();
    assert_eq!(est.observed_max_ns, 9_902_112);
    assert!(matches!(
        est.result,
        TailResult::Insufficient {
            observed_max_ns: 9_902_112,
            ..
        }
    ));
    // without it, the bin's edge, said as not exact
    i.max_ns = None;
    let est = analyze(&i, &TailOptions::default()).unwrap();
    assert!(!est.observed_max_exact && est.observed_max_ns >= 9_902_112);
    // a maximum outside the highest bin is a contradiction
    i.max_ns = Some(20_000_000);
    assert!(matches!(
        analyze(&i, &TailOptions::default()).unwrap_err(),
        TailError::MaxOutsideBins { .. }
    ));
}

#[test]
fn exceedance_times_are_cut_at_a_higher_threshold_only() {
    let t = ExceedanceTimes {
        threshold_ns: 100,
        wakeups: vec![3, 7, 9, 12],
        latencies_ns: vec![150, 400, 120, 250],
    };
    let a = t.above(200).unwrap();
    assert_eq!(
        (a.threshold_ns, a.wakeups, a.latencies_ns),
        (200, vec![7, 12], vec![400, 250])
    );
    assert!(t.above(100).is_none(), "not lower than the table's own");
    assert!(t.above(50).is_none());
    let no_values = ExceedanceTimes {
        latencies_ns: vec![],
        ..t.clone()
    };
    assert!(
        no_values.above(200).is_none(),
        "no latencies: the table's threshold"
    );
}
