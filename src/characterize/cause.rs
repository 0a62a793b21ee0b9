//! Likely causes of the OS-noise gaps, named from their pattern and the
//! system's facts in the record: real-time throttling (gaps near
//! `sched_rt_period_us − sched_rt_runtime_us`, recurring at the period)
//! and the scheduler tick (gaps recurring at 1/CONFIG_HZ). Each cause is
//! said as "likely", with its evidence. Pure: a record in, sentences out;
//! it never reads the running system.

use super::{Gap, NoiseDetail};
use crate::record::Fingerprint;
use crate::text::num::latency;

/// Linux's defaults, used when the record has no values.
const DEFAULT_RT_PERIOD_US: i64 = 1_000_000;
const DEFAULT_RT_RUNTIME_US: i64 = 950_000;
/// How close a gap must be to the throttled time (share of it).
const GAP_TOLERANCE: f64 = 0.25;
/// How close the spacing of two gaps must be to a whole number of
/// periods (share of the period).
const THROTTLE_PHASE: f64 = 0.1;
/// For the tick: the spacing within this share of a whole number of ticks.
const TICK_PHASE: f64 = 0.03;

/// True when every spacing of `at` (sorted) is within `tol × step` of a
/// whole, non-zero number of `step`s.
fn recurs(at: &[u64], step_ns: f64, tol: f64) -> bool {
    at.windows(2).all(|w| {
        let k = (w[1] - w[0]) as f64 / step_ns;
        k.round() >= 1.0 && (k - k.round()).abs() <= tol
    })
}

/// Real-time throttling: at least three gaps near the throttled time,
/// spaced by whole periods. Returns the sentence and the gaps it
/// explains.
pub fn throttling(gaps: &[Gap], fp: &Fingerprint) -> Option<(String, Vec<Gap>)> {
    let known = fp.sched_rt_period_us.is_some() && fp.sched_rt_runtime_us.is_some();
    let period_us = fp.sched_rt_period_us.unwrap_or(DEFAULT_RT_PERIOD_US);
    let runtime_us = fp.sched_rt_runtime_us.unwrap_or(DEFAULT_RT_RUNTIME_US);
    if runtime_us < 0 || period_us <= 0 || runtime_us >= period_us {
        return None;
    }
    let expected_ns = ((period_us - runtime_us) * 1000) as f64;
    let mut near: Vec<Gap> = gaps
        .iter()
        .copied()
        .filter(|g| (g.gap_ns as f64 - expected_ns).abs() <= GAP_TOLERANCE * expected_ns)
        .collect();
    if near.len() < 3 {
        return None;
    }
    near.sort_by_key(|g| g.at_ns);
    let at: Vec<u64> = near.iter().map(|g| g.at_ns).collect();
    let period_ns = (period_us * 1000) as f64;
    if !recurs(&at, period_ns, THROTTLE_PHASE) {
        return None;
    }
    let lo = near.iter().map(|g| g.gap_ns).min().unwrap_or(0);
    let hi = near.iter().map(|g| g.gap_ns).max().unwrap_or(0);
    let range = if lo == hi {
        latency(lo)
    } else {
        format!("{} to {}", latency(lo), latency(hi))
    };
    let text = format!(
        "likely real-time throttling: {} gaps of {range} recur every {} (sched_rt_period_us), \
         close to the {} a period that real-time tasks are stopped (sched_rt_period_us {} − \
         sched_rt_runtime_us {}{}); a busy SCHED_FIFO loop is throttled, a periodic task \
         that sleeps is not (sched_rt_runtime_us = -1 lifts it, at the risk of a runaway \
         task hanging its CPU)",
        near.len(),
        latency(period_ns as u64),
        latency(expected_ns as u64),
        period_us,
        runtime_us,
        if known {
            ""
        } else {
            ", Linux's defaults: the record does not have the values"
        },
    );
    Some((text, near))
}

