//! `rtla timerlat hist` and `rtla timerlat top` output (written from
//! rtla's `timerlat_hist.c` and `timerlat_top.c`). timerlat arms a timer
//! per CPU and measures, at each expiry, three latencies of the same
//! timer: in its interrupt handler (IRQ), when the woken kernel thread
//! runs (Thr), and with `-u` when the woken user thread returns to user
//! space (Usr). They stay apart: each CPU becomes one thread whose
//! `stats` are the wake-up comparable to rtscope's and cyclictest's (Usr
//! with `-u`, else Thr; IRQ only under `--no-thread`) and whose
//! `contexts` hold the others.
//!
//! `hist`: the table `rtla_table` reads (IRQ-N / Thr-N / Usr-N columns).
//! `top`: the last screen (`ESC c` clears between screens), a row per
//! CPU: `%3d #%-9llu |` (the IRQ count; thread counts are not printed and
//! are taken as equal) then cur / min / avg / max per context; no
//! histogram, quantiles unknown.

use super::build::{self, RunIn, ThreadIn};
use super::rtla_table::{self, Column, Table};
use super::{ImportError, Importer, Source, excerpt, numbered_lines};
use crate::histogram::Histogram;
use crate::record::{
    ContextRecord, HistogramRecord, LatencyContext, LatencyStats, Overflow, Quantity, RunRecord,
};

pub static IMPORTER: Importer = Importer {
    name: "rtla-timerlat",
    description: "rtla timerlat hist / top output: per-CPU IRQ, thread and (-u) user timer latencies, kept apart",
    detect,
    parse,
};

fn detect(text: &str) -> u8 {
    for l in text.lines().take(10_000) {
        let l = l.trim();
        if l.starts_with("# RTLA timerlat histogram")
            || (l.contains("IRQ Timer Latency (") && l.contains("Thread Timer Latency ("))
        {
            return 95;
        }
    }
    0
}

fn parse(src: &Source) -> Result<RunRecord, ImportError> {
    if src.text.contains("# RTLA timerlat histogram") {
        parse_hist(src)
    } else {
        parse_top(src)
    }
}

/// One CPU's contexts, as (context, histogram if any, stats).
type Ctx = (LatencyContext, Option<Histogram>, CtxStats);

#[derive(Clone, Debug, Default)]
struct CtxStats {
    count: u64,
    min_ns: Option<u64>,
    avg_ns: Option<f64>,
    max_ns: Option<u64>,
    /// Samples beyond the histogram's rows (values unknown).
    overflow: Option<Overflow>,
}

fn context_of(kind: &str) -> LatencyContext {
    match kind {
        "IRQ" => LatencyContext::Irq,
        "Usr" => LatencyContext::User,
        _ => LatencyContext::Thread,
    }
}

/// The context whose latency stands for the CPU's wake-up: user, else
/// thread, else IRQ.
fn main_index(ctxs: &[Ctx]) -> usize {
    [
        LatencyContext::User,
        LatencyContext::Thread,
        LatencyContext::Irq,
    ]
    .iter()
    .find_map(|want| ctxs.iter().position(|c| c.0 == *want))
    .unwrap_or(0)
}

fn parse_hist(src: &Source) -> Result<RunRecord, ImportError> {
    let t = rtla_table::read(src.text, "timerlat")?;
    let mut cpus: Vec<u32> = t.columns.iter().map(|c| c.cpu).collect();
    cpus.dedup();
    let per_cpu: Vec<(u32, Vec<Ctx>)> = cpus
        .iter()
        .map(|&cpu| Ok((cpu, hist_contexts(&t, cpu)?)))
        .collect::<Result<_, ImportError>>()?;
    let mut run = RunIn::new("rtla-timerlat", "rtla timerlat hist", t.unit_ns);
    run.duration_ns = t.duration_ns;
    run.warnings = t.warnings();
    finish(src, run, per_cpu)
}

