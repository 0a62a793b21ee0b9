//! Benchmark `os-noise`: seed 001's latency program. On every CPU of
//! `--cpus` at once, a SCHED_FIFO thread reads CLOCK_MONOTONIC in a
//! tight loop for `-D`; every gap between two reads is time the CPU was
//! taken from it (interrupts, kernel threads, throttling, the hypervisor).
//! Kept per CPU: the histogram of the gaps, the largest gaps with when
//! they happened, and the share of the CPU left to the loop (what oslat
//! and rtla osnoise report).

use super::harness::{Samples, Team, all, now};
use super::{Bench, CharError, Ctx, Gap, Group, NoiseDetail, Outcome};

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

/// The busy loop on the calling (already pinned) thread for `duration_ns`.
pub fn busy_loop(duration_ns: u64) -> (Samples, NoiseDetail) {
    let mut s = Samples::new(0);
    let mut top = Largest::new();
    let (mut noise, mut above, mut loops) = (0u64, 0u64, 0u64);
    let start = now();
    let end = start + duration_ns;
    let mut prev = start;
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
        }
        if t >= end {
            break;
        }
        prev = t;
    }
    let duration = prev.max(start + 1) - start;
    let detail = NoiseDetail {
        duration_ns: duration,
        loops,
        threshold_ns: THRESHOLD_NS,
        gaps_above_threshold: above,
        noise_ns: noise,
        cpu_left_to_loop_percent: 100.0 * (1.0 - (noise as f64 / duration as f64).min(1.0)),
        largest_gaps: top.gaps[..top.len].to_vec(),
    };
    (s, detail)
}

fn run(ctx: &Ctx) -> Result<Outcome, CharError> {
    let team = &Team::new(ctx.cpus.len());
    let d = ctx.per_bench_ns;
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = ctx
            .cpus
            .iter()
            .map(|&cpu| {
                s.spawn(move || -> Result<_, CharError> {
                    team.start(cpu, ctx.priority)?;
                    Ok((cpu, busy_loop(d)))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect()
    });
    let mut out = Outcome::default();
    for (cpu, (samples, detail)) in all(results)? {
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
