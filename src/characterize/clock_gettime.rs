//! Benchmark `clock-gettime`: the cost of one `clock_gettime
//! (CLOCK_MONOTONIC)` (vDSO), timed as the difference of two back-to-back
//! reads. The trimmed mean of such pairs (harness::clock_read_cost_ns)
//! is what every other timed call has subtracted.

use super::harness::{Pacer, Samples, now, on_fifo};
use super::{Bench, BenchOutcome, CharError, Ctx, Group};

pub const BENCH: Bench = Bench {
    name: "clock-gettime",
    group: Group::Clock,
    help: "cost of one clock_gettime(CLOCK_MONOTONIC) read",
    measures: "difference of two back-to-back clock_gettime(CLOCK_MONOTONIC) reads (nothing subtracted)",
    run,
};

fn run(ctx: &Ctx) -> Result<BenchOutcome, CharError> {
    let cpu = ctx.cpu();
    let end = now() + ctx.per_bench_ns;
    on_fifo(cpu, ctx.priority, || {
        let mut s = Samples::new(0);
        let mut pacer = Pacer::new();
        // HOT PATH: clock reads and histogram writes only; nothing runs
        // between the two reads of a pair.
        loop {
            let t0 = now();
            let t1 = now();
            s.record(t1 - t0);
            if t1 >= end {
                break;
            }
            pacer.rest_if_due(t1);
        }
        Ok(BenchOutcome {
            results: vec![s.result(BENCH.name, "", cpu, BENCH.measures)],
            checks: vec![],
        })
    })
}
