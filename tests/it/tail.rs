//! `rtscope tail`: the probabilistic worst case of a stored run, on a
//! short real run (too few samples: a refusal that names its gate), as
//! JSON, on imported histograms, and on bad input (exit 2).

use crate::util::*;
use std::path::{Path, PathBuf};

const GATES: [&str; 6] = [
    "exceedances",
    "goodness of fit",
    "shape stability",
    "stationarity",
    "held-out check",
    "agreement",
];

fn db(dir: &TempDir) -> PathBuf {
    dir.join("runs.db")
}

fn tail(dir: &TempDir, args: &[&str]) -> std::process::Output {
    rt(dir, db(dir), &[&["tail"], args].concat())
}

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
}

#[test]
fn a_short_real_run_gets_a_refusal_that_names_its_gate() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("tail-real");
    assert_code(&rt(&dir, db(&dir), &["measure", "-D", "3s", "-q"]), 0);
    let o = tail(&dir, &["last"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    let answer = out.lines().nth(1).unwrap_or_default();
    assert!(answer.starts_with("Insufficient evidence: "), "{out}");
    assert!(GATES.iter().any(|g| answer.contains(g)), "{out}");
    assert!(answer.contains("3/N = 3/"), "{out}");
    for g in GATES {
        assert!(out.contains(&format!("  {g}")), "gate {g} missing:\n{out}");
    }
    let j = tail(&dir, &["last", "--json"]);
    assert_code(&j, 0);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(v["run_id"], 1);
    assert_eq!(v["result"]["status"], "insufficient");
    let gates = v["gates"].as_array().unwrap();
    assert_eq!(gates.len(), 6);
    assert!(gates.iter().all(|g| g["status"].is_string()));
    let n = v["samples"].as_u64().unwrap() as f64;
    let bound = v["result"]["bound_3_over_n"].as_f64().unwrap();
    assert!((bound * n - 3.0).abs() < 1e-9, "{bound} for {n} samples");
    // one thread alone, and a report with the same answer as a section
    assert_code(&tail(&dir, &["last", "--thread", "0"]), 0);
    let html = dir.join("r.html");
    assert_code(
        &rt(
            &dir,
            db(&dir),
            &["report", "last", "-o", html.to_str().unwrap()],
        ),
        0,
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("The worst case not yet seen"));
    assert!(page.contains("Insufficient evidence: "));
}

#[test]
fn imported_histograms_are_analysed_or_refused_with_a_reason() {
    let dir = TempDir::new("tail-import");
    for f in [
        "import/cyclictest-2.7-hist.txt",
        "import-formats/timerlat-hist-u.txt",
        "import-formats/oslat.txt",
    ] {
        let path = fixture(f);
        let i = rt(&dir, db(&dir), &["import", path.to_str().unwrap()]);
        assert_code(&i, 0);
        let o = tail(&dir, &["last"]);
        match o.status.code() {
            Some(0) => {
                let out = stdout(&o);
                let answer = out.lines().nth(1).unwrap_or_default();
                assert!(
                    answer.starts_with("Estimated: ")
                        || answer.starts_with("Insufficient evidence: "),
                    "{f}: {out}"
                );
            }
            Some(2) => assert!(
                stderr(&o).starts_with("rtscope: error: "),
                "{f}: {}",
                stderr(&o)
            ),
            c => panic!("{f}: exit {c:?}: {}", stderr(&o)),
        }
        if f.contains("oslat") {
            assert_code(&o, 2);
            assert!(stderr(&o).contains("busy-loop gap"), "{}", stderr(&o));
        }
    }
}

#[test]
fn bad_runs_and_probabilities_exit_2() {
    let dir = TempDir::new("tail-bad");
    let o = tail(&dir, &["no-such-run"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("no run 'no-such-run'"),
        "{}",
        stderr(&o)
    );
    for p in ["0", "1.5", "abc"] {
        let o = tail(&dir, &["last", "--probability", p]);
        assert_code(&o, 2);
        assert!(stderr(&o).contains("probability"), "{}", stderr(&o));
    }
    assert_code(&tail(&dir, &["last", "--deadline", "0"]), 2);
}
