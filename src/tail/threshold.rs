//! The threshold: candidate bin edges from many exceedances down to few,
//! a GPD fit and an Anderson-Darling test at each, and ForwardStop's
//! choice (the lowest threshold whose tail the tests do not reject).

use serde::Serialize;

use super::Bin;
use super::ad;
use super::gpd::{self, Exceedances, GpdFit};

/// One candidate threshold and its test.
#[derive(Clone, Debug, Serialize)]
pub struct ThresholdTest {
    pub threshold_ns: u64,
    pub exceedances: u64,
    pub sigma_ns: f64,
    pub xi: f64,
    /// Standard error of ξ (observed information); null when unknown.
    pub xi_se: f64,
    pub ad_statistic: f64,
    pub ad_p_value: f64,
    #[serde(skip)]
    pub fit: Option<GpdFit>,
}

/// Bin edges whose exceedance counts run geometrically from
/// `max_exceedances` (or a tenth of the samples, if fewer) down to
/// `min_count`, ascending, without repeats.
pub fn candidates(
    bins: &[Bin],
    total: u64,
    max_exceedances: u64,
    min_count: u64,
    count: usize,
) -> Vec<u64> {
    let top = max_exceedances.min(total / 10);
    if top < min_count || count < 2 {
        return vec![];
    }
    let ratio = (min_count as f64 / top as f64).powf(1.0 / (count - 1) as f64);
    let mut out: Vec<u64> = vec![];
    for i in 0..count {
        let target = (top as f64 * ratio.powi(i as i32)).round() as u64;
        if let Some(edge) = edge_with_at_most(bins, target) {
            if out.last().is_none_or(|&l| edge > l) {
                out.push(edge);
            }
        }
    }
    out
}

/// The lowest bin edge with at most `target` samples at or above it
/// (and at least one).
fn edge_with_at_most(bins: &[Bin], target: u64) -> Option<u64> {
    let mut above = 0u64;
    let mut edge = None;
    for b in bins.iter().rev() {
        if above + b.count > target {
            break;
        }
        above += b.count;
        edge = Some(b.lo_ns);
    }
    edge.filter(|_| above > 0)
}

/// Fit and test at one threshold.
pub fn test_at(bins: &[Bin], threshold_ns: u64) -> ThresholdTest {
    let ex = Exceedances::over(bins, threshold_ns);
    let fit = gpd::fit(&ex);
    let (sigma_ns, xi, xi_se) = fit.as_ref().map_or((f64::NAN, f64::NAN, f64::NAN), |f| {
        (f.sigma_ns, f.xi, f.xi_se)
    });
    let ad_statistic = fit
        .as_ref()
        .map_or(f64::NAN, |f| ad::statistic(&ex, f.sigma_ns, f.xi));
    ThresholdTest {
        threshold_ns,
        exceedances: ex.n,
        sigma_ns,
        xi,
        xi_se,
        ad_statistic,
        ad_p_value: ad::p_value(ad_statistic, xi),
        fit,
    }
}

/// [`test_at`] at every edge, on the machine's CPUs: the fits are
/// independent and are the analysis' cost (a GPD likelihood over up to
/// a thousand bins, some thousand times per threshold). Candidate `i`
/// goes to worker `i mod workers` (the low thresholds, with the most
/// bins, are spread); the result is in the edges' order, the same as one
/// thread's.
fn test_all(bins: &[Bin], edges: &[u64]) -> Vec<ThresholdTest> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(edges.len().max(1));
    if workers < 2 {
        return edges.iter().map(|&e| test_at(bins, e)).collect();
    }
    let mut slots: Vec<Option<ThresholdTest>> = vec![None; edges.len()];
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                s.spawn(move || {
                    (w..edges.len())
                        .step_by(workers)
                        .map(|i| (i, test_at(bins, edges[i])))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            // A worker that panicked re-raises here, as one thread would.
            for (i, t) in h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)) {
                slots[i] = Some(t);
            }
        }
    });
    slots.into_iter().flatten().collect()
}

/// Every candidate tested, and ForwardStop's choice (an index into
/// them; `None` when every one is rejected or there is none).
pub fn choose(bins: &[Bin], edges: &[u64], alpha: f64) -> (Vec<ThresholdTest>, Option<usize>) {
    let tests = test_all(bins, edges);
    let p: Vec<f64> = tests.iter().map(|t| t.ad_p_value).collect();
    let k = ad::forward_stop(&p, alpha);
    let chosen = (k < tests.len() && tests[k].fit.is_some()).then_some(k);
    (tests, chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(lo: u64, count: u64) -> Bin {
        Bin {
            lo_ns: lo,
            hi_ns: lo + 1,
            count,
        }
    }

    #[test]
    fn tail_candidates_are_ascending_bin_edges() {
        let bins: Vec<Bin> = (0..1000).map(|i| b(i, 10)).collect();
        let c = candidates(&bins, 10_000, 800, 25, 10);
        assert!(c.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(c[0], 920); // 80 bins of 10 = 800 samples
        assert!(*c.last().unwrap() >= 997);
        // all in one bin: no edge leaves anything above it but the bin
        assert!(candidates(&[b(5, 1_000_000)], 1_000_000, 20_000, 25, 10).is_empty());
    }
}
