//! The status lines cyclictest prints while it runs and leaves on the
//! terminal at the end: `T: 0 ( 1234) P:99 I:1000 C: 100000 Min: 5 Act:
//! 10 Avg: 8 Max: 30` (one per thread, refreshed with cursor-movement
//! escapes; the last line of each thread is its result). Numbers are µs,
//! or ns for output of `cyclictest -N` (say so with `rtscope import
//! --ns`). No histogram: count, min, avg and max only.

use super::build::{self, RunIn, ThreadIn};
use super::{ImportError, Importer, Source, excerpt, numbered_lines};
use crate::record::RunRecord;

pub static IMPORTER: Importer = Importer {
    name: "cyclictest-summary",
    description: "cyclictest's status lines (T: 0 ( 123) P:99 I:1000 C: … Min: … Avg: … Max: …), e.g. its saved terminal output",
    detect,
    parse,
};

/// One `T:` status line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TLine {
    pub thread: u32,
    pub tid: Option<u32>,
    pub priority: i32,
    pub interval_us: u64,
    pub cycles: u64,
    pub min: i64,
    pub act: i64,
    pub avg: i64,
    pub max: i64,
}

/// Remove terminal escape sequences (`ESC [ … letter`) and stray ESCs.
pub fn strip_escapes(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// Parse `l` if it is a `T:` line (`Ok(None)` when it is not one).
pub fn parse_t_line(l: &str, no: usize) -> Result<Option<TLine>, ImportError> {
    let Some(rest) = l.trim_start().strip_prefix("T:") else {
        return Ok(None);
    };
    let expected = |what: &str| {
        ImportError::at(
            no,
            format!(
                "expected a cyclictest status line 'T: N (TID) P:PRIO I:INTERVAL C:COUNT Min:… Act:… Avg:… Max:…' ({what}), found '{}'",
                excerpt(l)
            ),
        )
    };
    let (thread, rest) = rest.split_once('(').ok_or_else(|| expected("no '(TID)'"))?;
    let thread: u32 = thread
        .trim()
        .parse()
        .map_err(|_| expected("bad thread number"))?;
    let (tid, rest) = rest.split_once(')').ok_or_else(|| expected("no ')'"))?;
    let tid: u32 = tid.trim().parse().map_err(|_| expected("bad thread id"))?;
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut pending: Option<String> = None;
    for tok in rest.split_whitespace() {
        if let Some(k) = pending.take() {
            fields.push((k, tok.to_string()));
        } else if let Some(k) = tok.strip_suffix(':') {
            pending = Some(k.to_string());
        } else if let Some((k, v)) = tok.split_once(':') {
            fields.push((k.to_string(), v.to_string()));
        } else {
            return Err(expected(&format!("stray '{tok}'")));
        }
    }
    if let Some(k) = pending {
        return Err(expected(&format!("no value after '{k}:'")));
    }
    let get = |k: &str| -> Result<i64, ImportError> {
        let v = fields
            .iter()
            .find(|(key, _)| key == k)
            .ok_or_else(|| expected(&format!("no {k}:")))?;
        v.1.parse::<i64>()
            .map_err(|_| expected(&format!("{k}: is not a number")))
    };
    let nonneg = |k: &str| -> Result<u64, ImportError> {
        u64::try_from(get(k)?).map_err(|_| expected(&format!("{k}: is negative")))
    };
    Ok(Some(TLine {
        thread,
        tid: (tid > 0).then_some(tid),
        priority: get("P")? as i32,
        interval_us: nonneg("I")?,
        cycles: nonneg("C")?,
        min: get("Min")?,
        act: get("Act")?,
        avg: get("Avg")?,
        max: get("Max")?,
    }))
}

fn detect(text: &str) -> u8 {
    for l in text.lines().take(100_000) {
        let l = strip_escapes(l);
        let l = l.trim_start();
        if l.starts_with("T:") && l.contains("C:") && l.contains("Max:") {
            return 80;
        }
    }
    0
}

fn parse(src: &Source) -> Result<RunRecord, ImportError> {
    let unit = src.options.summary_unit_ns;
    let mut run = RunIn::new(IMPORTER.name, "cyclictest", unit);
    let last = status_lines(src, &mut run)?;
    let ns = |v: i64| (v.max(0) as u64).saturating_mul(unit);
    let mut duration_ns = 0u64;
    for t in last {
        let mut th = ThreadIn::new(t.interval_us.saturating_mul(1000));
        th.tid = t.tid;
        th.priority = t.priority;
        th.samples = t.cycles;
        if t.cycles > 0 {
            th.min_ns = Some(ns(t.min));
            th.avg_ns = Some(ns(t.avg) as f64);
            th.max_ns = Some(ns(t.max));
        }
        duration_ns = duration_ns.max(t.cycles.saturating_mul(t.interval_us.saturating_mul(1000)));
        run.threads.push(th);
    }
    let first = &run.threads[0];
    run.options.interval_ns = first.interval_ns;
    run.options.priority = first.priority;
    run.priority_known = true;
    if run.threads.len() > 1 && run.threads[1].interval_ns > first.interval_ns {
        run.options.distance_ns = run.threads[1].interval_ns - first.interval_ns;
    }
    run.duration_ns = Some(duration_ns);
    run.warnings.push(format!(
        "the duration is estimated as count x interval; values were read as {}",
        if unit == 1 {
            "nanoseconds (--ns)"
        } else {
            "microseconds (cyclictest's default; use --ns for output of cyclictest -N)"
        }
    ));
    build::finish(src, run)
}

/// The last status line of each thread, one for every thread from 0;
/// the policy and cpu_dma_latency lines go into `run`'s options.
fn status_lines(src: &Source, run: &mut RunIn) -> Result<Vec<TLine>, ImportError> {
    let mut last: Vec<Option<TLine>> = Vec::new();
    for (no, line) in numbered_lines(src.text) {
        let l = strip_escapes(line);
        let l = l.trim();
        if let Some(t) = parse_t_line(l, no)? {
            let i = t.thread as usize;
            if i > 4096 {
                return Err(ImportError::at(
                    no,
                    format!("expected a thread number below 4096, found {i}"),
                ));
            }
            if last.len() <= i {
                last.resize(i + 1, None);
            }
            last[i] = Some(t);
        } else if let Some(p) = l.strip_prefix("policy: ") {
            run.options.policy = p.split(':').next().unwrap_or("").trim().into();
        } else if let Some(us) = l
            .strip_prefix("# /dev/cpu_dma_latency set to ")
            .and_then(|r| r.strip_suffix("us"))
        {
            run.options.dma_latency_us = us.trim().parse().ok();
        }
    }
    if last.is_empty() {
        return Err(ImportError::whole(
            "expected cyclictest status lines ('T: 0 (TID) P:… I:… C:… Min:… Act:… Avg:… Max:…'), found none",
        ));
    }
    if let Some(missing) = last.iter().position(Option::is_none) {
        return Err(ImportError::whole(format!(
            "expected a status line for every thread, found none for thread {missing}"
        )));
    }
    Ok(last.into_iter().flatten().collect())
}

/// Where a second, third… run starts in `text` (0-based line indices):
/// a `# /dev/cpu_dma_latency` header after status lines, or a thread
/// whose loop count (`C:`) falls back, or stays while its figures change
/// (a saved terminal's refreshes only count up). The new run starts with
/// the refresh holding that line (the `policy:` line just before it
/// included). Lines that are not status lines are left to the reader.
pub fn run_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut last: std::collections::BTreeMap<u32, TLine> = Default::default();
    let mut policy_at: Option<usize> = None;
    let mut refresh_at = 0usize;
    let mut prev_t: Option<u32> = None;
    for (i, line) in text.lines().enumerate() {
        let l = strip_escapes(line);
        let l = l.trim();
        if l.starts_with("# /dev/cpu_dma_latency") {
            if !last.is_empty() {
                starts.push(i);
                last.clear();
            }
            prev_t = None;
            continue;
        }
        if l.starts_with("policy:") {
            policy_at = Some(i);
            continue;
        }
        let Ok(Some(t)) = parse_t_line(l, i + 1) else {
            continue;
        };
        if prev_t.is_none_or(|p| t.thread <= p) {
            refresh_at = policy_at.filter(|&p| p + 3 >= i).unwrap_or(i);
        }
        prev_t = Some(t.thread);
        if let Some(before) = last.get(&t.thread)
            && starts_again(before, &t)
        {
            starts.push(refresh_at);
            last.clear();
        }
        last.insert(t.thread, t);
    }
    starts.dedup();
    starts.retain(|&s| s > 0);
    starts
}