/// CPU `cpu`'s columns that counted something, as contexts.
fn hist_contexts(t: &Table, cpu: u32) -> Result<Vec<Ctx>, ImportError> {
    t.columns
        .iter()
        .filter(|c: &&Column| c.cpu == cpu && c.count != Some(0))
        .map(|c| {
            let (h, s) = t.histogram(c)?;
            let stats = CtxStats {
                count: s.count,
                min_ns: s.min_ns,
                avg_ns: s.avg_ns,
                max_ns: s.max_ns,
                overflow: (s.overflows > 0).then_some(Overflow {
                    count: s.overflows,
                    from_ns: s.overflow_from_ns,
                }),
            };
            Ok((context_of(&c.kind), Some(h), stats))
        })
        .collect()
}

/// The record: per CPU a thread of its main context, the others beside.
fn finish(
    src: &Source,
    mut run: RunIn,
    per_cpu: Vec<(u32, Vec<Ctx>)>,
) -> Result<RunRecord, ImportError> {
    let per_cpu: Vec<(u32, Vec<Ctx>)> =
        per_cpu.into_iter().filter(|(_, c)| !c.is_empty()).collect();
    if per_cpu.is_empty() {
        return Err(ImportError::whole(
            "expected at least one CPU with latencies, found none",
        ));
    }
    let mut mains = Vec::new();
    let mut others = Vec::new();
    for (cpu, mut ctxs) in per_cpu {
        let (ctx, hist, s) = ctxs.remove(main_index(&ctxs));
        let mut ti = ThreadIn::new(0);
        ti.cpu = Some(cpu);
        ti.samples = s.count;
        ti.min_ns = s.min_ns;
        ti.avg_ns = s.avg_ns;
        ti.max_ns = s.max_ns;
        ti.overflow = s.overflow;
        ti.hist = hist;
        run.threads.push(ti);
        mains.push(ctx);
        others.push(ctxs);
    }
    if mains.iter().all(|c| *c == LatencyContext::Irq) {
        run.warnings.push(
            "only the IRQ context was measured (--no-thread): the timer's interrupt latency, earlier than any thread's wake-up, is shown as the run's latency".into(),
        );
    }
    let resolution = run.resolution_ns;
    let mut rec = build::finish(src, run)?;
    rec.quantity = Some(Quantity::WakeupLatency);
    for ((t, ctx), rest) in rec.threads.iter_mut().zip(mains).zip(others) {
        t.context = Some(ctx);
        t.contexts = rest
            .into_iter()
            .map(|c| context_record(c, resolution))
            .collect();
    }
    Ok(rec)
}

/// A context beside the thread's own, as the record keeps it.
fn context_record((context, hist, s): Ctx, resolution_ns: u64) -> ContextRecord {
    let hist = hist.unwrap_or_else(Histogram::latency);
    let mut stats = LatencyStats {
        samples: s.count,
        wakeups: s.count,
        min_ns: s.min_ns,
        avg_ns: s.avg_ns,
        max_ns: s.max_ns,
        overflow: s.overflow,
        ..Default::default()
    };
    stats.fill_quantiles(&hist);
    ContextRecord {
        context,
        stats,
        histogram: HistogramRecord::from_histogram(&hist, resolution_ns),
    }
}

fn parse_top(src: &Source) -> Result<RunRecord, ImportError> {
    let screen = last_screen(src.text);
    let mut top = Top::default();
    for (no, raw) in numbered_lines(&screen) {
        top.line(no, raw.trim_end())?;
    }
    let Some(unit_ns) = top.unit_ns else {
        return Err(ImportError::whole(
            "expected the line naming 'IRQ Timer Latency (us)' and 'Thread Timer Latency (us)', found none",
        ));
    };
    let mut run = RunIn::new("rtla-timerlat", "rtla timerlat top", unit_ns);
    run.duration_ns = top.duration_ns;
    run.warnings.push(
        "rtla timerlat top prints the IRQ count only: the thread and user counts are taken as equal to it".into(),
    );
    finish(src, run, top.cpus)
}

