//! oslat's output (rt-tests): its summary (`Core:`, `Counter Freq:` or
//! `CPU Freq:`, one `NNN (us):` line per bucket, `Minimum:`, `Average:`,
//! `Maximum:`, `Max-Min:`, `Duration:`, a value per CPU column) and its
//! `--json FILE` (rt-tests' JSON, `thread` → `cpu`, `freq`, `min`, `avg`,
//! `max`, `duration`, `histogram`). Read from oslat's `oslat.c` and from
//! files oslat 2.40 wrote.
//!
//! oslat spins reading the TSC and records each gap between two reads:
//! time taken from a running thread (interrupts, other threads, SMIs),
//! no timer and no wake-up. The record's quantity is `busy_loop_gap`, so
//! that `compare` never takes it for a wake-up latency.
//!
//! oslat labels a bucket by its upper end: a gap of 0–0.999 µs is counted
//! in `001 (us)`, and its min and max are such labels; a sample of bucket
//! N is recorded at N − 0.5 µs, the min, avg and max are oslat's own. The
//! last bucket also holds every larger gap (`(including overflows)`):
//! those are recorded at the bucket, the largest at the max (a lower
//! bound, said in a warning).

use super::build::{self, RunIn, ThreadIn};
use super::{ImportError, Importer, Source, excerpt, numbered_lines};
use crate::histogram::Histogram;
use crate::record::{Overflow, Quantity, RunRecord};
use serde_json::Value;

pub static IMPORTER: Importer = Importer {
    name: "oslat",
    description: "oslat summary or --json output (rt-tests): busy-loop gaps per CPU, not a wake-up latency",
    detect,
    parse,
};

/// Where each further oslat output begins in a file holding several:
/// its `oslat V...` banner, after the first. (Its JSON is one run.)
pub fn run_starts(text: &str) -> Vec<usize> {
    let mut starts: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("oslat V"))
        .map(|(i, _)| i)
        .collect();
    if !starts.is_empty() {
        starts.remove(0);
    }
    starts
}

fn detect(text: &str) -> u8 {
    let t = text.trim_start();
    if t.starts_with('{') {
        let oslat_cmd = t.contains("\"cmdline") && t.contains("oslat");
        return if oslat_cmd && t.contains("\"freq\"") {
            95
        } else {
            0
        };
    }
    let mut core = false;
    for l in text.lines().take(10_000) {
        let l = l.trim();
        if l.starts_with("Core:") {
            core = true;
        } else if core && (l.starts_with("Counter Freq:") || l.starts_with("CPU Freq:")) {
            return 95;
        }
    }
    0
}

fn parse(src: &Source) -> Result<RunRecord, ImportError> {
    let mut rec = if src.text.trim_start().starts_with('{') {
        parse_json(src)?
    } else {
        parse_text(src)?
    };
    rec.quantity = Some(Quantity::BusyLoopGap);
    Ok(rec)
}

/// One CPU's column as oslat printed it.
#[derive(Clone, Debug, Default)]
struct Col {
    cpu: u32,
    buckets: Vec<(u64, u64)>,
    min: Option<u64>,
    avg: Option<f64>,
    max: Option<u64>,
    duration_s: Option<f64>,
}

/// The thread of a column: buckets at N − 0.5 µs, the last (which holds
/// the overflows) with its largest at the max.
fn thread(c: &Col, warn_overflow: &mut bool) -> Result<ThreadIn, ImportError> {
    let mut h = Histogram::latency();
    let last = c.buckets.last().map(|b| b.0);
    let mut overflow = None;
    for &(label, n) in &c.buckets {
        let at = build::bucket_ns(label.saturating_sub(1), 1000);
        match (Some(label) == last, c.max) {
            (true, Some(max)) if max > label && n > 0 => {
                build::count_into(&mut h, build::bucket_ns(max - 1, 1000), 1)?;
                build::count_into(&mut h, at, n - 1)?;
                *warn_overflow |= n > 1;
                // The bucket's gaps lie anywhere from its lower end to
                // the max: their values are unknown.
                overflow = Some(Overflow {
                    count: n,
                    from_ns: label.saturating_sub(1).saturating_mul(1000),
                });
            }
            _ => build::count_into(&mut h, at, n)?,
        }
    }
    let mut t = ThreadIn::new(0);
    t.overflow = overflow;
    t.cpu = Some(c.cpu);
    t.samples = h.total();
    t.hist = Some(h);
    t.min_ns = c.min.map(|v| v.saturating_mul(1000));
    t.avg_ns = c.avg.map(|v| (v * 1e6).round() / 1e3);
    t.max_ns = c.max.map(|v| v.saturating_mul(1000));
    Ok(t)
}

