//! Per-thread statistics that the measuring thread writes and any other
//! thread may read at any time (live display, SIGUSR1, checkpoints).
//!
//! Single writer: every field is an atomic written with a plain relaxed
//! store (no locked instruction, no lock, no allocation). Readers may see
//! a sample half-published; after the writer has stopped, everything is
//! exact.

use crate::histogram::{AtomicHistogram, Histogram, LATENCY_SUB_BITS};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering::Relaxed};

/// "No value yet" for min fields.
const NONE: u64 = u64::MAX;

/// Largest wake-ups kept per thread, with their cycle.
pub const OUTLIERS: usize = 32;

/// Statistics of one measuring thread.
#[repr(align(128))]
pub struct SharedStats {
    pub hist: AtomicHistogram,
    samples: AtomicU64,
    wakeups: AtomicU64,
    missed: AtomicU64,
    early: AtomicU64,
    max_early: AtomicU64,
    min: AtomicU64,
    max: AtomicU64,
    min_cycle: AtomicU64,
    max_cycle: AtomicU64,
    sum_lo: AtomicU64,
    sum_hi: AtomicU64,
    last: AtomicU64,
    dropped_windows: AtomicU64,
    dropped_late: AtomicU64,
    /// The largest latency among the late wake-ups the queue lost.
    lost_late_max: AtomicU64,
    /// Wake-ups at least this late go into the queue of late wake-ups:
    /// the control thread lowers it for `--explain` and raises it as its
    /// table of exceedances fills (engine/exceed.rs).
    late_floor: AtomicU64,
    warm_samples: AtomicU64,
    warm_min: AtomicU64,
    warm_max: AtomicU64,
    warm_sum: AtomicU64,
    warm_missed: AtomicU64,
    /// The largest wake-up latencies and their cycles (unordered; 0 = empty).
    outlier_lat: [AtomicU64; OUTLIERS],
    outlier_cycle: [AtomicU64; OUTLIERS],
    /// Smallest latency in the table: only larger ones get in.
    outlier_floor: AtomicU64,
    pub tid: AtomicI32,
    pub done: AtomicBool,
}

/// A consistent-enough copy of a thread's statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct StatsSnapshot {
    pub hist: Histogram,
    pub samples: u64,
    pub wakeups: u64,
    pub missed: u64,
    pub early: u64,
    pub max_early_ns: Option<u64>,
    pub min_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub min_cycle: u64,
    pub max_cycle: u64,
    pub sum_ns: u128,
    pub dropped_windows: u64,
    pub warm_samples: u64,
    pub warm_min_ns: Option<u64>,
    pub warm_max_ns: Option<u64>,
    pub warm_sum_ns: u64,
    pub warm_missed: u64,
    /// `(latency_ns, cycle)` of the largest wake-ups, largest first.
    pub outliers: Vec<(u64, u64)>,
}

/// The cheap part, for live display (no histogram copy).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LiveStats {
    pub wakeups: u64,
    pub missed: u64,
    pub min_ns: Option<u64>,
    pub last_ns: Option<u64>,
    pub avg_ns: Option<f64>,
    pub max_ns: Option<u64>,
}

fn opt(v: u64) -> Option<u64> {
    if v == NONE { None } else { Some(v) }
}

impl Default for SharedStats {
    fn default() -> Self {
        Self::new()
    }
}

/// The periods a late wake-up skipped, as omission correction records
/// them (HdrHistogram's rule): `lat - j·interval` for j = 1, 2, … while
/// that value is still at least one interval, and never more than the
/// `extra` periods that were missed. A synthetic value below the interval
/// would be a wake-up that could have happened on time: it is not
/// recorded, so correction never invents small latencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// How many synthetic samples are recorded.
    pub count: u64,
    /// The first (largest) of them: `lat - interval`.
    pub first_ns: u64,
    /// Their sum.
    pub sum_ns: u128,
    /// The last (smallest) of them, at least `interval` (0 when none).
    pub low_ns: u64,
}

