//! Writing result files safely, with one rule for every output: checked
//! before measuring (so a run is not wasted on a path that cannot be
//! written), then written atomically (temporary file + rename) so a crash
//! never leaves half a file. The path belongs to the user: a symbolic link
//! is followed and its target written; a character device or a FIFO
//! (`/dev/stdout`, a pipe) is written through, never replaced; a block
//! device or a socket is refused; a missing parent directory is refused
//! (never created), naming the directory. `-` is standard output.
//!
//! A FIFO is never waited for without bound: with no process reading it,
//! the writer waits at most [`READER_WAIT`] for one, and less when the
//! caller's stop flag is set (a signal); the error then says so.
//!
//! When a record could not go anywhere it was asked to go,
//! [`write_fallback`] keeps it in a temporary directory. Errors are
//! [`OutputError`]s, each naming the path and the cause in its message.

use rustix::fs::{Mode, OFlags};
use std::fs::Metadata;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Symbolic links followed before giving up (as the kernel's ELOOP).
const MAX_LINKS: usize = 40;

/// How long a FIFO that no process reads is waited for before the write
/// is given up.
pub const READER_WAIT: Duration = Duration::from_secs(10);

/// How often a FIFO with no reader is tried again meanwhile.
const READER_POLL: Duration = Duration::from_millis(50);

/// Why an output could not be checked or written. `what` names the
/// output as the user gave it (`--json`, `report file`); every message
/// carries its cause, so none has a `source`.
#[derive(Debug, Error)]
pub enum OutputError {
    /// The path could not be looked at (`stat` failed, not for lack of a
    /// file).
    #[error("{what} {}: {err}", path.display())]
    Inspect {
        what: String,
        path: PathBuf,
        err: std::io::Error,
    },
    #[error("{what} {}: following the link: {err}", path.display())]
    FollowLink {
        what: String,
        path: PathBuf,
        err: std::io::Error,
    },
    #[error("{what} {}: reading the link: {err}", path.display())]
    ReadLink {
        what: String,
        path: PathBuf,
        err: std::io::Error,
    },
    #[error("{what} {}: too many levels of symbolic links", path.display())]
    TooManyLinks { what: String, path: PathBuf },
    #[error("{what} {} is a directory: give a file name", path.display())]
    Directory { what: String, path: PathBuf },
    #[error(
        "{what} {} is a block device: rtscope writes results to files, never over a disk",
        path.display()
    )]
    BlockDevice { what: String, path: PathBuf },
    #[error(
        "{what} {} is neither a file, a character device nor a FIFO: give a file name",
        path.display()
    )]
    OtherKind { what: String, path: PathBuf },
    #[error("{what} {} cannot be written: {err}", path.display())]
    NotWritable {
        what: String,
        path: PathBuf,
        err: std::io::Error,
    },
    #[error(
        "{what} {}: directory {} does not exist: create it first (rtscope does not create directories for its outputs)",
        path.display(),
        dir.display()
    )]
    NoDirectory {
        what: String,
        path: PathBuf,
        dir: PathBuf,
    },
    #[error("{what} {}: directory {} is not writable: {err}", path.display(), dir.display())]
    DirectoryNotWritable {
        what: String,
        path: PathBuf,
        dir: PathBuf,
        err: std::io::Error,
    },
    /// Opening, writing or renaming failed.
    #[error("could not write {}: {err}", path.display())]
    Write { path: PathBuf, err: std::io::Error },
    #[error(
        "could not write {}: no process read the FIFO within {} s (start its reader before rtscope, or give a file)",
        path.display(),
        waited.as_secs()
    )]
    NoReader { path: PathBuf, waited: Duration },
    #[error(
        "could not write {}: stopped by a signal while waiting for a process to read the FIFO",
        path.display()
    )]
    Interrupted { path: PathBuf },
    #[error("no temporary directory took {name} ({tried})")]
    NoFallback { name: String, tried: String },
}

