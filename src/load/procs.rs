//! Reading who is who from /proc: the process group, session and state of
//! each process (`/proc/<pid>/stat`). Used to check that a load left no
//! process behind, and to find the groups of a load whose supervisor died.
//!
//! Read-only.

use crate::sysinfo::{SysRoot, process};

/// One process, as /proc/<pid>/stat shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    pub comm: String,
    /// R, S, D, Z, T...
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
}

impl ProcStat {
    /// Parse the text of /proc/<pid>/stat (see `sysinfo::process::parse_stat`).
    pub fn parse(text: &str) -> Option<ProcStat> {
        process::parse_stat(text).map(ProcStat::from)
    }

    pub fn of(pid: i32) -> Option<ProcStat> {
        process::stat(&SysRoot::host(), u32::try_from(pid).ok()?).map(ProcStat::from)
    }

    pub fn is_zombie(&self) -> bool {
        self.state == 'Z' || self.state == 'X'
    }
}

impl From<process::Stat> for ProcStat {
    fn from(s: process::Stat) -> ProcStat {
        ProcStat {
            pid: s.pid,
            comm: s.comm,
            state: s.state,
            ppid: s.ppid,
            pgrp: s.pgrp,
            session: s.session,
        }
    }
}

/// Every process now (threads are not listed).
pub fn all() -> Vec<ProcStat> {
    let root = SysRoot::host();
    process::pids(&root)
        .into_iter()
        .filter_map(|p| process::stat(&root, p))
        .map(ProcStat::from)
        .collect()
}

/// Live (not zombie) processes of session `sid`, except `except`.
pub fn in_session(sid: i32, except: i32) -> Vec<ProcStat> {
    all()
        .into_iter()
        .filter(|p| p.session == sid && p.pid != except && !p.is_zombie())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_with_spaces_and_parentheses() {
        let s = ProcStat::parse("1234 (my (odd) name) S 1 1230 1200 0 -1 4194560 0").unwrap();
        assert_eq!(s.pid, 1234);
        assert_eq!(s.comm, "my (odd) name");
        assert_eq!(s.state, 'S');
        assert_eq!((s.ppid, s.pgrp, s.session), (1, 1230, 1200));
        assert!(ProcStat::parse("garbage").is_none());
    }

    #[test]
    fn this_process_is_found() {
        let me = crate::sys::process::getpid();
        let s = ProcStat::of(me).unwrap();
        assert_eq!(s.pid, me);
        assert!(all().iter().any(|p| p.pid == me));
    }
}
