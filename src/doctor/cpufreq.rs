//! CPU frequency checks: governor and frequency limits of the real-time
//! CPUs. On a Raspberry Pi the firmware has the last word: `force_turbo=1`
//! (or `arm_freq_min` = `arm_freq`) in config.txt holds the clock whatever
//! the governor, and is the fix named there besides the governor.

use super::{Check, Ctx, Status, Verdict, per_cpu};
use crate::sysinfo::facts::Facts;

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
        if let Some(held) = pi_clock_held(ctx.facts) {
            return Verdict::new(Status::Info, format!("{}; but {held}", per_cpu(&bad)));
        }
        return Verdict::new(Status::Warn, per_cpu(&bad)).fix(governor_fix(ctx));
    }
    if !capped.is_empty() {
        let pi = if ctx.facts.raspberry_pi.is_some() {
            "; on a Raspberry Pi the firmware also caps it when hot or short of power (see pi-throttling)"
        } else {
            ""
        };
        return Verdict::new(
            Status::Warn,
            format!("performance, but capped: {}", per_cpu(&capped)),
        )
        .fix(format!(
            "raise scaling_max_freq to cpuinfo_max_freq (cpupower frequency-set -u MAX){pi}"
        ));
    }
    Verdict::new(Status::Ok, govs.join(", "))
}

/// The governor's fix; on a Raspberry Pi, config.txt's too.
fn governor_fix(ctx: &Ctx) -> String {
    let cpus = ctx.rt_list();
    let run_time = format!("sudo rtscope tune isolate {cpus} (sets performance and restores it)");
    match ctx
        .facts
        .raspberry_pi
        .as_ref()
        .and_then(|p| p.boot_dir.as_ref())
    {
        Some(dir) => format!(
            "{run_time}; or at every boot: force_turbo=1 in {dir}/config.txt (the firmware then holds arm_freq whatever the governor; reboot)"
        ),
        None => format!("{run_time}, or: cpupower -c {cpus} frequency-set -g performance"),
    }
}

/// On a Raspberry Pi, what in config.txt holds the ARM clock fixed
/// whatever the governor: force_turbo=1, or arm_freq_min at arm_freq.
pub fn pi_clock_held(f: &Facts) -> Option<String> {
    let c = f.raspberry_pi.as_ref()?.config.as_ref()?;
    if c.force_turbo() {
        return Some(format!(
            "force_turbo=1 in {} holds the clock at arm_freq",
            c.path
        ));
    }
    match (c.int("arm_freq_min"), c.int("arm_freq")) {
        (Some(min), Some(max)) if min >= max => Some(format!(
            "arm_freq_min={min} in {} holds the clock at arm_freq={max}",
            c.path
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    fn pi4(config: &str) -> FakeTree {
        let mut files = vec![
            (
                "/proc/device-tree/model".to_string(),
                "Raspberry Pi 4 Model B Rev 1.4\0".to_string(),
            ),
            ("/sys/devices/system/cpu/online".into(), "0-3\n".into()),
            ("/boot/firmware/config.txt".into(), config.into()),
        ];
        for c in 0..4 {
            files.push((
                format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"),
                "ondemand\n".into(),
            ));
        }
        FakeTree::new(&files)
    }

    fn judge(t: &FakeTree) -> Verdict {
        let f = Facts::gather(&t.root());
        governor(&Ctx {
            facts: &f,
            rt_cpus: vec![3],
        })
    }

    #[test]
    fn on_a_pi_the_fix_names_force_turbo_and_force_turbo_holds_the_clock() {
        let v = judge(&pi4("arm_boost=1\n"));
        assert_eq!(v.status, Status::Warn);
        let fix = v.fix.unwrap();
        assert!(fix.contains("rtscope tune isolate 3"), "{fix}");
        assert!(
            fix.contains("force_turbo=1 in /boot/firmware/config.txt"),
            "{fix}"
        );
        assert!(!fix.contains("cpupower"), "{fix}");
        let v = judge(&pi4("[pi4]\nforce_turbo=1\n[all]\n"));
        assert_eq!(v.status, Status::Info);
        assert_eq!(
            v.found,
            "CPU 3: ondemand; but force_turbo=1 in /boot/firmware/config.txt holds the clock at arm_freq"
        );
        let v = judge(&pi4("arm_freq=1800\narm_freq_min=1800\n"));
        assert_eq!(v.status, Status::Info);
        assert!(v.found.contains("arm_freq_min=1800"), "{}", v.found);
        // force_turbo under another model's section does not apply.
        assert_eq!(judge(&pi4("[pi5]\nforce_turbo=1\n")).status, Status::Warn);
    }
}
