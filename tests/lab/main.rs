//! The lab: rtscope on real kernels, Debian's 6.1 vanilla and PREEMPT_RT,
//! booted as qemu guests (docs/lab.md), amd64 and arm64 (arm64.rs).
//! `make test` builds the guest images (scripts/lab/build-image) where
//! qemu can run and sets RTSCOPE_LAB_IMAGE and RTSCOPE_LAB_IMAGE_ARM64;
//! where make's lab tier cannot run (prepare says why once) they are set
//! empty. Unset or empty, each test fails saying what it needs, under the
//! suite's one skip rule (tests/common/need.rs), unless RTSCOPE_ALLOW_SKIP
//! allows `lab` (`make test RTSCOPE_LAB=0` sets it for the lab): then each
//! prints one SKIP line.
//!
//! Facts only: under TCG the guests' latencies are the emulator's, so no
//! test here reads a timing. Each test boots one guest (one at a time) and
//! hands it a job made of tests/lab/jobs/*.sh, except remote.rs's, which
//! keeps the RT guest up with its sshd and drives it with `--on`.

mod arm64;
mod boots;
mod guest;
mod many;
#[path = "../common/need.rs"]
mod need;
mod remote;
mod rule;

use guest::{Lab, check, headline, tail};

/// How long one guest may take, boot and job included (TCG, 2 CPUs
/// shared with the build: a boot takes 20-60 s, the jobs under a minute).
const TIMEOUT_S: u32 = 420;

/// The checks every kernel shares: the guest booted the kernel asked for,
/// the job ran as a unit with no HOME, the run went to root's system store
/// and `runs` and `report` found it there.
pub(crate) fn common_facts(lab: &Lab, kernel: &str, g: &guest::Guest) -> serde_json::Value {
    assert_eq!(g.file("uname").trim(), lab.release(kernel));
    assert!(
        !g.file("env").lines().any(|l| l.starts_with("HOME=")),
        "the job was to run with no HOME: {}",
        g.file("env")
    );
    let doctor: serde_json::Value = serde_json::from_str(&g.step("doctor", 0)).unwrap();
    g.step("measure", 0);
    let run = g.json("run.json");
    let runs = g.step("runs", 0);
    let release = lab.release(kernel);
    assert!(
        runs.lines()
            .any(|l| l.contains(" complete ") && l.contains(&release)),
        "runs (no HOME) does not list the run just made on {release}:\n{runs}"
    );
    assert!(
        g.file("store-dir").lines().any(|l| l == "rtscope.db"),
        "the run store is not in /var/lib/rtscope: {}",
        g.file("store-dir")
    );
    g.step("report", 0);
    // Debian's production kernels build debug options in but leave them
    // idle: no warning for those.
    let debug = check(&doctor, "debug-options");
    assert_ne!(debug["status"], "warn", "doctor: {debug}");
    assert_ne!(debug["status"], "fail", "doctor: {debug}");
    run
}

pub(crate) fn preemption(run: &serde_json::Value) -> &str {
    run["fingerprint"]["preemption_model"].as_str().unwrap()
}

#[test]
fn vanilla_kernel_facts_and_isolation_on_systemds_cgroup_v2() {
    let Some(lab) = Lab::get() else {
        return;
    };
    let g = lab.boot("vanilla", "", &["facts.sh", "isolate.sh"], TIMEOUT_S);
    let run = common_facts(&lab, "vanilla", &g);
    assert_eq!(g.file("realtime").trim(), "absent");
    // Debian's 6.1 is PREEMPT_DYNAMIC and boots as voluntary.
    assert_eq!(preemption(&run), "voluntary");
    let doctor = g.json("doctor.out");
    let p = check(&doctor, "preemption");
    assert_eq!(p["status"], "fail", "{p}");
    assert!(p["found"].as_str().unwrap().contains("VOLUNTARY"), "{p}");
    // The headline judges the deadline first; whatever it advises, it
    // never speaks as if the kernel measured were PREEMPT_RT.
    let h = headline(&g.file("report.html"));
    assert!(h.starts_with("Deadline "), "vanilla kernel, headline: {h}");
    assert!(
        !h.contains("On PREEMPT_RT"),
        "vanilla kernel, headline: {h}"
    );
    assert!(
        !h.contains("outside the scheduler"),
        "vanilla kernel, headline: {h}"
    );

    isolation_facts(&g);
}

/// isolate.sh's facts: `tune isolate 1` on the guest's own layout (cgroup
/// v2, systemd's slices) changed it, doctor saw CPU 1 isolated, a run
/// worked inside, and `tune --revert` put everything back.
pub(crate) fn isolation_facts(g: &guest::Guest) {
    let before = g.file("state.before");
    assert!(
        before.starts_with("cgroup2fs"),
        "not cgroup v2: {}",
        tail(&before, 5)
    );
    g.step("isolate", 0);
    let during = g.file("state.during");
    assert_ne!(before, during, "tune isolate changed nothing");
    assert!(during.contains("/sys/fs/cgroup/rtscope-rt"), "{during}");
    let isolated = g.json("isolated-doctor.out");
    assert_eq!(isolated["rt_cpus"], "1", "{}", isolated["rt_cpus"]);
    g.step("isolated-measure", 0);
    g.step("revert", 0);
    assert_eq!(
        before,
        g.file("state.after"),
        "tune --revert did not put the system back as it was"
    );
}

