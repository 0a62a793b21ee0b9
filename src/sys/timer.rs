//! Kernel timers for the timer methods that are not a plain sleep:
//! `timerfd_create` / `timerfd_settime` / `read`, `timer_create` with
//! SIGEV_THREAD_ID / `timer_settime`, and `setitimer(ITIMER_REAL)`.
//! Arming happens during set-up; only the wait is on the hot path.

use super::clock::Clock;
use super::{cvt, timespec_from_ns};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A timerfd (`timerfd_create`), blocking reads.
pub struct TimerFd {
    fd: OwnedFd,
}

impl TimerFd {
    pub fn new(clock: Clock) -> io::Result<TimerFd> {
        // SAFETY: plain syscall wrapper; the returned fd is owned below.
        let fd = cvt(unsafe { libc::timerfd_create(clock.id(), libc::TFD_CLOEXEC) })?;
        // SAFETY: `fd` is a freshly created descriptor we own.
        Ok(TimerFd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// `timerfd_settime(TFD_TIMER_ABSTIME)`: first expiry at `first_ns`
    /// on the timer's clock, then every `interval_ns`.
    pub fn arm_abs(&self, first_ns: u64, interval_ns: u64) -> io::Result<()> {
        let spec = libc::itimerspec {
            it_interval: timespec_from_ns(interval_ns),
            it_value: timespec_from_ns(first_ns),
        };
        // SAFETY: `spec` is valid; old value not requested.
        cvt(unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        })?;
        Ok(())
    }

    /// Block until the timer expires (`read`); returns the number of
    /// expirations since the last read. `Interrupted` when a handler ran.
    #[inline]
    pub fn wait(&self) -> io::Result<u64> {
        let mut count: u64 = 0;
        // SAFETY: `count` is valid for 8 bytes of writes.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), (&mut count as *mut u64).cast(), 8) };
        match n {
            8 => Ok(count),
            n if n < 0 => Err(io::Error::last_os_error()),
            _ => Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
        }
    }
}

/// A POSIX timer (`timer_create`) whose expirations are sent as `signo`
/// to one thread (SIGEV_THREAD_ID). Deleted on drop.
pub struct PosixTimer {
    id: libc::timer_t,
}

// SAFETY: a timer_t is a kernel handle usable from any thread.
unsafe impl Send for PosixTimer {}

impl PosixTimer {
    pub fn for_thread(clock: Clock, tid: i32, signo: libc::c_int) -> io::Result<PosixTimer> {
        // SAFETY: sigevent is plain data; all-zero is a valid start.
        let mut sev: libc::sigevent = unsafe { std::mem::zeroed() };
        sev.sigev_notify = libc::SIGEV_THREAD_ID;
        sev.sigev_signo = signo;
        sev.sigev_notify_thread_id = tid;
        let mut id: libc::timer_t = std::ptr::null_mut();
        // SAFETY: `sev` and `id` are valid for the call.
        cvt(unsafe { libc::timer_create(clock.id(), &mut sev, &mut id) })?;
        Ok(PosixTimer { id })
    }

    /// `timer_settime(TIMER_ABSTIME)`: first expiry at `first_ns`, then
    /// every `interval_ns`.
    pub fn arm_abs(&self, first_ns: u64, interval_ns: u64) -> io::Result<()> {
        let spec = libc::itimerspec {
            it_interval: timespec_from_ns(interval_ns),
            it_value: timespec_from_ns(first_ns),
        };
        // SAFETY: `self.id` is a live timer; `spec` is valid.
        cvt(unsafe {
            libc::timer_settime(self.id, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut())
        })?;
        Ok(())
    }
}

impl Drop for PosixTimer {
    fn drop(&mut self) {
        // SAFETY: `self.id` is a live timer created by timer_create.
        unsafe { libc::timer_delete(self.id) };
    }
}

fn timeval_from_ns(ns: u64) -> libc::timeval {
    libc::timeval {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_usec: ((ns % 1_000_000_000) / 1000) as libc::suseconds_t,
    }
}

/// `setitimer(ITIMER_REAL)`: SIGALRM to the process after `first_ns`
/// (relative, microsecond resolution), then every `interval_ns`.
/// `0, 0` disarms it.
pub fn set_itimer_real(first_ns: u64, interval_ns: u64) -> io::Result<()> {
    let it = libc::itimerval {
        it_interval: timeval_from_ns(interval_ns),
        it_value: timeval_from_ns(first_ns),
    };
    // SAFETY: `it` is valid; old value not requested.
    cvt(unsafe { libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut()) })?;
    Ok(())
}
