//! The terminal's size (`ioctl(TIOCGWINSZ)`), for displays that must fit
//! its width. Read-only; never used by measuring threads.

use std::os::fd::AsRawFd;

/// The columns of the terminal `fd` is open on; `None` when it is not a
/// terminal or does not say (a width of 0).
pub fn columns(fd: &impl AsRawFd) -> Option<u16> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which
    // points to a live, writable one; a bad fd is an error return.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_col > 0).then_some(ws.ws_col)
}
