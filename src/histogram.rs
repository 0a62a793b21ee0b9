//! Log-linear latency histograms that never overflow.
//!
//! Every `u64` nanosecond value has a bucket: values below `2^(b+1)` ns get
//! a bucket each (exact), and every power of two above is cut into `2^b`
//! equal buckets, so a bucket is never wider than `1/2^b` of its lower
//! bound. With the default `b = 9` the representative value of a bucket
//! (its midpoint) is within 1/1024 (< 0.1 %) of any value in it, the range
//! is all of `u64` (584 years), and the table is 28 672 counters (224 KiB).
//!
//! [`AtomicHistogram`] is the single-writer table a measuring thread
//! records into while other threads read it; [`Histogram`] is the plain
//! one used for snapshots, merging, quantiles and windows. Recording never
//! allocates.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use thiserror::Error;

/// Why a histogram cannot be rebuilt from its sparse form (a record's
/// buckets).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum HistogramError {
    #[error("sub_bucket_bits {0} is outside 1..=16")]
    Precision(u32),
    #[error("{0} ns is not the start of a bucket")]
    NotBucketStart(u64),
    /// An encoding other than log-linear (from a newer version).
    #[error("unknown histogram encoding '{0}'")]
    Encoding(String),
    /// Bucket counts whose sum does not fit a `u64`.
    #[error("its bucket counts add up to more than {} samples", u64::MAX)]
    TooMany,
}

/// Sub-bucket bits of the main latency histogram (precision 1/1024).
pub const LATENCY_SUB_BITS: u32 = 9;
/// Sub-bucket bits of per-window histograms (precision 1/64, 15 KiB).
pub const WINDOW_SUB_BITS: u32 = 5;

/// Number of buckets for `sub_bits`.
pub const fn bucket_count(sub_bits: u32) -> usize {
    ((65 - sub_bits) as usize) << sub_bits
}

