//! Benchmark `priority-inversion`, shown and solved (seed 004): on one
//! CPU a low-priority thread (P-2) holds a mutex for a critical section,
//! a high-priority thread (P) then wants it, and a medium-priority hog
//! (P-1) busies the CPU. With a plain mutex the high thread waits as long
//! as the hog runs; with a PI mutex the low thread inherits the high
//! priority, ends its critical section and the high thread waits only for
//! that. The row is the high thread's wait in `pthread_mutex_lock`.
//!
//! The order of events is made by the threads themselves, never by timers:
//! the low thread wakes the hog once it sees the high thread blocked, so a
//! late timer (several ms on a virtual machine) can make a trial not count
//! but never make the hog miss the critical section. The checks are about
//! that order: without PI the high thread gets the mutex only after the
//! hog's busy time, with PI before the hog has run at all. Each hog run
//! answers one block of the high thread (a late high thread may block in
//! the next trial's critical section). The high thread tries the mutex
//! only once the low one holds it (it sleeps in short steps until then),
//! and the low thread keeps its section until the high thread has blocked
//! on it (at most `HIGH_WAIT_MAX_NS` more): when timers are late by
//! milliseconds, as under full emulation, both can wake in the same tick
//! and the high thread would otherwise take a free mutex. Trials where the
//! high thread still came too late to find the mutex held, or to have the
//! hog answer its block, are not counted.

use super::harness::{Samples, Team, all, now, spin_until};
use super::{Bench, BenchOutcome, CharError, Check, Ctx, Group, InversionDetail};
use crate::sys::clock::{Clock, sleep_until_ns};
use crate::sys::pthread::{Mutex, MutexProtocol};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};

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
/// How much longer than its section the low thread holds the mutex for a
/// high thread that has not blocked yet, and how long after its wake-up
/// the high thread waits for the low one to hold it.
const HIGH_WAIT_MAX_NS: u64 = 4_000_000;
/// The high thread's step while it waits for the low one to hold the mutex.
const HIGH_STEP_NS: u64 = 100_000;
/// One trial, with room to settle.
const TRIAL_NS: u64 = HOG_BUSY_NS + CRITICAL_SECTION_NS + HIGH_WAIT_MAX_NS + 4_000_000;
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

/// One thread's span in one trial: when it started and ended.
type Span = Option<(u64, u64)>;

/// What the trials of one protocol gave.
pub struct Trials {
    /// The high thread's waits in the counted trials.
    pub waits: Samples,
    /// How many trials were counted.
    pub counted: u64,
    /// Of the counted trials, in how many the high thread got the mutex
    /// only once the hog's busy time was over.
    pub after_hog: u64,
    /// Of the counted trials, in how many it got the mutex before the hog
    /// had begun.
    pub before_hog: u64,
}

/// What the three threads of one protocol's trials share: the mutex, the
/// team that pins them, the trials' times, and the flags by which they
/// order their events.
struct Shared<'a> {
    m: &'a Mutex,
    team: &'a Team,
    cpu: usize,
    priority: i32,
    /// When trial 0 begins; trial k begins `k * TRIAL_NS` later.
    base: u64,
    trials: u64,
    /// `k + 1` once the high thread of trial k is about to block on the
    /// mutex; the same value once the low thread, holding the mutex, has
    /// let the hog go for it. A late high thread may block in a later
    /// trial's critical section: the hog still answers its own block.
    high_waiting: AtomicU64,
    /// `k + 1` once the low thread holds the mutex for trial k.
    low_holds: AtomicU64,
    hog_go: AtomicU64,
    done: AtomicBool,
}

/// Tells the hog to stop when the high thread is done, also when it fails.
struct Done<'a> {
    done: &'a AtomicBool,
    hog: std::thread::Thread,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.done.store(true, SeqCst);
        self.hog.unpark();
    }
}

