//! Benchmark `mutex-handoff`: a contended mutex handed from one thread
//! to another on the same CPU, plain and PI. The holder (priority P-1)
//! unlocks while the waiter (priority P) is blocked in
//! `pthread_mutex_lock`; the row is the time from just before the unlock
//! to the waiter running with the mutex (futex wake, switch, return).

use super::harness::{Samples, Team, all, now};
use super::{Bench, BenchOutcome, CharError, Ctx, Group};
use crate::sys::clock::{Clock, sleep_for_ns};
use crate::sys::pthread::{Mutex, MutexProtocol};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};

pub const BENCH: Bench = Bench {
    name: "mutex-handoff",
    group: Group::Mutex,
    help: "contended mutex hand-off between two FIFO threads on one CPU, plain and PI",
    measures: "from just before pthread_mutex_unlock to the blocked higher-priority waiter holding the mutex",
    run,
};

fn sys(what: &'static str) -> impl Fn(std::io::Error) -> CharError {
    move |err| CharError::Sys {
        what: what.into(),
        err,
    }
}

/// Wait (sleeping in short steps) until `cond` holds or `quit` is set.
fn wait_for(cond: impl Fn() -> bool, quit: &AtomicBool) {
    while !cond() && !quit.load(SeqCst) {
        let _ = sleep_for_ns(Clock::Monotonic, 20_000);
    }
}

/// The waiter's samples of one protocol for `budget_ns`.
fn one(ctx: &Ctx, protocol: MutexProtocol, budget_ns: u64) -> Result<Samples, CharError> {
    let cpu = ctx.cpu();
    let m = Mutex::new(protocol).map_err(sys("pthread_mutex_init"))?;
    let round = AtomicU64::new(0);
    let waiting = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let t0 = AtomicU64::new(0);
    let quit = AtomicBool::new(false);
    let team = Team::new(2);
    let off = ctx.clock_read_ns;
    let results = std::thread::scope(|s| {
        let waiter = s.spawn(|| -> Result<Option<Samples>, CharError> {
            // However it ends, the holder must not wait for it any more.
            let r = (|| {
                team.start(cpu, ctx.priority)?;
                let mut samples = Samples::new(off);
                let mut seen = 0;
                loop {
                    wait_for(|| round.load(SeqCst) != seen, &quit);
                    if quit.load(SeqCst) {
                        break;
                    }
                    seen = round.load(SeqCst);
                    waiting.store(seen, SeqCst);
                    m.lock().map_err(sys("pthread_mutex_lock"))?;
                    let t1 = now();
                    samples.record(t1.saturating_sub(t0.load(SeqCst)));
                    m.unlock().map_err(sys("pthread_mutex_unlock"))?;
                    done.store(seen, SeqCst);
                }
                Ok(Some(samples))
            })();
            quit.store(true, SeqCst);
            r
        });
        let holder = s.spawn(|| -> Result<Option<Samples>, CharError> {
            let r = (|| {
                team.start(cpu, ctx.priority - 1)?;
                let end = now() + budget_ns;
                let mut k = 0;
                while now() < end && !ctx.stopped() {
                    m.lock().map_err(sys("pthread_mutex_lock"))?;
                    k += 1;
                    round.store(k, SeqCst);
                    wait_for(|| waiting.load(SeqCst) == k, &quit);
                    // Let the waiter get into the kernel's futex wait.
                    let _ = sleep_for_ns(Clock::Monotonic, 50_000);
                    t0.store(now(), SeqCst);
                    m.unlock().map_err(sys("pthread_mutex_unlock"))?;
                    wait_for(|| done.load(SeqCst) == k, &quit);
                }
                Ok(None)
            })();
            quit.store(true, SeqCst);
            r
        });
        vec![waiter.join(), holder.join()]
    });
    let mut got = all(results)?;
    Ok(got.remove(0).expect("the waiter returns its samples"))
}

fn run(ctx: &Ctx) -> Result<BenchOutcome, CharError> {
    let mut out = BenchOutcome::default();
    for (protocol, tag) in [
        (MutexProtocol::Plain, "plain"),
        (MutexProtocol::Inherit, "pi"),
    ] {
        let s = one(ctx, protocol, ctx.per_bench_ns / 2)?;
        out.results
            .push(s.result(BENCH.name, tag, ctx.cpu(), BENCH.measures));
    }
    Ok(out)
}
