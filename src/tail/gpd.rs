//! The generalized Pareto distribution fitted to a histogram's tail by
//! maximum likelihood, with the bins as intervals (interval-censored
//! likelihood): a bin `[lo, hi)` above the threshold `u` holding `count`
//! samples contributes `count · ln(S(lo−u) − S(hi−u))`, `S` the GPD's
//! survival function. Nothing here reads or writes anything.

use super::Bin;
use super::optim::{self, finite_or_inf};

/// The shape is kept in this range: below −0.5 the maximum-likelihood
/// estimator loses its usual properties (Smith 1985), above 1 the mean
/// is infinite, which no latency has.
pub const XI_MIN: f64 = -0.5;
pub const XI_MAX: f64 = 1.0;

/// ξ at (within 10⁻³ of) a bound of the range above: the optimum the
/// likelihood wanted lies outside, so the fit is not an estimate.
pub fn xi_at_bound(xi: f64) -> bool {
    xi <= XI_MIN + 1e-3 || xi >= XI_MAX - 1e-3
}

/// `|ξ|` below this is the exponential limit.
const XI_ZERO: f64 = 1e-7;

/// The exceedances of a histogram over a threshold, as offsets from it.
#[derive(Clone, Debug)]
pub struct Exceedances {
    pub threshold_ns: f64,
    /// `lo − u`, `hi − u` and the count of each bin above `u`.
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
    pub count: Vec<f64>,
    pub n: u64,
}

impl Exceedances {
    /// The bins whose lower bound is at or above `threshold_ns` (a bin
    /// edge, so no bin is cut).
    pub fn over(bins: &[Bin], threshold_ns: u64) -> Exceedances {
        let u = threshold_ns as f64;
        let mut ex = Exceedances {
            threshold_ns: u,
            lo: vec![],
            hi: vec![],
            count: vec![],
            n: 0,
        };
        for b in bins
            .iter()
            .filter(|b| b.lo_ns >= threshold_ns && b.count > 0)
        {
            ex.lo.push(b.lo_ns as f64 - u);
            ex.hi.push(b.hi_ns as f64 - u);
            ex.count.push(b.count as f64);
            ex.n += b.count;
        }
        ex
    }

    /// Mean offset of the bins' midpoints (a start for the scale).
    fn mean_excess(&self) -> f64 {
        let s: f64 = self
            .lo
            .iter()
            .zip(&self.hi)
            .zip(&self.count)
            .map(|((l, h), c)| 0.5 * (l + h) * c)
            .sum();
        s / self.n.max(1) as f64
    }
}

/// `ln S(y)` for the GPD of scale `sigma` and shape `xi`; `−inf` past
/// the upper end point (`ξ < 0`).
pub fn ln_sf(y: f64, sigma: f64, xi: f64) -> f64 {
    if y <= 0.0 {
        return 0.0;
    }
    if xi.abs() < XI_ZERO {
        return -y / sigma;
    }
    let t = xi * y / sigma;
    if t <= -1.0 {
        f64::NEG_INFINITY
    } else {
        -t.ln_1p() / xi
    }
}

/// `ln(S(a) − S(b))` for `a < b`, computed without cancellation (what
/// [`nll`] sums, with the edges two bins share computed once).
#[cfg(test)]
pub fn ln_interval(a: f64, b: f64, sigma: f64, xi: f64) -> f64 {
    let (la, lb) = (ln_sf(a, sigma, xi), ln_sf(b, sigma, xi));
    if la == f64::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    la + (-(lb - la).exp_m1()).ln()
}

/// Negative log-likelihood of `(σ, ξ)`; `+inf` outside the shape range
/// or when a bin lies past the end point.
pub fn nll(ex: &Exceedances, sigma: f64, xi: f64) -> f64 {
    if !(XI_MIN..=XI_MAX).contains(&xi) || !(sigma > 0.0) || !sigma.is_finite() {
        return f64::INFINITY;
    }
    // `ln_interval` of each bin, with `ln S` of an edge two bins share
    // (a bin's upper edge, the next one's lower) computed once: the same
    // figures for three quarters of the logarithms (this is the cost of
    // the threshold search).
    let mut s = 0.0;
    let mut shared = (f64::NAN, 0.0);
    for i in 0..ex.lo.len() {
        let la = if ex.lo[i] == shared.0 {
            shared.1
        } else {
            ln_sf(ex.lo[i], sigma, xi)
        };
        if la == f64::NEG_INFINITY {
            return f64::INFINITY;
        }
        let lb = ln_sf(ex.hi[i], sigma, xi);
        shared = (ex.hi[i], lb);
        s -= ex.count[i] * (la + (-(lb - la).exp_m1()).ln());
    }
    finite_or_inf(s)
}

