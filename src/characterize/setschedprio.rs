//! Benchmark `setschedprio`: `pthread_setschedprio` on the calling
//! SCHED_FIFO thread, alternating between two priorities (seed 001's
//! Table 2). Checks itself: setschedprio changes the priority the kernel
//! reports.

use super::harness::{now, on_fifo, time_alternating};
use super::{Bench, BenchOutcome, CharError, Check, Ctx, Group};
use crate::sys::pthread;

pub const BENCH: Bench = Bench {
    name: "setschedprio",
    group: Group::Priority,
    help: "pthread_setschedprio on the calling SCHED_FIFO thread",
    measures: "one pthread_setschedprio call switching between priority P and P-1, clock read cost subtracted",
    run,
};

/// Set priority `to` with setschedprio and read back what the kernel
/// reports (the calling thread must be SCHED_FIFO).
pub fn set_and_read_back(to: i32) -> Result<i32, CharError> {
    pthread::set_prio_current(to).map_err(|err| CharError::Sys {
        what: format!("pthread_setschedprio({to})"),
        err,
    })?;
    pthread::priority_of(0).map_err(|err| CharError::Sys {
        what: "sched_getparam".into(),
        err,
    })
}

fn run(ctx: &Ctx) -> Result<BenchOutcome, CharError> {
    let cpu = ctx.cpu();
    let (hi, lo) = (ctx.priority, ctx.priority - 1);
    let off = ctx.clock_read_ns;
    let end = now() + ctx.per_bench_ns;
    on_fifo(cpu, hi, || {
        let seen = set_and_read_back(lo)?;
        let check = Check {
            bench: BENCH.name.into(),
            fact: format!(
                "pthread_setschedprio({hi} -> {lo}) changes the priority the kernel reports (saw {seen})"
            ),
            held: seen == lo,
        };
        let (s, _) = time_alternating(off, end, hi, lo, |p| {
            pthread::set_prio_current(p).map_err(|err| CharError::Sys {
                what: format!("pthread_setschedprio({p})"),
                err,
            })
        })?;
        Ok(BenchOutcome {
            results: vec![s.result(BENCH.name, "", cpu, BENCH.measures)],
            checks: vec![check],
        })
    })
}