fn run_of(cols: &[Col], tool_version: Option<String>) -> Result<RunIn, ImportError> {
    // Every count goes into one histogram: their sum must fit.
    for c in cols {
        if c.buckets
            .iter()
            .try_fold(0u64, |a, b| a.checked_add(b.1))
            .is_none()
        {
            return Err(ImportError::whole(format!(
                "CPU {}: its bucket counts add up past {}: the file is damaged or was edited",
                c.cpu,
                u64::MAX
            )));
        }
    }
    let mut run = RunIn::new("oslat", "oslat", 1000);
    if let Some(v) = tool_version {
        run.tool.version = v;
    }
    let mut overflow = false;
    for c in cols {
        run.threads.push(thread(c, &mut overflow)?);
    }
    run.duration_ns = cols
        .iter()
        .filter_map(|c| c.duration_s)
        .fold(None, |a: Option<f64>, d| Some(a.map_or(d, |a| a.max(d))))
        .map(|s| (s * 1e9).round() as u64);
    run.warnings.push(
        "oslat measures gaps in a busy loop (no timer, no wake-up): not comparable to wake-up latencies"
            .into(),
    );
    if overflow {
        run.warnings.push(
            "oslat's last bucket also holds every larger gap: they are recorded at that bucket, the largest at the max, so quantiles among them are lower bounds".into(),
        );
    }
    Ok(run)
}

fn parse_text(src: &Source) -> Result<RunRecord, ImportError> {
    let mut cols: Vec<Col> = Vec::new();
    let mut version = None;
    let mut priority = None;
    for (no, raw) in numbered_lines(src.text) {
        let l = raw.trim();
        if let Some(v) = l.strip_prefix("oslat V ") {
            version = Some(v.trim().to_string());
        } else if let Some(p) = l.strip_prefix("Thread priority:") {
            priority = p
                .trim()
                .strip_prefix("SCHED_FIFO:")
                .and_then(|p| p.parse::<i32>().ok());
        } else if let Some((label, values)) = l.split_once(':') {
            text_field(no, l, label.trim(), values, &mut cols)?;
        }
    }
    if cols.is_empty() {
        return Err(ImportError::whole(
            "expected oslat's summary ('Core:' then one line per bucket), found none",
        ));
    }
    if cols.iter().any(|c| c.buckets.is_empty()) {
        return Err(ImportError::whole(
            "expected bucket lines ('001 (us): N') after 'Core:', found none",
        ));
    }
    let mut run = run_of(&cols, version)?;
    if let Some(p) = priority {
        run.options.policy = "fifo".into();
        run.options.priority = p;
        run.priority_known = true;
        for t in &mut run.threads {
            t.priority = p;
        }
    }
    build::finish(src, run)
}

/// One `Label: v v v (unit)` line of the summary.
fn text_field(
    no: usize,
    l: &str,
    label: &str,
    values: &str,
    cols: &mut Vec<Col>,
) -> Result<(), ImportError> {
    let words: Vec<&str> = values
        .split_whitespace()
        .take_while(|w| !w.starts_with('('))
        .collect();
    let nums = |what: &str| -> Result<Vec<f64>, ImportError> {
        words
            .iter()
            .map(|w| {
                w.parse::<f64>().map_err(|_| {
                    ImportError::at(
                        no,
                        format!("expected {what}, found '{w}' in '{}'", excerpt(l)),
                    )
                })
            })
            .collect()
    };
    if label == "Core" {
        *cols = nums("CPU numbers")?
            .into_iter()
            .map(|c| Col {
                cpu: c as u32,
                ..Default::default()
            })
            .collect();
        return Ok(());
    }
    if cols.is_empty() {
        return Ok(());
    }
    let bucket = label
        .strip_suffix("(us)")
        .map(str::trim)
        .and_then(|b| b.parse::<u64>().ok());
    let known = ["Minimum", "Average", "Maximum", "Duration"].contains(&label);
    if bucket.is_none() && !known {
        return Ok(());
    }
    let v = nums("a number per CPU")?;
    if v.len() != cols.len() {
        return Err(ImportError::at(
            no,
            format!(
                "expected {} value(s) (one per CPU of 'Core:'), found {} in '{}'",
                cols.len(),
                v.len(),
                excerpt(l)
            ),
        ));
    }
    for (c, x) in cols.iter_mut().zip(v) {
        match (bucket, label) {
            (Some(b), _) => c.buckets.push((b, x as u64)),
            (None, "Minimum") => c.min = Some(x as u64),
            (None, "Average") => c.avg = Some(x),
            (None, "Maximum") => c.max = Some(x as u64),
            _ => c.duration_s = Some(x),
        }
    }
    Ok(())
}