/// A maximum-likelihood fit.
#[derive(Clone, Debug)]
pub struct GpdFit {
    pub sigma_ns: f64,
    pub xi: f64,
    pub nll: f64,
    /// Standard error of ξ from the observed information; NaN when the
    /// information matrix is not positive definite.
    pub xi_se: f64,
}

/// Fit on `(ln σ, ξ)` by Nelder-Mead from three starting shapes; `None`
/// when no exceedance or no finite likelihood.
pub fn fit(ex: &Exceedances) -> Option<GpdFit> {
    if ex.n == 0 {
        return None;
    }
    let f = |p: &[f64]| nll(ex, p[0].exp(), p[1]);
    let s0 = ex.mean_excess().max(1.0).ln();
    let mut best: Option<(Vec<f64>, f64)> = None;
    for xi0 in [0.1, -0.2] {
        if let Some(r) = optim::minimize(f, &[s0, xi0], &[0.3, 0.15]) {
            if best.as_ref().is_none_or(|b| r.1 < b.1) {
                best = Some(r);
            }
        }
    }
    let (p, v) = best?;
    let xi_se = shape_se(&f, &p);
    Some(GpdFit {
        sigma_ns: p[0].exp(),
        xi: p[1],
        nll: v,
        xi_se,
    })
}

/// Standard error of the second parameter from a finite-difference
/// Hessian of `f` at `p` (2 × 2, inverted).
fn shape_se(f: &impl Fn(&[f64]) -> f64, p: &[f64]) -> f64 {
    let h = [1e-4, 1e-4];
    let at = |d0: f64, d1: f64| f(&[p[0] + d0, p[1] + d1]);
    let f0 = at(0.0, 0.0);
    let a = (at(h[0], 0.0) - 2.0 * f0 + at(-h[0], 0.0)) / (h[0] * h[0]);
    let c = (at(0.0, h[1]) - 2.0 * f0 + at(0.0, -h[1])) / (h[1] * h[1]);
    let b = (at(h[0], h[1]) - at(h[0], -h[1]) - at(-h[0], h[1]) + at(-h[0], -h[1]))
        / (4.0 * h[0] * h[1]);
    let det = a * c - b * b;
    if !(a > 0.0 && det > 0.0 && det.is_finite()) {
        return f64::NAN;
    }
    (a / det).sqrt()
}

/// The scale that puts `S(y) = r` for shape `xi` (`0 < r < 1`, `y > 0`):
/// the reparametrisation of the GPD by a return level (y given r) or by
/// an exceedance probability (r given y).
pub fn scale_for(y: f64, ln_r: f64, xi: f64) -> f64 {
    if xi.abs() < XI_ZERO {
        return y / -ln_r;
    }
    y * xi / (-xi * ln_r).exp_m1()
}

/// The offset `y` above the threshold with `S(y) = r`.
pub fn quantile_offset(ln_r: f64, sigma: f64, xi: f64) -> f64 {
    if xi.abs() < XI_ZERO {
        return -sigma * ln_r;
    }
    sigma / xi * (-xi * ln_r).exp_m1()
}

/// The negative log-likelihood profiled over ξ with `S(y) = r` held.
pub fn profile(ex: &Exceedances, y: f64, ln_r: f64) -> f64 {
    optim::minimize_1d(|xi| nll(ex, scale_for(y, ln_r, xi), xi), XI_MIN, XI_MAX, 15)
        .map_or(f64::INFINITY, |r| r.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_gpd_survival_is_consistent() {
        for xi in [-0.3, 0.0, 0.2] {
            let y = quantile_offset((0.01f64).ln(), 2.0, xi);
            assert!((ln_sf(y, 2.0, xi) - (0.01f64).ln()).abs() < 1e-9, "xi {xi}");
            assert!((scale_for(y, (0.01f64).ln(), xi) - 2.0).abs() < 1e-9);
        }
        assert_eq!(ln_sf(10.0, 1.0, -0.5), f64::NEG_INFINITY);
        let p = ln_interval(1.0, 1.0 + 1e-9, 1.0, 0.0).exp();
        assert!((p / (1e-9 * (-1.0f64).exp()) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn tail_gpd_fit_refuses_nothing_to_fit() {
        let ex = Exceedances::over(
            &[Bin {
                lo_ns: 10,
                hi_ns: 11,
                count: 5,
            }],
            20,
        );
        assert!(fit(&ex).is_none());
    }
}
