//! The generalized extreme value distribution fitted by maximum
//! likelihood to the maxima of a run's windows (block maxima), and its
//! return levels with profile-likelihood intervals: a second estimate
//! beside the histogram's peaks over threshold.
//!
//! Cost: every likelihood is a sum over the maxima, and a fit with its
//! three intervals evaluates it some ten thousand times. A day of 1 s
//! windows (86 400 maxima) would take minutes, so the maxima are first
//! sorted and merged into weighted points ([`Maxima`]): equal values
//! always, and values that lie within [`MERGE`] of each other on a scale
//! that is the maxima's spread near their median and their distance from
//! it further out (a grid even in `asinh((x − median) / s)`). A merged
//! point sits at its members' mean with their count as weight, so the
//! first-order error cancels and what is left is below `MERGE² / 12` of
//! the likelihood's curvature: far inside the estimates' own standard
//! errors. The smallest and largest maxima are never merged, so the
//! fitted support (a bounded tail's endpoint) is the data's own. The grid bounds the points to about `2 asinh(range / s) /
//! MERGE` (a few hundred for a day of windows) whatever the run's length,
//! which makes the fit linear (the sort n log n) in the windows.

use serde::Serialize;

use super::optim;

const XI_ZERO: f64 = 1e-7;
/// Shapes outside this range are not fitted (as for the GPD).
const XI_MIN: f64 = -0.5;
const XI_MAX: f64 = 1.0;

/// A fit on window maxima.
#[derive(Clone, Debug, Serialize)]
pub struct GevFit {
    pub location_ns: f64,
    pub scale_ns: f64,
    pub xi: f64,
    pub windows: usize,
    /// ξ sits at the optimiser's bound (−0.5 or 1): the likelihood wanted
    /// to go further, so the fit is no estimate and gives no level.
    pub at_bound: bool,
    #[serde(skip)]
    pub nll: f64,
}

/// How close to a bound of ξ a fit counts as sitting on it.
pub const AT_BOUND: f64 = 1e-3;

/// ξ at (within [`AT_BOUND`] of) the range the fits allow.
pub fn xi_at_bound(xi: f64) -> bool {
    xi <= XI_MIN + AT_BOUND || xi >= XI_MAX - AT_BOUND
}

/// Merging width on the `asinh((x − median) / s)` grid (see the top).
const MERGE: f64 = 0.02;

/// Window maxima as the likelihood reads them: sorted weighted points.
pub struct Maxima {
    /// `(value, count)`, ascending.
    points: Vec<(f64, f64)>,
    count: f64,
}

impl Maxima {
    /// Merge `x` (finite values) on the grid described at the top; `s` is
    /// the Gumbel scale of the interquartile range (at least 1 ns).
    pub fn of(x: &[f64]) -> Maxima {
        let mut v = x.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let mut points: Vec<(f64, f64)> = Vec::new();
        if n == 0 {
            return Maxima { points, count: 0.0 };
        }
        let median = v[n / 2];
        // For a Gumbel, Q(3/4) − Q(1/4) = 1.5725 σ.
        let s = ((v[3 * n / 4] - v[n / 4]) / 1.5725).max(1.0);
        let key = |x: f64| (((x - median) / s).asinh() / MERGE).floor();
        // The smallest and the largest value stay points of their own:
        // they alone decide where (μ, σ, ξ) is allowed (1 + ξz > 0 for
        // every value), so the support is the data's, never a mean's.
        points.push((v[0], 1.0));
        if n > 2 {
            let inner = &v[1..n - 1];
            let (mut k0, mut sum, mut w) = (key(inner[0]), 0.0, 0.0);
            for &x in inner {
                let k = key(x);
                if k != k0 {
                    points.push((sum / w, w));
                    (k0, sum, w) = (k, 0.0, 0.0);
                }
                sum += x;
                w += 1.0;
            }
            points.push((sum / w, w));
        }
        if n > 1 {
            points.push((v[n - 1], 1.0));
        }
        Maxima {
            points,
            count: n as f64,
        }
    }

    /// Every value its own point (what the merging is checked against).
    #[cfg(test)]
    pub fn exact(x: &[f64]) -> Maxima {
        Maxima {
            points: x.iter().map(|&v| (v, 1.0)).collect(),
            count: x.len() as f64,
        }
    }

    /// The number of weighted points.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.points.len()
    }
}

/// Negative log-likelihood of `(μ, σ, ξ)` for the maxima `x`.
pub fn nll(x: &Maxima, mu: f64, sigma: f64, xi: f64) -> f64 {
    if !(sigma > 0.0) || !(XI_MIN..=XI_MAX).contains(&xi) {
        return f64::INFINITY;
    }
    let mut s = x.count * sigma.ln();
    for &(v, w) in &x.points {
        let z = (v - mu) / sigma;
        if xi.abs() < XI_ZERO {
            s += w * (z + (-z).exp());
            continue;
        }
        let t = 1.0 + xi * z;
        if t <= 0.0 {
            return f64::INFINITY;
        }
        let lt = t.ln();
        s += w * ((1.0 + 1.0 / xi) * lt + (-lt / xi).exp());
    }
    optim::finite_or_inf(s)
}

/// Fit by Nelder-Mead on `(μ, ln σ, ξ)` from the moments' Gumbel start.
/// `None` with fewer than 10 maxima or no finite likelihood.
pub fn fit(x: &[f64]) -> Option<GevFit> {
    if x.len() < 10 || x.iter().any(|v| !v.is_finite()) {
        return None;
    }
    fit_on(x, &Maxima::of(x))
}