fn parse_json(src: &Source) -> Result<RunRecord, ImportError> {
    let v: Value = serde_json::from_str(src.text).map_err(|e| {
        ImportError::at(
            e.line(),
            format!("expected oslat's JSON, found a syntax error: {e}"),
        )
    })?;
    let field = |o: &Value, k: &str| o.get(k).or_else(|| o.get(format!("{k}:"))).cloned();
    let threads = field(&v, "thread")
        .and_then(|t| t.as_object().cloned())
        .ok_or_else(|| ImportError::whole("expected a \"thread\" object, found none"))?;
    let mut cols = Vec::new();
    let mut keys: Vec<(u64, &Value)> = Vec::new();
    for (k, t) in &threads {
        let i = k.parse::<u64>().map_err(|_| {
            ImportError::whole(format!("expected thread keys \"0\", \"1\"…, found \"{k}\""))
        })?;
        keys.push((i, t));
    }
    keys.sort_by_key(|k| k.0);
    for (i, t) in keys {
        cols.push(json_col(i, t)?);
    }
    if cols.is_empty() {
        return Err(ImportError::whole(
            "expected at least one thread, found none",
        ));
    }
    let version = field(&v, "rt_test_version").and_then(|x| x.as_str().map(str::to_string));
    let mut run = run_of(&cols, version)?;
    if let Some(c) = field(&v, "cmdline").and_then(|x| x.as_str().map(str::to_string)) {
        run.command_line = c.split_whitespace().map(str::to_string).collect();
    }
    json_machine(&v, &mut run);
    build::finish(src, run)
}

/// Thread `i`'s entry.
fn json_col(i: u64, t: &Value) -> Result<Col, ImportError> {
    let bad = |what: &str| ImportError::whole(format!("thread \"{i}\": expected {what}"));
    let u = |k: &str| t.get(k).and_then(Value::as_u64);
    let hist = t
        .get("histogram")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("a \"histogram\" object"))?;
    let mut buckets = Vec::new();
    for (k, n) in hist {
        let b = k
            .parse::<u64>()
            .map_err(|_| bad("bucket keys in us (\"1\", \"2\"…)"))?;
        let n = n.as_u64().ok_or_else(|| bad("bucket counts"))?;
        buckets.push((b, n));
    }
    buckets.sort_unstable();
    Ok(Col {
        cpu: u("cpu").ok_or_else(|| bad("\"cpu\""))? as u32,
        buckets,
        min: u("min"),
        avg: t.get("avg").and_then(Value::as_f64),
        max: u("max"),
        duration_s: t.get("duration").and_then(Value::as_f64),
    })
}

