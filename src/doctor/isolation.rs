//! Isolation checks: are the real-time CPUs kept free of other tasks
//! (isolcpus, or cpusets such as rtscope's), and is there an rtscope
//! tuning in force or left behind by a crash.

use super::{Check, Ctx, Status, Verdict};
use crate::sysinfo::tuning::TuningState;
use crate::units::format_cpu_list;

pub static ISOLATION: Check = Check {
    id: "isolation",
    area: "isolation",
    title: "real-time CPUs isolated",
    why: "A CPU shared with other tasks makes a real-time task wait for any of them that runs at its priority or above, and pay their cache and TLB misses (the seeds' Table 10: 16 ms without isolation, 54 µs with).",
    run: isolation,
};

fn isolation(ctx: &Ctx) -> Verdict {
    let f = ctx.facts;
    if ctx.rt_cpus.is_empty() {
        return Verdict::unknown("no real-time CPUs chosen");
    }
    if ctx.housekeeping().is_empty() {
        return Verdict::new(
            Status::Info,
            format!(
                "judging every online CPU ({}): there is nothing to isolate them from",
                ctx.rt_list()
            ),
        )
        .fix("say which CPUs will run real-time work: rtscope doctor --cpus 1");
    }
    let covered = |set: &[usize]| ctx.rt_cpus.iter().all(|c| set.contains(c));
    if let Some(t) = &f.tuning
        && matches!(t.state, TuningState::Applied | TuningState::InUse)
        && covered(&t.isolated_cpus)
    {
        return Verdict::new(
            Status::Ok,
            format!(
                "CPUs {} isolated by rtscope tune (cpusets)",
                format_cpu_list(&t.isolated_cpus)
            ),
        );
    }
    let kernel = f
        .kernel_isolated
        .clone()
        .filter(|v| !v.is_empty())
        .or_else(|| f.boot.isolcpus_cpus());
    if let Some(iso) = kernel.filter(|v| covered(v)) {
        return Verdict::new(
            Status::Ok,
            format!(
                "isolcpus={} (kernel isolation: tasks and load balancing kept off)",
                f.boot
                    .isolcpus
                    .clone()
                    .unwrap_or_else(|| format_cpu_list(&iso))
            ),
        );
    }
    let hk = format_cpu_list(&ctx.housekeeping());
    Verdict::new(
        Status::Warn,
        format!("CPUs {} are shared with every other task", ctx.rt_list()),
    )
    .fix(format!(
        "at run time: sudo rtscope tune isolate {0} (or measure --isolate {0}); at boot: isolcpus={0} nohz_full={0} rcu_nocbs={0} irqaffinity={hk}",
        ctx.rt_list()
    ))
}

pub static TUNING: Check = Check {
    id: "rtscope-tuning",
    area: "isolation",
    title: "rtscope tuning",
    why: "A tuning left by an rtscope that crashed keeps CPUs, IRQs and settings changed until it is reverted.",
    run: tuning,
};

fn tuning(ctx: &Ctx) -> Verdict {
    let Some(t) = &ctx.facts.tuning else {
        return Verdict::new(Status::Info, "none in force");
    };
    let what = format!(
        "CPUs {} isolated by `{}` ({} mode; settings: {})",
        format_cpu_list(&t.isolated_cpus),
        t.command.join(" "),
        t.mode.name(),
        t.settings.join(", ")
    );
    match t.state {
        TuningState::Applied => Verdict::new(Status::Info, format!("applied: {what}"))
            .fix("undo with: sudo rtscope tune --revert"),
        TuningState::InUse => {
            Verdict::new(Status::Info, format!("in use by pid {}: {what}", t.pid))
        }
        TuningState::Stale => Verdict::new(
            Status::Info,
            format!("journal from before the last reboot ({})", t.journal),
        )
        .fix("sudo rtscope tune --revert discards it"),
        TuningState::Abandoned => Verdict::new(
            Status::Fail,
            format!("left behind by pid {}, which died: {what}", t.pid),
        )
        .fix("sudo rtscope tune --revert"),
    }
}
