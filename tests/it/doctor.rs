//! `rtscope doctor` run for real: on this machine, and against fake
//! /proc and /sys trees (built here) for configurations it lacks:
//! PREEMPT_RT, isolcpus, a powersave governor, SMT siblings.

use crate::util::*;
use std::path::Path;

fn write<P: AsRef<str>, T: AsRef<str>>(root: &Path, files: &[(P, T)]) {
    for (p, text) in files {
        let (p, text) = (p.as_ref(), text.as_ref());
        let f = root.join(p.trim_start_matches('/'));
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    }
}

fn doctor_json(dir: &TempDir, args: &[&str]) -> (serde_json::Value, std::process::Output) {
    let o = rtscope(dir.path())
        .arg("doctor")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert_code(&o, 0);
    (serde_json::from_str(&stdout(&o)).unwrap(), o)
}

fn check<'a>(v: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {v}"))
}

/// An 8-CPU PREEMPT_RT machine, 4 cores with 2 threads each (siblings n
/// and n+4), CPUs 2-3 isolated at boot, CPU 3 on powersave.
fn rt_machine(root: &Path) {
    let mut files: Vec<(String, String)> = vec![
        ("/proc/sys/kernel/osrelease".into(), "6.6.15-rt22\n".into()),
        ("/proc/sys/kernel/version".into(), "#1 SMP PREEMPT_RT Debian\n".into()),
        ("/sys/kernel/realtime".into(), "1\n".into()),
        (
            "/proc/cmdline".into(),
            "BOOT_IMAGE=/vmlinuz isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1\n".into(),
        ),
        ("/sys/devices/system/cpu/online".into(), "0-7\n".into()),
        ("/sys/devices/system/cpu/isolated".into(), "2-3\n".into()),
        ("/sys/devices/system/cpu/nohz_full".into(), "2-3\n".into()),
        ("/sys/devices/system/cpu/smt/control".into(), "on\n".into()),
        ("/sys/devices/system/cpu/smt/active".into(), "1\n".into()),
        (
            "/boot/config-6.6.15-rt22".into(),
            "CONFIG_PREEMPT_RT=y\nCONFIG_HZ=1000\nCONFIG_HIGH_RES_TIMERS=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_RCU_BOOST=y\nCONFIG_RCU_NOCB_CPU=y\n".into(),
        ),
        (
            "/sys/devices/system/clocksource/clocksource0/current_clocksource".into(),
            "tsc\n".into(),
        ),
        ("/proc/cpuinfo".into(), "model name\t: Fake Xeon\nflags\t: fpu tsc\n".into()),
        ("/proc/irq/30/smp_affinity_list".into(), "0-1\n".into()),
        ("/proc/irq/default_smp_affinity".into(), "03\n".into()),
    ];
    for c in 0..8 {
        let d = format!("/sys/devices/system/cpu/cpu{c}");
        let sib = format!("{},{}", c % 4, c % 4 + 4);
        files.push((format!("{d}/topology/thread_siblings_list"), sib));
        let gov = if c == 3 { "powersave" } else { "performance" };
        files.push((format!("{d}/cpufreq/scaling_governor"), gov.into()));
    }
    write(root, &files);
}

#[test]
fn doctor_on_a_fake_preempt_rt_machine_with_isolcpus_powersave_and_smt() {
    let dir = TempDir::new("doctor-rt");
    let root = dir.join("root");
    rt_machine(&root);
    let (v, _) = doctor_json(&dir, &["--sysroot", root.to_str().unwrap()]);
    assert_eq!(v["rt_cpus"], "2-3", "the isolcpus CPUs are judged");
    assert_eq!(check(&v, "preemption")["status"], "ok");
    assert_eq!(check(&v, "isolation")["status"], "ok");
    assert_eq!(check(&v, "nohz-full")["status"], "ok");
    assert_eq!(check(&v, "rcu-nocbs")["status"], "ok");
    assert_eq!(check(&v, "rcu-boost")["status"], "ok");
    assert_eq!(check(&v, "irqs")["status"], "ok");
    assert_eq!(check(&v, "virtualization")["status"], "ok");
    let g = check(&v, "governor");
    assert_eq!(g["status"], "warn");
    assert_eq!(g["found"], "CPU 3: powersave");
    assert!(g["fix"].as_str().unwrap().contains("performance"));
    let smt = check(&v, "smt");
    assert_eq!(smt["status"], "warn");
    assert!(
        smt["found"]
            .as_str()
            .unwrap()
            .contains("CPU 2: shares its core with CPU 6"),
        "{smt}"
    );
    // Judging CPU 1 instead: not isolated, its IRQ and governor differ.
    let (w, _) = doctor_json(&dir, &["--sysroot", root.to_str().unwrap(), "--cpus", "1"]);
    assert_eq!(check(&w, "isolation")["status"], "warn");
    assert_eq!(check(&w, "irqs")["status"], "warn");
    assert_eq!(check(&w, "governor")["status"], "ok");
    // The text form says the same, with why and fix for what is wrong.
    let o = rtscope(dir.path())
        .args(["doctor", "--sysroot", root.to_str().unwrap()])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let text = stdout(&o);
    assert!(
        text.contains("real-time CPUs 2-3 (isolated by isolcpus)"),
        "{text}"
    );
    assert!(text.contains("warn  CPU frequency governor"), "{text}");
    assert!(
        text.contains("why: A governor other than performance"),
        "{text}"
    );
}

