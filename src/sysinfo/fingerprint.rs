//! The system fingerprint saved with every run: what the kernel, CPUs and
//! rtscope's own tuning were when the numbers were taken. Built from
//! [`Facts`] only, so it agrees with `doctor` by construction.

use super::SysRoot;
use super::cmdline::BootOptions;
use super::facts::{CpuFacts, Facts};
use super::tuning::TuningState;
use crate::record::{
    Fingerprint, FingerprintBoot, FingerprintCpu, FingerprintIdleState, FingerprintRcu,
    FingerprintSmt, FingerprintTuning,
};
use crate::units::format_cpu_list;

/// Take the fingerprint of the system below `root`.
pub fn take(root: &SysRoot) -> Fingerprint {
    from_facts(&Facts::gather(root))
}

pub fn from_facts(f: &Facts) -> Fingerprint {
    let b = &f.boot;
    let list = |v: &Option<Vec<usize>>| v.as_ref().map(|c| format_cpu_list(c));
    Fingerprint {
        hostname: f.uname.nodename.clone(),
        kernel_release: f.uname.release.clone(),
        kernel_version: f.uname.version.clone(),
        machine: f.uname.machine.clone(),
        preemption_model: f.preemption.model.clone(),
        preempt_dynamic_mode: f.preemption.dynamic_mode.clone(),
        preemption_evidence: f.preemption.evidence.clone(),
        cpu_model: f.cpu_model.clone(),
        cpus_online: f.online.len() as u32,
        cmdline: b.raw.clone(),
        extra: board_facts(f),
        kernel_config_source: f.config.as_ref().map(|c| c.source.clone()),
        hz: f.timers.hz,
        high_res_timers: f
            .timers
            .high_res_config
            .map(|on| on && f.timers.monotonic_resolution_ns.is_none_or(|r| r == 1)),
        no_hz_full: f.timers.no_hz_full_config,
        nohz_full_cpus: list(&f.timers.nohz_full_cpus).filter(|s| !s.is_empty()),
        rcu: f.config.as_ref().map(|_| FingerprintRcu {
            preempt_rcu: f.rcu.preempt_rcu,
            boost: f.rcu.boost,
            nocb_cpu: f.rcu.nocb_config,
            nocb_cpus: list(&f.rcu.nocb_cpus),
        }),
        boot_options: Some(boot_options(b)).filter(|o| *o != FingerprintBoot::default()),
        smt: Some(FingerprintSmt {
            control: f.smt.control.clone(),
            active: f.smt.active,
            threads_per_core: f.smt.threads_per_core,
        }),
        cpus: f.cpus.iter().map(cpu).collect(),
        cpuidle_driver: Some(f.cpuidle.driver.clone().unwrap_or_else(|| "none".into())),
        clocksource: f.timers.clocksource.clone(),
        sched_rt_runtime_us: f.sched.rt_runtime_us,
        sched_rt_period_us: f.sched.rt_period_us,
        virtualization: Some(f.virtualization.clone()),
        tuning: f.tuning.as_ref().and_then(|t| {
            (t.state != TuningState::Stale).then(|| FingerprintTuning {
                mode: t.mode.name().into(),
                command: t.command.clone(),
                isolated_cpus: format_cpu_list(&t.isolated_cpus),
                housekeeping_cpus: format_cpu_list(&t.housekeeping_cpus),
                settings: t.settings.clone(),
            })
        }),
    }
}

/// The board where the kernel names it (the device tree's model, a
/// Raspberry Pi's revision code) and, on a Raspberry Pi, the firmware's
/// throttling bits when the run began (`0x0`: never throttled or short of
/// power since boot): two runs of one kernel on a Pi 3 and a Pi 4, or on
/// a Pi that was throttled and one that was not, do not compare fairly.
/// Kept under `extra`, so records of boards without a model (most PCs)
/// are unchanged.
fn board_facts(f: &Facts) -> std::collections::BTreeMap<String, String> {
    let mut extra = std::collections::BTreeMap::new();
    if let Some(model) = &f.board.model {
        extra.insert("board_model".into(), model.clone());
    }
    if let Some(pi) = &f.raspberry_pi {
        if let Some(rev) = &f.board.revision {
            extra.insert("board_revision".into(), rev.clone());
        }
        if let Some(t) = &pi.throttled {
            extra.insert("pi_throttled".into(), format!("{:#x}", t.bits));
        }
    }
    extra
}

