//! The trace journal: what a tracing rtscope created (its tracefs
//! instance, and the tracefs mount when it made it), written and synced
//! BEFORE the mount or the instance exist, so that after a SIGKILL the
//! next rtscope command removes them ([`cleanup_stale`]). One file per
//! process, `trace-PID.json` in the state directory of the tuning
//! journal (`$RTSCOPE_STATE_DIR`, default `/var/lib/rtscope`); the owner
//! is told alive or gone by `sysinfo::owner` (boot id, pid, start time).

use super::tracefs;
use crate::sysinfo::owner::{Liveness, Owner};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub const FORMAT: u32 = 1;
const PREFIX: &str = "trace-";
const SUFFIX: &str = ".json";

/// What one tracing process created.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub format: u32,
    pub host: String,
    pub boot_id: String,
    pub pid: u32,
    pub start_ticks: u64,
    /// The tracefs mount point used.
    pub tracefs: PathBuf,
    /// rtscope mounts (or mounted) it, and unmounts it at the end.
    pub mounted_by_us: bool,
    /// The instance directory it creates (or created).
    pub instance: PathBuf,
}

impl Entry {
    pub fn for_this_process(tracefs: &Path, mounted_by_us: bool, instance: &Path) -> Entry {
        let o = Owner::this_process();
        Entry {
            format: FORMAT,
            host: o.host,
            boot_id: o.boot_id,
            pid: o.pid,
            start_ticks: o.start_ticks,
            tracefs: tracefs.into(),
            mounted_by_us,
            instance: instance.into(),
        }
    }

    fn owner(&self) -> Owner {
        Owner {
            host: self.host.clone(),
            boot_id: self.boot_id.clone(),
            pid: self.pid,
            start_ticks: self.start_ticks,
        }
    }
}

/// The journal file of process `pid` in `dir`.
pub fn path_in(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("{PREFIX}{pid}{SUFFIX}"))
}

/// Write `entry` atomically and durably (temporary file, fsync, rename,
/// fsync of the directory).
pub fn write(path: &Path, entry: &Entry) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string(entry).map_err(io::Error::other)?;
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent()
        && let Ok(d) = std::fs::File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

pub fn remove(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Other rtscope instances (of live processes or not) in `instances`.
fn other_instances(instances: &Path, ours: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(instances)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p != ours)
                .collect()
        })
        .unwrap_or_default()
}

/// What could not be undone, and how to undo it by hand.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error(
        "cannot remove the trace instance {}: {error}; remove it with `rmdir {}`",
        .dir.display(),
        .dir.display()
    )]
    Instance { dir: PathBuf, error: io::Error },
    #[error(
        "cannot unmount tracefs at {}: {error}; unmount it with `umount {}`",
        .dir.display(),
        .dir.display()
    )]
    Unmount { dir: PathBuf, error: io::Error },
}

/// Remove what `entry` created: its instance, then the mount when it made
/// it and no other instance lives in it. Returns what was done, or the
/// first failure.
pub fn undo(entry: &Entry) -> Result<Vec<String>, UndoError> {
    let mut done = Vec::new();
    if entry.instance.is_dir() {
        // rmdir is refused (EBUSY) while a file of the instance is open.
        let mut last = None;
        for _ in 0..50 {
            match std::fs::remove_dir(&entry.instance) {
                Ok(()) => {
                    last = None;
                    break;
                }
                Err(e) if e.raw_os_error() == Some(crate::sys::errno::EBUSY) => {
                    last = Some(e);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => {
                    last = Some(e);
                    break;
                }
            }
        }
        if let Some(error) = last {
            return Err(UndoError::Instance {
                dir: entry.instance.clone(),
                error,
            });
        }
        done.push(format!(
            "removed the trace instance {}",
            entry.instance.display()
        ));
    }
    if entry.mounted_by_us && tracefs::is_mounted_at(&entry.tracefs) {
        let others = other_instances(&entry.tracefs.join("instances"), &entry.instance);
        if !others.is_empty() {
            done.push(format!(
                "left tracefs mounted at {}: other trace instances use it ({})",
                entry.tracefs.display(),
                others[0].display()
            ));
        } else {
            tracefs::unmount(&entry.tracefs).map_err(|error| UndoError::Unmount {
                dir: entry.tracefs.clone(),
                error,
            })?;
            done.push(format!("unmounted tracefs at {}", entry.tracefs.display()));
        }
    }
    Ok(done)
}

/// Clean up after tracing rtscope processes that died (SIGKILL, crash):
/// remove their instances, unmount what they mounted, drop their
/// journals. Journals of live processes are left alone. Returns one
/// message per process cleaned up or not cleanable, for the user.
pub fn cleanup_stale() -> Vec<String> {
    cleanup_stale_in(&crate::tune::journal::state_dir())
}

pub fn cleanup_stale_in(dir: &Path) -> Vec<String> {
    let mut msgs = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return msgs;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !(name.starts_with(PREFIX) && name.ends_with(SUFFIX)) {
            continue;
        }
        let path = e.path();
        let entry: Entry = match std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
        {
            Some(en) => en,
            None => {
                msgs.push(format!(
                    "warning: the trace journal {} cannot be read: check for a tracefs instance `rtscope-*` left behind, then remove the file",
                    path.display()
                ));
                continue;
            }
        };
        let owner = entry.owner();
        match owner.liveness() {
            Liveness::Alive | Liveness::Unknown => continue,
            Liveness::Gone => {}
        }
        if owner.boot_id != Owner::this_process().boot_id {
            // A reboot removed the instance and the mount.
            let _ = remove(&path);
            continue;
        }
        match undo(&entry) {
            Ok(done) => {
                let _ = remove(&path);
                if !done.is_empty() {
                    msgs.push(format!(
                        "note: rtscope (pid {}) ended while tracing: {}",
                        entry.pid,
                        done.join(", ")
                    ));
                }
            }
            Err(e) => msgs.push(format!(
                "warning: rtscope (pid {}) ended while tracing and its tracing cannot be undone: {e}",
                entry.pid
            )),
        }
    }
    msgs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_owners_leftovers_are_removed_and_a_live_ones_kept() {
        let dir = std::env::temp_dir().join(format!(
            "rtscope-trace-journal-{}",
            crate::record::new_run_uuid()
        ));
        let fake_instance = dir.join("instances/rtscope-1");
        std::fs::create_dir_all(&fake_instance).unwrap();
        // This process: alive, left alone.
        let mine = Entry::for_this_process(&dir, false, &fake_instance);
        write(&path_in(&dir, mine.pid), &mine).unwrap();
        // A dead one (same pid, another start time).
        let dead = Entry {
            pid: mine.pid + 1_000_000,
            ..mine.clone()
        };
        write(&path_in(&dir, dead.pid), &dead).unwrap();
        let msgs = cleanup_stale_in(&dir);
        assert_eq!(msgs.len(), 1, "{msgs:?}");
        assert!(msgs[0].contains("removed the trace instance"), "{msgs:?}");
        assert!(!fake_instance.exists());
        assert!(!path_in(&dir, dead.pid).exists());
        assert!(path_in(&dir, mine.pid).exists());
        std::fs::write(path_in(&dir, 7), "{torn").unwrap();
        assert!(cleanup_stale_in(&dir)[0].contains("cannot be read"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
