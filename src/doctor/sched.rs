//! Scheduler checks: real-time throttling.

use super::{Check, Ctx, Status, Verdict};

pub static RT_THROTTLING: Check = Check {
    id: "rt-throttling",
    area: "scheduler",
    title: "real-time throttling",
    why: "Real-time tasks may use only sched_rt_runtime_us of every sched_rt_period_us; past that they are stopped for the rest of the period. Periodic tasks that sleep never reach it; CPU-bound ones do.",
    run: rt_throttling,
};

fn rt_throttling(ctx: &Ctx) -> Verdict {
    let s = &ctx.facts.sched;
    match (s.rt_runtime_us, s.rt_period_us) {
        (Some(-1), _) => Verdict::new(
            Status::Info,
            "off (sched_rt_runtime_us = -1): a runaway real-time task can hang its CPU",
        ),
        (Some(r), Some(p)) if p > 0 => Verdict::new(
            Status::Info,
            format!(
                "{r} µs of every {p} µs ({:.0} %) for real-time tasks",
                r as f64 * 100.0 / p as f64
            ),
        )
        .fix("only for CPU-bound real-time tasks: sysctl kernel.sched_rt_runtime_us=-1 (rtscope tune isolate --no-rt-throttling)"),
        _ => Verdict::unknown("no kernel.sched_rt_runtime_us"),
    }
}
