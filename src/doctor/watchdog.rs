//! Watchdog check: lockup detectors running on the real-time CPUs.

use super::{Check, Ctx, Status, Verdict};
use crate::units::format_cpu_list;

pub static WATCHDOGS: Check = Check {
    id: "watchdogs",
    area: "kernel",
    title: "lockup watchdogs",
    why: "The hard-lockup (NMI) watchdog sends a non-maskable interrupt to every watched CPU periodically; the soft-lockup watchdog runs a timer and a thread on each.",
    run: watchdogs,
};

fn watchdogs(ctx: &Ctx) -> Verdict {
    let w = &ctx.facts.watchdogs;
    let on_rt = w
        .cpus
        .as_ref()
        .is_none_or(|c| c.iter().any(|x| ctx.rt_cpus.contains(x)));
    let nmi = w.nmi_watchdog == Some(1) && on_rt;
    let soft =
        w.soft_watchdog.unwrap_or(w.watchdog.unwrap_or(0)) == 1 && w.watchdog != Some(0) && on_rt;
    if w.watchdog.is_none() && w.nmi_watchdog.is_none() {
        return Verdict::unknown("no kernel.watchdog");
    }
    let cpus = w
        .cpus
        .as_ref()
        .map(|c| format!(" (CPUs {})", format_cpu_list(c)))
        .unwrap_or_default();
    let hk = format_cpu_list(&ctx.housekeeping());
    match (nmi, soft) {
        (false, false) => Verdict::new(Status::Ok, "off on the real-time CPUs"),
        (true, _) => Verdict::new(
            Status::Warn,
            format!(
                "NMI watchdog on{}{cpus}",
                if soft {
                    ", soft-lockup watchdog on"
                } else {
                    ""
                }
            ),
        )
        .fix("sysctl kernel.nmi_watchdog=0 (or boot with nmi_watchdog=0 nowatchdog)"),
        (false, true) => Verdict::new(Status::Info, format!("soft-lockup watchdog on{cpus}")).fix(
            if hk.is_empty() {
                "boot with nowatchdog, or sysctl kernel.watchdog=0".to_string()
            } else {
                format!("sysctl kernel.watchdog_cpumask={hk} (or kernel.watchdog=0)")
            },
        ),
    }
}