type Result<T, E = OutputError> = std::result::Result<T, E>;

/// What an output path leads to, symbolic links followed.
#[derive(Debug)]
enum Target {
    /// `-`.
    Stdout,
    /// A regular file (replaced atomically) or nothing yet (created).
    File {
        path: PathBuf,
        existing: Option<Metadata>,
    },
    /// A character device or a FIFO: opened and written, never replaced.
    Through(PathBuf),
}

/// Say what `path` leads to, symbolic links followed (also the kernel's
/// own, as `/dev/stdout` -> `/proc/self/fd/1` -> a pipe); refuse a
/// directory, a block device, a socket and a loop of links.
fn resolve(path: &Path, what: &str) -> Result<Target> {
    if path.as_os_str() == "-" {
        return Ok(Target::Stdout);
    }
    let named = || (what.to_string(), path.to_path_buf());
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Target::File {
                path: dangling_target(path, what)?,
                existing: None,
            });
        }
        Err(err) => {
            let (what, path) = named();
            return Err(OutputError::Inspect { what, path, err });
        }
    };
    let ft = meta.file_type();
    if ft.is_file() {
        let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let real = if is_link {
            std::fs::canonicalize(path).map_err(|err| {
                let (what, path) = named();
                OutputError::FollowLink { what, path, err }
            })?
        } else {
            path.to_path_buf()
        };
        return Ok(Target::File {
            path: real,
            existing: Some(meta),
        });
    }
    if ft.is_char_device() || ft.is_fifo() {
        // Opened by its name: the kernel follows the links.
        return Ok(Target::Through(path.to_path_buf()));
    }
    let (what, path) = named();
    Err(if ft.is_dir() {
        OutputError::Directory { what, path }
    } else if ft.is_block_device() {
        OutputError::BlockDevice { what, path }
    } else {
        OutputError::OtherKind { what, path }
    })
}

/// Where a file named by `path`, which does not exist, is to be made:
/// `path` itself, or the final target of the symbolic links it names.
fn dangling_target(path: &Path, what: &str) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p).map_err(|err| OutputError::ReadLink {
                    what: what.to_string(),
                    path: path.to_path_buf(),
                    err,
                })?;
                p = if to.is_absolute() {
                    to
                } else {
                    parent_dir(&p).join(to)
                };
            }
            _ => return Ok(p),
        }
    }
    Err(OutputError::TooManyLinks {
        what: what.to_string(),
        path: path.to_path_buf(),
    })
}

/// The directory a file is to be made in, which must exist.
fn existing_dir(p: &Path, path: &Path, what: &str) -> Result<PathBuf> {
    let dir = parent_dir(p);
    if !dir.is_dir() {
        return Err(OutputError::NoDirectory {
            what: what.to_string(),
            path: path.to_path_buf(),
            dir,
        });
    }
    Ok(dir)
}

