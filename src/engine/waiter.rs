//! The timer methods: how a measuring thread waits for its next period.
//! Everything is created and armed before the first period; `wait` is the
//! only call on the hot path and makes exactly one blocking syscall.

use super::plan::TimerMethod;
use crate::sys::clock::{self, Clock};
use crate::sys::signal::{self, SigSet};
use crate::sys::timer::{self, PosixTimer, TimerFd};
use std::io;

pub enum Waiter {
    Abs(Clock),
    Rel(Clock),
    Nanosleep(Clock),
    Itimer(Clock, SigSet),
    Posix(PosixTimer, SigSet),
    Timerfd(TimerFd),
}

impl Waiter {
    /// Create the timer of `method` for the calling thread (`tid`).
    pub fn new(method: TimerMethod, clock: Clock, tid: i32) -> io::Result<Waiter> {
        Ok(match method {
            TimerMethod::Abs => Waiter::Abs(clock),
            TimerMethod::Rel => Waiter::Rel(clock),
            TimerMethod::Nanosleep => Waiter::Nanosleep(clock),
            TimerMethod::Itimer => Waiter::Itimer(clock, SigSet::new(&[signal::SIGALRM])),
            TimerMethod::Posix => {
                let signo = signal::timer_signal();
                Waiter::Posix(
                    PosixTimer::for_thread(clock, tid, signo)?,
                    SigSet::new(&[signo]),
                )
            }
            TimerMethod::Timerfd => Waiter::Timerfd(TimerFd::new(clock)?),
        })
    }

    /// Arm periodic timers for a first deadline at `first_ns`, then every
    /// `interval_ns`. Returns the first deadline to measure against:
    /// unchanged for absolute timers; for `setitimer`, which is relative
    /// and in microseconds, the earliest time the kernel can fire it, so
    /// the error only ever makes latencies larger, never smaller.
    pub fn start(&mut self, first_ns: u64, interval_ns: u64) -> io::Result<u64> {
        match self {
            Waiter::Abs(_) | Waiter::Rel(_) | Waiter::Nanosleep(_) => Ok(first_ns),
            Waiter::Posix(t, _) => {
                t.arm_abs(first_ns, interval_ns)?;
                Ok(first_ns)
            }
            Waiter::Timerfd(t) => {
                t.arm_abs(first_ns, interval_ns)?;
                Ok(first_ns)
            }
            Waiter::Itimer(clock, _) => {
                let before = clock::now_ns(*clock);
                let rel = first_ns.saturating_sub(before).max(1000).div_ceil(1000) * 1000;
                timer::set_itimer_real(rel, interval_ns)?;
                Ok(before + rel)
            }
        }
    }

    /// Wait for the period whose deadline is `deadline_ns`. Returns the
    /// number of timer expirations this wake-up consumed when the kernel
    /// says (timerfd, POSIX timers), or 0 when lateness must be worked out
    /// from the clock (sleeps, setitimer).
    // HOT PATH: one blocking syscall, no allocation.
    #[inline]
    pub fn wait(&mut self, deadline_ns: u64) -> io::Result<u64> {
        match self {
            Waiter::Abs(clock) => clock::sleep_until_ns(*clock, deadline_ns).map(|_| 0),
            Waiter::Rel(clock) => {
                let now = clock::now_ns(*clock);
                if deadline_ns > now {
                    clock::sleep_for_ns(*clock, deadline_ns - now)?;
                }
                Ok(0)
            }
            Waiter::Nanosleep(clock) => {
                let now = clock::now_ns(*clock);
                if deadline_ns > now {
                    clock::nanosleep_ns(deadline_ns - now)?;
                }
                Ok(0)
            }
            Waiter::Itimer(_, set) => set.wait().map(|_| 0),
            Waiter::Posix(_, set) => set.wait_overrun().map(|overrun| 1 + overrun),
            Waiter::Timerfd(t) => t.wait(),
        }
    }

    /// Disarm what keeps firing after the loop (setitimer is per process).
    pub fn stop(&mut self) {
        if let Waiter::Itimer(..) = self {
            let _ = timer::set_itimer_real(0, 0);
        }
    }
}
