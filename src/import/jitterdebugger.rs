//! jitterdebugger's `results.json` (written by `jitterdebugger -o DIR`,
//! or to the terminal / `-f FILE` by older versions), read from
//! jitterdebugger's `dump_stats()`: `"version"` (1 to 3), from version 3 a
//! `"sysinfo"` (uname facts, `cpus_online`, `resolution_in_ns`: 1000 for
//! µs, 1 with `-N`), and `"cpu"` → `"0"`, `"1"`… each with `histogram`
//! (one slot per unit, empty slots left out), `count`, `min`, `max` and
//! `avg`.
//!
//! jitterdebugger sleeps with a relative `clock_nanosleep` on a thread
//! per CPU (SCHED_FIFO 80 by default) and records how late it woke: a
//! wake-up latency. The keys of `"cpu"` are thread numbers, not CPU
//! numbers (the file does not say which CPU each thread ran on), so CPUs
//! stay unknown. Samples beyond the histogram's last slot (1 ms) are
//! counted in `count` without their values: recorded just beyond it, the
//! largest at the max (a lower bound).
//!
//! `samples.raw` (`jitterdebugger -s -o DIR`), the binary stream of every
//! sample, is read too ([`parse_raw`]): each thread's samples exactly,
//! their unit and the machine from the `results.json` beside it.

use super::build::{self, RunIn, ThreadIn};
use super::{ImportError, Importer, Source};
use crate::histogram::Histogram;
use crate::record::{Quantity, RunRecord};
use serde_json::Value;
use std::path::Path;

pub static IMPORTER: Importer = Importer {
    name: "jitterdebugger",
    description: "jitterdebugger results.json (per-thread histogram, count, min, max, avg)",
    detect,
    parse,
};

fn detect(text: &str) -> u8 {
    let t = text.trim_start();
    let looks = t.starts_with('{')
        && t.contains("\"cpu\"")
        && t.contains("\"histogram\"")
        && t.contains("\"count\"")
        && !t.contains("\"thread\"");
    if looks { 90 } else { 0 }
}

/// One thread's entry, in units of `unit` ns, and how many of its
/// samples lie beyond the histogram.
fn thread(key: &str, t: &Value, unit: u64) -> Result<(ThreadIn, u64), ImportError> {
    let bad = |what: &str| ImportError::whole(format!("cpu \"{key}\": expected {what}"));
    let u = |k: &str| t.get(k).and_then(Value::as_u64);
    let hist = t
        .get("histogram")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("a \"histogram\" object"))?;
    let count = u("count").ok_or_else(|| bad("\"count\""))?;
    let mut h = Histogram::latency();
    for (k, n) in hist {
        let slot = k
            .parse::<u64>()
            .map_err(|_| bad("histogram keys in units (\"0\", \"1\"…)"))?;
        let n = n.as_u64().ok_or_else(|| bad("histogram counts"))?;
        h.record_n(build::bucket_ns(slot, unit), n);
    }
    let in_hist = h.total();
    if in_hist > count {
        return Err(bad(&format!(
            "a count ({count}) at least the histogram's total ({in_hist})"
        )));
    }
    let max = u("max");
    let over = count - in_hist;
    if over > 0 {
        let beyond = 1_000_000 / unit.max(1) * unit;
        let top = max.map_or(beyond, |m| m.saturating_mul(unit).max(beyond));
        h.record(top);
        h.record_n(beyond, over - 1);
    }
    let mut ti = ThreadIn::new(0);
    ti.samples = count;
    ti.hist = Some(h);
    if count > 0 {
        ti.min_ns = u("min").map(|v| v.saturating_mul(unit));
        ti.max_ns = max.map(|v| v.saturating_mul(unit));
        ti.avg_ns = t
            .get("avg")
            .and_then(Value::as_f64)
            .map(|a| a * unit as f64);
    }
    Ok((ti, over))
}

fn parse(src: &Source) -> Result<RunRecord, ImportError> {
    let v: Value = serde_json::from_str(src.text).map_err(|e| {
        ImportError::at(
            e.line(),
            format!("expected jitterdebugger's JSON, found a syntax error: {e}"),
        )
    })?;
    let si = v.get("sysinfo");
    let unit = si
        .and_then(|s| s.get("resolution_in_ns"))
        .and_then(Value::as_u64)
        .unwrap_or(1000);
    if unit != 1 && unit != 1000 {
        return Err(ImportError::whole(format!(
            "expected resolution_in_ns 1000 (us) or 1 (ns), found {unit}"
        )));
    }
    let cpus = v
        .get("cpu")
        .and_then(Value::as_object)
        .ok_or_else(|| ImportError::whole("expected a \"cpu\" object, found none"))?;
    let mut keyed = Vec::new();
    for (k, t) in cpus {
        let i = k.parse::<u64>().map_err(|_| {
            ImportError::whole(format!(
                "expected keys \"0\", \"1\"… under \"cpu\", found \"{k}\""
            ))
        })?;
        keyed.push((i, k, t));
    }
    keyed.sort_by_key(|k| k.0);
    let mut run = RunIn::new("jitterdebugger", "jitterdebugger", unit);
    let mut lower_bounds = false;
    for (_, k, t) in keyed {
        let (ti, over) = thread(k, t, unit)?;
        lower_bounds |= over > 1;
        run.threads.push(ti);
    }
    if run.threads.is_empty() {
        return Err(ImportError::whole(
            "expected at least one entry under \"cpu\", found none",
        ));
    }
    if let Some(si) = si {
        machine(si, &mut run);
    }
    run.warnings.push(
        "jitterdebugger numbers its threads, not their CPUs: which CPU each ran on is unknown"
            .into(),
    );
    if lower_bounds {
        run.warnings.push(
            "samples beyond the histogram's last slot (1 ms) are recorded just beyond it, the largest at the max: quantiles among them are lower bounds".into(),
        );
    }
    let mut rec = build::finish(src, run)?;
    rec.quantity = Some(Quantity::WakeupLatency);
    Ok(rec)
}

