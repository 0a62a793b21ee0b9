//! The harness every benchmark runs in: threads pinned to one CPU at
//! SCHED_FIFO (memory is locked once for the whole characterization by
//! `run`), started together behind a barrier so that a thread that could
//! not get its CPU or priority stops the others instead of leaving them
//! waiting; and [`Samples`], the lossless histogram plus exact min, max
//! and sum that each timed call is recorded into. Recording never
//! allocates: the histogram is allocated and prefaulted before the loop.

use super::{BenchResult, CharError, SparseHistogram, Stats};
use crate::histogram::{Histogram, LATENCY_SUB_BITS};
use crate::sys::clock::{Clock, now_ns};
use crate::sys::{mem, sched};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};

/// Values of one timed call, kept losslessly.
pub struct Samples {
    hist: Histogram,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u128,
    count: u64,
    /// Subtracted from every value (the clock's read cost), saturating.
    offset_ns: u64,
}

impl Samples {
    /// An empty, prefaulted collector that subtracts `offset_ns` from
    /// every value it records.
    pub fn new(offset_ns: u64) -> Samples {
        let mut hist = Histogram::new(LATENCY_SUB_BITS);
        hist.prefault();
        Samples {
            hist,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            count: 0,
            offset_ns,
        }
    }

    /// Record one value (before the offset is taken off). HOT PATH: no
    /// allocation.
    #[inline(always)]
    pub fn record(&mut self, raw_ns: u64) {
        let v = raw_ns.saturating_sub(self.offset_ns);
        self.hist.record(v);
        self.min_ns = self.min_ns.min(v);
        self.max_ns = self.max_ns.max(v);
        self.sum_ns += v as u128;
        self.count += 1;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn min_ns(&self) -> u64 {
        if self.count == 0 { 0 } else { self.min_ns }
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    pub fn stats(&self) -> Stats {
        let q = |p: f64| self.hist.quantile(p).unwrap_or(0);
        // Bucket midpoints may fall outside the exact extremes.
        let clamp = |v: u64| v.clamp(self.min_ns(), self.max_ns);
        Stats {
            count: self.count,
            min_ns: self.min_ns(),
            avg_ns: if self.count == 0 {
                0
            } else {
                (self.sum_ns / self.count as u128) as u64
            },
            p50_ns: clamp(q(0.5)),
            p99_ns: clamp(q(0.99)),
            p9999_ns: clamp(q(0.9999)),
            max_ns: self.max_ns,
        }
    }

    pub fn sparse(&self) -> SparseHistogram {
        SparseHistogram {
            sub_bucket_bits: self.hist.sub_bits(),
            buckets: self.hist.iter_nonzero().map(|(l, c)| [l, c]).collect(),
        }
    }

    /// The result row of these samples.
    pub fn result(&self, bench: &str, variant: &str, cpu: usize, what: &str) -> BenchResult {
        BenchResult {
            bench: bench.to_string(),
            variant: variant.to_string(),
            cpu,
            what: what.to_string(),
            subtracted_ns: self.offset_ns,
            stats: self.stats(),
            histogram: self.sparse(),
            noise: None,
            inversion: None,
        }
    }
}

/// Monotonic time now (vDSO).
#[inline(always)]
pub fn now() -> u64 {
    now_ns(Clock::Monotonic)
}

/// Busy the CPU until `until_ns` (monotonic).
#[inline]
pub fn spin_until(until_ns: u64) {
    while now() < until_ns {
        std::hint::spin_loop();
    }
}

/// How long a benchmark may keep its CPU busy before it rests.
pub const BUSY_NS: u64 = 50_000_000;
/// How long it rests: 5 ms in 55 ms is more than the 5 % that RT
/// throttling (`sched_rt_runtime_us` 950000 of 1000000) takes back, so a
/// benchmark's loop is never throttled (a 50 ms gap once a second).
pub const REST_NS: u64 = 5_000_000;

/// Rests between timed calls of a busy benchmark loop (the rests are
/// never inside a timed call).
pub struct Pacer {
    next_ns: u64,
}

impl Pacer {
    pub fn new() -> Pacer {
        Pacer {
            next_ns: now() + BUSY_NS,
        }
    }

    /// Sleep [`REST_NS`] when the loop has been busy [`BUSY_NS`]; `t` is
    /// the loop's last clock read.
    #[inline(always)]
    pub fn rest_if_due(&mut self, t: u64) {
        if t >= self.next_ns {
            let _ = crate::sys::clock::sleep_for_ns(Clock::Monotonic, REST_NS);
            self.next_ns = now() + BUSY_NS;
        }
    }
}

impl Default for Pacer {
    fn default() -> Pacer {
        Pacer::new()
    }
}

/// Time `set(p)` until `end_ns`, `p` alternating between `first` and
/// `other` so that every call changes something (the priority benchmarks),
/// with [`Pacer`] rests between calls. Returns the samples (clock read
/// cost `offset_ns` subtracted) and the value set last.
// HOT PATH: the timed call, clock reads, histogram writes.
pub fn time_alternating(
    offset_ns: u64,
    end_ns: u64,
    first: i32,
    other: i32,
    mut set: impl FnMut(i32) -> Result<(), CharError>,
) -> Result<(Samples, i32), CharError> {
    let mut s = Samples::new(offset_ns);
    let mut pacer = Pacer::new();
    let mut next = first;
    loop {
        let t0 = now();
        set(next)?;
        let t1 = now();
        s.record(t1 - t0);
        next = if next == first { other } else { first };
        if t1 >= end_ns {
            break;
        }
        pacer.rest_if_due(t1);
    }
    let last = if next == first { other } else { first };
    Ok((s, last))
}

/// Pin the calling thread to `cpu` at SCHED_FIFO `priority` and prefault
/// its stack.
pub fn pin_fifo(cpu: usize, priority: i32) -> Result<(), CharError> {
    sched::set_affinity(0, &[cpu]).map_err(|err| CharError::Sys {
        what: format!("pinning a thread to CPU {cpu} (sched_setaffinity)"),
        err,
    })?;
    sched::set_scheduler_current(sched::KernelPolicy::Fifo, priority).map_err(|err| {
        CharError::Sys {
            what: format!(
                "SCHED_FIFO priority {priority} (needs root or CAP_SYS_NICE: run with sudo)"
            ),
            err,
        }
    })?;
    mem::prefault_stack();
    Ok(())
}

/// Threads that start together once each is pinned: `start` returns
/// false in every thread when one of them failed to set itself up.
pub struct Team {
    barrier: Barrier,
    failed: AtomicBool,
}

impl Team {
    pub fn new(threads: usize) -> Team {
        Team {
            barrier: Barrier::new(threads),
            failed: AtomicBool::new(false),
        }
    }

    /// Pin the calling thread, then wait for the others. `Err` when this
    /// thread or another could not be set up.
    pub fn start(&self, cpu: usize, priority: i32) -> Result<(), CharError> {
        let mine = pin_fifo(cpu, priority);
        if mine.is_err() {
            self.failed.store(true, Ordering::SeqCst);
        }
        self.barrier.wait();
        mine?;
        if self.failed.load(Ordering::SeqCst) {
            return Err(CharError::Aborted);
        }
        Ok(())
    }
}

/// Run `body` on one thread pinned to `cpu` at SCHED_FIFO `priority`.
pub fn on_fifo<T: Send>(
    cpu: usize,
    priority: i32,
    body: impl FnOnce() -> Result<T, CharError> + Send,
) -> Result<T, CharError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            pin_fifo(cpu, priority)?;
            body()
        })
        .join()
        .unwrap_or(Err(CharError::Aborted))
    })
}

