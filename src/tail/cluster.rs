//! Clustering and trend of extremes: the extremal index by Ferro &
//! Segers' (2003) intervals estimator, and the Mann-Kendall trend test
//! on a series of window maxima.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

/// What is known of the clustering of extremes.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ExtremalIndex {
    /// Only a histogram: the order of the samples is lost.
    Unknown { assumption: String },
    Estimated {
        theta: f64,
        /// `windows` (extreme windows among the window maxima) or
        /// `exceedance_times` (wake-ups over a threshold).
        from: String,
        exceedances: usize,
        /// What θ is used for in the estimate.
        #[serde(rename = "use")]
        use_: String,
    },
}

/// Ferro & Segers' intervals estimator from the positions (ascending)
/// of the exceedances of a threshold; `None` with fewer than 2.
pub fn intervals_estimator(positions: &[u64]) -> Option<f64> {
    if positions.len() < 3 || positions.windows(2).any(|w| w[1] <= w[0]) {
        return None;
    }
    let t: Vec<f64> = positions.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    let n1 = t.len() as f64;
    let max = t.iter().cloned().fold(0.0, f64::max);
    let theta = if max <= 2.0 {
        let s: f64 = t.iter().sum();
        let s2: f64 = t.iter().map(|v| v * v).sum();
        2.0 * s * s / (n1 * s2)
    } else {
        let s: f64 = t.iter().map(|v| v - 1.0).sum();
        let s2: f64 = t.iter().map(|v| (v - 1.0) * (v - 2.0)).sum();
        2.0 * s * s / (n1 * s2)
    };
    theta.is_finite().then_some(theta.min(1.0))
}

/// θ of the window series: the windows whose maximum is above the 90th
/// percentile of the maxima, by their index.
pub fn windows_theta(max_ns: &[f64]) -> Option<(f64, usize)> {
    if max_ns.len() < 20 || max_ns.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut sorted = max_ns.to_vec();
    sorted.sort_by(f64::total_cmp);
    let u = sorted[(0.9 * sorted.len() as f64) as usize - 1];
    let pos: Vec<u64> = (0..max_ns.len())
        .filter(|&i| max_ns[i] > u)
        .map(|i| i as u64)
        .collect();
    intervals_estimator(&pos).map(|t| (t, pos.len()))
}

/// The Mann-Kendall test of a monotonic trend: the two-sided p-value
/// (normal approximation with the ties correction) and Kendall's S.
/// `None` with fewer than 8 values.
pub fn mann_kendall(x: &[f64]) -> Option<(f64, f64)> {
    let n = x.len();
    if n < 8 || x.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut s = 0i64;
    for i in 0..n {
        for j in i + 1..n {
            s += (x[j] - x[i]).partial_cmp(&0.0).map_or(0, |o| o as i64);
        }
    }
    let nf = n as f64;
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - ties_term(x)) / 18.0;
    if !(var > 0.0) {
        return Some((1.0, s as f64));
    }
    let z = (s - s.signum()) as f64 / var.sqrt();
    let normal = Normal::new(0.0, 1.0).ok()?;
    Some((
        (2.0 * (1.0 - normal.cdf(z.abs()))).clamp(0.0, 1.0),
        s as f64,
    ))
}

/// Σ t(t−1)(2t+5) over the groups of tied values.
fn ties_term(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let mut sum = 0.0;
    let mut i = 0;
    while i < v.len() {
        let j = (i..v.len()).find(|&j| v[j] != v[i]).unwrap_or(v.len());
        let t = (j - i) as f64;
        sum += t * (t - 1.0) * (2.0 * t + 5.0);
        i = j;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_intervals_estimator_sees_clusters() {
        // geometric gaps (mean 100) from a fixed-seed generator
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut gap = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            (1.0 - 100.0 * u.ln()).floor() as u64
        };
        let mut t = 0;
        let isolated: Vec<u64> = (0..2000)
            .map(|_| {
                t += gap();
                t
            })
            .collect();
        let th = intervals_estimator(&isolated).unwrap();
        assert!(th > 0.9, "{th}");
        // pairs: every exceedance comes with its neighbour, theta = 1/2
        t = 0;
        let pairs: Vec<u64> = (0..2000)
            .flat_map(|_| {
                t += gap() + 1;
                [t - 1, t]
            })
            .collect();
        let tp = intervals_estimator(&pairs).unwrap();
        assert!(tp > 0.4 && tp < 0.6, "{tp}");
        assert!(intervals_estimator(&[1, 2]).is_none());
    }

    #[test]
    fn tail_mann_kendall_finds_a_trend() {
        let up: Vec<f64> = (0..100)
            .map(|i| i as f64 + ((i * 7919) % 13) as f64 * 5.0)
            .collect();
        assert!(mann_kendall(&up).unwrap().0 < 1e-6);
        let flat: Vec<f64> = (0..100).map(|i| ((i * 7919) % 13) as f64).collect();
        assert!(mann_kendall(&flat).unwrap().0 > 0.05);
        assert_eq!(mann_kendall(&[1.0; 20]).unwrap().0, 1.0);
        assert!(mann_kendall(&[1.0; 3]).is_none());
    }
}
