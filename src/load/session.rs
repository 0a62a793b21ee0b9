//! rtscope's side of a running load: starts the load supervisor (its own
//! session, SIGTERM if rtscope dies, its stdin a pipe whose end means
//! stop), follows its events (which part is on, what started, what
//! failed), samples what the load achieved, and at the end stops it,
//! checks that it cleaned up (or cleans up itself if it could not), and
//! turns all of it into the run record's [`LoadRecord`].
//!
//! Stopping happens on every path: `stop()` at the normal end, `Drop` on
//! errors and panics, the supervisor's own parent-death handling when
//! rtscope is killed. Never forks once measuring has begun: the
//! supervisor is started before.

use super::achieved::{self, Sampler};
use super::cleanup::{self, Cleaner, Footprint};
use super::event::Event;
use super::oom::OomGuard;
use super::plan::LoadPlan;
use super::supervisor;
use crate::engine::{Control, Observer, RunView};
use crate::record::{LoadCommand, LoadPart, LoadPhase, LoadRecord};
use crate::sys::clock::{self, Clock};
use crate::sys::process::{self, ChildSetup};
use crate::ui::say_line;
use crate::units::{fmt_duration, format_cpu_list};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use thiserror::Error;

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

/// How chatty the session is on standard error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verbosity {
    /// Warnings and failures only.
    Problems,
    /// Also every part going on and off.
    Phases,
}

fn mono() -> u64 {
    clock::now_ns(Clock::Monotonic)
}

