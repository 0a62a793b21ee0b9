//! The generalized extreme value distribution fitted by maximum
//! likelihood to the maxima of a run's windows (block maxima), and its
//! return levels with profile-likelihood intervals: a second estimate
//! beside the histogram's peaks over threshold.

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
    #[serde(skip)]
    pub nll: f64,
}

/// Negative log-likelihood of `(μ, σ, ξ)` for the maxima `x`.
pub fn nll(x: &[f64], mu: f64, sigma: f64, xi: f64) -> f64 {
    if !(sigma > 0.0) || !(XI_MIN..=XI_MAX).contains(&xi) {
        return f64::INFINITY;
    }
    let mut s = x.len() as f64 * sigma.ln();
    for &v in x {
        let z = (v - mu) / sigma;
        if xi.abs() < XI_ZERO {
            s += z + (-z).exp();
            continue;
        }
        let t = 1.0 + xi * z;
        if t <= 0.0 {
            return f64::INFINITY;
        }
        let lt = t.ln();
        s += (1.0 + 1.0 / xi) * lt + (-lt / xi).exp();
    }
    optim::finite_or_inf(s)
}

/// Fit by Nelder-Mead on `(μ, ln σ, ξ)` from the moments' Gumbel start.
/// `None` with fewer than 10 maxima or no finite likelihood.
pub fn fit(x: &[f64]) -> Option<GevFit> {
    if x.len() < 10 || x.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n)
        .sqrt()
        .max(1.0);
    let s0 = sd * 6f64.sqrt() / std::f64::consts::PI;
    let f = |p: &[f64]| nll(x, p[0], p[1].exp(), p[2]);
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
/// the location is replaced by the level, `(ln σ, ξ)` profiled out.
pub fn level_interval(x: &[f64], fit: &GevFit, ln_y: f64) -> (Option<f64>, Option<f64>) {
    let start = [fit.scale_ns.ln(), fit.xi];
    let profile = |z: f64| {
        let f = |p: &[f64]| {
            let sigma = p[0].exp();
            nll(x, z - sigma * level_factor(ln_y, p[1]), sigma, p[1])
        };
        optim::minimize(f, &start, &[0.1, 0.05]).map_or(f64::INFINITY, |r| r.1)
    };
    let z_hat = level(fit, ln_y);
    let nll_min = fit.nll.min(profile(z_hat));
    let step = 0.1 * fit.scale_ns;
    let hi = optim::profile_limit(&profile, nll_min, z_hat, step, z_hat + 1e4 * fit.scale_ns);
    let lo = optim::profile_limit(&profile, nll_min, z_hat, step, z_hat - 1e4 * fit.scale_ns);
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
        assert!(fit(&[f64::NAN; 20]).is_none());
    }
}