/// The high thread's waits over `trials` trials, and the order of events
/// in each.
pub fn trials(
    cpu: usize,
    priority: i32,
    protocol: MutexProtocol,
    trials: u64,
) -> Result<Trials, CharError> {
    let m = Mutex::new(protocol).map_err(sys("pthread_mutex_init"))?;
    let team = Team::new(3);
    let sh = &Shared {
        m: &m,
        team: &team,
        cpu,
        priority,
        base: now() + 5_000_000,
        trials,
        high_waiting: AtomicU64::new(0),
        low_holds: AtomicU64::new(0),
        hog_go: AtomicU64::new(0),
        done: AtomicBool::new(false),
    };
    let results = std::thread::scope(|s| {
        let hog = s.spawn(move || hog_thread(sh));
        let to_wake = hog.thread().clone();
        let low = {
            let to_wake = to_wake.clone();
            s.spawn(move || low_thread(sh, &to_wake))
        };
        let high = s.spawn(move || high_thread(sh, to_wake));
        vec![hog.join(), low.join(), high.join()]
    });
    let got = all(results)?;
    Ok(tally(&got[2], &got[0]))
}

/// The medium-priority hog: for each block of the high thread the low
/// one answers, busy the CPU for `HOG_BUSY_NS`. Its span per trial.
fn hog_thread(sh: &Shared) -> Result<Vec<Span>, CharError> {
    sh.team.start(sh.cpu, sh.priority - 1)?;
    let mut spans = vec![None; sh.trials as usize];
    let mut seen = 0;
    loop {
        let go = sh.hog_go.load(SeqCst);
        if go > seen {
            seen = go;
            let t0 = now();
            spin_until(t0 + HOG_BUSY_NS);
            spans[go as usize - 1] = Some((t0, now()));
        } else if sh.done.load(SeqCst) {
            return Ok(spans);
        } else {
            std::thread::park_timeout(std::time::Duration::from_millis(50));
        }
    }
}

/// The low-priority thread: in each trial, hold the mutex for its
/// critical section, and let the hog go once the high thread blocks.
fn low_thread(sh: &Shared, hog: &std::thread::Thread) -> Result<Vec<Span>, CharError> {
    sh.team.start(sh.cpu, sh.priority - 2)?;
    for k in 0..sh.trials {
        sleep_until(sh.base + k * TRIAL_NS);
        sh.m.lock().map_err(sys("pthread_mutex_lock"))?;
        sh.low_holds.store(k + 1, SeqCst);
        // Only a block on this section is answered: a high thread that
        // blocked after the last look of the previous section got that
        // mutex already.
        let first = sh.high_waiting.load(SeqCst);
        let mut answered = first;
        // Wall time: when the hog ran meanwhile, the section ends as soon
        // as this thread runs again. The high thread is looked for before
        // the clock, so a high thread blocked in time always gets its hog
        // (one that blocks between the last look and the unlock gets
        // none, and its trial is not counted). The section lasts its
        // time, and until a high thread blocked on it (at most
        // HIGH_WAIT_MAX_NS more).
        let end = now() + CRITICAL_SECTION_NS;
        let give_up = end + HIGH_WAIT_MAX_NS;
        loop {
            let waiting = sh.high_waiting.load(SeqCst);
            if waiting > answered {
                answered = waiting;
                sh.hog_go.store(waiting, SeqCst);
                hog.unpark();
            }
            let t = now();
            if t >= end && (answered > first || t >= give_up) {
                break;
            }
            std::hint::spin_loop();
        }
        sh.m.unlock().map_err(sys("pthread_mutex_unlock"))?;
    }
    Ok(Vec::new())
}