/// Check that `path` can be written later, without truncating it now.
pub fn check_writable(path: &Path, what: &str) -> Result<()> {
    let not_writable = |err| OutputError::NotWritable {
        what: what.to_string(),
        path: path.to_path_buf(),
        err,
    };
    let (p, existing) = match resolve(path, what)? {
        Target::Stdout => return Ok(()),
        Target::Through(p) => {
            return rustix::fs::access(&p, rustix::fs::Access::WRITE_OK)
                .map_err(|e| not_writable(e.into()));
        }
        Target::File { path, existing } => (path, existing),
    };
    if existing.is_some() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .map_err(not_writable)?;
    }
    let dir = existing_dir(&p, path, what)?;
    let probe = dir.join(format!(".rtscope-probe-{}", std::process::id()));
    std::fs::File::create(&probe).map_err(|err| OutputError::DirectoryNotWritable {
        what: what.to_string(),
        path: path.to_path_buf(),
        dir: dir.clone(),
        err,
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Write `bytes` to `path` by the rule above: `-` is standard output, a
/// device or a FIFO is written through, a file is replaced atomically
/// (keeping its permissions and, where allowed, its owner). A FIFO that
/// no process reads is waited for at most [`READER_WAIT`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_or_stop(path, bytes, &AtomicBool::new(false))
}

/// [`write_atomic`], whose wait for the reader of a FIFO also ends when
/// `stop` is set (already, or by a signal meanwhile):
/// [`OutputError::Interrupted`].
pub fn write_atomic_or_stop(path: &Path, bytes: &[u8], stop: &AtomicBool) -> Result<()> {
    let (p, existing) = match resolve(path, "output")? {
        Target::Stdout => {
            let mut out = std::io::stdout().lock();
            return out
                .write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(|err| OutputError::Write {
                    path: path.to_path_buf(),
                    err,
                });
        }
        Target::Through(p) => return write_through(path, &p, bytes, stop),
        Target::File { path, existing } => (path, existing),
    };
    let dir = existing_dir(&p, path, "output")?;
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        if let Some(m) = &existing {
            // The file stays the user's: same mode, same owner (root may
            // give it back; others keep theirs).
            let _ = std::os::unix::fs::fchown(&f, Some(m.uid()), Some(m.gid()));
            f.set_permissions(std::fs::Permissions::from_mode(m.mode() & 0o7777))?;
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &p)
    })();
    if let Err(err) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(OutputError::Write {
            path: path.to_path_buf(),
            err,
        });
    }
    Ok(())
}

