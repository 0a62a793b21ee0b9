//! Who measures which CPU: one lock file per CPU (`cpu-N.lock`), and one
//! per monitor name (`monitor-HOST-NAME.lock`), each held with an
//! exclusive `flock` for the whole measurement. The kernel drops a flock
//! when its process dies, even on SIGKILL, so a lock never outlives its
//! holder and no stale state is left; the file keeps the holder's pid and
//! command line only to name it in a refusal.
//!
//! The directory is `$RTSCOPE_RUN_DIR`, else `/run/rtscope` for root,
//! else `$XDG_RUNTIME_DIR/rtscope` (a temporary directory without it):
//! measurements by root see each other, as do one user's. Never touches
//! anything but these files; never runs on a measuring thread.

use crate::units::format_cpu_list;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

/// Why the locks could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum CpuLockError {
    #[error(
        "another rtscope measures CPU {cpus}: {holders}; two measurements on one CPU disturb each other and both give wrong numbers: wait for it to end, measure other CPUs (-a), or add --force to measure anyway"
    )]
    CpusBusy { cpus: String, holders: String },
    #[error(
        "monitor '{name}' already runs on this host: {holder}; stop it first (Ctrl-C, kill -TERM, or systemctl stop), or give another --name"
    )]
    MonitorRunning { name: String, holder: String },
    #[error("cannot use the lock file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The directory of the lock files (created when taken).
pub fn lock_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("RTSCOPE_RUN_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(d);
    }
    if crate::sys::sched::euid() == 0 {
        return PathBuf::from("/run/rtscope");
    }
    // $XDG_RUNTIME_DIR when it is this user's (a command run with
    // setpriv or su may inherit another user's).
    let own = |d: &Path| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(d).is_ok_and(|m| m.uid() == crate::sys::sched::euid())
    };
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(d) if own(&d) => d.join("rtscope"),
        _ => std::env::temp_dir().join(format!("rtscope-{}", crate::sys::sched::euid())),
    }
}

/// Locks held until dropped (or until the process ends).
#[derive(Debug, Default)]
pub struct Held {
    _files: Vec<File>,
}

/// What trying one lock found.
enum Try {
    Taken(File),
    /// Held by another process: who (pid and command), as its file says.
    Busy(String),
}

