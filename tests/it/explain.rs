//! `explain`: the CLI on recorded traces, and the real thing: rtscope's
//! trace recorder on CPU 1 while a SCHED_FIFO hog blocks a periodic
//! real-time thread there. Asserts facts (who is named, the share, that
//! the instance and the mount state are put back), never timings.

use crate::util::*;
use rtscope::explain::{Completeness, Culprit, Spike};
use rtscope::sys::clock::{Clock, now_ns, sleep_until_ns};
use rtscope::sys::sched::{KernelPolicy, gettid, set_affinity, set_scheduler_current};
use rtscope::trace::{Recorder, TraceConfig, tracefs};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/explain");

#[test]
fn explain_a_trace_file_as_text_and_json() {
    let dir = TempDir::new("explain-cli");
    for file in ["cyclictest-hog.trace", "cyclictest-hog.report.txt"] {
        let path = Path::new(FIXTURES).join(file);
        let o = rtscope(dir.path())
            .args(["explain", "--trace"])
            .arg(&path)
            .output()
            .unwrap();
        assert_code(&o, 0);
        let text = stdout(&o);
        assert!(
            text.contains("cause: blocked by perl:11979 (RT 95)"),
            "{text}"
        );
        let o = rtscope(dir.path())
            .args(["explain", "--json", "--trace"])
            .arg(&path)
            .output()
            .unwrap();
        assert_code(&o, 0);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v[0]["parts"][0]["culprit"]["pid"], 11979);
        assert_eq!(v[0]["completeness"], "complete");
        // rtla timerlat's split: the trace holds the thread's timer expiry.
        assert!(
            text.contains("IRQ and thread latency (as rtla timerlat splits them): IRQ latency "),
            "{text}"
        );
        let split = &v[0]["irq_thread"];
        assert_eq!(split["state"], "known", "{split}");
        assert_eq!(split["dominant"], "thread", "{split}");
        assert!(
            split["irq_latency_ns"].as_u64().unwrap()
                <= split["thread_latency_ns"].as_u64().unwrap(),
            "{split}"
        );
    }
}

