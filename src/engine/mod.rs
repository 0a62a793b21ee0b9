//! The measurement engine: periodic real-time threads that record how late
//! they wake up. It knows nothing of flags or terminals: it takes a
//! validated [`Plan`], runs it, and reports through an [`Observer`] and
//! the returned [`Outcome`].
//!
//! Layout: `plan` (what to run, validated), `shared` (per-thread
//! statistics readable while the thread writes them), `window` (per-window
//! series and their bounded storage), `waiter` (the timer methods),
//! `thread` (set-up and the hot loop), `exceed` (the wake-ups above a
//! threshold, with their cycles), `run` (spawning, collecting,
//! stopping), `build` (turning results into a run record), `fanout`
//! (several observers of one run).

pub mod build;
pub mod exceed;
pub mod fanout;
pub mod plan;
pub mod preflight;
pub mod run;
pub mod shared;
pub mod thread;
pub mod waiter;
pub mod window;

pub use fanout::Fanout;
pub use plan::{MeasureConfig, Plan, PlanError, Policy, ThreadPlan, TimerMethod};
pub use run::{
    Control, EngineError, Late, Observer, Outcome, RunView, Snapshot, ThreadSnapshot, run,
};
