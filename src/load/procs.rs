//! Reading who is who from /proc: the process group, session and state of
//! each process (`/proc/<pid>/stat`). Used to check that a load left no
//! process behind, and to find the groups of a load whose supervisor died.
//!
//! Read-only.

use std::fs;

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
    /// Parse the text of /proc/<pid>/stat (the command name may hold
    /// spaces and parentheses: fields resume after the last ')').
    pub fn parse(text: &str) -> Option<ProcStat> {
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let pid = text[..open].trim().parse().ok()?;
        let comm = text[open + 1..close].to_string();
        let mut f = text[close + 1..].split_whitespace();
        let state = f.next()?.chars().next()?;
        let ppid = f.next()?.parse().ok()?;
        let pgrp = f.next()?.parse().ok()?;
        let session = f.next()?.parse().ok()?;
        Some(ProcStat {
            pid,
            comm,
            state,
            ppid,
            pgrp,
            session,
        })
    }

    pub fn of(pid: i32) -> Option<ProcStat> {
        ProcStat::parse(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    pub fn is_zombie(&self) -> bool {
        self.state == 'Z' || self.state == 'X'
    }
}

/// Every process now (threads are not listed).
pub fn all() -> Vec<ProcStat> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(ProcStat::of)
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