/// Index of the bucket that holds `v`.
#[inline(always)]
pub fn bucket_index(v: u64, sub_bits: u32) -> usize {
    let s = 1u64 << sub_bits;
    if v < s {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let shift = e - sub_bits;
    ((shift as usize) << sub_bits) + (v >> shift) as usize
}

/// Lowest value of bucket `i`.
#[inline]
pub fn bucket_lower(i: usize, sub_bits: u32) -> u64 {
    let s = 1usize << sub_bits;
    if i < 2 * s {
        return i as u64;
    }
    let shift = (i >> sub_bits) - 1;
    let mant = (i & (s - 1)) + s;
    (mant as u64) << shift
}

/// Width of bucket `i` (1 for the exact buckets).
#[inline]
pub fn bucket_width(i: usize, sub_bits: u32) -> u64 {
    let s = 1usize << sub_bits;
    if i < 2 * s {
        1
    } else {
        1u64 << ((i >> sub_bits) - 1)
    }
}

/// Highest value of bucket `i` (inclusive).
#[inline]
pub fn bucket_upper(i: usize, sub_bits: u32) -> u64 {
    bucket_lower(i, sub_bits).saturating_add(bucket_width(i, sub_bits) - 1)
}

/// The value reported for bucket `i`: its midpoint (exact buckets: the
/// value itself).
#[inline]
pub fn bucket_value(i: usize, sub_bits: u32) -> u64 {
    let w = bucket_width(i, sub_bits);
    bucket_lower(i, sub_bits) + w / 2
}

/// Record the descending arithmetic run `first, first-step, …` (`n`
/// values, all ≥ 0) through `add(bucket, count)`. The work is bounded by
/// the number of buckets touched plus ~`2^(b+1)`, whatever `n` is: this is
/// how a long stall's missed periods are all recorded in bounded time.
#[inline]
fn for_descending_run(
    first: u64,
    step: u64,
    n: u64,
    sub_bits: u32,
    mut add: impl FnMut(usize, u64),
) {
    if n == 0 {
        return;
    }
    if step == 0 {
        add(bucket_index(first, sub_bits), n);
        return;
    }
    let mut v = first;
    let mut left = n;
    while left > 0 {
        let i = bucket_index(v, sub_bits);
        let lo = bucket_lower(i, sub_bits);
        // Values v, v-step, … that stay ≥ lo are in this bucket.
        let in_bucket = ((v - lo) / step + 1).min(left);
        add(i, in_bucket);
        left -= in_bucket;
        if left == 0 {
            break;
        }
        v -= in_bucket * step;
    }
}

/// A plain histogram: snapshots, merges, windows, quantiles.
///
/// A snapshot ([`AtomicHistogram::snapshot`]) keeps its table only up to
/// its last non-empty bucket (a thread whose worst case is 1 ms needs 6 144
/// of the 28 672 counters): at the end of a run every thread's snapshot is
/// held at once, beside its live table. Every method reads the missing
/// buckets as empty; recording or merging into a short table first grows
/// it to its full size (a histogram made by [`Histogram::new`] is full and
/// never grows).
#[derive(Clone, Debug)]
pub struct Histogram {
    sub_bits: u32,
    counts: Box<[u64]>,
    total: u64,
}

/// Equal when they hold the same counts, whatever the length of their
/// tables (a short table's missing buckets are empty).
impl PartialEq for Histogram {
    fn eq(&self, other: &Histogram) -> bool {
        let (short, long) = if self.counts.len() <= other.counts.len() {
            (&self.counts, &other.counts)
        } else {
            (&other.counts, &self.counts)
        };
        self.sub_bits == other.sub_bits
            && self.total == other.total
            && long[..short.len()] == short[..]
            && long[short.len()..].iter().all(|c| *c == 0)
    }
}

impl Eq for Histogram {}

impl Histogram {
    /// An empty histogram; all memory is allocated here, never later.
    pub fn new(sub_bits: u32) -> Histogram {
        assert!((1..=16).contains(&sub_bits), "sub_bits out of range");
        Histogram {
            sub_bits,
            counts: vec![0u64; bucket_count(sub_bits)].into_boxed_slice(),
            total: 0,
        }
    }

    pub fn latency() -> Histogram {
        Histogram::new(LATENCY_SUB_BITS)
    }

    /// Grow a snapshot's short table to the full one, before anything is
    /// recorded into it. Never taken by a histogram made by `new`.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let mut full = vec![0u64; bucket_count(self.sub_bits)];
        full[..self.counts.len()].copy_from_slice(&self.counts);
        self.counts = full.into_boxed_slice();
    }

    fn is_full(&self) -> bool {
        self.counts.len() == bucket_count(self.sub_bits)
    }

    pub fn sub_bits(&self) -> u32 {
        self.sub_bits
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Write every page so the table is resident (used before a hot loop).
    pub fn prefault(&mut self) {
        let step = 512;
        let mut i = 0;
        while i < self.counts.len() {
            self.counts[i] = std::hint::black_box(self.counts[i]);
            i += step;
        }
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.record_n(v, 1);
    }

    #[inline]
    pub fn record_n(&mut self, v: u64, n: u64) {
        let i = bucket_index(v, self.sub_bits);
        if i >= self.counts.len() {
            self.grow();
        }
        self.counts[i] += n;
        self.total += n;
    }

    /// Record `first, first-step, …` (`n` values); see [`for_descending_run`].
    #[inline]
    pub fn record_descending(&mut self, first: u64, step: u64, n: u64) {
        if !self.is_full() {
            self.grow();
        }
        let counts = &mut self.counts;
        for_descending_run(first, step, n, self.sub_bits, |i, c| counts[i] += c);
        self.total += n;
    }

    /// Add `other` into `self`. Histograms of different precision are
    /// merged by re-recording `other`'s bucket values.
    pub fn merge(&mut self, other: &Histogram) {
        if other.sub_bits == self.sub_bits {
            if other.counts.len() > self.counts.len() {
                self.grow();
            }
            for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
                *a += *b;
            }
            self.total += other.total;
        } else {
            for (lower, count) in other.iter_nonzero() {
                let i = bucket_index(lower, other.sub_bits);
                self.record_n(bucket_value(i, other.sub_bits), count);
            }
        }
    }

    /// Reset only buckets `lo..=hi` (the caller knows nothing lies
    /// outside), bounded work for windows.
    #[inline]
    pub fn clear_range(&mut self, lo_value: u64, hi_value: u64) {
        let lo = bucket_index(lo_value, self.sub_bits);
        let hi = bucket_index(hi_value, self.sub_bits).min(self.counts.len().saturating_sub(1));
        if let Some(range) = self.counts.get_mut(lo..=hi) {
            range.iter_mut().for_each(|c| *c = 0);
        }
        self.total = 0;
    }

    /// The value at quantile `q` (0 < q ≤ 1): the representative value of
    /// the bucket holding the sample of rank ⌈q·total⌉. `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        self.quantile_in(q, 0, self.counts.len().saturating_sub(1))
    }

    /// Like [`Histogram::quantile`], scanning only the buckets of
    /// `lo_value..=hi_value` (the caller knows nothing lies outside).
    #[inline]
    pub fn quantile_between(&self, q: f64, lo_value: u64, hi_value: u64) -> Option<u64> {
        self.quantile_in(
            q,
            bucket_index(lo_value, self.sub_bits),
            bucket_index(hi_value, self.sub_bits),
        )
    }

    #[inline]
    fn quantile_in(&self, q: f64, lo: usize, hi: usize) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = rank_for(q, self.total);
        let mut seen = 0u64;
        for i in lo..=hi.min(self.counts.len().saturating_sub(1)) {
            seen += self.counts[i];
            if seen >= rank {
                return Some(bucket_value(i, self.sub_bits));
            }
        }
        Some(bucket_value(hi, self.sub_bits))
    }

    /// Non-empty buckets, ascending: `(lower_ns, count)`.
    pub fn iter_nonzero(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let b = self.sub_bits;
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(move |(i, c)| (bucket_lower(i, b), *c))
    }

    /// Non-empty buckets with their bounds: `(lower_ns, upper_ns incl., count)`.
    pub fn iter_buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        let b = self.sub_bits;
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(move |(i, c)| (bucket_lower(i, b), bucket_upper(i, b), *c))
    }

    /// Number of recorded values strictly greater than `v` (bucket
    /// resolution: a bucket counts when its lower bound is above `v`).
    pub fn count_above(&self, v: u64) -> u64 {
        let i = bucket_index(v, self.sub_bits);
        self.counts.get(i + 1..).map_or(0, |c| c.iter().sum())
    }

    /// Rebuild from sparse `(lower_ns, count)` pairs; each lower bound must
    /// be the start of a bucket of this precision, and the counts must add
    /// up within a `u64` (checked: a record's counts are input).
    pub fn from_sparse(sub_bits: u32, buckets: &[(u64, u64)]) -> Result<Histogram, HistogramError> {
        if !(1..=16).contains(&sub_bits) {
            return Err(HistogramError::Precision(sub_bits));
        }
        let mut h = Histogram::new(sub_bits);
        for &(lower, count) in buckets {
            let i = bucket_index(lower, sub_bits);
            if bucket_lower(i, sub_bits) != lower {
                return Err(HistogramError::NotBucketStart(lower));
            }
            // The total bounds every bucket: one check covers both.
            h.total = h.total.checked_add(count).ok_or(HistogramError::TooMany)?;
            h.counts[i] += count;
        }
        Ok(h)
    }
}

