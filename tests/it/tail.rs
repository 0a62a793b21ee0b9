//! `rtscope tail`: the probabilistic worst case of a stored run, on a
//! short real run (too few samples: a refusal that names its gate; the
//! run's exact maximum), as JSON, on imported histograms (a period given
//! with --period, or refused when it contradicts the run's; each level's
//! reach, a year beyond it), and on bad input (exit 2).

use crate::util::*;
use std::path::{Path, PathBuf};

const GATES: [&str; 7] = [
    "exceedances",
    "goodness of fit",
    "shape inside bounds",
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
    let rec_path = dir.join("run.json");
    let rec_arg = rec_path.to_str().unwrap();
    assert_code(
        &rt(
            &dir,
            db(&dir),
            &["measure", "-D", "3s", "-q", "--json", rec_arg],
        ),
        0,
    );
    let o = tail(&dir, &["last"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    let answer = out.lines().nth(1).unwrap_or_default();
    // Refused either way: by a gate, or (every gate evaluated passing, as
    // on a quiet machine) because 3 s is too short to reach an hour.
    let by_gate = answer.starts_with("Insufficient evidence: ");
    let by_reach = answer.starts_with("No estimate beyond the run: even an hour is ");
    assert!(by_gate || by_reach, "{out}");
    if by_gate {
        assert!(GATES.iter().any(|g| answer.contains(g)), "{out}");
    }
    assert!(answer.contains("3/N = 3/"), "{out}");
    for g in GATES {
        assert!(out.contains(&format!("  {g}")), "gate {g} missing:\n{out}");
    }
    let j = tail(&dir, &["last", "--json"]);
    assert_code(&j, 0);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(v["run_id"], 1);
    if by_gate {
        assert_eq!(v["result"]["status"], "insufficient");
    } else {
        // The levels are computed, none is an estimate the run supports.
        let levels = v["result"]["return_levels"].as_array().unwrap();
        assert!(!levels.is_empty());
        assert!(levels.iter().all(|l| l["supported"] == false), "{levels:?}");
    }
    let gates = v["gates"].as_array().unwrap();
    assert_eq!(gates.len(), 7);
    assert!(gates.iter().all(|g| g["status"].is_string()));
    assert!(!String::from_utf8_lossy(&j.stdout).contains("NaN"));
    assert!(!out.contains("NaN"), "{out}");
    // the observed maximum is the record's exact one
    assert_eq!(v["observed_max_exact"], true);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rec_path).unwrap()).unwrap();
    let max = r["overall"]["max_ns"].as_u64();
    assert!(max.is_some(), "{r}");
    assert_eq!(v["observed_max_ns"].as_u64(), max, "{out}");
    let n = v["samples"].as_u64().unwrap() as f64;
    let bound = v["bound_3_over_n"].as_f64().unwrap();
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
    assert!(page.contains(if by_gate {
        "Insufficient evidence: "
    } else {
        "No estimate beyond the run: "
    }));
}

