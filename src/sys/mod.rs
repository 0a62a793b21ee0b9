//! The only module allowed `unsafe`: thin wrappers over the Linux calls that
//! rtscope needs (scheduling, affinity, memory locking, clocks and timers,
//! signals, PM QoS, process groups and children). Each wrapper returns
//! `io::Result`, owns what it opens, and names the C call it wraps.
//! Nothing here knows about flags or output.
#![allow(unsafe_code)]

#[cfg(test)]
pub mod alloc_audit;
pub mod clock;
pub mod dma;
pub mod mem;
pub mod process;
pub mod pthread;
pub mod sched;
pub mod signal;
pub mod term;
pub mod thread;
pub mod timer;

use std::io;

/// The error numbers other modules match on (libc stays in `sys`).
pub mod errno {
    pub const EPERM: i32 = libc::EPERM;
    pub const EBUSY: i32 = libc::EBUSY;
    pub const EINVAL: i32 = libc::EINVAL;
    pub const ESRCH: i32 = libc::ESRCH;
}

/// Turn a `-1`-and-errno return into an `io::Result`.
pub(crate) fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Turn a "returns the error number" call (pthread_*, clock_nanosleep)
/// into an `io::Result`.
pub(crate) fn cvt_errno(ret: libc::c_int) -> io::Result<()> {
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(ret))
    }
}

pub(crate) fn timespec_from_ns(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

pub(crate) fn ns_from_timespec(ts: &libc::timespec) -> u64 {
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}
