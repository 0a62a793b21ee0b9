//! Limit checks: can this user lock memory and use real-time priorities.

use super::{Check, Ctx, Status, Verdict};

pub static MEMLOCK: Check = Check {
    id: "memlock",
    area: "limits",
    title: "locked-memory limit",
    why: "Real-time programs lock their memory (mlockall) so that no page fault interrupts them; RLIMIT_MEMLOCK caps how much an unprivileged user may lock.",
    run: memlock,
};

fn memlock(ctx: &Ctx) -> Verdict {
    let l = &ctx.facts.limits;
    if l.is_root {
        return Verdict::new(Status::Ok, "running as root (not limited)");
    }
    match l.memlock_bytes {
        Some(None) => Verdict::new(Status::Ok, "unlimited"),
        Some(Some(b)) => Verdict::new(Status::Warn, format!("{} KiB", b / 1024)).fix(
            "add '@realtime - memlock unlimited' to /etc/security/limits.conf (and the user to group realtime), or run as root",
        ),
        None => Verdict::unknown("no /proc/self/limits"),
    }
}

pub static RTPRIO: Check = Check {
    id: "rtprio",
    area: "limits",
    title: "real-time priority limit",
    why: "RLIMIT_RTPRIO is the highest SCHED_FIFO/RR priority an unprivileged user may take.",
    run: rtprio,
};

fn rtprio(ctx: &Ctx) -> Verdict {
    let l = &ctx.facts.limits;
    if l.is_root {
        return Verdict::new(Status::Ok, "running as root (not limited)");
    }
    match l.rtprio {
        Some(None) => Verdict::new(Status::Ok, "unlimited"),
        Some(Some(p)) if p >= 99 => Verdict::new(Status::Ok, p.to_string()),
        Some(Some(p)) => Verdict::new(Status::Warn, format!("{p} (real-time priorities above it are refused)")).fix(
            "add '@realtime - rtprio 99' to /etc/security/limits.conf (and the user to group realtime), or run as root",
        ),
        None => Verdict::unknown("no /proc/self/limits"),
    }
}
