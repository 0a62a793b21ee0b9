//! Signal masks and synchronous signal waits: `pthread_sigmask`,
//! `sigwaitinfo`. Timer signals are blocked in every thread and received
//! synchronously, so no handler ever interrupts a measuring thread.
//! Also the handler that ends the process at a second Ctrl-C.

use super::cvt_errno;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A set of signals (`sigset_t`).
#[derive(Clone, Copy)]
pub struct SigSet(libc::sigset_t);

impl SigSet {
    pub fn new(signals: &[libc::c_int]) -> SigSet {
        // SAFETY: sigset_t is plain data and sigemptyset initialises it.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid sigset_t.
        unsafe { libc::sigemptyset(&mut set) };
        for &s in signals {
            // SAFETY: `set` is valid; an invalid signal number only fails.
            unsafe { libc::sigaddset(&mut set, s) };
        }
        SigSet(set)
    }

    /// Block these signals in the calling thread (`pthread_sigmask`);
    /// threads created afterwards inherit the mask.
    pub fn block(&self) -> io::Result<()> {
        // SAFETY: `self.0` is a valid sigset_t; old mask not requested.
        cvt_errno(unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &self.0, std::ptr::null_mut()) })
    }

    /// Wait for a POSIX-timer signal and return its overrun count: the
    /// expirations that happened while the signal was pending
    /// (`sigwaitinfo`, `siginfo_t.si_overrun`). `Interrupted` when a
    /// handler ran meanwhile.
    #[inline]
    pub fn wait_overrun(&self) -> io::Result<u64> {
        // SAFETY: siginfo_t is plain data; zero is a valid start.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `self.0` and `info` are valid for the call.
        let ret = unsafe { libc::sigwaitinfo(&self.0, &mut info) };
        if ret >= 0 {
            Ok(overrun_of(&info))
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Wait until one of these (blocked) signals is pending and take it
    /// (`sigwaitinfo`). Returns the signal number; `Interrupted` when a
    /// handler ran meanwhile.
    #[inline]
    pub fn wait(&self) -> io::Result<libc::c_int> {
        // SAFETY: `self.0` is a valid sigset_t; a null siginfo is allowed.
        let ret = unsafe { libc::sigwaitinfo(&self.0, std::ptr::null_mut()) };
        if ret >= 0 {
            Ok(ret)
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// `si_overrun` of a timer signal. In the kernel's `siginfo_t` the
/// union follows three ints, aligned to the pointer size; the timer member
/// starts with `si_tid` then `si_overrun`.
fn overrun_of(info: &libc::siginfo_t) -> u64 {
    const UNION_OFFSET: usize = if cfg!(target_pointer_width = "64") {
        16
    } else {
        12
    };
    let base = (info as *const libc::siginfo_t).cast::<u8>();
    // SAFETY: siginfo_t is 128 bytes; the offset is inside it and aligned
    // for a c_int. read_unaligned avoids any alignment assumption anyway.
    let v = unsafe { std::ptr::read_unaligned(base.add(UNION_OFFSET + 4).cast::<libc::c_int>()) };
    v.max(0) as u64
}

/// The signal used by POSIX timers of measuring threads: a real-time
/// signal that glibc leaves to applications.
pub fn timer_signal() -> libc::c_int {
    libc::SIGRTMIN() + 2
}

/// SIGALRM, sent by the `setitimer` timer.
pub const SIGALRM: libc::c_int = libc::SIGALRM;

/// Signals that the control thread handles (Ctrl-C, termination, summary
/// request); measuring threads block them so they are never interrupted.
pub fn control_signals() -> SigSet {
    SigSet::new(&[
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGUSR1,
        libc::SIGHUP,
        libc::SIGQUIT,
    ])
}

/// Signals that timers deliver; blocked in every thread of the process.
pub fn timer_signals() -> SigSet {
    SigSet::new(&[SIGALRM, timer_signal()])
}

/// The signal that wakes a measuring thread out of its wait when the run
/// stops (its handler does nothing; the wait returns EINTR).
pub const WAKE_SIGNAL: libc::c_int = libc::SIGUSR2;

extern "C" fn wake_handler(_: libc::c_int) {}

/// Install the no-op handler of [`WAKE_SIGNAL`], without SA_RESTART so
/// that waits return EINTR (`sigaction`).
pub fn install_wake_handler() -> io::Result<()> {
    // SAFETY: sigaction is plain data; zero is a valid start.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = wake_handler as *const () as libc::sighandler_t;
    sa.sa_flags = 0;
    // SAFETY: `sa.sa_mask` is a valid sigset_t.
    unsafe { libc::sigemptyset(&mut sa.sa_mask) };
    // SAFETY: `sa` is fully initialised; the handler is async-signal-safe
    // (it does nothing).
    super::cvt(unsafe { libc::sigaction(WAKE_SIGNAL, &sa, std::ptr::null_mut()) })?;
    Ok(())
}

/// Send [`WAKE_SIGNAL`] to one thread (`pthread_kill`).
pub fn wake_thread(thread: libc::pthread_t) -> io::Result<()> {
    // SAFETY: `thread` comes from a live JoinHandle owned by the caller.
    cvt_errno(unsafe { libc::pthread_kill(thread, WAKE_SIGNAL) })
}

/// Make `sig` end the process at once when `flag` is already set (a
/// second Ctrl-C): `message` is written to standard error (`write`) and
/// the process exits with `code` (`_exit`: no destructor runs, nothing
/// waits). Register it before the handler that sets `flag`, since
/// handlers run in the order they were registered.
pub fn exit_when_set(
    sig: libc::c_int,
    flag: Arc<AtomicBool>,
    message: &'static str,
    code: libc::c_int,
) -> io::Result<()> {
    let action = move || {
        if flag.load(Ordering::SeqCst) {
            // SAFETY: `message` is a valid static buffer of its length;
            // write(2) is async-signal-safe.
            unsafe { libc::write(2, message.as_ptr().cast(), message.len()) };
            signal_hook::low_level::exit(code);
        }
    };
    // SAFETY: the action only loads an atomic, writes to a descriptor and
    // calls _exit, all async-signal-safe; it neither allocates nor locks.
    unsafe { signal_hook::low_level::register(sig, action) }?;
    Ok(())
}
