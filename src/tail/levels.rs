//! Return levels and deadline risks from a fitted tail: the latency
//! exceeded with probability `p` over an hour, a day or a year of
//! wake-ups at the loop's period, with a profile-likelihood 95 %
//! interval (the GPD reparametrised by the return level), and the
//! probability that at least one wake-up in an hour is later than a
//! deadline, with its upper bound (reparametrised by that probability).
//!
//! The exceedance rate `ζ = n_u / N` is taken as known (its binomial
//! error is small beside the shape's); the extremal index θ ≤ 1 turns
//! `N` wake-ups into `N·θ` independent ones.

use serde::Serialize;

use super::gpd::{self, Exceedances, GpdFit};
use super::optim;

/// A horizon of operation.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Horizon {
    Hour,
    Day,
    Year,
}

impl Horizon {
    pub const ALL: [Horizon; 3] = [Horizon::Hour, Horizon::Day, Horizon::Year];

    pub fn seconds(self) -> f64 {
        match self {
            Horizon::Hour => 3600.0,
            Horizon::Day => 86_400.0,
            Horizon::Year => 365.25 * 86_400.0,
        }
    }
}

/// A return level: exceeded with `probability` over the horizon. A bound
/// the data do not give is null (unknown), never a number.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ReturnLevel {
    pub horizon: Horizon,
    pub probability: f64,
    /// Wake-ups over the horizon (times θ when θ is known).
    pub wakeups: f64,
    pub level_ns: f64,
    pub lower95_ns: Option<f64>,
    pub upper95_ns: Option<f64>,
    /// How far past the run the level reaches: the horizon's wake-ups ÷
    /// the samples (histogram), or the horizon ÷ the windows' total
    /// length (windows).
    pub extrapolation: f64,
    /// `extrapolation` is within [`super::TailOptions::max_extrapolation`]:
    /// an estimate; otherwise computed, but beyond what the run supports.
    pub supported: bool,
}

impl ReturnLevel {
    /// Mark how far the level reaches and whether that is supported.
    pub fn reaching(mut self, extrapolation: f64, max: f64) -> ReturnLevel {
        self.extrapolation = extrapolation;
        self.supported = extrapolation.is_finite() && extrapolation <= max;
        self
    }
}

/// The fitted tail with what turns it into per-wake-up probabilities.
pub struct Tail<'a> {
    pub ex: &'a Exceedances,
    pub fit: &'a GpdFit,
    /// `ζ = n_u / N`.
    pub rate: f64,
    pub period_ns: f64,
    pub theta: f64,
    /// The samples the tail was fitted from, and the reach allowed.
    pub samples: u64,
    pub max_extrapolation: f64,
}

