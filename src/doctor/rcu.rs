//! RCU checks: reader priority boosting and callback offloading.

use super::{Check, Ctx, Status, Verdict};
use crate::units::format_cpu_list;

pub static BOOST: Check = Check {
    id: "rcu-boost",
    area: "rcu",
    title: "RCU priority boosting (RCU_BOOST)",
    why: "On a preemptible kernel a low-priority task preempted inside an RCU read section holds up grace periods (and memory freeing) until boosted.",
    run: boost,
};

fn boost(ctx: &Ctx) -> Verdict {
    let rt = ctx.facts.preemption.is_rt();
    match ctx.facts.rcu.boost {
        Some(true) => Verdict::new(Status::Ok, "CONFIG_RCU_BOOST=y"),
        Some(false) if rt => Verdict::new(
            Status::Warn,
            "CONFIG_RCU_BOOST is off on a PREEMPT_RT kernel",
        )
        .fix("use a kernel with CONFIG_RCU_BOOST=y"),
        Some(false) => Verdict::new(
            Status::Info,
            "CONFIG_RCU_BOOST is off (matters with PREEMPT_RT)",
        ),
        None => Verdict::unknown("no kernel config"),
    }
}

pub static NOCBS: Check = Check {
    id: "rcu-nocbs",
    area: "rcu",
    title: "RCU callbacks offloaded (rcu_nocbs)",
    why: "RCU callbacks run in softirq on the CPU that queued them unless offloaded to kernel threads that can run on housekeeping CPUs.",
    run: nocbs,
};

fn nocbs(ctx: &Ctx) -> Verdict {
    let r = &ctx.facts.rcu;
    let on = r.nocb_cpus.clone().unwrap_or_default();
    let missing = ctx.rt_cpus_outside(&on);
    if missing.is_empty() && !ctx.rt_cpus.is_empty() {
        return Verdict::new(
            Status::Ok,
            format!("offloaded on CPUs {}", format_cpu_list(&on)),
        );
    }
    match r.nocb_config {
        Some(false) => Verdict::new(Status::Info, "kernel built without CONFIG_RCU_NOCB_CPU"),
        None => Verdict::unknown("no kernel config"),
        Some(true) => Verdict::new(
            Status::Info,
            format!("not offloaded on CPUs {}", format_cpu_list(&missing)),
        )
        .fix(format!("boot with rcu_nocbs={}", ctx.rt_list())),
    }
}