#[test]
fn preempt_full_is_detected_as_full() {
    let Some(lab) = Lab::get() else {
        return;
    };
    let g = lab.boot("vanilla", "preempt=full", &["facts.sh"], TIMEOUT_S);
    let run = common_facts(&lab, "vanilla", &g);
    assert!(g.file("cmdline").contains("preempt=full"));
    assert_eq!(preemption(&run), "full");
    let doctor = g.json("doctor.out");
    let p = check(&doctor, "preemption");
    assert_eq!(p["status"], "warn", "{p}");
    assert!(p["found"].as_str().unwrap().contains("(full)"), "{p}");
}

#[test]
fn preempt_rt_kernel_detection_verdict_explain_and_pi() {
    let Some(lab) = Lab::get() else { return };
    let g = lab.boot("rt", "", &["facts.sh", "rt.sh"], TIMEOUT_S);
    let run = common_facts(&lab, "rt", &g);
    assert_eq!(g.file("realtime").trim(), "1");
    assert_eq!(preemption(&run), "rt");
    let doctor = g.json("doctor.out");
    let p = check(&doctor, "preemption");
    assert_eq!(p["status"], "ok", "{p}");
    // The verdict speaks of the kernel it measured, never "vanilla"; on
    // PREEMPT_RT, milliseconds (what emulation gives) point outside the
    // scheduler, to the hypervisor first.
    let h = headline(&g.file("report.html"));
    assert!(h.starts_with("Deadline "), "RT kernel, headline: {h}");
    assert!(!h.contains("vanilla"), "RT kernel, headline: {h}");
    if run["overall"]["max_ns"].as_u64().unwrap() >= 1_000_000 {
        assert!(h.contains("PREEMPT_RT"), "{h}");
        assert!(h.contains("outside the scheduler"), "{h}");
        assert!(h.contains("hypervisor"), "{h}");
    }
    // The timerlat tracer is there (the cross-check with rtla is possible).
    assert!(
        g.file("tracers")
            .split_whitespace()
            .any(|t| t == "timerlat")
    );

    // --explain names what ran instead: the FIFO 60-80 interference
    // threads above the measuring thread at 50, or a threaded interrupt.
    g.step("explain-run", 0);
    let explain = g.step("explain", 0);
    let explained: serde_json::Value = serde_json::from_str(&explain).unwrap();
    let named = explain.contains("rtint-c") || explain.contains("irq/");
    if !named {
        // Under TCG the emulator can stall the guest's CPU for longer than
        // any interference (20 ms stalls were seen in CI): the largest
        // spikes, the ones explained, are then all stalls, which explain
        // must call so (no event in the trace, or a late timer), with
        // more spikes seen than explained. Anything else is a failure.
        let all_stalls = explained["explanations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| {
                let cause = e["cause"].as_str().unwrap_or("");
                cause.starts_with("unexplained") || cause.contains("hypervisor")
            });
        let seen = g.json("explain-run.json")["explain"]["spikes_seen"]
            .as_u64()
            .unwrap();
        assert!(
            all_stalls && seen > explained["explanations"].as_array().unwrap().len() as u64,
            "no explanation names an interference thread or a threaded IRQ:\n{}",
            tail(&explain, 40)
        );
        eprintln!(
            "lab: the explained spikes of the RT guest were all the emulator's stalls ({seen} spikes seen); the interference was not among them"
        );
    }
    // The full event set gives the IRQ/thread split, as rtla timerlat's,
    // of the spikes it explains (an emulator's stall, with no timer event
    // of its own, may have none: then only the stalls above were
    // explained), and the record says the kernel offers the timerlat
    // tracer.
    let splits: Vec<&serde_json::Value> = explained["explanations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["irq_thread"])
        .filter(|s| s["state"] == "known")
        .collect();
    assert!(
        !splits.is_empty() || !named,
        "no explanation carries the IRQ/thread split"
    );
    for s in splits {
        let irq = s["irq_latency_ns"].as_u64().unwrap();
        let thread = s["thread_latency_ns"].as_u64().unwrap();
        assert!(irq <= thread, "{s}");
    }
    assert_eq!(
        g.json("explain-run.json")["explain"]["timerlat_available"],
        true
    );
    // PI works on PREEMPT_RT: every self-check of the inversion held.
    g.step("characterize", 0);
    let pi = g.json("pi.json");
    let checks = pi["checks"].as_array().unwrap();
    assert!(!checks.is_empty());
    assert!(checks.iter().all(|c| c["held"] == true), "{checks:?}");
}
