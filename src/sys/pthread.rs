//! POSIX threads calls that `characterize` times: a pthread mutex owned
//! by a Rust type (plain, or priority inheritance with
//! `PTHREAD_PRIO_INHERIT`), `pthread_setschedparam`,
//! `pthread_setschedprio` and `sched_getparam` for the calling thread.
//! The lock calls are called from measuring loops: they never allocate
//! (the mutex is boxed once, at creation).

use super::cvt_errno;
use std::cell::UnsafeCell;
use std::io;

/// The protocol of a [`Mutex`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MutexProtocol {
    /// `PTHREAD_PRIO_NONE`: a plain futex mutex.
    Plain,
    /// `PTHREAD_PRIO_INHERIT`: the owner runs at the priority of its
    /// highest waiter (a PI futex).
    Inherit,
}

/// A `pthread_mutex_t` with a fixed address (boxed), locked and unlocked
/// explicitly. Misuse (unlocking a mutex this thread does not hold) is
/// reported by the C library as an error for error-checking mutexes only;
/// callers keep lock and unlock paired.
pub struct Mutex {
    raw: Box<UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: a pthread mutex is made to be shared between threads; its
// address never changes (boxed) and it is destroyed only on drop, when no
// other reference exists.
unsafe impl Send for Mutex {}
// SAFETY: as above: every operation goes through the pthread calls, which
// synchronise internally.
unsafe impl Sync for Mutex {}

impl Mutex {
    /// `pthread_mutexattr_setprotocol` + `pthread_mutex_init`.
    pub fn new(protocol: MutexProtocol) -> io::Result<Mutex> {
        // SAFETY: all-zero is a valid pthread_mutex_t before init.
        let raw = Box::new(UnsafeCell::new(unsafe {
            std::mem::zeroed::<libc::pthread_mutex_t>()
        }));
        // SAFETY: all-zero is valid storage for pthread_mutexattr_init.
        let mut attr: libc::pthread_mutexattr_t = unsafe { std::mem::zeroed() };
        // SAFETY: `attr` is valid, writable storage.
        cvt_errno(unsafe { libc::pthread_mutexattr_init(&mut attr) })?;
        let proto = match protocol {
            MutexProtocol::Plain => libc::PTHREAD_PRIO_NONE,
            MutexProtocol::Inherit => libc::PTHREAD_PRIO_INHERIT,
        };
        // SAFETY: `attr` was initialised above.
        let set = cvt_errno(unsafe { libc::pthread_mutexattr_setprotocol(&mut attr, proto) });
        // SAFETY: `raw` is valid storage at a fixed address; `attr` is
        // initialised.
        let init =
            set.and_then(|_| cvt_errno(unsafe { libc::pthread_mutex_init(raw.get(), &attr) }));
        // SAFETY: `attr` was initialised and is not used afterwards.
        unsafe { libc::pthread_mutexattr_destroy(&mut attr) };
        init?;
        Ok(Mutex { raw })
    }

    /// `pthread_mutex_lock`.
    #[inline]
    pub fn lock(&self) -> io::Result<()> {
        // SAFETY: the mutex was initialised in `new` and lives at a fixed
        // address until drop.
        cvt_errno(unsafe { libc::pthread_mutex_lock(self.raw.get()) })
    }

    /// `pthread_mutex_trylock`: `Ok(true)` when taken, `Ok(false)` when
    /// another thread holds it (EBUSY).
    #[inline]
    pub fn try_lock(&self) -> io::Result<bool> {
        // SAFETY: as in `lock`.
        let ret = unsafe { libc::pthread_mutex_trylock(self.raw.get()) };
        match ret {
            0 => Ok(true),
            libc::EBUSY => Ok(false),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    /// `pthread_mutex_unlock` (the caller holds the mutex).
    #[inline]
    pub fn unlock(&self) -> io::Result<()> {
        // SAFETY: as in `lock`.
        cvt_errno(unsafe { libc::pthread_mutex_unlock(self.raw.get()) })
    }
}

impl Drop for Mutex {
    fn drop(&mut self) {
        // SAFETY: no other reference exists (we own it mutably); an
        // initialised, unlocked mutex may be destroyed (a locked one only
        // returns EBUSY).
        unsafe { libc::pthread_mutex_destroy(self.raw.get()) };
    }
}

/// `pthread_setschedparam(pthread_self(), SCHED_FIFO, priority)`.
#[inline]
pub fn set_fifo_param_current(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pthread_self() is the calling thread; `param` is valid.
    cvt_errno(unsafe {
        libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param)
    })
}

/// `pthread_setschedprio(pthread_self(), priority)`: the priority alone,
/// the policy kept.
#[inline]
pub fn set_prio_current(priority: i32) -> io::Result<()> {
    // SAFETY: pthread_self() is the calling thread.
    cvt_errno(unsafe { libc::pthread_setschedprio(libc::pthread_self(), priority) })
}

/// The static priority the kernel reports for thread `tid` (0 = the
/// caller), `sched_getparam`.
pub fn priority_of(tid: i32) -> io::Result<i32> {
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is valid, writable storage.
    super::cvt(unsafe { libc::sched_getparam(tid, &mut param) })?;
    Ok(param.sched_priority)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trylock_of_a_held_mutex_fails_for_both_protocols() {
        for p in [MutexProtocol::Plain, MutexProtocol::Inherit] {
            let m = std::sync::Arc::new(Mutex::new(p).unwrap());
            m.lock().unwrap();
            let other = m.clone();
            let taken = std::thread::spawn(move || other.try_lock().unwrap())
                .join()
                .unwrap();
            assert!(!taken, "{p:?}: trylock of a held mutex succeeded");
            m.unlock().unwrap();
            assert!(m.try_lock().unwrap());
            m.unlock().unwrap();
        }
    }

    #[test]
    fn priority_of_the_caller_is_read() {
        // SCHED_OTHER threads have static priority 0.
        let p = std::thread::spawn(|| priority_of(0).unwrap())
            .join()
            .unwrap();
        assert!(p >= 0);
    }
}
