//! Runs copied from a board's store into the local one, keyed by uuid as
//! `push` copies them ([`crate::store::push::receive`]): a run already
//! here whole is left alone, one cut short is completed, a running one's
//! last checkpoint is copied and completed later. Characterizations are
//! copied once they have ended. The board's side is `rtscope __export`
//! (a list, then each run as one JSON line); nothing on the board is
//! changed by a copy.

use super::{Remote, RemoteError};
use crate::characterization::Characterization;
use crate::record::RunRecord;
use crate::store::push::{Pushed, receive};
use crate::store::{RunState, Store, StoreError};
use std::path::PathBuf;
use std::time::Duration;

/// A run of the board's store, as `__export --list` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub uuid: String,
    pub state: RunState,
    pub samples: u64,
    /// A characterization (`characterize`), not a latency run.
    pub characterization: bool,
    /// When it started, by the board's clock.
    pub started_at_unix_ns: u64,
}

impl Listed {
    /// One line of `__export --list`: `UUID STATE SAMPLES KIND STARTED`.
    pub fn line(&self) -> String {
        let kind = if self.characterization {
            "characterization"
        } else {
            "run"
        };
        format!(
            "{} {} {} {kind} {}",
            self.uuid,
            self.state.name(),
            self.samples,
            self.started_at_unix_ns
        )
    }

    pub fn parse(line: &str) -> Option<Listed> {
        let mut w = line.split_whitespace();
        let (uuid, state, samples) = (w.next()?, w.next()?, w.next()?);
        let characterization = match w.next()? {
            "run" => false,
            "characterization" => true,
            _ => return None,
        };
        Some(Listed {
            uuid: uuid.to_string(),
            state: RunState::parse(state)?,
            samples: samples.parse().ok()?,
            characterization,
            started_at_unix_ns: w.next()?.parse().ok()?,
        })
    }
}

/// One run as `__export UUID` writes it: a latency run's record, or a
/// characterization.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Exported {
    pub uuid: String,
    pub state: String,
    pub samples: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<RunRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub characterization: Option<Characterization>,
}

/// The runs of the board's store (all, or those of `uuids`).
pub fn list(remote: &Remote, uuids: &[&str]) -> Result<Vec<Listed>, RemoteError> {
    let words: Vec<String> = uuids.iter().map(|u| super::quote(u)).collect();
    let ran = remote.exec(
        &format!("{} __export --list {}", remote.rtscope(), words.join(" ")),
        b"",
        Duration::from_secs(120),
        "list the runs",
    )?;
    Ok(ran
        .stdout_text()
        .lines()
        .filter_map(Listed::parse)
        .collect())
}

/// Copy `runs` of the board into `local`; what happened to each.
pub fn copy(
    remote: &Remote,
    local: &mut Store,
    runs: &[Listed],
) -> Result<Vec<(Listed, Pushed)>, RemoteError> {
    let mut done = Vec::new();
    for run in runs {
        let pushed = if run.characterization {
            receive_characterization(remote, local, run)?
        } else {
            receive(local, &run.uuid, run.state, run.samples, || {
                export(remote, &run.uuid).and_then(|e| {
                    e.record.ok_or_else(|| {
                        RemoteError::Board(format!("run {} came without its record", run.uuid))
                    })
                })
            })?
        };
        done.push((run.clone(), pushed));
    }
    Ok(done)
}

/// Copy a characterization that has ended, once.
fn receive_characterization(
    remote: &Remote,
    local: &mut Store,
    run: &Listed,
) -> Result<Pushed, RemoteError> {
    if let Some(id) = local.find_uuid(&run.uuid)? {
        return Ok(Pushed::AlreadyThere { id });
    }
    if run.state == RunState::Running {
        return Ok(Pushed::Running);
    }
    let c = export(remote, &run.uuid)?.characterization.ok_or_else(|| {
        RemoteError::Board(format!(
            "characterization {} came without its results",
            run.uuid
        ))
    })?;
    let id = local.begin_characterization(&c)?;
    local.save_characterization(id, &c, run.state)?;
    Ok(Pushed::Copied { id })
}

/// Copy the run `uuid` (if the board holds it): its state there and what
/// happened here.
pub fn copy_one(
    remote: &Remote,
    local: &mut Store,
    uuid: &str,
) -> Result<Option<(Listed, Pushed)>, RemoteError> {
    let runs = list(remote, &[uuid])?;
    Ok(copy(remote, local, &runs)?.into_iter().next())
}

