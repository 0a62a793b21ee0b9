//! Goodness of fit of a GPD to a histogram's exceedances: the
//! Anderson-Darling statistic, its p-value from the table of
//! `ad_table.rs`, and the ForwardStop rule (Bader, Yan & Zhang 2018)
//! over a sequence of thresholds.
//!
//! Binned data have no exact values, so the probability integral
//! transform of a bin is spread evenly: a bin `[lo, hi)` holding `c`
//! samples gives the `c` points `F(lo) + (j − ½)/c · (F(hi) − F(lo))`,
//! `j = 1..c` (the mid-p idea taken to every sample of the bin). Under
//! the model the transform of a sample, given its bin, is uniform on
//! `[F(lo), F(hi))`, so this is exact when bins are narrow and slightly
//! conservative (a smaller statistic) when they are wide.

use super::ad_table::{LEVELS, ROWS, XI_FIRST, XI_STEP};
use super::gpd::{Exceedances, ln_sf};

/// The Anderson-Darling statistic A² of the fitted GPD `(σ, ξ)`.
pub fn statistic(ex: &Exceedances, sigma: f64, xi: f64) -> f64 {
    let n = ex.n as f64;
    if ex.n == 0 {
        return f64::NAN;
    }
    // Points ascending; the sum pairs point i with point n+1−i, so walk
    // the bins from both ends at once.
    let pts = PitPoints::new(ex, sigma, xi);
    let mut s = 0.0;
    let (mut fwd, mut back) = (pts.iter(), pts.iter_rev());
    for i in 1..=ex.n {
        let (zi, zr) = (fwd.next().unwrap_or(0.5), back.next().unwrap_or(0.5));
        s += (2.0 * i as f64 - 1.0) * (clamp01(zi).ln() + (1.0 - clamp01(zr)).ln());
    }
    -n - s / n
}

fn clamp01(z: f64) -> f64 {
    z.clamp(1e-12, 1.0 - 1e-12)
}

/// The transformed points of every bin, as `(F(lo), F(hi), count)`.
struct PitPoints {
    bins: Vec<(f64, f64, u64)>,
}

impl PitPoints {
    fn new(ex: &Exceedances, sigma: f64, xi: f64) -> PitPoints {
        let cdf = |y: f64| -ln_sf(y, sigma, xi).exp_m1();
        let bins = (0..ex.lo.len())
            .map(|i| (cdf(ex.lo[i]), cdf(ex.hi[i]), ex.count[i] as u64))
            .collect();
        PitPoints { bins }
    }

    fn iter(&self) -> impl Iterator<Item = f64> + '_ {
        self.bins
            .iter()
            .flat_map(|&(a, b, c)| (0..c).map(move |j| a + (j as f64 + 0.5) / c as f64 * (b - a)))
    }

    fn iter_rev(&self) -> impl Iterator<Item = f64> + '_ {
        self.bins.iter().rev().flat_map(|&(a, b, c)| {
            (0..c)
                .rev()
                .map(move |j| a + (j as f64 + 0.5) / c as f64 * (b - a))
        })
    }
}

/// The p-value of A² for a fit of shape `xi`: the table's percentage
/// points interpolated linearly in ξ (clamped to the table's range), then
/// log-linearly in the upper-tail probability between points; past the
/// last point, ln p is extrapolated along the last two points; below the
/// first, p goes linearly to 1 at A² = 0.
pub fn p_value(a2: f64, xi: f64) -> f64 {
    if !a2.is_finite() {
        return 0.0;
    }
    let q = points_at(xi);
    let upper: Vec<f64> = LEVELS.iter().map(|l| 1.0 - l).collect();
    let k = q.len() - 1;
    if a2 <= q[0] {
        return 1.0 - (1.0 - upper[0]) * (a2.max(0.0) / q[0]);
    }
    let seg = (0..k).find(|&i| a2 <= q[i + 1]).unwrap_or(k - 1);
    let t = (a2 - q[seg]) / (q[seg + 1] - q[seg]);
    let lp = upper[seg].ln() + t * (upper[seg + 1].ln() - upper[seg].ln());
    lp.exp().clamp(0.0, 1.0)
}

