//! How a run record is laid out in the store, and back: the record
//! without its per-thread bulk ("head", JSON), each thread's histogram as
//! a compact blob, its outliers as JSON, its window series as rows. The
//! split is lossless: joining the parts gives the record back, equal.
//!
//! Histogram blob, version 1: `[1][sub_bucket_bits][n: varint]` then `n`
//! pairs `(bucket index delta: varint, count: varint)`, ascending; varints
//! are LEB128. A day-long histogram is a few kilobytes.

use crate::histogram::{bucket_index, bucket_lower};
use crate::record::{HistogramRecord, Outlier, RunRecord, WindowSeries};
use thiserror::Error;

const BLOB_VERSION: u8 = 1;

/// Why a histogram cannot be stored as a blob, or a blob read back.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum BlobError {
    #[error("histogram encoding '{0}' cannot be stored")]
    Encoding(String),
    #[error("sub_bucket_bits {0} is outside 1..=16")]
    Precision(u32),
    #[error("{0} ns is not the start of a bucket")]
    NotBucketStart(u64),
    #[error("histogram buckets are not ascending")]
    NotAscending,
    #[error("histogram blob version {0} is unknown")]
    Version(u8),
    #[error("histogram blob is empty")]
    Empty,
    #[error("histogram blob is truncated")]
    Truncated,
    #[error("histogram blob has {blob} sub-bucket bits, the record says {record}")]
    PrecisionMismatch { blob: u32, record: u32 },
    #[error("histogram blob claims {0} buckets")]
    TooManyBuckets(u64),
    #[error("histogram blob repeats a bucket")]
    RepeatedBucket,
    #[error("histogram blob has a bucket out of range")]
    BucketOutOfRange,
    #[error("histogram blob has trailing bytes")]
    TrailingBytes,
    #[error("histogram blob ends in the middle of a number")]
    CutNumber,
    #[error("histogram blob holds a number longer than 64 bits")]
    LongNumber,
}

/// The per-thread bulk of a record: histogram buckets, outliers, window
/// series (stored apart from the head).
pub struct Bulk(Vec<(Vec<[u64; 2]>, Vec<Outlier>, WindowSeries)>);

/// Take the bulk out of `rec`, leaving its head (window series keep their
/// window length and compaction flag). Moves, never copies: a checkpoint
/// of 64 day-long threads does not copy their 30 MB.
pub fn take_bulk(rec: &mut RunRecord) -> Bulk {
    Bulk(
        rec.threads
            .iter_mut()
            .map(|t| {
                let w = WindowSeries {
                    window_ns: t.windows.window_ns,
                    compacted: t.windows.compacted,
                    ..Default::default()
                };
                (
                    std::mem::take(&mut t.histogram.buckets),
                    std::mem::take(&mut t.outliers),
                    std::mem::replace(&mut t.windows, w),
                )
            })
            .collect(),
    )
}

/// Put back what [`take_bulk`] took.
pub fn put_bulk(rec: &mut RunRecord, bulk: Bulk) {
    for (t, (buckets, outliers, windows)) in rec.threads.iter_mut().zip(bulk.0) {
        t.histogram.buckets = buckets;
        t.outliers = outliers;
        t.windows = windows;
    }
}

/// A record's head or outliers that JSON could not carry.
#[derive(Debug, Error)]
pub enum JsonError {
    #[error("serializing the run record: {0}")]
    Head(serde_json::Error),
    #[error("outliers: {0}")]
    Outliers(serde_json::Error),
}

/// The head of `rec` as JSON (the record without its bulk); `rec` is the
/// same on return.
pub fn head_json(rec: &mut RunRecord) -> Result<String, JsonError> {
    let bulk = take_bulk(rec);
    let json = serde_json::to_string(&*rec);
    put_bulk(rec, bulk);
    json.map_err(JsonError::Head)
}

/// A copy of the head of `rec`.
pub fn head(rec: &RunRecord) -> RunRecord {
    let mut h = rec.clone();
    take_bulk(&mut h);
    h
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn get_varint(bytes: &[u8], pos: &mut usize) -> Result<u64, BlobError> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*pos).ok_or(BlobError::CutNumber)?;
        *pos += 1;
        v |= ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(BlobError::LongNumber)
}

/// Encode the buckets of `h` (which must be valid: see
/// [`HistogramRecord::to_histogram`]).
pub fn encode_histogram(h: &HistogramRecord) -> Result<Vec<u8>, BlobError> {
    if h.encoding != "log-linear" {
        return Err(BlobError::Encoding(h.encoding.clone()));
    }
    let bits = h.sub_bucket_bits;
    if !(1..=16).contains(&bits) {
        return Err(BlobError::Precision(bits));
    }
    let mut out = Vec::with_capacity(8 + h.buckets.len() * 4);
    out.push(BLOB_VERSION);
    out.push(bits as u8);
    put_varint(&mut out, h.buckets.len() as u64);
    let mut prev: Option<usize> = None;
    for &[lower, count] in &h.buckets {
        let i = bucket_index(lower, bits);
        if bucket_lower(i, bits) != lower {
            return Err(BlobError::NotBucketStart(lower));
        }
        let delta = match prev {
            None => i,
            Some(p) if i > p => i - p,
            Some(_) => return Err(BlobError::NotAscending),
        };
        put_varint(&mut out, delta as u64);
        put_varint(&mut out, count);
        prev = Some(i);
    }
    Ok(out)
}