/// [`fit`] of the likelihood of `m`, from the start of the values `x`.
pub fn fit_on(x: &[f64], m: &Maxima) -> Option<GevFit> {
    if x.len() < 10 || x.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n)
        .sqrt()
        .max(1.0);
    let s0 = sd * 6f64.sqrt() / std::f64::consts::PI;
    let f = |p: &[f64]| nll(m, p[0], p[1].exp(), p[2]);
    let mut best: Option<(Vec<f64>, f64)> = None;
    for xi0 in [0.1, -0.2] {
        let start = [mean - 0.5772 * s0, s0.ln(), xi0];
        if let Some(r) = optim::minimize(f, &start, &[0.5 * s0, 0.3, 0.15]) {
            if best.as_ref().is_none_or(|b| r.1 < b.1) {
                best = Some(r);
            }
        }
    }
    let (p, v) = best?;
    Some(GevFit {
        location_ns: p[0],
        scale_ns: p[1].exp(),
        xi: p[2],
        windows: x.len(),
        at_bound: xi_at_bound(p[2]),
        nll: v,
    })
}

/// `(y^(−ξ) − 1)/ξ` with `y = −ln G` at the return level: the level is
/// `μ + σ · a`.
fn level_factor(ln_y: f64, xi: f64) -> f64 {
    if xi.abs() < XI_ZERO {
        -ln_y
    } else {
        (-xi * ln_y).exp_m1() / xi
    }
}

/// `ln(−ln G)` for the level exceeded with probability `p` over `m`
/// windows (`G^m = 1 − p`).
pub fn ln_y_for(p: f64, m: f64) -> f64 {
    (-(-p).ln_1p() / m).ln()
}

/// The return level of `fit` for `ln_y`.
pub fn level(fit: &GevFit, ln_y: f64) -> f64 {
    fit.location_ns + fit.scale_ns * level_factor(ln_y, fit.xi)
}

/// The profile-likelihood 95 % interval of the return level for `ln_y`:
/// the location is replaced by the level, `(ln σ, ξ)` profiled out. Each
/// side's search starts the inner fit from the last one it made (the
/// level moves by small steps, so its optimum does too), else from the
/// fit's own `(ln σ, ξ)`.
pub fn level_interval(x: &[f64], fit: &GevFit, ln_y: f64) -> (Option<f64>, Option<f64>) {
    let m = Maxima::of(x);
    let start = [fit.scale_ns.ln(), fit.xi];
    let profile_from = |last: &std::cell::RefCell<Vec<f64>>, z: f64| {
        let f = |p: &[f64]| {
            let sigma = p[0].exp();
            nll(&m, z - sigma * level_factor(ln_y, p[1]), sigma, p[1])
        };
        let warm = optim::minimize(f, &last.borrow(), &[0.1, 0.05]);
        let r = warm.or_else(|| optim::minimize(f, &start, &[0.1, 0.05]));
        r.map_or(f64::INFINITY, |(p, v)| {
            *last.borrow_mut() = p;
            v
        })
    };
    let side = || {
        let last = std::cell::RefCell::new(start.to_vec());
        move |z: f64| profile_from(&last, z)
    };
    let z_hat = level(fit, ln_y);
    let nll_min = fit.nll.min(side()(z_hat));
    let step = 0.1 * fit.scale_ns;
    let hi = optim::profile_limit(side(), nll_min, z_hat, step, z_hat + 1e4 * fit.scale_ns);
    let lo = optim::profile_limit(side(), nll_min, z_hat, step, z_hat - 1e4 * fit.scale_ns);
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_gev_fits_gumbel_quantiles() {
        // maxima placed at the Gumbel(100, 10) quantiles
        let n = 400;
        let x: Vec<f64> = (0..n)
            .map(|i| 100.0 - 10.0 * (-((i as f64 + 0.5) / n as f64).ln()).ln())
            .collect();
        let f = fit(&x).unwrap();
        assert!((f.location_ns - 100.0).abs() < 1.0, "{f:?}");
        assert!(
            (f.scale_ns - 10.0).abs() < 1.0 && f.xi.abs() < 0.05,
            "{f:?}"
        );
        let ly = ln_y_for(0.01, 1.0);
        let (lo, hi) = level_interval(&x, &f, ly);
        let z = level(&f, ly);
        assert!(lo.unwrap() < z && z < hi.unwrap());
        assert!(fit(&x[..5]).is_none());
        // merging the maxima moves nothing that matters: the same data
        // unmerged give the same likelihood and optimum within 1e-5
        let m = Maxima::of(&x);
        assert!(m.len() < x.len());
        assert_eq!(m.points[0], (x[0], 1.0));
        assert_eq!(m.points[m.len() - 1], (x[n - 1], 1.0));
        assert_eq!(m.points.iter().map(|p| p.1).sum::<f64>(), n as f64);
        let exact = Maxima::exact(&x);
        for (mu, s, xi) in [(100.0, 10.0, 0.0), (99.0, 11.0, 0.05), (101.0, 9.0, -0.02)] {
            let (a, b) = (nll(&m, mu, s, xi), nll(&exact, mu, s, xi));
            assert!((a - b).abs() < 1e-4 * b.abs(), "{a} vs {b}");
        }
        assert!(fit(&[f64::NAN; 20]).is_none());
    }
}