/// Write a character device or a FIFO (`p`, given as `path`) through.
/// Opened without blocking, so that a FIFO with no reader (`ENXIO`) is
/// tried again every [`READER_POLL`] until [`READER_WAIT`] has passed or
/// `stop` is set; then written in blocking mode (a full pipe is waited
/// for, as any writer of a pipe does).
fn write_through(path: &Path, p: &Path, bytes: &[u8], stop: &AtomicBool) -> Result<()> {
    let failed = |err: std::io::Error| OutputError::Write {
        path: path.to_path_buf(),
        err,
    };
    let flags = OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let start = Instant::now();
    let fd = loop {
        match rustix::fs::open(p, flags, Mode::empty()) {
            Ok(fd) => break fd,
            Err(rustix::io::Errno::NXIO) => {
                if stop.load(Ordering::SeqCst) {
                    return Err(OutputError::Interrupted {
                        path: path.to_path_buf(),
                    });
                }
                if start.elapsed() >= READER_WAIT {
                    return Err(OutputError::NoReader {
                        path: path.to_path_buf(),
                        waited: READER_WAIT,
                    });
                }
                std::thread::sleep(READER_POLL);
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(failed(e.into())),
        }
    };
    let blocking = rustix::fs::fcntl_getfl(&fd).map(|f| f.difference(OFlags::NONBLOCK));
    blocking
        .and_then(|f| rustix::fs::fcntl_setfl(&fd, f))
        .map_err(|e| failed(e.into()))?;
    let mut f = std::fs::File::from(fd);
    f.write_all(bytes).and_then(|()| f.flush()).map_err(failed)
}

/// Keep `bytes` in a new file `name` in the first temporary directory
/// that takes it (`$TMPDIR`, `/var/tmp`, `/tmp`): for a record that
/// could not be written where it was asked to go. Returns its path.
pub fn write_fallback(name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("TMPDIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .into_iter()
        .collect();
    dirs.extend([PathBuf::from("/var/tmp"), PathBuf::from("/tmp")]);
    let mut tried = Vec::new();
    for d in dirs {
        let p = d.join(name);
        let mut f = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
        {
            Ok(f) => f,
            Err(e) => {
                tried.push(format!("{}: {e}", d.display()));
                continue;
            }
        };
        match f.write_all(bytes).and_then(|()| f.sync_all()) {
            Ok(()) => return Ok(p),
            Err(e) => {
                // Ours, and partial: not worth keeping.
                let _ = std::fs::remove_file(&p);
                tried.push(format!("{}: {e}", d.display()));
            }
        }
    }
    Err(OutputError::NoFallback {
        name: name.to_string(),
        tried: tried.join("; "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_checks_and_atomic_write() {
        let d = std::env::temp_dir().join(format!("rtscope-out-{}", crate::record::new_run_uuid()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("a.json");
        check_writable(&f, "--json").unwrap();
        assert!(!f.exists(), "the check must not create the file");
        write_atomic(&f, b"{}").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"{}");
        assert!(check_writable(&d, "--json").is_err());
        assert!(check_writable(&d.join("no/such/dir.json"), "--json").is_err());
        let leftovers: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty());
        std::fs::remove_dir_all(d).ok();
    }

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "rtscope-out-{name}-{}",
            crate::record::new_run_uuid()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn links_are_followed_and_fifos_written_through() {
        let d = temp("kinds");
        let target = d.join("target.json");
        let link = d.join("link.json");
        std::os::unix::fs::symlink("target.json", &link).unwrap();
        check_writable(&link, "--json").unwrap();
        write_atomic(&link, b"one").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"one");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&link, b"two").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"two");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the file's mode is kept");

        let fifo = d.join("fifo");
        mkfifo(&fifo);
        check_writable(&fifo, "--json").unwrap();
        let f = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read(f).unwrap());
        write_atomic(&fifo, b"through").unwrap();
        assert_eq!(reader.join().unwrap(), b"through");
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );

        let a = d.join("a");
        let b = d.join("b");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", &b).unwrap();
        let e = format!("{:#}", check_writable(&a, "--json").unwrap_err());
        assert!(e.contains("symbolic links"), "{e}");

        let missing = d.join("no/such");
        let e = check_writable(&missing.join("f"), "-o")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("directory {} does not exist", missing.display())),
            "{e}"
        );
        assert!(write_atomic(&missing.join("f"), b"x").is_err());
        assert!(!d.join("no").exists(), "no directory is created");
        std::fs::remove_dir_all(d).ok();
    }

    fn mkfifo(path: &Path) {
        let made = std::process::Command::new("mkfifo").arg(path).status();
        assert!(made.unwrap().success(), "mkfifo {}", path.display());
    }

    /// A FIFO that no process reads is not waited for without bound: a
    /// stop flag set before or during the wait ends it, saying so.
    #[test]
    fn a_fifo_without_reader_is_waited_for_until_stopped() {
        let d = temp("no-reader");
        let fifo = d.join("fifo");
        mkfifo(&fifo);
        let e = write_atomic_or_stop(&fifo, b"x", &AtomicBool::new(true)).unwrap_err();
        assert!(matches!(e, OutputError::Interrupted { .. }), "{e}");
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            s.store(true, Ordering::SeqCst);
        });
        let t = Instant::now();
        let e = write_atomic_or_stop(&fifo, b"x", &stop).unwrap_err();
        setter.join().unwrap();
        assert!(matches!(e, OutputError::Interrupted { .. }), "{e}");
        assert!(t.elapsed() < READER_WAIT, "the stop flag ended the wait");
        assert!(e.to_string().contains(&fifo.display().to_string()), "{e}");
        std::fs::remove_dir_all(d).ok();
    }

    #[test]
    fn a_fallback_never_overwrites() {
        let name = format!("rtscope-{}.json", crate::record::new_run_uuid());
        let p = write_fallback(&name, b"{}").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{}");
        let q = write_fallback(&name, b"[]").unwrap();
        assert_ne!(p, q, "a second file of that name goes elsewhere");
        assert_eq!(std::fs::read(&p).unwrap(), b"{}");
        std::fs::remove_file(p).ok();
        std::fs::remove_file(q).ok();
    }
}