/// Decode a histogram blob into `[lower_ns, count]` buckets, checking it
/// against the precision the record announces.
pub fn decode_histogram(blob: &[u8], sub_bucket_bits: u32) -> Result<Vec<[u64; 2]>, BlobError> {
    match blob.first() {
        Some(&BLOB_VERSION) => {}
        Some(&v) => return Err(BlobError::Version(v)),
        None => return Err(BlobError::Empty),
    }
    let bits = *blob.get(1).ok_or(BlobError::Truncated)? as u32;
    if bits != sub_bucket_bits {
        return Err(BlobError::PrecisionMismatch {
            blob: bits,
            record: sub_bucket_bits,
        });
    }
    let mut pos = 2;
    let n = get_varint(blob, &mut pos)?;
    let max_index = crate::histogram::bucket_count(bits) as u64;
    if n > max_index {
        return Err(BlobError::TooManyBuckets(n));
    }
    let mut out = Vec::with_capacity(n as usize);
    let mut i = 0u64;
    for k in 0..n {
        let delta = get_varint(blob, &mut pos)?;
        if k > 0 && delta == 0 {
            return Err(BlobError::RepeatedBucket);
        }
        i = i
            .checked_add(delta)
            .filter(|&i| i < max_index)
            .ok_or(BlobError::BucketOutOfRange)?;
        let count = get_varint(blob, &mut pos)?;
        out.push([bucket_lower(i as usize, bits), count]);
    }
    if pos != blob.len() {
        return Err(BlobError::TrailingBytes);
    }
    Ok(out)
}

pub fn encode_outliers(o: &[Outlier]) -> String {
    serde_json::to_string(o).expect("outliers serialize")
}

pub fn decode_outliers(text: &str) -> Result<Vec<Outlier>, JsonError> {
    serde_json::from_str(text).map_err(JsonError::Outliers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::Histogram;

    #[test]
    fn histogram_blob_round_trip_and_size() {
        let mut h = Histogram::latency();
        for v in [
            0u64,
            1,
            5,
            999,
            1000,
            12_345,
            250_000,
            19_085_000,
            u64::MAX / 3,
        ] {
            h.record_n(v, v % 7 + 1);
        }
        let r = HistogramRecord::from_histogram(&h, 1);
        let blob = encode_histogram(&r).unwrap();
        assert_eq!(
            decode_histogram(&blob, r.sub_bucket_bits).unwrap(),
            r.buckets
        );
        assert!(blob.len() < 8 * r.buckets.len(), "{} bytes", blob.len());
        // A day of 1 ms samples spread over 3000 buckets: a few kB.
        let mut big = Histogram::latency();
        for i in 0..3000u64 {
            big.record_n(2_000 + i * 7, 28_800 + i);
        }
        let r = HistogramRecord::from_histogram(&big, 1);
        let blob = encode_histogram(&r).unwrap();
        assert!(blob.len() < 16_000, "{} bytes", blob.len());
        assert_eq!(decode_histogram(&blob, 9).unwrap(), r.buckets);
    }

    #[test]
    fn damaged_blobs_are_refused() {
        let mut h = Histogram::latency();
        h.record(5000);
        h.record(7000);
        let blob = encode_histogram(&HistogramRecord::from_histogram(&h, 1)).unwrap();
        assert_eq!(
            decode_histogram(&blob, 8),
            Err(BlobError::PrecisionMismatch { blob: 9, record: 8 })
        );
        assert_eq!(
            decode_histogram(&blob[..blob.len() - 1], 9),
            Err(BlobError::CutNumber)
        );
        let mut extra = blob.clone();
        extra.push(0);
        assert_eq!(decode_histogram(&extra, 9), Err(BlobError::TrailingBytes));
        assert_eq!(decode_histogram(&[], 9), Err(BlobError::Empty));
        assert_eq!(decode_histogram(&[2, 9, 0], 9), Err(BlobError::Version(2)));
        let bad = HistogramRecord {
            encoding: "log-linear".into(),
            sub_bucket_bits: 9,
            resolution_ns: 1,
            buckets: vec![[1025, 1]],
        };
        assert_eq!(encode_histogram(&bad), Err(BlobError::NotBucketStart(1025)));
    }

    #[test]
    fn bulk_goes_out_and_back() {
        let rec = crate::record::synthetic(&[vec![1000, 2000, 30_000], vec![5]]);
        let mut r = rec.clone();
        let json = head_json(&mut r).unwrap();
        assert_eq!(r, rec);
        let back: RunRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back, head(&rec));
    }

    #[test]
    fn head_keeps_everything_but_the_bulk() {
        let rec = crate::record::synthetic(&[vec![1000, 2000, 30_000], vec![5]]);
        let h = head(&rec);
        assert!(h.threads.iter().all(|t| t.histogram.buckets.is_empty()));
        assert_eq!(h.threads[0].stats, rec.threads[0].stats);
        assert_eq!(h.fingerprint, rec.fingerprint);
        assert_eq!(
            h.threads[0].windows.window_ns,
            rec.threads[0].windows.window_ns
        );
    }
}
