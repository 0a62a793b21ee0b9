//! Timer checks: high-resolution timers, HZ, tickless CPUs, the
//! clocksource, timer migration.

use super::{Check, Ctx, Status, Verdict};
use crate::sysinfo::board::Arch;
use crate::sysinfo::timers::CLOCKSOURCE as CLOCKSOURCE_FILE;
use crate::units::format_cpu_list;

pub static HIGH_RES: Check = Check {
    id: "hrtimers",
    area: "timers",
    title: "high-resolution timers",
    why: "Without them a timer expires on the next scheduler tick: wake-ups are late by up to 1/HZ.",
    run: high_res,
};

fn high_res(ctx: &Ctx) -> Verdict {
    let t = &ctx.facts.timers;
    match (t.high_res_config, t.monotonic_resolution_ns) {
        (_, Some(1)) => Verdict::new(Status::Ok, "on (CLOCK_MONOTONIC resolution 1 ns)"),
        (Some(false), _) => Verdict::new(Status::Fail, "CONFIG_HIGH_RES_TIMERS is off")
            .fix("use a kernel with CONFIG_HIGH_RES_TIMERS=y"),
        (_, Some(r)) => Verdict::new(
            Status::Fail,
            format!("CLOCK_MONOTONIC resolution is {r} ns: timers run on the tick"),
        )
        .fix("remove highres=off from the kernel command line; check the clock event device"),
        (Some(true), None) => Verdict::new(Status::Ok, "CONFIG_HIGH_RES_TIMERS=y"),
        (None, None) => Verdict::unknown("no kernel config"),
    }
}

pub static HZ: Check = Check {
    id: "hz",
    area: "timers",
    title: "tick rate (HZ)",
    why: "High-resolution timers do not depend on HZ, but the tick interrupts every busy CPU HZ times a second (unless nohz_full).",
    run: hz,
};

fn hz(ctx: &Ctx) -> Verdict {
    match ctx.facts.timers.hz {
        Some(hz) => Verdict::new(
            Status::Info,
            format!("{hz} Hz (a tick every {:.1} ms)", 1000.0 / hz.max(1) as f64),
        ),
        None => Verdict::unknown("no kernel config"),
    }
}

pub static NOHZ_FULL: Check = Check {
    id: "nohz-full",
    area: "timers",
    title: "tickless real-time CPUs (NO_HZ_FULL)",
    why: "On a nohz_full CPU running one task the periodic tick stops, removing a regular interruption of a few µs.",
    run: nohz_full,
};

fn nohz_full(ctx: &Ctx) -> Verdict {
    let t = &ctx.facts.timers;
    let on = t.nohz_full_cpus.clone().unwrap_or_default();
    let missing = ctx.rt_cpus_outside(&on);
    if missing.is_empty() && !ctx.rt_cpus.is_empty() {
        return Verdict::new(Status::Ok, format!("nohz_full={}", format_cpu_list(&on)));
    }
    match t.no_hz_full_config {
        Some(false) => Verdict::new(
            Status::Info,
            "kernel built without CONFIG_NO_HZ_FULL: the tick runs on every CPU",
        ),
        _ => Verdict::new(
            Status::Info,
            format!(
                "CPUs {} keep their tick{}",
                format_cpu_list(&missing),
                if on.is_empty() {
                    String::new()
                } else {
                    format!(" (nohz_full={})", format_cpu_list(&on))
                }
            ),
        )
        .fix(format!(
            "boot with nohz_full={0} rcu_nocbs={0} (needs CONFIG_NO_HZ_FULL)",
            ctx.rt_list()
        )),
    }
}

pub static CLOCKSOURCE: Check = Check {
    id: "clocksource",
    area: "timers",
    title: "clocksource",
    why: "Every clock read (and so every latency measured) goes through the clocksource; hpet and acpi_pm take around a microsecond per read, the TSC or the architected counter a few ns.",
    run: clocksource,
};

fn clocksource(ctx: &Ctx) -> Verdict {
    let t = &ctx.facts.timers;
    let Some(cs) = t.clocksource.as_deref() else {
        return Verdict::unknown("no clocksource in sysfs");
    };
    let available = t.clocksources_available.join(" ");
    match cs {
        "tsc" | "arch_sys_counter" | "riscv_clocksource" | "timebase" => {
            Verdict::new(Status::Ok, cs.to_string())
        }
        "kvm-clock" | "hyperv_clocksource_tsc_page" | "xen" => Verdict::new(
            Status::Info,
            format!("{cs} (paravirtual; available: {available})"),
        ),
        _ => Verdict::new(Status::Warn, format!("{cs} (available: {available})"))
            .fix(clocksource_fix(ctx.arch(), &t.clocksources_available)),
    }
}

/// The fast clocksource to switch to, or why there is none: the TSC on
/// x86, the architected counter on ARM.
fn clocksource_fix(arch: Arch, available: &[String]) -> String {
    let switch =
        |cs: &str| format!("echo {cs} > {CLOCKSOURCE_FILE} (or boot with clocksource={cs})");
    for cs in ["tsc", "arch_sys_counter"] {
        if available.iter().any(|c| c == cs) {
            return switch(cs);
        }
    }
    if arch.is_arm() {
        "no ARM architected timer (arch_sys_counter): ARMv6 cores such as the Raspberry Pi 1 and Zero have none, and clock reads then have the SoC timer's resolution (1 µs on a BCM2835); on ARMv7/ARMv8 check that the device tree enables the arch timer".to_string()
    } else {
        "check why no faster clocksource is available (tsc=reliable if the TSC was marked unstable)"
            .to_string()
    }
}

pub static TIMER_MIGRATION: Check = Check {
    id: "timer-migration",
    area: "timers",
    title: "timer migration",
    why: "With kernel.timer_migration=1, timers armed on idle CPUs may be moved to busy ones, such as a real-time CPU.",
    run: timer_migration,
};

fn timer_migration(ctx: &Ctx) -> Verdict {
    match ctx.facts.timers.timer_migration {
        Some(0) => Verdict::new(Status::Ok, "off"),
        Some(v) => Verdict::new(Status::Info, format!("on ({v})"))
            .fix("sysctl kernel.timer_migration=0 (rtscope tune isolate does it)"),
        None => Verdict::unknown("no kernel.timer_migration"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn clocksource_fix_fits_the_architecture() {
        let x86 = clocksource_fix(Arch::X86, &list(&["hpet", "tsc"]));
        assert!(
            x86.starts_with("echo tsc > /sys/devices/system/clocksource"),
            "{x86}"
        );
        let arm = clocksource_fix(Arch::Arm64, &list(&["arch_sys_counter", "timer"]));
        assert!(arm.contains("clocksource=arch_sys_counter"), "{arm}");
        // A Raspberry Pi 1 or Zero: only the SoC's 1 MHz timer.
        let armv6 = clocksource_fix(Arch::Arm32, &list(&["timer"]));
        assert!(armv6.contains("no ARM architected timer"), "{armv6}");
        assert!(!armv6.contains("tsc"), "{armv6}");
        let pc = clocksource_fix(Arch::X86, &list(&["hpet", "acpi_pm"]));
        assert!(pc.contains("tsc=reliable"), "{pc}");
    }
}