/// The machine from `sysinfo` (version 3).
fn machine(si: &Value, run: &mut RunIn) {
    let s = |k: &str| si.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let fp = &mut run.fingerprint;
    fp.hostname = s("nodename");
    fp.kernel_release = s("release");
    fp.kernel_version = s("version");
    fp.machine = s("machine");
    if let Some(n) = si.get("cpus_online").and_then(Value::as_u64) {
        fp.cpus_online = n as u32;
    }
    let (model, mut evidence) = build::preemption_from_version(&fp.kernel_version, false);
    fp.preemption_model = model;
    evidence.push("read from jitterdebugger's results.json sysinfo".into());
    fp.preemption_evidence = evidence;
}

/// One record of `samples.raw`: jitterdebugger's packed `latency_sample`
/// (a u32 thread number, a `timespec` of two i64, a u64 latency), in the
/// byte order of the machine that wrote it (little-endian here: x86_64,
/// arm64).
const RAW_RECORD: usize = 28;

/// Is `bytes`, read from `path`, a jitterdebugger sample stream? It is
/// named `samples.raw` (as `jitterdebugger -s -o DIR` writes it) and holds
/// a whole number of records.
pub fn is_raw(path: &Path, bytes: &[u8]) -> bool {
    path.file_name().is_some_and(|n| n == "samples.raw")
        && !bytes.is_empty()
        && bytes.len() % RAW_RECORD == 0
}

/// One sample of `samples.raw`.
struct RawSample {
    thread: u32,
    at_ns: u64,
    value: u64,
}

fn raw_sample(i: usize, r: &[u8]) -> Result<RawSample, ImportError> {
    let u32_at = |o: usize| u32::from_le_bytes(r[o..o + 4].try_into().unwrap());
    let i64_at = |o: usize| i64::from_le_bytes(r[o..o + 8].try_into().unwrap());
    let (thread, sec, nsec) = (u32_at(0), i64_at(4), i64_at(12));
    let value = u64::from_le_bytes(r[20..28].try_into().unwrap());
    if thread >= 4096 || !(0..1_000_000_000).contains(&nsec) || sec < 0 {
        return Err(ImportError::whole(format!(
            "expected jitterdebugger's samples (a thread number, a time, a latency), found at \
             record {} (byte {}) thread {thread}, tv_sec {sec}, tv_nsec {nsec}",
            i + 1,
            i * RAW_RECORD
        )));
    }
    Ok(RawSample {
        thread,
        at_ns: (sec as u64).saturating_mul(1_000_000_000) + nsec as u64,
        value,
    })
}

/// The unit and the machine from the `results.json` beside `path`
/// (jitterdebugger writes both to its output folder); microseconds, said,
/// without one.
fn sibling_results(path: &Path, run: &mut RunIn) -> u64 {
    let json = path.with_file_name("results.json");
    let v: Option<Value> = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let si = v.as_ref().and_then(|v| v.get("sysinfo"));
    match si
        .and_then(|s| s.get("resolution_in_ns"))
        .and_then(Value::as_u64)
    {
        Some(unit @ (1 | 1000)) => {
            machine(si.unwrap(), run);
            unit
        }
        _ => {
            run.warnings.push(format!(
                "no results.json (version 3) beside the samples: their unit is taken as \
                 microseconds (jitterdebugger's default; -N writes nanoseconds) and the machine \
                 is unknown"
            ));
            1000
        }
    }
}

