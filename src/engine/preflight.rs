//! Checks made before any thread starts, so that a run that cannot work
//! fails at once with advice instead of halfway: real-time privileges
//! (root, CAP_SYS_NICE, RLIMIT_RTPRIO).

use super::plan::{Plan, Policy};
use crate::sys::sched;

const CAP_SYS_NICE: u32 = 23;

/// Effective capabilities of this process (`CapEff` in /proc/self/status).
pub fn effective_caps() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
    u64::from_str_radix(line.trim_start_matches("CapEff:").trim(), 16).ok()
}

pub fn has_cap_sys_nice() -> bool {
    effective_caps().is_some_and(|c| c & (1 << CAP_SYS_NICE) != 0)
}

/// Root or CAP_SYS_NICE: real-time policies are allowed whatever
/// RLIMIT_RTPRIO says.
pub fn privileged() -> bool {
    sched::euid() == 0 || has_cap_sys_nice()
}

/// Why the planned policy cannot be had, or `None` when it can.
pub fn realtime_refusal(plan: &Plan) -> Option<String> {
    let policy = plan.config.policy;
    if !policy.is_realtime() || privileged() {
        return None;
    }
    let name = policy.name().to_uppercase();
    if policy == Policy::Deadline {
        return Some(format!(
            "SCHED_{name} needs root or CAP_SYS_NICE: run with sudo, or use --policy fifo / other"
        ));
    }
    let needed = plan.threads.iter().map(|t| t.priority).max().unwrap_or(0);
    let limit = sched::rtprio_limit()
        .ok()
        .and_then(|l| l.soft)
        .unwrap_or(u64::MAX);
    if limit >= needed as u64 {
        return None;
    }
    Some(format!(
        "SCHED_{name} at priority {needed} needs root or CAP_SYS_NICE, and RLIMIT_RTPRIO is {limit}: \
         run with sudo, raise rtprio in /etc/security/limits.conf, or use --policy other"
    ))
}
