//! Kernel tracing through tracefs for `explain`: find or mount tracefs
//! (`tracefs`), rtscope's own instance and its events (`instance`), the
//! journal that lets a later rtscope undo what a killed one set up
//! (`journal`), and the recorder that reads events into bounded per-CPU
//! windows (`recorder`). Never touches the top-level trace buffer, and
//! never runs on a measuring thread.

pub mod instance;
pub mod journal;
pub mod recorder;
pub mod tracefs;

pub use instance::EventSet;
pub use journal::cleanup_stale;
pub use recorder::{ReaderStats, Recorder, TraceConfig, TraceError, mark_partial};
