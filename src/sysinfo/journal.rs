//! The format of `tune`'s on-disk journal and its reading: where it
//! lives, its lines, a journal as read back, and whether its lock is held.
//! Read-only: writing, rewriting and taking the lock belong to
//! `tune::journal`. Doctor, the fingerprint and `tune` read it from here.
//!
//! Format: JSON Lines in `$RTSCOPE_STATE_DIR/tune.journal` (default
//! `/var/lib/rtscope/tune.journal`): a `begin` header, then per change a
//! `change` line (written and synced before the change) and a `result`
//! line, then `applied` once all is done. A torn last line (a crash while
//! writing) is ignored: its change was never started.

use super::{SysRoot, kernel};
use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::io;
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

/// Is the tuning lock in `dir` held by some process? (Read-only probe: false
/// when there is no lock file.)
pub fn lock_held(dir: &Path) -> bool {
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