/// Whether status line `now` of a thread cannot follow `before` in one
/// run: its count fell back, or stayed while its figures changed.
fn starts_again(before: &TLine, now: &TLine) -> bool {
    now.cycles < before.cycles
        || (now.cycles == before.cycles
            && (now.min, now.avg, now.max) != (before.min, before.avg, before.max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::ImportOptions;
    use std::path::Path;

    #[test]
    fn t_lines_in_all_their_spacings() {
        let t = parse_t_line(
            "T: 0 (10367) P:80 I:1000 C:   1500 Min:      9 Act:   15 Avg:   18 Max:      47",
            1,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (t.thread, t.tid, t.priority, t.interval_us, t.cycles),
            (0, Some(10367), 80, 1000, 1500)
        );
        assert_eq!((t.min, t.act, t.avg, t.max), (9, 15, 18, 47));
        let t = parse_t_line(
            "T: 1 (    0) P:80 I:1500 C:      0 Min:1000000 Act:    0 Avg:    0 Max:       0",
            1,
        )
        .unwrap()
        .unwrap();
        assert_eq!((t.tid, t.min), (None, 1_000_000));
        let t = parse_t_line("T:12 ( 1234) P:99 I:200 C:12345678 Min:      2 Act:    3 Avg:    3 Max:   15 SMI:       0", 1)
            .unwrap()
            .unwrap();
        assert_eq!((t.thread, t.cycles), (12, 12_345_678));
        assert!(parse_t_line("policy: fifo", 1).unwrap().is_none());
        let e = parse_t_line(
            "T: 0 (10367) P:80 I:1000 C:   15x0 Min: 9 Act: 1 Avg: 1 Max: 4",
            7,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(7));
        assert!(e.message.contains("C: is not a number"), "{e}");
    }

    #[test]
    fn the_last_line_of_each_thread_wins_and_escapes_are_ignored() {
        let text = "# /dev/cpu_dma_latency set to 0us\npolicy: fifo: loadavg: 0.57 0.69 0.47 3/90 10368          \n\nT: 0 (10367) P:80 I:1000 C:      0 Min:1000000 Act:    0 Avg:    0 Max:       0\nT: 1 (    0) P:80 I:1500 C:      0 Min:1000000 Act:    0 Avg:    0 Max:       0\n\u{1b}[4Apolicy: fifo: loadavg: 0.57 0.69 0.47 1/90 10368          \n\nT: 0 (10367) P:80 I:1000 C:   1500 Min:      9 Act:   15 Avg:   18 Max:      47\nT: 1 (10368) P:80 I:1500 C:   1000 Min:     14 Act:   23 Avg:   26 Max:      58\n";
        assert_eq!(detect(text), 80);
        let o = ImportOptions::default();
        let r = parse(&Source {
            path: Path::new("s.txt"),
            text,
            modified_unix_ns: None,
            options: &o,
        })
        .unwrap();
        assert_eq!(r.threads.len(), 2);
        assert_eq!(r.threads[1].stats.samples, 1000);
        assert_eq!(r.threads[1].stats.max_ns, Some(58_000));
        assert_eq!(r.threads[1].interval_ns, 1_500_000);
        assert_eq!(r.options.policy, "fifo");
        assert_eq!(r.options.distance_ns, 500_000);
        assert_eq!(r.overall.max_ns, Some(58_000));
        assert_eq!(r.overall.p99_ns, None);
        assert_eq!(r.duration_ns, 1_500_000_000);
        r.validate().unwrap();
        let o = ImportOptions {
            summary_unit_ns: 1,
            ..Default::default()
        };
        let r = parse(&Source {
            path: Path::new("s.txt"),
            text,
            modified_unix_ns: None,
            options: &o,
        })
        .unwrap();
        assert_eq!(r.threads[1].stats.max_ns, Some(58));
    }
}
