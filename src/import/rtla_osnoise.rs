//! `rtla osnoise hist` and `rtla osnoise top` (and `rtla hwnoise`)
//! output, written from rtla's `osnoise_hist.c` and `osnoise_top.c`.
//! osnoise runs a busy thread per CPU and records the noise: time taken
//! from it by the hardware, NMIs, IRQs, softirqs and other threads. That
//! is not a wake-up latency: the record's quantity is `os_noise` and
//! `compare` says so beside a wake-up run.
//!
//! `hist`: one `CPU-N` column per CPU (the table `rtla_table` reads);
//! each sample is one noise occurrence above the threshold, its length.
//! `top`: the last screen, a row per CPU (`%3d #%-6d %12llu` CPU,
//! periods, runtime; noise, `% CPU Aval`, `Max Noise`, `Max Single`, then
//! the HW, NMI, IRQ, Softirq and Thread counts; `hwnoise` stops after
//! NMI), times in us. It has no histogram and no count of occurrences:
//! the thread's max is `Max Single`, min and avg are unknown, and the
//! rest is kept in the thread's `noise`.

use super::build::{self, RunIn, ThreadIn};
use super::cyclictest_summary::strip_escapes;
use super::rtla_table;
use super::{ImportError, Importer, Source, excerpt, numbered_lines};
use crate::record::{NoiseRecord, Quantity, RunRecord};

pub static IMPORTER: Importer = Importer {
    name: "rtla-osnoise",
    description: "rtla osnoise hist / top (and hwnoise) output: per-CPU OS noise, not a wake-up latency",
    detect,
    parse,
};

fn detect(text: &str) -> u8 {
    for l in text.lines().take(10_000) {
        let l = strip_escapes(l);
        let l = l.trim();
        if l.starts_with("# RTLA osnoise histogram")
            || (l.starts_with("CPU Period") && l.contains("Max Single"))
        {
            return 95;
        }
    }
    0
}

fn parse(src: &Source) -> Result<RunRecord, ImportError> {
    let mut rec = if src.text.contains("# RTLA osnoise histogram") {
        parse_hist(src)?
    } else {
        parse_top(src)?
    };
    rec.quantity = Some(Quantity::OsNoise);
    Ok(rec)
}

fn parse_hist(src: &Source) -> Result<RunRecord, ImportError> {
    let t = rtla_table::read(src.text, "osnoise")?;
    if t.columns.is_empty() {
        return Err(ImportError::whole(
            "the histogram has no CPU column: osnoise saw no noise above its threshold on any CPU; there is nothing to import",
        ));
    }
    let mut run = RunIn::new("rtla-osnoise", "rtla osnoise hist", t.unit_ns);
    run.duration_ns = t.duration_ns;
    run.warnings = t.warnings();
    for c in &t.columns {
        let (h, s) = t.histogram(c)?;
        let mut ti = ThreadIn::new(0);
        ti.cpu = Some(c.cpu);
        ti.samples = s.count;
        ti.min_ns = s.min_ns;
        ti.avg_ns = s.avg_ns;
        ti.max_ns = s.max_ns;
        ti.hist = Some(h);
        run.threads.push(ti);
    }
    build::finish(src, run)
}

/// One CPU's row of top.
struct Row {
    cpu: u32,
    noise: NoiseRecord,
    max_single_ns: u64,
}

fn parse_top(src: &Source) -> Result<RunRecord, ImportError> {
    let screen = src
        .text
        .rsplit("\u{1b}c")
        .find(|p| p.contains("CPU Period"))
        .unwrap_or(src.text);
    let mut rows = Vec::new();
    let mut duration_ns = None;
    let mut header = false;
    for (no, raw) in numbered_lines(screen) {
        let l = strip_escapes(raw.trim_end());
        if let Some(d) = l.trim().strip_prefix("duration:") {
            duration_ns = rtla_table::duration_ns(d.split('|').next().unwrap_or(""));
        } else if l.trim_start().starts_with("CPU Period") {
            header = true;
        } else if header && let Some(r) = top_row(no, &l)? {
            rows.push(r);
        }
    }
    if !header {
        return Err(ImportError::whole(
            "expected the 'CPU Period  Runtime  Noise  % CPU Aval ...' header, found none",
        ));
    }
    if rows.is_empty() {
        return Err(ImportError::whole(
            "expected a row per CPU after the header, found none",
        ));
    }
    let mut run = RunIn::new("rtla-osnoise", "rtla osnoise top", 1000);
    run.duration_ns = duration_ns;
    run.warnings.push(
        "rtla osnoise top counts no noise occurrences and prints no histogram: the count is unknown and only the max (Max Single) is known; the CPU's totals are under 'noise'".into(),
    );
    run.count_known = false;
    for r in &rows {
        let mut ti = ThreadIn::new(0);
        ti.cpu = Some(r.cpu);
        ti.max_ns = Some(r.max_single_ns);
        run.threads.push(ti);
    }
    let mut rec = build::finish(src, run)?;
    for (t, r) in rec.threads.iter_mut().zip(rows) {
        t.noise = Some(r.noise);
    }
    Ok(rec)
}