/// Where the load supervisor is, as its event stream tells. (Whether the
/// load was stopped is `end_ns` being set.)
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
struct Phase {
    part: String,
    on_ns: u64,
    off_ns: u64,
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

/// A running load.
pub struct LoadSession {
    plan: LoadPlan,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    events: Receiver<Event>,
    reader: Option<JoinHandle<()>>,
    verbosity: Verbosity,
    oom: Option<OomGuard>,
    sampler: Sampler,
    /// Origin of offsets (CLOCK_MONOTONIC): the run's start.
    origin_ns: u64,
    started_ns: u64,
    end_ns: Option<u64>,
    session: Option<i32>,
    cgroups: Vec<String>,
    starts: BTreeMap<String, u64>,
    open: BTreeMap<String, u64>,
    phases: Vec<Phase>,
    failures: Vec<String>,
    leftovers: Vec<String>,
    supervisor: Supervisor,
    shared: SharedLoadRecord,
    shared_at: Option<Instant>,
}

/// The load record so far, refreshed every [`SHARE_EVERY`] while a
/// measurement runs: for observers that write checkpoints (they cannot
/// borrow the session, which the run's fan-out holds).
pub type SharedLoadRecord = Arc<Mutex<Option<LoadRecord>>>;

/// How often the shared record is refreshed.
pub const SHARE_EVERY: Duration = Duration::from_secs(5);

impl LoadSession {
    /// Start `plan` and return once its first parts are running.
    pub fn start(plan: LoadPlan, verbosity: Verbosity) -> Result<LoadSession, SessionError> {
        let mut warnings = Vec::new();
        let oom = match OomGuard::protect() {
            Ok(g) => Some(g),
            Err(w) => {
                warnings.push(w);
                None
            }
        };
        // This very binary, even if the file was replaced since it started.
        let mut cmd = Command::new(process::SELF_EXE);
        cmd.arg(supervisor::SUBCOMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let setup = ChildSetup {
            new_session: true,
            parent_death_signal: Some(process::SIGTERM),
            expected_parent: process::getpid(),
            reset_scheduler: true,
            ..Default::default()
        };
        let mut child = process::spawn(&mut cmd, &setup).map_err(SessionError::Spawn)?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::Builder::new()
            .name("rtscope-load-events".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if let Some(e) = Event::from_line(&line)
                        && tx.send(e).is_err()
                    {
                        break;
                    }
                }
            })
            .map_err(SessionError::Spawn)?;
        let mut s = LoadSession {
            plan,
            child: Some(child),
            stdin: Some(stdin),
            events: rx,
            reader: Some(reader),
            verbosity,
            oom,
            sampler: Sampler::new(),
            origin_ns: mono(),
            started_ns: mono(),
            end_ns: None,
            session: None,
            cgroups: Vec::new(),
            starts: BTreeMap::new(),
            open: BTreeMap::new(),
            phases: Vec::new(),
            failures: Vec::new(),
            leftovers: Vec::new(),
            supervisor: Supervisor::Running,
            shared: Arc::new(Mutex::new(None)),
            shared_at: None,
        };
        let line = serde_json::to_string(&s.plan).expect("plan serializes") + "\n";
        let sent = match s.stdin.as_mut() {
            Some(w) => w.write_all(line.as_bytes()).and_then(|_| w.flush()),
            None => Ok(()),
        };
        if let Err(e) = sent {
            s.stop();
            return Err(SessionError::Died(format!(" (writing its plan: {e})")));
        }
        for w in warnings {
            s.note_warning(w);
        }
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match s.events.recv_timeout(left) {
                Ok(Event::Fatal { message }) => {
                    s.stop();
                    return Err(SessionError::Fatal(message));
                }
                Ok(Event::Ready {
                    session,
                    cgroups,
                    t_ns,
                    ..
                }) => {
                    s.session = Some(session);
                    s.cgroups = cgroups;
                    s.started_ns = t_ns;
                    s.set_origin(t_ns);
                    break;
                }
                Ok(e) => s.handle(e),
                Err(RecvTimeoutError::Timeout) => {
                    s.stop();
                    return Err(SessionError::Timeout(READY_TIMEOUT));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    s.supervisor = Supervisor::Gone;
                    let status = s
                        .child
                        .as_mut()
                        .and_then(|c| c.wait().ok())
                        .map(|st| format!(" ({st})"))
                        .unwrap_or_default();
                    s.stop();
                    return Err(SessionError::Died(status));
                }
            }
        }
        std::thread::sleep(SETTLE);
        s.poll();
        Ok(s)
    }

    pub fn plan(&self) -> &LoadPlan {
        &self.plan
    }

    /// Time since the load started (its schedule's origin).
    pub fn elapsed_ns(&self) -> u64 {
        mono().saturating_sub(self.started_ns)
    }

    /// Express phase and sample times from `origin_ns` (CLOCK_MONOTONIC),
    /// the start of the run.
    pub fn set_origin(&mut self, origin_ns: u64) {
        self.origin_ns = origin_ns;
        self.sampler.set_origin(origin_ns);
    }

    fn offset(&self, t_ns: u64) -> u64 {
        t_ns.saturating_sub(self.origin_ns)
    }

    fn say(&self, line: String) {
        say_line(&format!("rtscope: load: {line}"));
    }

    fn note_warning(&mut self, w: String) {
        say_line(&format!("rtscope: warning: load: {w}"));
    }

    fn handle(&mut self, e: Event) {
        match e {
            Event::Ready { .. } => {}
            Event::Warning { message } => self.note_warning(message),
            Event::Started { part, .. } => *self.starts.entry(part).or_default() += 1,
            Event::On { part, t_ns } => {
                if self.verbosity == Verbosity::Phases {
                    self.say(format!(
                        "{:>8} {part} on",
                        fmt_duration(t_ns.saturating_sub(self.started_ns))
                    ));
                }
                self.open.insert(part, t_ns);
            }
            Event::Off { part, t_ns } => {
                if self.verbosity == Verbosity::Phases {
                    self.say(format!(
                        "{:>8} {part} off",
                        fmt_duration(t_ns.saturating_sub(self.started_ns))
                    ));
                }
                if let Some(on) = self.open.remove(&part) {
                    self.phases.push(Phase::new(part, on, t_ns));
                }
            }
            Event::Failed {
                part,
                t_ns,
                message,
            } => {
                let f = format!(
                    "part '{part}' failed {} after the load started: {message}",
                    fmt_duration(t_ns.saturating_sub(self.started_ns))
                );
                say_line(&format!("rtscope: warning: load: {f}"));
                self.failures.push(f);
            }
            Event::Fatal { message } => {
                let f = format!("the load supervisor gave up: {message}");
                say_line(&format!("rtscope: warning: load: {f}"));
                self.failures.push(f);
            }
            Event::Done { problems, .. } => {
                self.supervisor = Supervisor::CleanedUp;
                self.leftovers.extend(problems);
            }
        }
    }

    /// Take the events that arrived and a sample if one is due. Call it
    /// often (every tick).
    pub fn poll(&mut self) {
        loop {
            match self.events.try_recv() {
                Ok(e) => self.handle(e),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    if self.supervisor == Supervisor::Running && self.end_ns.is_none() {
                        // Its parts died with it (parent-death signal).
                        let now = mono();
                        for (part, on) in std::mem::take(&mut self.open) {
                            self.phases.push(Phase::new(part, on, now));
                        }
                        let f = "the load supervisor ended early: the rest of the run had no load"
                            .to_string();
                        say_line(&format!("rtscope: warning: load: {f}"));
                        self.failures.push(f);
                    }
                    if self.supervisor == Supervisor::Running {
                        self.supervisor = Supervisor::Gone;
                    }
                    break;
                }
            }
        }
        self.sampler.maybe_sample(mono());
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
        self.shared.clone()
    }

    /// Failures so far (to warn about in the run record).
    pub fn failures(&self) -> &[String] {
        &self.failures
    }

    /// Stop the load and clean up; idempotent.
    pub fn stop(&mut self) {
        if self.end_ns.is_some() {
            return;
        }
        // Set first: a poll from here on knows the load is being stopped.
        let now = mono();
        self.end_ns = Some(now);
        self.poll();
        self.sampler.finish(now);
        // Closing stdin tells the supervisor to stop.
        drop(self.stdin.take());
        let deadline = Instant::now() + DONE_TIMEOUT;
        while self.supervisor == Supervisor::Running {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.events.recv_timeout(left) {
                Ok(e) => self.handle(e),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => self.supervisor = Supervisor::Gone,
            }
        }
        if let Some(mut child) = self.child.take() {
            let waited = wait_timeout(&mut child, Duration::from_secs(5));
            if !waited {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        while let Ok(e) = self.events.try_recv() {
            self.handle(e);
        }
        if self.supervisor != Supervisor::CleanedUp {
            self.leftovers.push(
                "the load supervisor did not report its clean-up: rtscope cleaned up itself".into(),
            );
            let footprint = Footprint::of_plan(&self.plan, self.session, &self.cgroups);
            self.leftovers
                .extend(cleanup::clean_up(&footprint, Cleaner::Rtscope));
        }
        // Phases still open end now.
        let end = self.end_ns.unwrap_or(now);
        for (part, on) in std::mem::take(&mut self.open) {
            self.phases.push(Phase::new(part, on, end));
        }
        self.phases.sort_by(|a, b| a.order().cmp(&b.order()));
        for l in self.leftovers.clone() {
            say_line(&format!("rtscope: warning: load: clean-up: {l}"));
        }
        if let Some(g) = self.oom.take()
            && let Some(w) = g.restore()
        {
            self.note_warning(w);
        }
    }

    /// The record of this load, with times from the origin and phases
    /// clipped to `[0, end_offset_ns]` when given.
    pub fn record(&self, end_offset_ns: Option<u64>) -> LoadRecord {
        let clip = |v: u64| end_offset_ns.map_or(v, |e| v.min(e));
        // Parts on now count as on until now.
        let now = self.end_ns.unwrap_or_else(mono);
        let open = self
            .open
            .iter()
            .map(|(part, on)| Phase::new(part.clone(), *on, now));
        let mut all: Vec<Phase> = self.phases.iter().cloned().chain(open).collect();
        all.sort_by(|a, b| a.order().cmp(&b.order()));
        let phases = all
            .iter()
            .map(|p| LoadPhase {
                part: p.part.clone(),
                start_offset_ns: clip(self.offset(p.on_ns)),
                end_offset_ns: clip(self.offset(p.off_ns)),
            })
            .filter(|p| p.end_offset_ns > p.start_offset_ns)
            .collect();
        LoadRecord {
            profile: self.plan.profile.clone(),
            seed: self.plan.seed,
            commands: self
                .plan
                .parts
                .iter()
                .map(|p| LoadCommand {
                    part: p.name.clone(),
                    argv: p.argv.clone(),
                    starts: self.starts.get(&p.name).copied().unwrap_or(0),
                })
                .collect(),
            phases,
            achieved: self.sampler.summary(),
            failures: self.failures.clone(),
            cpus: Some(format_cpu_list(&self.plan.cpus)),
            parts: self
                .plan
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
            scratch_dir: Some(self.plan.scratch_dir.display().to_string()),
            cgroups: self.cgroups.clone(),
            session_id: self.session.map(|s| s as u32),
            leftovers: self.leftovers.clone(),
        }
    }

    /// Warnings for the run record: failures and left-overs.
    pub fn run_warnings(&self) -> Vec<String> {
        let mut w: Vec<String> = self
            .failures
            .iter()
            .map(|f| format!("load: {f}; the run was not loaded as intended"))
            .collect();
        w.extend(self.leftovers.iter().map(|l| format!("load clean-up: {l}")));
        w
    }

    /// One line for people: the profile and what it achieved.
    pub fn describe(&self) -> String {
        let rec = self.record(None);
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
        if self.shared_at.is_none_or(|t| t.elapsed() >= SHARE_EVERY) {
            self.shared_at = Some(Instant::now());
            let rec = self.record(Some(view.elapsed_ns()));
            if let Ok(mut g) = self.shared.lock() {
                *g = Some(rec);
            }
        }
        Control::Continue
    }
}

fn wait_timeout(child: &mut Child, limit: Duration) -> bool {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return true,
            Ok(None) if start.elapsed() >= limit => return false,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}