#[test]
fn doctor_on_this_machine_and_strict_exit_codes() {
    // Two doctor runs must see the same system: no tune test in between.
    let _g = shared_system();
    let dir = TempDir::new("doctor-host");
    let (v, _) = doctor_json(&dir, &["--cpus", "1"]);
    let checks = v["checks"].as_array().unwrap();
    assert!(checks.len() >= 20);
    for c in checks {
        assert!(
            ["ok", "info", "warn", "fail"].contains(&c["status"].as_str().unwrap()),
            "{c}"
        );
        assert!(!c["found"].as_str().unwrap().is_empty());
        if c["status"] == "warn" || c["status"] == "fail" {
            assert!(c.get("fix").is_some(), "a problem without a fix: {c}");
        }
    }
    let bad = checks
        .iter()
        .any(|c| c["status"] == "warn" || c["status"] == "fail");
    let o = rtscope(dir.path())
        .args(["doctor", "--cpus", "1", "--strict"])
        .output()
        .unwrap();
    assert_code(&o, if bad { 1 } else { 0 });
    // The doctor and the run fingerprint read the same facts.
    let clocksource =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap();
    assert!(
        check(&v, "clocksource")["found"]
            .as_str()
            .unwrap()
            .starts_with(clocksource.trim())
    );
    // Bad input: one line, exit 2.
    let o = rtscope(dir.path())
        .args(["doctor", "--cpus", "99"])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(stderr(&o).contains("not online"), "{}", stderr(&o));
}

