//! SMT check: hardware-thread siblings of the real-time CPUs.

use super::{Check, Ctx, Status, Verdict, per_cpu};
use crate::units::format_cpu_list;

pub static SIBLINGS: Check = Check {
    id: "smt",
    area: "cpu",
    title: "SMT siblings of the real-time CPUs",
    why: "Hardware threads of one core share its execution units and caches: work on the sibling slows the real-time thread unpredictably.",
    run: siblings,
};

fn siblings(ctx: &Ctx) -> Verdict {
    let f = ctx.facts;
    let mut shared = Vec::new();
    for &c in &ctx.rt_cpus {
        let Some(cf) = f.cpu(c) else { continue };
        let others: Vec<usize> = cf
            .siblings
            .iter()
            .copied()
            .filter(|s| *s != c && f.online.contains(s) && !ctx.rt_cpus.contains(s))
            .collect();
        if !others.is_empty() {
            shared.push((
                c,
                format!("shares its core with CPU {}", format_cpu_list(&others)),
            ));
        }
    }
    let control = f.smt.control.clone().unwrap_or_else(|| "unknown".into());
    if shared.is_empty() {
        return Verdict::new(
            Status::Ok,
            if f.smt.threads_per_core > 1 {
                format!("SMT {control}; no real-time CPU shares its core with another CPU")
            } else {
                format!("one thread per core (SMT {control})")
            },
        );
    }
    let siblings: Vec<usize> = ctx
        .rt_cpus
        .iter()
        .flat_map(|&c| f.cpu(c).map(|x| x.siblings.clone()).unwrap_or_default())
        .filter(|s| !ctx.rt_cpus.contains(s))
        .collect();
    Verdict::new(Status::Warn, per_cpu(&shared)).fix(format!(
        "keep the siblings idle: offline them (echo 0 > /sys/devices/system/cpu/cpuN/online for CPU {}), or isolate them with the real-time CPUs, or boot with nosmt",
        format_cpu_list(&siblings)
    ))
}
