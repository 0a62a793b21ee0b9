//! Importing files as `rtscope import` does: read one file from disk into
//! records (text, modification time, the format recognised or forced;
//! one record per run the file holds), and store many at once, each content once (by its run uuid). Every
//! message names the file; a refused file imports nothing.

use super::{ImportOptions, Importer, Source};
use crate::record::RunRecord;
use crate::store::{Store, StoreError};
use std::path::{Path, PathBuf};

/// Why a file was not read into a record; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum ReadFileError {
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    #[error("{}: not a text file (invalid UTF-8 at byte {valid_up_to})", .path.display())]
    NotText { path: PathBuf, valid_up_to: usize },
    /// The reader refused it, on `line` when the problem is on one.
    #[error("{}{}: {message}", .path.display(), .line.map(|l| format!(":{l}")).unwrap_or_default())]
    Refused {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
}

/// Read `path` into records, one per run it holds (the format
/// recognised from its contents, or `forced`); a file above `max_bytes`
/// is refused unread. The message of an error names the file and the
/// line.
pub fn read_file(
    path: &Path,
    forced: Option<&'static Importer>,
    options: &ImportOptions,
    max_bytes: u64,
) -> Result<Vec<RunRecord>, ReadFileError> {
    let mut recs = read_bytes(path, forced, options, max_bytes)?;
    if let Some(host) = &options.host {
        for rec in &mut recs {
            super::give_host(rec, host);
        }
    }
    if let Some(given) = options.interval {
        for rec in &mut recs {
            super::give_interval(rec, given).map_err(|e| ReadFileError::Refused {
                path: path.to_path_buf(),
                line: None,
                message: e.to_string(),
            })?;
        }
    }
    Ok(recs)
}

fn read_bytes(
    path: &Path,
    forced: Option<&'static Importer>,
    options: &ImportOptions,
    max_bytes: u64,
) -> Result<Vec<RunRecord>, ReadFileError> {
    let bytes = crate::input::read_limited(path, max_bytes, "an import")?;
    if super::jitterdebugger::is_raw(path, &bytes) {
        return read_raw(path, &bytes, options);
    }
    let text = String::from_utf8(bytes).map_err(|e| ReadFileError::NotText {
        path: path.to_path_buf(),
        valid_up_to: e.utf8_error().valid_up_to(),
    })?;
    let src = Source {
        path,
        text: &text,
        modified_unix_ns: modified_unix_ns(path),
        options,
    };
    super::read_runs(&src, forced).map_err(|e| ReadFileError::Refused {
        path: path.to_path_buf(),
        line: e.line,
        message: e.message,
    })
}

/// jitterdebugger's binary `samples.raw`, the one binary format read.
fn read_raw(
    path: &Path,
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<Vec<RunRecord>, ReadFileError> {
    let src = Source {
        path,
        text: "",
        modified_unix_ns: modified_unix_ns(path),
        options,
    };
    super::jitterdebugger::parse_raw(&src, bytes)
        .map(|r| vec![r])
        .map_err(|e| ReadFileError::Refused {
            path: path.to_path_buf(),
            line: e.line,
            message: e.message,
        })
}

/// When `path` was last written (when its tool finished writing it).
fn modified_unix_ns(path: &Path) -> Option<u64> {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as u64)
}

/// What became of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Stored as this run.
    New(i64),
    /// The same content is already stored as this run.
    Known(i64),
    /// The same content as an earlier file of the same call.
    Repeated,
}

/// What [`save`] would make of each record: a content already in
/// `store` (by its run uuid, derived from the content alone) is
/// `Known`, one repeated in `records` `Repeated`, any other `New(0)`.
/// `store` is `None` where no store exists yet. `import --dry-run` says
/// this, so that it and the import agree.
pub fn plan(
    store: Option<&Store>,
    records: &[(PathBuf, RunRecord)],
) -> Result<Vec<Stored>, StoreError> {
    let mut out = Vec::with_capacity(records.len());
    let mut seen = std::collections::BTreeSet::new();
    for (_, rec) in records {
        let known = match store {
            Some(s) => s.find_uuid(&rec.run_uuid)?,
            None => None,
        };
        out.push(match known {
            Some(id) => Stored::Known(id),
            None if !seen.insert(rec.run_uuid.clone()) => Stored::Repeated,
            None => Stored::New(0),
        });
    }
    Ok(out)
}

/// Store `records` (one transaction), skipping contents already stored
/// or repeated ([`plan`]); what became of each, in order. A content
/// another writer stores meanwhile is `Known`, as if it had been there
/// first ([`Store::insert_all_unless_raced`]).
pub fn save(
    store: &mut Store,
    records: &[(PathBuf, RunRecord)],
) -> Result<Vec<Stored>, StoreError> {
    // Each lost race makes one more uuid known: at most one try per record.
    loop {
        let mut out = plan(Some(store), records)?;
        let fresh: Vec<RunRecord> = records
            .iter()
            .zip(&out)
            .filter(|(_, s)| matches!(s, Stored::New(_)))
            .map(|((_, rec), _)| rec.clone())
            .collect();
        let Some(ids) = store.insert_all_unless_raced(&fresh)? else {
            continue;
        };
        let mut ids = ids.into_iter();
        for s in &mut out {
            if let Stored::New(id) = s {
                *id = ids.next().unwrap_or_default();
            }
        }
        return Ok(out);
    }
}

/// What the user gave for `new` (`--interval`/`--distance`, `--host`,
/// `--label`, `--tag`) that `stored`, the run of the same content
/// already in the store, does not hold: one phrase each ("its interval is
/// unknown, not 1 ms"). The same content is never stored twice and a
/// stored run is never rewritten, so these are not applied; empty when
/// nothing differs.
pub fn not_applied(stored: &RunRecord, new: &RunRecord) -> Vec<String> {
    use crate::record::Unknowable;
    let interval = |r: &RunRecord| {
        if !r.knows(Unknowable::Interval) || r.options.interval_ns == 0 {
            return "unknown".to_string();
        }
        let i = crate::units::fmt_duration(r.options.interval_ns);
        match r.options.distance_ns {
            0 => i,
            d => format!("{i} (+{} a thread)", crate::units::fmt_duration(d)),
        }
    };
    let mut out = Vec::new();
    let (was, now) = (interval(stored), interval(new));
    if was != now {
        out.push(format!("its interval is {was}, not {now}"));
    }
    let host = |r: &RunRecord| crate::store::runs::host_name(&r.fingerprint.hostname).to_string();
    if stored.fingerprint.hostname != new.fingerprint.hostname {
        out.push(format!(
            "its host is '{}', not '{}'",
            host(stored),
            host(new)
        ));
    }
    let label = |r: &RunRecord| match &r.label {
        Some(l) => format!("'{l}'"),
        None => "none".into(),
    };
    if stored.label != new.label {
        out.push(format!(
            "its label is {}, not {}",
            label(stored),
            label(new)
        ));
    }
    for (k, v) in &new.tags {
        match stored.tags.get(k) {
            Some(w) if w == v => {}
            Some(w) => out.push(format!("its tag {k} is '{w}', not '{v}'")),
            None => out.push(format!("it has no tag {k}={v}")),
        }
    }
    out.into_iter()
        .map(|s| crate::text::terminal::for_terminal(&s).into_owned())
        .collect()
}
