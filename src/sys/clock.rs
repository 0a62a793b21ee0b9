//! Clocks and sleeps: `clock_gettime` (vDSO, no syscall), `clock_nanosleep`
//! absolute and relative, and `nanosleep`. These are called from the hot
//! path: they must never allocate.

use super::{cvt_errno, ns_from_timespec, timespec_from_ns};
use serde::{Deserialize, Serialize};
use std::io;

/// The clock that deadlines and wake-ups are measured on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    Monotonic,
    Realtime,
}

impl Clock {
    pub(crate) fn id(self) -> libc::clockid_t {
        match self {
            Clock::Monotonic => libc::CLOCK_MONOTONIC,
            Clock::Realtime => libc::CLOCK_REALTIME,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Clock::Monotonic => "monotonic",
            Clock::Realtime => "realtime",
        }
    }
}

/// `clock_gettime(clock)` in nanoseconds. Served by the vDSO on Linux: no
/// syscall, no allocation.
#[inline(always)]
pub fn now_ns(clock: Clock) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is one the
    // kernel always supports, so the call cannot fail.
    unsafe { libc::clock_gettime(clock.id(), &mut ts) };
    ns_from_timespec(&ts)
}

/// `clock_getres(clock)` in nanoseconds.
pub fn resolution_ns(clock: Clock) -> io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let ret = unsafe { libc::clock_getres(clock.id(), &mut ts) };
    super::cvt(ret)?;
    Ok(ns_from_timespec(&ts))
}

// The sleeps below are not restarted on EINTR: a signal handler that ran
// (the engine's wake-up signal at stop) returns `ErrorKind::Interrupted`,
// and the caller decides whether to sleep again.

/// `clock_nanosleep(clock, TIMER_ABSTIME, deadline)`.
#[inline]
pub fn sleep_until_ns(clock: Clock, deadline_ns: u64) -> io::Result<()> {
    let ts = timespec_from_ns(deadline_ns);
    // SAFETY: `ts` is a valid timespec; a null remainder is allowed with
    // TIMER_ABSTIME.
    let ret = unsafe {
        libc::clock_nanosleep(clock.id(), libc::TIMER_ABSTIME, &ts, std::ptr::null_mut())
    };
    cvt_errno(ret)
}

/// `clock_nanosleep(clock, 0, duration)` (relative).
#[inline]
pub fn sleep_for_ns(clock: Clock, duration_ns: u64) -> io::Result<()> {
    let req = timespec_from_ns(duration_ns);
    // SAFETY: `req` is a valid timespec; no remainder requested.
    let ret = unsafe { libc::clock_nanosleep(clock.id(), 0, &req, std::ptr::null_mut()) };
    cvt_errno(ret)
}

/// `nanosleep(duration)` (the plain syscall, always CLOCK_MONOTONIC).
#[inline]
pub fn nanosleep_ns(duration_ns: u64) -> io::Result<()> {
    let req = timespec_from_ns(duration_ns);
    // SAFETY: `req` is a valid timespec; no remainder requested.
    let ret = unsafe { libc::nanosleep(&req, std::ptr::null_mut()) };
    super::cvt(ret).map(|_| ())
}

/// Wall-clock time now, in nanoseconds since the Unix epoch.
pub fn unix_now_ns() -> u64 {
    now_ns(Clock::Realtime)
}