/// Read `samples.raw`: every sample of every thread, exact (no histogram
/// slot, no overflow), the run's length from the samples' times.
pub fn parse_raw(src: &Source, bytes: &[u8]) -> Result<RunRecord, ImportError> {
    let mut run = RunIn::new("jitterdebugger-raw", "jitterdebugger", 1);
    let unit = sibling_results(src.path, &mut run);
    // Per thread: its samples, least, greatest and sum (in ns).
    let mut per: std::collections::BTreeMap<u32, (Histogram, u64, u64, u128)> = Default::default();
    let (mut first, mut last) = (u64::MAX, 0);
    for (i, r) in bytes.chunks_exact(RAW_RECORD).enumerate() {
        let s = raw_sample(i, r)?;
        let ns = s.value.checked_mul(unit).ok_or_else(|| {
            ImportError::whole(format!(
                "record {}: latency {} out of range",
                i + 1,
                s.value
            ))
        })?;
        let t = per
            .entry(s.thread)
            .or_insert_with(|| (Histogram::latency(), u64::MAX, 0, 0));
        t.0.record(ns);
        (t.1, t.2, t.3) = (t.1.min(ns), t.2.max(ns), t.3 + ns as u128);
        (first, last) = (first.min(s.at_ns), last.max(s.at_ns));
    }
    for (_, (h, min, max, sum)) in per {
        let mut t = ThreadIn::new(0);
        t.samples = h.total();
        (t.min_ns, t.max_ns) = (Some(min), Some(max));
        t.avg_ns = Some(sum as f64 / t.samples as f64);
        t.hist = Some(h);
        run.threads.push(t);
    }
    run.resolution_ns = unit;
    run.duration_ns = Some(last.saturating_sub(first));
    run.warnings.push(
        "jitterdebugger numbers its threads, not their CPUs: which CPU each ran on is unknown"
            .into(),
    );
    let mut rec = build::finish(src, run)?;
    rec.run_uuid = build::content_uuid_bytes("jitterdebugger-raw", bytes);
    rec.quantity = Some(Quantity::WakeupLatency);
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `samples.raw` of `jitterdebugger -D 2s -s` on the project's VM,
    /// beside its own results.json: every sample, per thread.
    #[test]
    fn the_raw_sample_stream_is_read_whole() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/import-formats/jitterdebugger-vm/samples");
        let path = dir.join("samples.raw");
        let bytes = std::fs::read(&path).unwrap();
        assert!(is_raw(&path, &bytes));
        assert!(!is_raw(&path, &bytes[1..]));
        assert!(!is_raw(Path::new("other.bin"), &bytes));
        let o = ImportOptions::default();
        let src = Source {
            path: &path,
            text: "",
            modified_unix_ns: None,
            options: &o,
        };
        let rec = parse_raw(&src, &bytes).unwrap();
        let counts: Vec<u64> = rec.threads.iter().map(|t| t.stats.samples).collect();
        assert_eq!(counts, [1959, 1936]);
        let max: Vec<Option<u64>> = rec.threads.iter().map(|t| t.stats.max_ns).collect();
        assert_eq!(max, [Some(68_000), Some(971_000)]);
        assert_eq!(rec.fingerprint.hostname, "vm");
        // A record that is not a sample is refused with its place.
        let mut bad = bytes.clone();
        bad[12..20].copy_from_slice(&2_000_000_000i64.to_le_bytes());
        let e = parse_raw(&src, &bad).unwrap_err();
        assert!(e.message.contains("record 1 (byte 0)"), "{}", e.message);
    }

    use crate::import::ImportOptions;
    use std::path::Path;

    const JSON: &str =
        include_str!("../../tests/fixtures/import-formats/jitterdebugger-results.json");

    fn read(text: &str) -> Result<RunRecord, ImportError> {
        let o = ImportOptions::default();
        let src = Source {
            path: Path::new("results.json"),
            text,
            modified_unix_ns: Some(1_700_000_000_000_000_000),
            options: &o,
        };
        crate::import::read(&src, None)
    }

    #[test]
    fn results_json_per_thread() {
        assert_eq!(crate::import::detect(JSON).unwrap().name, "jitterdebugger");
        let r = read(JSON).unwrap();
        assert_eq!(r.quantity, Some(Quantity::WakeupLatency));
        assert_eq!(r.threads.len(), 2);
        let t = &r.threads[1];
        assert_eq!(t.cpu, None);
        assert_eq!(t.stats.samples, 10_000);
        assert_eq!(t.stats.min_ns, Some(3000));
        assert_eq!(t.stats.max_ns, Some(1_500_000));
        assert_eq!(t.stats.avg_ns, Some(4250.0));
        assert_eq!(r.fingerprint.kernel_release, "6.6.0-rt15");
        assert_eq!(r.fingerprint.preemption_model, "rt");
        // One sample beyond the histogram: it is the max, nothing is a
        // lower bound.
        assert!(!r.warnings.iter().any(|w| w.contains("lower bounds")));
        assert_eq!(t.stats.max_ns, Some(1_500_000));
        let two = JSON.replace("\"9\": 9", "\"9\": 8");
        let r = read(&two).unwrap();
        assert!(r.warnings.iter().any(|w| w.contains("lower bounds")));
    }

    #[test]
    fn a_histogram_larger_than_its_count_is_refused() {
        let bad = JSON.replace("\"count\": 10000", "\"count\": 10");
        let e = read(&bad).unwrap_err();
        assert!(e.message.contains("histogram's total"), "{e}");
        assert!(read("{\"cpu\": {\"x\": {}}, \"histogram\": 1, \"count\": 2}").is_err());
    }
}
