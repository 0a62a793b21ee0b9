//! Scheduling of the calling thread: CPU affinity (`sched_getaffinity`,
//! `sched_setaffinity`), policy and priority (`sched_setscheduler`,
//! `sched_setattr` for SCHED_DEADLINE), thread ids and resource limits.
//! Called during set-up only, never from the hot path.

use super::cvt;
use std::io;

/// Scheduling policy as the kernel knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelPolicy {
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

impl KernelPolicy {
    fn raw(self) -> libc::c_int {
        match self {
            KernelPolicy::Other => libc::SCHED_OTHER,
            KernelPolicy::Batch => libc::SCHED_BATCH,
            KernelPolicy::Idle => libc::SCHED_IDLE,
            KernelPolicy::Fifo => libc::SCHED_FIFO,
            KernelPolicy::Rr => libc::SCHED_RR,
            KernelPolicy::Deadline => 6, // SCHED_DEADLINE
        }
    }
}

/// The CPUs the calling thread may run on (`sched_getaffinity(0)`).
pub fn affinity_current() -> io::Result<Vec<usize>> {
    affinity_of(0)
}

/// The CPUs thread or process `pid` may run on (`sched_getaffinity(pid)`).
pub fn affinity_of(pid: i32) -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; all-zero is a valid (empty) set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is valid for writes of size_of::<cpu_set_t>() bytes.
    cvt(unsafe { libc::sched_getaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) })?;
    let mut cpus = Vec::new();
    for cpu in 0..libc::CPU_SETSIZE as usize {
        // SAFETY: `cpu` is below CPU_SETSIZE, the size of the set.
        if unsafe { libc::CPU_ISSET(cpu, &set) } {
            cpus.push(cpu);
        }
    }
    Ok(cpus)
}

/// The kernel's CPU set of `cpus` (EINVAL for a CPU beyond its size).
pub(crate) fn cpu_set(cpus: &[usize]) -> io::Result<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; all-zero is a valid (empty) set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `cpu` was checked to be below CPU_SETSIZE.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    Ok(set)
}

/// `sched_setaffinity(pid, set)`: no allocation, safe after fork.
pub(crate) fn set_affinity_to(pid: i32, set: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    cvt(unsafe { libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), set) })?;
    Ok(())
}

/// Pin thread `pid` (0 = the caller) to `cpus` (`sched_setaffinity`).
pub fn set_affinity(pid: i32, cpus: &[usize]) -> io::Result<()> {
    set_affinity_to(pid, &cpu_set(cpus)?)
}

/// `sched_setscheduler(0, policy, prio)` for the calling thread.
pub fn set_scheduler_current(policy: KernelPolicy, priority: i32) -> io::Result<()> {
    set_scheduler(0, policy, priority)
}

/// `sched_setscheduler(pid, policy, prio)` for thread `pid` (0 = caller).
pub fn set_scheduler(pid: i32, policy: KernelPolicy, priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param for the duration of the call.
    cvt(unsafe { libc::sched_setscheduler(pid, policy.raw(), &param) })?;
    Ok(())
}

#[repr(C)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
}

/// `sched_setattr(0, SCHED_DEADLINE, runtime, deadline, period)` for the
/// calling thread. The kernel refuses it (EPERM) when the thread's
/// affinity is narrower than its root domain, and (EBUSY) when the
/// bandwidth does not fit.
pub fn set_deadline_current(runtime_ns: u64, deadline_ns: u64, period_ns: u64) -> io::Result<()> {
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: 6,
        sched_flags: 0,
        sched_nice: 0,
        sched_priority: 0,
        sched_runtime: runtime_ns,
        sched_deadline: deadline_ns,
        sched_period: period_ns,
    };
    // SAFETY: `attr` is a valid, correctly sized sched_attr; pid 0 is the
    // calling thread; flags 0.
    let ret = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The kernel thread id of the caller (`gettid`).
pub fn gettid() -> i32 {
    // SAFETY: gettid cannot fail.
    unsafe { libc::gettid() }
}

/// A resource limit, soft and hard (`getrlimit`). `None` is unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

fn get_rlimit(resource: libc::__rlimit_resource_t) -> io::Result<Limit> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `rl` is valid for writes.
    cvt(unsafe { libc::getrlimit(resource, &mut rl) })?;
    // rlim_t is 32 bits on 32-bit glibc (armhf), 64 elsewhere.
    #[allow(clippy::useless_conversion)]
    let conv = |v: libc::rlim_t| {
        if v == libc::RLIM_INFINITY {
            None
        } else {
            Some(u64::from(v))
        }
    };
    Ok(Limit {
        soft: conv(rl.rlim_cur),
        hard: conv(rl.rlim_max),
    })
}

/// RLIMIT_RTPRIO of the calling process.
pub fn rtprio_limit() -> io::Result<Limit> {
    get_rlimit(libc::RLIMIT_RTPRIO)
}

/// The effective user id (`geteuid`).
pub fn euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}
