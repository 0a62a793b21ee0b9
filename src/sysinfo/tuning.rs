//! The tuning rtscope itself applied, as its journal records it: which
//! CPUs are isolated, by which command, which settings were changed, and
//! whether the owner is alive. Read-only (the journal belongs to `tune`).

use super::SysRoot;
use super::journal::{self, Journal, Mode};
use super::process;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TuningState {
    /// Applied and meant to stay (`rtscope tune isolate`).
    Applied,
    /// Being applied, or held for a run, by a live rtscope process.
    InUse,
    /// Its owner died before reverting (crash, SIGKILL): changes are left.
    Abandoned,
    /// Written before the last reboot: the reboot undid its changes.
    Stale,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tuning {
    pub state: TuningState,
    pub mode: Mode,
    pub command: Vec<String>,
    pub pid: u32,
    pub isolated_cpus: Vec<usize>,
    pub housekeeping_cpus: Vec<usize>,
    pub settings: Vec<String>,
    pub changes: usize,
    pub started_unix_ns: u64,
    pub journal: String,
}

/// Where the journal is read from below `root`.
pub fn journal_path(root: &SysRoot) -> std::path::PathBuf {
    if root.is_host() {
        journal::journal_path()
    } else {
        root.path(&format!("{}/{}", journal::DEFAULT_DIR, journal::FILE_NAME))
    }
}

/// The tuning recorded in the journal; `None` without a (readable) one.
pub fn tuning(root: &SysRoot) -> Option<Tuning> {
    let path = journal_path(root);
    let j: Journal = Journal::load(&path).ok()??;
    let owner_alive = process::same_task(root, j.header.pid, j.header.pid_start_ticks);
    let lock_held = root.is_host() && path.parent().is_some_and(journal::lock_held);
    let state = if root.is_host() && j.from_earlier_boot() {
        TuningState::Stale
    } else if lock_held || (!root.is_host() && owner_alive) {
        TuningState::InUse
    } else if j.applied && j.header.mode == Mode::Persistent {
        TuningState::Applied
    } else {
        TuningState::Abandoned
    };
    Some(Tuning {
        state,
        mode: j.header.mode,
        command: j.header.command.clone(),
        pid: j.header.pid,
        isolated_cpus: j.header.isolated_cpus.clone(),
        housekeeping_cpus: j.header.housekeeping_cpus.clone(),
        settings: j.settings_applied(),
        changes: j.entries.len(),
        started_unix_ns: j.header.started_unix_ns,
        journal: path.display().to_string(),
    })
}
