//! The load supervisor: a child process of rtscope (`rtscope
//! __load-supervisor`) that runs a [`LoadPlan`]. It starts each part's
//! bursts in a process group of their own (in the load's cgroups, on the
//! load CPUs, SCHED_OTHER, first in line for the OOM killer), restarts
//! commands that end by themselves while their part is on, reports
//! failures, and at the end ends every group, then has [`cleanup`] kill
//! what escaped and remove the cgroups and the scratch directory, and
//! says what it could not do.
//!
//! Why a separate process: rtscope's measuring process never forks during
//! a measurement (a fork would turn its memory copy-on-write under the
//! measuring threads), and the clean-up survives rtscope: the supervisor
//! leads its own session, gets SIGTERM when rtscope dies
//! (PR_SET_PDEATHSIG) and sees its standard input close, and is the
//! subreaper of everything it starts. Its children get SIGKILL if it dies.
//!
//! Protocol: rtscope writes the plan as one JSON line on standard input
//! and keeps it open; closing it (or SIGTERM) means stop. Events go to
//! standard output, one JSON line each ([`Event`]).

use super::cgroup::{self, LoadCgroup};
use super::cleanup::{self, Cleaner, Footprint};
use super::event::Event;
use super::plan::{LoadPlan, PartPlan};
use super::schedule::Bursts;
use crate::sys::clock::{self, Clock};
use crate::sys::process::{self, ChildEnd, ChildSetup};
use crate::units::{fmt_duration, format_cpu_list};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The hidden subcommand that runs the supervisor.
pub const SUBCOMMAND: &str = "__load-supervisor";
/// Its name in ps and top.
pub const PROCESS_NAME: &str = "rtscope-load";

/// Time a group has between SIGTERM and SIGKILL.
const GRACE_NS: u64 = 1_000_000_000;
/// A part that fails this many times in a row is given up.
const MAX_FAILURES: u32 = 5;
/// A command that ends by itself is started again at most this often.
const MIN_RUN_NS: u64 = 1_000_000_000;
/// A run at least this long before failing was a good run.
const LONG_RUN_NS: u64 = 60_000_000_000;
/// How often the loop looks around.
const POLL_MS: i32 = 20;
/// The OOM score of load processes: the OOM killer's first choice.
const LOAD_OOM_SCORE_ADJ: i32 = 1000;

fn now() -> u64 {
    clock::now_ns(Clock::Monotonic)
}

#[derive(Debug)]
struct Group {
    pgid: i32,
    started_ns: u64,
    main_end: Option<ChildEnd>,
    term_ns: Option<u64>,
    killed: bool,
    warned: bool,
}

struct PartRun {
    plan: PartPlan,
    bursts: Bursts,
    window: (u64, u64),
    on: bool,
    group: Option<Group>,
    stopping: Vec<Group>,
    failures_in_row: u32,
    retry_ns: Option<u64>,
    given_up: bool,
    log: PathBuf,
}

struct Out {
    stdout: std::io::Stdout,
    broken: bool,
}

impl Out {
    fn send(&mut self, e: &Event) {
        if self.broken {
            return;
        }
        let mut lock = self.stdout.lock();
        if lock
            .write_all(e.to_line().as_bytes())
            .and_then(|_| lock.flush())
            .is_err()
        {
            // rtscope is gone: carry on cleaning up.
            self.broken = true;
        }
    }
}

