//! Minimisers for the tail fits: Nelder-Mead (argmin) for the 2- and
//! 3-parameter likelihoods, a grid plus Brent (argmin) in one dimension,
//! and the search of a profile-likelihood confidence limit.
//!
//! Costs are negative log-likelihoods; a point outside the model's
//! support costs `+inf`, never NaN (argmin's Nelder-Mead would not order
//! a NaN), so every closure goes through [`finite_or_inf`].

use argmin::core::{CostFunction, Error, Executor, State};
use argmin::solver::brent::BrentOpt;
use argmin::solver::neldermead::NelderMead;

/// Half the 95 % point of the chi-square distribution with 1 degree of
/// freedom: a profile-likelihood 95 % interval is where the negative
/// log-likelihood stays within this of its minimum.
pub const HALF_CHI2_95: f64 = 3.841_458_820_694_124 / 2.0;

/// NaN becomes `+inf` (a point the model does not allow).
pub fn finite_or_inf(v: f64) -> f64 {
    if v.is_nan() { f64::INFINITY } else { v }
}

struct Multi<F: Fn(&[f64]) -> f64>(F);

impl<F: Fn(&[f64]) -> f64> CostFunction for Multi<F> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Vec<f64>) -> Result<f64, Error> {
        Ok(finite_or_inf((self.0)(p)))
    }
}

struct Single<F: Fn(f64) -> f64>(F);

impl<F: Fn(f64) -> f64> CostFunction for Single<F> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, p: &f64) -> Result<f64, Error> {
        Ok(finite_or_inf((self.0)(*p)))
    }
}

/// Nelder-Mead stops when the spread of its simplex's costs falls below
/// this: 1e-10, or the rounding of a cost of the size of `f0` (64 ulps)
/// when that is larger. A likelihood summed over many points (a day of
/// window maxima gives costs near 10⁶) cannot be resolved to 1e-10, and
/// a fixed 1e-10 made such runs go on to their iteration cap.
fn sd_tolerance(f0: f64) -> f64 {
    let rounding = 64.0 * f64::EPSILON * f0.abs();
    if rounding.is_finite() {
        rounding.max(1e-10)
    } else {
        1e-10
    }
}

/// One Nelder-Mead run from `start` with initial steps `step`.
fn nelder_mead_once(
    f: &impl Fn(&[f64]) -> f64,
    start: &[f64],
    step: &[f64],
) -> Option<(Vec<f64>, f64)> {
    let mut simplex = vec![start.to_vec()];
    for (i, s) in step.iter().enumerate() {
        let mut v = start.to_vec();
        v[i] += s;
        simplex.push(v);
    }
    let solver = NelderMead::new(simplex)
        .with_sd_tolerance(sd_tolerance(f(start)))
        .ok()?;
    let res = Executor::new(Multi(f), solver)
        .configure(|s| s.max_iters(600))
        .run()
        .ok()?;
    let best = res.state().get_best_param()?.clone();
    let cost = res.state().get_best_cost();
    cost.is_finite().then_some((best, cost))
}

/// Minimise `f` from `start` (Nelder-Mead, restarted once from its own
/// result with smaller steps: one run can stall on a ridge). `None` when
/// no finite cost was found.
pub fn minimize(f: impl Fn(&[f64]) -> f64, start: &[f64], step: &[f64]) -> Option<(Vec<f64>, f64)> {
    let best = nelder_mead_once(&f, start, step)?;
    let small: Vec<f64> = step.iter().map(|v| v * 0.1).collect();
    match nelder_mead_once(&f, &best.0, &small) {
        Some(next) if next.1 <= best.1 => Some(next),
        _ => Some(best),
    }
}

/// Minimise `f` on `[lo, hi]`: the best of `grid` evenly spaced points,
/// then Brent between its neighbours. `None` when every point is `+inf`.
pub fn minimize_1d(f: impl Fn(f64) -> f64, lo: f64, hi: f64, grid: usize) -> Option<(f64, f64)> {
    let h = (hi - lo) / grid as f64;
    let (mut bx, mut bf) = (lo, f64::INFINITY);
    for i in 0..=grid {
        let x = lo + h * i as f64;
        let v = finite_or_inf(f(x));
        if v < bf {
            (bx, bf) = (x, v);
        }
    }
    if !bf.is_finite() {
        return None;
    }
    let (a, b) = ((bx - h).max(lo), (bx + h).min(hi));
    let solver = BrentOpt::new(a, b).set_tolerance(1e-6, 1e-7);
    let refined = Executor::new(Single(&f), solver)
        .configure(|s| s.max_iters(200))
        .run()
        .ok()
        .and_then(|r| Some((*r.state().get_best_param()?, r.state().get_best_cost())));
    match refined {
        Some((x, v)) if v <= bf => Some((x, v)),
        _ => Some((bx, bf)),
    }
}

/// The limit of a profile-likelihood interval on one side of `z_hat`:
/// the point `z` between `z_hat` and `z_cap` where
/// `profile(z) - nll_min` reaches [`HALF_CHI2_95`], found by stepping out
/// (`step`, doubling) and bisecting. `None` when the profile stays within
/// the cut up to `z_cap`: the data do not bound that side.
pub fn profile_limit(
    profile: impl Fn(f64) -> f64,
    nll_min: f64,
    z_hat: f64,
    step: f64,
    z_cap: f64,
) -> Option<f64> {
    let above = |z: f64| finite_or_inf(profile(z)) - nll_min > HALF_CHI2_95;
    let dir = (z_cap - z_hat).signum();
    let (mut inside, mut s) = (z_hat, step.abs() * dir);
    let outside = loop {
        let z = inside + s;
        if (z - z_cap) * dir >= 0.0 {
            if above(z_cap) {
                break z_cap;
            }
            return None;
        }
        if above(z) {
            break z;
        }
        inside = z;
        s *= 2.0;
    };
    Some(bisect(above, inside, outside))
}

/// The boundary between `inside` (test false) and `outside` (true).
fn bisect(above: impl Fn(f64) -> bool, mut inside: f64, mut outside: f64) -> f64 {
    for _ in 0..60 {
        let mid = 0.5 * (inside + outside);
        if above(mid) {
            outside = mid;
        } else {
            inside = mid;
        }
        if (outside - inside).abs() <= 1e-5 * inside.abs().max(1.0) {
            break;
        }
    }
    0.5 * (inside + outside)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_minimizers_find_known_minima() {
        let (p, c) = minimize(
            |v| (v[0] - 3.0).powi(2) + (v[1] + 1.0).powi(2) + 2.0,
            &[0.0, 0.0],
            &[1.0, 1.0],
        )
        .unwrap();
        assert!((p[0] - 3.0).abs() < 1e-5 && (p[1] + 1.0).abs() < 1e-5 && (c - 2.0).abs() < 1e-9);
        let (x, _) = minimize_1d(|x| (x - 0.37).powi(2), -0.5, 1.0, 30).unwrap();
        assert!((x - 0.37).abs() < 1e-6);
        assert!(minimize_1d(|_| f64::NAN, 0.0, 1.0, 10).is_none());
        // a parabola of curvature 1: the 95 % limit is sqrt(3.84)
        let up = profile_limit(|z| 0.5 * z * z, 0.0, 0.0, 0.1, 100.0).unwrap();
        assert!((up - 3.841_458_820_694_124f64.sqrt()).abs() < 1e-4);
        assert!(profile_limit(|_| 0.0, 0.0, 0.0, 0.1, 100.0).is_none());
    }
}
