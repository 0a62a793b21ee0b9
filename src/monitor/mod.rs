//! `rtscope monitor`: measuring without end, one window at a time.
//!
//! [`WindowRoller`] is an engine observer (control thread only) that, at
//! each window boundary (multiples of the window on the wall clock, 5 min
//! by default as OSADL does), copies each thread's shared statistics,
//! takes the difference with the copy of the previous boundary, and
//! stores that window (summary and histogram) in the store, then applies
//! the retention. Windows are contiguous: every sample lands in exactly
//! one window. A window is in the store once it is over, so a `kill -9`
//! loses at most the window under way; the run's own checkpoints keep the
//! run's totals as `measure` does.
//!
//! Never touches a measuring thread; a store that cannot be written is
//! reported once and retried at the next window (the windows wait).

use crate::engine::shared::{SharedStats, StatsSnapshot};
use crate::engine::{Control, Observer, Plan, RunView};
use crate::histogram::{Histogram, LATENCY_SUB_BITS, WINDOW_SUB_BITS};
use crate::record::HistogramRecord;
use crate::store::Store;
use crate::store::codec;
use crate::store::windows::WindowRow;
use std::sync::Arc;

/// What a monitor is called and how long it keeps what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MonitorConfig {
    /// A restart with the same name (on the same host) continues it.
    pub name: String,
    pub host: String,
    pub window_ns: u64,
    /// Windows keep their histogram this long after they end.
    pub keep_histograms_ns: u64,
    /// Windows (summaries) are deleted this long after they end.
    pub keep_windows_ns: u64,
}

/// The end of the window that holds `now`: the next multiple of `window`.
pub fn next_boundary(now_unix_ns: u64, window_ns: u64) -> u64 {
    let w = window_ns.max(1);
    (now_unix_ns / w + 1) * w
}

/// The window between two snapshots of one thread (`before` taken at the
/// window's start, `after` at its end). `None` when it holds no sample.
pub fn window_between(
    before: &StatsSnapshot,
    after: &StatsSnapshot,
) -> Option<(Histogram, WindowSummary)> {
    let mut prev = before.hist.iter_nonzero().peekable();
    let mut pairs = Vec::new();
    for (lower, c) in after.hist.iter_nonzero() {
        while prev.peek().is_some_and(|&(l, _)| l < lower) {
            prev.next();
        }
        let was = match prev.peek() {
            Some(&(l, pc)) if l == lower => pc,
            _ => 0,
        };
        if c > was {
            pairs.push((lower, c - was));
        }
    }
    let fine = Histogram::from_sparse(LATENCY_SUB_BITS, &pairs).ok()?;
    let samples = fine.total();
    if samples == 0 {
        return None;
    }
    let top = pairs.last().map(|&(l, _)| {
        let i = crate::histogram::bucket_index(l, LATENCY_SUB_BITS);
        crate::histogram::bucket_upper(i, LATENCY_SUB_BITS)
    });
    // A new run maximum happened in this window: it is exact.
    let max_ns = match (before.max_ns, after.max_ns) {
        (b, Some(a)) if b.is_none_or(|b| a > b) => Some(a),
        (_, a) => top.map(|t| a.map_or(t, |a| t.min(a))),
    };
    let sum = after.sum_ns.saturating_sub(before.sum_ns);
    let summary = WindowSummary {
        samples,
        wakeups: after.wakeups.saturating_sub(before.wakeups),
        missed: after.missed.saturating_sub(before.missed),
        min_ns: pairs.first().map(|&(l, _)| l),
        avg_ns: Some((sum / samples as u128) as u64),
        p99_ns: fine.quantile(0.99),
        max_ns,
    };
    let mut coarse = Histogram::new(WINDOW_SUB_BITS);
    for &(l, c) in &pairs {
        coarse.record_n(l, c);
    }
    Some((coarse, summary))
}

/// The numbers of one window of one thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowSummary {
    pub samples: u64,
    pub wakeups: u64,
    pub missed: u64,
    pub min_ns: Option<u64>,
    pub avg_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
}

/// Stores the monitor's windows as the run goes.
pub struct WindowRoller {
    store: Store,
    cfg: MonitorConfig,
    run_uuid: String,
    threads: Vec<(u32, Option<u32>)>,
    stats: Vec<Arc<SharedStats>>,
    before: Vec<StatsSnapshot>,
    start_unix_ns: u64,
    boundary_unix_ns: u64,
    pending: Vec<WindowRow>,
    failing: bool,
    notices: Vec<String>,
    /// Windows stored so far: spans of time, each a row per thread (the
    /// count the log's window lines add up to).
    pub stored: u64,
    /// Print one line per window to standard error ([`window_line`]).
    pub log: bool,
}

