//! Benchmark `os-noise`: seed 001's latency program. On every CPU of
//! `--cpus` at once, a SCHED_FIFO thread reads CLOCK_MONOTONIC in a
//! tight loop for `-D`; every gap between two reads is time the CPU was
//! taken from it (interrupts, kernel threads, throttling, the hypervisor).
//! Kept per CPU: the histogram of the gaps, the largest gaps with when
//! they happened, and the share of the CPU left to the loop (what oslat
//! and rtla osnoise report). With `--explain`, a control thread on a
//! CPU outside `--cpus` has the trace recorder explain the largest gaps
//! while the loops run (its window of events reaches back 0.5 s only):
//! each loop offers its largest recent gap in a slot it never waits for.

use super::harness::{Samples, Team, all, now};
use super::{Bench, BenchOutcome, CharError, Ctx, Gap, Group, NoiseDetail};
use crate::explain::{Explanation, Spike};
use crate::sys::clock::{Clock, sleep_for_ns};
use crate::trace::{Recorder, TraceConfig};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering::SeqCst};

pub const BENCH: Bench = Bench {
    name: "os-noise",
    group: Group::Noise,
    help: "busy loop reading the clock on every CPU: gaps, largest gaps, CPU share left",
    measures: "gap between two consecutive clock reads of a FIFO busy loop (nothing subtracted)",
    run,
};

/// Gaps longer than this count as noise (osnoise's default threshold is
/// 5 us; oslat buckets from 1 us).
pub const THRESHOLD_NS: u64 = 1_000;
/// How many of the largest gaps are kept per CPU.
pub const LARGEST: usize = 10;
/// How many explained gaps are kept per CPU (`--explain`).
pub const EXPLAINED: usize = 5;
/// How often the control thread takes the loops' offered gaps.
const EXPLAIN_POLL_NS: u64 = 50_000_000;
/// How long one explanation may wait for the trace reader.
const EXPLAIN_SYNC_NS: u64 = 200_000_000;

/// The largest recent gap a loop offers for explanation: (start, gap).
/// The loop only ever `try_lock`s it, so it never waits.
#[derive(Default)]
pub struct Offer(Mutex<(u64, u64)>);

impl Offer {
    #[inline]
    fn offer(&self, start_ns: u64, gap_ns: u64) {
        if let Ok(mut g) = self.0.try_lock()
            && gap_ns > g.1
        {
            *g = (start_ns, gap_ns);
        }
    }

    fn take(&self) -> Option<(u64, u64)> {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let v = *g;
        *g = (0, 0);
        (v.1 > 0).then_some(v)
    }
}

/// The largest gaps seen, largest first, in a fixed array (no
/// allocation in the loop).
struct Largest {
    gaps: [Gap; LARGEST],
    len: usize,
}

impl Largest {
    fn new() -> Largest {
        Largest {
            gaps: [Gap {
                gap_ns: 0,
                at_ns: 0,
            }; LARGEST],
            len: 0,
        }
    }

    #[inline]
    fn smallest(&self) -> u64 {
        if self.len < LARGEST {
            0
        } else {
            self.gaps[LARGEST - 1].gap_ns
        }
    }

    fn offer(&mut self, g: Gap) {
        let mut i = self.len.min(LARGEST - 1);
        if self.len < LARGEST {
            self.len += 1;
        }
        self.gaps[i] = g;
        while i > 0 && self.gaps[i - 1].gap_ns < self.gaps[i].gap_ns {
            self.gaps.swap(i - 1, i);
            i -= 1;
        }
    }
}

/// The busy loop on the calling (already pinned) thread for
/// `duration_ns`; gaps of at least `explain.1` are offered to `explain.0`.
pub fn busy_loop(duration_ns: u64, explain: Option<(&Offer, u64)>) -> (Samples, NoiseDetail) {
    let mut s = Samples::new(0);
    let mut top = Largest::new();
    let (mut noise, mut above, mut loops) = (0u64, 0u64, 0u64);
    let start = now();
    let end = start + duration_ns;
    let mut prev = start;
    #[cfg(test)]
    let hot = crate::sys::alloc_audit::HotGuard::enter();
    // HOT PATH: a clock read, a histogram write, rare bookkeeping.
    loop {
        let t = now();
        let gap = t - prev;
        s.record(gap);
        loops += 1;
        if gap > THRESHOLD_NS {
            noise += gap;
            above += 1;
            if gap > top.smallest() {
                top.offer(Gap {
                    gap_ns: gap,
                    at_ns: prev - start,
                });
            }
            if let Some((slot, above)) = explain
                && gap >= above
            {
                slot.offer(prev, gap);
            }
        }
        prev = t;
        if t >= end {
            break;
        }
    }
    #[cfg(test)]
    drop(hot);
    let duration = prev.max(start + 1) - start;
    let detail = NoiseDetail {
        duration_ns: duration,
        loops,
        threshold_ns: THRESHOLD_NS,
        gaps_above_threshold: above,
        noise_ns: noise,
        cpu_left_to_loop_percent: 100.0 * (1.0 - (noise as f64 / duration as f64).min(1.0)),
        largest_gaps: top.gaps[..top.len].to_vec(),
        explained_above_ns: explain.map(|e| e.1),
        explanations: Vec::new(),
    };
    (s, detail)
}

/// Keep `x` among the [`EXPLAINED`] largest of `kept` (largest first).
fn keep(kept: &mut Vec<Explanation>, x: Explanation) {
    let at = kept.partition_point(|k| k.spike.latency_ns >= x.spike.latency_ns);
    if at < EXPLAINED {
        kept.insert(at, x);
        kept.truncate(EXPLAINED);
    }
}

