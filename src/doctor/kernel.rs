//! Kernel checks: the preemption model (PREEMPT_RT found from every
//! source), heavy debug options, and whether the configuration is readable.

use super::{Check, Ctx, Status, Verdict};
use crate::sysinfo::board::Arch;

pub static PREEMPTION: Check = Check {
    id: "preemption",
    area: "kernel",
    title: "preemption model",
    why: "Only PREEMPT_RT makes nearly all kernel code preemptible (threaded interrupts, sleeping spinlocks); other models leave non-preemptible sections of hundreds of µs to ms in the worst case.",
    run: preemption,
};

/// How to get a PREEMPT_RT kernel on this machine: on a Raspberry Pi,
/// one built from the Raspberry Pi kernel tree (Debian's RT kernels lack
/// its firmware driver, device trees and overlays: docs/raspberrypi.md);
/// elsewhere by architecture.
fn rt_fix(ctx: &Ctx) -> &'static str {
    if ctx.facts.raspberry_pi.is_some() {
        return "install a PREEMPT_RT kernel built from the Raspberry Pi kernel tree for this model (CONFIG_PREEMPT_RT=y; in /boot with its config-RELEASE, as docs/raspberrypi.md says): Debian's linux-image-rt-* lack the Pi's firmware driver and device trees";
    }
    match ctx.facts.board.arch {
        Arch::X86 => {
            "install a PREEMPT_RT kernel (Debian: apt install linux-image-rt-amd64; mainline 6.12+: CONFIG_PREEMPT_RT=y)"
        }
        Arch::Arm64 => {
            "install a PREEMPT_RT kernel (Debian: apt install linux-image-rt-arm64; a board vendor's RT kernel; mainline 6.12+: CONFIG_PREEMPT_RT=y)"
        }
        Arch::Arm32 => {
            "install a PREEMPT_RT kernel (Debian: apt install linux-image-rt-armmp; a board vendor's RT kernel; mainline 6.12+: CONFIG_PREEMPT_RT=y)"
        }
        _ => {
            "install a PREEMPT_RT kernel (Debian: linux-image-rt-amd64, linux-image-rt-arm64; mainline 6.12+: CONFIG_PREEMPT_RT=y)"
        }
    }
}

fn preemption(ctx: &Ctx) -> Verdict {
    let p = &ctx.facts.preemption;
    let mut found = match p.model.as_str() {
        "rt" => "PREEMPT_RT".to_string(),
        "full" => "PREEMPT (full)".to_string(),
        "lazy" => "PREEMPT_LAZY".to_string(),
        "voluntary" => "PREEMPT_VOLUNTARY".to_string(),
        "none" => "PREEMPT_NONE (server)".to_string(),
        "dynamic" => "PREEMPT_DYNAMIC, current mode not readable".to_string(),
        other => other.to_string(),
    };
    if p.dynamic && p.model != "rt" {
        found.push_str(" via PREEMPT_DYNAMIC");
    }
    // The decisive evidence: the first for PREEMPT_RT, else the last
    // (for PREEMPT_DYNAMIC, where the mode in force was read).
    let evidence = if p.is_rt() {
        p.evidence.first()
    } else {
        p.evidence.last()
    };
    if let Some(e) = evidence {
        found.push_str(&format!(" ({e})"));
    }
    match p.model.as_str() {
        "rt" => Verdict::new(Status::Ok, found),
        "full" | "lazy" => Verdict::new(Status::Warn, found).fix(rt_fix(ctx)),
        "none" | "voluntary" | "dynamic" => {
            let quick = if p.dynamic {
                "boot with preempt=full for a first gain; for real time, "
            } else {
                ""
            };
            Verdict::new(Status::Fail, found).fix(format!("{quick}{}", rt_fix(ctx)))
        }
        _ => Verdict::unknown("no uname, /sys/kernel/realtime or kernel config says"),
    }
}

pub static DEBUG_OPTIONS: Check = Check {
    id: "debug-options",
    area: "kernel",
    title: "kernel debug options",
    why: "Lock, memory and preemption debugging (LOCKDEP, KASAN, DEBUG_PREEMPT, page poisoning, latency tracers ...) add work to every lock, allocation and context switch; such a kernel measures its own debugging. Some are idle until turned on (page_poison=on, a tracer selected): built in and idle, they cost nothing.",
    run: debug_options,
};

const REBUILD_FIX: &str =
    "measure with a kernel built without them (a distribution's production kernel)";

fn debug_options(ctx: &Ctx) -> Verdict {
    let d = &ctx.facts.sched.debug;
    if ctx.facts.config.is_none() && d.acting.is_empty() {
        return Verdict::unknown("kernel config not readable");
    }
    let mut found = Vec::new();
    let mut fixes = Vec::new();
    if !d.always.is_empty() {
        found.push(format!("{} (cost whenever built in)", d.always.join(" ")));
        fixes.push(REBUILD_FIX.to_string());
    }
    for a in &d.acting {
        found.push(format!("{} turned on by {}", a.what, a.by));
        if !fixes.contains(&a.fix) {
            fixes.push(a.fix.clone());
        }
    }
    for (key, why) in &d.unknown {
        found.push(format!("{key} built in, whether in use unknown ({why})"));
    }
    if !d.idle.is_empty() {
        let idle: Vec<String> = d.idle.iter().map(|(k, u)| format!("{k} ({u})")).collect();
        found.push(format!("built in and idle: {}", idle.join(", ")));
    }
    if !d.memory_init_default.is_empty() {
        found.push(format!(
            "memory initialisation on by the build's default: {}",
            d.memory_init_default.join(", ")
        ));
    }
    if found.is_empty() {
        return Verdict::new(Status::Ok, "none of the heavy ones");
    }
    let found = found.join("; ");
    if d.costs() {
        Verdict::new(Status::Warn, found).fix(fixes.join("; "))
    } else if !d.unknown.is_empty() {
        Verdict::new(Status::Info, found).fix(
            "mount tracefs (mount -t tracefs nodev /sys/kernel/tracing) and run doctor again as root to see which tracer is selected",
        )
    } else if !d.memory_init_default.is_empty() {
        Verdict::new(Status::Info, found)
            .fix("boot with init_on_alloc=0 init_on_free=0 to drop the zeroing of memory")
    } else {
        Verdict::new(Status::Ok, found)
    }
}

pub static CONFIG: Check = Check {
    id: "kernel-config",
    area: "kernel",
    title: "kernel configuration",
    why: "Several checks (HZ, NO_HZ_FULL, RCU, debug options) read the kernel's build configuration.",
    run: config,
};

fn config(ctx: &Ctx) -> Verdict {
    match &ctx.facts.config {
        Some(c) => Verdict::new(Status::Ok, format!("read from {}", c.source)),
        None => Verdict::new(
            Status::Info,
            "not readable: checks that need it say unknown",
        )
        .fix(format!(
            "modprobe configs (for /proc/config.gz), or install /boot/config-{}",
            ctx.facts.uname.release
        )),
    }
}
