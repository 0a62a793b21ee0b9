//! Studies: the seeds' whole experiment (a matrix of `measure`
//! configurations, kernels included, each run several times) in one
//! command that survives kills, power cuts and reboots into another
//! kernel, and one report that compares the cells.
//!
//! Layout: `spec` (the study file), `matrix` (cells and their order in
//! time), `kernel` (which kernel a cell needs), `state` (a study as the
//! store holds it: which runs are done, waiting, interrupted), `run` (the
//! loop that measures the cells a kernel owes, one `measure::Session`
//! each), `gate` (`--fail-if`), `report` (the HTML comparison). The
//! study's state lives in the store (`store::studies`); nothing is kept
//! in memory that a crash would lose. Knows no flag syntax: a cell's
//! options are read into `measure::Settings`, which make its request.

pub mod boots;
pub mod check;
pub mod gate;
pub mod matrix;
pub mod reboot;
pub mod report;
pub mod results;
pub mod run;
pub mod spec;
pub mod state;
pub mod status;

use thiserror::Error;

/// What can go wrong with a study, before or between its cells.
#[derive(Debug, Error)]
pub enum StudyError {
    #[error(transparent)]
    Spec(#[from] spec::SpecError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("no study '{name}' in {store}: `rtscope study status` lists the stored studies")]
    NoStudy { name: String, store: String },
    #[error("no study in {store} yet: start one with `rtscope study FILE.toml`")]
    NoStudies { store: String },
    #[error(
        "a different study named '{name}' is already in {store} ({done} of {total} runs done): rename yours (name = ...) or remove the old one with `rtscope study remove {name}`"
    )]
    NameTaken {
        name: String,
        store: String,
        done: usize,
        total: usize,
    },
    #[error(
        "study '{name}' is being run by process {pid} on {host}: wait for it, or stop it (Ctrl-C) and resume"
    )]
    Busy {
        name: String,
        pid: u32,
        host: String,
    },
    /// A stored run's histogram cannot be read back.
    #[error(transparent)]
    Histogram(#[from] crate::histogram::HistogramError),
}