impl Skipped {
    // HOT PATH
    #[inline(always)]
    pub fn of(lat_ns: u64, extra: u64, interval_ns: u64) -> Skipped {
        // Values lat - j·interval >= interval  <=>  j <= lat/interval - 1.
        let fit = (lat_ns / interval_ns.max(1)).saturating_sub(1);
        let k = extra.min(fit);
        let e = k as u128;
        Skipped {
            count: k,
            first_ns: lat_ns.saturating_sub(interval_ns),
            sum_ns: e * lat_ns as u128 - (interval_ns as u128) * e * (e + 1) / 2,
            low_ns: if k == 0 { 0 } else { lat_ns - interval_ns * k },
        }
    }
}

impl SharedStats {
    pub fn new() -> SharedStats {
        SharedStats {
            hist: AtomicHistogram::new(LATENCY_SUB_BITS),
            samples: AtomicU64::new(0),
            wakeups: AtomicU64::new(0),
            missed: AtomicU64::new(0),
            early: AtomicU64::new(0),
            max_early: AtomicU64::new(NONE),
            min: AtomicU64::new(NONE),
            max: AtomicU64::new(NONE),
            min_cycle: AtomicU64::new(0),
            max_cycle: AtomicU64::new(0),
            sum_lo: AtomicU64::new(0),
            sum_hi: AtomicU64::new(0),
            last: AtomicU64::new(NONE),
            dropped_windows: AtomicU64::new(0),
            dropped_late: AtomicU64::new(0),
            lost_late_max: AtomicU64::new(NONE),
            late_floor: AtomicU64::new(0),
            warm_samples: AtomicU64::new(0),
            warm_min: AtomicU64::new(NONE),
            warm_max: AtomicU64::new(NONE),
            warm_sum: AtomicU64::new(0),
            warm_missed: AtomicU64::new(0),
            outlier_lat: std::array::from_fn(|_| AtomicU64::new(0)),
            outlier_cycle: std::array::from_fn(|_| AtomicU64::new(0)),
            outlier_floor: AtomicU64::new(0),
            tid: AtomicI32::new(0),
            done: AtomicBool::new(false),
        }
    }

    pub fn prefault(&self) {
        self.hist.prefault();
    }

    /// Sum of every recorded latency, in ns.
    #[inline(always)]
    fn sum(&self) -> u128 {
        ((self.sum_hi.load(Relaxed) as u128) << 64) | self.sum_lo.load(Relaxed) as u128
    }

    // ---- writer side (the measuring thread only) ----

    /// One wake-up of a measured period: `lat_ns` late, with `extra`
    /// later periods missed (recorded too when `correct` is set, as
    /// [`Skipped`] says: only those still at least an interval late).
    // HOT PATH
    #[inline(always)]
    pub fn record_wakeup(
        &self,
        lat_ns: u64,
        extra: u64,
        interval_ns: u64,
        cycle: u64,
        correct: bool,
    ) {
        self.hist.record_n(lat_ns, 1);
        let mut n = 1u64;
        let mut sum = lat_ns as u128;
        if extra > 0 {
            bump(&self.missed, extra);
            if correct {
                let skipped = Skipped::of(lat_ns, extra, interval_ns);
                if skipped.count > 0 {
                    self.hist
                        .record_descending(skipped.first_ns, interval_ns, skipped.count);
                }
                n += skipped.count;
                sum += skipped.sum_ns;
            }
        }
        bump(&self.samples, n);
        bump(&self.wakeups, 1);
        let new_sum = self.sum().wrapping_add(sum);
        self.sum_lo.store(new_sum as u64, Relaxed);
        self.sum_hi.store((new_sum >> 64) as u64, Relaxed);
        // The minimum is that of real wake-ups: corrected samples are
        // estimates, and never the smallest thing a run saw.
        let min = self.min.load(Relaxed);
        if min == NONE || lat_ns < min {
            self.min.store(lat_ns, Relaxed);
            self.min_cycle.store(cycle, Relaxed);
        }
        let max = self.max.load(Relaxed);
        if max == NONE || lat_ns > max {
            self.max.store(lat_ns, Relaxed);
            self.max_cycle.store(cycle, Relaxed);
        }
        self.last.store(lat_ns, Relaxed);
        if lat_ns > self.outlier_floor.load(Relaxed) {
            self.keep_outlier(lat_ns, cycle);
        }
    }

