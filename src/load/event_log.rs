//! What happened to a running load, and when: the supervisor's events
//! folded into phases (each part on from when to when), starts per part,
//! failures, clean-up left-overs, the session and cgroups it reported,
//! and where the supervisor is (running, cleaned up, gone). Tells people
//! on standard error as it goes (warnings, failures, and every phase
//! with [`Verbosity::Phases`]).
//!
//! Only records and tells: never talks to the supervisor, never touches
//! a process or a file, never builds the run record.

use super::event::Event;
use crate::ui::say_line;
use crate::units::fmt_duration;
use std::collections::BTreeMap;

/// How chatty the session is on standard error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verbosity {
    /// Warnings and failures only.
    Problems,
    /// Also every part going on and off.
    Phases,
}

/// Where the load supervisor is, as its event stream tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Supervisor {
    /// Running; its events come in.
    Running,
    /// It reported its clean-up (`Done`).
    CleanedUp,
    /// Its event stream ended without a clean-up report.
    Gone,
}

/// A part on from `on_ns` to `off_ns` (CLOCK_MONOTONIC).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    pub part: String,
    pub on_ns: u64,
    pub off_ns: u64,
}

impl Phase {
    fn new(part: String, on_ns: u64, off_ns: u64) -> Phase {
        Phase {
            part,
            on_ns,
            off_ns,
        }
    }

    /// Time order, then name.
    fn order(&self) -> (u64, &str) {
        (self.on_ns, &self.part)
    }
}

/// The log of one load, from its start to its clean-up.
#[derive(Debug)]
pub struct EventLog {
    verbosity: Verbosity,
    /// Origin of the load's schedule (CLOCK_MONOTONIC).
    started_ns: u64,
    /// When stopping began: set once, and a stream ending after it is no
    /// failure.
    end_ns: Option<u64>,
    session: Option<i32>,
    cgroups: Vec<String>,
    starts: BTreeMap<String, u64>,
    open: BTreeMap<String, u64>,
    phases: Vec<Phase>,
    failures: Vec<String>,
    leftovers: Vec<String>,
    supervisor: Supervisor,
}

impl EventLog {
    /// An empty log; the load counts as started at `now_ns` until the
    /// supervisor says it is ready.
    pub fn new(verbosity: Verbosity, now_ns: u64) -> EventLog {
        EventLog {
            verbosity,
            started_ns: now_ns,
            end_ns: None,
            session: None,
            cgroups: Vec::new(),
            starts: BTreeMap::new(),
            open: BTreeMap::new(),
            phases: Vec::new(),
            failures: Vec::new(),
            leftovers: Vec::new(),
            supervisor: Supervisor::Running,
        }
    }

    /// The supervisor is ready: its session and cgroups, and the origin
    /// of its schedule.
    pub fn ready(&mut self, session: i32, cgroups: Vec<String>, t_ns: u64) {
        self.session = Some(session);
        self.cgroups = cgroups;
        self.started_ns = t_ns;
    }

    /// Origin of the load's schedule (CLOCK_MONOTONIC).
    pub fn started_ns(&self) -> u64 {
        self.started_ns
    }

    /// When stopping began, once it has.
    pub fn end_ns(&self) -> Option<u64> {
        self.end_ns
    }

    /// The supervisor's session, once ready.
    pub fn session(&self) -> Option<i32> {
        self.session
    }

    /// The cgroups the supervisor made, once ready.
    pub fn cgroups(&self) -> &[String] {
        &self.cgroups
    }

    /// Process groups started per part.
    pub fn starts(&self, part: &str) -> u64 {
        self.starts.get(part).copied().unwrap_or(0)
    }

    pub fn failures(&self) -> &[String] {
        &self.failures
    }

    pub fn leftovers(&self) -> &[String] {
        &self.leftovers
    }

    /// The supervisor still runs (no clean-up report, stream open).
    pub fn supervisor_running(&self) -> bool {
        self.supervisor == Supervisor::Running
    }

    /// The supervisor reported its clean-up.
    pub fn cleaned_up(&self) -> bool {
        self.supervisor == Supervisor::CleanedUp
    }

    fn say(&self, line: String) {
        say_line(&format!("rtscope: load: {line}"));
    }

    /// Tell a warning about the load.
    pub fn warn(&self, w: String) {
        say_line(&format!("rtscope: warning: load: {w}"));
    }

    fn fail(&mut self, f: String) {
        self.warn(f.clone());
        self.failures.push(f);
    }

    fn since_start(&self, t_ns: u64) -> String {
        fmt_duration(t_ns.saturating_sub(self.started_ns))
    }

