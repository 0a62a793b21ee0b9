//! `explain`: why was a wake-up late? Reads kernel trace events (typed in
//! `event`, parsed from text by `parse`), walks from a spike's deadline to
//! the thread running (`analyze`) and names the culprits with their
//! durations and shares (`model`, the JSON contract; `text`, the terminal
//! rendering). `file` explains the spikes cyclictest marked in a trace
//! file. Pure: tracing itself lives in `crate::trace`; no flags here.

pub mod analyze;
pub mod event;
pub mod file;
pub mod model;
pub mod parse;
pub mod text;

pub use analyze::analyze;
pub use event::{Event, EventKind, Loss, Window};
pub use file::{TraceFileError, TraceText, explain_trace_file};
pub use model::{
    Completeness, Culprit, Explanation, IrqThreadSplit, KnownSplit, Part, Priority, Spike,
    SplitSide, SplitUnknown, Step,
};

#[cfg(test)]
mod tests;
