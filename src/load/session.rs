//! rtscope's side of a running load, the one handle others use (`rtscope
//! load`, `measure --load`): starts the load supervisor and waits until
//! it is ready, follows its events every tick, and at the end stops it,
//! checks that it cleaned up (or cleans up itself if it could not), and
//! gives the run record's [`LoadRecord`].
//!
//! A thin handle over three pieces: [`SupervisorLink`] (the supervisor
//! process and its pipes), [`EventLog`] (what happened, when) and
//! [`RecordBuilder`] (the record's load section). Stopping happens on
//! every path: `stop()` at the normal end, `Drop` on errors and panics,
//! the supervisor's own parent-death handling when rtscope is killed.
//! Never forks once measuring has begun: the supervisor is started
//! before.

use super::cgroup::CgroupDir;
use super::cleanup::{self, Cleaner, Footprint};
use super::event::Event;
use super::event_log::EventLog;
use super::link::SupervisorLink;
use super::plan::LoadPlan;
use super::record::{self, RecordBuilder};
use crate::engine::{Control, Observer, RunView};
use crate::record::LoadRecord;
use crate::sys::clock::{self, Clock};
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};
use thiserror::Error;

pub use super::event_log::Verbosity;
pub use super::record::{SHARE_EVERY, SharedLoadRecord};

/// Time the supervisor has to get ready.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// Time the supervisor has to stop everything and clean up.
const DONE_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause after ready so that the parts have forked their workers before
/// the first measured period.
const SETTLE: Duration = Duration::from_millis(250);

#[derive(Debug, Error)]
pub enum SessionError {
    #[error("could not start the load supervisor ({0}): is the rtscope binary still there?")]
    Spawn(std::io::Error),
    #[error("the load did not start: {0}")]
    Fatal(String),
    #[error("the load supervisor ended before it was ready{0}")]
    Died(String),
    #[error("the load supervisor did not get ready within {0:?}")]
    Timeout(Duration),
}

fn mono() -> u64 {
    clock::now_ns(Clock::Monotonic)
}

/// A running load.
pub struct LoadSession {
    plan: LoadPlan,
    link: SupervisorLink,
    log: EventLog,
    builder: RecordBuilder,
}

impl LoadSession {
    /// Start `plan` and return once its first parts are running.
    pub fn start(plan: LoadPlan, verbosity: Verbosity) -> Result<LoadSession, SessionError> {
        let (link, warnings) = SupervisorLink::spawn().map_err(SessionError::Spawn)?;
        let now = mono();
        let mut s = LoadSession {
            plan,
            link,
            log: EventLog::new(verbosity, now),
            builder: RecordBuilder::new(now),
        };
        if let Err(e) = s.link.send_plan(&s.plan) {
            s.stop();
            return Err(SessionError::Died(format!(" (writing its plan: {e})")));
        }
        for w in warnings {
            s.log.warn(w);
        }
        if let Err(e) = s.wait_ready() {
            s.stop();
            return Err(e);
        }
        std::thread::sleep(SETTLE);
        s.poll();
        Ok(s)
    }