/// Run `uuid` of the board, whole.
fn export(remote: &Remote, uuid: &str) -> Result<Exported, RemoteError> {
    let ran = remote.link.run(
        &format!("{} __export {}", remote.rtscope(), super::quote(uuid)),
        b"",
        Duration::from_secs(600),
    )?;
    if ran.link_failed() {
        return Err(RemoteError::link(&remote.board.name, &ran));
    }
    let text = ran.stdout_text();
    let line = text.lines().next().filter(|_| ran.ok()).ok_or_else(|| {
        RemoteError::Board(format!(
            "board {} gave no record for run {uuid}: {}",
            remote.board.name,
            ran.last_error()
        ))
    })?;
    serde_json::from_str(line).map_err(|e| {
        RemoteError::Board(format!(
            "the record of run {uuid} from board {} is not readable ({e}): are both rtscopes the same version?",
            remote.board.name
        ))
    })
}

/// Why the board's side could not export its runs.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A uuid asked for that the store does not hold.
    #[error("no run {uuid} in {}", .store.display())]
    NoRun { uuid: String, store: PathBuf },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("serializing run {uuid}")]
    Serialize {
        uuid: String,
        source: serde_json::Error,
    },
}

/// The board's side: the runs of `store` as `--list` lines, or each run
/// of `uuids` as one JSON line.
pub fn export_here(
    store: &Store,
    list_only: bool,
    uuids: &[String],
) -> Result<String, ExportError> {
    let mut out = String::new();
    if list_only {
        // Asked for by uuid (a run followed): only those rows are read.
        let rows = if uuids.is_empty() {
            store.list()?
        } else {
            let mut rows = Vec::new();
            for uuid in uuids {
                if let Some(id) = store.find_uuid(uuid)? {
                    rows.extend(store.row(id)?);
                }
            }
            rows
        };
        for row in rows {
            let l = Listed {
                characterization: store.is_characterization(row.id)?,
                started_at_unix_ns: row.started_at_unix_ns,
                uuid: row.uuid,
                state: row.state,
                samples: row.samples,
            };
            out.push_str(&l.line());
            out.push('\n');
        }
        return Ok(out);
    }
    let no_run = |uuid: &str| ExportError::NoRun {
        uuid: uuid.to_string(),
        store: store.path().to_path_buf(),
    };
    for uuid in uuids {
        let id = store.find_uuid(uuid)?.ok_or_else(|| no_run(uuid))?;
        let row = store.row(id)?.ok_or_else(|| no_run(uuid))?;
        let c = store.is_characterization(id)?;
        let e = Exported {
            uuid: row.uuid.clone(),
            state: row.state.name().to_string(),
            samples: row.samples,
            record: if c { None } else { Some(store.load(id)?) },
            characterization: if c {
                Some(store.load_characterization(id)?)
            } else {
                None
            },
        };
        let line = serde_json::to_string(&e).map_err(|source| ExportError::Serialize {
            uuid: uuid.clone(),
            source,
        })?;
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_util::TempStore;

    #[test]
    fn a_copy_keeps_the_boards_error_and_the_local_stores_apart() {
        let t = TempStore::new("sync-errors");
        let mut local = Store::open(&t.db()).unwrap();
        let uuid = crate::record::new_run_uuid();
        // The board's failure to send the record stays the board's.
        let e = receive(&mut local, &uuid, RunState::Complete, 1, || {
            Err(RemoteError::Board("run came without its record".into()))
        })
        .unwrap_err();
        assert!(matches!(e, RemoteError::Board(_)), "{e:?}");
        // The local store's refusal is the local store's, typed.
        let mut rec = crate::record::synthetic(&[vec![1000]]);
        rec.run_uuid = uuid.clone();
        rec.schema = "not-rtscope".into();
        let e = receive(&mut local, &uuid, RunState::Complete, 1, || Ok(rec)).unwrap_err();
        assert!(
            matches!(e, RemoteError::Store(StoreError::InvalidRecord(_))),
            "{e:?}"
        );
    }

    #[test]
    fn list_lines_round_trip() {
        let l = Listed {
            uuid: "ab12".into(),
            state: RunState::Interrupted,
            samples: 42,
            characterization: true,
            started_at_unix_ns: 7,
        };
        assert_eq!(Listed::parse(&l.line()), Some(l));
        assert_eq!(Listed::parse("ab12 bogus 1 run 7"), None);
        assert_eq!(Listed::parse("ab12 complete 1 run"), None);
        assert_eq!(
            Listed::parse("ab12 complete 1 run 7").map(|l| l.characterization),
            Some(false)
        );
    }
}
