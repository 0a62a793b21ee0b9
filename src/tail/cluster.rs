//! Clustering and trend of extremes: the extremal index by Ferro &
//! Segers' (2003) intervals estimator, and the Mann-Kendall trend test
//! on a series of window maxima (n log n: a day of 1 s windows is 86 400).

use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF, Normal};

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
        /// Whether the clusters arrive as independent events (exceedance
        /// times only): see [`cluster_dispersion`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        independence: Option<Independence>,
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

/// The independence check of the clusters behind θ: declustered by
/// Ferro & Segers' (2003) intervals rule (the `C − 1` largest gaps
/// between exceedances, `C = ⌊θ (N − 1)⌋ + 1`, separate clusters), the
/// clusters' starts counted in `blocks` equal spans of the run, and the
/// counts' index of dispersion `D = Σ (c − c̄)² / c̄` held against χ² with
/// `blocks − 1` degrees of freedom, both sides: too much spread (clusters
/// that come in bursts, or a rate that drifts) and too little (clusters
/// that come like clockwork, a periodic cause) both say that clusters are
/// not independent events of one rate, which θ's use in the levels
/// assumes (Coles 2001, 5.3).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Independence {
    pub clusters: usize,
    pub blocks: usize,
    pub dispersion: f64,
    /// Two-sided.
    pub p_value: f64,
    /// `p_value` at least [`INDEPENDENCE_MIN_P`].
    pub holds: bool,
}

/// Below this two-sided p-value the clusters are taken as dependent.
pub const INDEPENDENCE_MIN_P: f64 = 0.01;

