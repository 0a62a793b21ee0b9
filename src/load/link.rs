//! rtscope's end of the load supervisor: starts it (this very binary, a
//! session of its own, SIGTERM if rtscope dies), hands it the plan on a
//! pipe whose end means stop, reads its events on a thread of their own,
//! and at the end waits for it (or kills it). Holds rtscope's protection
//! from the OOM killer while the load runs.
//!
//! Only moves bytes and processes: never interprets an event, never
//! prints, never cleans up after the load (that is [`super::cleanup`]).
//! Never forks once measuring has begun: the supervisor is started before.

use super::event::Event;
use super::oom::OomGuard;
use super::plan::LoadPlan;
use super::supervisor;
use crate::sys::process::{self, ChildSetup};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Time the supervisor has to end once its events have ended.
const EXIT_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether this process has said why it could not protect itself from
/// the OOM killer.
static OOM_WARNED: AtomicBool = AtomicBool::new(false);

/// A running load supervisor.
pub struct SupervisorLink {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    events: Receiver<Event>,
    reader: Option<JoinHandle<()>>,
    oom: Option<OomGuard>,
}

impl SupervisorLink {
    /// Protect rtscope from the OOM killer, then start the supervisor.
    /// Returns the link and the warnings of the protection.
    pub fn spawn() -> std::io::Result<(SupervisorLink, Vec<String>)> {
        let mut warnings = Vec::new();
        let oom = match OomGuard::protect() {
            Ok(g) => Some(g),
            Err(w) => {
                // Said once per process: a study starts a load for each
                // of its runs, and the reason does not change between them.
                if !OOM_WARNED.swap(true, Ordering::Relaxed) {
                    warnings.push(w.to_string());
                }
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
        let mut child = process::spawn(&mut cmd, &setup)?;
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
            })?;
        let link = SupervisorLink {
            child: Some(child),
            stdin: Some(stdin),
            events: rx,
            reader: Some(reader),
            oom,
        };
        Ok((link, warnings))
    }

    /// Hand the supervisor its plan (one JSON line).
    pub fn send_plan(&mut self, plan: &LoadPlan) -> std::io::Result<()> {
        let line = serde_json::to_string(plan).expect("plan serializes") + "\n";
        match self.stdin.as_mut() {
            Some(w) => w.write_all(line.as_bytes()).and_then(|_| w.flush()),
            None => Ok(()),
        }
    }

    /// The next event, waiting up to `limit`.
    pub fn next_event(&self, limit: Duration) -> Result<Event, RecvTimeoutError> {
        self.events.recv_timeout(limit)
    }

    /// An event that has already arrived.
    pub fn try_event(&self) -> Result<Event, TryRecvError> {
        self.events.try_recv()
    }

    /// Tell the supervisor to stop (closing its standard input).
    pub fn ask_to_stop(&mut self) {
        drop(self.stdin.take());
    }

    /// Wait for the supervisor to end (its events have ended): its exit
    /// status, when it could be read.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.as_mut().and_then(|c| c.wait().ok())
    }

    /// Wait for the supervisor to end, killing it if it does not within
    /// [`EXIT_TIMEOUT`], and for the event reader to finish. Events still
    /// queued stay for [`SupervisorLink::try_event`].
    pub fn end(&mut self) {
        if let Some(mut child) = self.child.take()
            && !wait_timeout(&mut child, EXIT_TIMEOUT)
        {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }

    /// Put rtscope's OOM score back: a warning when that failed.
    pub fn restore_oom(&mut self) -> Option<String> {
        self.oom.take().and_then(OomGuard::restore)
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
