//! `tune --revert` as a procedure: take the tuning lock, read the
//! journal, put every value back (apply::revert), and remove the
//! isolation cpusets that no journal describes (left by a lost journal).
//! Also its dry run. Prints nothing: the command layer shows the result.

use super::Env;
use super::apply::{self, Reverted, StatusItem, TuneError};
use super::cpuset::{self, RT_NAME, SYSTEM_NAME};
use super::journal::{self, Journal, JournalError, Lock};
use std::path::PathBuf;

/// Why a revert could not start.
#[derive(Debug, thiserror::Error)]
pub enum RevertError {
    #[error(transparent)]
    Tune(#[from] TuneError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(
        "another rtscope{who} holds the tuning lock: it reverts its own tuning when it ends; stop it with Ctrl-C or kill -TERM, then retry"
    )]
    Locked { who: String },
}

/// What a revert would do, or did.
#[derive(Debug)]
pub enum RevertResult {
    /// No journal: only stray cpusets (what would be or was done with
    /// them, one line each).
    NoJournal {
        journal: PathBuf,
        stray: Vec<String>,
    },
    /// Dry run: what would be restored, in journal order.
    Planned {
        journal: PathBuf,
        items: Vec<StatusItem>,
    },
    /// Done: what was restored and what failed.
    Done {
        journal: Journal,
        stale: bool,
        reverted: Reverted,
    },
}

/// Remove (or, in a dry run, name) rtscope isolation cpusets that no
/// journal describes: tasks go back to the root cpuset.
pub fn stray_cpusets(env: &Env, dry_run: bool) -> Vec<String> {
    let Some(fs) = env.cpuset.as_ref() else {
        return vec![];
    };
    let mut out = Vec::new();
    for name in [RT_NAME, SYSTEM_NAME] {
        let dir = fs.dir(name);
        if !env.root.path(&dir).exists() {
            continue;
        }
        if dry_run {
            out.push(format!("would remove stray cpuset {dir}"));
            continue;
        }
        match cpuset::remove_cgroup(env, fs, &dir) {
            Ok(n) => out.push(format!(
                "removed stray cpuset {dir} ({n} tasks moved to the root)"
            )),
            Err(e) => out.push(format!("WARNING: {e}")),
        }
    }
    out
}

/// What `tune --revert` would do; changes nothing.
pub fn plan(env: &Env) -> Result<RevertResult, RevertError> {
    let path = journal::journal_path();
    Ok(match Journal::load(&path)? {
        None => RevertResult::NoJournal {
            stray: stray_cpusets(env, true),
            journal: path,
        },
        Some(j) => RevertResult::Planned {
            items: apply::status_items(env, &j),
            journal: path,
        },
    })
}

/// Put back everything the journal holds (needs root and the lock).
pub fn revert(env: &Env) -> Result<RevertResult, RevertError> {
    if crate::sys::sched::euid() != 0 {
        return Err(TuneError::NotRoot {
            what: "rtscope tune --revert".into(),
        }
        .into());
    }
    let path = journal::journal_path();
    let Some(_lock) = Lock::try_take(&journal::state_dir())? else {
        let who = Journal::load(&path)
            .ok()
            .flatten()
            .map(|j| format!(" (pid {}, `{}`)", j.header.pid, j.header.command.join(" ")))
            .unwrap_or_default();
        return Err(RevertError::Locked { who });
    };
    let Some(j) = Journal::load(&path)? else {
        return Ok(RevertResult::NoJournal {
            stray: stray_cpusets(env, false),
            journal: path,
        });
    };
    let stale = j.from_earlier_boot();
    let reverted = apply::revert(env, &j);
    Ok(RevertResult::Done {
        journal: j,
        stale,
        reverted,
    })
}
