//! Per-window statistics ("[t] Min Avg Max" lines of long runs).
//!
//! The measuring thread accumulates the current window in a
//! [`WindowAcc`] (memory prepared in advance, bounded work) and hands each
//! finished window to the collector through a real-time-safe queue. The
//! collector keeps them in a [`SeriesBuilder`] whose size is bounded: when
//! full, neighbouring windows are merged and the window doubles, so a day
//! costs what an hour does.

use super::shared::Skipped;
use crate::histogram::{Histogram, WINDOW_SUB_BITS};
use crate::record::{WindowPoint, WindowSeries};

/// One finished window of one thread, as sent through the queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowStat {
    /// Window number since the start (base window size).
    pub index: u64,
    pub point: WindowPoint,
}

/// The measuring thread's current window.
pub struct WindowAcc {
    hist: Histogram,
    index: u64,
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
    missed: u64,
    /// Smallest value in `hist` (corrected samples included): the
    /// histogram is scanned and cleared from here.
    hist_low: u64,
}

impl Default for WindowAcc {
    fn default() -> Self {
        Self::new()
    }
}

impl WindowAcc {
    pub fn new() -> WindowAcc {
        let mut hist = Histogram::new(WINDOW_SUB_BITS);
        hist.prefault();
        WindowAcc {
            hist,
            index: 0,
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            missed: 0,
            hist_low: u64::MAX,
        }
    }

    /// If `index` is past the current window, finish the current one
    /// (returned when it holds samples) and start `index`.
    // HOT PATH
    #[inline]
    pub fn roll(&mut self, index: u64) -> Option<WindowStat> {
        if index <= self.index {
            return None;
        }
        let done = self.finish();
        self.index = index;
        done
    }

    /// Finish the current window: its statistics, then reset (bounded
    /// work: only the buckets between its min and max are scanned).
    // HOT PATH
    #[inline]
    pub fn finish(&mut self) -> Option<WindowStat> {
        if self.count == 0 {
            return None;
        }
        let p99 = self
            .hist
            .quantile_between(0.99, self.hist_low, self.max)
            .unwrap_or(self.max)
            .clamp(self.min, self.max);
        let stat = WindowStat {
            index: self.index,
            point: WindowPoint {
                count: self.count,
                min_ns: self.min,
                avg_ns: (self.sum / self.count as u128) as u64,
                max_ns: self.max,
                p99_ns: p99,
                missed: self.missed,
            },
        };
        self.hist.clear_range(self.hist_low, self.max);
        self.count = 0;
        self.min = u64::MAX;
        self.max = 0;
        self.sum = 0;
        self.missed = 0;
        self.hist_low = u64::MAX;
        Some(stat)
    }

    /// Add a wake-up `lat_ns` late with `extra` missed periods after it
    /// (recorded too when `correct`, as [`Skipped`] says). The window's
    /// min is that of real wake-ups; corrected samples may lie below it.
    // HOT PATH
    #[inline]
    pub fn add(&mut self, lat_ns: u64, extra: u64, interval_ns: u64, correct: bool) {
        self.hist.record(lat_ns);
        self.count += 1;
        self.sum += lat_ns as u128;
        self.max = self.max.max(lat_ns);
        self.min = self.min.min(lat_ns);
        self.hist_low = self.hist_low.min(lat_ns);
        self.missed += extra;
        if extra > 0 && correct {
            let skipped = Skipped::of(lat_ns, extra, interval_ns);
            if skipped.count > 0 {
                self.hist
                    .record_descending(skipped.first_ns, interval_ns, skipped.count);
                self.count += skipped.count;
                self.sum += skipped.sum_ns;
                self.hist_low = self.hist_low.min(skipped.low_ns);
            }
        }
    }
}

/// The collector's bounded series for one thread.
pub struct SeriesBuilder {
    series: WindowSeries,
    shift: u32,
    capacity: usize,
}

/// Points kept per thread before neighbours are merged (at most).
pub const SERIES_CAPACITY: usize = 8192;
/// Points kept per thread when many threads measure (at least).
pub const SERIES_MIN: usize = 1024;
/// Points of all threads' series together, above 64 threads.
pub const SERIES_BUDGET: usize = 1 << 19;
/// Points a series reserves at first: it grows as windows come (on the
/// collector, never a measuring thread), so a short run does not hold a
/// day's worth of points per thread.
const SERIES_RESERVE: usize = 64;

