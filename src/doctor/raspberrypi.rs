//! Raspberry Pi checks: the firmware's throttling and under-voltage state
//! (sysfs `get_throttled`, the bits of `vcgencmd get_throttled`), and the
//! boot files (`config.txt`'s clock settings, a `cmdline.txt` edited since
//! boot). On any other board neither applies and doctor leaves both
//! out (the board check already says what the board is). Files only: doctor
//! never runs vcgencmd.

use super::{Check, Ctx, Status, Verdict};
use crate::sysinfo::cmdline::BootOptions;
use crate::sysinfo::raspberrypi::{RaspberryPi, Throttle, Throttled};

pub static THROTTLING: Check = Check {
    id: "pi-throttling",
    area: "platform",
    title: "Raspberry Pi throttling and under-voltage",
    why: "Under-voltage or heat makes the firmware lower the ARM clock (and under-voltage can corrupt data): every wake-up then runs slower, by an amount that changes with the load. Results taken so describe the power supply or the cooling, not the kernel.",
    run: throttling,
};

fn not_a_pi() -> Verdict {
    Verdict::not_applicable("not a Raspberry Pi (no Raspberry Pi model in the device tree)")
}

fn throttling(ctx: &Ctx) -> Verdict {
    let Some(pi) = &ctx.facts.raspberry_pi else {
        return not_a_pi();
    };
    let Some(t) = &pi.throttled else {
        return Verdict::unknown(
            "no get_throttled in sysfs: this kernel lacks the Raspberry Pi firmware driver",
        )
        .fix("ask the firmware: vcgencmd get_throttled (0x0: never throttled since boot)");
    };
    let (now, since) = (t.now(), t.since_boot());
    let found = throttle_text(t, &now, &since);
    let hot = |v: &[Throttle]| v.iter().any(|x| *x != Throttle::UnderVoltage);
    let power = now.contains(&Throttle::UnderVoltage) || since.contains(&Throttle::UnderVoltage);
    let mut fixes = Vec::new();
    if power {
        fixes.push("power: the official supply (5.1 V, 3 A for a Pi 4, 5 A for a Pi 5, 2.5 A for a Pi 3) with its own short cable; power USB disks and hubs separately");
    }
    if hot(&now) || hot(&since) {
        fixes.push("cooling: a heatsink and a fan (the Active Cooler on a Pi 5) or a case with airflow; watch /sys/class/thermal/thermal_zone0/temp under load");
    }
    if now.is_empty() && !since.is_empty() {
        fixes.push("the since-boot bits clear only at reboot: fix the cause, reboot, and run doctor again after a measurement");
    }
    let status = if now.contains(&Throttle::UnderVoltage)
        || now.contains(&Throttle::Throttled)
        || now.contains(&Throttle::FrequencyCapped)
    {
        Status::Fail
    } else if !now.is_empty() || !since.is_empty() {
        Status::Warn
    } else {
        return Verdict::new(Status::Ok, found);
    };
    Verdict::new(status, found).fix(fixes.join("; "))
}

fn throttle_text(t: &Throttled, now: &[Throttle], since: &[Throttle]) -> String {
    let names = |v: &[Throttle]| v.iter().map(|x| x.label()).collect::<Vec<_>>().join(", ");
    let mut parts = Vec::new();
    if !now.is_empty() {
        parts.push(format!("now: {}", names(now)));
    }
    if !since.is_empty() {
        parts.push(format!("since boot: {}", names(since)));
    }
    if parts.is_empty() {
        parts.push(if t.since_boot_known {
            "none now or since boot".to_string()
        } else {
            "no under-voltage now".to_string()
        });
    }
    if !t.since_boot_known {
        parts.push("since boot unknown (only the rpi_volt alarm is readable)".into());
    }
    format!("{} (0x{:x} in {})", parts.join("; "), t.bits, t.source)
}

pub static BOOT_CONFIG: Check = Check {
    id: "pi-boot-config",
    area: "platform",
    title: "Raspberry Pi config.txt and cmdline.txt",
    why: "config.txt sets the ARM clock the firmware allows (force_turbo, arm_freq, arm_freq_min); cmdline.txt is the next boot's kernel command line: an isolcpus or nohz_full written there is not in force until the board reboots.",
    run: boot_config,
};

