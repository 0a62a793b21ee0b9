//! Finding runs by reference: a run in the store (its id as `rtscope runs`
//! lists it, `last` / `latest`, or the start of its uuid) or a run record
//! file (`*.json`). Every command that takes `RUN…` resolves it here; the
//! store is `db` (`--db`) when given, else `RTSCOPE_DB`, else the default
//! ([`store::locate`]). `stop` (set by a signal) ends the wait for a
//! PostgreSQL store's server.

use crate::characterization::{self, Characterization};
use crate::record::{InvalidRecord, ReadError, RunRecord};
use crate::store::{self, Store, StoreError};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use thiserror::Error;

/// Why a reference gives no run (or characterization) to work on.
#[derive(Debug, Error)]
pub enum RunRefError {
    /// Neither a stored run's reference nor a file.
    #[error(
        "no run '{0}': give a stored run's id (see rtscope runs), last, or the path of a run record (.json)"
    )]
    NoRun(String),
    /// A run reference that names a stored characterization.
    #[error(
        "run {0} is a characterization (rtscope characterize): `rtscope runs show {0}`, `rtscope report {0} -o FILE` and `rtscope compare {0} OTHER` show it"
    )]
    IsCharacterization(i64),
    /// Characterizations and runs given together.
    #[error(
        "'{0}' is not a characterization, but other references are: characterizations are reported and compared among themselves"
    )]
    Mixed(String),
    #[error("cannot read {}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file that is not JSON in a run record's layout.
    #[error("{} is not an rtscope run record: line {line}: {message}", .path.display())]
    NotRecord {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// A run record file whose parts disagree.
    #[error("{}: {why}", .path.display())]
    InvalidRecord { path: PathBuf, why: InvalidRecord },
    /// A characterization file that cannot be read.
    #[error("{}: {why}", .path.display())]
    Characterization {
        path: PathBuf,
        why: characterization::ReadError,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

type Result<T, E = RunRefError> = std::result::Result<T, E>;

/// Where a run was loaded from, for messages: `run 3`, or `the run
/// record FILE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    Stored { id: i64 },
    File(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Stored { id } => write!(f, "run {id}"),
            Origin::File(p) => write!(f, "the run record {}", p.display()),
        }
    }
}

/// True when `reference` can only mean a stored run (a number, `last`).
fn is_store_only(reference: &str) -> bool {
    reference == "last"
        || reference == "latest"
        || (!reference.is_empty() && reference.bytes().all(|b| b.is_ascii_digit()))
}