/// The check of [`Independence`] over the exceedance positions (ascending)
/// of a run of `span` wake-ups; `None` with fewer than 25 clusters (five
/// blocks of five on average).
pub fn cluster_dispersion(positions: &[u64], theta: f64, span: u64) -> Option<Independence> {
    let n = positions.len();
    if n < 2 || !(theta > 0.0 && theta <= 1.0) {
        return None;
    }
    let c = ((theta * (n - 1) as f64).floor() as usize + 1).min(n);
    if c < 25 {
        return None;
    }
    let mut gaps: Vec<u64> = positions.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable_by(|a, b| b.cmp(a));
    // Gaps longer than the C-th largest separate clusters: at most the
    // C − 1 largest (a tie at the boundary stays inside a cluster).
    let cut = gaps.get(c - 1).copied().unwrap_or(0);
    let starts: Vec<u64> = std::iter::once(positions[0])
        .chain(
            positions
                .windows(2)
                .filter(|w| w[1] - w[0] > cut)
                .map(|w| w[1]),
        )
        .collect();
    let span = span.max(positions[n - 1] + 1);
    let blocks = (starts.len() / 5).clamp(5, 20);
    let mut counts = vec![0u64; blocks];
    for &s in &starts {
        let b = ((s as u128 * blocks as u128) / span as u128) as usize;
        counts[b.min(blocks - 1)] += 1;
    }
    let mean = starts.len() as f64 / blocks as f64;
    let dispersion: f64 = counts
        .iter()
        .map(|&k| (k as f64 - mean).powi(2))
        .sum::<f64>()
        / mean;
    let chi = ChiSquared::new((blocks - 1) as f64).ok()?;
    let cdf = chi.cdf(dispersion);
    let p_value = (2.0 * cdf.min(1.0 - cdf)).min(1.0);
    Some(Independence {
        clusters: starts.len(),
        blocks,
        dispersion,
        p_value,
        holds: p_value >= INDEPENDENCE_MIN_P,
    })
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
    let s = kendall_s(x);
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

/// Kendall's S = Σ_{i<j} sign(x_j − x_i), by a merge sort that counts,
/// for each value of a right half, the values of the left half below and
/// above it (Knight 1966): O(n log n), where the pairs themselves are
/// n²/2 (3.7·10⁹ for a day of 1 s windows).
fn kendall_s(x: &[f64]) -> i64 {
    let mut v = x.to_vec();
    let mut buf = vec![0.0; v.len()];
    merge_count(&mut v, &mut buf)
}

/// Sort `v` ascending; return Σ over pairs i < j of sign(v_j − v_i).
fn merge_count(v: &mut [f64], buf: &mut [f64]) -> i64 {
    let n = v.len();
    if n < 2 {
        return 0;
    }
    let mid = n / 2;
    let mut s = {
        let (l, r) = v.split_at_mut(mid);
        let (bl, br) = buf.split_at_mut(mid);
        merge_count(l, bl) + merge_count(r, br)
    };
    let (l, r) = v.split_at(mid);
    // r ascends, so the counts of left values below (`lt`) and at most
    // (`le`) each right value only grow.
    let (mut lt, mut le) = (0, 0);
    for &b in r {
        while lt < l.len() && l[lt] < b {
            lt += 1;
        }
        le = le.max(lt);
        while le < l.len() && l[le] <= b {
            le += 1;
        }
        s += lt as i64 - (l.len() - le) as i64;
    }
    let (mut i, mut j) = (0, 0);
    for slot in buf[..n].iter_mut() {
        if j >= r.len() || (i < l.len() && l[i] <= r[j]) {
            *slot = l[i];
            i += 1;
        } else {
            *slot = r[j];
            j += 1;
        }
    }
    v.copy_from_slice(&buf[..n]);
    s
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

    /// Positions of clusters of `size` consecutive exceedances whose
    /// starts are `starts`.
    fn clusters(starts: &[u64], size: u64) -> Vec<u64> {
        starts
            .iter()
            .flat_map(|&s| (0..size).map(move |k| s + k))
            .collect()
    }

    #[test]
    fn clusters_of_one_rate_are_independent_and_bursts_or_clockwork_are_not() {
        let span = 10_000_000u64;
        // Poisson starts (uniform order statistics), pairs of exceedances.
        let mut rng = crate::rng::Rng::new(11);
        let mut starts: Vec<u64> = (0..200).map(|_| rng.below_exact(span - 10)).collect();
        starts.sort_unstable();
        starts.dedup();
        let pos = clusters(&starts, 2);
        let theta = intervals_estimator(&pos).unwrap();
        assert!((theta - 0.5).abs() < 0.1, "{theta}");
        let ok = cluster_dispersion(&pos, theta, span).unwrap();
        assert!(ok.holds, "{ok:?}");
        assert!(
            (ok.clusters as i64 - starts.len() as i64).abs() <= 5,
            "{ok:?}"
        );
        // The same clusters all in the first fifth of the run: a burst.
        let early: Vec<u64> = starts.iter().map(|s| s / 5).collect();
        let pos = clusters(&early, 2);
        let burst = cluster_dispersion(&pos, intervals_estimator(&pos).unwrap(), span).unwrap();
        assert!(!burst.holds, "{burst:?}");
        // Like clockwork: one cluster every 50 000 wake-ups.
        let tick: Vec<u64> = (0..200).map(|k| k * 50_000).collect();
        let pos = clusters(&tick, 2);
        let clock = cluster_dispersion(&pos, intervals_estimator(&pos).unwrap(), span).unwrap();
        assert!(!clock.holds && clock.dispersion < 1.0, "{clock:?}");
        // Too few clusters to judge.
        assert!(cluster_dispersion(&clusters(&starts[..20], 2), 0.5, span).is_none());
    }
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

    #[test]
    fn tail_kendall_s_is_the_sum_over_pairs() {
        let mut state = 7u64;
        for n in [0, 1, 2, 3, 10, 57, 300] {
            // values with many ties, from a fixed-seed generator
            let x: Vec<f64> = (0..n)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    ((state >> 33) % 17) as f64 - 3.0
                })
                .collect();
            let mut pairs = 0i64;
            for i in 0..x.len() {
                for j in i + 1..x.len() {
                    pairs += (x[j] - x[i]).partial_cmp(&0.0).map_or(0, |o| o as i64);
                }
            }
            assert_eq!(kendall_s(&x), pairs, "n = {n}");
        }
    }
}