/// `  0 #60     60000000         1234   99.99794          12           8           0           0        60012           2         60`
fn top_row(no: usize, l: &str) -> Result<Option<Row>, ImportError> {
    let w: Vec<&str> = l.split_whitespace().collect();
    let is_row = w.len() >= 2 && w[0].parse::<u32>().is_ok() && w[1].starts_with('#');
    if !is_row {
        return Ok(None);
    }
    if w.len() != 9 && w.len() != 12 {
        return Err(ImportError::at(
            no,
            format!(
                "expected CPU, #periods, runtime, noise, % CPU Aval, max noise, max single, HW, NMI (then IRQ, Softirq, Thread), found {} fields in '{}'",
                w.len(),
                excerpt(l)
            ),
        ));
    }
    let n = |i: usize| -> Result<u64, ImportError> {
        w[i].trim_start_matches('#').parse::<u64>().map_err(|_| {
            ImportError::at(
                no,
                format!("expected a number, found '{}' in '{}'", w[i], excerpt(l)),
            )
        })
    };
    let pct: f64 = w[4].parse().map_err(|_| {
        ImportError::at(
            no,
            format!("expected % CPU Aval, found '{}' in '{}'", w[4], excerpt(l)),
        )
    })?;
    let full = w.len() == 12;
    let noise = NoiseRecord {
        runtime_ns: n(2)?.saturating_mul(1000),
        noise_ns: n(3)?.saturating_mul(1000),
        cpu_available_pct: pct,
        max_noise_ns: n(5)?.saturating_mul(1000),
        hw: n(7)?,
        nmi: n(8)?,
        irq: if full { Some(n(9)?) } else { None },
        softirq: if full { Some(n(10)?) } else { None },
        thread: if full { Some(n(11)?) } else { None },
    };
    n(1)?;
    Ok(Some(Row {
        cpu: n(0)? as u32,
        noise,
        max_single_ns: n(6)?.saturating_mul(1000),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::ImportOptions;
    use std::path::Path;

    fn read(text: &str) -> Result<RunRecord, ImportError> {
        let o = ImportOptions::default();
        let src = Source {
            path: Path::new("o.txt"),
            text,
            modified_unix_ns: Some(1_700_000_000_000_000_000),
            options: &o,
        };
        crate::import::read(&src, Some(&IMPORTER))
    }

    const HIST: &str = include_str!("../../tests/fixtures/import-formats/osnoise-hist.txt");
    const TOP: &str = include_str!("../../tests/fixtures/import-formats/osnoise-top.txt");

    #[test]
    fn hist_is_noise_per_cpu() {
        assert_eq!(detect(HIST), 95);
        let r = read(HIST).unwrap();
        assert_eq!(r.quantity, Some(Quantity::OsNoise));
        assert_eq!(r.threads.len(), 2);
        let t = &r.threads[1];
        assert_eq!(t.cpu, Some(1));
        assert_eq!(t.stats.samples, 529);
        assert_eq!(t.stats.min_ns, Some(0));
        assert_eq!(t.stats.max_ns, Some(27_000));
        assert_eq!(r.duration_ns, 60_000_000_000);
    }

    #[test]
    fn top_keeps_the_counts_per_cpu() {
        assert_eq!(detect(TOP), 95);
        let r = read(TOP).unwrap();
        assert_eq!(r.threads.len(), 2);
        let t = &r.threads[1];
        assert_eq!(t.cpu, Some(1));
        assert_eq!(t.stats.max_ns, Some(9000));
        assert_eq!(t.stats.min_ns, None);
        let n = t.noise.as_ref().unwrap();
        assert_eq!(n.runtime_ns, 9_000_000_000);
        assert_eq!(n.noise_ns, 312_000);
        assert_eq!(n.cpu_available_pct, 99.99653);
        assert_eq!(n.max_noise_ns, 21_000);
        assert_eq!(
            (n.hw, n.nmi, n.irq, n.softirq, n.thread),
            (0, 0, Some(9012), Some(3), Some(41))
        );
        assert_eq!(r.duration_ns, 10_000_000_000);
    }

    #[test]
    fn hwnoise_rows_and_bad_rows() {
        let hw = "duration:   0 00:00:10 | time is in us\nCPU Period       Runtime        Noise  % CPU Aval   Max Noise   Max Single          HW          NMI\n  0 #9        9000000          10   99.99988          10          10           1           0\n";
        let r = read(hw).unwrap();
        let n = r.threads[0].noise.as_ref().unwrap();
        assert_eq!((n.hw, n.irq), (1, None));
        let bad = hw.replace("99.99988", "99.9x");
        assert_eq!(read(&bad).unwrap_err().line, Some(3));
        let short = hw.replace("           1           0\n", "\n");
        assert!(read(&short).unwrap_err().message.contains("fields"));
    }
}
