//! `rtscope monitor`: windows saved as they end, a `kill -9` and a
//! restart (the windows before the kill stay, the new run follows the
//! old one, nothing saved twice), bad options refused.

use crate::util::{self, TempDir, assert_code, rtscope, stderr};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn db(dir: &TempDir) -> std::path::PathBuf {
    dir.join("data/rtscope/rtscope.db")
}

fn start(dir: &TempDir) -> Child {
    rtscope(dir.path())
        .args([
            "monitor",
            "--name",
            "it",
            "--window",
            "1s",
            "--checkpoint",
            "1s",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Windows in the store: (run_uuid, thread, start, end), oldest first.
fn windows(dir: &TempDir) -> Vec<(String, i64, i64, i64)> {
    let Ok(c) = rusqlite::Connection::open(db(dir)) else {
        return Vec::new();
    };
    let Ok(mut st) = c.prepare(
        "SELECT run_uuid, thread, start_unix_ns, end_unix_ns FROM monitor_windows ORDER BY thread, start_unix_ns",
    ) else {
        return Vec::new();
    };
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

fn wait_for_windows(dir: &TempDir, n: usize) {
    let t0 = Instant::now();
    while windows(dir).len() < n {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no {n} windows in 20 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn kill_9_and_restart_keep_every_window_once_and_link_the_runs() {
    let _g = util::shared_system();
    let dir = TempDir::new("monitor-restart");
    let mut first = start(&dir);
    // Two full windows for each of the threads (the first may be short).
    wait_for_windows(&dir, 6);
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    let before = windows(&dir);
    let run1 = before[0].0.clone();
    assert!(before.iter().all(|w| w.0 == run1));

    let second = start(&dir);
    wait_for_windows(&dir, before.len() + 2);
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &second.id().to_string()])
        .status();
    let out = second.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("follows run {run1}")), "{err}");
    // One line per window in the log, all threads in one.
    let logged: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("rtscope: window "))
        .collect();
    assert!(logged.len() >= 2, "{err}");
    assert!(
        logged
            .iter()
            .all(|l| l.contains(" UTC +") && l.contains(", max ") && l.ends_with(" missed")),
        "{err}"
    );
    // The count it ends with is of those windows (was one per thread).
    let saved = err
        .lines()
        .find_map(|l| l.strip_prefix("rtscope: monitor saved "))
        .unwrap_or_else(|| panic!("no saved line:\n{err}"));
    let n: usize = saved.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(n, logged.len(), "{err}");
    assert!(saved.contains("threads each)"), "{err}");

    let after = windows(&dir);
    // Every window saved before the kill is still there, unchanged.
    for w in &before {
        assert!(after.contains(w), "lost {w:?}");
    }
    let run2: Vec<_> = after.iter().filter(|w| w.0 != run1).collect();
    assert!(!run2.is_empty());
    assert!(run2.iter().all(|w| w.0 == run2[0].0));
    // Per thread, windows follow each other without overlap: nothing is
    // counted twice.
    for pair in after.windows(2) {
        if pair[0].1 == pair[1].1 {
            assert!(
                pair[0].3 <= pair[1].2,
                "overlap {:?} {:?}",
                pair[0],
                pair[1]
            );
        }
    }
    let c = rusqlite::Connection::open(db(&dir)).unwrap();
    let (prev, monitor): (Option<String>, String) = c
        .query_row(
            "SELECT previous_run_uuid, monitor FROM monitor_runs WHERE run_uuid = ?1",
            [&run2[0].0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(prev.as_deref(), Some(run1.as_str()));
    assert_eq!(monitor, "it");
    // The killed run is in the store, marked interrupted; the second one
    // complete.
    let runs = rtscope(dir.path()).args(["runs"]).output().unwrap();
    assert_code(&runs, 0);
    let text = util::stdout(&runs);
    assert!(
        text.contains("interrupted") && text.contains("complete"),
        "{text}"
    );
    // The report of the second run has the monitor's long-term view.
    let html = dir.join("r.html");
    let out = rtscope(dir.path())
        .args(["report", "2", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("monitor it: largest latency per window"));
    assert!(page.contains("id=\"run-1-long-term-0\""));
}

#[test]
fn bad_monitor_options_are_refused() {
    let dir = TempDir::new("monitor-bad");
    for args in [
        vec!["monitor", "--window", "100ms"],
        vec!["monitor", "--name", "a b"],
        vec!["monitor", "--window", "1h", "--keep-windows", "10m"],
        vec!["monitor", "--metrics", "nonsense"],
        vec!["monitor", "--keep-histograms", "0"],
        vec!["monitor", "--window", "1m", "--keep-histograms", "30s"],
        vec!["monitor", "--keep-windows", "1d", "--keep-histograms", "2d"],
    ] {
        let out = rtscope(dir.path()).args(&args).output().unwrap();
        assert_code(&out, 2);
        assert!(!stderr(&out).is_empty());
    }
    assert!(windows(&dir).is_empty());
}