    /// Take one event (`Ready` goes to [`EventLog::ready`]).
    pub fn handle(&mut self, e: Event) {
        match e {
            Event::Ready { .. } => {}
            Event::Warning { message } => self.warn(message),
            Event::Started { part, .. } => *self.starts.entry(part).or_default() += 1,
            Event::On { part, t_ns } => {
                if self.verbosity == Verbosity::Phases {
                    self.say(format!("{:>8} {part} on", self.since_start(t_ns)));
                }
                self.open.insert(part, t_ns);
            }
            Event::Off { part, t_ns } => {
                if self.verbosity == Verbosity::Phases {
                    self.say(format!("{:>8} {part} off", self.since_start(t_ns)));
                }
                if let Some(on) = self.open.remove(&part) {
                    self.phases.push(Phase::new(part, on, t_ns));
                }
            }
            Event::Failed {
                part,
                t_ns,
                message,
            } => self.fail(format!(
                "part '{part}' failed {} after the load started: {message}",
                self.since_start(t_ns)
            )),
            Event::Fatal { message } => {
                self.fail(format!("the load supervisor gave up: {message}"))
            }
            Event::Done { problems, .. } => {
                self.supervisor = Supervisor::CleanedUp;
                self.leftovers.extend(problems);
            }
        }
    }

    /// The event stream ended at `now_ns`. Before stopping began, that is
    /// a failure: the supervisor died and its parts with it.
    pub fn stream_ended(&mut self, now_ns: u64) {
        if self.supervisor == Supervisor::Running && self.end_ns.is_none() {
            // Its parts died with it (parent-death signal).
            for (part, on) in std::mem::take(&mut self.open) {
                self.phases.push(Phase::new(part, on, now_ns));
            }
            self.fail("the load supervisor ended early: the rest of the run had no load".into());
        }
        self.supervisor_gone();
    }

    /// The supervisor is gone without reporting its clean-up.
    pub fn supervisor_gone(&mut self) {
        if self.supervisor == Supervisor::Running {
            self.supervisor = Supervisor::Gone;
        }
    }

    /// Stopping begins at `now_ns`. False when it already had.
    pub fn stopping(&mut self, now_ns: u64) -> bool {
        if self.end_ns.is_some() {
            return false;
        }
        self.end_ns = Some(now_ns);
        true
    }

    /// Something the clean-up could not do, or had to force.
    pub fn leftover(&mut self, l: String) {
        self.leftovers.push(l);
    }

    /// The load is over: phases still open end when stopping began, and
    /// every left-over is told.
    pub fn close(&mut self) {
        let end = self.end_ns.unwrap_or(self.started_ns);
        for (part, on) in std::mem::take(&mut self.open) {
            self.phases.push(Phase::new(part, on, end));
        }
        self.phases.sort_by(|a, b| a.order().cmp(&b.order()));
        for l in &self.leftovers {
            self.warn(format!("clean-up: {l}"));
        }
    }

    /// Every phase in time order, those still open counted as on until
    /// `now_ns`.
    pub fn phases_until(&self, now_ns: u64) -> Vec<Phase> {
        let open = self
            .open
            .iter()
            .map(|(part, on)| Phase::new(part.clone(), *on, now_ns));
        let mut all: Vec<Phase> = self.phases.iter().cloned().chain(open).collect();
        all.sort_by(|a, b| a.order().cmp(&b.order()));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(part: &str, t_ns: u64) -> Event {
        Event::On {
            part: part.into(),
            t_ns,
        }
    }

    fn off(part: &str, t_ns: u64) -> Event {
        Event::Off {
            part: part.into(),
            t_ns,
        }
    }

    #[test]
    fn phases_pair_on_and_off_and_open_ones_end_at_the_stop() {
        let mut log = EventLog::new(Verbosity::Problems, 0);
        log.ready(42, vec!["/cg".into()], 100);
        log.handle(on("io", 300));
        log.handle(on("cpu", 200));
        log.handle(off("cpu", 400));
        log.handle(Event::Started {
            part: "cpu".into(),
            pgid: 7,
            t_ns: 200,
        });
        assert_eq!(
            log.phases_until(1_000),
            vec![
                Phase::new("cpu".into(), 200, 400),
                Phase::new("io".into(), 300, 1_000)
            ]
        );
        assert_eq!(log.starts("cpu"), 1);
        assert_eq!(log.starts("io"), 0);
        assert!(log.stopping(500));
        assert!(!log.stopping(600));
        log.close();
        assert_eq!(
            log.phases_until(9_999)[1],
            Phase::new("io".into(), 300, 500)
        );
        assert_eq!(
            (log.session(), log.cgroups()),
            (Some(42), &["/cg".into()][..])
        );
    }

    #[test]
    fn the_supervisor_ending_early_is_a_failure_and_after_stopping_is_not() {
        let mut log = EventLog::new(Verbosity::Problems, 0);
        log.handle(on("cpu", 10));
        log.stream_ended(50);
        assert!(!log.supervisor_running() && !log.cleaned_up());
        assert_eq!(log.failures().len(), 1, "{:?}", log.failures());
        assert_eq!(log.phases_until(99), vec![Phase::new("cpu".into(), 10, 50)]);

        let mut log = EventLog::new(Verbosity::Problems, 0);
        log.stopping(5);
        log.handle(Event::Done {
            t_ns: 6,
            problems: vec!["a cgroup stayed".into()],
        });
        log.stream_ended(7);
        assert!(log.cleaned_up());
        assert!(log.failures().is_empty());
        assert_eq!(log.leftovers(), ["a cgroup stayed"]);
    }
}