/// The text after the last `ESC c` that holds a screen, ANSI colour
/// codes removed (a saved terminal).
fn last_screen(text: &str) -> String {
    let part = text
        .rsplit("\u{1b}c")
        .find(|p| p.contains("Timer Latency ("))
        .unwrap_or(text);
    let mut out = String::with_capacity(part.len());
    let mut chars = part.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// What top's screen says.
#[derive(Default)]
struct Top {
    unit_ns: Option<u64>,
    duration_ns: Option<u64>,
    cpus: Vec<(u32, Vec<Ctx>)>,
}

impl Top {
    fn line(&mut self, no: usize, l: &str) -> Result<(), ImportError> {
        if l.contains("IRQ Timer Latency (") {
            self.unit_ns = Some(if l.contains("Latency (ns)") { 1 } else { 1000 });
            let d = l.split('|').next().unwrap_or("");
            self.duration_ns = rtla_table::duration_ns(d);
            return Ok(());
        }
        let Some((head, rest)) = l.split_once('|') else {
            return Ok(());
        };
        let mut w = head.split_whitespace();
        let (Some(cpu), Some(count)) = (w.next(), w.next()) else {
            return Ok(());
        };
        let (Ok(cpu), Some(count)) = (cpu.parse::<u32>(), count.strip_prefix('#')) else {
            return Ok(());
        };
        let unit = self.unit_ns.ok_or_else(|| {
            ImportError::at(
                no,
                "expected the header naming the unit before the CPU rows",
            )
        })?;
        let count: u64 = count.parse().map_err(|_| {
            ImportError::at(
                no,
                format!("expected the count after '#', found '{}'", excerpt(l)),
            )
        })?;
        let mut ctxs = Vec::new();
        let kinds = [
            LatencyContext::Irq,
            LatencyContext::Thread,
            LatencyContext::User,
        ];
        for (part, ctx) in rest.split('|').zip(kinds) {
            if let Some(s) = top_values(no, l, part, count, unit)? {
                ctxs.push((ctx, None, s));
            }
        }
        self.cpus.push((cpu, ctxs));
        Ok(())
    }
}

/// `cur min avg max` of one context (`-` four times: nothing counted).
fn top_values(
    no: usize,
    l: &str,
    part: &str,
    count: u64,
    unit: u64,
) -> Result<Option<CtxStats>, ImportError> {
    let w: Vec<&str> = part.split_whitespace().collect();
    if w.len() != 4 {
        return Err(ImportError::at(
            no,
            format!(
                "expected cur, min, avg and max, found '{}' in '{}'",
                part.trim(),
                excerpt(l)
            ),
        ));
    }
    if w.iter().all(|x| *x == "-") {
        return Ok(None);
    }
    let mut v = [0u64; 4];
    for (i, x) in w.iter().enumerate() {
        v[i] = x.parse().map_err(|_| {
            ImportError::at(
                no,
                format!("expected a latency, found '{x}' in '{}'", excerpt(l)),
            )
        })?;
    }
    Ok(Some(CtxStats {
        count,
        min_ns: Some(v[1].saturating_mul(unit)),
        avg_ns: Some(v[2] as f64 * unit as f64),
        max_ns: Some(v[3].saturating_mul(unit)),
        overflow: None,
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
            path: Path::new("t.txt"),
            text,
            modified_unix_ns: Some(1_700_000_000_000_000_000),
            options: &o,
        };
        crate::import::read(&src, Some(&IMPORTER))
    }

    pub const HIST_U: &str =
        include_str!("../../tests/fixtures/import-formats/timerlat-hist-u.txt");
    pub const TOP: &str = include_str!("../../tests/fixtures/import-formats/timerlat-top.txt");

    #[test]
    fn hist_keeps_irq_thread_and_user_apart() {
        assert_eq!(detect(HIST_U), 95);
        let r = read(HIST_U).unwrap();
        assert_eq!(r.quantity, Some(Quantity::WakeupLatency));
        assert_eq!(r.threads.len(), 2);
        let t = &r.threads[1];
        assert_eq!(t.cpu, Some(1));
        assert_eq!(t.context, Some(LatencyContext::User));
        assert_eq!(t.stats.samples, 1000);
        assert_eq!(t.stats.min_ns, Some(3000));
        assert_eq!(t.stats.avg_ns, Some(4000.0));
        assert_eq!(t.stats.max_ns, Some(21_000));
        let ctx: Vec<_> = t.contexts.iter().map(|c| c.context).collect();
        assert_eq!(ctx, vec![LatencyContext::Irq, LatencyContext::Thread]);
        assert_eq!(t.contexts[0].stats.max_ns, Some(9000));
        assert_eq!(t.contexts[1].stats.samples, 1000);
        assert_eq!(t.contexts[1].stats.max_ns, Some(17_000));
        assert_eq!(r.duration_ns, 10_000_000_000);
        // Overall is the user context of both CPUs, never the IRQ one.
        assert_eq!(r.overall.samples, 2000);
        assert_eq!(r.overall.max_ns, Some(21_000));
    }

    #[test]
    fn top_takes_the_last_screen() {
        assert_eq!(detect(TOP), 95);
        let r = read(TOP).unwrap();
        assert_eq!(r.threads.len(), 2);
        let t = &r.threads[0];
        assert_eq!(t.context, Some(LatencyContext::Thread));
        assert_eq!(t.stats.samples, 10003);
        assert_eq!(t.stats.min_ns, Some(2000));
        assert_eq!(t.stats.avg_ns, Some(4000.0));
        assert_eq!(t.stats.max_ns, Some(14_000));
        assert_eq!(t.stats.p99_ns, None);
        assert_eq!(t.contexts.len(), 1);
        assert_eq!(t.contexts[0].context, LatencyContext::Irq);
        assert_eq!(t.contexts[0].stats.max_ns, Some(8000));
        assert_eq!(r.duration_ns, 10_000_000_000);
    }

    #[test]
    fn a_side_contexts_overflows_are_kept() {
        let text = "# RTLA timerlat histogram\n# Time unit is nanoseconds (ns)\n# Duration:   0 00:00:05\nIndex   IRQ-000   Thr-000\n1200          3         0\n1300          1         4\nover:         2         0\ncount:        6         4\nmin:       1234      1310\navg:       1290      1320\nmax:       9000      1350\n";
        let r = read(text).unwrap();
        let t = &r.threads[0];
        assert_eq!(t.context, Some(LatencyContext::Thread));
        assert_eq!(t.stats.overflow, None);
        assert_eq!(t.contexts[0].context, LatencyContext::Irq);
        let o = t.contexts[0]
            .stats
            .overflow
            .expect("the IRQ context's over: samples");
        assert_eq!(o.count, 2);
        assert!(o.from_ns > 1300, "{o:?}");
    }

    #[test]
    fn no_thread_nano_and_bad_rows() {
        let text = "# RTLA timerlat histogram\n# Time unit is nanoseconds (ns)\n# Duration:   0 00:00:05\nIndex   IRQ-000\n1200          3\n1300          1\nover:         0\ncount:        4\nmin:       1234\navg:       1290\nmax:       1301\n";
        let r = read(text).unwrap();
        let t = &r.threads[0];
        assert_eq!(t.context, Some(LatencyContext::Irq));
        assert_eq!(t.stats.max_ns, Some(1301));
        assert!(r.warnings.iter().any(|w| w.contains("--no-thread")));
        let bad = text.replace("1300          1", "1300          x");
        assert_eq!(read(&bad).unwrap_err().line, Some(6));
        let bad = TOP.replace("#10003", "#1x003");
        assert!(read(&bad).is_err());
    }
}