    /// Take events until the supervisor is ready (or cannot be).
    fn wait_ready(&mut self) -> Result<(), SessionError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.link.next_event(left) {
                Ok(Event::Fatal { message }) => return Err(SessionError::Fatal(message)),
                Ok(Event::Ready {
                    session,
                    cgroups,
                    t_ns,
                }) => {
                    self.log.ready(session, cgroups, t_ns);
                    self.set_origin(t_ns);
                    return Ok(());
                }
                Ok(e) => self.log.handle(e),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(SessionError::Timeout(READY_TIMEOUT));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.log.supervisor_gone();
                    let status = self
                        .link
                        .exit_status()
                        .map(|st| format!(" ({st})"))
                        .unwrap_or_default();
                    return Err(SessionError::Died(status));
                }
            }
        }
    }

    pub fn plan(&self) -> &LoadPlan {
        &self.plan
    }

    /// Time since the load started (its schedule's origin).
    pub fn elapsed_ns(&self) -> u64 {
        mono().saturating_sub(self.log.started_ns())
    }

    /// Express phase and sample times from `origin_ns` (CLOCK_MONOTONIC),
    /// the start of the run.
    pub fn set_origin(&mut self, origin_ns: u64) {
        self.builder.set_origin(origin_ns);
    }

    /// Take the events that arrived and a sample if one is due. Call it
    /// often (every tick).
    pub fn poll(&mut self) {
        loop {
            match self.link.try_event() {
                Ok(e) => self.log.handle(e),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.log.stream_ended(mono());
                    break;
                }
            }
        }
        self.builder.sample(mono());
    }

    /// Run the load by itself until `stop` is set or, when given, for
    /// `duration_ns` from now (the load is up by then), then stop it.
    pub fn run_until(&mut self, stop: &std::sync::atomic::AtomicBool, duration_ns: Option<u64>) {
        let up = Instant::now();
        let over = |d: u64| up.elapsed() >= Duration::from_nanos(d);
        while !stop.load(std::sync::atomic::Ordering::SeqCst) && !duration_ns.is_some_and(over) {
            std::thread::sleep(Duration::from_millis(50));
            self.poll();
        }
        self.stop();
    }

    /// A handle on the load record so far (refreshed while measuring).
    pub fn shared_record(&self) -> SharedLoadRecord {
        self.builder.shared()
    }

    /// Failures so far (to warn about in the run record).
    pub fn failures(&self) -> &[String] {
        self.log.failures()
    }

    /// Stop the load and clean up; idempotent.
    pub fn stop(&mut self) {
        // Set first: a poll from here on knows the load is being stopped.
        let now = mono();
        if !self.log.stopping(now) {
            return;
        }
        self.poll();
        self.builder.last_sample(now);
        self.link.ask_to_stop();
        self.wait_cleaned_up();
        self.link.end();
        while let Ok(e) = self.link.try_event() {
            self.log.handle(e);
        }
        if !self.log.cleaned_up() {
            self.log.leftover(
                "the load supervisor did not report its clean-up: rtscope cleaned up itself".into(),
            );
            for l in cleanup::clean_up(&footprint(&self.plan, &self.log), Cleaner::Rtscope) {
                self.log.leftover(l);
            }
        }
        self.log.close();
        if let Some(w) = self.link.restore_oom() {
            self.log.warn(w);
        }
    }

    /// Take events until the supervisor reports its clean-up, is gone,
    /// or [`DONE_TIMEOUT`] has passed.
    fn wait_cleaned_up(&mut self) {
        let deadline = Instant::now() + DONE_TIMEOUT;
        while self.log.supervisor_running() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.link.next_event(left) {
                Ok(e) => self.log.handle(e),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => self.log.supervisor_gone(),
            }
        }
    }

    /// The record of this load, with times from the origin and phases
    /// clipped to `[0, end_offset_ns]` when given.
    pub fn record(&self, end_offset_ns: Option<u64>) -> LoadRecord {
        // Parts on now count as on until now.
        let now = self.log.end_ns().unwrap_or_else(mono);
        self.builder
            .build(&self.plan, &self.log, now, end_offset_ns)
    }

    /// Warnings for the run record: failures and left-overs.
    pub fn run_warnings(&self) -> Vec<String> {
        record::run_warnings(&self.log)
    }

    /// One line for people: the profile and what it achieved.
    pub fn describe(&self) -> String {
        record::describe(&self.record(None))
    }
}

/// What the load put on the system, as rtscope knows it: the session and
/// the cgroups the supervisor reported, or, when it never did, the cgroups
/// it would have made.
fn footprint(plan: &LoadPlan, log: &EventLog) -> Footprint {
    let mut cgroups = CgroupDir::all_named(&plan.cgroup_name);
    if !log.cgroups().is_empty() {
        cgroups.retain(|c| log.cgroups().contains(&c.path.display().to_string()));
    }
    Footprint {
        session: log.session(),
        cgroups,
        scratch_dir: plan.scratch_dir.clone(),
    }
}

impl Drop for LoadSession {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The load follows the measurement: phases and samples are counted from
/// the run's first deadline, and events are taken every tick.
impl Observer for LoadSession {
    fn started(&mut self, view: &RunView) {
        let clock = view.clock();
        let now_run = clock::now_ns(clock);
        let now_mono = mono();
        let origin = if clock == Clock::Monotonic {
            view.t0_ns
        } else {
            (now_mono as i128 + view.t0_ns as i128 - now_run as i128).max(0) as u64
        };
        self.set_origin(origin);
    }

    fn tick(&mut self, view: &RunView) -> Control {
        self.poll();
        let now = self.log.end_ns().unwrap_or_else(mono);
        self.builder
            .share_if_due(&self.plan, &self.log, now, Some(view.elapsed_ns()));
        Control::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_footprint_keeps_the_cgroups_reported_or_guesses_them() {
        let plan = LoadPlan {
            profile: "test".into(),
            seed: 1,
            cpus: vec![0],
            scratch_dir: std::env::temp_dir().join("rtscope-load-999999999"),
            cgroup_name: "rtscope-load-999999999".into(),
            nice: 0,
            parts: Vec::new(),
        };
        let mut log = EventLog::new(Verbosity::Problems, 0);
        let guessed = footprint(&plan, &log);
        assert_eq!(guessed.cgroups, CgroupDir::all_named(&plan.cgroup_name));
        assert_eq!(guessed.scratch_dir, plan.scratch_dir);
        assert_eq!(guessed.session, None);
        log.ready(7, vec!["/elsewhere".into()], 0);
        let reported = footprint(&plan, &log);
        assert!(reported.cgroups.is_empty());
        assert_eq!(reported.session, Some(7));
    }
}