/// The high-priority thread: in each trial, once the low thread holds the
/// mutex, want it; its wait in `pthread_mutex_lock` per trial (none when
/// it found the mutex free). Tells the hog to stop when it ends.
fn high_thread(sh: &Shared, hog: std::thread::Thread) -> Result<Vec<Span>, CharError> {
    let _done = Done {
        done: &sh.done,
        hog,
    };
    sh.team.start(sh.cpu, sh.priority)?;
    let mut spans = Vec::with_capacity(sh.trials as usize);
    for k in 0..sh.trials {
        let wake = sh.base + k * TRIAL_NS + HIGH_AT_NS;
        sleep_until(wake);
        // Let the low thread take the mutex first: this thread runs before
        // it whenever both wake in the same tick.
        while sh.low_holds.load(SeqCst) <= k && now() < wake + HIGH_WAIT_MAX_NS {
            sleep_until(now() + HIGH_STEP_NS);
        }
        let got = sh.m.try_lock().map_err(sys("pthread_mutex_trylock"))?;
        let mut span = None;
        if !got {
            sh.high_waiting.store(k + 1, SeqCst);
            let t0 = now();
            sh.m.lock().map_err(sys("pthread_mutex_lock"))?;
            span = Some((t0, now()));
        }
        sh.m.unlock().map_err(sys("pthread_mutex_unlock"))?;
        spans.push(span);
    }
    Ok(spans)
}

/// The counted trials: the high thread waited and the hog ran.
fn tally(high: &[Span], hog: &[Span]) -> Trials {
    let mut out = Trials {
        waits: Samples::new(0),
        counted: 0,
        after_hog: 0,
        before_hog: 0,
    };
    for (h, g) in high.iter().zip(hog) {
        let (Some((blocked, got)), Some((hog_start, hog_end))) = (h, g) else {
            continue;
        };
        out.counted += 1;
        out.waits.record(got - blocked);
        out.after_hog += u64::from(got >= hog_end);
        out.before_hog += u64::from(got <= hog_start);
    }
    out
}

fn run(ctx: &Ctx) -> Result<BenchOutcome, CharError> {
    let cpu = ctx.cpu();
    let n = (ctx.per_bench_ns / 2 / TRIAL_NS).max(MIN_TRIALS);
    let mut out = BenchOutcome::default();
    for (protocol, tag) in [
        (MutexProtocol::Plain, "plain"),
        (MutexProtocol::Inherit, "pi"),
    ] {
        let t = trials(cpu, ctx.priority, protocol, n)?;
        let st = t.waits.stats();
        let what = format!(
            "{}; {} of {n} trials counted (in the others the mutex was already free, or the high thread came so late that no hog answered it)",
            BENCH.measures, t.counted
        );
        let mut r = t.waits.result(BENCH.name, tag, cpu, &what);
        r.inversion = Some(InversionDetail {
            protocol: tag.into(),
            hog_busy_ns: HOG_BUSY_NS,
            critical_section_ns: CRITICAL_SECTION_NS,
            trials: t.counted,
            after_hog: Some(t.after_hog),
            before_hog: Some(t.before_hog),
        });
        out.checks.push(check(protocol, &t, st.min_ns, st.max_ns));
        out.results.push(r);
        if ctx.stopped() {
            break;
        }
    }
    Ok(out)
}

/// The fact a protocol's trials must show: the order of events, with the
/// waits for the reader.
fn check(protocol: MutexProtocol, t: &Trials, min_ns: u64, max_ns: u64) -> Check {
    let (fact, held) = match protocol {
        MutexProtocol::Plain => (
            format!(
                "without PI the high thread gets the mutex only after the hog's busy time ({} µs) in every counted trial ({} of {}; shortest wait {} µs)",
                HOG_BUSY_NS / 1000,
                t.after_hog,
                t.counted,
                min_ns / 1000
            ),
            t.after_hog == t.counted,
        ),
        MutexProtocol::Inherit => (
            format!(
                "with PI the high thread gets the mutex before the hog runs in every counted trial ({} of {}; longest wait {} µs)",
                t.before_hog,
                t.counted,
                max_ns / 1000
            ),
            t.before_hog == t.counted,
        ),
    };
    Check {
        bench: BENCH.name.into(),
        fact,
        held: t.counted > 0 && held,
    }
}
