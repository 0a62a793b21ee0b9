//! cyclictest's `--json FILE` output (rt-tests 2.x): the command line,
//! start and end times, uname facts, and per thread its histogram (when
//! `-h` was given), cycles, min, max, avg and CPU. Some versions write the
//! keys `"cmdline:"` and `"rt_test_version:"` with a trailing colon; both
//! spellings are read. `resolution_in_ns: 1` (cyclictest -N) means every
//! number, histogram buckets included, is in ns; otherwise µs.
//!
//! Options the file does not hold are taken from its command line
//! (interval, priority, policy, histogram size), with cyclictest's own
//! defaults where a flag is absent. Samples beyond the histogram are
//! counted (cycles minus the histogram) without their values: recorded at
//! the histogram's end, the largest at the thread's max.

use super::build::{self, RunIn, ThreadIn};
use super::{ImportError, Importer, Source};
use crate::histogram::Histogram;
use crate::record::{Overflow, RunRecord};
use serde_json::Value;

pub static IMPORTER: Importer = Importer {
    name: "cyclictest-json",
    description: "cyclictest --json output (rt-tests 2.x), keys with or without a trailing colon",
    detect,
    parse,
};

fn detect(text: &str) -> u8 {
    let t = text.trim_start();
    if !t.starts_with('{') || !t.contains("\"thread\"") {
        return 0;
    }
    if [
        "\"rt_test_version",
        "\"cmdline",
        "\"resolution_in_ns\"",
        "\"num_threads\"",
    ]
    .iter()
    .any(|k| t.contains(k))
    {
        90
    } else {
        0
    }
}

/// 1-based line of the first occurrence of `needle` (for messages).
fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.find(needle)
        .map(|pos| text[..pos].bytes().filter(|&b| b == b'\n').count() + 1)
}

/// Value of `key` or `key:` (both spellings exist).
fn field<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    obj.get(key).or_else(|| obj.get(format!("{key}:")))
}

/// An RFC 2822 date as cyclictest writes it ("Fri, 20 Nov 2026 23:37:09
/// +0000") in ns since the epoch.
pub fn parse_rfc2822(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s.split_once(',').map(|(_, r)| r).unwrap_or(s);
    let w: Vec<&str> = s.split_whitespace().collect();
    if w.len() < 4 {
        return None;
    }
    let day: u32 = w[0].parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| w[1].eq_ignore_ascii_case(m))? as u32
        + 1;
    let year: i64 = w[2].parse().ok()?;
    let hms: Vec<i64> = w[3]
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    // A year no run was measured in is no date (and days_from_civil
    // would overflow on one near i64's ends).
    if hms.len() != 3 || !(1..=31).contains(&day) || !(1..=9999).contains(&year) {
        return None;
    }
    let offset_s = match w.get(4) {
        Some(z) if z.len() == 5 && (z.starts_with('+') || z.starts_with('-')) => {
            let h: i64 = z.get(1..3)?.parse().ok()?;
            let m: i64 = z.get(3..5)?.parse().ok()?;
            let v = h * 3600 + m * 60;
            if z.starts_with('-') { -v } else { v }
        }
        _ => 0,
    };
    // Checked: a damaged date is no date, not an overflow.
    let secs = crate::units::days_from_civil(year, month, day)
        .checked_mul(86_400)?
        .checked_add(hms[0].checked_mul(3600)?)?
        .checked_add(hms[1].checked_mul(60)?)?
        .checked_add(hms[2])?
        .checked_sub(offset_s)?;
    u64::try_from(secs).ok()?.checked_mul(1_000_000_000)
}

/// The value of an option in a cyclictest command line: `-i 200`,
/// `-i200`, `--interval=200` or `--interval 200`.
fn opt(args: &[&str], short: char, long: &str) -> Option<String> {
    let s = format!("-{short}");
    let l = format!("--{long}");
    let mut it = args.iter().skip(1);
    let mut found = None;
    while let Some(a) = it.next() {
        if *a == s || *a == l {
            found = it.next().map(|v| v.to_string());
        } else if let Some(v) = a.strip_prefix(&format!("{l}=")) {
            found = Some(v.to_string());
        } else if a.starts_with(&s) && !a.starts_with("--") && a.len() > 2 {
            let v = &a[2..];
            if v.bytes().all(|b| b.is_ascii_digit()) {
                found = Some(v.to_string());
            }
        }
    }
    found
}

