//! Reading a file from elsewhere (an import, a trace) with a size limit:
//! a file above the limit is refused before it is read into memory, and
//! a file that grows while read (a pipe, a file still written) is cut at
//! the limit and refused. A pipe is read (`/dev/stdin`, `<(cmd)`, a
//! FIFO a program writes), but a FIFO no program opens within
//! [`WRITER_WAIT`] is refused instead of waited for without end, and a
//! device or a socket is refused unread. Reads only; never writes.

use crate::units::fmt_size;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Default limit of `rtscope import`: result files (histograms, JSON,
/// status lines) are kilobytes to a few megabytes.
pub const IMPORT_MAX_BYTES: u64 = 256 << 20;
/// Default limit of `explain --trace`: the text of a trace around a
/// spike is tens of megabytes; its events take about as much memory again.
pub const TRACE_MAX_BYTES: u64 = 1 << 30;

/// How long a FIFO is given for a program to open it and write.
pub const WRITER_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A device or a socket: no file to read.
    #[error(
        "cannot read {path}: it is a {kind}, not a file; give a file (or a pipe a program writes to)"
    )]
    NotAFile { path: PathBuf, kind: &'static str },
    /// A FIFO that no program opened or wrote to in time.
    #[error(
        "cannot read {path}: it is a FIFO (named pipe) and no program wrote to it within {}; start the program that writes it first, or give a file",
        crate::units::fmt_duration(waited.as_nanos() as u64)
    )]
    NoWriter {
        path: PathBuf,
        waited: std::time::Duration,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is {size}, above the {limit} limit of {what}: refused unread; raise the limit with --max-size if it is meant to be read whole"
    )]
    TooLarge {
        path: PathBuf,
        /// `1.5 GiB`, or `larger than 256 MiB` when only that is known.
        size: String,
        limit: String,
        what: &'static str,
    },
}

/// The whole content of `path`, at most `max_bytes` of it; `what` names
/// the reader in the refusal ("an import", "a trace").
pub fn read_limited(
    path: &Path,
    max_bytes: u64,
    what: &'static str,
) -> Result<Vec<u8>, InputError> {
    read_waiting(path, max_bytes, what, WRITER_WAIT)
}

/// [`read_limited`], giving a FIFO `wait` for its writer.
fn read_waiting(
    path: &Path,
    max_bytes: u64,
    what: &'static str,
    wait: std::time::Duration,
) -> Result<Vec<u8>, InputError> {
    let read_err = |source| InputError::Read {
        path: path.into(),
        source,
    };
    let too_large = |size: String| InputError::TooLarge {
        path: path.into(),
        size,
        limit: fmt_size(max_bytes),
        what,
    };
    // Never blocks in open: a FIFO without a writer would wait for ever.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(read_err)?;
    let meta = file.metadata().map_err(read_err)?;
    let kind = meta.file_type();
    if meta.is_file() && meta.len() > max_bytes {
        return Err(too_large(fmt_size(meta.len())));
    }
    let mut bytes = Vec::with_capacity(if meta.is_file() {
        meta.len() as usize
    } else {
        0
    });
    let not_a_file = |kind| InputError::NotAFile {
        path: path.into(),
        kind,
    };
    if kind.is_char_device() {
        return Err(not_a_file("character device"));
    }
    if kind.is_block_device() {
        return Err(not_a_file("block device"));
    }
    if kind.is_socket() {
        return Err(not_a_file("socket"));
    }
    if kind.is_fifo() {
        wait_for_writer(&file, &mut bytes, max_bytes, wait).map_err(|e| match e {
            Some(source) => read_err(source),
            None => InputError::NoWriter {
                path: path.into(),
                waited: wait,
            },
        })?;
    }
    rustix::fs::fcntl_setfl(&file, rustix::fs::OFlags::empty()).map_err(|e| read_err(e.into()))?;
    let start = bytes.len() as u64;
    file.take(max_bytes.saturating_add(1).saturating_sub(start))
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(format!("larger than {}", fmt_size(max_bytes))));
    }
    Ok(bytes)
}

/// On a FIFO opened without blocking: wait, at most `wait`, until
/// a program has it open for writing (a read would block: `EAGAIN`) or
/// has written (the first bytes, put in `bytes`). A read of nothing means
/// no writer yet. `Err(None)` when none came in time; `Err(Some(e))` on a
/// read error.
fn wait_for_writer(
    mut file: &std::fs::File,
    bytes: &mut Vec<u8>,
    max_bytes: u64,
    wait: std::time::Duration,
) -> Result<(), Option<std::io::Error>> {
    let until = std::time::Instant::now() + wait;
    let mut buf = vec![0u8; 64 << 10];
    let cap = buf.len().min(max_bytes.saturating_add(1) as usize);
    loop {
        match file.read(&mut buf[..cap]) {
            Ok(0) if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Ok(0) => return Err(None),
            Ok(n) => {
                bytes.extend_from_slice(&buf[..n]);
                return Ok(());
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Some(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_above_the_limit_are_refused() {
        let d = std::env::temp_dir().join(format!("rtscope-input-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("f");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_limited(&f, 10, "a test").unwrap(), b"0123456789");
        let e = read_limited(&f, 9, "a test").unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("--max-size"), "{e}");
        assert!(matches!(
            read_limited(&d.join("none"), 9, "a test"),
            Err(InputError::Read { .. })
        ));
        std::fs::remove_dir_all(d).ok();
    }

    #[test]
    fn fifos_without_a_writer_and_devices_are_refused_in_bounded_time() {
        let d = std::env::temp_dir().join(format!("rtscope-input-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let fifo = d.join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from(0o600)).unwrap();
        let wait = std::time::Duration::from_millis(300);
        // Without a writer: refused once the wait is over (open and read
        // blocked for ever).
        let e = read_waiting(&fifo, 100, "a test", wait).unwrap_err();
        assert!(matches!(e, InputError::NoWriter { .. }), "{e}");
        assert!(e.to_string().contains("no program wrote to it"), "{e}");
        // With a writer that comes a little later: read whole.
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(50));
                std::fs::write(&fifo, b"T: 0 lines\n".repeat(10_000)).unwrap();
            })
        };
        let got = read_waiting(&fifo, 1 << 20, "a test", std::time::Duration::from_secs(30));
        writer.join().unwrap();
        assert_eq!(got.unwrap().len(), 110_000);
        let e = read_limited(Path::new("/dev/null"), 100, "a test").unwrap_err();
        assert!(matches!(e, InputError::NotAFile { .. }), "{e}");
        assert!(e.to_string().contains("character device"), "{e}");
        std::fs::remove_dir_all(d).ok();
    }
}