/// 1-based rank of quantile `q` among `total` samples.
#[inline]
/// The rank (1-based, in ascending order) of the `q` quantile of `total`
/// samples: the one rule of every quantile read from samples.
pub fn rank_for(q: f64, total: u64) -> u64 {
    let r = (q * total as f64).ceil() as u64;
    r.clamp(1, total)
}

/// A histogram one thread writes while others read: each counter is an
/// atomic written with plain load + store (no locked instruction), which
/// is sound for a single writer. Readers get a snapshot that may be a few
/// samples behind; after the writer stops it is exact.
pub struct AtomicHistogram {
    sub_bits: u32,
    counts: Box<[AtomicU64]>,
}

impl AtomicHistogram {
    pub fn new(sub_bits: u32) -> AtomicHistogram {
        let counts: Vec<AtomicU64> = (0..bucket_count(sub_bits))
            .map(|_| AtomicU64::new(0))
            .collect();
        AtomicHistogram {
            sub_bits,
            counts: counts.into_boxed_slice(),
        }
    }

    /// Store to every page so the table is resident.
    pub fn prefault(&self) {
        let mut i = 0;
        while i < self.counts.len() {
            self.counts[i].store(self.counts[i].load(Relaxed), Relaxed);
            i += 512;
        }
    }

    /// Single writer only.
    #[inline(always)]
    pub fn record_n(&self, v: u64, n: u64) {
        let c = &self.counts[bucket_index(v, self.sub_bits)];
        c.store(c.load(Relaxed) + n, Relaxed);
    }

