//! One measuring thread: set-up (signals, affinity, policy, prefaulting,
//! timer), then the hot loop.
//!
//! The hot loop must never allocate, lock, log, or make a syscall other
//! than its timer's wait: it reads the clock (vDSO), waits, and writes into
//! memory prepared before the first period. A unit test proves the "no
//! allocation" part with a counting allocator and an integration test
//! proves the "one syscall" part with strace.

use super::plan::{Policy, ThreadPlan, TimerMethod};
use super::shared::SharedStats;
use super::waiter::Waiter;
use super::window::{WindowAcc, WindowStat};
use crate::record::DeadlineParams;
use crate::sys::clock::{self, Clock};
use crate::sys::{mem, sched, signal};
use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, mpsc};

/// Everything a measuring thread needs, prepared by the control thread.
pub struct ThreadCtx {
    pub plan: ThreadPlan,
    pub policy: Policy,
    pub deadline: Option<DeadlineParams>,
    pub timer: TimerMethod,
    pub clock: Clock,
    /// The first late floor of the thread's [`SharedStats`], which the
    /// thread itself allocates once it runs on its CPU (so that on a NUMA
    /// machine its histogram, written at every wake-up, is on the CPU's
    /// own node: memory is placed where it is first touched, and mlockall
    /// touches it as it is allocated).
    pub late_floor: u64,
    pub windows: rtrb::Producer<WindowStat>,
    pub window_ns: u64,
    pub warmup_periods: u64,
    pub loops: Option<u64>,
    pub correct: bool,
    pub break_ns: Option<u64>,
    pub tracemark: Option<Arc<TraceMark>>,
    /// Wake-ups at least the shared stats' `late_floor()` late go here (for
    /// explaining, and the control thread's table of exceedances).
    pub late: rtrb::Producer<LateWakeup>,
}

/// One wake-up at least the threshold late, on the run's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LateWakeup {
    pub cycle: u64,
    pub deadline_ns: u64,
    pub wake_ns: u64,
    pub latency_ns: u64,
}