    /// Replace the smallest of the kept outliers (bounded: two scans of
    /// a 32-entry table, only when a wake-up beats the smallest).
    // HOT PATH
    #[inline(never)]
    fn keep_outlier(&self, lat_ns: u64, cycle: u64) {
        let mut slot = 0;
        let mut smallest = u64::MAX;
        for (i, l) in self.outlier_lat.iter().enumerate() {
            let v = l.load(Relaxed);
            if v < smallest {
                smallest = v;
                slot = i;
            }
        }
        self.outlier_lat[slot].store(lat_ns, Relaxed);
        self.outlier_cycle[slot].store(cycle, Relaxed);
        let floor = self
            .outlier_lat
            .iter()
            .map(|l| l.load(Relaxed))
            .min()
            .unwrap_or(0);
        self.outlier_floor.store(floor, Relaxed);
    }

    /// A wake-up before its deadline (not recorded in the histogram).
    // HOT PATH
    #[inline(always)]
    pub fn record_early(&self, early_ns: u64) {
        bump(&self.early, 1);
        let m = self.max_early.load(Relaxed);
        if m == NONE || early_ns > m {
            self.max_early.store(early_ns, Relaxed);
        }
    }

    /// A warm-up wake-up, kept apart (with the periods it missed).
    // HOT PATH
    #[inline(always)]
    pub fn record_warmup(&self, lat_ns: u64, extra: u64) {
        bump(&self.warm_samples, 1);
        bump(&self.warm_missed, extra);
        self.warm_sum
            .store(self.warm_sum.load(Relaxed).saturating_add(lat_ns), Relaxed);
        let m = self.warm_min.load(Relaxed);
        if m == NONE || lat_ns < m {
            self.warm_min.store(lat_ns, Relaxed);
        }
        let m = self.warm_max.load(Relaxed);
        if m == NONE || lat_ns > m {
            self.warm_max.store(lat_ns, Relaxed);
        }
    }

    #[inline(always)]
    pub fn record_dropped_window(&self) {
        bump(&self.dropped_windows, 1);
    }

    /// A late wake-up that did not fit in the queue of late wake-ups.
    pub fn record_dropped_late(&self, latency_ns: u64) {
        bump(&self.dropped_late, 1);
        let m = self.lost_late_max.load(Relaxed);
        if m == NONE || latency_ns > m {
            self.lost_late_max.store(latency_ns, Relaxed);
        }
    }

    /// The largest latency the queue of late wake-ups lost, if any.
    pub fn lost_late_max(&self) -> Option<u64> {
        opt(self.lost_late_max.load(Relaxed))
    }

    /// Wake-ups at least this late are queued (read in the hot loop).
    // HOT PATH
    #[inline(always)]
    pub fn late_floor(&self) -> u64 {
        self.late_floor.load(Relaxed)
    }

    /// Set by the control thread only.
    pub fn set_late_floor(&self, ns: u64) {
        self.late_floor.store(ns, Relaxed);
    }

    /// Late wake-ups that did not fit in the queue so far.
    pub fn dropped_late(&self) -> u64 {
        self.dropped_late.load(Relaxed)
    }

    // ---- reader side ----

    pub fn live(&self) -> LiveStats {
        let samples = self.samples.load(Relaxed);
        let sum = self.sum();
        LiveStats {
            wakeups: self.wakeups.load(Relaxed),
            missed: self.missed.load(Relaxed),
            min_ns: opt(self.min.load(Relaxed)),
            last_ns: opt(self.last.load(Relaxed)),
            avg_ns: if samples > 0 {
                Some(sum as f64 / samples as f64)
            } else {
                None
            },
            max_ns: opt(self.max.load(Relaxed)),
        }
    }

