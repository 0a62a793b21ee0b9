//! Doctor checks against fake system trees: configurations this machine
//! does not have (PREEMPT_RT, isolcpus, powersave governor, SMT).

use super::*;
use crate::sysinfo::FakeTree;

fn judge(t: &FakeTree, cpus: Option<Vec<usize>>) -> Vec<Finding> {
    let f = Facts::gather(&t.root());
    let rt = cpus.unwrap_or_else(|| default_rt_cpus(&f).0);
    run(&Ctx {
        facts: &f,
        rt_cpus: rt,
    })
}

fn find<'a>(v: &'a [Finding], id: &str) -> &'a Finding {
    v.iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no check {id}"))
}

/// 4 CPUs in 2 cores (0-1, 2-3).
fn base<P: AsRef<str>, T: AsRef<str>>(extra: &[(P, T)]) -> FakeTree {
    let mut files: Vec<(String, String)> = vec![
        ("/proc/sys/kernel/osrelease".into(), "6.6.0\n".into()),
        ("/sys/devices/system/cpu/online".into(), "0-3\n".into()),
        (
            "/proc/cpuinfo".into(),
            "model name\t: Fake\nflags\t: fpu\n".into(),
        ),
        ("/proc/cmdline".into(), "root=/dev/sda\n".into()),
    ];
    for c in 0..4 {
        files.push((
            format!("/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list"),
            if c < 2 { "0-1" } else { "2-3" }.into(),
        ));
    }
    for (a, b) in extra {
        files.push((a.as_ref().to_string(), b.as_ref().to_string()));
    }
    FakeTree::new(&files)
}

#[test]
fn preempt_rt_is_ok_from_each_source() {
    for files in [
        vec![("/sys/kernel/realtime", "1\n")],
        vec![("/proc/sys/kernel/version", "#1 SMP PREEMPT_RT Tue\n")],
        vec![("/proc/sys/kernel/version", "#1 SMP PREEMPT RT Tue\n")],
        vec![("/boot/config-6.6.0", "CONFIG_PREEMPT_RT=y\n")],
    ] {
        let t = base(&files);
        let p = find(&judge(&t, None), "preemption").clone();
        assert_eq!(p.status, Status::Ok, "{files:?}: {p:?}");
        assert!(p.found.contains("PREEMPT_RT"));
    }
    let t = base(&[
        ("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n"),
        (
            "/boot/config-6.6.0",
            "CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_NONE=y\n",
        ),
    ]);
    let p = find(&judge(&t, None), "preemption").clone();
    assert_eq!(p.status, Status::Fail);
    assert!(p.fix.unwrap().contains("preempt=full"));
}

#[test]
fn isolcpus_makes_those_the_rt_cpus_and_isolated() {
    let t = base(&[
        (
            "/proc/cmdline",
            "root=/dev/sda isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3\n",
        ),
        ("/sys/devices/system/cpu/isolated", "2-3\n"),
        ("/sys/devices/system/cpu/nohz_full", "2-3\n"),
        (
            "/boot/config-6.6.0",
            "CONFIG_NO_HZ_FULL=y\nCONFIG_RCU_NOCB_CPU=y\n",
        ),
        ("/proc/irq/5/smp_affinity_list", "0-1\n"),
        ("/proc/irq/default_smp_affinity", "3\n"),
    ]);
    let f = Facts::gather(&t.root());
    assert_eq!(default_rt_cpus(&f).0, vec![2, 3]);
    let v = judge(&t, None);
    assert_eq!(find(&v, "isolation").status, Status::Ok);
    assert_eq!(find(&v, "nohz-full").status, Status::Ok);
    assert_eq!(find(&v, "rcu-nocbs").status, Status::Ok);
    assert_eq!(find(&v, "irqs").status, Status::Ok);
    assert_eq!(
        find(&v, "smt").status,
        Status::Ok,
        "both siblings are real-time"
    );
    // Without isolcpus the same CPUs are shared.
    let u = base(&[
        ("/proc/irq/5/smp_affinity_list", "0-3\n"),
        ("/proc/irq/5/effective_affinity_list", "2\n"),
    ]);
    let v = judge(&u, Some(vec![2, 3]));
    let iso = find(&v, "isolation");
    assert_eq!(iso.status, Status::Warn);
    assert!(
        iso.fix
            .as_deref()
            .unwrap()
            .contains("rtscope tune isolate 2-3")
    );
    let irqs = find(&v, "irqs");
    assert_eq!(irqs.status, Status::Warn);
    assert!(
        irqs.found.contains("1 of 1 IRQs") && irqs.found.contains("1 are now"),
        "{}",
        irqs.found
    );
}

#[test]
fn powersave_governor_warns_and_performance_is_ok() {
    let mut files = vec![];
    for c in 0..4 {
        files.push((
            format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"),
            if c == 3 { "powersave" } else { "performance" },
        ));
    }
    let t = base(&files);
    let g = find(&judge(&t, Some(vec![3])), "governor").clone();
    assert_eq!(g.status, Status::Warn);
    assert_eq!(g.found, "CPU 3: powersave");
    assert_eq!(
        find(&judge(&t, Some(vec![1])), "governor").status,
        Status::Ok
    );
    let none = base::<&str, &str>(&[]);
    assert_eq!(
        find(&judge(&none, Some(vec![1])), "governor").status,
        Status::Info
    );
}

