//! Memory hygiene for real-time threads: `mlockall`, glibc's `mallopt`
//! so freed memory is never given back, and stack prefaulting.

use super::cvt;
use std::io;

/// `mlockall(MCL_CURRENT | MCL_FUTURE)`: every page mapped now or later
/// stays in RAM and is populated when mapped.
pub fn lock_all() -> io::Result<()> {
    // SAFETY: plain syscall wrapper with integer flags.
    cvt(unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) })?;
    Ok(())
}

/// `munlockall()`.
pub fn unlock_all() -> io::Result<()> {
    // SAFETY: plain syscall wrapper.
    cvt(unsafe { libc::munlockall() })?;
    Ok(())
}

/// Keep the heap from shrinking or using fresh mmaps, so memory prefaulted
/// once stays mapped (glibc `mallopt(M_TRIM_THRESHOLD, -1)` and
/// `mallopt(M_MMAP_MAX, 0)`). A no-op on other C libraries.
pub fn keep_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes allocator tunables.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, -1);
        libc::mallopt(libc::M_MMAP_MAX, 0);
    }
}

/// Touch `bytes` of stack below the caller so those pages are resident
/// before the first period.
#[inline(never)]
pub fn prefault_stack() {
    const BYTES: usize = 64 * 1024;
    let mut buf = [0u8; BYTES];
    // Writing through black_box keeps the compiler from eliding the array.
    let b = std::hint::black_box(&mut buf);
    for i in (0..BYTES).step_by(4096) {
        b[i] = 1;
    }
    std::hint::black_box(b);
}
