//! Idle-state checks: deep C-states (and their exit latencies) on the
//! real-time CPUs, the boot options that limit them, and what
//! /dev/cpu_dma_latency holds now.

use super::{Check, Ctx, Status, Verdict, per_cpu};

/// Exit latency above which an enabled idle state is reported.
pub const DEEP_US: u64 = 10;

pub static IDLE_STATES: Check = Check {
    id: "idle-states",
    area: "cpu",
    title: "CPU idle states",
    why: "A CPU in a deep idle state needs up to the state's exit latency to wake, added to every wake-up that finds it idle.",
    run: idle_states,
};

fn idle_states(ctx: &Ctx) -> Verdict {
    let f = ctx.facts;
    let b = &f.boot;
    let mut limits = Vec::new();
    for (k, v) in [
        ("idle", &b.idle),
        ("intel_idle.max_cstate", &b.intel_idle_max_cstate),
        ("processor.max_cstate", &b.processor_max_cstate),
        ("cpuidle.off", &b.cpuidle_off),
    ] {
        if let Some(v) = v {
            limits.push(format!("{k}={v}"));
        }
    }
    let boot = if limits.is_empty() {
        String::new()
    } else {
        format!(" (command line: {})", limits.join(" "))
    };
    let mut deep = Vec::new();
    for &c in &ctx.rt_cpus {
        let Some(cf) = f.cpu(c) else { continue };
        let names: Vec<String> = cf
            .idle_states
            .iter()
            .filter(|s| !s.disabled && s.exit_latency_us > DEEP_US)
            .map(|s| format!("{} {} us", s.name, s.exit_latency_us))
            .collect();
        if !names.is_empty() {
            deep.push((c, names.join(", ")));
        }
    }
    if f.cpuidle.driver.is_none() && deep.is_empty() {
        return Verdict::new(
            Status::Info,
            format!("no cpuidle driver: idle is the platform's default (halt){boot}"),
        );
    }
    if deep.is_empty() {
        return Verdict::new(
            Status::Ok,
            format!("no enabled state exits slower than {DEEP_US} us{boot}"),
        );
    }
    let held = f.cpu_dma_latency_us.filter(|v| *v <= DEEP_US as i64);
    let found = format!("deep states enabled: {}{boot}", per_cpu(&deep));
    if let Some(v) = held {
        return Verdict::new(
            Status::Info,
            format!(
                "{found}; /dev/cpu_dma_latency is held at {v} us now, keeping CPUs out of them"
            ),
        );
    }
    Verdict::new(Status::Warn, found).fix(
        "rtscope measure holds /dev/cpu_dma_latency at 0 while it runs; for applications: hold it too (rtscope tune isolate --hold-dma-latency), disable states (echo 1 > /sys/devices/system/cpu/cpuN/cpuidle/stateK/disable), or boot with intel_idle.max_cstate=1 processor.max_cstate=1",
    )
}
