//! `measure --explain`: a known disturbance is named as the culprit of
//! the largest wake-up, a run with nothing above the threshold explains
//! nothing, bad input is refused before measuring, and tracing leaves no
//! instance and no mount behind.

use crate::util::*;

pub(crate) fn mounts() -> String {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("tracefs"))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn our_instances() -> Vec<String> {
    std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("rtscope-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_hog_is_named_as_what_ran_instead() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let before = mounts();
    let (r, hog_tid) = measure_beside_a_hog("explain-hog", &[]);
    let e = &r["explain"];
    assert_eq!(e["threshold_ns"], 100_000);
    assert!(e["spikes_seen"].as_u64().unwrap() > 0, "{e}");
    let xs = e["explanations"].as_array().unwrap();
    let top = &xs[0];
    // Largest first, and it is the run's maximum.
    assert_eq!(
        top["spike"]["latency_ns"], r["threads"][0]["stats"]["max_ns"],
        "{top}"
    );
    // The hog's spikes are explained as the hog's. (Not necessarily the
    // largest: this VM's hypervisor stalls idle CPUs for as long as the
    // hog's 20 ms now and then, and such a stall is explained as one.)
    let x = by_the_hog(xs);
    let hog_part = x["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["culprit"]["comm"] == Hog::COMM)
        .unwrap();
    assert_eq!(hog_part["culprit"]["pid"], hog_tid, "{hog_part}");
    assert!(
        hog_part["share_pct"].as_f64().unwrap() >= 90.0,
        "{hog_part}"
    );
    assert!(x["cause"].as_str().unwrap().contains(Hog::COMM), "{x}");
    // The lean set by default, at 1 ms too: no timer path.
    assert!(!recorded_or_missing(e, "timer:hrtimer_expire_entry"), "{e}");
    // Nothing left: no instance of ours, the mounts as they were.
    assert!(our_instances().is_empty(), "{:?}", our_instances());
    assert_eq!(mounts(), before);
}

/// The first (largest) explanation that names the hog among its parts.
fn by_the_hog(xs: &[serde_json::Value]) -> &serde_json::Value {
    xs.iter()
        .find(|x| {
            x["parts"]
                .as_array()
                .is_some_and(|p| p.iter().any(|p| p["culprit"]["comm"] == Hog::COMM))
        })
        .unwrap_or_else(|| {
            panic!(
                "no explanation names the hog: {}",
                serde_json::Value::from(xs.to_vec())
            )
        })
}

/// `measure --explain` of one thread at FIFO 50 on CPU 1 for 2 s (with
/// `extra` options) beside [`Hog`]: the run record and the hog's tid.
fn measure_beside_a_hog(name: &str, extra: &[&str]) -> (serde_json::Value, i32) {
    let hog = Hog::start(1);
    let hog_tid = hog.tid;
    let dir = TempDir::new(name);
    let json = dir.join("run.json");
    let o = rtscope(dir.path())
        .args(["measure", "-a", "1", "-t", "1", "-p", "50", "-D", "2", "-q"])
        .args(extra)
        .args(["--explain", "--no-save", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    drop(hog);
    assert_code(&o, 0);
    (read_json(&json), hog_tid)
}

fn recorded_or_missing(e: &serde_json::Value, event: &str) -> bool {
    ["events", "missing_events"].iter().any(|k| {
        e[k].as_array()
            .is_some_and(|a| a.iter().any(|v| v == event))
    })
}

#[test]
fn the_lean_set_leaves_the_timer_path_and_the_wake_ups_out_and_still_names_the_hog() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let (r, hog_tid) = measure_beside_a_hog("explain-lean", &["-i", "200"]);
    let e = &r["explain"];
    for gone in TIMER_PATH {
        assert!(!recorded_or_missing(e, gone), "{gone} in {e}");
    }
    assert!(recorded_or_missing(e, "sched:sched_switch"), "{e}");
    let top = by_the_hog(e["explanations"].as_array().unwrap());
    assert_eq!(top["completeness"], "complete", "{top}");
    assert!(
        top["parts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["culprit"]["pid"] == hog_tid),
        "{top}"
    );
    assert!(top["cause"].as_str().unwrap().contains(Hog::COMM), "{top}");
    // Wake-ups are left out and the thread's switches to idle filtered
    // out, known as such (a note), not taken for lost events.
    assert!(!recorded_or_missing(e, "sched:sched_waking"), "{e}");
    let tid = top["spike"]["tid"].as_i64().unwrap();
    assert_eq!(
        e["filters"],
        serde_json::json!([format!(
            "sched:sched_switch: (prev_pid != {tid}) || next_pid != 0"
        )]),
        "{e}"
    );
    assert!(
        top["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains(&format!(
                "leaves wake-ups and thread {tid}'s switches to idle"
            ))),
        "{top}"
    );
    // Without the timer's expiry the IRQ/thread split is unknown, said
    // so, never 0.
    assert_eq!(
        top["irq_thread"],
        serde_json::json!({"state": "unknown", "why": "lean_set"}),
        "{top}"
    );

    // Asked for, the full set records the timer path at any interval,
    // and filters nothing.
    let (r, _) = measure_beside_a_hog("explain-full", &["-i", "200", "--explain-events", "full"]);
    assert!(r["explain"].get("filters").is_none(), "{}", r["explain"]);
    // (arm64 has no irq_vectors: its timer is an IRQ, in both sets.)
    let vectors = if cfg!(target_arch = "x86_64") { 4 } else { 2 };
    for kept in &TIMER_PATH[..vectors] {
        assert!(recorded_or_missing(&r["explain"], kept), "{kept}");
    }
    assert!(our_instances().is_empty(), "{:?}", our_instances());
}

/// With the full set, every wake-up's trace holds its timer's expiry:
/// the explanations split the latency into the IRQ latency and the
/// thread latency as rtla timerlat does (facts, no timing).
#[test]
fn the_full_set_splits_irq_and_thread_latency() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let dir = TempDir::new("explain-split");
    let json = dir.join("run.json");
    let o = rtscope(dir.path())
        .args([
            "measure", "-a", "1", "-t", "1", "-p", "50", "-D", "2s", "-q",
        ])
        .args(["--explain", "1us", "--explain-events", "full"])
        .args(["--no-save", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let r = read_json(&json);
    let e = &r["explain"];
    assert!(recorded_or_missing(e, "timer:hrtimer_expire_entry"), "{e}");
    let has_event = !e["missing_events"]
        .as_array()
        .is_some_and(|m| m.iter().any(|v| v == "timer:hrtimer_expire_entry"));
    if !require(
        Need::Kernel,
        has_event,
        "a kernel with the timer:hrtimer_expire_entry event",
    ) {
        return;
    }
    // Whether the kernel offers timerlat is looked at (and it is never
    // started: the instance's tracer stays as it was).
    assert!(e["timerlat_available"].is_boolean(), "{e}");
    let xs = e["explanations"].as_array().unwrap();
    assert!(!xs.is_empty(), "every wake-up reaches 1 µs: {e}");
    let mut known = 0;
    for x in xs {
        let split = &x["irq_thread"];
        match split["state"].as_str() {
            Some("known") => {
                known += 1;
                let irq = split["irq_latency_ns"].as_u64().unwrap();
                let thread = split["thread_latency_ns"].as_u64().unwrap();
                assert!(irq <= thread, "{x}");
                assert_eq!(split["thread_latency_ns"], x["spike"]["latency_ns"], "{x}");
                assert!(["irq", "thread"].contains(&split["dominant"].as_str().unwrap()));
            }
            Some("unknown") => assert_ne!(split["why"], "lean_set", "{x}"),
            _ => panic!("no split: {x}"),
        }
        // A whole story holds the thread's wake-up, so its timer's expiry.
        if x["completeness"] == "complete" {
            assert_eq!(split["state"], "known", "{x}");
        }
    }
    assert!(known > 0, "{e}");
    assert!(our_instances().is_empty(), "{:?}", our_instances());
}

const TIMER_PATH: [&str; 4] = [
    "timer:hrtimer_expire_entry",
    "timer:hrtimer_expire_exit",
    "irq_vectors:local_timer_entry",
    "irq_vectors:local_timer_exit",
];

#[test]
fn nothing_above_the_threshold_explains_nothing() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("explain-none");
    let json = dir.join("run.json");
    let o = rtscope(dir.path())
        .args(["measure", "-t", "1", "-D", "1", "-q", "--explain", "10s"])
        .args(["--no-save", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let r = read_json(&json);
    assert_eq!(r["explain"]["spikes_seen"], 0);
    assert_eq!(r["explain"]["explanations"].as_array().unwrap().len(), 0);
}

#[test]
fn bad_explain_input_is_refused_before_measuring() {
    let dir = TempDir::new("explain-bad");
    for (args, says) in [
        (vec!["--explain", "soon"], "soon"),
        (vec!["--explain", "--clock", "realtime"], "monotonic"),
        (vec!["--explain", "0"], "greater than 0"),
        (vec!["--explain-events", "lean"], "--explain"),
        (vec!["--explain", "--explain-events", "most"], "most"),
    ] {
        let o = rtscope(dir.path())
            .args(["measure", "-D", "1", "-q", "--no-save"])
            .args(&args)
            .output()
            .unwrap();
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            stdout(&o).is_empty(),
            "nothing was measured: {}",
            stdout(&o)
        );
    }
    if is_root() {
        // Without root (here: as nobody), tracing is refused up front.
        let o = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin())
            .args(["measure", "--policy", "other", "-D", "1", "-q", "--no-save"])
            .args(["--explain"])
            .env("HOME", dir.path())
            .output()
            .unwrap();
        assert_code(&o, 2);
        assert!(stderr(&o).contains("needs root"), "{}", stderr(&o));
    }
}

/// The CPUs thread `tid` of process `pid` may run on, once a thread
/// named `comm` exists.
fn task_named(pid: u32, comm: &str) -> Option<(String, String)> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    for e in dir.flatten() {
        let p = e.path();
        let name = std::fs::read_to_string(p.join("comm")).unwrap_or_default();
        if name.trim() == comm {
            let status = std::fs::read_to_string(p.join("status")).unwrap_or_default();
            let allowed = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .unwrap_or("")
                .trim()
                .to_string();
            return Some((e.file_name().to_string_lossy().into_owned(), allowed));
        }
    }
    None
}

#[test]
fn under_isolate_the_trace_reader_keeps_off_the_isolated_cpu() {
    // cgroup v2 keeps a process's threads in one cpuset: there the
    // trace reader cannot be kept apart this way (tests/it/cgroup_v2.rs
    // tests isolation on v2).
    if !require_root()
        || !require(
            Need::CgroupV1,
            crate::tune::cpuset_root() == crate::tune::CPUSET,
            "the cpuset controller on cgroup v1",
        )
    {
        return;
    }
    let _g = exclusive_system();
    let t = crate::tune::Tuner::new("explain-isolate");
    let kid = crate::tune::Kid::new(
        t.cmd()
            .args(["measure", "--isolate", "1", "-D", "30s", "-q"])
            .args(["--explain", "--no-save"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let pid = kid.id();
    let mut seen = String::new();
    let t0 = std::time::Instant::now();
    // The reader pins itself as it starts: wait for it to settle.
    while t0.elapsed() < std::time::Duration::from_secs(20) {
        if let Some((_, allowed)) = task_named(pid, "rtscope-trace") {
            seen = allowed;
            if seen == "0" {
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let measuring = task_named(pid, "rtscope-m0").map(|t| t.1);
    let o = kid.sigterm_and_wait();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(seen, "0", "the trace reader may run on CPUs {seen}: {err}");
    assert_eq!(measuring.as_deref(), Some("1"), "{err}");
    assert!(!err.contains("the trace reader shares them"), "{err}");
}