impl Tail<'_> {
    fn wakeups(&self, h: Horizon) -> f64 {
        h.seconds() * 1e9 / self.period_ns * self.theta
    }

    /// `ln r`, `r = q/ζ`: the GPD's survival at the level exceeded with
    /// `p` over `m` wake-ups; `None` when that level is below the
    /// threshold (the data hold it, no tail needed).
    fn ln_r(&self, p: f64, m: f64) -> Option<f64> {
        let q = -((-p).ln_1p() / m).exp_m1();
        let lr = (q / self.rate).ln();
        (lr < 0.0 && lr.is_finite()).then_some(lr)
    }

    /// The return level over `h` and its 95 % interval.
    pub fn return_level(&self, h: Horizon, p: f64) -> Option<ReturnLevel> {
        let m = self.wakeups(h);
        let lr = self.ln_r(p, m)?;
        let y_hat = gpd::quantile_offset(lr, self.fit.sigma_ns, self.fit.xi);
        let profile = |ln_y: f64| gpd::profile(self.ex, ln_y.exp(), lr);
        let nll_min = self.fit.nll.min(profile(y_hat.ln()));
        let cap = (y_hat * 1e4).ln();
        let up = optim::profile_limit(profile, nll_min, y_hat.ln(), 0.05, cap);
        let low = optim::profile_limit(profile, nll_min, y_hat.ln(), 0.05, (y_hat * 1e-4).ln());
        let u = self.ex.threshold_ns;
        let reach = h.seconds() * 1e9 / self.period_ns / self.samples as f64;
        let level = ReturnLevel {
            horizon: h,
            probability: p,
            wakeups: m,
            level_ns: u + y_hat,
            lower95_ns: low.map(|v| u + v.exp()),
            upper95_ns: up.map(|v| u + v.exp()),
            extrapolation: 0.0,
            supported: false,
        };
        Some(level.reaching(reach, self.max_extrapolation))
    }

    /// P(at least one of `m` wake-ups above the deadline) for a GPD
    /// survival `ln_r` at the deadline.
    fn p_any(&self, ln_r: f64, m: f64) -> f64 {
        let pi = self.rate * ln_r.exp();
        -(m * (-pi).ln_1p()).exp_m1()
    }

    /// The deadline risk over one hour, `None` when the deadline is at or
    /// below the threshold (see [`empirical_risk`]).
    pub fn deadline_risk(&self, deadline_ns: f64) -> Option<DeadlineRisk> {
        let y = deadline_ns - self.ex.threshold_ns;
        if y <= 0.0 {
            return None;
        }
        let m = self.wakeups(Horizon::Hour);
        let lr_hat = gpd::ln_sf(y, self.fit.sigma_ns, self.fit.xi).max(-700.0);
        let profile = |lr: f64| gpd::profile(self.ex, y, lr);
        let nll_min = self.fit.nll.min(profile(lr_hat));
        let up = optim::profile_limit(profile, nll_min, lr_hat, 0.5, -1e-9).unwrap_or(0.0);
        let reach = Horizon::Hour.seconds() * 1e9 / self.period_ns / self.samples as f64;
        Some(DeadlineRisk {
            deadline_ns,
            p_hour: self.p_any(lr_hat, m),
            p_hour_upper95: self.p_any(up, m),
            from: "tail".into(),
            extrapolation: reach,
            supported: reach <= self.max_extrapolation,
        })
    }
}

/// The probability of at least one wake-up beyond a deadline in an hour.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeadlineRisk {
    pub deadline_ns: f64,
    pub p_hour: f64,
    pub p_hour_upper95: f64,
    /// `tail` (the fitted GPD) or `histogram` (a deadline inside the
    /// data: counted, with the exact binomial bound).
    pub from: String,
    /// An hour's wake-ups ÷ the samples; a risk from the tail past
    /// [`super::TailOptions::max_extrapolation`] is not `supported` (a
    /// count from the histogram always is: it extrapolates no tail).
    pub extrapolation: f64,
    pub supported: bool,
}

/// A deadline at or below the threshold: the per-wake-up probability is
/// counted (`k` of `n`), its upper bound the Clopper-Pearson 95 % one.
pub fn empirical_risk(deadline_ns: f64, k: u64, n: u64, wakeups_hour: f64) -> DeadlineRisk {
    let extrapolation = wakeups_hour / n as f64;
    let pi = k as f64 / n as f64;
    let hi = clopper_pearson_upper(k, n);
    let any = |p: f64| -(wakeups_hour * (-p).ln_1p()).exp_m1();
    DeadlineRisk {
        deadline_ns,
        p_hour: any(pi),
        p_hour_upper95: any(hi),
        from: "histogram".into(),
        extrapolation,
        supported: true,
    }
}

/// The one-sided 97.5 % Clopper-Pearson bound (the upper end of the
/// two-sided 95 % interval); `3/n` is its value for `k = 0`, roughly.
fn clopper_pearson_upper(k: u64, n: u64) -> f64 {
    use statrs::distribution::{Beta, ContinuousCDF};
    if k >= n {
        return 1.0;
    }
    Beta::new(k as f64 + 1.0, (n - k) as f64).map_or(1.0, |b| b.inverse_cdf(0.975))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_empirical_risk_bounds_the_count() {
        let r = empirical_risk(50_000.0, 0, 3_600_000, 3_600_000.0);
        assert_eq!(r.p_hour, 0.0);
        assert!(r.p_hour_upper95 > 0.9 && r.p_hour_upper95 < 1.0);
        let b = clopper_pearson_upper(0, 1_000_000);
        assert!((b * 1e6 - 3.69).abs() < 0.05, "{b}");
    }
}
