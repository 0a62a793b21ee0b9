//! Per-thread housekeeping: the name shown in `ps` / `top`
//! (`prctl(PR_SET_NAME)`).

use super::cvt;
use std::io;

/// Name the calling thread (at most 15 bytes are kept by the kernel).
pub fn set_name(name: &str) -> io::Result<()> {
    let mut buf = [0u8; 16];
    let n = name.len().min(15);
    buf[..n].copy_from_slice(&name.as_bytes()[..n]);
    // SAFETY: `buf` is a NUL-terminated buffer of 16 bytes.
    cvt(unsafe { libc::prctl(libc::PR_SET_NAME, buf.as_ptr() as libc::c_ulong, 0, 0, 0) })?;
    Ok(())
}