/// The start line shared by all threads and the control thread.
pub struct Gate {
    released: Mutex<bool>,
    cv: Condvar,
    /// First measured deadline, on the run's clock.
    pub t0_ns: AtomicU64,
    /// No deadline at or after this is waited for (u64::MAX: none).
    pub end_ns: AtomicU64,
    pub abort: AtomicBool,
    pub stop: AtomicBool,
}

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl Gate {
    pub fn new() -> Gate {
        Gate {
            released: Mutex::new(false),
            cv: Condvar::new(),
            t0_ns: AtomicU64::new(0),
            end_ns: AtomicU64::new(u64::MAX),
            abort: AtomicBool::new(false),
            stop: AtomicBool::new(false),
        }
    }

    /// Let every thread go (after `t0_ns`, `end_ns` and `abort` are set).
    pub fn release(&self) {
        let mut r = self.released.lock().unwrap_or_else(|e| e.into_inner());
        *r = true;
        self.cv.notify_all();
    }

    /// Wait for `release` (set-up phase, not the hot path).
    pub fn wait(&self) {
        let mut r = self.released.lock().unwrap_or_else(|e| e.into_inner());
        while !*r {
            r = self.cv.wait(r).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The step of set-up that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetupStep {
    Affinity,
    Scheduler,
    Timer,
}

pub enum SetupMsg {
    /// Set up on its CPU; the stats it allocated there.
    Ready {
        index: usize,
        shared: Arc<SharedStats>,
    },
    Failed {
        index: usize,
        step: SetupStep,
        error: io::Error,
    },
}

/// How a thread's loop ended.
#[derive(Debug)]
pub enum LoopEnd {
    Duration,
    Loops,
    Stopped,
    Break {
        latency_ns: u64,
        cycle: u64,
    },
    Error(io::Error),
    /// Set-up failed or the run was aborted before the start.
    NotStarted,
}

/// Open trace files for `--tracemark`: the marker and the on/off switch.
pub struct TraceMark {
    pub marker: File,
    pub tracing_on: File,
}

impl TraceMark {
    fn hit(&self, thread: usize, latency_ns: u64) {
        // Not the steady-state hot path: this runs once, when the break
        // threshold is crossed and the run ends.
        let mut buf = [0u8; 96];
        let mut cur = io::Cursor::new(&mut buf[..]);
        let _ = writeln!(
            cur,
            "rtscope: thread {thread} hit latency threshold ({latency_ns} ns)"
        );
        let n = cur.position() as usize;
        let _ = (&self.marker).write_all(&buf[..n]);
        let _ = (&self.tracing_on).write_all(b"0");
    }
}

/// The thread's set-up, on its CPU: its [`SharedStats`] allocated there,
/// its stack and histogram touched, its timer made.
fn setup(ctx: &ThreadCtx) -> Result<(Waiter, Arc<SharedStats>), (SetupStep, io::Error)> {
    // Control signals go to the control thread, never here.
    let _ = signal::control_signals().block();
    if let Some(cpu) = ctx.plan.cpu {
        sched::set_affinity(0, &[cpu]).map_err(|e| (SetupStep::Affinity, e))?;
    }
    let sched_result = match ctx.policy {
        Policy::Deadline => {
            let d = ctx.deadline.expect("deadline parameters are planned");
            sched::set_deadline_current(d.runtime_ns, d.deadline_ns, d.period_ns)
        }
        // The plan gives policies without a priority priority 0.
        p => sched::set_scheduler_current(p.into(), ctx.plan.priority),
    };
    sched_result.map_err(|e| (SetupStep::Scheduler, e))?;
    let tid = sched::gettid();
    let shared = Arc::new(SharedStats::new());
    shared.set_late_floor(ctx.late_floor);
    shared.tid.store(tid, Relaxed);
    mem::prefault_stack();
    shared.prefault();
    let waiter = Waiter::new(ctx.timer, ctx.clock, tid).map_err(|e| (SetupStep::Timer, e))?;
    Ok((waiter, shared))
}

/// Body of a measuring thread. Reports readiness on `ready`, waits at the
/// gate, measures, and returns how the loop ended; marks itself done
/// however it ends.
pub fn thread_main(ctx: ThreadCtx, gate: Arc<Gate>, ready: mpsc::Sender<SetupMsg>) -> LoopEnd {
    let index = ctx.plan.index;
    let (waiter, shared) = match setup(&ctx) {
        Ok(w) => w,
        Err((step, error)) => {
            let _ = ready.send(SetupMsg::Failed { index, step, error });
            gate.wait();
            return LoopEnd::NotStarted;
        }
    };
    let end = run_thread(ctx, &shared, waiter, gate, ready);
    shared.done.store(true, SeqCst);
    end
}

fn run_thread(
    mut ctx: ThreadCtx,
    shared: &Arc<SharedStats>,
    mut waiter: Waiter,
    gate: Arc<Gate>,
    ready: mpsc::Sender<SetupMsg>,
) -> LoopEnd {
    let mut acc = WindowAcc::new();
    let _ = ready.send(SetupMsg::Ready {
        index: ctx.plan.index,
        shared: Arc::clone(shared),
    });
    drop(ready);
    gate.wait();
    if gate.abort.load(SeqCst) {
        return LoopEnd::NotStarted;
    }
    let interval = ctx.plan.interval_ns;
    let warm = ctx.warmup_periods;
    let planned_t0 = gate.t0_ns.load(SeqCst);
    // Saturating: an interval longer than the clock's value so far (e.g.
    // CLOCK_MONOTONIC soon after boot) starts the warm-up at 0.
    let first = match waiter.start(planned_t0.saturating_sub(warm * interval), interval) {
        Ok(f) => f,
        Err(e) => return LoopEnd::Error(e),
    };
    // setitimer may shift this thread's grid by a fraction of a µs.
    let t0 = first + warm * interval;
    let end = gate
        .end_ns
        .load(SeqCst)
        .saturating_add(t0.saturating_sub(planned_t0));
    let end = measure_loop(
        &mut ctx,
        shared,
        &mut waiter,
        &mut acc,
        &gate,
        first,
        t0,
        end,
    );
    waiter.stop();
    if let Some(last) = acc.finish()
        && ctx.windows.push(last).is_err()
    {
        shared.record_dropped_window();
    }
    end
}

/// Push `item` into a queue prepared in advance, or count it as dropped
/// when the queue is full (the reader fell behind).
// HOT PATH: no allocation, no lock.
#[inline(always)]
fn push_or_count<T>(q: &mut rtrb::Producer<T>, item: T, dropped: impl FnOnce()) {
    if q.push(item).is_err() {
        dropped();
    }
}

/// The measuring loop proper.
// HOT PATH: clock reads, the timer's wait, writes into prepared memory.
// Exempt from the function-length rule (about 80 lines): it stays one
// function so that what runs every period can be read, and proven, in
// one place.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn measure_loop(
    ctx: &mut ThreadCtx,
    shared: &SharedStats,
    waiter: &mut Waiter,
    acc: &mut WindowAcc,
    gate: &Gate,
    first: u64,
    t0: u64,
    end: u64,
) -> LoopEnd {
    #[cfg(test)]
    let _hot = crate::sys::alloc_audit::HotGuard::enter();
    let interval = ctx.plan.interval_ns;
    let warm = ctx.warmup_periods;
    let clock = ctx.clock;
    let correct = ctx.correct;
    let window_ns = ctx.window_ns;
    let mut period: u64 = 0;
    let mut deadline = first;
    let mut wakeups: u64 = 0;
    loop {
        if gate.stop.load(Relaxed) {
            return LoopEnd::Stopped;
        }
        if deadline >= end {
            return LoopEnd::Duration;
        }
        if let Some(l) = ctx.loops
            && wakeups >= l
        {
            return LoopEnd::Loops;
        }
        let expirations = match waiter.wait(deadline) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return LoopEnd::Error(e),
        };
        let now = clock::now_ns(clock);
        if now < deadline {
            shared.record_early(deadline - now);
            if expirations > 0 {
                // A periodic timer fired for these periods although the
                // clock says they are still ahead (a clock step): keep in
                // step with the timer, or every later latency is off.
                period += expirations;
                deadline += expirations * interval;
            }
            continue;
        }
        let lat = now - deadline;
        // Periods after this one whose deadline has also passed.
        let extra = if expirations > 0 {
            expirations - 1
        } else {
            lat / interval
        };
        if period < warm {
            shared.record_warmup(lat, extra);
        } else {
            let cycle = period - warm;
            shared.record_wakeup(lat, extra, interval, cycle, correct);
            if let Some(done) = acc.roll((now - t0) / window_ns) {
                push_or_count(&mut ctx.windows, done, || shared.record_dropped_window());
            }
            acc.add(lat, extra, interval, correct);
            wakeups += 1;
            if lat >= shared.late_floor() {
                let late = LateWakeup {
                    cycle,
                    deadline_ns: deadline,
                    wake_ns: now,
                    latency_ns: lat,
                };
                push_or_count(&mut ctx.late, late, || shared.record_dropped_late(lat));
            }
            if let Some(limit) = ctx.break_ns
                && lat > limit
            {
                gate.stop.store(true, Relaxed);
                if let Some(t) = &ctx.tracemark {
                    t.hit(ctx.plan.index, lat);
                }
                return LoopEnd::Break {
                    latency_ns: lat,
                    cycle,
                };
            }
        }
        period += 1 + extra;
        deadline += (1 + extra) * interval;
    }
}
