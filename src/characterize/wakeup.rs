//! Benchmark `wakeup`: one thread wakes another blocked in a futex wait
//! (`std::thread::park` / `unpark`, a futex on Linux). The waiter
//! (priority P) runs on the last CPU of `--cpus`, the waker (P-1) on the
//! first: across CPUs when there are two, on one CPU otherwise.

use super::harness::{Samples, Team, all, now};
use super::{Bench, BenchOutcome, CharError, Ctx, Group};
use crate::sys::clock::{Clock, sleep_for_ns};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};

pub const BENCH: Bench = Bench {
    name: "wakeup",
    group: Group::Threads,
    help: "thread-to-thread wake-up through a futex (park/unpark)",
    measures: "from just before the futex wake to the woken thread running",
    run,
};

fn run(ctx: &Ctx) -> Result<BenchOutcome, CharError> {
    let (waker_cpu, waiter_cpu) = (ctx.cpus[0], *ctx.cpus.last().unwrap_or(&ctx.cpus[0]));
    let round = AtomicU64::new(0);
    let ack = AtomicU64::new(0);
    let t0 = AtomicU64::new(0);
    let quit = AtomicBool::new(false);
    let handle: OnceLock<std::thread::Thread> = OnceLock::new();
    let team = Team::new(2);
    let off = ctx.clock_read_ns;
    let budget = ctx.per_bench_ns;
    let results = std::thread::scope(|s| {
        let waiter = s.spawn(|| -> Result<Option<Samples>, CharError> {
            let _ = handle.set(std::thread::current());
            team.start(waiter_cpu, ctx.priority)?;
            let mut samples = Samples::new(off);
            let mut seen = 0;
            loop {
                while round.load(SeqCst) == seen && !quit.load(SeqCst) {
                    std::thread::park();
                }
                let t1 = now();
                if quit.load(SeqCst) {
                    break;
                }
                seen = round.load(SeqCst);
                samples.record(t1.saturating_sub(t0.load(SeqCst)));
                ack.store(seen, SeqCst);
            }
            Ok(Some(samples))
        });
        let waker = s.spawn(|| -> Result<Option<Samples>, CharError> {
            let r = (|| {
                team.start(waker_cpu, ctx.priority - 1)?;
                let target = handle.get().cloned().ok_or(CharError::Aborted)?;
                let end = now() + budget;
                let mut k = 0;
                while now() < end && !ctx.stopped() {
                    // Let the waiter get back into its futex wait.
                    let _ = sleep_for_ns(Clock::Monotonic, 100_000);
                    k += 1;
                    t0.store(now(), SeqCst);
                    round.store(k, SeqCst);
                    target.unpark();
                    while ack.load(SeqCst) != k && now() < end + 1_000_000_000 {
                        let _ = sleep_for_ns(Clock::Monotonic, 20_000);
                    }
                }
                Ok(None)
            })();
            quit.store(true, SeqCst);
            if let Some(t) = handle.get() {
                t.unpark();
            }
            r
        });
        vec![waiter.join(), waker.join()]
    });
    let samples = all(results)?
        .remove(0)
        .expect("the waiter returns its samples");
    let variant = if waker_cpu == waiter_cpu {
        format!("futex, CPU {waker_cpu}")
    } else {
        format!("futex, CPU {waker_cpu} -> {waiter_cpu}")
    };
    Ok(BenchOutcome {
        results: vec![samples.result(BENCH.name, &variant, waiter_cpu, BENCH.measures)],
        checks: vec![],
    })
}