/// The first error of several threads' results, or their values.
pub fn all<T>(
    results: Vec<std::thread::Result<Result<T, CharError>>>,
) -> Result<Vec<T>, CharError> {
    let mut out = Vec::with_capacity(results.len());
    let mut first: Option<CharError> = None;
    for r in results {
        match r.unwrap_or(Err(CharError::Aborted)) {
            Ok(v) => out.push(v),
            // A real cause wins over "another thread failed".
            Err(CharError::Aborted) => {
                first.get_or_insert(CharError::Aborted);
            }
            Err(e) => {
                if matches!(first, None | Some(CharError::Aborted)) {
                    first = Some(e);
                }
            }
        }
    }
    match first {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The cost of one monotonic clock read on the calling thread: the mean
/// difference of two back-to-back reads (nothing between them), the
/// slowest 1 % left out (interrupts). A mean, not a median: the clock
/// may tick in steps as large as the read itself (10 ns here), and only
/// the mean, subtracted, leaves the averages of timed calls unbiased.
pub fn clock_read_cost_ns(pairs: usize) -> u64 {
    let mut d = Vec::with_capacity(pairs);
    for _ in 0..pairs {
        let t0 = now();
        let t1 = now();
        d.push(t1 - t0);
    }
    trimmed_mean(&mut d)
}

/// Mean of the fastest 99 % of `values`, rounded.
fn trimmed_mean(values: &mut [u64]) -> u64 {
    if values.is_empty() {
        return 0;
    }
    values.sort_unstable();
    let keep = (values.len() * 99).div_ceil(100).max(1);
    let sum: u128 = values[..keep].iter().map(|&v| v as u128).sum();
    ((sum + keep as u128 / 2) / keep as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_keep_exact_extremes_and_subtract_the_offset() {
        let mut s = Samples::new(10);
        for v in [15, 110, 1_000_010, 5] {
            s.record(v);
        }
        let st = s.stats();
        assert_eq!(st.count, 4);
        assert_eq!(st.min_ns, 0);
        assert_eq!(st.max_ns, 1_000_000);
        assert_eq!(st.avg_ns, (5 + 100 + 1_000_000) / 4);
        assert!(st.p50_ns <= st.p99_ns && st.p99_ns <= st.p9999_ns && st.p9999_ns <= st.max_ns);
        let total: u64 = s.sparse().buckets.iter().map(|b| b[1]).sum();
        assert_eq!(total, 4);
    }

    #[test]
    fn trimmed_mean_leaves_out_the_slowest_percent() {
        let mut v: Vec<u64> = (0..99).map(|i| 20 + (i % 2) * 10).collect();
        v.push(1_000_000);
        assert_eq!(trimmed_mean(&mut v), 25);
        assert_eq!(trimmed_mean(&mut []), 0);
    }

    #[test]
    fn empty_samples_are_all_zero() {
        let s = Samples::new(0);
        assert_eq!(s.stats(), Stats::default());
    }
}
