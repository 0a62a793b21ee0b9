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

use crate::sysinfo::{SysRoot, kernel};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

pub const FORMAT: u32 = 1;
pub const DEFAULT_DIR: &str = "/var/lib/rtscope";
pub const FILE_NAME: &str = "tune.journal";
pub const LOCK_NAME: &str = "tune.lock";

/// The directory holding the journal: `$RTSCOPE_STATE_DIR`, else
/// `/var/lib/rtscope` (it survives a crash and is found by every later
/// rtscope command, whoever runs it).
pub fn state_dir() -> PathBuf {
    std::env::var_os("RTSCOPE_STATE_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_DIR))
}

pub fn journal_path() -> PathBuf {
    state_dir().join(FILE_NAME)
}

/// How long the tuning is meant to last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// `rtscope tune isolate`: stays until `rtscope tune --revert`.
    Persistent,
    /// `measure --isolate`: for one run; its owner reverts it.
    Run,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Persistent => "persistent",
            Mode::Run => "run",
        }
    }
}

/// First line of a journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: u32,
    /// `/proc/sys/kernel/random/boot_id` when the journal was begun.
    pub boot_id: String,
    pub pid: u32,
    /// Start time of `pid` in clock ticks (tells it from a reused id).
    pub pid_start_ticks: u64,
    pub mode: Mode,
    pub command: Vec<String>,
    pub isolated_cpus: Vec<usize>,
    pub housekeeping_cpus: Vec<usize>,
    pub started_unix_ns: u64,
}

/// One change, journaled before it is made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub seq: u32,
    /// Name of the setting (see `tune::SETTINGS`) that knows how to put
    /// it back.
    pub setting: String,
    /// What is changed (a path, an IRQ, a cpuset ...), setting-specific.
    pub key: String,
    pub original: String,
    pub target: String,
    /// Setting-specific data needed to restore (e.g. task affinities).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub extra: serde_json::Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Line {
    Begin(Header),
    Change(Change),
    Result {
        seq: u32,
        ok: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    Applied {
        unix_ns: u64,
    },
}

/// A change and how applying it went (`None`: no result was written, the
/// process died while making it).
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub change: Change,
    pub ok: Option<bool>,
    pub message: Option<String>,
}

/// A journal as read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Journal {
    pub path: PathBuf,
    pub header: Header,
    pub entries: Vec<Entry>,
    /// Every change was made (the `applied` line is there).
    pub applied: bool,
    /// Lines that could not be read (a torn last line after a crash).
    pub unreadable_lines: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot read the tuning journal {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error(
        "the tuning journal {path} has no readable header: it was not written by rtscope, or is damaged; move it away to continue"
    )]
    NoHeader { path: PathBuf },
    #[error(
        "the tuning journal {path} is of format {found}, newer than this rtscope reads ({FORMAT}): revert with the rtscope that wrote it"
    )]
    Newer { path: PathBuf, found: u32 },
    #[error("cannot write the tuning journal {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot create the rtscope state directory {path}: {source}")]
    Dir { path: PathBuf, source: io::Error },
}

impl Journal {
    /// Read the journal at `path`; `Ok(None)` when there is none.
    pub fn load(path: &Path) -> Result<Option<Journal>, JournalError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(JournalError::Read {
                    path: path.into(),
                    source,
                });
            }
        };
        Journal::parse(&text, path).map(Some)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Journal, JournalError> {
        let mut header = None;
        let mut entries: Vec<Entry> = Vec::new();
        let mut applied = false;
        let mut unreadable_lines = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<Line>(line) {
                Ok(Line::Begin(h)) => {
                    if h.format > FORMAT {
                        return Err(JournalError::Newer {
                            path: path.into(),
                            found: h.format,
                        });
                    }
                    header = Some(h)
                }
                Ok(Line::Change(c)) => entries.push(Entry {
                    change: c,
                    ok: None,
                    message: None,
                }),
                Ok(Line::Result { seq, ok, message }) => {
                    if let Some(e) = entries.iter_mut().rev().find(|e| e.change.seq == seq) {
                        e.ok = Some(ok);
                        e.message = message;
                    }
                }
                Ok(Line::Applied { .. }) => applied = true,
                Err(_) => unreadable_lines += 1,
            }
        }
        let header = header.ok_or_else(|| JournalError::NoHeader { path: path.into() })?;
        Ok(Journal {
            path: path.into(),
            header,
            entries,
            applied,
            unreadable_lines,
        })
    }

    /// Names of settings with at least one change made, in order.
    pub fn settings_applied(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for e in &self.entries {
            if e.ok == Some(true) && !names.contains(&e.change.setting) {
                names.push(e.change.setting.clone());
            }
        }
        names
    }

    /// The journal describes an earlier boot: a reboot undid its changes.
    pub fn from_earlier_boot(&self) -> bool {
        match kernel::boot_id(&SysRoot::host()) {
            Some(now) => now != self.header.boot_id,
            None => false,
        }
    }
}

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
    /// Take the lock without waiting; `Ok(None)` when another process
    /// holds it.
    pub fn try_take(dir: &Path) -> Result<Option<Lock>, JournalError> {
        std::fs::create_dir_all(dir).map_err(|source| JournalError::Dir {
            path: dir.into(),
            source,
        })?;
        let path = dir.join(LOCK_NAME);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|source| JournalError::Write { path, source })?;
        match rustix::fs::flock(
            file.as_fd(),
            rustix::fs::FlockOperation::NonBlockingLockExclusive,
        ) {
            Ok(()) => Ok(Some(Lock { _file: file })),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
            Err(e) => Err(JournalError::Write {
                path: dir.join(LOCK_NAME),
                source: e.into(),
            }),
        }
    }

    /// Is the lock in `dir` held by some process? (Read-only probe: false
    /// when there is no lock file.)
    pub fn is_held(dir: &Path) -> bool {
        let Ok(file) = OpenOptions::new().read(true).open(dir.join(LOCK_NAME)) else {
            return false;
        };
        match rustix::fs::flock(
            file.as_fd(),
            rustix::fs::FlockOperation::NonBlockingLockShared,
        ) {
            Ok(()) => {
                let _ = rustix::fs::flock(file.as_fd(), rustix::fs::FlockOperation::Unlock);
                false
            }
            Err(_) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