/// The report shows each explanation's IRQ/thread split, and that
/// `rtla timerlat` can cross-check when the kernel has its tracer.
#[test]
fn the_report_shows_the_split_and_the_timerlat_cross_check() {
    let dir = TempDir::new("explain-report");
    let mut r = explained_record();
    r.explain.as_mut().unwrap().timerlat_available = Some(true);
    let file = write_record(&dir, "explained.json", &r);
    let out = dir.join("report.html");
    let o = rtscope(dir.path())
        .args([
            "report",
            file.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let html = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        html.matches(
            "<p class=\"split\">IRQ and thread latency (as rtla timerlat splits them): IRQ latency "
        )
        .count(),
        2,
        "one per explanation"
    );
    assert!(html.contains("blocked by perl:11979 (RT 95)"));
    assert!(html.contains("`rtla timerlat` can cross-check the IRQ and thread latencies"));
    let o = explain_cmd(&dir, &[file.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(stdout(&o).lines().next().unwrap().contains("rtla timerlat"));
}

#[test]
fn explain_refuses_what_is_not_a_trace() {
    let dir = TempDir::new("explain-bad");
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "shopping list\nmilk\n").unwrap();
    let o = rtscope(dir.path())
        .args(["explain", "--trace"])
        .arg(&notes)
        .output()
        .unwrap();
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("notes.txt:1: not a kernel trace"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let o = rtscope(dir.path()).args(["explain"]).output().unwrap();
    assert_code(&o, 2);
    // Above the size limit: refused unread (a sparse file of 2 GiB takes
    // no room), and a lower --max-size counts.
    let big = dir.join("big.trace");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    for (file, args) in [(&big, &[][..]), (&notes, &["--max-size", "8"][..])] {
        let o = rtscope(dir.path())
            .args(["explain", "--trace"])
            .arg(file)
            .args(args)
            .output()
            .unwrap();
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(
            err.contains("limit of a trace") && err.contains("--max-size"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// A SCHED_FIFO 90 thread named `rtscope-hog` on `cpu`: busy 20 ms every
/// 100 ms until stopped.
fn hog(cpu: usize, stop: Arc<AtomicBool>, tid: Arc<AtomicI32>) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name("rtscope-hog".into())
        .spawn(move || {
            set_affinity(0, &[cpu]).unwrap();
            set_scheduler_current(KernelPolicy::Fifo, 90).unwrap();
            tid.store(gettid(), Ordering::Release);
            while !stop.load(Ordering::Relaxed) {
                let until = Instant::now() + Duration::from_millis(20);
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
                std::thread::sleep(Duration::from_millis(80));
            }
        })
        .unwrap()
}

/// A SCHED_FIFO 80 thread on `cpu` waking every millisecond for
/// `duration`; returns its worst wake-up as a spike.
fn periodic(cpu: usize, duration: Duration) -> Spike {
    std::thread::Builder::new()
        .name("rtscope-wake".into())
        .spawn(move || {
            set_affinity(0, &[cpu]).unwrap();
            set_scheduler_current(KernelPolicy::Fifo, 80).unwrap();
            let tid = gettid();
            let period_ns = 1_000_000;
            let mut deadline = now_ns(Clock::Monotonic) + period_ns;
            let end = deadline + duration.as_nanos() as u64;
            let mut worst = (0u64, 0u64, 0u64);
            let mut cycle = 0u64;
            let mut worst_cycle = 0;
            while deadline < end {
                let _ = sleep_until_ns(Clock::Monotonic, deadline);
                let wake = now_ns(Clock::Monotonic);
                let lat = wake.saturating_sub(deadline);
                if lat > worst.2 {
                    worst = (deadline, wake, lat);
                    worst_cycle = cycle;
                }
                cycle += 1;
                // The next deadline after this wake-up (missed ones are
                // skipped, as the engine does).
                while deadline <= wake {
                    deadline += period_ns;
                }
            }
            Spike {
                thread: 0,
                cpu,
                tid,
                deadline_ns: worst.0,
                wake_ns: worst.1,
                latency_ns: worst.2,
                cycle: Some(worst_cycle),
            }
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn the_recorder_names_a_fifo_hog_and_puts_tracefs_back() {
    if !require_root() {
        return;
    }
    if !require(
        Need::Cpus,
        std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2,
        "two CPUs (the hog runs on CPU 1)",
    ) {
        return;
    }
    let _system = exclusive_system();
    let state = TempDir::new("explain-trace");
    let mounts_before = tracefs::mount_points();
    let mut cfg = TraceConfig::for_cpus(&[1]);
    cfg.state_dir = state.path().to_path_buf();
    cfg.reader_cpus = Some(vec![0]);
    let rec = Recorder::start(&cfg).unwrap();
    let instance = rec.instance_dir().to_path_buf();
    assert!(instance.is_dir());
    assert!(instance.ends_with(format!("rtscope-{}", std::process::id())));
    let clock = std::fs::read_to_string(instance.join("trace_clock")).unwrap();
    assert!(clock.contains("[mono]"), "{clock}");
    let journal = state.join(&format!("trace-{}.json", std::process::id()));
    assert!(journal.exists(), "journaled while tracing");
    assert!(
        rec.missing_events()
            .iter()
            .all(|e| !e.starts_with("sched:")),
        "{:?}",
        rec.missing_events()
    );

    let stop = Arc::new(AtomicBool::new(false));
    let hog_tid = Arc::new(AtomicI32::new(0));
    let h = hog(1, stop.clone(), hog_tid.clone());
    let spike = periodic(1, Duration::from_millis(450));
    stop.store(true, Ordering::Relaxed);
    h.join().unwrap();
    let hog_tid = hog_tid.load(Ordering::Acquire);
    assert!(
        spike.latency_ns > 1_000_000,
        "the hog blocked the thread: {spike:?}"
    );

    let x = rec.explain(&spike, 2_000_000_000);
    let stats = rec.stats();
    assert_eq!(stats.error, None);
    assert!(stats.events_read > 0);
    let text = rtscope::explain::text::render(&x);
    assert_eq!(x.completeness, Completeness::Complete, "{text}\n{stats:?}");
    let top = &x.parts[0];
    assert!(
        matches!(&top.culprit, Culprit::Thread { comm, pid, .. } if comm == "rtscope-hog" && *pid == hog_tid),
        "hog {hog_tid}:\n{text}"
    );
    // Which part is largest is the fact; how large it is depends on the
    // machine (a vCPU stall shows as idle time before the hog runs).
    assert!(
        x.parts.iter().all(|p| p.share_pct <= top.share_pct),
        "{text}"
    );
    let shares: f64 = x.parts.iter().map(|p| p.share_pct).sum();
    assert!((99.0..=101.0).contains(&shares), "shares add up: {text}");
    assert!(
        x.cause
            .starts_with(&format!("blocked by rtscope-hog:{hog_tid} (RT 90)")),
        "{text}"
    );

    drop(rec);
    assert!(!instance.exists(), "the instance is removed");
    assert_eq!(
        tracefs::mount_points(),
        mounts_before,
        "mount state restored"
    );
    assert!(!journal.exists(), "the journal is removed");
}

/// Run by `a_killed_recorder_is_cleaned_up_by_the_next_command` in a
/// child process (`--ignored`): trace until killed.
#[test]
#[ignore = "a child of a_killed_recorder_is_cleaned_up_by_the_next_command"]
fn recorder_child_until_killed() {
    let state = std::env::var_os("RTSCOPE_IT_TRACE_CHILD")
        .expect("run only by a_killed_recorder_is_cleaned_up_by_the_next_command");
    let mut cfg = TraceConfig::for_cpus(&[0]);
    cfg.state_dir = state.into();
    let _rec = Recorder::start(&cfg).unwrap();
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn a_killed_recorder_is_cleaned_up_by_the_next_command() {
    if !require_root() {
        return;
    }
    let _system = exclusive_system();
    let state = TempDir::new("explain-kill");
    let mounts_before = tracefs::mount_points();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "--ignored",
            "explain::recorder_child_until_killed",
            "--nocapture",
        ])
        .env("RTSCOPE_IT_TRACE_CHILD", state.path())
        .spawn()
        .unwrap();
    let journal = state.join(&format!("trace-{}.json", child.id()));
    let give_up = Instant::now() + Duration::from_secs(20);
    let entry = loop {
        let e = std::fs::read_to_string(&journal)
            .ok()
            .and_then(|t| serde_json::from_str::<rtscope::trace::journal::Entry>(&t).ok());
        if let Some(e) = e.filter(|e| e.instance.is_dir()) {
            break e;
        }
        assert!(Instant::now() < give_up, "the child never traced");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Let it finish setting up, then SIGKILL: nothing of its own runs.
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(entry.instance.is_dir(), "left behind by the kill");
    let msgs = rtscope::trace::journal::cleanup_stale_in(state.path());
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(msgs[0].contains("removed the trace instance"), "{msgs:?}");
    assert!(!entry.instance.exists());
    assert!(!journal.exists());
    assert_eq!(
        tracefs::mount_points(),
        mounts_before,
        "mount state restored"
    );
    assert!(rtscope::trace::journal::cleanup_stale_in(state.path()).is_empty());
}

// ------------------------------------------------ explain RUN (no measuring)

/// A run record as `measure --explain` writes it: two threads, the hog
/// of the recorded cyclictest trace on thread 0's CPU, a made-up partial
/// explanation on thread 1's.
fn explained_record() -> rtscope::record::RunRecord {
    let mut r = rtscope::record::synthetic(&[vec![5_000, 37_344_000], vec![4_000, 300_000]]);
    r.run_uuid = "abcdef0123456789abcdef0123456789".into();
    let mut real = rtscope::explain::explain_trace_file(
        &Path::new(FIXTURES).join("cyclictest-hog.trace"),
        rtscope::input::TRACE_MAX_BYTES,
    )
    .unwrap()
    .remove(0);
    real.spike.thread = 0;
    let made_up = rtscope::report::why::synthetic(1, 1, 300_000, true);
    r.explain = Some(rtscope::record::ExplainRecord {
        threshold_ns: 100_000,
        events: vec!["sched:sched_switch".into(), "sched:sched_waking".into()],
        missing_events: vec![],
        filters: vec![],
        spikes_seen: 5,
        spikes_explained: 2,
        events_read: 123_456,
        events_lost: 42,
        explanations: vec![real, made_up],
        timerlat_available: None,
    });
    r
}

fn write_record(dir: &TempDir, name: &str, r: &rtscope::record::RunRecord) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(r).unwrap()).unwrap();
    p
}

fn explain_cmd(dir: &TempDir, args: &[&str]) -> std::process::Output {
    rtscope(dir.path())
        .arg("explain")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn explain_run_prints_every_kept_explanation_from_the_store_or_a_file() {
    let dir = TempDir::new("explain-run");
    let file = write_record(&dir, "explained.json", &explained_record());
    let o = rtscope(dir.path())
        .arg("import")
        .arg(&file)
        .output()
        .unwrap();
    assert_code(&o, 0);
    for reference in ["last", "1", "abcdef01", file.to_str().unwrap()] {
        let o = explain_cmd(&dir, &[reference]);
        assert_code(&o, 0);
        let text = stdout(&o);
        let first = text.lines().next().unwrap();
        assert_eq!(
            first,
            "explain: 2 of 5 wake-ups that reached 100 µs explained (each thread's largest in every 50 ms tick of the run's supervisor); trace events: 123\u{202f}456 read, 42 lost (explanations whose interval lost events are marked partial)",
            "{reference}"
        );
        assert!(
            text.contains("cyclictest:11982 on CPU 1 woke 37.3 ms late"),
            "{text}"
        );
        assert!(
            text.contains("cause: blocked by perl:11979 (RT 95) for 37.2 ms, 99.5 %"),
            "{text}"
        );
        assert!(
            text.contains("rtscope-t1:101 on CPU 1 woke 300.0 µs late"),
            "{text}"
        );
        assert_eq!(text.matches("PARTIAL").count(), 1, "{text}");
        assert_eq!(text.matches("timeline (from the deadline):").count(), 2);
    }
    let o = explain_cmd(&dir, &["last", "--json"]);
    assert_code(&o, 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["threshold_ns"], 100_000);
    assert_eq!(v["events_lost"], 42);
    assert_eq!(v["explanations"].as_array().unwrap().len(), 2);
    assert_eq!(v["explanations"][0]["parts"][0]["culprit"]["pid"], 11979);
    assert_eq!(v["explanations"][1]["completeness"], "partial");
    // The stored record gives the same JSON as the file.
    let o2 = explain_cmd(&dir, &[file.to_str().unwrap(), "--json"]);
    assert_eq!(o.stdout, o2.stdout);

    // The summary of `runs show` has a line per thread and the counts.
    let o = rtscope(dir.path())
        .args(["runs", "show", "last"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let text = stdout(&o);
    assert!(
        text.contains(
            "thread 0 (CPU 1) max 37.34 ms: blocked by perl:11979 (RT 95) for 37.2 ms, 99.5 %"
        ),
        "{text}"
    );
    assert!(
        text.contains("thread 1 (CPU 1) max 300 µs: ")
            && text.contains("(partial: the trace misses events)"),
        "{text}"
    );
}

#[test]
fn explain_run_with_nothing_above_the_threshold_says_so() {
    let dir = TempDir::new("explain-quiet");
    let mut r = rtscope::record::synthetic(&[vec![5_000, 20_000]]);
    r.explain = Some(rtscope::record::ExplainRecord {
        threshold_ns: 100_000,
        events: vec!["sched:sched_switch".into()],
        events_read: 1_000,
        ..Default::default()
    });
    let file = write_record(&dir, "quiet.json", &r);
    let o = explain_cmd(&dir, &[file.to_str().unwrap()]);
    assert_code(&o, 0);
    let text = stdout(&o);
    assert_eq!(
        text.lines().next(),
        Some("no wake-up reached 100 µs: nothing to explain"),
        "{text}"
    );
    assert!(!text.contains("cause:"), "{text}");
}

#[test]
fn explain_run_refuses_runs_without_explanations_and_mixed_arguments() {
    let dir = TempDir::new("explain-refuse");
    let plain = write_record(
        &dir,
        "plain.json",
        &rtscope::record::synthetic(&[vec![5_000]]),
    );
    let o = rtscope(dir.path())
        .arg("import")
        .arg(&plain)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let one_line = |o: &std::process::Output, expect: &str| {
        assert_code(o, 2);
        let err = stderr(o);
        assert!(err.contains(expect), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(o.stdout.is_empty(), "{}", stdout(o));
    };
    for args in [vec!["1"], vec!["last", "--json"]] {
        one_line(
            &explain_cmd(&dir, &args),
            "run 1 was measured without --explain: nothing to explain (measure with --explain)",
        );
    }
    one_line(
        &explain_cmd(&dir, &[plain.to_str().unwrap()]),
        &format!(
            "the run record {} was measured without --explain: nothing to explain",
            plain.display()
        ),
    );
    let trace = Path::new(FIXTURES).join("cyclictest-hog.trace");
    one_line(
        &explain_cmd(&dir, &["1", "--trace", trace.to_str().unwrap()]),
        "give either RUN (1) or --trace FILE, not both",
    );
    one_line(&explain_cmd(&dir, &["7"]), "7");
    one_line(&explain_cmd(&dir, &["no-such-run"]), "no run 'no-such-run'");
    // --trace still works beside a store.
    assert_code(&explain_cmd(&dir, &["--trace", trace.to_str().unwrap()]), 0);
}

/// Traces taken in the arm64 lab guest (tests/fixtures/arm64-guest/
/// README.md: GIC interrupts, the architected timer, Debian's arm64
/// vanilla and PREEMPT_RT kernels): the FIFO hog beside cyclictest is
/// named as the cause, from trace-cmd's report and from tracefs's text.
#[test]
fn explain_names_the_hog_in_the_arm64_guests_traces() {
    let dir = TempDir::new("explain-arm64");
    for kernel in ["vanilla", "rt"] {
        for file in ["trace-cmd-report.txt", "ftrace.txt"] {
            let path = Path::new(FIXTURES)
                .parent()
                .unwrap()
                .join(format!("arm64-guest/{kernel}/trace/{file}"));
            let o = rtscope(dir.path())
                .args(["explain", "--trace"])
                .arg(&path)
                .output()
                .unwrap();
            assert_code(&o, 0);
            let text = stdout(&o);
            let cause = text
                .lines()
                .find(|l| l.starts_with("cause: "))
                .unwrap_or("");
            assert!(
                cause.starts_with("cause: blocked by rtscope-hog:") && cause.contains("(RT 90)"),
                "{kernel} {file}:\n{text}"
            );
        }
    }
}