/// The line a monitor logs for each window (all its threads together):
/// when it began and how long it was, then the smallest, average and
/// largest latency and the missed periods,
/// `window 2026-11-25 16:40:00 UTC +5m00s: min 2.1 µs, avg 4.5 µs, max 48.2 µs (CPU 1), 0 missed`.
/// `None` when no thread has a sample in it.
pub fn window_line(
    start_unix_ns: u64,
    end_unix_ns: u64,
    windows: &[(Option<u32>, WindowSummary)],
) -> Option<String> {
    use crate::text::num::latency;
    let samples: u64 = windows.iter().map(|(_, w)| w.samples).sum();
    if samples == 0 {
        return None;
    }
    let min = windows.iter().filter_map(|(_, w)| w.min_ns).min();
    let sum: u128 = windows
        .iter()
        .map(|(_, w)| u128::from(w.avg_ns.unwrap_or(0)) * u128::from(w.samples))
        .sum();
    let avg = (sum / u128::from(samples)) as u64;
    let top = windows
        .iter()
        .filter(|(_, w)| w.max_ns.is_some())
        .max_by_key(|(_, w)| w.max_ns);
    let missed: u64 = windows.iter().map(|(_, w)| w.missed).sum();
    let max = match top {
        Some((cpu, w)) => {
            let at = match (cpu, windows.len() > 1) {
                (Some(c), true) => format!(" (CPU {c})"),
                _ => String::new(),
            };
            format!("{}{at}", latency(w.max_ns.unwrap_or(0)))
        }
        None => "-".into(),
    };
    Some(format!(
        "window {} +{}: min {}, avg {}, max {max}, {} missed",
        crate::units::fmt_unix_utc(start_unix_ns),
        crate::units::fmt_duration(end_unix_ns.saturating_sub(start_unix_ns)),
        min.map(latency).unwrap_or_else(|| "-".into()),
        latency(avg),
        crate::text::num::count(missed),
    ))
}

impl WindowRoller {
    pub fn new(store: Store, cfg: MonitorConfig, plan: &Plan, run_uuid: &str) -> WindowRoller {
        WindowRoller {
            store,
            cfg,
            run_uuid: run_uuid.to_string(),
            threads: plan
                .threads
                .iter()
                .map(|t| (t.index as u32, t.cpu.map(|c| c as u32)))
                .collect(),
            stats: Vec::new(),
            before: Vec::new(),
            start_unix_ns: 0,
            boundary_unix_ns: u64::MAX,
            pending: Vec::new(),
            failing: false,
            notices: Vec::new(),
            stored: 0,
            log: false,
        }
    }

    /// Close the window at `end_unix_ns` and store what is pending.
    fn roll(&mut self, end_unix_ns: u64) {
        let mut summaries = Vec::with_capacity(self.stats.len());
        for (k, s) in self.stats.iter().enumerate() {
            let after = s.snapshot();
            if let Some((hist, w)) = window_between(&self.before[k], &after) {
                summaries.push((self.threads[k].1, w));
                let rec = HistogramRecord {
                    encoding: "log-linear".into(),
                    sub_bucket_bits: WINDOW_SUB_BITS,
                    resolution_ns: 1,
                    buckets: hist.iter_nonzero().map(|(l, c)| [l, c]).collect(),
                };
                let (thread, cpu) = self.threads[k];
                self.pending.push(WindowRow {
                    monitor: self.cfg.name.clone(),
                    host: self.cfg.host.clone(),
                    run_uuid: self.run_uuid.clone(),
                    thread,
                    cpu,
                    start_unix_ns: self.start_unix_ns,
                    end_unix_ns,
                    samples: w.samples,
                    wakeups: w.wakeups,
                    missed: w.missed,
                    min_ns: w.min_ns,
                    avg_ns: w.avg_ns,
                    p99_ns: w.p99_ns,
                    max_ns: w.max_ns,
                    histogram: codec::encode_histogram(&rec)
                        .ok()
                        .map(|b| (WINDOW_SUB_BITS, b)),
                });
            }
            self.before[k] = after;
        }
        // On the control thread, never a measuring one.
        if self.log
            && let Some(line) = window_line(self.start_unix_ns, end_unix_ns, &summaries)
        {
            eprintln!("rtscope: {line}");
        }
        self.start_unix_ns = end_unix_ns;
        self.boundary_unix_ns = next_boundary(end_unix_ns, self.cfg.window_ns);
        self.flush(end_unix_ns);
    }

