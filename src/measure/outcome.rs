//! How one measurement ended: the run record, where it was saved, what
//! could not be written, and the status that decides the exit code.
//! Builds the text people read at the end; prints nothing itself.

use crate::record::RunRecord;
use crate::report::summary;
use std::path::PathBuf;

/// Where the run was saved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    pub id: i64,
    pub store: PathBuf,
}

/// What a finished measurement means for its caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Measured and written; no limit exceeded.
    Ok,
    /// Measured and written; `max_latency` or the break threshold was
    /// exceeded.
    LimitExceeded,
    /// Some results could not be written (each message says which); what
    /// was written is there.
    NotWritten(Vec<String>),
    /// A measuring thread failed; the results cover the time before it.
    ThreadFailed,
}

/// The end of one measurement.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub record: RunRecord,
    pub saved: Option<Saved>,
    /// Results that could not be written (files, the store).
    pub failures: Vec<String>,
    /// Errors of threads that failed while measuring.
    pub thread_errors: Vec<String>,
    /// One line on the load and what it achieved.
    pub load_line: Option<String>,
    /// Standard output carries results (a histogram, the record): people's
    /// text goes to standard error.
    pub stdout_taken: bool,
}

impl Outcome {
    /// The status, most serious first: failed writes, a failed thread,
    /// then the limits.
    pub fn status(&self) -> Status {
        if !self.failures.is_empty() {
            Status::NotWritten(self.failures.clone())
        } else if !self.thread_errors.is_empty() {
            Status::ThreadFailed
        } else if self.record.limits.exceeded || self.record.limits.break_event.is_some() {
            Status::LimitExceeded
        } else {
            Status::Ok
        }
    }

    /// The summary table (with the thread rows `rows` asks for), where
    /// the run was saved and the load line.
    pub fn summary_text(&self, rows: crate::text::rank::Rows) -> String {
        let mut table = summary::render_rows(&self.record, rows);
        if let Some(s) = &self.saved {
            table.push_str(&format!(
                "saved as run {} in {} (rtscope runs show {})\n",
                s.id,
                s.store.display(),
                s.id
            ));
        }
        if let Some(l) = &self.load_line {
            table.push_str(l);
            table.push('\n');
        }
        table
    }
}