/// Entry point of `rtscope __load-supervisor`. Returns the exit status.
pub fn main() -> i32 {
    // Exec'd as /proc/self/exe, it would show as "exe" in ps.
    let _ = crate::sys::thread::set_name(PROCESS_NAME);
    let mut out = Out {
        stdout: std::io::stdout(),
        broken: false,
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [process::SIGTERM, process::SIGINT, process::SIGHUP] {
        if let Err(e) = signal_hook::flag::register(sig, stop.clone()) {
            out.send(&Event::Fatal {
                message: format!("load supervisor: could not handle signal {sig}: {e}"),
            });
            return 2;
        }
    }
    let mut line = String::new();
    if let Err(e) = std::io::stdin().lock().read_line(&mut line) {
        out.send(&Event::Fatal {
            message: format!("load supervisor: reading the plan: {e}"),
        });
        return 2;
    }
    let plan: LoadPlan = match serde_json::from_str(line.trim()) {
        Ok(p) => p,
        Err(e) => {
            out.send(&Event::Fatal {
                message: format!(
                    "load supervisor: bad plan ({e}); run it through rtscope load or measure --load"
                ),
            });
            return 2;
        }
    };
    Supervisor::new(plan, out, stop).run()
}

struct Supervisor {
    plan: LoadPlan,
    out: Out,
    stop: Arc<AtomicBool>,
    me: i32,
    t0: u64,
    cgroups: Vec<LoadCgroup>,
    parts: Vec<PartRun>,
    problems: Vec<String>,
}

impl Supervisor {
    fn new(plan: LoadPlan, out: Out, stop: Arc<AtomicBool>) -> Supervisor {
        Supervisor {
            plan,
            out,
            stop,
            me: process::getpid(),
            t0: now(),
            cgroups: Vec::new(),
            parts: Vec::new(),
            problems: Vec::new(),
        }
    }

    fn warn(&mut self, message: String) {
        self.out.send(&Event::Warning { message });
    }

    fn run(mut self) -> i32 {
        if let Err(e) = process::set_child_subreaper() {
            self.warn(format!(
                "prctl(PR_SET_CHILD_SUBREAPER) failed ({e}): processes orphaned by a load are left to init"
            ));
        }
        let base = self
            .plan
            .scratch_dir
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/var/tmp"));
        for w in cgroup::sweep_stale(&base) {
            self.warn(w);
        }
        if let Err(e) = make_scratch(&self.plan.scratch_dir) {
            self.out.send(&Event::Fatal {
                message: format!(
                    "could not create the scratch directory {}: {e} (use --load-dir on a writable disk)",
                    self.plan.scratch_dir.display()
                ),
            });
            return 2;
        }
        self.make_cgroups();
        self.t0 = now();
        for p in self.plan.parts.clone() {
            let mut bursts = p.schedule.bursts();
            let window = bursts.next().unwrap_or((u64::MAX, u64::MAX));
            let log = self.plan.scratch_dir.join(format!("{}.log", p.name));
            self.parts.push(PartRun {
                plan: p,
                bursts,
                window,
                on: false,
                group: None,
                stopping: Vec::new(),
                failures_in_row: 0,
                retry_ns: None,
                given_up: false,
                log,
            });
        }
        // Start what is due at once, then say we are ready.
        self.step(false);
        let session = process::getpid();
        let cgroups = self
            .cgroups
            .iter()
            .map(|c| c.dir.path.display().to_string())
            .collect();
        self.out.send(&Event::Ready {
            session,
            cgroups,
            t_ns: self.t0,
        });
        loop {
            if self.stop.load(Ordering::SeqCst) || self.out.broken || stdin_closed() {
                break;
            }
            self.step(false);
        }
        self.shutdown();
        0
    }

    fn make_cgroups(&mut self) {
        let name = self.plan.cgroup_name.clone();
        let cpus = format_cpu_list(&self.plan.cpus);
        match LoadCgroup::cpuset(&name, &cpus) {
            Ok(c) => self.cgroups.push(c),
            Err(e) => self.warn(format!(
                "no cpuset cgroup for the load ({e}); its processes are placed on CPUs {cpus} by affinity only"
            )),
        }
        match LoadCgroup::cpu(&name) {
            Ok(c) => self.cgroups.push(c),
            Err(e) => self.warn(format!(
                "no cpu cgroup for the load ({e}); its processes compete one by one with rtscope's own non-real-time threads"
            )),
        }
    }

    /// One look around: reap, follow the schedule, stop what must stop.
    fn step(&mut self, shutting_down: bool) {
        self.reap();
        let t = now();
        let off = t.saturating_sub(self.t0);
        for i in 0..self.parts.len() {
            self.follow(i, t, off, shutting_down);
        }
        if !shutting_down {
            let _ = process::wait_readable(0, POLL_MS);
        } else {
            std::thread::sleep(Duration::from_millis(POLL_MS as u64));
        }
    }

    fn reap(&mut self) {
        while let Ok(Some((pid, end))) = process::reap_any() {
            for p in &mut self.parts {
                for g in p.group.iter_mut().chain(p.stopping.iter_mut()) {
                    if g.pgid == pid {
                        g.main_end = Some(end);
                    }
                }
            }
        }
    }

    /// One step of part `i` at time `t` (`off` into the run): move its
    /// burst window, note a main process that ended, start or stop it as
    /// the window says, and reap the groups on their way out.
    fn follow(&mut self, i: usize, t: u64, off: u64, shutting_down: bool) {
        let desired = self.advance_window(i, off, shutting_down);
        self.note_ended(i, t, off, desired);
        let due = self.parts[i].retry_ns.is_none_or(|r| off >= r);
        if desired && self.parts[i].group.is_none() && due {
            self.start(i, t, off);
        }
        if !desired && let Some(mut g) = self.parts[i].group.take() {
            begin_stop(&mut g, t);
            self.parts[i].stopping.push(g);
        }
        self.reap_stopping(i, t);
        let p = &mut self.parts[i];
        if p.on && !desired && p.group.is_none() && p.stopping.is_empty() {
            p.on = false;
            let part = p.plan.name.clone();
            self.out.send(&Event::Off { part, t_ns: t });
        }
    }

    /// Advance part `i`'s burst window to `off`; whether it should run.
    fn advance_window(&mut self, i: usize, off: u64, shutting_down: bool) -> bool {
        let p = &mut self.parts[i];
        while p.window.1 <= off {
            p.window = p.bursts.next().unwrap_or((u64::MAX, u64::MAX));
        }
        !shutting_down && !p.given_up && p.window.0 <= off && off < p.window.1
    }

    /// The main process of the current group ended by itself: stop the
    /// group, and count a failure (or pace a quick clean exit) when the
    /// part should still be running.
    fn note_ended(&mut self, i: usize, t: u64, off: u64, desired: bool) {
        let ended = self.parts[i]
            .group
            .as_ref()
            .and_then(|g| g.main_end.map(|e| (e, g.started_ns)));
        let Some((end, started)) = ended else {
            return;
        };
        let mut g = self.parts[i].group.take().expect("group present");
        begin_stop(&mut g, t);
        self.parts[i].stopping.push(g);
        let ran = t.saturating_sub(started);
        if !desired {
            return;
        }
        if end == ChildEnd::Exited(0) {
            let p = &mut self.parts[i];
            p.failures_in_row = 0;
            if ran < MIN_RUN_NS {
                // At most one start a second.
                let started_off = started.saturating_sub(self.t0);
                p.retry_ns = Some(started_off + MIN_RUN_NS);
            }
        } else {
            if ran >= LONG_RUN_NS {
                // A failure after a long good run starts a new count.
                self.parts[i].failures_in_row = 0;
            }
            self.failed(
                i,
                t,
                off,
                format!("ended with {end} after {}", fmt_duration(ran)),
            );
        }
    }

    /// Start part `i`'s command in a new process group.
    fn start(&mut self, i: usize, t: u64, off: u64) {
        self.parts[i].retry_ns = None;
        match self.spawn(i) {
            Ok(pgid) => {
                let p = &mut self.parts[i];
                p.group = Some(Group {
                    pgid,
                    started_ns: t,
                    main_end: None,
                    term_ns: None,
                    killed: false,
                    warned: false,
                });
                let part = p.plan.name.clone();
                let was_on = p.on;
                p.on = true;
                self.out.send(&Event::Started {
                    part: part.clone(),
                    pgid,
                    t_ns: t,
                });
                if !was_on {
                    self.out.send(&Event::On { part, t_ns: t });
                }
            }
            Err(e) => self.failed(i, t, off, format!("could not start: {e}")),
        }
    }

    /// Groups of part `i` on their way out: forget those gone, SIGKILL
    /// those past the grace time, warn once about one that stays.
    fn reap_stopping(&mut self, i: usize, t: u64) {
        let mut still = Vec::new();
        for mut g in std::mem::take(&mut self.parts[i].stopping) {
            if !process::group_alive(g.pgid) {
                continue;
            }
            if !g.killed && g.term_ns.is_some_and(|s| t >= s + GRACE_NS) {
                let _ = process::kill_group(g.pgid, process::SIGKILL);
                g.killed = true;
            }
            if g.killed && !g.warned && g.term_ns.is_some_and(|s| t >= s + 10 * GRACE_NS) {
                g.warned = true;
                let msg = format!(
                    "part '{}': process group {} is still there 10 s after SIGKILL (a process stuck in the kernel?)",
                    self.parts[i].plan.name, g.pgid
                );
                self.warn(msg);
            }
            still.push(g);
        }
        self.parts[i].stopping = still;
    }

    fn failed(&mut self, i: usize, t: u64, off: u64, what: String) {
        let p = &mut self.parts[i];
        p.failures_in_row += 1;
        let tail = last_line(&p.log);
        let mut message = format!("{} {what}", p.plan.argv[0]);
        if let Some(tail) = tail {
            message.push_str(&format!(": {tail}"));
        }
        if p.failures_in_row >= MAX_FAILURES {
            p.given_up = true;
            message.push_str(&format!(
                " (failed {MAX_FAILURES} times in a row: not started again)"
            ));
        } else {
            let backoff = MIN_RUN_NS << (p.failures_in_row - 1).min(5);
            p.retry_ns = Some(off + backoff);
        }
        let part = p.plan.name.clone();
        self.out.send(&Event::Failed {
            part: part.clone(),
            t_ns: t,
            message,
        });
        let p = &mut self.parts[i];
        if p.on && p.group.is_none() {
            p.on = false;
            self.out.send(&Event::Off { part, t_ns: t });
        }
    }

    fn spawn(&mut self, i: usize) -> std::io::Result<i32> {
        let p = &self.parts[i];
        let log = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&p.log)?;
        let mut cmd = Command::new(&p.plan.argv[0]);
        cmd.args(&p.plan.argv[1..])
            .current_dir(&self.plan.scratch_dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        let cgroup_procs = self
            .cgroups
            .iter()
            .filter(|c| !(p.plan.realtime && c.dir.controller == "cpu"))
            .map(|c| process::raw_fd(&c.procs))
            .collect();
        let setup = ChildSetup {
            new_group: true,
            parent_death_signal: Some(process::SIGKILL),
            expected_parent: self.me,
            cgroup_procs,
            cpus: Some(self.plan.cpus.clone()),
            reset_scheduler: true,
            nice: (self.plan.nice != 0 && !p.plan.realtime).then_some(self.plan.nice),
            oom_score_adj: Some(LOAD_OOM_SCORE_ADJ),
            ..Default::default()
        };
        let child = process::spawn(&mut cmd, &setup)?;
        // Reaped by `reap`: the handle is not waited on.
        Ok(child.id() as i32)
    }

    fn shutdown(&mut self) {
        let deadline = now() + 15 * GRACE_NS;
        loop {
            self.step(true);
            let busy = self
                .parts
                .iter()
                .any(|p| p.group.is_some() || !p.stopping.is_empty());
            if !busy || now() >= deadline {
                break;
            }
        }
        for p in &self.parts {
            for g in &p.stopping {
                self.problems.push(format!(
                    "part '{}': process group {} did not end",
                    p.plan.name, g.pgid
                ));
            }
        }
        let footprint = Footprint {
            session: Some(self.me),
            cgroups: self.cgroups.iter().map(|c| c.dir.clone()).collect(),
            scratch_dir: self.plan.scratch_dir.clone(),
        };
        self.problems
            .extend(cleanup::clean_up(&footprint, Cleaner::Supervisor));
        self.cgroups.clear();
        let problems = std::mem::take(&mut self.problems);
        self.out.send(&Event::Done {
            t_ns: now(),
            problems,
        });
    }
}

fn begin_stop(g: &mut Group, t: u64) {
    if g.term_ns.is_none() {
        g.term_ns = Some(t);
        if process::group_alive(g.pgid) {
            let _ = process::kill_group(g.pgid, process::SIGTERM);
        }
    }
}

fn make_scratch(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Standard input reached its end (rtscope closed it or died).
fn stdin_closed() -> bool {
    match process::wait_readable(0, 0) {
        Ok(true) => {
            let mut buf = [0u8; 256];
            matches!(std::io::stdin().read(&mut buf), Ok(0) | Err(_))
        }
        Ok(false) => false,
        Err(_) => true,
    }
}

/// The last non-empty line of a part's log, shortened.
fn last_line(log: &Path) -> Option<String> {
    let text = std::fs::read(log).ok()?;
    let text = String::from_utf8_lossy(&text[text.len().saturating_sub(4096)..]).into_owned();
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?.trim();
    Some(crate::units::shorten(line, 200))
}
