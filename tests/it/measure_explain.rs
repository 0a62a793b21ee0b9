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
    if !is_root() {
        return;
    }
    let _g = exclusive_system();
    let before = mounts();
    let hog = Hog::start(1);
    let hog_tid = hog.tid;
    let dir = TempDir::new("explain-hog");
    let json = dir.join("run.json");
    let o = rtscope(dir.path())
        .args(["measure", "-a", "1", "-t", "1", "-p", "50", "-D", "2", "-q"])
        .args(["--explain", "--no-save", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    drop(hog);
    assert_code(&o, 0);
    let r = read_json(&json);
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
    let hog_part = top["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["culprit"]["comm"] == Hog::COMM)
        .unwrap_or_else(|| panic!("the hog is not among the parts: {top}"));
    assert_eq!(hog_part["culprit"]["pid"], hog_tid, "{hog_part}");
    assert!(
        hog_part["share_pct"].as_f64().unwrap() >= 90.0,
        "{hog_part}"
    );
    assert!(top["cause"].as_str().unwrap().contains(Hog::COMM), "{top}");
    // Nothing left: no instance of ours, the mounts as they were.
    assert!(our_instances().is_empty(), "{:?}", our_instances());
    assert_eq!(mounts(), before);
}

#[test]
fn nothing_above_the_threshold_explains_nothing() {
    if !is_root() {
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
