//! `compare` on real short runs: each row says whether the difference is
//! beyond the noise of the runs' windows, and the gate's exit code agrees
//! with what it says. Facts, never timings: the verdict itself depends on
//! the machine, the agreement does not.

use crate::util::*;
use std::path::PathBuf;

/// `measure -D 3s` on one thread with windows of `window`.
fn measure(dir: &TempDir, name: &str, window: &str) -> PathBuf {
    let json = dir.join(name);
    let o = rtscope(dir.path())
        .args(["measure", "-q", "-D", "3s", "-i", "1ms", "-t", "1"])
        .args(["--window", window, "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_code(&o, 0);
    json
}

fn windows(json: &PathBuf) -> usize {
    read_json(json)["threads"][0]["windows"]["count"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.as_u64() != Some(0))
        .count()
}

/// `compare A B --metric max --fail-if-worse 1 [EXTRA]`: the exit code,
/// the noise row of `all` and the gate line.
fn gate(dir: &TempDir, a: &PathBuf, b: &PathBuf, extra: &[&str]) -> (i32, String, String) {
    let o = rtscope(dir.path())
        .args(["compare", a.to_str().unwrap(), b.to_str().unwrap()])
        .args(["--metric", "max", "--fail-if-worse", "1"])
        .args(extra)
        .output()
        .unwrap();
    let out = stdout(&o);
    let noise = out
        .lines()
        .filter(|l| {
            (l.starts_with("all ") && l.contains("noise")) || l.starts_with("noise unknown")
        })
        .last()
        .unwrap_or_else(|| panic!("no noise row for all: {out}"))
        .to_string();
    let gate = out
        .lines()
        .find(|l| l.starts_with("regression gate:"))
        .unwrap_or_else(|| panic!("no gate line: {out}"))
        .to_string();
    (o.status.code().unwrap(), noise, gate)
}

#[test]
fn compare_judges_the_noise_of_two_real_runs_and_gates_on_it() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("compare-noise");
    let a = measure(&dir, "a.json", "100ms");
    let b = measure(&dir, "b.json", "100ms");
    assert!(
        windows(&a) >= 10 && windows(&b) >= 10,
        "3 s of 100 ms windows"
    );
    let (code, noise, gate) = gate(&dir, &a, &b, &[]);
    // By how much, the noise, and p ("p = 0.012", or "p < 0.001" when it
    // is that small).
    let worse = noise.contains("beyond the noise (B worse by ");
    assert!(
        worse
            || noise.contains("beyond the noise (B better by ")
            || noise.contains("within the noise ("),
        "{noise}"
    );
    assert!(
        noise.contains(" us, noise ±") && noise.contains(" us, p "),
        "{noise}"
    );
    // Exit 1 only with "beyond the noise (B worse)", and then the gate
    // line says so; a difference over 1 % within the noise says the gate
    // did not fire.
    match code {
        1 => assert!(
            worse && gate.contains("FAILED (the difference is beyond the noise"),
            "{noise}\n{gate}"
        ),
        0 => assert!(
            gate.ends_with(": passed")
                || gate
                    .contains("the gate did not fire because the difference is within the noise")
                || gate.contains("the gate did not fire because the runs' windows put B below A"),
            "{gate}"
        ),
        c => panic!("exit {c}: {gate}"),
    }
    if gate.contains("within the noise") {
        assert!(noise.contains("within the noise"), "{noise}\n{gate}");
    }
}

/// Issue 37: a gate that cannot judge the noise (too few windows) would
/// judge the raw figures: it is refused (exit 2), saying how many windows
/// it needs, and gates on the figure only with --raw, saying so.
#[test]
fn a_gate_on_too_few_windows_is_refused_unless_raw() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("compare-few");
    let a = measure(&dir, "a.json", "1s");
    let b = measure(&dir, "b.json", "1s");
    let n = windows(&a);
    assert!(n < 10, "{n} windows of 1 s in 3 s");
    let o = rtscope(dir.path())
        .args(["compare", a.to_str().unwrap(), b.to_str().unwrap()])
        .args(["--metric", "max", "--fail-if-worse", "1"])
        .output()
        .unwrap();
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("--fail-if-worse cannot judge B against A")
            && err.contains(&format!("(run A has {n} windows, fewer than 10)"))
            && err.contains("needs at least 10 non-empty windows in each run")
            && err.contains("--raw"),
        "{err}"
    );
    assert!(
        !stdout(&o).contains("regression gate:"),
        "refused before any gate line: {}",
        stdout(&o)
    );
    // Without a gate the comparison is shown, the noise said unknown.
    let o = rtscope(dir.path())
        .args(["compare", a.to_str().unwrap(), b.to_str().unwrap()])
        .args(["--metric", "max"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains(&format!(
            "noise unknown (run A has {n} windows, fewer than 10)"
        )),
        "{}",
        stdout(&o)
    );
    // --raw: gated on the figure alone, and said.
    let (code, noise, gate) = gate(&dir, &a, &b, &["--raw"]);
    assert!(
        noise.contains(&format!(
            "noise unknown (run A has {n} windows, fewer than 10)"
        )),
        "{noise}"
    );
    let over = gate.contains("FAILED");
    assert_eq!(code, if over { 1 } else { 0 }, "{gate}");
    if over {
        assert!(
            gate.contains("the noise could not be judged: run A has")
                && gate.contains("gated on the figure alone, as --raw asks"),
            "{gate}"
        );
    } else {
        assert!(gate.ends_with(": passed"), "{gate}");
    }
}