/// The scheduler tick: at least five gaps (other than `skip`) whose
/// spacings are whole numbers of ticks (1/CONFIG_HZ), with most spaced by
/// one or two ticks.
pub fn tick(gaps: &[Gap], skip: &[Gap], fp: &Fingerprint) -> Option<String> {
    let hz = fp.hz.filter(|h| *h > 0)?;
    let tick_ns = 1e9 / hz as f64;
    let mut rest: Vec<Gap> = gaps.iter().copied().filter(|g| !skip.contains(g)).collect();
    if rest.len() < 5 {
        return None;
    }
    rest.sort_by_key(|g| g.at_ns);
    let at: Vec<u64> = rest.iter().map(|g| g.at_ns).collect();
    if !recurs(&at, tick_ns, TICK_PHASE) {
        return None;
    }
    let hi = rest.iter().map(|g| g.gap_ns).max().unwrap_or(0);
    Some(format!(
        "likely the scheduler tick: {} gaps of up to {} start a whole number of ticks apart \
         ({} at CONFIG_HZ={hz}); a CPU in nohz_full with a single task loses most of them",
        rest.len(),
        latency(hi),
        latency(tick_ns as u64),
    ))
}

/// The likely causes of one CPU's largest gaps, most certain first
/// (empty when no known pattern is seen).
pub fn likely_causes(n: &NoiseDetail, fp: &Fingerprint) -> Vec<String> {
    let mut out = Vec::new();
    let mut explained = Vec::new();
    if let Some((text, gaps)) = throttling(&n.largest_gaps, fp) {
        out.push(text);
        explained = gaps;
    }
    if let Some(text) = tick(&n.largest_gaps, &explained, fp) {
        out.push(text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(runtime_us: i64) -> Fingerprint {
        Fingerprint {
            sched_rt_period_us: Some(1_000_000),
            sched_rt_runtime_us: Some(runtime_us),
            hz: Some(250),
            ..Default::default()
        }
    }

    fn gap(gap_ns: u64, at_ns: u64) -> Gap {
        Gap { gap_ns, at_ns }
    }

    #[test]
    fn a_gap_every_second_of_the_throttled_time_is_throttling() {
        // 950 ms of 1 s: ~50 ms stopped, every second, jittered.
        let gaps: Vec<Gap> = (0..10u64)
            .map(|i| gap(52_029_886 - i * 300_000, 950_000_000 + i * 1_000_000_017))
            .collect();
        let (text, used) = throttling(&gaps, &fp(950_000)).unwrap();
        assert_eq!(used.len(), 10);
        assert!(text.starts_with("likely real-time throttling"), "{text}");
        assert!(
            text.contains("52.03 ms") && text.contains("every 1.00 s"),
            "{text}"
        );
        assert!(text.contains("50.00 ms"), "{text}");
        let n = NoiseDetail {
            duration_ns: 10_000_000_000,
            loops: 1,
            threshold_ns: 1000,
            gaps_above_threshold: 10,
            noise_ns: 0,
            cpu_left_to_loop_percent: 95.0,
            largest_gaps: gaps.clone(),
            explained_above_ns: None,
            explanations: vec![],
        };
        let causes = likely_causes(&n, &fp(950_000));
        assert_eq!(causes.len(), 1, "{causes:?}");
        // Throttling off: not named.
        assert!(throttling(&gaps, &fp(-1)).is_none());
    }

    #[test]
    fn gaps_without_a_pattern_are_not_named() {
        // Same sizes, irregular times.
        let at = [
            130_000_000u64,
            1_610_000_000,
            2_020_000_000,
            4_470_000_000,
            5_900_000_000,
        ];
        let gaps: Vec<Gap> = at.iter().map(|a| gap(50_000_000, *a)).collect();
        assert!(throttling(&gaps, &fp(950_000)).is_none());
        // Right times, sizes far from 50 ms.
        let gaps: Vec<Gap> = (0..5u64)
            .map(|i| gap(3_000_000, i * 1_000_000_000))
            .collect();
        assert!(throttling(&gaps, &fp(950_000)).is_none());
        // Random-looking small gaps: no tick either.
        let gaps: Vec<Gap> = [
            13_100_007u64,
            29_411_000,
            70_203_500,
            91_000_333,
            150_017_000,
        ]
        .iter()
        .map(|a| gap(4_000, *a))
        .collect();
        assert!(tick(&gaps, &[], &fp(950_000)).is_none());
    }

    #[test]
    fn gaps_a_whole_number_of_ticks_apart_are_the_tick() {
        // HZ=250: a tick every 4 ms.
        let gaps: Vec<Gap> = [0u64, 1, 2, 4, 7, 8]
            .iter()
            .map(|k| gap(3_500, 1_000_000 + k * 4_000_000 + 20_000))
            .collect();
        let t = tick(&gaps, &[], &fp(950_000)).unwrap();
        assert!(
            t.contains("likely the scheduler tick") && t.contains("4.00 ms"),
            "{t}"
        );
    }
}