#[test]
fn imported_histograms_are_analysed_or_refused_with_a_reason() {
    let dir = TempDir::new("tail-import");
    // a cyclictest histogram says no interval: refused with the way out,
    // then answered with --period, and a contradicting period is refused.
    // (The fixtures all count overflows, which tail refuses: this one has
    // none, an exponential tail of 1 µs classes.)
    let path = dir.join("hist.txt");
    std::fs::write(&path, cyclictest_histogram()).unwrap();
    assert_code(&rt(&dir, db(&dir), &["import", path.to_str().unwrap()]), 0);
    let o = tail(&dir, &["last"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("--period"), "{}", stderr(&o));
    let o = tail(&dir, &["last", "--period", "1ms"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    let answer = out.lines().nth(1).unwrap_or_default();
    // An estimate of the hour level with its upper bound (no window
    // series, so three checks not made); its figures are judged against
    // the file's own truth below, from the JSON.
    assert!(
        answer.starts_with(
            "Estimated: the latency exceeded with probability 1 % in an hour of operation is "
        ) && answer.contains(" µs (95 % upper bound "),
        "{out}"
    );
    assert!(answer.contains("Not checked: stationarity"), "{out}");
    // One unit for a latency in the text, the gates' details included
    // (they said "POT 41893 ns" among µs figures).
    let in_ns = out
        .match_indices(" ns")
        .filter(|(i, _)| out[..*i].ends_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(in_ns, 0, "a latency in ns:\n{out}");
    assert!(out.contains("at a period of 1 ms"), "{out}");
    // the maximum is the file's own (87 µs), each level says its reach,
    // and a year (2 422 × the 3.62 h observed) is beyond what it supports
    assert!(answer.contains("× the 3.62 h observed"), "{out}");
    assert!(
        answer.contains("in a year beyond what the run supports (2\u{202f}422 ×"),
        "{out}"
    );
    let j = tail(&dir, &["last", "--period", "1ms", "--json"]);
    assert_code(&j, 0);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(v["observed_max_ns"], 87_000);
    assert_eq!(v["observed_max_exact"], true);
    assert_eq!(v["max_extrapolation"], 100.0);
    let levels = v["result"]["return_levels"].as_array().unwrap();
    assert_eq!(levels.len(), 3, "{v}");
    for l in levels {
        let reach = l["extrapolation"].as_f64().unwrap();
        assert_eq!(l["supported"], reach <= 100.0, "{l}");
    }
    assert_eq!(levels[2]["supported"], false, "{v}");
    // The truth of the file's distribution: the hour level of an
    // exponential latency of scale 6 µs (the histogram's 1 µs classes),
    // wake-ups every 1 ms, exceeded with probability 1 % in an hour.
    let hour = &levels[0];
    assert_eq!(hour["horizon"], "hour", "{v}");
    let truth_ns = exponential_hour_level_ns(6_000.0, 1e6, 0.01);
    let (lo, est, hi) = (
        hour["lower95_ns"].as_f64().unwrap(),
        hour["level_ns"].as_f64().unwrap(),
        hour["upper95_ns"].as_f64().unwrap(),
    );
    // The interval holds it; the estimate is within 10 % of it (the
    // file's counts are rounded down to whole wake-ups, which thins its
    // last classes: the fit leans low, and the truth sits near the top of
    // the interval, within half a microsecond of the bound, when written).
    assert!(
        lo <= truth_ns && truth_ns <= hi,
        "truth {truth_ns:.0} ns not in {lo}..{hi}: {hour}"
    );
    assert!(
        (est / truth_ns - 1.0).abs() <= 0.10,
        "estimate {est} ns, truth {truth_ns:.0} ns: {hour}"
    );
    // rtla timerlat's histogram
    let path = fixture("import-formats/timerlat-hist-u.txt");
    assert_code(&rt(&dir, db(&dir), &["import", path.to_str().unwrap()]), 0);
    // does not say its period either: refused, with the way out named
    let own = tail(&dir, &["last"]);
    assert_code(&own, 2);
    assert!(
        stderr(&own).contains("the loop's period is unknown") && stderr(&own).contains("--period"),
        "{}",
        stderr(&own)
    );
    // oslat measures another quantity: refused
    let path = fixture("import-formats/oslat.txt");
    assert_code(&rt(&dir, db(&dir), &["import", path.to_str().unwrap()]), 0);
    let o = tail(&dir, &["last"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("busy-loop gap"), "{}", stderr(&o));
}

#[test]
fn a_period_given_at_import_serves_tail_as_its_own() {
    let dir = TempDir::new("tail-import-interval");
    let path = dir.join("hist.txt");
    std::fs::write(&path, cyclictest_histogram()).unwrap();
    let file = path.to_str().unwrap();
    // --distance alone, or a period for oslat's busy loop: refused, nothing stored
    let o = rt(&dir, db(&dir), &["import", "--distance", "500us", file]);
    assert_code(&o, 2);
    let oslat = fixture("import-formats/oslat.txt");
    let o = rt(
        &dir,
        db(&dir),
        &["import", "--interval", "1ms", oslat.to_str().unwrap()],
    );
    assert_code(&o, 2);
    assert!(stderr(&o).contains("no period"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("nothing was imported"),
        "{}",
        stderr(&o)
    );
    let o = rt(&dir, db(&dir), &["import", "--interval", "1ms", file]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("note: the file does not say its interval: 1ms given"),
        "{}",
        stdout(&o)
    );
    let runs = rt(&dir, db(&dir), &["runs"]);
    assert_eq!(
        stdout(&runs).matches(" imported ").count(),
        1,
        "{}",
        stdout(&runs)
    );
    // tail answers without --period, as it does with it on the same file
    let own = tail(&dir, &["last"]);
    assert_code(&own, 0);
    let given = tail(&dir, &["last", "--period", "1ms"]);
    assert_code(&given, 0);
    assert_eq!(stdout(&own), stdout(&given));
    assert!(
        stdout(&own).contains("at a period of 1 ms"),
        "{}",
        stdout(&own)
    );
    // a period that contradicts the one given at import is refused
    let o = tail(&dir, &["last", "--period", "2ms"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("contradicts"), "{}", stderr(&o));
}

/// The latency exceeded with probability `p` in an hour of wake-ups every
/// `period_ns`, for an exponential latency of mean `scale_ns`: each
/// wake-up exceeds x with probability q = 1 - (1 - p)^(1 / wake-ups an
/// hour), and S(x) = e^(-x / scale) = q. Computed, never copied from the
/// program's output.
fn exponential_hour_level_ns(scale_ns: f64, period_ns: f64, p: f64) -> f64 {
    let wakeups = 3600e9 / period_ns;
    let q = -((-p).ln_1p() / wakeups).exp_m1();
    -scale_ns * q.ln()
}

/// A cyclictest `-h` histogram without overflows: 1 µs classes of an
/// exponential tail (scale 6 µs), 12 million samples, max 87 µs.
fn cyclictest_histogram() -> String {
    let mut rows = String::new();
    let (mut total, mut max) = (0u64, 0);
    for k in 0..200u64 {
        let c = (2_000_000.0 * (-(k as f64) / 6.0).exp()) as u64;
        rows.push_str(&format!("{k:06} {c:06}\n"));
        total += c;
        if c > 0 {
            max = k;
        }
    }
    format!(
        "# /dev/cpu_dma_latency set to 0us\n# Histogram\n{rows}# Total: {total:09}\n\
         # Min Latencies: 00000\n# Avg Latencies: 00006\n# Max Latencies: {max:05}\n\
         # Histogram Overflows: 00000\n"
    )
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
    assert_code(&tail(&dir, &["last", "--period", "0"]), 2);
}
