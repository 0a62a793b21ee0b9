//! The on-disk tuning journal: every change `tune` makes is written here,
//! with the original value, and flushed to disk (fsync) BEFORE the system
//! is touched. A revert (even by another process after a crash or
//! SIGKILL) reads it and puts every value back in reverse order.
//!
//! Format: JSON Lines in `$RTSCOPE_STATE_DIR/tune.journal` (default
//! `/var/lib/rtscope/tune.journal`): a `begin` header, then per change a
//! `change` line (written and synced before the change) and a `result`
//! line, then `applied` once all is done. A torn last line (a crash while
//! writing) is ignored: its change was never started. The journal is
//! removed once everything is restored; a journal from an earlier boot
//! describes changes the reboot already undid.
//!
//! An exclusive `flock` on `tune.lock` is held by whoever applies, runs
//! with, or reverts a tuning, so two rtscope processes never tune at once
//! and a dead owner is told apart from a live one. This file never
//! touches system settings.

pub use crate::sysinfo::journal::*;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Appends to a journal, syncing every line to disk before returning.
pub struct Writer {
    file: File,
    path: PathBuf,
    next_seq: u32,
}

impl Writer {
    /// Start a new journal at `path` (its directory is created). Fails if
    /// one exists: a tuning is already recorded there.
    pub fn create(path: &Path, header: &Header) -> Result<Writer, JournalError> {
        let werr = |source| JournalError::Write {
            path: path.into(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| JournalError::Dir {
                path: dir.into(),
                source,
            })?;
        }
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(path)
            .map_err(werr)?;
        let mut w = Writer {
            file,
            path: path.into(),
            next_seq: 1,
        };
        w.line(&Line::Begin(header.clone()))?;
        if let Some(dir) = path.parent() {
            sync_dir(dir);
        }
        Ok(w)
    }

    fn line(&mut self, line: &Line) -> Result<(), JournalError> {
        let mut text = serde_json::to_string(line).map_err(|e| JournalError::Write {
            path: self.path.clone(),
            source: io::Error::other(e),
        })?;
        text.push('\n');
        self.file
            .write_all(text.as_bytes())
            .and_then(|_| self.file.sync_data())
            .map_err(|source| JournalError::Write {
                path: self.path.clone(),
                source,
            })
    }

    /// Record a change before it is made; returns it with its number.
    pub fn change(&mut self, mut change: Change) -> Result<Change, JournalError> {
        change.seq = self.next_seq;
        self.next_seq += 1;
        self.line(&Line::Change(change.clone()))?;
        Ok(change)
    }

    pub fn result(
        &mut self,
        seq: u32,
        ok: bool,
        message: Option<String>,
    ) -> Result<(), JournalError> {
        self.line(&Line::Result { seq, ok, message })
    }

    pub fn applied(&mut self) -> Result<(), JournalError> {
        self.line(&Line::Applied {
            unix_ns: crate::sys::clock::unix_now_ns(),
        })
    }
}