    pub fn snapshot(&self) -> StatsSnapshot {
        let hist = self.hist.snapshot();
        // Counters are read after the histogram, so they are never behind it
        // by more than the samples recorded meanwhile; a final snapshot after
        // the thread stopped is exact.
        let sum = self.sum();
        StatsSnapshot {
            samples: hist.total(),
            hist,
            wakeups: self.wakeups.load(Relaxed),
            missed: self.missed.load(Relaxed),
            early: self.early.load(Relaxed),
            max_early_ns: opt(self.max_early.load(Relaxed)),
            min_ns: opt(self.min.load(Relaxed)),
            max_ns: opt(self.max.load(Relaxed)),
            min_cycle: self.min_cycle.load(Relaxed),
            max_cycle: self.max_cycle.load(Relaxed),
            sum_ns: sum,
            dropped_windows: self.dropped_windows.load(Relaxed),
            warm_samples: self.warm_samples.load(Relaxed),
            warm_min_ns: opt(self.warm_min.load(Relaxed)),
            warm_max_ns: opt(self.warm_max.load(Relaxed)),
            warm_sum_ns: self.warm_sum.load(Relaxed),
            warm_missed: self.warm_missed.load(Relaxed),
            outliers: {
                let mut o: Vec<(u64, u64)> = self
                    .outlier_lat
                    .iter()
                    .zip(self.outlier_cycle.iter())
                    .map(|(l, c)| (l.load(Relaxed), c.load(Relaxed)))
                    .filter(|(l, _)| *l > 0)
                    .collect();
                o.sort_unstable_by(|a, b| b.cmp(a));
                o
            },
        }
    }
}

