//! The arm64 guest: Debian's arm64 kernels, vanilla and PREEMPT_RT, on
//! qemu-system-aarch64's `-M virt`, from the image `scripts/lab/prepare
//! arm64` names in RTSCOPE_LAB_IMAGE_ARM64, running the aarch64 static
//! build (RTSCOPE_STATIC_BIN_ARM64, else target/aarch64-unknown-linux-gnu/
//! release/rtscope). The lab's facts hold there as on amd64: the kernel's
//! preemption model, doctor's verdicts on an ARM machine (its architected
//! timer judged ok, no x86 advice), `--explain` naming a SCHED_FIFO hog,
//! `tune isolate` and its revert on cgroup v2, `--on` choosing the
//! aarch64 build by itself, and a study from a workstation that reboots
//! the board by kexec into each kernel and back.
//!
//! With RTSCOPE_LAB_FIXTURES=DIR, each kernel's files taken by collect.sh
//! (tests/fixtures/arm64-guest/README.md) are copied to DIR/<kernel>.
//!
//! Facts only: the guests run under TCG here (an arm64 guest on x86_64 is
//! emulated on any host), so no test reads a timing.

use crate::boots::{study_from_host, up};
use crate::guest::{Arch, Guest, Lab, check, one_guest, tail};
use crate::remote::{bounded, holds_one_binary, path, ssh, temp_dir};
use crate::{common_facts, isolation_facts, preemption};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// One guest's boot and job: the emulated CPU is slower than amd64's
/// (a boot takes 1-3 minutes, the jobs 2-4 more).
const TIMEOUT_S: u32 = 1200;
/// The hog of jobs/hog.sh and jobs/collect.sh, by its comm.
const HOG: &str = "rtscope-hog";

/// What every arm64 kernel shares beside common_facts: an aarch64
/// machine with its architected timer, and doctor's advice free of x86's.
fn arm64_facts(lab: &Lab, kernel: &str, g: &Guest) -> serde_json::Value {
    let run = common_facts(lab, kernel, g);
    assert_eq!(g.file("machine").trim(), "aarch64");
    assert_eq!(run["fingerprint"]["machine"], "aarch64");
    assert_eq!(g.file("clocksource").trim(), "arch_sys_counter");
    assert_eq!(run["fingerprint"]["clocksource"], "arch_sys_counter");
    let doctor = g.json("doctor.out");
    let cs = check(&doctor, "clocksource");
    assert_eq!(cs["status"], "ok", "{cs}");
    assert!(
        cs["found"].as_str().unwrap().contains("arch_sys_counter"),
        "{cs}"
    );
    for c in doctor["checks"].as_array().unwrap() {
        let fix = c["fix"].as_str().unwrap_or("");
        let words: Vec<&str> = fix
            .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .collect();
        for x86 in ["intel_idle", "intel_pstate", "max_cstate", "tsc"] {
            assert!(
                !words.contains(&x86),
                "doctor gives an arm64 machine x86 advice ({x86}): {c}"
            );
        }
    }
    run
}

/// hog.sh's facts: `measure --explain` beside a FIFO 90 hog on the
/// measured CPU names the hog, by its pid and priority, as what ran.
fn names_the_hog(g: &Guest) {
    g.step("hog-run", 0);
    let hog_pid: i64 = g.file("hog.pid").trim().parse().unwrap();
    let explained: serde_json::Value = serde_json::from_str(&g.step("hog-explain", 0)).unwrap();
    let parts: Vec<&serde_json::Value> = explained["explanations"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|x| x["parts"].as_array().unwrap())
        .filter(|p| p["culprit"]["comm"] == HOG)
        .collect();
    assert!(
        !parts.is_empty(),
        "no explanation names the FIFO hog {HOG}:\n{}",
        tail(&g.file("hog-explain.out"), 40)
    );
    for p in parts {
        assert_eq!(p["culprit"]["kind"], "thread", "{p}");
        assert_eq!(p["culprit"]["pid"], hog_pid, "{p}");
        assert_eq!(p["culprit"]["priority"]["class"], "realtime", "{p}");
        assert_eq!(p["culprit"]["priority"]["rt_priority"], 90, "{p}");
    }
}

/// collect.sh's facts: the files were taken (and copied to
/// RTSCOPE_LAB_FIXTURES/<kernel> when that is set), and `explain --trace`
/// reads both traces of the hog (cyclictest's marked wake-up) and names it.
fn collected(lab: &Lab, kernel: &str, g: &Guest) {
    let f = g.out.join("fixtures");
    for file in [
        "proc/cpuinfo",
        "proc/interrupts",
        "proc/cmdline",
        "sys/devices/system/clocksource/clocksource0/current_clocksource",
        "sys/devices/system/clocksource/clocksource0/available_clocksource",
        "uname-a",
    ] {
        assert!(f.join(file).is_file(), "collect.sh took no {file}");
    }
    assert!(
        std::fs::read_to_string(f.join("uname-a"))
            .unwrap()
            .contains(&lab.release(kernel))
    );
    if let Some(dir) = std::env::var_os("RTSCOPE_LAB_FIXTURES").filter(|d| !d.is_empty()) {
        let to = Path::new(&dir).join(kernel);
        let _ = std::fs::remove_dir_all(&to);
        std::fs::create_dir_all(&to).unwrap();
        let o = Command::new("cp")
            .arg("-r")
            .arg(f.join("."))
            .arg(&to)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        eprintln!("lab: the {kernel} guest's files are in {}", to.display());
    }
    for trace in ["trace-cmd", "ftrace"] {
        let out = g.step(&format!("explain-{trace}"), 0);
        assert!(
            out.contains(HOG),
            "explain --trace ({trace}) does not name the hog:\n{}",
            tail(&out, 40)
        );
    }
}

