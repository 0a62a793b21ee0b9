//! IRQ checks: irqbalance, and IRQs that may be (or are) sent to the
//! real-time CPUs.

use super::{Check, Ctx, Status, Verdict};
use crate::units::format_cpu_list;

pub static IRQBALANCE: Check = Check {
    id: "irqbalance",
    area: "irq",
    title: "irqbalance",
    why: "irqbalance rewrites IRQ affinities every few seconds and puts interrupts back on CPUs that were cleared of them.",
    run: irqbalance,
};

fn irqbalance(ctx: &Ctx) -> Verdict {
    let p = &ctx.facts.irqbalance_pids;
    if p.is_empty() {
        return Verdict::new(Status::Ok, "not running");
    }
    let pids: Vec<String> = p.iter().map(|x| x.to_string()).collect();
    Verdict::new(Status::Warn, format!("running (pid {})", pids.join(", "))).fix(format!(
        "rtscope tune isolate pauses it; or: systemctl stop irqbalance; or IRQBALANCE_BANNED_CPULIST={} in /etc/default/irqbalance",
        ctx.rt_list()
    ))
}

pub static IRQS: Check = Check {
    id: "irqs",
    area: "irq",
    title: "IRQs on the real-time CPUs",
    why: "A device interrupt handled on a real-time CPU runs before any task there; its handler (and softirq work after it) delays the real-time task.",
    run: irqs,
};

fn irqs(ctx: &Ctx) -> Verdict {
    let f = ctx.facts;
    if f.irqs.is_empty() {
        return Verdict::unknown("no /proc/irq");
    }
    let on = |cpus: &Option<Vec<usize>>| {
        cpus.as_ref()
            .is_some_and(|c| c.iter().any(|x| ctx.rt_cpus.contains(x)))
    };
    let may: Vec<_> = f.irqs.iter().filter(|i| on(&i.affinity)).collect();
    let now: Vec<String> = f
        .irqs
        .iter()
        .filter(|i| on(&i.effective))
        .map(|i| format!("{} {}", i.irq, i.name()))
        .collect();
    let default_on = on(&f.default_irq_affinity);
    if ctx.housekeeping().is_empty() {
        return Verdict::new(
            Status::Info,
            format!(
                "{} IRQs; every online CPU is judged real-time",
                f.irqs.len()
            ),
        );
    }
    if may.is_empty() && !default_on {
        return Verdict::new(
            Status::Ok,
            format!("no IRQ may be sent to CPUs {}", ctx.rt_list()),
        );
    }
    let mut found = format!(
        "{} of {} IRQs may be sent to CPUs {}",
        may.len(),
        f.irqs.len(),
        ctx.rt_list()
    );
    if !now.is_empty() {
        found.push_str(&format!("; {} are now: {}", now.len(), now.join(", ")));
    }
    if default_on {
        found.push_str(&format!(
            "; new IRQs too (default_smp_affinity {})",
            format_cpu_list(f.default_irq_affinity.as_deref().unwrap_or(&[]))
        ));
    }
    let hk = format_cpu_list(&ctx.housekeeping());
    Verdict::new(Status::Warn, found).fix(format!(
        "sudo rtscope tune isolate {} moves them (some IRQs refuse: per-CPU or managed); at boot: irqaffinity={hk}",
        ctx.rt_list()
    ))
}