/// The table's row for `xi`, interpolated between the two nearest rows.
fn points_at(xi: f64) -> Vec<f64> {
    let pos = ((xi - XI_FIRST) / XI_STEP).clamp(0.0, (ROWS.len() - 1) as f64);
    let i = (pos.floor() as usize).min(ROWS.len() - 2);
    let t = pos - i as f64;
    (0..LEVELS.len())
        .map(|j| ROWS[i][j] * (1.0 - t) + ROWS[i + 1][j] * t)
        .collect()
}

/// ForwardStop: the number of rejected hypotheses among p-values
/// ordered from the lowest threshold up, `max{k : (1/k) Σ_{i≤k}
/// −ln(1 − p_i) ≤ α}` (0 when none). The threshold chosen is the first
/// one not rejected (index `k`); `k = len` means every one was rejected.
pub fn forward_stop(p_values: &[f64], alpha: f64) -> usize {
    let mut sum = 0.0;
    let mut k_hat = 0;
    for (i, p) in p_values.iter().enumerate() {
        sum += -(-p.clamp(0.0, 1.0)).ln_1p();
        if sum / (i + 1) as f64 <= alpha {
            k_hat = i + 1;
        }
    }
    k_hat
}

/// ForwardStop's statistic over all the p-values, `(1/n) Σ −ln(1 − p_i)`:
/// at or below α, every candidate is rejected (NaN when there is none).
pub fn forward_stop_statistic(p_values: &[f64]) -> f64 {
    let sum: f64 = p_values.iter().map(|p| -(-p.clamp(0.0, 1.0)).ln_1p()).sum();
    sum / p_values.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_ad_p_value_follows_the_table() {
        let row = points_at(0.0);
        for (j, l) in LEVELS.iter().enumerate() {
            assert!((p_value(row[j], 0.0) - (1.0 - l)).abs() < 1e-9);
        }
        assert!(p_value(0.0, 0.0) > 0.99);
        assert!(p_value(10.0, 0.0) < 1e-4);
        assert!(p_value(f64::NAN, 0.0) == 0.0);
        let mid = p_value(0.5 * (row[6] + row[7]), 0.0);
        assert!(mid < 0.10 && mid > 0.05);
    }

    #[test]
    fn tail_forward_stop_counts_leading_rejections() {
        assert_eq!(forward_stop(&[0.001, 0.002, 0.5, 0.6, 0.4], 0.1), 2);
        assert_eq!(forward_stop(&[0.6, 0.7], 0.1), 0);
        assert_eq!(forward_stop(&[0.0, 0.001, 0.0], 0.1), 3);
        assert_eq!(forward_stop(&[], 0.1), 0);
    }

    #[test]
    fn tail_ad_statistic_is_small_for_a_perfect_sample() {
        // bins placed at the GPD's own quantiles, one sample each
        let (sigma, xi) = (3.0, 0.1);
        let n = 400;
        let mut ex = Exceedances {
            threshold_ns: 0.0,
            lo: vec![],
            hi: vec![],
            count: vec![],
            n,
        };
        for j in 0..n {
            let lr = |k: f64| (1.0 - k / n as f64).max(1e-300).ln();
            ex.lo
                .push(super::super::gpd::quantile_offset(lr(j as f64), sigma, xi));
            ex.hi.push(super::super::gpd::quantile_offset(
                lr(j as f64 + 1.0).max(-700.0),
                sigma,
                xi,
            ));
            ex.count.push(1.0);
        }
        let a2 = statistic(&ex, sigma, xi);
        assert!(a2 < 0.05, "{a2}");
        assert!(statistic(&ex, sigma * 3.0, xi) > 5.0);
    }
}