/// Replace the journal by one holding only `keep` (changes that could not
/// be restored), atomically; remove it when `keep` is empty.
pub fn rewrite(journal: &Journal, keep: &[Entry]) -> Result<(), JournalError> {
    let werr = |source| JournalError::Write {
        path: journal.path.clone(),
        source,
    };
    if keep.is_empty() {
        match std::fs::remove_file(&journal.path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(werr(e)),
        }
        if let Some(dir) = journal.path.parent() {
            sync_dir(dir);
        }
        return Ok(());
    }
    let tmp = journal.path.with_extension("journal.tmp");
    let mut text = String::new();
    let mut push = |l: &Line| {
        text.push_str(&serde_json::to_string(l).unwrap_or_default());
        text.push('\n');
    };
    push(&Line::Begin(journal.header.clone()));
    for e in keep {
        push(&Line::Change(e.change.clone()));
        if let Some(ok) = e.ok {
            push(&Line::Result {
                seq: e.change.seq,
                ok,
                message: e.message.clone(),
            });
        }
    }
    if journal.applied {
        push(&Line::Applied {
            unix_ns: crate::sys::clock::unix_now_ns(),
        });
    }
    let mut f = File::create(&tmp).map_err(werr)?;
    f.write_all(text.as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(werr)?;
    std::fs::rename(&tmp, &journal.path).map_err(werr)?;
    if let Some(dir) = journal.path.parent() {
        sync_dir(dir);
    }
    Ok(())
}

/// The exclusive tuning lock (`flock` on `tune.lock`), released when
/// dropped or when the process dies.
pub struct Lock {
    _file: File,
}

impl Lock {
    /// Is the lock in `dir` held by some process? (Read-only probe.)
    pub fn is_held(dir: &Path) -> bool {
        lock_held(dir)
    }

    /// Take the lock without waiting; `Ok(None)` when another process
    /// holds it.
    pub fn try_take(dir: &Path) -> Result<Option<Lock>, JournalError> {
        std::fs::create_dir_all(dir).map_err(|source| JournalError::Dir {
            path: dir.into(),
            source,
        })?;
        let path = dir.join(LOCK_NAME);
        let (file, taken) = crate::cpulock::try_flock(&path)
            .map_err(|source| JournalError::Write { path, source })?;
        Ok(taken.then_some(Lock { _file: file }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::{SysRoot, kernel};

    fn header() -> Header {
        Header {
            format: FORMAT,
            boot_id: kernel::boot_id(&SysRoot::host()).unwrap_or_default(),
            pid: 1,
            pid_start_ticks: 1,
            mode: Mode::Persistent,
            command: vec!["rtscope".into(), "tune".into()],
            isolated_cpus: vec![1],
            housekeeping_cpus: vec![0],
            started_unix_ns: 5,
        }
    }

    fn change(setting: &str) -> Change {
        Change {
            seq: 0,
            setting: setting.into(),
            key: "k".into(),
            original: "1".into(),
            target: "0".into(),
            extra: serde_json::Value::Null,
        }
    }

    #[test]
    fn write_read_rewrite_and_torn_lines() {
        let dir =
            std::env::temp_dir().join(format!("rtscope-journal-{}", crate::record::new_run_uuid()));
        let path = dir.join(FILE_NAME);
        let mut w = Writer::create(&path, &header()).unwrap();
        assert!(
            Writer::create(&path, &header()).is_err(),
            "a second journal is refused"
        );
        let a = w.change(change("thp")).unwrap();
        w.result(a.seq, true, None).unwrap();
        let b = w.change(change("irq-affinity")).unwrap();
        w.result(b.seq, false, Some("EPERM".into())).unwrap();
        let c = w.change(change("governor")).unwrap();
        drop(w);
        // A crash while writing leaves half a line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"t\":\"change\",\"seq\":4,\"sett").unwrap();
        let j = Journal::load(&path).unwrap().unwrap();
        assert_eq!(j.entries.len(), 3);
        assert_eq!(j.entries[0].ok, Some(true));
        assert_eq!(j.entries[1].ok, Some(false));
        assert_eq!(j.entries[2].change.seq, c.seq);
        assert_eq!(j.entries[2].ok, None, "no result: died while changing");
        assert!(!j.applied);
        assert_eq!(j.unreadable_lines, 1);
        assert_eq!(j.settings_applied(), vec!["thp".to_string()]);
        assert!(!j.from_earlier_boot());
        rewrite(&j, &j.entries[2..]).unwrap();
        let k = Journal::load(&path).unwrap().unwrap();
        assert_eq!(k.entries.len(), 1);
        assert_eq!(k.entries[0].change.setting, "governor");
        rewrite(&k, &[]).unwrap();
        assert!(Journal::load(&path).unwrap().is_none());
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn lock_is_exclusive() {
        let dir =
            std::env::temp_dir().join(format!("rtscope-lock-{}", crate::record::new_run_uuid()));
        assert!(!Lock::is_held(&dir));
        let l = Lock::try_take(&dir).unwrap().unwrap();
        assert!(Lock::is_held(&dir));
        assert!(Lock::try_take(&dir).unwrap().is_none());
        drop(l);
        assert!(!Lock::is_held(&dir));
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn damaged_or_newer_journals_are_refused() {
        let p = Path::new("/x/tune.journal");
        assert!(matches!(
            Journal::parse("hello\n", p),
            Err(JournalError::NoHeader { .. })
        ));
        let mut h = header();
        h.format = FORMAT + 1;
        let text = serde_json::to_string(&Line::Begin(h)).unwrap();
        assert!(matches!(
            Journal::parse(&text, p),
            Err(JournalError::Newer { .. })
        ));
    }
}
