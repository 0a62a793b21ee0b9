//! CPU frequency checks: governor and frequency limits of the real-time CPUs.

use super::{Check, Ctx, Status, Verdict, per_cpu};

pub static GOVERNOR: Check = Check {
    id: "governor",
    area: "cpu",
    title: "CPU frequency governor",
    why: "A governor other than performance lowers the clock when the CPU idles; a real-time task then wakes up on a slow CPU and runs slower until the clock ramps up.",
    run: governor,
};

fn governor(ctx: &Ctx) -> Verdict {
    let mut bad = Vec::new();
    let mut capped = Vec::new();
    let mut seen = 0;
    let mut govs = Vec::new();
    for &c in &ctx.rt_cpus {
        let Some(f) = ctx.facts.cpu(c).and_then(|c| c.freq.as_ref()) else {
            continue;
        };
        seen += 1;
        let g = f.governor.clone().unwrap_or_else(|| "?".into());
        if !govs.contains(&g) {
            govs.push(g.clone());
        }
        if g != "performance" {
            bad.push((c, g));
        }
        if let (Some(max), Some(hw)) = (f.max_khz, f.hw_max_khz)
            && max < hw
        {
            capped.push((c, format!("max {} MHz of {} MHz", max / 1000, hw / 1000)));
        }
    }
    if seen == 0 {
        return Verdict::new(
            Status::Info,
            "no cpufreq driver on the real-time CPUs (frequency set by firmware or hypervisor)",
        );
    }
    if !bad.is_empty() {
        return Verdict::new(Status::Warn, per_cpu(&bad)).fix(format!(
            "sudo rtscope tune isolate {0} (sets performance and restores it), or: cpupower -c {0} frequency-set -g performance",
            ctx.rt_list()
        ));
    }
    if !capped.is_empty() {
        return Verdict::new(
            Status::Warn,
            format!("performance, but capped: {}", per_cpu(&capped)),
        )
        .fix("raise scaling_max_freq to cpuinfo_max_freq (cpupower frequency-set -u MAX)");
    }
    Verdict::new(Status::Ok, govs.join(", "))
}
