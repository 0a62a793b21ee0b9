//! Process control for loads: sessions and process groups (`setsid`,
//! `setpgid`), the parent-death signal and the child subreaper (`prctl`),
//! signals to one process or to a whole group (`kill`), reaping
//! (`waitpid`), and spawning a child whose set-up (group, parent-death
//! signal, cgroup, CPUs, OOM score, scheduling) is done between fork and
//! exec (`CommandExt::pre_exec`).
//!
//! Never used by measuring threads. Must never signal a group by a number
//! it did not create: `kill_group` refuses 0, 1, negative numbers and the
//! caller's own group, so a bug can never become `kill(-1)`.

use super::{cvt, sched};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

/// This process's own binary, as the kernel holds it (still the same
/// file if the path was replaced since it started).
pub const SELF_EXE: &str = "/proc/self/exe";

pub const SIGTERM: i32 = libc::SIGTERM;
pub const SIGKILL: i32 = libc::SIGKILL;
pub const SIGINT: i32 = libc::SIGINT;
pub const SIGHUP: i32 = libc::SIGHUP;
pub const SIGSTOP: i32 = libc::SIGSTOP;
pub const SIGCONT: i32 = libc::SIGCONT;

/// This process's id (`getpid`).
pub fn getpid() -> i32 {
    // SAFETY: getpid cannot fail.
    unsafe { libc::getpid() }
}

/// The parent's process id (`getppid`).
pub fn getppid() -> i32 {
    // SAFETY: getppid cannot fail.
    unsafe { libc::getppid() }
}

/// The process group of `pid` (0 = the caller), `getpgid`.
pub fn getpgid(pid: i32) -> io::Result<i32> {
    // SAFETY: plain syscall with an integer argument.
    cvt(unsafe { libc::getpgid(pid) })
}

/// Send `sig` to process `pid` (`kill(pid, sig)`). Refuses `pid <= 1`,
/// which would address a group or every process.
pub fn kill(pid: i32, sig: i32) -> io::Result<()> {
    if pid <= 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to signal pid {pid}"),
        ));
    }
    // SAFETY: plain syscall with integer arguments; pid > 1 names one process.
    cvt(unsafe { libc::kill(pid, sig) })?;
    Ok(())
}

/// Send `sig` to every process of group `pgid` (`kill(-pgid, sig)`).
/// Refuses `pgid <= 1` and the caller's own group.
pub fn kill_group(pgid: i32, sig: i32) -> io::Result<()> {
    let own = getpgid(0).unwrap_or(-1);
    if pgid <= 1 || pgid == own {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to signal process group {pgid}"),
        ));
    }
    // SAFETY: plain syscall; -pgid with pgid > 1 names exactly one group.
    cvt(unsafe { libc::kill(-pgid, sig) })?;
    Ok(())
}

/// Whether group `pgid` still has a member, zombies included
/// (`kill(-pgid, 0)`; ESRCH means empty).
pub fn group_alive(pgid: i32) -> bool {
    match kill_group(pgid, 0) {
        Ok(()) => true,
        Err(e) => e.raw_os_error() != Some(libc::ESRCH),
    }
}

/// Make the caller a child subreaper: orphaned descendants are re-parented
/// to it rather than to init, so it can reap them
/// (`prctl(PR_SET_CHILD_SUBREAPER, 1)`).
pub fn set_child_subreaper() -> io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    cvt(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) })?;
    Ok(())
}

/// Ask for `sig` when the parent thread dies (`prctl(PR_SET_PDEATHSIG)`).
pub fn set_parent_death_signal(sig: i32) -> io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    cvt(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0) })?;
    Ok(())
}

/// How a reaped child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildEnd {
    /// `exit(code)`.
    Exited(i32),
    /// Killed by this signal.
    Signaled(i32),
}

impl std::fmt::Display for ChildEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChildEnd::Exited(c) => write!(f, "exit status {c}"),
            ChildEnd::Signaled(s) => write!(f, "killed by signal {s} ({})", signal_name(*s)),
        }
    }
}

/// A short name for common signals.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGTERM => "SIGTERM",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        _ => "signal",
    }
}