fn try_lock(path: &Path) -> Result<Try, CpuLockError> {
    let io = |source| CpuLockError::Io {
        path: path.into(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let (mut file, taken) = try_flock(path).map_err(io)?;
    if !taken {
        let mut who = String::new();
        let _ = file.read_to_string(&mut who);
        let who = who.trim();
        return Ok(Try::Busy(if who.is_empty() {
            "a process that is starting".into()
        } else {
            who.to_string()
        }));
    }
    // Ours now: say who holds it.
    let me = format!(
        "pid {} (`{}`)",
        std::process::id(),
        crate::redact::own_command_line().join(" ")
    );
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    file.write_all(me.as_bytes()).map_err(io)?;
    Ok(Try::Taken(file))
}

/// Open the lock file `path` (made when missing, never truncated) and
/// try to take its exclusive `flock` without waiting: the file, and
/// whether this process now holds the lock (false: another one does).
/// The one way rtscope's lock files are taken (CPU and monitor locks,
/// tune's journal lock).
pub(crate) fn try_flock(path: &Path) -> std::io::Result<(File, bool)> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    match rustix::fs::flock(
        file.as_fd(),
        rustix::fs::FlockOperation::NonBlockingLockExclusive,
    ) {
        Ok(()) => Ok((file, true)),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok((file, false)),
        Err(e) => Err(e.into()),
    }
}

/// Lock `cpus` in `dir` for a measurement. A CPU another rtscope holds
/// refuses the measurement, naming it, unless `force`: then the free
/// CPUs are locked and a warning names the holders. A lock file that
/// cannot be made is a warning too (the check could not be made), never
/// a refusal.
pub fn lock_cpus(
    dir: &Path,
    cpus: &[usize],
    force: bool,
) -> Result<(Held, Vec<String>), CpuLockError> {
    let mut cpus = cpus.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    let mut held = Held::default();
    let mut busy: Vec<(usize, String)> = Vec::new();
    let mut warnings = Vec::new();
    for &c in &cpus {
        match try_lock(&dir.join(format!("cpu-{c}.lock"))) {
            Ok(Try::Taken(f)) => held._files.push(f),
            Ok(Try::Busy(who)) => busy.push((c, who)),
            // A directory this user may not write: measuring goes on,
            // unchecked, and says so (a CPU already found busy still
            // refuses).
            Err(e) => {
                warnings.push(format!(
                    "not checked whether another rtscope measures these CPUs: {e}"
                ));
                break;
            }
        }
    }
    if busy.is_empty() {
        return Ok((held, warnings));
    }
    let busy_cpus: Vec<usize> = busy.iter().map(|(c, _)| *c).collect();
    let mut holders: Vec<&str> = busy.iter().map(|(_, w)| w.as_str()).collect();
    holders.dedup();
    if !force {
        return Err(CpuLockError::CpusBusy {
            cpus: format_cpu_list(&busy_cpus),
            holders: holders.join("; "),
        });
    }
    warnings.push(format!(
        "--force: measuring CPU {} beside another rtscope ({}): both measurements are disturbed",
        format_cpu_list(&busy_cpus),
        holders.join("; ")
    ));
    Ok((held, warnings))
}

/// Hold the name of a monitor on this host: a second monitor of the same
/// name is refused while the first lives. A lock file that cannot be
/// made is a warning (returned), never a refusal.
pub fn lock_monitor(
    dir: &Path,
    host: &str,
    name: &str,
) -> Result<(Held, Vec<String>), CpuLockError> {
    // Names are letters, digits and `-_.+`; a host name may hold more.
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    match try_lock(&dir.join(format!("monitor-{host}-{name}.lock"))) {
        Ok(Try::Taken(f)) => Ok((Held { _files: vec![f] }, Vec::new())),
        Ok(Try::Busy(holder)) => Err(CpuLockError::MonitorRunning {
            name: name.to_string(),
            holder,
        }),
        Err(e) => Ok((
            Held::default(),
            vec![format!(
                "not checked whether monitor '{name}' already runs: {e}"
            )],
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_or_forced_and_a_release_frees() {
        let dir = std::env::temp_dir().join(format!("rtscope-cpulock-{}", std::process::id()));
        let (first, w) = lock_cpus(&dir, &[1, 0], false).unwrap();
        assert!(w.is_empty());
        // flock locks belong to the open file: a second open in this
        // process conflicts as another process would.
        let e = lock_cpus(&dir, &[1, 2], false).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("CPU 1:"), "{text}");
        assert!(
            text.contains(&format!("pid {}", std::process::id())),
            "{text}"
        );
        assert!(text.contains("--force"), "{text}");
        let (forced, w) = lock_cpus(&dir, &[1, 2], true).unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        drop(forced);
        drop(first);
        let (again, w) = lock_cpus(&dir, &[0, 1, 2], false).unwrap();
        assert!(w.is_empty());
        drop(again);
        let (m, w) = lock_monitor(&dir, "board/1", "m").unwrap();
        assert!(w.is_empty());
        let e = lock_monitor(&dir, "board/1", "m").unwrap_err();
        assert!(e.to_string().contains("monitor 'm' already runs"), "{e}");
        assert!(lock_monitor(&dir, "board/1", "other").is_ok());
        drop(m);
        assert!(lock_monitor(&dir, "board/1", "m").is_ok());
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_busy_cpu_refuses_even_when_a_later_lock_cannot_be_made() {
        let dir = std::env::temp_dir().join(format!("rtscope-cpulock-io-{}", std::process::id()));
        let (first, _) = lock_cpus(&dir, &[0], false).unwrap();
        // CPU 1's lock file cannot be opened: a directory stands there.
        std::fs::create_dir_all(dir.join("cpu-1.lock")).unwrap();
        let e = lock_cpus(&dir, &[0, 1], false).unwrap_err();
        assert!(matches!(e, CpuLockError::CpusBusy { .. }), "{e}");
        let (forced, w) = lock_cpus(&dir, &[0, 1], true).unwrap();
        assert_eq!(w.len(), 2, "the unchecked CPU and the forced one: {w:?}");
        drop(forced);
        drop(first);
        std::fs::remove_dir_all(dir).ok();
    }
}
