//! The tail analysis on synthetic runs of a known tail. One test runs in
//! `cargo test`: the 95 % interval's coverage of the true hour level,
//! asserted over seeds enough to tell 95 % from 85 %. The others are the
//! bench (ignored; see bench/README.md, "tail-coverage"): the whole
//! analysis's coverage over many seeds, and how long the analysis of a
//! 24-hour monitor's histogram takes.

use super::*;

use crate::rng::Rng;

/// A body uniform on 2-20 µs and, with probability `ZETA`, a GPD tail
/// above 20 µs of scale 4 µs.
const U0: f64 = 20_000.0;
const ZETA: f64 = 0.01;
const SIGMA: f64 = 4_000.0;

fn draw(rng: &mut Rng, xi: f64) -> u64 {
    let tail = rng.open_unit() < ZETA;
    let u = rng.open_unit();
    let v = if !tail {
        2_000.0 + 18_000.0 * u
    } else {
        U0 + gpd::quantile_offset(u.ln(), SIGMA, xi)
    };
    v.round() as u64
}

fn true_hour_level(xi: f64, p: f64, period_ns: f64) -> f64 {
    let n = 3600e9 / period_ns;
    let q = -((-p).ln_1p() / n).exp_m1();
    U0 + gpd::quantile_offset((q / ZETA).ln(), SIGMA, xi)
}

fn sample(seed: u64, xi: f64, n: u64) -> Histogram {
    let mut rng = Rng::new(seed);
    let mut h = Histogram::latency();
    for _ in 0..n {
        h.record(draw(&mut rng, xi));
    }
    h
}

