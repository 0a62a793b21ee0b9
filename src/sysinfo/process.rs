//! Processes and threads as `/proc` shows them: name, start time (to tell
//! a live task from a recycled id), kernel-thread flag, process group and
//! session, allowed CPUs, state and cgroup. Read-only.

use super::SysRoot;
use crate::units::parse_cpu_list;

/// `PF_KTHREAD` in the `flags` field of `/proc/PID/stat`.
const PF_KTHREAD: u64 = 0x0020_0000;
/// `PF_NO_SETAFFINITY`: the task may not change CPUs (per-CPU kthreads).
const PF_NO_SETAFFINITY: u64 = 0x0400_0000;

/// The fields of `/proc/PID/stat` rtscope reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stat {
    pub pid: i32,
    pub comm: String,
    /// One-letter state (R, S, D, T, Z ...).
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// Field 9; `None` when the line stops before it.
    pub flags: Option<u64>,
    /// Field 22, start time after boot in clock ticks; `None` when the
    /// line stops before it.
    pub start_ticks: Option<u64>,
}

/// Parse `/proc/PID/stat`: the name is in parentheses and may hold
/// spaces or parentheses itself, so fields are counted after the last ')'.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text.get(..open)?.trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state); field N is rest[N - 3].
    let field = |n: usize| rest.get(n - 3).copied();
    Some(Stat {
        pid,
        comm,
        state: field(3)?.chars().next()?,
        ppid: field(4)?.parse().ok()?,
        pgrp: field(5)?.parse().ok()?,
        session: field(6)?.parse().ok()?,
        flags: field(9).and_then(|v| v.parse().ok()),
        start_ticks: field(22).and_then(|v| v.parse().ok()),
    })
}

/// `/proc/PID/stat` of `pid`, or `None` when it is gone.
pub fn stat(root: &SysRoot, pid: u32) -> Option<Stat> {
    parse_stat(&root.read(&format!("/proc/{pid}/stat"))?)
}

/// One task (a thread, or a process's main thread).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    pub tid: u32,
    pub comm: String,
    /// One-letter state (R, S, D, T, Z ...).
    pub state: char,
    /// Start time after boot, in clock ticks: with the id, it names one
    /// task even after the id is reused.
    pub start_ticks: u64,
    pub flags: u64,
}

impl Task {
    pub fn is_kthread(&self) -> bool {
        self.flags & PF_KTHREAD != 0
    }

    /// Bound to its CPUs by the kernel (per-CPU kernel threads).
    pub fn is_pinned_by_kernel(&self) -> bool {
        self.flags & PF_NO_SETAFFINITY != 0
    }
}

/// The task `tid`, or `None` when it is gone.
pub fn task(root: &SysRoot, tid: u32) -> Option<Task> {
    let s = stat(root, tid)?;
    Some(Task {
        tid,
        comm: s.comm,
        state: s.state,
        start_ticks: s.start_ticks?,
        flags: s.flags?,
    })
}

/// `Cpus_allowed_list` of `tid`, from `/proc/PID/status`.
pub fn cpus_allowed(root: &SysRoot, tid: u32) -> Option<Vec<usize>> {
    root.read(&format!("/proc/{tid}/status")).and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .and_then(|v| parse_cpu_list(v.trim()).ok())
    })
}

/// Ids of every process (numeric entries of `/proc`).
pub fn pids(root: &SysRoot) -> Vec<u32> {
    root.list("/proc")
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect()
}

/// Processes whose name (`comm`) is exactly `name`.
pub fn by_name(root: &SysRoot, name: &str) -> Vec<Task> {
    pids(root)
        .into_iter()
        .filter_map(|p| task(root, p))
        .filter(|t| t.comm == name)
        .collect()
}

/// The task `tid` if it is still the one that started at `start_ticks`
/// and has not exited (a zombie is gone).
pub fn live_task(root: &SysRoot, tid: u32, start_ticks: u64) -> Option<Task> {
    task(root, tid).filter(|t| t.start_ticks == start_ticks && t.state != 'Z')
}

/// Is `tid` still the task that started at `start_ticks`?
pub fn same_task(root: &SysRoot, tid: u32, start_ticks: u64) -> bool {
    live_task(root, tid, start_ticks).is_some()
}

/// Path of `tid`'s cgroup in the hierarchy that has `controller`
/// (v1), or in the unified hierarchy (`controller` = "").
pub fn cgroup_of(root: &SysRoot, tid: u32, controller: &str) -> Option<String> {
    let text = root.read(&format!("/proc/{tid}/cgroup"))?;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_id, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
        let hit = if controller.is_empty() {
            ctrls.is_empty()
        } else {
            ctrls.split(',').any(|c| c == controller)
        };
        if hit {
            return Some(path.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    #[test]
    fn stat_with_odd_names() {
        let line = "42 (a (b) c) S 1 42 42 0 -1 2097216 0 0 0 0 5 6 0 0 20 0 1 0 1234 0 0";
        let s = parse_stat(line).unwrap();
        let (comm, state, flags, start) =
            (s.comm, s.state, s.flags.unwrap(), s.start_ticks.unwrap());
        assert_eq!(comm, "a (b) c");
        assert_eq!(state, 'S');
        assert_eq!(flags, 2097216);
        assert_eq!(start, 1234);
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn tasks_from_a_fake_proc() {
        let t = FakeTree::new(&[
            (
                "/proc/7/stat",
                "7 (irqbalance) S 1 7 7 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0",
            ),
            (
                "/proc/7/status",
                "Name:\tirqbalance\nCpus_allowed_list:\t0-3\n",
            ),
            (
                "/proc/7/cgroup",
                "3:cpuset:/rtscope-system\n0::/user.slice\n",
            ),
            (
                "/proc/2/stat",
                "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 2 0 0",
            ),
        ]);
        let root = t.root();
        assert_eq!(pids(&root), vec![2, 7]);
        let found = by_name(&root, "irqbalance");
        assert_eq!(found.len(), 1);
        assert_eq!(cpus_allowed(&root, found[0].tid), Some(vec![0, 1, 2, 3]));
        assert!(!found[0].is_kthread());
        assert!(task(&root, 2).unwrap().is_kthread());
        assert!(same_task(&root, 7, 99));
        assert!(!same_task(&root, 7, 100));
        assert_eq!(
            cgroup_of(&root, 7, "cpuset").as_deref(),
            Some("/rtscope-system")
        );
        assert_eq!(cgroup_of(&root, 7, "").as_deref(), Some("/user.slice"));
    }
}