    /// Single writer only; see [`for_descending_run`].
    #[inline]
    pub fn record_descending(&self, first: u64, step: u64, n: u64) {
        let counts = &self.counts;
        for_descending_run(first, step, n, self.sub_bits, |i, k| {
            counts[i].store(counts[i].load(Relaxed) + k, Relaxed)
        });
    }

    /// Copy the current counts into `out` (same precision), without
    /// allocating.
    pub fn snapshot_into(&self, out: &mut Histogram) {
        assert_eq!(out.sub_bits, self.sub_bits);
        if !out.is_full() {
            out.grow();
        }
        let mut total = 0;
        for (o, c) in out.counts.iter_mut().zip(self.counts.iter()) {
            *o = c.load(Relaxed);
            total += *o;
        }
        out.total = total;
    }

    /// The counts now, in a table that ends at the last non-empty bucket
    /// (see [`Histogram`]). A value recorded meanwhile beyond that bucket
    /// is left out, as one recorded into a bucket already copied would be:
    /// the snapshot's total is the sum of the counts it holds.
    pub fn snapshot(&self) -> Histogram {
        let used = self
            .counts
            .iter()
            .rposition(|c| c.load(Relaxed) > 0)
            .map_or(0, |i| i + 1);
        let counts: Box<[u64]> = self.counts[..used]
            .iter()
            .map(|c| c.load(Relaxed))
            .collect();
        Histogram {
            sub_bits: self.sub_bits,
            total: counts.iter().sum(),
            counts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_ends_at_its_last_bucket_and_behaves_as_the_full_table() {
        let a = AtomicHistogram::new(LATENCY_SUB_BITS);
        let mut full = Histogram::latency();
        for v in [0, 900, 5_000, 20_000, 1_000_000] {
            a.record_n(v, 3);
            full.record_n(v, 3);
        }
        let snap = a.snapshot();
        // Up to the bucket of 1 ms: 6 145 of 28 672 counters.
        assert_eq!(
            snap.counts.len(),
            bucket_index(1_000_000, LATENCY_SUB_BITS) + 1
        );
        assert!(snap.counts.len() < bucket_count(LATENCY_SUB_BITS) / 4);
        assert_eq!(snap, full);
        assert_eq!(full, snap);
        assert_eq!(snap.total(), 15);
        for q in [0.1, 0.5, 0.99, 1.0] {
            assert_eq!(snap.quantile(q), full.quantile(q));
        }
        assert_eq!(
            snap.quantile_between(0.5, 0, u64::MAX),
            full.quantile_between(0.5, 0, u64::MAX)
        );
        assert_eq!(snap.count_above(10_000_000), 0);
        assert_eq!(snap.count_above(u64::MAX - 1), 0);
        assert_eq!(snap.count_above(10_000), 6);
        assert!(snap.iter_nonzero().eq(full.iter_nonzero()));
        // Recording or merging past its end grows it, counts kept.
        let mut grown = snap.clone();
        grown.record(1 << 40);
        full.record(1 << 40);
        assert_eq!(grown, full);
        let mut merged = a.snapshot();
        merged.merge(&full);
        assert_eq!(merged.total(), 15 + 16);
        assert_eq!(merged.count_above(1 << 39), 1);
        assert_eq!(
            merged.quantile(1.0),
            Some(bucket_value(bucket_index(1 << 40, 9), 9))
        );
        let mut short = a.snapshot();
        short.record_descending(2_000_000, 1_000, 4);
        assert_eq!(short.total(), 19);
        let mut cleared = a.snapshot();
        cleared.clear_range(0, u64::MAX);
        assert!(cleared.iter_nonzero().next().is_none());
        // An empty table's snapshot holds nothing, and is empty.
        let empty = AtomicHistogram::new(LATENCY_SUB_BITS).snapshot();
        assert!(empty.counts.is_empty() && empty.is_empty());
        assert_eq!(empty, Histogram::latency());
        assert_eq!(empty.quantile(0.5), None);
        assert_ne!(empty, snap);
        // snapshot_into a short table fills the full one.
        let mut out = AtomicHistogram::new(LATENCY_SUB_BITS).snapshot();
        a.snapshot_into(&mut out);
        assert_eq!(out, a.snapshot());
    }

    #[test]
    fn index_bounds_are_consistent_over_the_whole_range() {
        for b in [1, 5, 9, 12] {
            let n = bucket_count(b);
            assert_eq!(bucket_index(u64::MAX, b), n - 1);
            assert_eq!(bucket_upper(n - 1, b), u64::MAX);
            for i in 0..n - 1 {
                assert_eq!(
                    bucket_upper(i, b) + 1,
                    bucket_lower(i + 1, b),
                    "b={b} i={i}"
                );
                assert_eq!(bucket_index(bucket_lower(i, b), b), i);
                assert_eq!(bucket_index(bucket_upper(i, b), b), i);
            }
        }
    }

    #[test]
    fn relative_error_is_below_one_per_mille() {
        let b = LATENCY_SUB_BITS;
        let mut v = 1u64;
        while v < u64::MAX / 3 {
            for probe in [v, v + v / 3, v * 2 - 1] {
                let rep = bucket_value(bucket_index(probe, b), b);
                let err = (rep as f64 - probe as f64).abs() / probe as f64;
                assert!(err <= 1.0 / 1000.0, "v={probe} rep={rep} err={err}");
            }
            v *= 2;
        }
        // Below 1024 ns every value is exact.
        for v in 0..1024 {
            assert_eq!(bucket_value(bucket_index(v, b), b), v);
        }
    }

    #[test]
    fn quantiles_match_exact_values_within_precision() {
        // A deterministic spread over 6 decades (xorshift).
        let mut x: u64 = 0x9E3779B97F4A7C15;
        let mut values = Vec::new();
        let mut h = Histogram::latency();
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = 500 + (x % 1000) * 10u64.pow((x % 6) as u32);
            values.push(v);
            h.record(v);
        }
        values.sort_unstable();
        for q in [0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            let rank = rank_for(q, values.len() as u64) as usize;
            let exact = values[rank - 1];
            let got = h.quantile(q).unwrap();
            let err = (got as f64 - exact as f64).abs() / exact as f64;
            assert!(err <= 0.001, "q={q} exact={exact} got={got}");
        }
        assert_eq!(h.total(), 200_000);
    }

    #[test]
    fn extremes_never_overflow() {
        let mut h = Histogram::latency();
        h.record(0);
        h.record(u64::MAX);
        h.record(60 * 1_000_000_000);
        assert_eq!(h.total(), 3);
        assert_eq!(
            h.quantile(1.0).unwrap(),
            bucket_value(bucket_count(LATENCY_SUB_BITS) - 1, LATENCY_SUB_BITS)
        );
        assert_eq!(h.quantile(0.01).unwrap(), 0);
    }

    #[test]
    fn merge_same_and_different_precision() {
        let mut a = Histogram::latency();
        let mut b = Histogram::latency();
        a.record_n(1000, 3);
        b.record_n(5_000_000, 2);
        a.merge(&b);
        assert_eq!(a.total(), 5);
        assert_eq!(a.count_above(1000), 2);
        let mut w = Histogram::new(WINDOW_SUB_BITS);
        w.record_n(700, 4);
        a.merge(&w);
        assert_eq!(a.total(), 9);
    }

    #[test]
    fn descending_run_equals_one_by_one() {
        for (first, step, n) in [
            (25_000_000u64, 1_000_000u64, 25u64),
            (3_600_000_000_000, 100_000, 36_000_000),
            (999, 7, 100),
            (5, 0, 4),
        ] {
            let mut fast = Histogram::latency();
            fast.record_descending(first, step, n);
            assert_eq!(fast.total(), n);
            if n <= 1_000_000 {
                let mut slow = Histogram::latency();
                for j in 0..n {
                    slow.record(first - j * step);
                }
                assert_eq!(fast, slow);
            } else {
                // Spot-check against arithmetic, to the resolution of the
                // bucket holding the probe.
                let probe = first / 2;
                let above_half = fast.count_above(probe);
                let expect = (first - probe) / step; // values > probe
                let slack = bucket_width(bucket_index(probe, LATENCY_SUB_BITS), LATENCY_SUB_BITS)
                    / step
                    + 1;
                assert!(
                    above_half.abs_diff(expect) <= slack,
                    "{above_half} vs {expect} (slack {slack})"
                );
            }
        }
    }

    #[test]
    fn atomic_snapshot_and_sparse_round_trip() {
        let a = AtomicHistogram::new(LATENCY_SUB_BITS);
        a.record_n(12_345, 2);
        a.record_descending(10_000_000, 1_000_000, 10);
        let h = a.snapshot();
        assert_eq!(h.total(), 12);
        let sparse: Vec<(u64, u64)> = h.iter_nonzero().collect();
        let back = Histogram::from_sparse(LATENCY_SUB_BITS, &sparse).unwrap();
        assert_eq!(back, h);
        assert_eq!(
            Histogram::from_sparse(LATENCY_SUB_BITS, &[(1_000_001, 1)]),
            Err(HistogramError::NotBucketStart(1_000_001))
        );
        assert_eq!(
            Histogram::from_sparse(17, &[]),
            Err(HistogramError::Precision(17))
        );
        // Counts that add past 2^64 are refused, not wrapped.
        let half = 1u64 << 63;
        assert_eq!(
            Histogram::from_sparse(LATENCY_SUB_BITS, &[(1000, half), (2000, half)]),
            Err(HistogramError::TooMany)
        );
        assert_eq!(
            Histogram::from_sparse(LATENCY_SUB_BITS, &[(1000, u64::MAX), (1000, 1)]),
            Err(HistogramError::TooMany)
        );
        let full = Histogram::from_sparse(LATENCY_SUB_BITS, &[(1000, u64::MAX)]).unwrap();
        assert_eq!(full.total(), u64::MAX);
    }

    #[test]
    fn window_quantile_between_and_clear_range() {
        let mut w = Histogram::new(WINDOW_SUB_BITS);
        for v in [100u64, 200, 300, 400, 50_000] {
            w.record(v);
        }
        let p = w.quantile_between(0.8, 100, 50_000).unwrap();
        assert!((390..=410).contains(&p), "{p}");
        w.clear_range(100, 50_000);
        assert!(w.is_empty());
        assert!(w.iter_nonzero().next().is_none());
    }
}
