//! Benchmark `nanosleep`: `clock_nanosleep(CLOCK_MONOTONIC)` relative
//! and absolute at the chosen interval (1000 us by default, seed 001's
//! Table 3): the time each call takes, and how late it woke up.

use super::harness::{Samples, now, on_fifo};
use super::{Bench, BenchOutcome, CharError, Ctx, Group};
use crate::sys::clock::{Clock, sleep_for_ns, sleep_until_ns};

pub const BENCH: Bench = Bench {
    name: "nanosleep",
    group: Group::Timers,
    help: "clock_nanosleep relative and absolute at --interval (default 1000 µs)",
    measures: "time spent in one clock_nanosleep call, and wake-up lateness (woke minus asked)",
    run,
};

fn sys(err: std::io::Error) -> CharError {
    CharError::Sys {
        what: "clock_nanosleep".into(),
        err,
    }
}

fn run(ctx: &Ctx) -> Result<BenchOutcome, CharError> {
    let cpu = ctx.cpu();
    let interval = ctx.interval_ns;
    let half = ctx.per_bench_ns / 2;
    let stop = ctx.stop;
    let stopped = || stop.load(std::sync::atomic::Ordering::Relaxed);
    on_fifo(cpu, ctx.priority, || {
        let (mut rel_call, mut rel_late) = (Samples::new(0), Samples::new(0));
        let end = now() + half;
        loop {
            let t0 = now();
            match sleep_for_ns(Clock::Monotonic, interval) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                r => r.map_err(sys)?,
            }
            let t1 = now();
            rel_call.record(t1 - t0);
            rel_late.record(t1.saturating_sub(t0 + interval));
            if t1 >= end || stopped() {
                break;
            }
        }
        let (mut abs_call, mut abs_late) = (Samples::new(0), Samples::new(0));
        let mut deadline = now() + interval;
        let end = deadline + half;
        loop {
            let t0 = now();
            match sleep_until_ns(Clock::Monotonic, deadline) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                r => r.map_err(sys)?,
            }
            let t1 = now();
            abs_call.record(t1 - t0);
            abs_late.record(t1.saturating_sub(deadline));
            deadline += interval;
            // A wake-up later than a whole period skips the missed ones.
            while deadline <= t1 {
                deadline += interval;
            }
            if t1 >= end || stopped() {
                break;
            }
        }
        let us = interval as f64 / 1000.0;
        let name = BENCH.name;
        Ok(BenchOutcome {
            results: vec![
                rel_call.result(
                    name,
                    &format!("relative {us} µs, call"),
                    cpu,
                    "time in clock_nanosleep(relative interval)",
                ),
                abs_call.result(
                    name,
                    &format!("absolute {us} µs, call"),
                    cpu,
                    "time in clock_nanosleep(TIMER_ABSTIME, next period)",
                ),
                rel_late.result(
                    name,
                    &format!("relative {us} µs, late"),
                    cpu,
                    "wake-up minus (call start + interval)",
                ),
                abs_late.result(
                    name,
                    &format!("absolute {us} µs, late"),
                    cpu,
                    "wake-up minus the deadline",
                ),
            ],
            checks: vec![],
        })
    })
}