fn has_flag(args: &[&str], short: char, long: &str) -> bool {
    args.iter().skip(1).any(|a| {
        *a == format!("--{long}")
            || (a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].contains(short)
                && a[1..].bytes().all(|b| b.is_ascii_alphabetic()))
    })
}

/// What the command line says, with cyclictest's defaults.
struct Cmdline {
    interval_us: u64,
    priority: i32,
    /// `-h N`: the histogram's rows.
    hist_rows: Option<i64>,
    distance_us: u64,
}

fn parse(src: &Source) -> Result<RunRecord, ImportError> {
    let text = src.text;
    let v: Value = serde_json::from_str(text).map_err(|e| {
        ImportError::at(
            e.line(),
            format!("expected cyclictest --json output (JSON): {e}"),
        )
    })?;
    let threads = field(&v, "thread")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            missing(
                text,
                "thread",
                "a \"thread\" object holding one entry per thread",
            )
        })?;
    let ns_values = field(&v, "resolution_in_ns").and_then(Value::as_u64) == Some(1);
    let unit = if ns_values { 1 } else { 1000 };
    let mut run = RunIn::new(IMPORTER.name, "cyclictest", unit);
    if let Some(ver) = field(&v, "rt_test_version").and_then(Value::as_str) {
        run.tool.version = ver.to_string();
    }
    let cmd = options(&v, &mut run);
    if let Some(si) = field(&v, "sysinfo") {
        sysinfo(si, &mut run);
    }
    times(&v, &mut run);
    let n = threads.len();
    if let Some(declared) = field(&v, "num_threads").and_then(Value::as_u64)
        && declared as usize != n
    {
        return Err(missing(
            text,
            "num_threads",
            &format!("num_threads ({declared}) to match the entries of \"thread\" ({n})"),
        ));
    }
    let mut overflow_note = None;
    for i in 0..n {
        let t = threads.get(&i.to_string()).ok_or_else(|| {
            missing(
                text,
                "thread",
                &format!("thread entries \"0\" to \"{}\", found no \"{i}\"", n - 1),
            )
        })?;
        let entry = Entry { text, i, t, unit };
        let (mut th, over) = entry.thread(&cmd)?;
        if let Some((limit, count)) = over {
            th.overflow = Some(Overflow {
                count,
                from_ns: limit.saturating_mul(unit),
            });
            if count > 1 {
                overflow_note = Some(limit);
            }
        }
        run.threads.push(th);
    }
    if let Some(limit) = overflow_note {
        run.warnings.push(format!(
            "samples beyond the histogram ({limit} buckets) are counted without their values: the largest is each thread's max, the others are recorded at the histogram's end, so quantiles there are lower bounds"
        ));
    }
    run.options.cpus = run.threads.iter().map(|t| t.cpu).collect();
    build::finish(src, run)
}

/// A missing or wrong `key`, at its first line in `text`.
fn missing(text: &str, key: &str, what: &str) -> ImportError {
    let at = line_of(text, &format!("\"{key}")).unwrap_or(1);
    ImportError::at(at, format!("expected {what}"))
}

/// The run's options from its command line (`cmdline`).
fn options(v: &Value, run: &mut RunIn) -> Cmdline {
    let cmdline = field(v, "cmdline").and_then(Value::as_str).unwrap_or("");
    let args: Vec<&str> = cmdline.split_whitespace().collect();
    run.command_line = args.iter().map(|s| s.to_string()).collect();
    let num = |s: Option<String>| s.and_then(|v| v.parse::<i64>().ok());
    let interval_us = num(opt(&args, 'i', "interval")).unwrap_or(1000).max(0) as u64;
    let priority =
        num(opt(&args, 'p', "priority").or_else(|| opt(&args, 'p', "prio"))).unwrap_or(0) as i32;
    let hist_rows = num(opt(&args, 'h', "histogram").or_else(|| opt(&args, 'H', "histofall")));
    let distance_us = if hist_rows.is_some() {
        0
    } else {
        num(opt(&args, 'd', "distance")).unwrap_or(500).max(0) as u64
    };
    let policy = opt(&args, 'y', "policy").unwrap_or_else(|| {
        if priority > 0 {
            "fifo".into()
        } else {
            "other".into()
        }
    });
    run.options.interval_ns = interval_us.saturating_mul(1000);
    run.options.distance_ns = distance_us.saturating_mul(1000);
    run.options.priority = priority;
    run.options.policy = policy.into();
    run.options.mlockall = has_flag(&args, 'm', "mlockall");
    run.priority_known = !args.is_empty();
    run.mlockall_known = !args.is_empty();
    run.options.loops = num(opt(&args, 'l', "loops"))
        .filter(|&l| l > 0)
        .map(|l| l as u64);
    if !args.is_empty() {
        run.options.timer = if has_flag(&args, 's', "system") {
            "nanosleep".into()
        } else {
            "abs".into()
        };
        run.options.clock = if num(opt(&args, 'c', "clock")) == Some(1) {
            "realtime".into()
        } else {
            "monotonic".into()
        };
    }
    Cmdline {
        interval_us,
        priority,
        hist_rows,
        distance_us,
    }
}

