//! Benchmark `priority-inversion`, shown and solved (seed 004): on one
//! CPU a low-priority thread (P-2) holds a mutex for a critical section,
//! a high-priority thread (P) then wants it, and a medium-priority hog
//! (P-1) busies the CPU. With a plain mutex the high thread waits as long
//! as the hog runs; with a PI mutex the low thread inherits the high
//! priority, ends its critical section and the high thread waits only for
//! that. The row is the high thread's wait in `pthread_mutex_lock`.
//! Trials where the high thread came too late to find the mutex held are
//! not counted.

use super::harness::{Samples, Team, all, now, spin_until};
use super::{Bench, BenchOutcome, CharError, Check, Ctx, Group, InversionDetail};
use crate::sys::clock::{Clock, sleep_for_ns, sleep_until_ns};
use crate::sys::pthread::{Mutex, MutexProtocol};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

pub const BENCH: Bench = Bench {
    name: "priority-inversion",
    group: Group::Inversion,
    help: "priority inversion with a plain mutex, and solved by a PI mutex",
    measures: "wait of the high-priority thread in pthread_mutex_lock while a medium-priority hog runs",
    run,
};

/// How long the medium-priority hog busies the CPU.
pub const HOG_BUSY_NS: u64 = 10_000_000;
/// How long the low-priority thread holds the mutex.
pub const CRITICAL_SECTION_NS: u64 = 2_000_000;
/// When the high thread wakes, after the low one took the mutex.
const HIGH_AT_NS: u64 = 200_000;
/// When the hog wakes (it starts busying once the high thread blocked).
const HOG_AT_NS: u64 = 400_000;
/// One trial, with room to settle.
const TRIAL_NS: u64 = HOG_BUSY_NS + CRITICAL_SECTION_NS + 4_000_000;
/// Fewest trials per protocol, whatever -D says.
const MIN_TRIALS: u64 = 3;

fn sys(what: &'static str) -> impl Fn(std::io::Error) -> CharError {
    move |err| CharError::Sys {
        what: what.into(),
        err,
    }
}

fn sleep_until(t: u64) {
    while now() < t {
        let _ = sleep_until_ns(Clock::Monotonic, t);
    }
}

/// The high thread's waits over `trials` trials, and how many trials
/// found the mutex free (not counted).
pub fn trials(
    cpu: usize,
    priority: i32,
    protocol: MutexProtocol,
    trials: u64,
) -> Result<(Samples, u64), CharError> {
    let m = Mutex::new(protocol).map_err(sys("pthread_mutex_init"))?;
    let team = &Team::new(3);
    let m = &m;
    let base = now() + 5_000_000;
    let high_tried = &AtomicU64::new(0);
    let results = std::thread::scope(|s| {
        let low = s.spawn(move || -> Result<Option<(Samples, u64)>, CharError> {
            team.start(cpu, priority - 2)?;
            for k in 0..trials {
                sleep_until(base + k * TRIAL_NS);
                m.lock().map_err(sys("pthread_mutex_lock"))?;
                // Wall time: when the hog ran meanwhile, the section ends
                // as soon as this thread runs again.
                spin_until(now() + CRITICAL_SECTION_NS);
                m.unlock().map_err(sys("pthread_mutex_unlock"))?;
            }
            Ok(None)
        });
        let high = s.spawn(move || -> Result<Option<(Samples, u64)>, CharError> {
            team.start(cpu, priority)?;
            let mut waits = Samples::new(0);
            let mut free = 0;
            for k in 0..trials {
                sleep_until(base + k * TRIAL_NS + HIGH_AT_NS);
                let got = m.try_lock().map_err(sys("pthread_mutex_trylock"))?;
                high_tried.store(k + 1, SeqCst);
                if got {
                    free += 1;
                } else {
                    let t0 = now();
                    m.lock().map_err(sys("pthread_mutex_lock"))?;
                    waits.record(now() - t0);
                }
                m.unlock().map_err(sys("pthread_mutex_unlock"))?;
            }
            Ok(Some((waits, free)))
        });
        let hog = s.spawn(move || -> Result<Option<(Samples, u64)>, CharError> {
            team.start(cpu, priority - 1)?;
            for k in 0..trials {
                let start = base + k * TRIAL_NS;
                sleep_until(start + HOG_AT_NS);
                // Start only once the high thread is blocked (or gave up).
                while high_tried.load(SeqCst) <= k && now() < start + TRIAL_NS {
                    let _ = sleep_for_ns(Clock::Monotonic, 20_000);
                }
                spin_until(now() + HOG_BUSY_NS);
            }
            Ok(None)
        });
        vec![low.join(), high.join(), hog.join()]
    });
    let got = all(results)?;
    Ok(got
        .into_iter()
        .flatten()
        .next()
        .expect("the high thread returns its waits"))
}

fn run(ctx: &Ctx) -> Result<BenchOutcome, CharError> {
    let cpu = ctx.cpu();
    let n = (ctx.per_bench_ns / 2 / TRIAL_NS).max(MIN_TRIALS);
    let mut out = BenchOutcome::default();
    for (protocol, tag) in [
        (MutexProtocol::Plain, "plain"),
        (MutexProtocol::Inherit, "pi"),
    ] {
        let (waits, free) = trials(cpu, ctx.priority, protocol, n)?;
        let st = waits.stats();
        let what = format!(
            "{}; {} of {n} trials counted (in the others the mutex was already free)",
            BENCH.measures,
            n - free
        );
        let mut r = waits.result(BENCH.name, tag, cpu, &what);
        r.inversion = Some(InversionDetail {
            protocol: tag.into(),
            hog_busy_ns: HOG_BUSY_NS,
            critical_section_ns: CRITICAL_SECTION_NS,
            trials: n - free,
        });
        let counted = st.count > 0;
        out.checks.push(match protocol {
            MutexProtocol::Plain => Check {
                bench: BENCH.name.into(),
                fact: format!(
                    "without PI the high thread waits at least the hog's busy time ({} us; shortest wait {} us)",
                    HOG_BUSY_NS / 1000,
                    st.min_ns / 1000
                ),
                held: counted && st.min_ns >= HOG_BUSY_NS,
            },
            MutexProtocol::Inherit => Check {
                bench: BENCH.name.into(),
                fact: format!(
                    "with PI the high thread waits less than the hog's busy time ({} us; longest wait {} us)",
                    HOG_BUSY_NS / 1000,
                    st.max_ns / 1000
                ),
                held: counted && st.max_ns < HOG_BUSY_NS,
            },
        });
        out.results.push(r);
        if ctx.stopped() {
            break;
        }
    }
    Ok(out)
}