#[test]
fn smt_sibling_outside_the_rt_set_warns() {
    let t = base(&[
        ("/sys/devices/system/cpu/smt/control", "on\n"),
        ("/sys/devices/system/cpu/smt/active", "1\n"),
    ]);
    let s = find(&judge(&t, Some(vec![3])), "smt").clone();
    assert_eq!(s.status, Status::Warn);
    assert!(
        s.found.contains("CPU 3: shares its core with CPU 2"),
        "{}",
        s.found
    );
    assert_eq!(find(&judge(&t, Some(vec![2, 3])), "smt").status, Status::Ok);
}

#[test]
fn deep_idle_states_warn_unless_dma_latency_is_held() {
    let t = base(&[
        (
            "/sys/devices/system/cpu/cpuidle/current_driver",
            "intel_idle\n",
        ),
        ("/sys/devices/system/cpu/cpu1/cpuidle/state0/name", "POLL\n"),
        ("/sys/devices/system/cpu/cpu1/cpuidle/state0/latency", "0\n"),
        ("/sys/devices/system/cpu/cpu1/cpuidle/state1/name", "C6\n"),
        (
            "/sys/devices/system/cpu/cpu1/cpuidle/state1/latency",
            "133\n",
        ),
        ("/sys/devices/system/cpu/cpu1/cpuidle/state1/disable", "0\n"),
    ]);
    let i = find(&judge(&t, Some(vec![1])), "idle-states").clone();
    assert_eq!(i.status, Status::Warn);
    assert!(i.found.contains("C6 133 µs"), "{}", i.found);
    t.write("/sys/devices/system/cpu/cpu1/cpuidle/state1/disable", "1\n");
    assert_eq!(
        find(&judge(&t, Some(vec![1])), "idle-states").status,
        Status::Ok
    );
}

#[test]
fn every_check_answers_on_an_empty_tree() {
    let t = FakeTree::new::<&str, &str>(&[]);
    let v = judge(&t, Some(vec![]));
    // Everything answers but the Raspberry Pi's two checks, which an
    // empty tree (no device-tree model) is not.
    let pi_only = ["pi-throttling", "pi-boot-config"];
    assert_eq!(v.len(), CHECKS.len() - pi_only.len());
    assert!(v.iter().all(|f| !pi_only.contains(&f.id)));
    let mut ids: Vec<&str> = CHECKS.iter().map(|c| c.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), CHECKS.len(), "check ids are unique");
    for f in &v {
        assert!(!f.found.is_empty(), "{}", f.id);
        assert!(!f.why.is_empty(), "{}", f.id);
    }
}

/// Debian's production kernels build in page poisoning and two tracers,
/// idle until turned on: named as such, no warning; turned on, a warning
/// that says by what.
#[test]
fn debug_options_built_in_and_idle_are_not_a_warning() {
    let config = (
        "/boot/config-6.6.0",
        "CONFIG_PAGE_POISONING=y\nCONFIG_SCHED_TRACER=y\nCONFIG_FUNCTION_GRAPH_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\n",
    );
    let mounts = (
        "/proc/self/mounts",
        "tracefs /sys/kernel/tracing tracefs rw 0 0\n",
    );
    let nop = ("/sys/kernel/tracing/current_tracer", "nop\n");
    let t = base(&[config, mounts, nop]);
    let d = find(&judge(&t, None), "debug-options").clone();
    assert_eq!(d.status, Status::Ok, "{d:?}");
    assert!(
        d.found
            .starts_with("built in and idle: CONFIG_PAGE_POISONING (until page_poison=on)"),
        "{}",
        d.found
    );
    let poisoned = ("/proc/cmdline", "root=/dev/sda page_poison=1\n");
    let graph = (
        "/sys/kernel/tracing/instances/x/current_tracer",
        "function_graph\n",
    );
    let t = base(&[config, mounts, nop, poisoned, graph]);
    let d = find(&judge(&t, None), "debug-options").clone();
    assert_eq!(d.status, Status::Warn, "{d:?}");
    assert!(
        d.found.contains(
            "CONFIG_PAGE_POISONING turned on by page_poison=1 on the kernel command line"
        ),
        "{}",
        d.found
    );
    assert!(
        d.found.contains(
            "CONFIG_FUNCTION_GRAPH_TRACER turned on by the tracer function_graph selected at instance x"
        ),
        "{}",
        d.found
    );
    assert!(d.found.contains("built in and idle: CONFIG_SCHED_TRACER"));
    let fix = d.fix.unwrap();
    assert!(fix.contains("remove page_poison=1"), "{fix}");
    assert!(
        fix.contains("echo nop > /sys/kernel/tracing/instances/x/current_tracer"),
        "{fix}"
    );
    // tracefs not mounted: the tracers are unknown (info), not idle.
    let t = base(&[config]);
    let d = find(&judge(&t, None), "debug-options").clone();
    assert_eq!(d.status, Status::Info, "{d:?}");
    assert!(
        d.found
            .contains("whether in use unknown (tracefs is not mounted")
    );
    // One that costs whenever built in still warns.
    let t = base(&[("/boot/config-6.6.0", "CONFIG_DEBUG_PREEMPT=y\n")]);
    let d = find(&judge(&t, None), "debug-options").clone();
    assert_eq!(d.status, Status::Warn);
    assert_eq!(d.found, "CONFIG_DEBUG_PREEMPT (cost whenever built in)");
}
