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
    /// Options that cannot work together.
    #[error("{0}")]
    Usage(String),
    #[error("sched_getaffinity failed")]
    Affinity(#[source] std::io::Error),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    LoadStart(#[from] LoadStartError),
    /// Real-time threads without the privilege for them.
    #[error("{0}")]
    Privilege(String),
    #[error("the run store cannot be used (--no-save measures without it)")]
    StoreOpen(#[source] StoreError),
    /// A signal ended the wait for the store's server before measuring
    /// began.
    #[error("{0}; nothing was measured")]
    StoreInterrupted(StoreError),
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
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Kernel tracing for --explain could not be set up.
    #[error("--explain: {0}")]
    Explain(#[from] crate::trace::TraceError),
    #[error("stopped by a signal before measuring began; nothing was measured")]
    Interrupted,
}
