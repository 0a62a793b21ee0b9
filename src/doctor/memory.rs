//! Memory checks: swap and transparent huge pages.

use super::{Check, Ctx, Status, Verdict};

pub static SWAP: Check = Check {
    id: "swap",
    area: "memory",
    title: "swap",
    why: "A page of a process that does not lock its memory can be swapped out; touching it again waits for a disk read.",
    run: swap,
};

fn swap(ctx: &Ctx) -> Verdict {
    let m = &ctx.facts.memory;
    if m.swaps.is_empty() {
        return Verdict::new(Status::Ok, "no swap in use");
    }
    let size = m
        .swap_total_kb
        .map(|kb| format!(", {} MiB", kb / 1024))
        .unwrap_or_default();
    Verdict::new(Status::Warn, format!("on: {}{size}", m.swaps.join(", "))).fix(
        "real-time programs must mlockall (rtscope measure does); or turn swap off: swapoff -a",
    )
}

pub static THP: Check = Check {
    id: "thp",
    area: "memory",
    title: "transparent huge pages",
    why: "With THP 'always', page faults may compact memory to build a huge page and khugepaged scans and collapses pages in the background: both add stalls.",
    run: thp,
};

fn thp(ctx: &Ctx) -> Verdict {
    match ctx.facts.memory.thp_enabled.as_deref() {
        None => Verdict::new(Status::Ok, "not in this kernel"),
        Some("never") => Verdict::new(Status::Ok, "never"),
        Some("madvise") => Verdict::new(Status::Info, "madvise (only for programs that ask)")
            .fix("echo never > /sys/kernel/mm/transparent_hugepage/enabled (rtscope tune isolate does it)"),
        Some(v) => Verdict::new(Status::Warn, v.to_string()).fix(
            "echo never > /sys/kernel/mm/transparent_hugepage/enabled (rtscope tune isolate does it), or boot with transparent_hugepage=never",
        ),
    }
}