/// Explain what the loops offer until they have all ended.
fn explain_while_running(
    recorder: &Recorder,
    cpus: &[usize],
    offers: &[Offer],
    tids: &[AtomicI32],
    running: &AtomicUsize,
) -> Vec<Vec<Explanation>> {
    let mut kept = vec![Vec::new(); cpus.len()];
    loop {
        let last = running.load(SeqCst) == 0;
        for (i, &cpu) in cpus.iter().enumerate() {
            let Some((start, gap)) = offers[i].take() else {
                continue;
            };
            let spike = Spike {
                thread: i as u32,
                cpu,
                tid: tids[i].load(SeqCst),
                deadline_ns: start,
                wake_ns: start + gap,
                latency_ns: gap,
                cycle: None,
            };
            keep(&mut kept[i], recorder.explain(&spike, EXPLAIN_SYNC_NS));
        }
        if last {
            return kept;
        }
        let _ = sleep_for_ns(Clock::Monotonic, EXPLAIN_POLL_NS);
    }
}

fn run(ctx: &Ctx) -> Result<BenchOutcome, CharError> {
    let team = &Team::new(ctx.cpus.len());
    let d = ctx.per_bench_ns;
    let recorder = match ctx.explain_above_ns {
        Some(_) => {
            let mut cfg = TraceConfig::for_cpus(ctx.cpus);
            cfg.reader_cpus = Some(ctx.housekeeping.clone());
            Some(Recorder::start(&cfg).map_err(CharError::Explain)?)
        }
        None => None,
    };
    let offers: Vec<Offer> = ctx.cpus.iter().map(|_| Offer::default()).collect();
    let tids: Vec<AtomicI32> = ctx.cpus.iter().map(|_| AtomicI32::new(0)).collect();
    let running = &AtomicUsize::new(ctx.cpus.len());
    let above = ctx.explain_above_ns.unwrap_or(u64::MAX);
    let (results, explained) = std::thread::scope(|s| {
        let handles: Vec<_> = ctx
            .cpus
            .iter()
            .enumerate()
            .map(|(i, &cpu)| {
                let (offer, tid) = (&offers[i], &tids[i]);
                let explain = recorder.as_ref().map(|_| (offer, above));
                s.spawn(move || -> Result<_, CharError> {
                    let r = team.start(cpu, ctx.priority).map(|_| {
                        tid.store(crate::sys::sched::gettid(), SeqCst);
                        (cpu, busy_loop(d, explain))
                    });
                    running.fetch_sub(1, SeqCst);
                    r
                })
            })
            .collect();
        let explainer = recorder.as_ref().map(|rec| {
            let (cpus, offers, tids) = (ctx.cpus, &offers, &tids);
            let hk = ctx.housekeeping.clone();
            s.spawn(move || {
                // An ordinary thread, on the CPUs the loops leave free.
                let _ = crate::sys::sched::set_affinity(0, &hk);
                explain_while_running(rec, cpus, offers, tids, running)
            })
        });
        let results: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        let explained = explainer
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        (results, explained)
    });
    if let Some(rec) = recorder
        && let Err(e) = rec.stop()
    {
        eprintln!("rtscope: warning: undoing the trace set-up: {e}");
    }
    let mut out = BenchOutcome::default();
    for (i, (cpu, (samples, mut detail))) in all(results)?.into_iter().enumerate() {
        if let Some(x) = explained.get(i) {
            detail.explanations = x.clone();
        }
        let mut r = samples.result(BENCH.name, &format!("CPU {cpu}"), cpu, BENCH.measures);
        r.noise = Some(detail);
        out.results.push(r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_loop_never_allocates_and_offers_its_largest_gap() {
        let before = crate::sys::alloc_audit::hot_allocations();
        let offer = Offer::default();
        let (s, d) = busy_loop(20_000_000, Some((&offer, 0)));
        assert_eq!(crate::sys::alloc_audit::hot_allocations(), before);
        assert_eq!(s.count(), d.loops);
        assert!(d.duration_ns >= 20_000_000);
        assert!((0.0..=100.0).contains(&d.cpu_left_to_loop_percent));
        if d.gaps_above_threshold > 0 {
            let (_, gap) = offer.take().unwrap();
            assert_eq!(gap, d.largest_gaps[0].gap_ns);
        }
        assert!(offer.take().is_none(), "taking empties the slot");
    }

    #[test]
    fn tracing_that_cannot_start_is_an_explain_error() {
        // No CPU to trace: the recorder refuses before touching tracefs.
        let stop = std::sync::atomic::AtomicBool::new(false);
        let ctx = Ctx {
            cpus: &[],
            per_bench_ns: 1_000_000,
            interval_ns: 1_000,
            priority: 3,
            clock_read_ns: 0,
            stop: &stop,
            explain_above_ns: Some(10_000),
            housekeeping: vec![0],
        };
        let e = run(&ctx).err().unwrap();
        assert!(
            matches!(e, CharError::Explain(crate::trace::TraceError::NoCpus)),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "--explain: tracing could not start: no CPU to trace was given"
        );
    }

    #[test]
    fn largest_keeps_the_biggest_in_order() {
        let mut l = Largest::new();
        for (i, g) in [5u64, 50, 1, 40, 30, 20, 10, 60, 70, 80, 90, 2, 100]
            .iter()
            .enumerate()
        {
            if *g > l.smallest() {
                l.offer(Gap {
                    gap_ns: *g,
                    at_ns: i as u64,
                });
            }
        }
        let got: Vec<u64> = l.gaps[..l.len].iter().map(|g| g.gap_ns).collect();
        assert_eq!(got, vec![100, 90, 80, 70, 60, 50, 40, 30, 20, 10]);
        assert_eq!(l.gaps[0].at_ns, 12);
    }
}