impl SeriesBuilder {
    pub fn new(window_ns: u64, capacity: usize) -> SeriesBuilder {
        let capacity = capacity.max(4) & !1;
        let mut series = WindowSeries {
            window_ns,
            ..Default::default()
        };
        for col in [
            &mut series.count,
            &mut series.min_ns,
            &mut series.avg_ns,
            &mut series.max_ns,
            &mut series.p99_ns,
            &mut series.missed,
        ] {
            col.reserve(SERIES_RESERVE.min(capacity));
        }
        SeriesBuilder {
            series,
            shift: 0,
            capacity,
        }
    }

    pub fn series(&self) -> &WindowSeries {
        &self.series
    }

    pub fn push(&mut self, s: WindowStat) {
        while (s.index >> self.shift) as usize >= self.capacity {
            self.compact();
        }
        let p = (s.index >> self.shift) as usize;
        while self.series.len() <= p {
            self.series.push(WindowPoint::default());
        }
        let w = &mut self.series;
        if s.point.count == 0 {
            return;
        }
        let mut q = w.point(p);
        if q.count != 0 {
            w.compacted = true;
        }
        q.merge(&s.point);
        w.set(p, q);
    }

    /// Merge neighbouring points: half as many, twice as wide.
    fn compact(&mut self) {
        let old = std::mem::take(&mut self.series);
        let mut b = SeriesBuilder::new(old.window_ns * 2, self.capacity);
        b.series.compacted = true;
        for i in 0..old.len() {
            b.push(WindowStat {
                index: (i / 2) as u64,
                point: old.point(i),
            });
        }
        self.series = b.series;
        self.shift += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_acc_rolls_and_resets() {
        let mut w = WindowAcc::new();
        assert!(w.roll(0).is_none());
        for lat in [1000u64, 2000, 3000, 4000] {
            w.add(lat, 0, 1_000_000, true);
        }
        w.add(3_500_000, 3, 1_000_000, true);
        let stat = w.roll(2).unwrap();
        assert_eq!(stat.index, 0);
        let s = stat.point;
        // The stall adds the skipped periods still an interval late.
        assert_eq!(s.count, 7);
        assert_eq!(s.min_ns, 1000);
        assert_eq!(s.max_ns, 3_500_000);
        assert_eq!(s.missed, 3);
        assert_eq!(s.avg_ns, (10_000 + 3_500_000 + 2_500_000 + 1_500_000) / 7);
        // After a roll the accumulator is empty.
        assert!(w.finish().is_none());
        w.add(7, 0, 1_000_000, true);
        assert_eq!(w.finish().unwrap().index, 2);
    }

    /// A window of stalls only: corrected samples lie below the real
    /// minimum, and the histogram is still cleared of them at the roll.
    #[test]
    fn corrected_samples_below_the_window_min_are_cleared() {
        let mut w = WindowAcc::new();
        w.add(3_500_000, 3, 1_000_000, true);
        let s = w.roll(1).unwrap().point;
        assert_eq!((s.count, s.min_ns, s.max_ns), (3, 3_500_000, 3_500_000));
        assert!(s.p99_ns >= s.min_ns && s.p99_ns <= s.max_ns);
        assert_eq!(w.hist.iter_nonzero().count(), 0, "buckets left behind");
        w.add(5_000, 0, 1_000_000, true);
        let s = w.roll(2).unwrap().point;
        assert_eq!((s.count, s.min_ns, s.p99_ns), (1, 5_000, 5_000));
    }

    #[test]
    fn series_fills_gaps_and_stays_bounded() {
        let mut b = SeriesBuilder::new(1_000_000_000, 8);
        let stat = |index, max| WindowStat {
            index,
            point: WindowPoint {
                count: 10,
                min_ns: 1,
                avg_ns: 5,
                max_ns: max,
                p99_ns: max,
                missed: 0,
            },
        };
        b.push(stat(0, 100));
        b.push(stat(3, 400));
        assert_eq!(b.series().count, vec![10, 0, 0, 10]);
        for i in 4..20 {
            b.push(stat(i, 100 * (i + 1)));
        }
        let s = b.series();
        assert!(s.len() <= 8, "{}", s.len());
        assert_eq!(s.window_ns, 4_000_000_000);
        assert!(s.compacted);
        // Nothing is lost: counts add up and the maximum survives.
        assert_eq!(s.count.iter().sum::<u64>(), 18 * 10);
        assert_eq!(*s.max_ns.iter().max().unwrap(), 2000);
        assert_eq!(s.max_ns[0], 400);
    }
}
