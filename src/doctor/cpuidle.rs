//! Idle-state checks: deep C-states (and their exit latencies) on the
//! real-time CPUs, the boot options that limit them, and what
//! /dev/cpu_dma_latency holds now. The boot option named in the fix is
//! the architecture's: intel_idle / processor.max_cstate on x86,
//! cpuidle.off on ARM and others.

use super::{Check, Ctx, Status, Verdict, per_cpu};
use crate::sysinfo::board::Arch;

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
            .map(|s| format!("{} {} µs", s.name, s.exit_latency_us))
            .collect();
        if !names.is_empty() {
            deep.push((c, names.join(", ")));
        }
    }
    if f.cpuidle.driver.is_none() && deep.is_empty() {
        return Verdict::new(
            Status::Info,
            format!(
                "no cpuidle driver: idle is the platform's default ({}){boot}",
                if ctx.arch().is_arm() { "WFI" } else { "halt" }
            ),
        );
    }
    if deep.is_empty() {
        return Verdict::new(
            Status::Ok,
            format!("no enabled state exits slower than {DEEP_US} µs{boot}"),
        );
    }
    let held = f.cpu_dma_latency_us.filter(|v| *v <= DEEP_US as i64);
    let found = format!("deep states enabled: {}{boot}", per_cpu(&deep));
    if let Some(v) = held {
        return Verdict::new(
            Status::Info,
            format!(
                "{found}; /dev/cpu_dma_latency is held at {v} µs now, keeping CPUs out of them"
            ),
        );
    }
    Verdict::new(Status::Warn, found).fix(format!(
        "rtscope measure holds /dev/cpu_dma_latency at 0 while it runs; for applications: hold it too (rtscope tune isolate --hold-dma-latency), disable states (echo 1 > /sys/devices/system/cpu/cpuN/cpuidle/stateK/disable), or boot with {}",
        boot_limit(ctx.arch())
    ))
}

/// The kernel parameters that keep CPUs out of deep idle states.
pub fn boot_limit(arch: Arch) -> &'static str {
    match arch {
        Arch::X86 => "intel_idle.max_cstate=1 processor.max_cstate=1",
        _ => "cpuidle.off=1 (idle is then WFI only)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;
    use crate::sysinfo::facts::Facts;

    /// An arm64 board with the PSCI cpuidle driver and a deep state.
    fn deep(machine: &str) -> Verdict {
        let t = FakeTree::new(&[
            ("/machine", machine),
            ("/sys/devices/system/cpu/online", "0-1\n"),
            (
                "/sys/devices/system/cpu/cpuidle/current_driver",
                "psci_idle\n",
            ),
            ("/sys/devices/system/cpu/cpu1/cpuidle/state0/name", "WFI\n"),
            ("/sys/devices/system/cpu/cpu1/cpuidle/state0/latency", "1\n"),
            (
                "/sys/devices/system/cpu/cpu1/cpuidle/state1/name",
                "cpu-sleep\n",
            ),
            (
                "/sys/devices/system/cpu/cpu1/cpuidle/state1/latency",
                "800\n",
            ),
        ]);
        let f = Facts::gather(&t.root());
        idle_states(&Ctx {
            facts: &f,
            rt_cpus: vec![1],
        })
    }

    #[test]
    fn arm_is_told_cpuidle_off_and_x86_its_cstate_limits() {
        let arm = deep("aarch64");
        assert_eq!(arm.status, Status::Warn);
        assert!(arm.found.contains("cpu-sleep 800 µs"), "{}", arm.found);
        let fix = arm.fix.unwrap();
        assert!(fix.contains("cpuidle.off=1"), "{fix}");
        assert!(
            !fix.contains("intel_idle") && !fix.contains("max_cstate"),
            "{fix}"
        );
        let x86 = deep("x86_64").fix.unwrap();
        assert!(
            x86.contains("intel_idle.max_cstate=1 processor.max_cstate=1"),
            "{x86}"
        );
        let armv7 = FakeTree::new(&[
            ("/machine", "armv7l"),
            ("/sys/devices/system/cpu/online", "0\n"),
        ]);
        let f = Facts::gather(&armv7.root());
        let v = idle_states(&Ctx {
            facts: &f,
            rt_cpus: vec![0],
        });
        assert_eq!(
            v.found,
            "no cpuidle driver: idle is the platform's default (WFI)"
        );
    }
}
