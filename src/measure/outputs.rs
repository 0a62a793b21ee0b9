//! The result files of one measurement: the run record (`--json`) and
//! cyclictest's histogram (`-h`/`--histfile`), each checked before
//! measuring and written atomically at the end. A failure of one never
//! keeps the others from being written, and none waits without bound (a
//! FIFO nobody reads is given up, at once on a signal).

use super::error::SessionError;
use crate::output::{self, OutputError};
use crate::record::RunRecord;
use crate::report::histfile;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use thiserror::Error;

/// Why one result file was not written.
#[derive(Debug, Error)]
enum FileError {
    #[error("serializing the run record: {0}")]
    Serialize(#[from] serde_json::Error),
    #[error("rendering the histogram: {0}")]
    Histogram(#[from] histfile::HistfileError),
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// Where the path `-` means standard output.
fn is_stdout(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// A cyclictest histogram to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistOutput {
    /// Rows of 1 us.
    pub rows: usize,
    /// With the all-threads column (`-H`).
    pub all_column: bool,
    /// The file; `-` for standard output.
    pub path: PathBuf,
}

/// The files a measurement writes at its end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    /// The run record; `-` for standard output.
    pub json: Option<PathBuf>,
    pub histogram: Option<HistOutput>,
}

impl Outputs {
    /// Does something go to standard output (so people's text goes to
    /// standard error)?
    pub fn uses_stdout(&self) -> bool {
        self.json.as_deref().is_some_and(is_stdout)
            || self.histogram.as_ref().is_some_and(|h| is_stdout(&h.path))
    }

    /// Refuse, before measuring, a file that could not be written.
    pub fn check_writable(&self) -> Result<(), SessionError> {
        let hist = self.histogram.as_ref().map(|h| &h.path);
        for (path, what) in [(self.json.as_ref(), "--json"), (hist, "--histfile")] {
            if let Some(p) = path {
                output::check_writable(p, what)?;
            }
        }
        Ok(())
    }

    /// Write every file; returns what failed, one message each, and
    /// whether the run record is in its `--json` file. `stop` (set by a
    /// signal) ends a wait for the reader of a FIFO.
    pub fn write(&self, rec: &RunRecord, stop: &AtomicBool) -> (Vec<String>, bool) {
        let mut failures = Vec::new();
        let mut record_written = false;
        if let Some(p) = &self.json {
            let written = serde_json::to_string(rec)
                .map_err(FileError::from)
                .and_then(|text| {
                    Ok(output::write_atomic_or_stop(
                        p,
                        format!("{text}\n").as_bytes(),
                        stop,
                    )?)
                });
            match written {
                Ok(()) => record_written = true,
                Err(e) => failures.push(e.to_string()),
            }
        }
        if let Some(h) = &self.histogram {
            let written = histfile::render(rec, h.rows, h.all_column)
                .map_err(FileError::Histogram)
                .and_then(|text| {
                    Ok(output::write_atomic_or_stop(
                        &h.path,
                        text.as_bytes(),
                        stop,
                    )?)
                });
            if let Err(e) = written {
                failures.push(e.to_string());
            }
        }
        (failures, record_written)
    }
}

/// Keep `rec` in a temporary directory when it went nowhere it was asked
/// to go (the `--json` file and the store both failed, e.g. a full disk):
/// the message says where it is, or that it is lost.
pub fn write_fallback(rec: &RunRecord) -> String {
    let kept = serde_json::to_string(rec)
        .map_err(FileError::from)
        .and_then(|text| {
            Ok(output::write_fallback(
                &format!("rtscope-{}.json", rec.run_uuid),
                format!("{text}\n").as_bytes(),
            )?)
        });
    match kept {
        Ok(p) => format!(
            "the run record could be written nowhere it was asked to go; it is kept in {} (save it in the store with `rtscope import {}`)",
            p.display(),
            p.display()
        ),
        Err(e) => format!("the run record is lost: {e}"),
    }
}
