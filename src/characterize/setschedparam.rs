//! Benchmark `setschedparam`: `pthread_setschedparam(SCHED_FIFO)` on the
//! calling thread, alternating between two priorities so every call
//! changes it (seed 001's Table 2). Checks itself: the priority the
//! kernel reports afterwards is the one last set.

use super::harness::{now, on_fifo, time_alternating};
use super::{Bench, BenchOutcome, CharError, Check, Ctx, Group};
use crate::sys::pthread;

pub const BENCH: Bench = Bench {
    name: "setschedparam",
    group: Group::Priority,
    help: "pthread_setschedparam(SCHED_FIFO) on the calling thread",
    measures: "one pthread_setschedparam call switching between priority P and P-1, clock read cost subtracted",
    run,
};

fn run(ctx: &Ctx) -> Result<BenchOutcome, CharError> {
    let cpu = ctx.cpu();
    let (hi, lo) = (ctx.priority, ctx.priority - 1);
    let off = ctx.clock_read_ns;
    let end = now() + ctx.per_bench_ns;
    on_fifo(cpu, hi, || {
        let (s, last) = time_alternating(off, end, lo, hi, |p| {
            pthread::set_fifo_param_current(p).map_err(|err| CharError::Sys {
                what: format!("pthread_setschedparam(SCHED_FIFO, {p})"),
                err,
            })
        })?;
        let seen = pthread::priority_of(0).unwrap_or(-1);
        Ok(BenchOutcome {
            results: vec![s.result(BENCH.name, "", cpu, BENCH.measures)],
            checks: vec![Check {
                bench: BENCH.name.into(),
                fact: format!(
                    "after pthread_setschedparam({last}) the kernel reports priority {last} (saw {seen})"
                ),
                held: seen == last,
            }],
        })
    })
}