#[test]
fn arm64_vanilla_kernel_facts_doctor_explain_and_isolation() {
    let Some(lab) = Lab::of(Arch::Arm64) else {
        return;
    };
    let parts = ["facts.sh", "arm64.sh", "isolate.sh", "hog.sh", "collect.sh"];
    let g = lab.boot("vanilla", "", &parts, TIMEOUT_S);
    let run = arm64_facts(&lab, "vanilla", &g);
    assert_eq!(g.file("realtime").trim(), "absent");
    // Debian's arm64 6.1 is built PREEMPT_VOLUNTARY (no PREEMPT_DYNAMIC).
    assert_eq!(preemption(&run), "voluntary");
    let doctor = g.json("doctor.out");
    let p = check(&doctor, "preemption");
    assert_eq!(p["status"], "fail", "{p}");
    isolation_facts(&g);
    names_the_hog(&g);
    collected(&lab, "vanilla", &g);
}

#[test]
fn arm64_preempt_rt_kernel_is_detected_and_explains_the_hog() {
    let Some(lab) = Lab::of(Arch::Arm64) else {
        return;
    };
    let parts = ["facts.sh", "arm64.sh", "hog.sh", "collect.sh"];
    let g = lab.boot("rt", "", &parts, TIMEOUT_S);
    let run = arm64_facts(&lab, "rt", &g);
    assert_eq!(g.file("realtime").trim(), "1");
    assert_eq!(preemption(&run), "rt");
    let doctor = g.json("doctor.out");
    let p = check(&doctor, "preemption");
    assert_eq!(p["status"], "ok", "{p}");
    assert!(p["found"].as_str().unwrap().contains("PREEMPT_RT"), "{p}");
    names_the_hog(&g);
    collected(&lab, "rt", &g);
}

/// `--on` to the arm64 board (the vanilla guest, its disk kept across
/// boots) with no --binary: rtscope finds the aarch64 build under target/
/// by itself, copies it once and runs doctor and measure there. Then
/// `--on BOARD study FILE --reboot` on the same boot: the board boots the
/// RT kernel by kexec, comes back to the boot it started from, and both
/// runs are copied here, by the same one binary on the board. (One boot
/// for both: an arm64 guest takes 1-2 minutes to boot under TCG.)
#[test]
fn arm64_board_gets_the_aarch64_build_and_its_study_reboots_by_kexec() {
    let Some(lab) = Lab::of(Arch::Arm64) else {
        return;
    };
    let target_bin = Arch::Arm64.target_bin().unwrap();
    assert!(
        target_bin.exists(),
        "--on looks for the aarch64 build at {}: make static-arm64",
        target_bin.display()
    );
    let _one = one_guest();
    let started = Instant::now();
    let dir = temp_dir("arm64-boots");
    let cfg = dir.join("ssh_config");
    let mut guest = up(&lab, &dir, &cfg, 1);
    eprintln!(
        "lab: arm64 vanilla guest up over ssh after {:.0} s",
        started.elapsed().as_secs_f64()
    );
    // The study's runs land in local.db, the first measure's in on.db.
    let on = |db: &str, args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rtscope"));
        c.env("RTSCOPE_BOARDS", dir.join("boards.toml"))
            .env_remove("RTSCOPE_DB")
            .env_remove("RTSCOPE_SSH_CONFIG")
            .arg("--db")
            .arg(dir.join(db))
            .arg("--ssh-config")
            .arg(&cfg)
            .args(["--on", "ssh://lab-rt"])
            .args(args);
        c
    };
    let rtscope = |args: &[&str]| {
        let (code, out, err) = bounded(&mut on("on.db", args), Duration::from_secs(600));
        assert_eq!(
            code,
            Some(0),
            "rtscope --on {}: exit {code:?}\n{}\n{}",
            args.join(" "),
            tail(&out, 20),
            tail(&err, 20)
        );
        out
    };
    let doctor: serde_json::Value = serde_json::from_str(&rtscope(&["doctor", "--json"])).unwrap();
    let p = check(&doctor, "preemption");
    assert!(
        !p["found"].as_str().unwrap().contains("PREEMPT_RT"),
        "the vanilla kernel: {p}"
    );
    let json = dir.join("vanilla.json");
    rtscope(&["measure", "-D", "3s", "-q", "--json", path(&json)]);
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(run["fingerprint"]["machine"], "aarch64");
    assert_ne!(run["fingerprint"]["preemption_model"], "rt");
    let on_start = started.elapsed().as_secs_f64();
    study_from_host(&lab, &dir, &cfg, None);
    let now = ssh(&cfg, "uname -r").expect(0, "the board at the end");
    assert_eq!(now.trim(), lab.release("vanilla"));
    // The one binary there, all along, is the aarch64 build under target/.
    holds_one_binary(&cfg, &target_bin);
    let left = guest.stop();
    assert!(left.is_empty(), "qemu of the test still running: {left:?}");
    drop(guest);
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "lab: arm64 --on {on_start:.0} s, then study --reboot: {:.0} s in all",
        started.elapsed().as_secs_f64()
    );
}