#[test]
fn run_fingerprint_records_the_system_facts() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("doctor-fp");
    let json = dir.join("r.json");
    let o = rtscope(dir.path())
        .args([
            "measure",
            "-D",
            "200ms",
            "-q",
            "-t",
            "1",
            "--json",
            json.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let fp = &read_json(&json)["fingerprint"];
    let file = |p: &str| std::fs::read_to_string(p).unwrap().trim().to_string();
    assert_eq!(
        fp["clocksource"],
        file("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    );
    assert_eq!(
        fp["sched_rt_runtime_us"].as_i64().unwrap().to_string(),
        file("/proc/sys/kernel/sched_rt_runtime_us")
    );
    assert_eq!(
        fp["cpus"].as_array().unwrap().len() as u64,
        fp["cpus_online"].as_u64().unwrap()
    );
    assert!(fp["virtualization"].is_string());
    assert!(fp["smt"]["threads_per_core"].as_u64().unwrap() >= 1);
}

fn pi_fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Raspberry Pi trees made from real files (tests/fixtures/raspberrypi*/
/// README.md): the board named, the firmware's under-voltage a failure,
/// config.txt's force_turbo in the governor's fix, no x86 advice.
#[test]
fn doctor_on_raspberry_pi_trees() {
    let dir = TempDir::new("doctor-pi");
    let pi3 = pi_fixture("raspberrypi3");
    let (v, _) = doctor_json(&dir, &["--sysroot", &pi3]);
    assert_eq!(v["machine"], "armv7l");
    let board = check(&v, "board");
    assert_eq!(board["status"], "info");
    assert!(
        board["found"]
            .as_str()
            .unwrap()
            .starts_with("Raspberry Pi 3 Model B Rev 1.2: arm (32-bit) (armv7l), 4 × Cortex-A53"),
        "{board}"
    );
    let t = check(&v, "pi-throttling");
    assert_eq!(t["status"], "fail");
    assert!(
        t["found"]
            .as_str()
            .unwrap()
            .starts_with("now: under-voltage, throttled")
    );
    assert!(t["fix"].as_str().unwrap().contains("official supply"));
    assert!(
        check(&v, "pi-boot-config")["found"]
            .as_str()
            .unwrap()
            .starts_with("/boot/config.txt")
    );
    let o = rtscope(dir.path())
        .args(["doctor", "--sysroot", &pi3, "--strict"])
        .output()
        .unwrap();
    assert_code(&o, 1);
    let text = stdout(&o);
    assert!(
        text.contains("FAIL  Raspberry Pi throttling and under-voltage"),
        "{text}"
    );

    let pi4 = pi_fixture("raspberrypi4");
    let (v, _) = doctor_json(&dir, &["--sysroot", &pi4, "--cpus", "3"]);
    assert_eq!(v["kernel_release"], "6.12.47+rpt-rpi-v8");
    assert_eq!(check(&v, "pi-throttling")["status"], "ok");
    assert_eq!(check(&v, "pi-boot-config")["status"], "ok");
    assert_eq!(check(&v, "clocksource")["status"], "ok");
    let g = check(&v, "governor");
    assert_eq!(g["status"], "warn");
    assert_eq!(g["found"], "CPU 3: ondemand");
    let fix = g["fix"].as_str().unwrap();
    assert!(
        fix.contains("force_turbo=1 in /boot/firmware/config.txt"),
        "{fix}"
    );
    for c in v["checks"].as_array().unwrap() {
        let fix = c["fix"].as_str().unwrap_or("");
        for x86 in [
            "intel_idle",
            "processor.max_cstate",
            "echo tsc",
            "tsc=",
            "hpet",
        ] {
            assert!(!fix.contains(x86), "x86 advice on a Pi: {c}");
        }
    }
}

/// The arm64 lab guests' own files (tests/fixtures/arm64-guest/README.md:
/// Debian's arm64 and rt-arm64 kernels on qemu's `-M virt`): PREEMPT_RT
/// told from `uname -v` and the kernel's config, /proc/cpuinfo without
/// "model name" read by its implementer and part, the architected counter
/// judged a good clocksource, qemu's `-M virt` machine named a VM, the
/// PREEMPT_RT fix naming the arm64 package, and no x86 advice anywhere.
#[test]
fn doctor_on_the_arm64_guests_files() {
    let dir = TempDir::new("doctor-arm64-guest");
    for (kernel, rt) in [("rt", true), ("vanilla", false)] {
        let root = pi_fixture(&format!("arm64-guest/{kernel}"));
        let (v, _) = doctor_json(&dir, &["--sysroot", &root, "--cpus", "1"]);
        assert_eq!(v["machine"], "aarch64", "{kernel}");
        let p = check(&v, "preemption");
        assert_eq!(p["status"], if rt { "ok" } else { "fail" }, "{kernel}: {p}");
        assert_eq!(
            p["found"].as_str().unwrap().starts_with("PREEMPT_RT"),
            rt,
            "{kernel}: {p}"
        );
        let c = check(&v, "clocksource");
        assert_eq!(c["status"], "ok", "{kernel}: {c}");
        assert_eq!(c["found"], "arch_sys_counter", "{kernel}: {c}");
        let board = check(&v, "board")["found"].as_str().unwrap().to_owned();
        assert!(
            board.contains("(aarch64)") && board.contains("2 ×"),
            "{kernel}: {board}"
        );
        assert_eq!(
            check(&v, "virtualization")["status"],
            "warn",
            "{kernel}: qemu's -M virt"
        );
        let fix = check(&v, "preemption")["fix"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        assert!(!fix.contains("amd64"), "{kernel}: {fix}");
        for c in v["checks"].as_array().unwrap() {
            let text = format!("{} {}", c["found"], c["fix"]);
            for x86 in [
                "intel_idle",
                "processor.max_cstate",
                "echo tsc",
                "tsc=",
                "hpet",
            ] {
                assert!(!text.contains(x86), "{kernel}: x86 advice on arm64: {c}");
            }
        }
    }
}
