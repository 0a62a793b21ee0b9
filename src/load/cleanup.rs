//! Ending what is left of a load and removing its traces: the processes
//! still in its session, those that escaped the session into its cgroups,
//! the cgroups themselves and the scratch directory. One function,
//! [`clean_up`], for both who clean up: the supervisor once it has ended
//! its parts' process groups, and rtscope when the supervisor could not
//! (it died or hung).
//!
//! Touches only what a [`Footprint`] names, and never the process that
//! cleans up. Never panics: what it could not do comes back as sentences
//! for the record's left-overs.

use super::cgroup::CgroupDir;
use super::procs::{self, ProcStat};
use crate::sys::process;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

/// Rounds of killing the session's processes and looking again.
const ROUNDS: u32 = 100;
/// Pause between rounds.
const ROUND_PAUSE: Duration = Duration::from_millis(20);
/// Time a cgroup has to lose its exiting members before its removal fails.
const CGROUP_PATIENCE: Duration = Duration::from_secs(3);

/// Everything a load puts on the system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// The supervisor's session (its pid), once known.
    pub session: Option<i32>,
    pub cgroups: Vec<CgroupDir>,
    pub scratch_dir: PathBuf,
}

/// Who cleans up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cleaner {
    /// The supervisor (this process), after ending its parts' process
    /// groups: it spares itself, reaps what it kills (it is their
    /// subreaper), and anything still in its session had left its group.
    Supervisor,
    /// rtscope, for a supervisor that is gone: every process in the
    /// session is the load's, and rtscope reaps nothing (its own children
    /// are not the load's).
    Rtscope,
}

impl Cleaner {
    /// The process never to kill.
    fn spared(self) -> Option<i32> {
        match self {
            Cleaner::Supervisor => Some(process::getpid()),
            Cleaner::Rtscope => None,
        }
    }

    fn reap(self) {
        if self == Cleaner::Supervisor {
            while let Ok(Some(_)) = process::reap_any() {}
        }
    }
}

/// End every process of `footprint` and remove its cgroups and scratch
/// directory. Returns what could not be done, or what had to be forced.
pub fn clean_up(footprint: &Footprint, by: Cleaner) -> Vec<String> {
    let spared = by.spared();
    let mut problems = Vec::new();
    if let Some(sid) = footprint.session {
        problems.extend(end_session(sid, by));
    }
    // Anything that left the session but not the cgroup.
    for c in &footprint.cgroups {
        let left: Vec<i32> = c
            .members()
            .into_iter()
            .filter(|&p| Some(p) != spared)
            .collect();
        if !left.is_empty() {
            for &pid in &left {
                let _ = process::kill(pid, process::SIGKILL);
            }
            problems.push(format!(
                "{} process(es) had left the load's session and were killed from its {} cgroup",
                left.len(),
                c.controller
            ));
        }
    }
    for c in &footprint.cgroups {
        by.reap();
        if let Err(e) = c.remove(CGROUP_PATIENCE) {
            problems.push(format!(
                "could not remove the cgroup {} ({e}): remove it by hand once empty (rmdir)",
                c.path.display()
            ));
        }
    }
    match std::fs::remove_dir_all(&footprint.scratch_dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => problems.push(format!(
            "could not remove the scratch directory {} ({e}): remove it by hand",
            footprint.scratch_dir.display()
        )),
    }
    problems
}

/// SIGKILL every process of session `sid` but the cleaner, round after
/// round, until none is left.
fn end_session(sid: i32, by: Cleaner) -> Vec<String> {
    let spared = by.spared();
    let mut problems = Vec::new();
    for round in 0..ROUNDS {
        by.reap();
        let left = procs::in_session(sid, spared.unwrap_or(0));
        if left.is_empty() {
            break;
        }
        if round == 0 && by == Cleaner::Supervisor {
            problems.push(format!(
                "{} load process(es) had left their process group and were killed: {}",
                left.len(),
                list(&left)
            ));
        }
        if round == ROUNDS - 1 {
            problems.push(format!(
                "{} load process(es) did not end: {}",
                left.len(),
                list(&left)
            ));
            break;
        }
        // Whole groups catch what forks meanwhile; never the cleaner's own.
        let groups: BTreeSet<i32> = left.iter().map(|p| p.pgrp).collect();
        for g in groups.into_iter().filter(|&g| Some(g) != spared) {
            let _ = process::kill_group(g, process::SIGKILL);
        }
        for p in &left {
            let _ = process::kill(p.pid, process::SIGKILL);
        }
        std::thread::sleep(ROUND_PAUSE);
    }
    problems
}

/// `pid (comm), ...`
fn list(ps: &[ProcStat]) -> String {
    ps.iter()
        .map(|p| format!("{} ({})", p.pid, p.comm))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::process::ChildSetup;
    use std::process::{Command, Stdio};

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("rtscope-cleanup-{name}-{}", process::getpid()))
    }

    #[test]
    fn removes_the_scratch_directory_and_a_missing_one_is_no_problem() {
        let dir = scratch("dir");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/f"), b"x").unwrap();
        let fp = Footprint {
            session: None,
            cgroups: Vec::new(),
            scratch_dir: dir.clone(),
        };
        assert_eq!(clean_up(&fp, Cleaner::Rtscope), Vec::<String>::new());
        assert!(!dir.exists());
        assert_eq!(clean_up(&fp, Cleaner::Rtscope), Vec::<String>::new());
    }

    #[test]
    fn ends_every_process_of_the_session_quietly_for_rtscope() {
        // A session of its own whose leader is not the cleaner, as a
        // supervisor that died would leave.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 60 & exec sleep 60"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let setup = ChildSetup {
            new_session: true,
            expected_parent: process::getpid(),
            ..Default::default()
        };
        let mut leader = process::spawn(&mut cmd, &setup).unwrap();
        let sid = leader.id() as i32;
        let start = std::time::Instant::now();
        while procs::in_session(sid, 0).len() < 2 {
            assert!(start.elapsed() < Duration::from_secs(5), "never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        let fp = Footprint {
            session: Some(sid),
            cgroups: Vec::new(),
            scratch_dir: scratch("none"),
        };
        assert_eq!(clean_up(&fp, Cleaner::Rtscope), Vec::<String>::new());
        assert!(procs::in_session(sid, 0).is_empty());
        let _ = leader.wait();
    }
}
