//! What one measurement asks for, typed: the engine's configuration, the
//! load, the isolation, where results go and how the run is named. Its
//! checks refuse, before anything is touched, the combinations that
//! cannot work. Knows no flag syntax and touches nothing.

use super::error::SessionError;
use super::outputs::Outputs;
use crate::engine::MeasureConfig;
use crate::load::LoadRequest;
use crate::units::fmt_duration;
use std::collections::BTreeMap;

/// Largest number of rows of a cyclictest histogram.
pub const MAX_HIST_ROWS: usize = 10_000_000;

/// One measurement, as a command asks for it.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub config: MeasureConfig,
    /// Isolate these CPUs for this run only and measure on them.
    pub isolate: Option<Vec<usize>>,
    /// The load to run beside the measurement (empty: none).
    pub load: LoadRequest,
    /// Save the run in the store, checkpointing every this often; `None`:
    /// not saved.
    pub checkpoint_ns: Option<u64>,
    pub outputs: Outputs,
    /// Shown by `runs` and in reports.
    pub label: Option<String>,
    /// The host name the run records instead of this machine's (a lab's
    /// name for the board); `None`: the machine's.
    pub host: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// The run's status is "limit exceeded" above this.
    pub max_latency_ns: Option<u64>,
    /// The deadline a wake-up is judged against (`--deadline`); `None`:
    /// the period.
    pub deadline_ns: Option<u64>,
    /// The command line recorded with the run.
    pub command_line: Vec<String>,
    /// Explain the wake-ups at least this late from kernel trace events.
    pub explain_above_ns: Option<u64>,
    /// The trace events recorded for that (default: the lean set).
    pub explain_events: crate::trace::EventSet,
    /// Measure even on CPUs another rtscope measures (`--force`).
    pub force_shared_cpus: bool,
    /// The run store the run is saved in (`--db`); `None`: the default
    /// one ([`crate::store::locate`]).
    pub store: Option<std::path::PathBuf>,
}

impl Request {
    /// The CPUs the load runs on by default: those allowed, less the
    /// isolated ones (the load runs beside the measurement).
    pub fn load_cpus(&self, allowed: &[usize]) -> Vec<usize> {
        match &self.isolate {
            Some(iso) => allowed
                .iter()
                .copied()
                .filter(|c| !iso.contains(c))
                .collect(),
            None => allowed.to_vec(),
        }
    }

    /// Refuse CPUs that the load and the isolation would both take.
    pub fn check_cpus(&self) -> Result<(), SessionError> {
        if let (Some(iso), Some(cpus)) = (&self.isolate, &self.load.cpus)
            && let Some(c) = cpus.iter().find(|c| iso.contains(c))
        {
            return Err(SessionError::Usage(format!(
                "--load-cpus includes CPU {c}, which --isolate keeps for measuring: leave --load-cpus out (loads then run on the other CPUs)"
            )));
        }
        Ok(())
    }

    /// Refuse outputs, checkpoints and explaining that cannot work,
    /// before the system is touched.
    pub fn check_outputs(&self) -> Result<(), SessionError> {
        if let Some(above) = self.explain_above_ns {
            if !super::explain::clock_supported(self.config.clock) {
                return Err(SessionError::Usage(
                    "--explain needs the monotonic clock (kernel trace events are stamped on it): leave out --clock realtime".into(),
                ));
            }
            if above == 0 {
                return Err(SessionError::Usage(
                    "--explain threshold must be greater than 0".into(),
                ));
            }
            if crate::sys::sched::euid() != 0 {
                return Err(SessionError::Privilege(
                    "--explain reads kernel trace events (tracefs) and needs root: run with sudo, or leave out --explain".into(),
                ));
            }
        }
        if let Some(h) = &self.outputs.histogram
            && (h.rows == 0 || h.rows > MAX_HIST_ROWS)
        {
            return Err(SessionError::Usage(format!(
                "-h/--histogram rows must be between 1 and {MAX_HIST_ROWS} (got {})",
                h.rows
            )));
        }
        if let Some(every) = self.checkpoint_ns
            && every < crate::store::checkpoint::MIN_INTERVAL_NS
        {
            return Err(SessionError::Usage(format!(
                "--checkpoint {} is below the 1s minimum",
                fmt_duration(every)
            )));
        }
        self.outputs.check_writable()
    }
}
