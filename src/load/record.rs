//! The load section of the run record ([`LoadRecord`]): what the plan
//! asked for, what the [`EventLog`] saw, and what the load achieved
//! (sampled from /proc here), with times counted from the run's origin.
//! Also the run's warnings about the load, the one line for people, and
//! the record so far shared with checkpoint writers while measuring.
//!
//! Builds and shares, nothing more: never talks to the supervisor, never
//! touches a load process, never prints.

use super::achieved::{self, Sampler};
use super::event_log::EventLog;
use super::plan::LoadPlan;
use crate::record::{LoadCommand, LoadPart, LoadPhase, LoadRecord};
use crate::units::format_cpu_list;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The load record so far, refreshed every [`SHARE_EVERY`] while a
/// measurement runs: for observers that write checkpoints (they cannot
/// borrow the session, which the run's fan-out holds).
pub type SharedLoadRecord = Arc<Mutex<Option<LoadRecord>>>;

/// How often the shared record is refreshed.
pub const SHARE_EVERY: Duration = Duration::from_secs(5);

/// Builds the load record of one load.
#[derive(Debug)]
pub struct RecordBuilder {
    /// Origin of offsets (CLOCK_MONOTONIC): the run's start.
    origin_ns: u64,
    sampler: Sampler,
    shared: SharedLoadRecord,
    shared_at: Option<Instant>,
}

impl RecordBuilder {
    /// Times counted from `origin_ns`; nothing sampled until an origin is
    /// set with [`RecordBuilder::set_origin`].
    pub fn new(origin_ns: u64) -> RecordBuilder {
        RecordBuilder {
            origin_ns,
            sampler: Sampler::new(),
            shared: Arc::new(Mutex::new(None)),
            shared_at: None,
        }
    }

    /// Express phase and sample times from `origin_ns` (CLOCK_MONOTONIC),
    /// the start of the run; samples start again from there.
    pub fn set_origin(&mut self, origin_ns: u64) {
        self.origin_ns = origin_ns;
        self.sampler.set_origin(origin_ns);
    }

    /// Sample what the load achieves, if a sample is due at `now_ns`.
    pub fn sample(&mut self, now_ns: u64) {
        self.sampler.maybe_sample(now_ns);
    }

    /// The last sample, at the end of the load.
    pub fn last_sample(&mut self, now_ns: u64) {
        self.sampler.finish(now_ns);
    }

    fn offset(&self, t_ns: u64) -> u64 {
        t_ns.saturating_sub(self.origin_ns)
    }

    /// The record, with phases still open on until `now_ns`, and phases
    /// clipped to `[0, end_offset_ns]` when given.
    pub fn build(
        &self,
        plan: &LoadPlan,
        log: &EventLog,
        now_ns: u64,
        end_offset_ns: Option<u64>,
    ) -> LoadRecord {
        let clip = |v: u64| end_offset_ns.map_or(v, |e| v.min(e));
        let phases = log
            .phases_until(now_ns)
            .iter()
            .map(|p| LoadPhase {
                part: p.part.clone(),
                start_offset_ns: clip(self.offset(p.on_ns)),
                end_offset_ns: clip(self.offset(p.off_ns)),
            })
            .filter(|p| p.end_offset_ns > p.start_offset_ns)
            .collect();
        LoadRecord {
            profile: plan.profile.clone(),
            seed: plan.seed,
            commands: plan
                .parts
                .iter()
                .map(|p| LoadCommand {
                    part: p.name.clone(),
                    argv: p.argv.clone(),
                    starts: log.starts(&p.name),
                })
                .collect(),
            phases,
            achieved: self.sampler.summary(),
            failures: log.failures().to_vec(),
            cpus: Some(format_cpu_list(&plan.cpus)),
            parts: plan
                .parts
                .iter()
                .map(|p| LoadPart {
                    name: p.name.clone(),
                    load: p.load.clone(),
                    steady: p.schedule.steady,
                    period_ns: p.schedule.period_ns,
                    first_burst_ns: p.schedule.offset_ns,
                    active_min_ns: p.schedule.active_min_ns,
                    active_max_ns: p.schedule.active_max_ns,
                })
                .collect(),
            scratch_dir: Some(plan.scratch_dir.display().to_string()),
            cgroups: log.cgroups().to_vec(),
            session_id: log.session().map(|s| s as u32),
            leftovers: log.leftovers().to_vec(),
        }
    }

    /// A handle on the load record so far (refreshed while measuring).
    pub fn shared(&self) -> SharedLoadRecord {
        self.shared.clone()
    }

    /// Refresh the shared record (see [`RecordBuilder::build`]) when
    /// [`SHARE_EVERY`] has passed since the last time.
    pub fn share_if_due(
        &mut self,
        plan: &LoadPlan,
        log: &EventLog,
        now_ns: u64,
        end_offset_ns: Option<u64>,
    ) {
        if self.shared_at.is_none_or(|t| t.elapsed() >= SHARE_EVERY) {
            self.shared_at = Some(Instant::now());
            let rec = self.build(plan, log, now_ns, end_offset_ns);
            if let Ok(mut g) = self.shared.lock() {
                *g = Some(rec);
            }
        }
    }
}

/// Warnings for the run record: failures and left-overs.
pub fn run_warnings(log: &EventLog) -> Vec<String> {
    let mut w: Vec<String> = log
        .failures()
        .iter()
        .map(|f| format!("load: {f}; the run was not loaded as intended"))
        .collect();
    w.extend(
        log.leftovers()
            .iter()
            .map(|l| format!("load clean-up: {l}")),
    );
    w
}

/// One line for people: the profile and what it achieved.
pub fn describe(rec: &LoadRecord) -> String {
    let mut s = format!(
        "load {} (seed {}) on CPUs {}",
        rec.profile,
        rec.seed,
        rec.cpus.clone().unwrap_or_default()
    );
    if let Some(a) = &rec.achieved {
        s.push_str(": ");
        s.push_str(&achieved::describe(a));
    }
    s
}