/// Kernel parameters whose change in cmdline.txt matters for latency.
pub static LATENCY_PARAMS: &[&str] = &[
    "isolcpus",
    "nohz_full",
    "rcu_nocbs",
    "rcu_nocb_poll",
    "irqaffinity",
    "kthread_cpus",
    "maxcpus",
    "nr_cpus",
    "idle",
    "cpuidle.off",
    "preempt",
    "threadirqs",
    "nosmt",
    "nowatchdog",
    "nmi_watchdog",
    "skew_tick",
    "transparent_hugepage",
    "dwc_otg.fiq_enable",
    "dwc_otg.fiq_fsm_enable",
];

/// The clock settings of config.txt that apply to this board, as text.
pub const CLOCK_KEYS: &[&str] = &[
    "force_turbo",
    "arm_freq",
    "arm_freq_min",
    "arm_boost",
    "over_voltage",
];

fn boot_config(ctx: &Ctx) -> Verdict {
    let Some(pi) = &ctx.facts.raspberry_pi else {
        return not_a_pi();
    };
    let Some(dir) = &pi.boot_dir else {
        return Verdict::unknown("no config.txt or cmdline.txt in /boot/firmware or /boot")
            .fix("mount the boot partition (Raspberry Pi OS mounts it at /boot/firmware)");
    };
    let mut found = Vec::new();
    match &pi.config {
        Some(c) => {
            let set: Vec<String> = CLOCK_KEYS
                .iter()
                .filter_map(|k| c.get(k).map(|v| format!("{k}={v}")))
                .collect();
            found.push(if set.is_empty() {
                format!("{}: no clock settings (the firmware's defaults)", c.path)
            } else {
                format!("{}: {}", c.path, set.join(" "))
            });
            if !c.skipped_sections.is_empty() {
                found.push(format!(
                    "not judged: lines under {}",
                    c.skipped_sections.join(", ")
                ));
            }
        }
        None => found.push(format!("no {dir}/config.txt")),
    }
    let pending = pending_params(pi, &ctx.facts.boot);
    if pending.is_empty() {
        if pi.cmdline_txt.is_some() {
            found.push("cmdline.txt matches the running kernel's latency options".into());
        }
        return Verdict::new(Status::Ok, found.join("; "));
    }
    found.push(format!(
        "{dir}/cmdline.txt differs from the running kernel's command line: {}",
        pending.join(", ")
    ));
    Verdict::new(Status::Warn, found.join("; ")).fix(format!(
        "reboot to boot with {dir}/cmdline.txt (sudo reboot), or undo the edit"
    ))
}