/// The real-time options on the kernel command line.
fn boot_options(b: &BootOptions) -> FingerprintBoot {
    FingerprintBoot {
        isolcpus: b.isolcpus.clone(),
        nohz_full: b.nohz_full.clone(),
        rcu_nocbs: b.rcu_nocbs.clone(),
        irqaffinity: b.irqaffinity.clone(),
        idle: b.idle.clone(),
        intel_idle_max_cstate: b.intel_idle_max_cstate.clone(),
        processor_max_cstate: b.processor_max_cstate.clone(),
        cpuidle_off: b.cpuidle_off.clone(),
        preempt: b.preempt.clone(),
        threadirqs: b.threadirqs,
        nosmt: b.nosmt.clone(),
    }
}

/// One CPU's frequency limits, governor and idle states.
fn cpu(c: &CpuFacts) -> FingerprintCpu {
    FingerprintCpu {
        cpu: c.cpu as u32,
        governor: c.freq.as_ref().and_then(|q| q.governor.clone()),
        min_khz: c.freq.as_ref().and_then(|q| q.min_khz),
        max_khz: c.freq.as_ref().and_then(|q| q.max_khz),
        idle_states: c
            .idle_states
            .iter()
            .map(|s| FingerprintIdleState {
                name: s.name.clone(),
                exit_latency_us: s.exit_latency_us,
                disabled: s.disabled,
            })
            .collect(),
        core_id: c.place.core_id.map(|v| v as u32),
        package_id: c.place.package_id.map(|v| v as u32),
        numa_node: c.place.numa_node.map(|v| v as u32),
        smt_siblings: c.place.siblings.as_ref().map(|s| format_cpu_list(s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    /// A PREEMPT_RT machine with 4 CPUs in 2 cores, isolcpus, and a
    /// powersave governor: every field comes from the fake tree.
    fn rt_box() -> FakeTree {
        let mut files: Vec<(String, String)> = vec![
            ("/proc/sys/kernel/osrelease".into(), "6.6.0-rt15\n".into()),
            (
                "/proc/sys/kernel/version".into(),
                "#1 SMP PREEMPT_RT Mon Jan 1\n".into(),
            ),
            ("/sys/kernel/realtime".into(), "1\n".into()),
            (
                "/proc/cmdline".into(),
                "root=/dev/sda isolcpus=2-3 rcu_nocbs=2-3 nohz_full=2-3\n".into(),
            ),
            (
                "/boot/config-6.6.0-rt15".into(),
                "CONFIG_HZ=1000\nCONFIG_HIGH_RES_TIMERS=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_RCU_BOOST=y\nCONFIG_RCU_NOCB_CPU=y\nCONFIG_PREEMPT_RCU=y\n".into(),
            ),
            ("/sys/devices/system/cpu/online".into(), "0-3\n".into()),
            ("/sys/devices/system/node/node0/cpulist".into(), "0-3\n".into()),
            ("/sys/devices/system/cpu/nohz_full".into(), "2-3\n".into()),
            ("/sys/devices/system/cpu/smt/control".into(), "on\n".into()),
            ("/sys/devices/system/cpu/smt/active".into(), "1\n".into()),
            (
                "/sys/devices/system/clocksource/clocksource0/current_clocksource".into(),
                "tsc\n".into(),
            ),
            ("/proc/sys/kernel/sched_rt_runtime_us".into(), "-1\n".into()),
            ("/proc/cpuinfo".into(), "model name\t: Test CPU\nflags\t: fpu\n".into()),
        ];
        for cpu in 0..4 {
            let d = format!("/sys/devices/system/cpu/cpu{cpu}");
            let sib = if cpu < 2 { "0-1" } else { "2-3" };
            files.push((format!("{d}/topology/thread_siblings_list"), sib.into()));
            files.push((format!("{d}/topology/core_id"), format!("{}\n", cpu / 2)));
            files.push((format!("{d}/topology/physical_package_id"), "0\n".into()));
            files.push((
                format!("{d}/cpufreq/scaling_governor"),
                "powersave\n".into(),
            ));
            files.push((format!("{d}/cpufreq/scaling_min_freq"), "800000\n".into()));
            files.push((format!("{d}/cpufreq/scaling_max_freq"), "3000000\n".into()));
            files.push((format!("{d}/cpuidle/state0/name"), "POLL\n".into()));
            files.push((format!("{d}/cpuidle/state0/latency"), "0\n".into()));
            files.push((format!("{d}/cpuidle/state1/name"), "C6\n".into()));
            files.push((format!("{d}/cpuidle/state1/latency"), "170\n".into()));
            files.push((format!("{d}/cpuidle/state1/disable"), "0\n".into()));
        }
        FakeTree::new(&files)
    }

    #[test]
    fn fingerprint_of_a_fake_rt_box() {
        let t = rt_box();
        let fp = take(&t.root());
        assert_eq!(fp.preemption_model, "rt");
        assert_eq!(fp.kernel_release, "6.6.0-rt15");
        assert_eq!(fp.hz, Some(1000));
        assert_eq!(fp.high_res_timers, Some(true));
        assert_eq!(fp.no_hz_full, Some(true));
        assert_eq!(fp.nohz_full_cpus.as_deref(), Some("2-3"));
        let rcu = fp.rcu.as_ref().unwrap();
        assert_eq!(
            (rcu.boost, rcu.nocb_cpus.as_deref()),
            (Some(true), Some("2-3"))
        );
        assert_eq!(
            fp.boot_options.as_ref().unwrap().isolcpus.as_deref(),
            Some("2-3")
        );
        assert_eq!(fp.smt.as_ref().unwrap().threads_per_core, 2);
        assert_eq!(fp.cpus.len(), 4);
        assert_eq!(fp.cpus[3].governor.as_deref(), Some("powersave"));
        assert_eq!(fp.cpus[3].idle_states[1].exit_latency_us, 170);
        assert_eq!(fp.clocksource.as_deref(), Some("tsc"));
        assert_eq!(fp.sched_rt_runtime_us, Some(-1));
        assert_eq!(fp.virtualization.as_deref(), Some("none"));
        assert_eq!(
            fp.kernel_config_source.as_deref(),
            Some("/boot/config-6.6.0-rt15")
        );
        assert!(fp.tuning.is_none());
    }

    #[test]
    fn a_raspberry_pi_is_named_with_its_throttling_state() {
        let fp = take(&SysRoot::fixture("raspberrypi4"));
        assert!(
            fp.extra["board_model"].starts_with("Raspberry Pi 4 Model B"),
            "{:?}",
            fp.extra
        );
        assert!(fp.extra.contains_key("board_revision"), "{:?}", fp.extra);
        assert_eq!(fp.extra["pi_throttled"], "0x0");
        let pc = take(&rt_box().root());
        assert!(
            pc.extra.is_empty(),
            "no board facts on a PC: {:?}",
            pc.extra
        );
        // A different board is a difference between two runs.
        let pi3 = take(&SysRoot::fixture("raspberrypi3"));
        assert!(
            fp.differences(&pi3)
                .iter()
                .any(|(k, _, _)| k == "extra.board_model")
        );
    }

    #[test]
    fn governor_change_changes_the_hash_but_evidence_does_not() {
        let t = rt_box();
        let a = take(&t.root());
        let mut b = a.clone();
        b.kernel_config_source = Some("/proc/config.gz".into());
        assert_eq!(a.comparable_hash(), b.comparable_hash());
        t.write(
            "/sys/devices/system/cpu/cpu2/cpufreq/scaling_governor",
            "performance\n",
        );
        let c = take(&t.root());
        assert_ne!(a.comparable_hash(), c.comparable_hash());
        let d = a.differences(&c);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].0, "cpus.2.governor");
    }

    #[test]
    fn each_cpu_is_placed_but_its_place_is_not_compared() {
        let t = rt_box();
        let fp = take(&t.root());
        let c3 = &fp.cpus[3];
        assert_eq!(
            (c3.core_id, c3.package_id, c3.numa_node),
            (Some(1), Some(0), Some(0))
        );
        assert_eq!(c3.smt_siblings.as_deref(), Some("2-3"));
        assert_eq!(fp.flatten()["cpus.3.smt_siblings"], "2-3");
        // A record written before CPUs were placed compares equal.
        let mut old = fp.clone();
        for c in &mut old.cpus {
            (c.core_id, c.package_id, c.numa_node, c.smt_siblings) = (None, None, None, None);
        }
        assert_eq!(fp.comparable_hash(), old.comparable_hash());
        assert!(fp.differences(&old).is_empty());
        // A tree that does not say leaves the fields out of the JSON.
        let bare = FakeTree::new(&[("/sys/devices/system/cpu/online", "0\n")]);
        let fp = take(&bare.root());
        assert_eq!(fp.cpus.len(), 1);
        let json = serde_json::to_string(&fp.cpus[0]).unwrap();
        assert_eq!(json, r#"{"cpu":0}"#);
    }

    #[test]
    fn old_records_still_read() {
        // A fingerprint written before these fields existed.
        let old = r##"{"kernel_release":"6.1","kernel_version":"#1","preemption_model":"none",
            "cpu_model":"x","cpus_online":2,"cmdline":""}"##;
        let fp: Fingerprint = serde_json::from_str(old).unwrap();
        assert!(fp.cpus.is_empty() && fp.tuning.is_none());
    }
}