    fn flush(&mut self, now_unix_ns: u64) {
        if self.pending.is_empty() {
            return;
        }
        let saved = self.store.insert_windows(&self.pending).and_then(|n| {
            self.store.prune_windows(
                &self.cfg.name,
                &self.cfg.host,
                now_unix_ns,
                self.cfg.keep_histograms_ns,
                self.cfg.keep_windows_ns,
            )?;
            Ok(n)
        });
        match saved {
            Ok(_) => {
                let windows: std::collections::BTreeSet<u64> =
                    self.pending.iter().map(|r| r.start_unix_ns).collect();
                self.stored += windows.len() as u64;
                self.pending.clear();
                if self.failing {
                    self.failing = false;
                    self.notices
                        .push("monitor windows are saved again".to_string());
                }
            }
            Err(e) => {
                if !self.failing {
                    self.notices.push(format!(
                        "monitor windows could not be saved ({e}); kept in memory and retried at the next window"
                    ));
                }
                self.failing = true;
            }
        }
    }
}

impl Observer for WindowRoller {
    fn started(&mut self, view: &RunView) {
        self.stats = (0..view.thread_count())
            .map(|i| view.stats_handle(i))
            .collect();
        self.before = self.stats.iter().map(|s| s.snapshot()).collect();
        let now = crate::sys::clock::unix_now_ns();
        self.start_unix_ns = now;
        self.boundary_unix_ns = next_boundary(now, self.cfg.window_ns);
    }

    fn tick(&mut self, _view: &RunView) -> Control {
        let now = crate::sys::clock::unix_now_ns();
        if now >= self.boundary_unix_ns {
            self.roll(now);
        }
        Control::Continue
    }

    /// The last window, cut short by the end of the run (its counts are
    /// exact: the threads have stopped).
    fn ended(&mut self) {
        if !self.stats.is_empty() {
            self.roll(crate::sys::clock::unix_now_ns());
        }
    }

    fn notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_are_multiples_of_the_window() {
        assert_eq!(next_boundary(0, 300), 300);
        assert_eq!(next_boundary(299, 300), 300);
        assert_eq!(next_boundary(300, 300), 600);
    }

    #[test]
    fn a_window_is_one_line_of_all_threads() {
        let w = |min, avg, max, missed, samples| WindowSummary {
            samples,
            wakeups: samples,
            missed,
            min_ns: Some(min),
            avg_ns: Some(avg),
            p99_ns: None,
            max_ns: Some(max),
        };
        let start = 1_764_088_800_000_000_000; // 2025-11-25 16:40:00 UTC
        let line = window_line(
            start,
            start + 300_000_000_000,
            &[
                (Some(0), w(2_000, 4_000, 30_000, 0, 100)),
                (Some(1), w(3_000, 6_000, 48_200, 2, 100)),
            ],
        )
        .unwrap();
        assert_eq!(
            line,
            "window 2025-11-25 16:40:00 UTC +5m00s: min 2.0 µs, avg 5.0 µs, max 48.2 µs (CPU 1), 2 missed"
        );
        assert!(window_line(start, start + 1, &[]).is_none());
    }

    #[test]
    fn a_window_is_the_difference_of_two_snapshots() {
        let s = SharedStats::new();
        s.record_wakeup(10_000, 0, 1_000_000, 0, true);
        s.record_wakeup(50_000, 0, 1_000_000, 1, true);
        let before = s.snapshot();
        assert!(window_between(&before, &s.snapshot()).is_none());
        s.record_wakeup(20_000, 0, 1_000_000, 2, true);
        s.record_wakeup(30_000, 0, 1_000_000, 3, true);
        s.record_wakeup(3_500_000, 3, 1_000_000, 4, true);
        let after = s.snapshot();
        let (h, w) = window_between(&before, &after).unwrap();
        // 3 wake-ups, 2 corrected samples (2.5 ms and 1.5 ms).
        assert_eq!((w.wakeups, w.missed, w.samples, h.total()), (3, 3, 5, 5));
        assert_eq!(w.max_ns, Some(3_500_000));
        assert_eq!(w.min_ns, Some(20_000));
        let s2 = SharedStats::new();
        s2.record_wakeup(90_000, 0, 1_000_000, 0, true);
        let b2 = s2.snapshot();
        s2.record_wakeup(40_000, 0, 1_000_000, 1, true);
        let (_, w2) = window_between(&b2, &s2.snapshot()).unwrap();
        // Not a new run maximum: the window's top bucket, within 0.2 %.
        let m = w2.max_ns.unwrap();
        assert!((40_000..=40_080).contains(&m), "{m}");
    }
}