/// True when `reference` may be the start of a run's uuid.
fn may_be_uuid(reference: &str) -> bool {
    (6..=32).contains(&reference.len()) && reference.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Load the run that `reference` names.
pub fn load(db: Option<&Path>, reference: &str, stop: &AtomicBool) -> Result<RunRecord> {
    load_with_origin(db, reference, stop).map(|(rec, _)| rec)
}

/// Load the run that `reference` names, and say where it came from.
pub fn load_with_origin(
    db: Option<&Path>,
    reference: &str,
    stop: &AtomicBool,
) -> Result<(RunRecord, Origin)> {
    let path = Path::new(reference);
    let stored = is_store_only(reference) || may_be_uuid(reference);
    let from_file = || load_file(path).map(|rec| (rec, Origin::File(path.to_path_buf())));
    if path.is_file() && !is_store_only(reference) {
        return from_file();
    }
    if !stored {
        return Err(RunRefError::NoRun(reference.to_string()));
    }
    let from_store = || -> Result<(RunRecord, Origin)> {
        let s = open_store(db, reference, stop)?;
        let id = s.resolve(reference)?;
        if s.is_characterization(id)? {
            return Err(RunRefError::IsCharacterization(id));
        }
        Ok((s.load(id)?, Origin::Stored { id }))
    };
    match from_store() {
        Ok(found) => Ok(found),
        // A file called "3" loses to run 3, but is still found when there
        // is no run 3.
        Err(e) if path.is_file() => from_file().map_err(|_| e),
        Err(e) => Err(e),
    }
}

/// Load every run of `references`, named for reports and figures.
pub fn load_named(
    db: Option<&Path>,
    references: &[String],
    stop: &AtomicBool,
) -> Result<Vec<crate::report::NamedRun>> {
    let loaded = references
        .iter()
        .map(|r| Ok((r.clone(), load(db, r, stop)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(crate::report::name_runs(loaded))
}

/// The characterization `reference` names: a stored one (by id, `last`
/// or uuid prefix) or a file written by `characterize --json`. `None`
/// when it names something else (a run, a run record, nothing: the
/// caller's own loading reports that).
pub fn load_characterization(
    db: Option<&Path>,
    reference: &str,
    stop: &AtomicBool,
) -> Result<Option<Characterization>> {
    let path = Path::new(reference);
    if path.is_file() && !is_store_only(reference) {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Ok(None);
        };
        let looks = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("schema").and_then(|s| s.as_str()).map(str::to_string))
            .is_some_and(|s| s.starts_with("rtscope-characterization/"));
        if !looks {
            return Ok(None);
        }
        return Characterization::from_json(&text).map(Some).map_err(|why| {
            RunRefError::Characterization {
                path: path.to_path_buf(),
                why,
            }
        });
    }
    if !(is_store_only(reference) || may_be_uuid(reference)) {
        return Ok(None);
    }
    let Some(s) = Store::open_existing_or_stop(&store::locate(db)?, stop)? else {
        return Ok(None);
    };
    let Ok(id) = s.resolve(reference) else {
        return Ok(None);
    };
    if !s.is_characterization(id)? {
        return Ok(None);
    }
    Ok(Some(s.load_characterization(id)?))
}

/// The characterizations `references` name, when they all are ones;
/// `None` when none is; an error when they are mixed with runs.
pub fn load_characterizations(
    db: Option<&Path>,
    references: &[String],
    stop: &AtomicBool,
) -> Result<Option<Vec<Characterization>>> {
    let mut found = Vec::new();
    for r in references {
        found.push(load_characterization(db, r, stop)?);
    }
    if found.iter().all(Option::is_none) {
        return Ok(None);
    }
    if let Some(i) = found.iter().position(Option::is_none) {
        return Err(RunRefError::Mixed(references[i].clone()));
    }
    Ok(Some(found.into_iter().flatten().collect()))
}

/// The store `db` locates, which must exist since `reference` (for
/// the message) names runs in it.
pub fn open_store(db: Option<&Path>, reference: &str, stop: &AtomicBool) -> Result<Store> {
    let db = store::locate(db)?;
    match Store::open_existing_or_stop(&db, stop)? {
        Some(s) => Ok(s),
        None => Err(StoreError::NoStore {
            reference: reference.to_string(),
            path: db,
        }
        .into()),
    }
}

/// Load a run from the store `db` locates.
pub fn load_stored(db: Option<&Path>, reference: &str, stop: &AtomicBool) -> Result<RunRecord> {
    let s = open_store(db, reference, stop)?;
    let id = s.resolve(reference)?;
    Ok(s.load(id)?)
}

/// Read and check a run record file.
pub fn load_file(path: &Path) -> Result<RunRecord> {
    let text = std::fs::read_to_string(path).map_err(|source| RunRefError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    crate::record::from_json(&text).map_err(|e| match e {
        ReadError::Json { line, message } => RunRefError::NotRecord {
            path: path.to_path_buf(),
            line,
            message,
        },
        ReadError::Invalid(why) => RunRefError::InvalidRecord {
            path: path.to_path_buf(),
            why,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_kinds() {
        assert!(is_store_only("12"));
        assert!(is_store_only("last"));
        assert!(!is_store_only("run.json"));
        assert!(may_be_uuid("0123abcd"));
        assert!(!may_be_uuid("abc"));
        let e = load(None, "no/such/file.json", &AtomicBool::new(false)).unwrap_err();
        assert!(e.to_string().contains("rtscope runs"), "{e}");
    }
}