/// The machine from `sysinfo` (uname facts).
fn sysinfo(si: &Value, run: &mut RunIn) {
    let s = |k: &str| {
        field(si, k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let fp = &mut run.fingerprint;
    fp.hostname = s("nodename");
    fp.kernel_release = s("release");
    fp.kernel_version = s("version");
    fp.machine = s("machine");
    let realtime = field(si, "realtime").and_then(Value::as_u64) == Some(1);
    let (model, mut evidence) = build::preemption_from_version(&fp.kernel_version, realtime);
    fp.preemption_model = model;
    evidence.push("read from cyclictest --json sysinfo".into());
    fp.preemption_evidence = evidence;
}

/// Start, end and the exit code.
fn times(v: &Value, run: &mut RunIn) {
    let start = field(v, "start_time")
        .and_then(Value::as_str)
        .and_then(parse_rfc2822);
    let end = field(v, "end_time")
        .and_then(Value::as_str)
        .and_then(parse_rfc2822);
    run.started_at_unix_ns = start;
    run.ended_at_unix_ns = end;
    if let (Some(s), Some(e)) = (start, end) {
        run.duration_ns = Some(e.saturating_sub(s));
        run.warnings.push(
            "start and end times are whole seconds (cyclictest --json): the duration includes set-up"
                .into(),
        );
    }
    if let Some(rc) = field(v, "return_code").and_then(Value::as_i64)
        && rc != 0
    {
        run.warnings
            .push(format!("cyclictest exited with code {rc}"));
    }
}

/// Thread entry `i` of the file, in values of `unit` ns.
struct Entry<'a> {
    text: &'a str,
    i: usize,
    t: &'a Value,
    unit: u64,
}

impl Entry<'_> {
    /// A missing or wrong `key` of this thread, at its line.
    fn at(&self, key: &str, what: &str) -> ImportError {
        let (text, i) = (self.text, self.i);
        let thread_at = line_of(text, &format!("\"{i}\": {{")).unwrap_or(1);
        let key_at = text[..]
            .lines()
            .enumerate()
            .skip(thread_at - 1)
            .find(|(_, l)| l.contains(&format!("\"{key}\"")))
            .map(|(k, _)| k + 1)
            .unwrap_or(thread_at);
        ImportError::at(key_at, format!("expected thread {i}'s {what}"))
    }

    fn int(&self, key: &str) -> Result<i64, ImportError> {
        field(self.t, key)
            .and_then(Value::as_i64)
            .ok_or_else(|| self.at(key, &format!("\"{key}\" (an integer)")))
    }

    /// The thread, and the histogram's end when more than one sample
    /// lies beyond it.
    fn thread(&self, cmd: &Cmdline) -> Result<(ThreadIn, Option<(u64, u64)>), ImportError> {
        let (t, unit) = (self.t, self.unit);
        let cycles = u64::try_from(self.int("cycles")?)
            .map_err(|_| self.at("cycles", "cycle count to be positive"))?;
        let mut th = ThreadIn::new(
            cmd.interval_us
                .saturating_add((self.i as u64).saturating_mul(cmd.distance_us))
                .saturating_mul(1000),
        );
        th.priority = cmd.priority;
        th.cpu = field(t, "cpu")
            .and_then(Value::as_i64)
            .and_then(|c| u32::try_from(c).ok());
        th.samples = cycles;
        if cycles > 0 {
            let min = self.int("min")?.max(0) as u64;
            let max = self.int("max")?.max(0) as u64;
            let avg = field(t, "avg")
                .and_then(Value::as_f64)
                .ok_or_else(|| self.at("avg", "\"avg\" (a number)"))?;
            th.min_ns = Some(min.saturating_mul(unit));
            th.max_ns = Some(max.saturating_mul(unit));
            th.avg_ns = Some(avg * unit as f64);
        }
        let mut overflow = None;
        if let Some(hv) = field(t, "histogram") {
            let max = th.max_ns.unwrap_or(0) / unit;
            let (h, o) = self.histogram(hv, cycles, max, cmd.hist_rows)?;
            th.hist = Some(h);
            overflow = o;
        }
        Ok((th, overflow))
    }

    /// The histogram (`hv`, bucket: count) with the `cycles` beyond it
    /// recorded at its end (`-h` rows, else past its last bucket), the
    /// largest at the thread's `max`; and `(that end, how many)` when
    /// some were beyond.
    fn histogram(
        &self,
        hv: &Value,
        cycles: u64,
        max: u64,
        hist_rows: Option<i64>,
    ) -> Result<(Histogram, Option<(u64, u64)>), ImportError> {
        let unit = self.unit;
        let obj = hv.as_object().ok_or_else(|| {
            self.at(
                "histogram",
                "\"histogram\" to be an object of bucket: count",
            )
        })?;
        let mut buckets: Vec<(u64, u64)> = Vec::with_capacity(obj.len());
        for (k, c) in obj {
            let b: u64 = k
                .parse()
                .map_err(|_| self.at(k, &format!("histogram bucket \"{k}\" to be a number")))?;
            let c = c.as_u64().ok_or_else(|| {
                self.at(k, &format!("histogram count of bucket {b} to be a number"))
            })?;
            buckets.push((b, c));
        }
        buckets.sort_unstable();
        let mut h = Histogram::latency();
        for (b, c) in &buckets {
            build::count_into(&mut h, build::bucket_ns(*b, unit), *c)?;
        }
        let in_rows = h.total();
        if in_rows > cycles {
            return Err(self.at(
                "histogram",
                &format!("histogram ({in_rows} samples) to hold at most its {cycles} cycles"),
            ));
        }
        let over = cycles - in_rows;
        let mut overflow = None;
        if over > 0 {
            let limit = hist_rows
                .map(|r| r.max(0) as u64)
                .unwrap_or_else(|| buckets.last().map(|(b, _)| b + 1).unwrap_or(0));
            build::count_into(&mut h, build::bucket_ns(max.max(limit), unit), 1)?;
            build::count_into(&mut h, build::bucket_ns(limit, unit), over - 1)?;
            overflow = Some((limit, over));
        }
        Ok((h, overflow))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::ImportOptions;
    use std::path::Path;

    const SAMPLE: &str = r##"{
  "file_version": 1,
  "cmdline:": "cyclictest -m -p 80 -i 500 -l 300 -t 2 -a -h 30 --json=out.json -q",
  "rt_test_version:": "2.40",
  "start_time": "Fri, 20 Nov 2026 23:37:09 +0000",
  "end_time": "Fri, 20 Nov 2026 23:37:10 +0000",
  "return_code": 0,
  "sysinfo": {
    "sysname": "Linux",
    "nodename": "vm",
    "release": "6.1.0-rt",
    "version": "#1 SMP PREEMPT_RT Debian",
    "machine": "x86_64",
    "realtime": 1
  },
  "num_threads": 2,
  "resolution_in_ns": 0,
  "thread": {
    "0": {
      "histogram": {
        "5": 2,
        "7": 3
      },
      "cycles": 7,
      "min": 5,
      "max": 51,
      "avg": 18.74,
      "cpu": 0,
      "node": 0
    },
    "1": {
      "histogram": {
        "4": 300
      },
      "cycles": 300,
      "min": 4,
      "max": 4,
      "avg": 4.00,
      "cpu": 1,
      "node": 0
    }
  }
}
"##;

    fn read(text: &str) -> Result<RunRecord, ImportError> {
        let o = ImportOptions::default();
        parse(&Source {
            path: Path::new("c.json"),
            text,
            modified_unix_ns: None,
            options: &o,
        })
    }

    #[test]
    fn reads_colon_keys_histograms_overflows_and_sysinfo() {
        assert_eq!(detect(SAMPLE), 90);
        let r = read(SAMPLE).unwrap();
        assert_eq!(r.tool.version, "2.40");
        assert_eq!(r.options.interval_ns, 500_000);
        assert_eq!(r.options.priority, 80);
        assert_eq!(r.options.policy, "fifo");
        assert_eq!(r.threads[0].stats.samples, 7);
        assert_eq!(r.threads[0].stats.max_ns, Some(51_000));
        // Two samples beyond the 30 rows: one at the max, one at 30 us.
        let h = r.threads[0].histogram.to_histogram().unwrap();
        assert_eq!(h.count_above(29_000), 2);
        assert_eq!(r.threads[1].cpu, Some(1));
        assert_eq!(r.fingerprint.preemption_model, "rt");
        assert_eq!(r.fingerprint.kernel_release, "6.1.0-rt");
        assert_eq!(
            r.started_at_unix_ns,
            parse_rfc2822("Fri, 20 Nov 2026 23:37:09 +0000").unwrap()
        );
        assert_eq!(r.duration_ns, 1_000_000_000);
        assert_eq!(r.source.command_line[0], "cyclictest");
        let plain = SAMPLE
            .replace("\"cmdline:\"", "\"cmdline\"")
            .replace("\"rt_test_version:\"", "\"rt_test_version\"");
        assert_eq!(read(&plain).unwrap().tool.version, "2.40");
    }

    #[test]
    fn dates() {
        assert_eq!(
            parse_rfc2822("Thu, 01 Jan 1970 00:00:10 +0000"),
            Some(10_000_000_000)
        );
        assert_eq!(
            parse_rfc2822("Thu, 01 Jan 1970 01:00:10 +0100"),
            Some(10_000_000_000)
        );
        assert_eq!(parse_rfc2822("yesterday"), None);
        // A zone of 5 bytes that is not 5 ASCII characters: refused, no panic.
        assert_eq!(parse_rfc2822("Thu, 01 Jan 1970 00:00:10 +0é0"), None);
        // A year near i64's end (a damaged oslat start_time): no date, no
        // overflow in days_from_civil.
        assert_eq!(
            parse_rfc2822("Wed, 25 Nov 25252734927766554 21:44:21 +0000"),
            None
        );
        assert_eq!(
            parse_rfc2822("Wed, 25 Nov -9223372036854775807 21:44:21 +0000"),
            None
        );
    }

    #[test]
    fn malformed_json_names_the_line() {
        let e = read(&SAMPLE.replace("\"cycles\": 300,", "\"cycles\": 300")).unwrap_err();
        assert!(e.line.is_some(), "{e}");
        let e = read(&SAMPLE.replace("\"cycles\": 300,", "\"cycles\": \"many\",")).unwrap_err();
        assert_eq!(e.line, line_of(SAMPLE, "\"cycles\": 300"), "{e}");
        assert!(e.message.contains("thread 1"), "{e}");
        let e = read(&SAMPLE.replace("\"4\": 300", "\"4\": 301")).unwrap_err();
        assert!(e.message.contains("at most its 300 cycles"), "{e}");
    }

    /// The files fuzzing found: a thread whose figures contradict each
    /// other is refused with the thread and what contradicts what.
    #[test]
    fn a_thread_that_contradicts_itself_is_refused() {
        let e = read(
            &SAMPLE
                .replace("\"max\": 4,", "\"max\": 0,")
                .replace("\"min\": 4,", "\"min\": 15,"),
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "thread 1 contradicts itself: its min (15000 ns) is above its max (0 ns); the file is damaged or was edited"
        );
        let e = read(&SAMPLE.replace("\"avg\": 4.00", "\"avg\": 40.00")).unwrap_err();
        assert!(
            e.message.contains("thread 1") && e.message.contains("above its max (4000 ns)"),
            "{e}"
        );
        let e = read(&SAMPLE.replace("\"avg\": 18.74", "\"avg\": 1.5")).unwrap_err();
        assert!(e.message.contains("below its min (5000 ns)"), "{e}");
    }
}