/// Reap one ended child, any of them, without waiting
/// (`waitpid(-1, WNOHANG)`). `Ok(None)`: none has ended (or none exists).
pub fn reap_any() -> io::Result<Option<(i32, ChildEnd)>> {
    let mut status: libc::c_int = 0;
    // SAFETY: `status` is valid for writes.
    let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
    if pid == 0 {
        return Ok(None);
    }
    if pid < 0 {
        let e = io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::ECHILD) {
            Ok(None)
        } else {
            Err(e)
        };
    }
    let end = if libc::WIFEXITED(status) {
        ChildEnd::Exited(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        ChildEnd::Signaled(libc::WTERMSIG(status))
    } else {
        // Stopped or continued children are not reported without
        // WUNTRACED/WCONTINUED; treat anything else as an unknown exit.
        ChildEnd::Exited(-1)
    };
    Ok(Some((pid, end)))
}

/// What a child does between fork and exec. Everything is prepared before
/// the fork: the closure that runs in the child only makes syscalls on
/// data it was given (no allocation, no locks).
#[derive(Debug, Default)]
pub struct ChildSetup {
    /// `setsid()`: a new session (and group) led by the child.
    pub new_session: bool,
    /// `setpgid(0, 0)`: a new process group led by the child.
    pub new_group: bool,
    /// `prctl(PR_SET_PDEATHSIG, sig)`, then exit if the parent is already
    /// gone (`expected_parent` no longer our parent).
    pub parent_death_signal: Option<i32>,
    pub expected_parent: i32,
    /// Open `cgroup.procs` files: the child writes "0" to each (moves
    /// itself into that cgroup before exec, so all it forks starts there).
    pub cgroup_procs: Vec<RawFd>,
    /// `sched_setaffinity(0, cpus)`.
    pub cpus: Option<Vec<usize>>,
    /// `sched_setscheduler(0, SCHED_OTHER, 0)`: never inherit a real-time
    /// policy.
    pub reset_scheduler: bool,
    /// `setpriority(PRIO_PROCESS, 0, nice)`.
    pub nice: Option<i32>,
    /// Written to /proc/self/oom_score_adj (-1000..=1000).
    pub oom_score_adj: Option<i32>,
}

/// Spawn `cmd` with `setup` applied in the child before exec.
pub fn spawn(cmd: &mut Command, setup: &ChildSetup) -> io::Result<Child> {
    let child = InChild::prepare(setup)?;
    // SAFETY: the closure only makes async-signal-safe syscalls on data
    // prepared above; it allocates nothing and takes no lock.
    unsafe { cmd.pre_exec(move || child.run()) };
    cmd.spawn()
}

/// `ChildSetup` made ready before the fork: every value the child needs,
/// so that between fork and exec it only makes syscalls.
struct InChild {
    new_session: bool,
    new_group: bool,
    pdeath: Option<i32>,
    parent: i32,
    cgroups: Vec<RawFd>,
    cpuset: Option<libc::cpu_set_t>,
    reset: bool,
    nice: Option<i32>,
    /// The text for oom_score_adj, and its length.
    oom: Option<([u8; 16], usize)>,
    oom_path: CString,
    empty_mask: libc::sigset_t,
}

