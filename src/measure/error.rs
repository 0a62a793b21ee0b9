//! Why a measurement could not be made ([`SessionError`]): every refusal
//! and failure before or instead of measuring, each keeping its cause.

use crate::engine::{EngineError, PlanError};
use crate::load::{LoadError, session::SessionError as LoadStartError};
use crate::store::StoreError;
use thiserror::Error;

/// Why a measurement could not be made; nothing measured is lost by any
/// of these (they happen before measuring, or the engine never started).
#[derive(Debug, Error)]
pub enum SessionError {
    /// Options that cannot work, alone or together (a value out of range,
    /// two options that exclude each other, a tag given twice); the text
    /// names the options and what to do.
    #[error("{0}")]
    Usage(String),
    /// The CPUs this process may use cannot be read.
    #[error("sched_getaffinity failed")]
    Affinity(#[source] std::io::Error),
    /// The measurement cannot be planned on these CPUs.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The load cannot be planned.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The load could not be started.
    #[error(transparent)]
    LoadStart(#[from] LoadStartError),
    /// This process may not do what the run asks: real-time threads
    /// (root, CAP_SYS_NICE or RLIMIT_RTPRIO; the text from
    /// [`crate::engine::preflight::realtime_refusal`]) or --explain's
    /// kernel tracing (root). The text says what to do.
    #[error("{0}")]
    Privilege(String),
    /// The run store cannot be opened (the run would have nowhere to go).
    #[error("the run store cannot be used (--no-save measures without it)")]
    StoreOpen(#[source] StoreError),
    /// A signal ended the wait for the store's server before measuring
    /// began.
    #[error("{0}; nothing was measured")]
    StoreInterrupted(StoreError),
    /// The open run store refused or failed to record the run's start
    /// (its row, the checkpoint interval).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The isolation could not be applied (its causes as sources).
    #[error(transparent)]
    Isolation(#[from] crate::tune::session::IsolateError),
    /// Another rtscope measures these CPUs (or the locks failed).
    #[error(transparent)]
    CpusBusy(#[from] crate::cpulock::CpuLockError),
    /// A result file that cannot be written.
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    /// The engine refused or could not start the measuring threads.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Kernel tracing for --explain could not be set up (the cause, as
    /// the source, says why: printed with it, the message reads once).
    #[error("--explain")]
    Explain(#[from] crate::trace::TraceError),
    /// A signal (Ctrl-C, SIGTERM) came while the run was being set up.
    #[error("stopped by a signal before measuring began; nothing was measured")]
    Interrupted,
}