/// `cargo test --release --lib -- tail_coverage --ignored --nocapture`
#[test]
#[ignore]
fn tail_coverage() {
    let seeds: u64 = std::env::var("TAIL_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let n = 1_000_000;
    for xi in [-0.3, 0.0, 0.2] {
        let truth = true_hour_level(xi, 0.01, 1e6);
        let (mut est, mut upper_ok, mut both_ok, mut secs) = (0, 0, 0, 0.0);
        let mut refused: Vec<GateName> = vec![];
        for seed in 0..seeds {
            let input = TailInput::from_histogram(&sample(seed + 1000, xi, n), 1_000_000);
            let t = std::time::Instant::now();
            let e = analyze(&input, &TailOptions::default()).unwrap();
            secs += t.elapsed().as_secs_f64();
            match e.result {
                TailResult::Estimate { return_levels, .. } => {
                    est += 1;
                    let h = &return_levels[0];
                    // A missing bound is a miss: it holds nothing.
                    let up = h.upper95_ns.is_some_and(|u| truth <= u);
                    upper_ok += up as u32;
                    both_ok += (up && h.lower95_ns.is_some_and(|l| truth >= l)) as u32;
                }
                TailResult::Insufficient { gate, .. } => refused.push(gate),
            }
        }
        eprintln!(
            "xi {xi:+.1}: {seeds} seeds of {n} samples: {est} estimates, upper bound covers {upper_ok}/{est} ({:.1} %), interval covers {both_ok}/{est} ({:.1} %), refused {} {:?}; {:.3} s per analysis",
            100.0 * upper_ok as f64 / est.max(1) as f64,
            100.0 * both_ok as f64 / est.max(1) as f64,
            refused.len(),
            refused,
            secs / seeds as f64
        );
    }
}

/// A 24-hour monitor at 1 ms (86.4 M samples, windows of 5 min):
/// `cargo test --release --lib -- tail_day_timing --ignored --nocapture`
#[test]
#[ignore]
fn tail_day_timing() {
    let (n, per_window) = (86_400_000u64, 300_000u64);
    let mut rng = Rng::new(42);
    let mut h = Histogram::latency();
    let mut max_ns = vec![];
    let mut wmax = 0u64;
    for i in 0..n {
        let v = draw(&mut rng, 0.0);
        h.record(v);
        wmax = wmax.max(v);
        if (i + 1) % per_window == 0 {
            max_ns.push(wmax as f64);
            wmax = 0;
        }
    }
    let mut input = TailInput::from_histogram(&h, 1_000_000);
    input.windows = Some(WindowMaxima {
        length_s: 300.0,
        max_ns,
    });
    let t = std::time::Instant::now();
    let e = analyze(&input, &TailOptions::default()).unwrap();
    let dt = t.elapsed();
    let status = serde_json::to_value(&e.result).unwrap()["status"].clone();
    eprintln!(
        "24 h at 1 ms: {} bins, {} windows: analysis {dt:?}, result {status}",
        input.bins.len(),
        288
    );
    for g in &e.gates {
        eprintln!("  {:?} {:?} {:?}", g.name, g.status, g.figure);
    }
}

/// The end-to-end truth tests' heavy case (tests/it/truth.rs: 400 000
/// wake-ups, a body uniform on 5-25 µs, ζ 0.02, σ 10 µs, ξ +0.2) on the
/// histogram alone: where the hour level's interval misses, at
/// ForwardStop's threshold and at the first bin edge above the true one.
/// `cargo test --release --lib -- tail_coverage_heavy_case --ignored --nocapture`
#[test]
#[ignore]
fn tail_coverage_heavy_case() {
    let seeds: u64 = std::env::var("TAIL_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let (u, zeta, sigma, xi, n) = (25_000.0, 0.02, 10_000.0, 0.2, 400_000u64);
    let q = -((-0.01f64).ln_1p() / 3.6e6).exp_m1();
    let truth = u + gpd::quantile_offset((q / zeta).ln(), sigma, xi);
    let (mut est, mut above, mut below) = (0, 0, 0);
    let (mut fixed_above, mut fixed_below) = (0, 0);
    for seed in 1000..1000 + seeds {
        let mut rng = Rng::new(seed);
        let mut h = Histogram::latency();
        for _ in 0..n {
            let v = if rng.unit() < zeta {
                (u + gpd::quantile_offset(rng.open_unit().ln(), sigma, xi)) as u64 + 1
            } else {
                5_000 + (rng.unit() * (u - 5_000.0)) as u64
            };
            h.record(v);
        }
        let input = TailInput::from_histogram(&h, 1_000_000);
        let e = analyze(&input, &TailOptions::default()).unwrap();
        if let TailResult::Estimate { return_levels, .. } = &e.result {
            est += 1;
            let l = &return_levels[0];
            above += l.upper95_ns.is_none_or(|v| truth > v) as u32;
            below += l.lower95_ns.is_none_or(|v| truth < v) as u32;
        }
        // At the first bin edge above the true threshold.
        let edge = input
            .bins
            .iter()
            .find(|b| b.lo_ns as f64 > u)
            .unwrap()
            .lo_ns;
        let ex = gpd::Exceedances::over(&input.bins, edge);
        let fit = gpd::fit(&ex).unwrap();
        let t = levels::Tail {
            ex: &ex,
            fit: &fit,
            rate: ex.n as f64 / n as f64,
            period_ns: 1e6,
            theta: 1.0,
            samples: n,
            max_extrapolation: 100.0,
        };
        let l = t.return_level(Horizon::Hour, 0.01).unwrap();
        fixed_above += l.upper95_ns.is_none_or(|v| truth > v) as u32;
        fixed_below += l.lower95_ns.is_none_or(|v| truth < v) as u32;
    }
    eprintln!(
        "heavy case, {seeds} seeds, truth {truth:.0} ns: ForwardStop: {est} estimates, truth above the upper bound {above}, below the lower {below}; at {u} ns: truth above {fixed_above}, below {fixed_below}"
    );
}

/// A run of `n` wake-ups of the model above, drawn for the tail alone:
/// the wake-ups between two tail events are geometric (ζ per wake-up),
/// each tail event a GPD draw above 20 µs, and the body (below 20 µs,
/// which no fit above it reads) counted in one bin at 10 µs. The same
/// distribution above U0 as [`sample`], at a hundredth of the draws.
fn sample_tail(seed: u64, xi: f64, n: u64) -> Histogram {
    let mut rng = Rng::new(seed);
    let mut h = Histogram::latency();
    let (mut at, mut tail) = (0u64, 0u64);
    loop {
        at += (rng.open_unit().ln() / (-ZETA).ln_1p()).ceil().max(1.0) as u64;
        if at > n {
            break;
        }
        let u = rng.open_unit();
        h.record((U0 + gpd::quantile_offset(u.ln(), SIGMA, xi)).round() as u64);
        tail += 1;
    }
    h.record_n(10_000, n - tail);
    h
}

/// The interval's claim, asserted (docs/tail.md, "Coverage"): the 95 %
/// profile-likelihood interval of the hour level (p = 0.01, 1 ms period)
/// holds the true level about 95 % of the time. Seeds 0..[`COVERAGE_SEEDS`]
/// each draw a run of [`COVERAGE_SAMPLES`] wake-ups (1 000 s at 1 ms) from
/// the model above, ξ taking −0.3, 0 and +0.2 in turn, recorded into
/// rtscope's histogram; the GPD is fitted above the first bin edge over
/// the true threshold and the interval computed as `analyze` computes it.
/// A seed counts as covered only when the interval has both bounds and
/// the true level lies between them: a missing bound, a failed fit or a
/// miss on either side is a miss.
///
/// Why 181 seeds and 165 covered: were the true coverage 85 %, 165 or
/// more of 181 would happen with probability < 0.01 (the test tells 95 %
/// from 85 %); at a true coverage of 95 % it happens with a probability
/// above 0.99. Both binomial tails are computed here, not taken on trust.
/// The seeds are fixed, so the count is the same on every run: the test
/// cannot flicker, it fails only when the estimator changes.
///
/// What it leaves to others: the threshold ForwardStop chooses and the
/// gates (a full `analyze` costs about 1 s a seed in a debug build, 181
/// seeds too many for `cargo test`); `tests/it/truth.rs` bounds the whole
/// analysis end to end on 10 seeds, and `tail_coverage` above measures it
/// over 100 (bench/README.md, "tail-coverage").
#[test]
fn tail_interval_coverage_tells_95_from_85_percent() {
    use statrs::distribution::{Binomial, DiscreteCDF};
    let at_least = |p: f64| {
        1.0 - Binomial::new(p, COVERAGE_SEEDS)
            .unwrap()
            .cdf(COVERED_AT_LEAST - 1)
    };
    assert!(at_least(0.85) < 0.01, "{}", at_least(0.85));
    assert!(at_least(0.95) > 0.99, "{}", at_least(0.95));
    let (mut covered, mut above, mut below) = (0u64, 0u64, 0u64);
    let mut misses = vec![];
    for seed in 0..COVERAGE_SEEDS {
        let xi = [-0.3, 0.0, 0.2][(seed % 3) as usize];
        let truth = true_hour_level(xi, 0.01, 1e6);
        let input =
            TailInput::from_histogram(&sample_tail(seed + 5000, xi, COVERAGE_SAMPLES), 1_000_000);
        let edge = input
            .bins
            .iter()
            .find(|b| b.lo_ns as f64 > U0)
            .unwrap()
            .lo_ns;
        let ex = gpd::Exceedances::over(&input.bins, edge);
        let level = gpd::fit(&ex).and_then(|fit| {
            levels::Tail {
                ex: &ex,
                fit: &fit,
                rate: ex.n as f64 / COVERAGE_SAMPLES as f64,
                period_ns: 1e6,
                theta: 1.0,
                samples: COVERAGE_SAMPLES,
                max_extrapolation: 100.0,
            }
            .return_level(Horizon::Hour, 0.01)
        });
        match level.as_ref().map(|l| (l.lower95_ns, l.upper95_ns)) {
            Some((Some(lo), Some(hi))) if lo <= truth && truth <= hi => covered += 1,
            bounds => {
                above += bounds.is_none_or(|(_, hi)| hi.is_none_or(|hi| truth > hi)) as u64;
                below += bounds.is_some_and(|(lo, _)| lo.is_some_and(|lo| truth < lo)) as u64;
                misses.push(format!(
                    "seed {seed} ξ {xi:+.1} truth {truth:.0} ns: {bounds:?}"
                ));
            }
        }
    }
    eprintln!(
        "the hour level's 95 % interval held the truth in {covered} of {COVERAGE_SEEDS} seeds \
         ({:.1} %); truth above the upper bound (or no bound) {above}, below the lower {below}",
        100.0 * covered as f64 / COVERAGE_SEEDS as f64
    );
    assert!(
        covered >= COVERED_AT_LEAST,
        "{covered} of {COVERAGE_SEEDS} covered, fewer than {COVERED_AT_LEAST}:\n{}",
        misses.join("\n")
    );
}

const COVERAGE_SEEDS: u64 = 181;
const COVERED_AT_LEAST: u64 = 165;
const COVERAGE_SAMPLES: u64 = 1_000_000;
