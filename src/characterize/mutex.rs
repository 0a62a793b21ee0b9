//! Benchmark `mutex`: `pthread_mutex_lock`, `pthread_mutex_trylock` and
//! `pthread_mutex_unlock` on an uncontended mutex, plain and with
//! priority inheritance (`PTHREAD_PRIO_INHERIT`), as seed 001's Table 1.
//! Checks itself: trylock of a mutex held by another thread fails.

use super::harness::{Pacer, Samples, now, on_fifo};
use super::{Bench, BenchOutcome, CharError, Check, Ctx, Group};
use crate::sys::pthread::{Mutex, MutexProtocol};

pub const BENCH: Bench = Bench {
    name: "mutex",
    group: Group::Mutex,
    help: "uncontended pthread mutex lock, trylock and unlock, plain and PI",
    measures: "one pthread_mutex_lock / trylock / unlock call on a free mutex, clock read cost subtracted",
    run,
};

fn sys(what: &str) -> impl FnOnce(std::io::Error) -> CharError + '_ {
    move |err| CharError::Sys {
        what: what.to_string(),
        err,
    }
}

/// True when `try_lock` from another thread fails while `m` is held.
pub fn trylock_of_held_fails(protocol: MutexProtocol) -> Result<bool, CharError> {
    let m = Mutex::new(protocol).map_err(sys("pthread_mutex_init"))?;
    m.lock().map_err(sys("pthread_mutex_lock"))?;
    let taken = std::thread::scope(|s| s.spawn(|| m.try_lock()).join())
        .map_err(|_| CharError::Aborted)?
        .map_err(sys("pthread_mutex_trylock"))?;
    m.unlock().map_err(sys("pthread_mutex_unlock"))?;
    if taken {
        m.unlock().map_err(sys("pthread_mutex_unlock"))?;
    }
    Ok(!taken)
}

fn run(ctx: &Ctx) -> Result<BenchOutcome, CharError> {
    let cpu = ctx.cpu();
    let mut out = BenchOutcome::default();
    for (protocol, tag) in [
        (MutexProtocol::Plain, "plain"),
        (MutexProtocol::Inherit, "pi"),
    ] {
        let held = trylock_of_held_fails(protocol)?;
        out.checks.push(Check {
            bench: BENCH.name.into(),
            fact: format!("trylock of a held {tag} mutex fails"),
            held,
        });
        let budget = ctx.per_bench_ns / 2;
        let off = ctx.clock_read_ns;
        let rows = on_fifo(cpu, ctx.priority, || {
            let m = Mutex::new(protocol).map_err(sys("pthread_mutex_init"))?;
            let (mut lock, mut unlock, mut trylock) =
                (Samples::new(off), Samples::new(off), Samples::new(off));
            let end = now() + budget;
            let mut pacer = Pacer::new();
            // HOT PATH: the timed calls, clock reads, histogram writes.
            loop {
                let t0 = now();
                m.lock().map_err(sys("pthread_mutex_lock"))?;
                let t1 = now();
                m.unlock().map_err(sys("pthread_mutex_unlock"))?;
                let t2 = now();
                let ok = m.try_lock().map_err(sys("pthread_mutex_trylock"))?;
                let t3 = now();
                if ok {
                    m.unlock().map_err(sys("pthread_mutex_unlock"))?;
                }
                lock.record(t1 - t0);
                unlock.record(t2 - t1);
                trylock.record(t3 - t2);
                if t3 >= end {
                    break;
                }
                pacer.rest_if_due(t3);
            }
            Ok(vec![
                lock.result(
                    BENCH.name,
                    &format!("lock, {tag}"),
                    cpu,
                    "pthread_mutex_lock of a free mutex",
                ),
                trylock.result(
                    BENCH.name,
                    &format!("trylock, {tag}"),
                    cpu,
                    "pthread_mutex_trylock of a free mutex",
                ),
                unlock.result(
                    BENCH.name,
                    &format!("unlock, {tag}"),
                    cpu,
                    "pthread_mutex_unlock with no waiter",
                ),
            ])
        })?;
        out.results.extend(rows);
    }
    Ok(out)
}