/// Start, end and the machine (rt-tests' common JSON header).
fn json_machine(v: &Value, run: &mut RunIn) {
    use super::cyclictest_json::parse_rfc2822;
    let s = |o: &Value, k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    run.started_at_unix_ns = s(v, "start_time").as_deref().and_then(parse_rfc2822);
    run.ended_at_unix_ns = s(v, "end_time").as_deref().and_then(parse_rfc2822);
    if let Some(si) = v.get("sysinfo") {
        let fp = &mut run.fingerprint;
        fp.hostname = s(si, "nodename").unwrap_or_default();
        fp.kernel_release = s(si, "release").unwrap_or_default();
        fp.kernel_version = s(si, "version").unwrap_or_default();
        fp.machine = s(si, "machine").unwrap_or_default();
        let rt = si.get("realtime").and_then(Value::as_u64) == Some(1);
        let (model, mut evidence) = build::preemption_from_version(&fp.kernel_version, rt);
        fp.preemption_model = model;
        evidence.push("read from oslat --json sysinfo".into());
        fp.preemption_evidence = evidence;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::ImportOptions;
    use std::path::Path;

    fn read(text: &str) -> Result<RunRecord, ImportError> {
        let o = ImportOptions::default();
        let src = Source {
            path: Path::new("oslat.txt"),
            text,
            modified_unix_ns: Some(1_700_000_000_000_000_000),
            options: &o,
        };
        crate::import::read(&src, None)
    }

    const TEXT: &str = include_str!("../../tests/fixtures/import-formats/oslat.txt");
    const JSON: &str = include_str!("../../tests/fixtures/import-formats/oslat.json");

    #[test]
    fn summary_is_a_busy_loop_gap_per_cpu() {
        assert_eq!(detect(TEXT), 95);
        let r = read(TEXT).unwrap();
        assert_eq!(r.source.format.as_deref(), Some("oslat"));
        assert_eq!(r.quantity, Some(Quantity::BusyLoopGap));
        assert_eq!(r.tool.version, "2.40");
        let t = &r.threads[0];
        assert_eq!(t.cpu, Some(1));
        assert_eq!(t.stats.samples, 106_932_517);
        assert_eq!(t.stats.min_ns, Some(1000));
        assert_eq!(t.stats.avg_ns, Some(1009.0));
        assert_eq!(t.stats.max_ns, Some(12_293_000));
        assert_eq!(r.duration_ns, 3_000_000_000);
        assert!(r.warnings.iter().any(|w| w.contains("lower bounds")));
        // The last bucket (032, "including overflows") holds gaps from
        // 31 us up to the max: they are the thread's overflows.
        let o = t
            .stats
            .overflow
            .expect("the last bucket's gaps are overflows");
        assert_eq!((o.count, o.from_ns), (477, 31_000));
        assert_eq!(r.overall.overflow.map(|o| o.count), Some(477));
    }

    #[test]
    fn a_last_bucket_below_the_max_is_no_overflow() {
        let text = TEXT.replace("Maximum:\t 12293 (us)", "Maximum:\t 32 (us)");
        let r = read(&text).unwrap();
        assert_eq!(r.threads[0].stats.overflow, None);
    }

    /// Counts whose sum is past 2^64 (a damaged file) once overflowed
    /// the histogram: refused, in both layouts.
    #[test]
    fn counts_adding_past_2_64_are_refused() {
        let text = TEXT.replace("002 (us):\t 154", "002 (us):\t 18446744073709551615");
        let json = JSON.replace("\"2\": 154,", "\"2\": 18446744073709551615,");
        assert_ne!(text, TEXT);
        assert_ne!(json, JSON);
        for t in [text, json] {
            let e = read(&t).unwrap_err();
            assert!(e.message.contains("add up past"), "{e}");
        }
    }

    #[test]
    fn json_is_read_before_cyclictests_reader() {
        assert_eq!(crate::import::detect(JSON).unwrap().name, "oslat");
        let r = read(JSON).unwrap();
        assert_eq!(r.quantity, Some(Quantity::BusyLoopGap));
        let t = &r.threads[0];
        assert_eq!(t.stats.samples, 106_932_517);
        assert_eq!(t.stats.avg_ns, Some(1008.961));
        assert_eq!(t.stats.max_ns, Some(12_293_000));
        assert_eq!(r.fingerprint.kernel_release, "6.18.44-fc-v669");
        assert_eq!(
            r.source.command_line.first().map(String::as_str),
            Some("oslat")
        );
    }

    #[test]
    fn columns_that_disagree_are_refused() {
        let two = "        Core:\t 1 2\nCounter Freq:\t 2597 2597 (Mhz)\n    001 (us):\t 10 20\n    002 (us):\t 3 (including overflows)\n     Minimum:\t 1 1 (us)\n";
        let e = read(two).unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(e.message.contains("one per CPU"), "{e}");
        assert!(read(&TEXT.replace("     Average:\t 1.009", "     Average:\t x")).is_err());
    }
}