#[inline(always)]
fn bump(a: &AtomicU64, n: u64) {
    a.store(a.load(Relaxed).wrapping_add(n), Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic timeline at 1 ms: on time, 0.3 ms late, then a 3.5 ms
    /// stall (3 periods missed).
    #[test]
    fn missed_period_accounting_with_and_without_correction() {
        for correct in [true, false] {
            let s = SharedStats::new();
            let i = 1_000_000;
            s.record_wakeup(20_000, 0, i, 0, correct);
            s.record_wakeup(300_000, 0, i, 1, correct);
            s.record_wakeup(3_500_000, 3, i, 2, correct);
            let snap = s.snapshot();
            assert_eq!(snap.wakeups, 3);
            assert_eq!(snap.missed, 3);
            assert_eq!(snap.max_ns, Some(3_500_000));
            assert_eq!(snap.max_cycle, 2);
            if correct {
                // The stall's wake-up, 3.5 ms late, and the periods it
                // skipped that were still at least an interval late: 2.5
                // and 1.5 ms (the last one, 0.5 ms, is not recorded).
                assert_eq!(snap.samples, 5);
                assert_eq!(
                    snap.sum_ns,
                    20_000 + 300_000 + 3_500_000 + 2_500_000 + 1_500_000
                );
                assert_eq!(snap.hist.count_above(1_000_000), 3);
                assert_eq!(snap.min_ns, Some(20_000));
            } else {
                assert_eq!(snap.samples, 3);
                assert_eq!(snap.sum_ns, 3_820_000);
                assert_eq!(snap.hist.count_above(1_000_000), 1);
            }
        }
    }

    #[test]
    fn keeps_the_largest_wakeups() {
        let s = SharedStats::new();
        for c in 0..1000u64 {
            // A saw-tooth: every 100th wake-up is large.
            let lat = if c % 100 == 7 {
                1_000_000 + c
            } else {
                1_000 + c % 50
            };
            s.record_wakeup(lat, 0, 10_000_000, c, true);
        }
        let o = s.snapshot().outliers;
        assert_eq!(o.len(), OUTLIERS);
        assert_eq!(o[0], (1_000_907, 907));
        assert_eq!(o.iter().filter(|(l, _)| *l > 1_000_000).count(), 10);
        assert!(o.windows(2).all(|w| w[0].0 >= w[1].0));
    }

    #[test]
    fn skipped_periods_stop_at_one_interval() {
        let i = 1_000_000;
        // 3.5 intervals late, 3 periods missed: 2.5 and 1.5 recorded.
        let s = Skipped::of(3_500_000, 3, i);
        assert_eq!(s.count, 2);
        assert_eq!(s.first_ns, 2_500_000);
        assert_eq!(s.sum_ns, 4_000_000);
        assert_eq!(s.low_ns, 1_500_000);
        // Exactly 3 intervals late: 2 and 1 intervals (one interval counts).
        let s = Skipped::of(3_000_000, 3, i);
        assert_eq!((s.count, s.sum_ns, s.low_ns), (2, 3_000_000, 1_000_000));
        // A periodic timer may report fewer expirations than lat/interval:
        // never more samples than periods missed.
        let s = Skipped::of(5_200_000, 2, i);
        assert_eq!((s.count, s.sum_ns, s.low_ns), (2, 7_400_000, 3_200_000));
        // Less than two intervals late: nothing is left to record.
        let s = Skipped::of(1_999_999, 1, i);
        assert_eq!((s.count, s.sum_ns, s.low_ns), (0, 0, 0));
    }

    /// The case that showed a minimum of 0.0 µs: a 20 µs interval and a
    /// wake-up 60.005 µs late that skipped 3 periods. The skipped periods
    /// 40.005 and 20.005 µs late are recorded; the one 0.005 µs "late" is
    /// not, and the minimum is the smallest real wake-up.
    #[test]
    fn correction_never_sets_the_minimum_nor_records_below_the_interval() {
        let i = 20_000;
        let s = SharedStats::new();
        // A synthetic timeline: on time-ish, a stall, then on time-ish.
        s.record_wakeup(3_100, 0, i, 0, true);
        s.record_wakeup(60_005, 3, i, 1, true);
        s.record_wakeup(2_900, 0, i, 5, true);
        let snap = s.snapshot();
        assert_eq!(snap.wakeups, 3);
        assert_eq!(snap.missed, 3);
        assert_eq!(snap.samples, 5);
        assert_eq!(snap.min_ns, Some(2_900));
        assert_eq!(snap.min_cycle, 5);
        assert_eq!(snap.sum_ns, 3_100 + 60_005 + 40_005 + 20_005 + 2_900);
        // Nothing between the real wake-ups and the interval was invented.
        assert_eq!(snap.hist.count_above(3_100), 3);
        assert_eq!(snap.hist.count_above(19_999), 3);
        // A stall alone: the minimum is the stall, not a corrected sample.
        let s = SharedStats::new();
        s.record_wakeup(2_000_100, 2, 1_000_000, 10, true);
        let snap = s.snapshot();
        assert_eq!(snap.min_ns, Some(2_000_100));
        assert_eq!(snap.min_cycle, 10);
        assert_eq!(snap.samples, 2);
        let h = snap.hist;
        assert_eq!(h.count_above(900_000), 2);
    }

    #[test]
    fn early_and_warmup_are_kept_apart() {
        let s = SharedStats::new();
        s.record_warmup(50_000, 2);
        s.record_warmup(10_000, 0);
        s.record_early(1_234);
        s.record_early(99);
        let snap = s.snapshot();
        assert_eq!(snap.samples, 0);
        assert_eq!(snap.warm_missed, 2);
        assert_eq!(
            (snap.warm_samples, snap.warm_min_ns, snap.warm_max_ns),
            (2, Some(10_000), Some(50_000))
        );
        assert_eq!((snap.early, snap.max_early_ns), (2, Some(1_234)));
        assert_eq!(s.live().avg_ns, None);
    }
}