/// Latency options that cmdline.txt gives differently from the running
/// kernel's command line: "isolcpus=3 (running: not set)".
pub fn pending_params(pi: &RaspberryPi, running: &BootOptions) -> Vec<String> {
    let Some(file) = &pi.cmdline_txt else {
        return Vec::new();
    };
    let next = BootOptions::parse(file);
    let show = |name: &str, v: Option<&str>| match v {
        None => "not set".to_string(),
        Some("") => name.to_string(),
        Some(v) => format!("{name}={v}"),
    };
    LATENCY_PARAMS
        .iter()
        .filter(|p| next.param(p) != running.param(p))
        .map(|p| {
            format!(
                "{} (running: {})",
                show(p, next.param(p)),
                show(p, running.param(p))
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::facts::Facts;
    use crate::sysinfo::{FakeTree, SysRoot};

    fn fixture(name: &str) -> SysRoot {
        SysRoot::fixture(name)
    }

    fn judge(root: &SysRoot, check: &Check) -> Verdict {
        let f = Facts::gather(root);
        (check.run)(&Ctx {
            facts: &f,
            rt_cpus: vec![3],
        })
    }

    /// A copy of a fixture's files with some replaced or added.
    fn copy(name: &str, changes: &[(&str, &str)]) -> FakeTree {
        let base = fixture(name).path("/");
        let mut files = Vec::new();
        let mut stack = vec![std::path::PathBuf::from(&base)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p
                        .strip_prefix(&base)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    files.push((format!("/{rel}"), std::fs::read_to_string(&p).unwrap()));
                }
            }
        }
        for (p, text) in changes {
            files.retain(|(q, _)| q != p);
            files.push((p.to_string(), text.to_string()));
        }
        FakeTree::new(&files)
    }

    #[test]
    fn a_pi_without_preempt_rt_is_told_the_raspberry_pi_kernel_not_debians() {
        let pi = copy(
            "raspberrypi4",
            &[
                ("/proc/sys/kernel/version", "#1 SMP PREEMPT Debian\n"),
                ("/sys/kernel/realtime", ""),
            ],
        );
        let v = judge(&pi.root(), &crate::doctor::kernel::PREEMPTION);
        let fix = v.fix.clone().unwrap_or_default();
        assert!(
            fix.contains("Raspberry Pi kernel tree") && !fix.contains("apt install linux-image-rt"),
            "{v:?}"
        );
    }

    #[test]
    fn under_voltage_now_fails_with_power_and_cooling_fixes() {
        let v = judge(&fixture("raspberrypi3"), &THROTTLING);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(
            v.found,
            "now: under-voltage, throttled; since boot: under-voltage, throttled (0x50005 in /sys/devices/platform/soc/soc:firmware/get_throttled)"
        );
        let fix = v.fix.unwrap();
        assert!(
            fix.contains("the official supply") && fix.contains("cooling"),
            "{fix}"
        );
    }

    #[test]
    fn since_boot_only_warns_and_a_clean_state_is_ok() {
        let t = copy(
            "raspberrypi4",
            &[(
                "/sys/devices/platform/soc/soc:firmware/get_throttled",
                "50000\n",
            )],
        );
        let v = judge(&t.root(), &THROTTLING);
        assert_eq!(v.status, Status::Warn);
        assert!(
            v.found.starts_with("since boot: under-voltage, throttled"),
            "{}",
            v.found
        );
        assert!(v.fix.unwrap().contains("clear only at reboot"));
        let t = copy(
            "raspberrypi4",
            &[(
                "/sys/devices/platform/soc/soc:firmware/get_throttled",
                "80008\n",
            )],
        );
        let v = judge(&t.root(), &THROTTLING);
        assert_eq!(v.status, Status::Warn, "a soft temperature limit alone");
        assert!(!v.fix.unwrap().contains("supply"));
        let v = judge(&fixture("raspberrypi4"), &THROTTLING);
        assert_eq!(v.status, Status::Ok);
        assert!(v.found.starts_with("none now or since boot (0x0 in "));
    }

    #[test]
    fn elsewhere_they_do_not_apply() {
        let t = FakeTree::new(&[("/proc/cpuinfo", "vendor_id\t: GenuineIntel\n")]);
        for check in [&THROTTLING, &BOOT_CONFIG] {
            let v = judge(&t.root(), check);
            assert!(!v.applies, "{}", v.found);
            assert!(v.found.starts_with("not a Raspberry Pi"), "{}", v.found);
        }
        let v = judge(&fixture("raspberrypi4"), &THROTTLING);
        assert!(v.applies);
        let t = copy(
            "raspberrypi4",
            &[("/sys/devices/platform/soc/soc:firmware/get_throttled", "")],
        );
        let v = judge(&t.root(), &THROTTLING);
        assert_eq!(v.status, Status::Info);
        assert!(v.fix.unwrap().contains("vcgencmd get_throttled"));
    }

    #[test]
    fn boot_files_with_and_without_a_pending_reboot() {
        let v = judge(&fixture("raspberrypi4"), &BOOT_CONFIG);
        assert_eq!(v.status, Status::Ok, "{v:?}");
        assert_eq!(
            v.found,
            "/boot/firmware/config.txt: arm_boost=1; cmdline.txt matches the running kernel's latency options"
        );
        let v = judge(&fixture("raspberrypi3"), &BOOT_CONFIG);
        assert_eq!(v.status, Status::Ok);
        assert!(
            v.found.starts_with("/boot/config.txt: no clock settings"),
            "{}",
            v.found
        );
        // isolcpus written to cmdline.txt; /proc/cmdline (with the
        // firmware's words in front) still lacks it.
        let line =
            std::fs::read_to_string(fixture("raspberrypi4").path("/boot/firmware/cmdline.txt"))
                .unwrap();
        let edited = format!("{} isolcpus=3 nohz_full=3", line.trim());
        let running = format!("coherent_pool=1M 8250.nr_uarts=1 {line}");
        let t = copy(
            "raspberrypi4",
            &[
                ("/boot/firmware/cmdline.txt", edited.as_str()),
                ("/proc/cmdline", running.as_str()),
            ],
        );
        let v = judge(&t.root(), &BOOT_CONFIG);
        assert_eq!(v.status, Status::Warn);
        assert!(
            v.found.ends_with(
                "/boot/firmware/cmdline.txt differs from the running kernel's command line: isolcpus=3 (running: not set), nohz_full=3 (running: not set)"
            ),
            "{}",
            v.found
        );
        assert!(v.fix.unwrap().starts_with("reboot to boot with"));
    }
}