impl InChild {
    /// Prepare everything the child needs: no allocation after fork.
    fn prepare(setup: &ChildSetup) -> io::Result<InChild> {
        let cpuset = setup.cpus.as_deref().map(sched::cpu_set).transpose()?;
        let oom = setup.oom_score_adj.map(|v| {
            let text = format!("{}\n", v.clamp(-1000, 1000));
            let mut buf = [0u8; 16];
            buf[..text.len()].copy_from_slice(text.as_bytes());
            (buf, text.len())
        });
        // SAFETY: sigset_t is plain data; sigemptyset initialises it.
        let empty_mask = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            set
        };
        Ok(InChild {
            new_session: setup.new_session,
            new_group: setup.new_group,
            pdeath: setup.parent_death_signal,
            parent: setup.expected_parent,
            cgroups: setup.cgroup_procs.clone(),
            cpuset,
            reset: setup.reset_scheduler,
            nice: setup.nice,
            oom,
            oom_path: CString::new("/proc/self/oom_score_adj").expect("static path"),
            empty_mask,
        })
    }

    /// In the child, between fork and exec: each step in turn.
    fn run(&self) -> io::Result<()> {
        // Whatever the parent blocked (timer signals), the child starts
        // with every signal deliverable, so SIGTERM to its group works.
        // SAFETY: `empty_mask` is a valid sigset_t; async-signal-safe.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.empty_mask, std::ptr::null_mut()) };
        self.detach()?;
        self.join_cgroups()?;
        if let Some(set) = &self.cpuset {
            sched::set_affinity_to(0, set)?;
        }
        if self.reset {
            ensure_not_realtime()?;
        }
        if let Some(n) = self.nice {
            // SAFETY: integer arguments; async-signal-safe.
            cvt(unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, n) })?;
        }
        self.write_oom_score()
    }

    /// A new session or group, and the parent-death signal.
    fn detach(&self) -> io::Result<()> {
        if self.new_session {
            // SAFETY: setsid has no arguments; async-signal-safe.
            cvt(unsafe { libc::setsid() })?;
        } else if self.new_group {
            // SAFETY: integer arguments; async-signal-safe.
            cvt(unsafe { libc::setpgid(0, 0) })?;
        }
        if let Some(sig) = self.pdeath {
            set_parent_death_signal(sig)?;
            if getppid() != self.parent {
                // The parent died before the signal was armed.
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
        }
        Ok(())
    }

    /// Move into each cgroup (write "0" to its `cgroup.procs`).
    fn join_cgroups(&self) -> io::Result<()> {
        for &fd in &self.cgroups {
            // SAFETY: `fd` is an open descriptor owned by the parent and
            // inherited across fork; the buffer is a static byte string.
            let n = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    fn write_oom_score(&self) -> io::Result<()> {
        let Some((buf, len)) = &self.oom else {
            return Ok(());
        };
        // SAFETY: `oom_path` is a valid C string; open/write/close are
        // async-signal-safe; `buf` holds `len` valid bytes.
        unsafe {
            let fd = libc::open(self.oom_path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            let n = libc::write(fd, buf.as_ptr().cast(), *len);
            libc::close(fd);
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Wait at most `timeout_ms` for `fd` to become readable or hung up
/// (`poll`). `Ok(true)`: a read will not block. EINTR counts as
/// "nothing yet".
pub fn wait_readable(fd: RawFd, timeout_ms: i32) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is one valid pollfd for the duration of the call.
    let n = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(n > 0 && p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0)
}

/// Raw descriptor of an open file, for [`ChildSetup::cgroup_procs`].
pub fn raw_fd(f: &impl AsRawFd) -> RawFd {
    f.as_raw_fd()
}

/// `sched_setscheduler(0, SCHED_OTHER, 0)` for the caller (a convenience
/// for helpers that must never run real-time).
pub fn ensure_not_realtime() -> io::Result<()> {
    sched::set_scheduler_current(sched::KernelPolicy::Other, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_dangerous_targets() {
        assert!(kill(0, 0).is_err());
        assert!(kill(1, 0).is_err());
        assert!(kill(-5, 0).is_err());
        assert!(kill_group(0, 0).is_err());
        assert!(kill_group(1, 0).is_err());
        assert!(kill_group(getpgid(0).unwrap(), 0).is_err());
    }

    #[test]
    fn a_child_in_its_own_group_is_signalled_and_reaped_by_group() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let setup = ChildSetup {
            new_group: true,
            parent_death_signal: Some(SIGKILL),
            expected_parent: getpid(),
            reset_scheduler: true,
            oom_score_adj: Some(500),
            ..Default::default()
        };
        let child = spawn(&mut cmd, &setup).unwrap();
        let pid = child.id() as i32;
        // The group exists once the child has run its set-up.
        let start = std::time::Instant::now();
        while getpgid(pid).ok() != Some(pid) && start.elapsed().as_secs() < 5 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(getpgid(pid).unwrap(), pid);
        assert!(group_alive(pid));
        let oom = std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj")).unwrap();
        assert_eq!(oom.trim(), "500");
        kill_group(pid, SIGTERM).unwrap();
        let mut child = child;
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(SIGTERM));
        assert!(!group_alive(pid));
    }
}
