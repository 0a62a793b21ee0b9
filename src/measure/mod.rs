//! One measurement from request to results, for every command that
//! measures (`measure` today; `study`, `monitor`, `characterize` next):
//! check what can be refused, start the load, apply the isolation, begin
//! the run in the store, run the engine, stop the load, build the run
//! record, write the outputs and save it. The command layer only turns
//! flags into a [`Request`] and prints the [`Outcome`].
//!
//! Layout: `settings` (a measurement as data, keyed by `measure`'s long
//! options: what flags and study files lower into), `request` (what is
//! asked, typed and checked), `error` (why it
//! could not be made), `session`
//! ([`Session`]: prepare → run → finish), `outputs` (the result files),
//! `outcome` (how it ended and the exit status it implies), `explain`
//! (`--explain`: late wake-ups explained from kernel trace events).
//!
//! Never prints the live display (the caller's observer does) and never
//! runs on a measuring thread.

pub mod error;
pub mod explain;
pub mod outcome;
pub mod outputs;
pub mod request;
pub mod session;
pub mod settings;

pub use error::SessionError;
pub use outcome::{Outcome, Saved, Status};
pub use outputs::{HistOutput, Outputs};
pub use request::Request;
pub use session::Session;
pub use settings::Settings;

#[cfg(test)]
mod tests;
