//! Many CPUs: the amd64 vanilla guest booted with 20 vCPUs (TCG, facts
//! only: twenty vCPUs share the host's two). `measure -a` starts one
//! thread per CPU, each pinned to its own, and its record is complete;
//! the terminal summary, the report and `compare` stay short (the 8 worst,
//! a line for the others); `tune isolate 4-19` isolates a range and `tune
//! --revert` puts everything back (tests/lab/jobs/many.sh). The report
//! is drawn by Chromium at 1280 px into the test's artefacts.

use crate::guest::{Lab, tail};
use crate::remote::{bounded, path};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The guest's vCPUs: more than the 16 threads up to which every view
/// lists every thread.
const VCPUS: u32 = 20;
/// Boot and job: a 20-vCPU boot under TCG is slower than a 2-vCPU one.
const TIMEOUT_S: u32 = 900;

/// Each thread's CPU, after checking that the run is complete and that
/// every thread measured.
fn cpus(run: &serde_json::Value) -> Vec<u64> {
    assert_eq!(run["status"], "complete", "{}", run["status"]);
    let threads = run["threads"].as_array().unwrap();
    for t in threads {
        assert!(
            t["stats"]["samples"].as_u64().unwrap() > 0,
            "thread {} measured nothing: {}",
            t["index"],
            t["stats"]
        );
    }
    threads.iter().map(|t| t["cpu"].as_u64().unwrap()).collect()
}

/// The report made in the guest, as Chromium (headless) draws it 1280 px
/// wide: `target/artefacts/screenshots/lab_report_20_cpus.png`, kept
/// after the run for a person to look at (docs/lab.md).
fn screenshot(html: &str) {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("artefacts/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("lab_report_20_cpus.html");
    std::fs::write(&page, html).unwrap();
    let png = dir.join("lab_report_20_cpus.png");
    let _ = std::fs::remove_file(&png);
    let profile = crate::remote::temp_dir("chromium");
    let mut c = Command::new("chromium");
    c.args([
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", path(&profile)))
    .args(["--window-size=1280,2400", "--virtual-time-budget=5000"])
    .arg(format!("--screenshot={}", path(&png)))
    .arg(format!("file://{}", path(&page)));
    let (code, _, err) = bounded(&mut c, Duration::from_secs(120));
    let _ = std::fs::remove_dir_all(&profile);
    assert_eq!(
        code,
        Some(0),
        "chromium (make test installs it): {}",
        tail(&err, 10)
    );
    let png_bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
    assert!(
        png_bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        png.display()
    );
    let width = u32::from_be_bytes(png_bytes[16..20].try_into().unwrap());
    assert_eq!(width, 1280, "{}", png.display());
    eprintln!("lab: the 20-CPU report as drawn: {}", png.display());
}

#[test]
fn twenty_cpus_one_thread_each_short_views_and_a_range_isolated() {
    let Some(lab) = Lab::get() else {
        return;
    };
    let g = lab.boot_smp("vanilla", "", &["many.sh"], TIMEOUT_S, VCPUS);
    assert_eq!(g.file("nproc").trim(), VCPUS.to_string());

    // One thread per CPU, each on its own.
    g.step("many-measure", 0);
    let cpus_measured = cpus(&g.json("many.json"));
    assert_eq!(
        cpus_measured.iter().copied().collect::<BTreeSet<_>>(),
        (0..u64::from(VCPUS)).collect::<BTreeSet<_>>(),
        "measure -a: {cpus_measured:?}"
    );
    assert_eq!(cpus_measured.len(), VCPUS as usize);

    // The terminal summary: the 8 worst, then one line for the others.
    let summary = g.file("many-measure.out");
    let others = summary
        .lines()
        .find(|l| l.starts_with("the other 12 threads"))
        .unwrap_or_else(|| panic!("no line for the other 12 threads:\n{summary}"));
    assert!(others.contains("(CPU "), "{others}");
    assert!(
        summary.lines().count() <= 24,
        "the summary of 20 threads is to fit a screen:\n{summary}"
    );

    // The report ranks them: the 8 worst, the others in one row.
    g.step("many-report", 0);
    let html = g.file("many.html");
    assert!(
        html.contains("The 8 worst of 20 threads"),
        "{}",
        tail(&html, 5)
    );
    assert!(html.contains("the other 12"));
    screenshot(&html);

    // compare per CPU, the same run twice: the 8 CPUs first, a line for the rest.
    let compare = g.step("many-compare", 0);
    assert!(
        compare.contains("the other 12 CPUs"),
        "compare of 20 CPUs:\n{compare}"
    );

    // A range of CPUs isolated, measured inside and reverted.
    let before = g.file("many-state.before");
    g.step("many-isolate", 0);
    let during = g.file("many-state.during");
    assert_ne!(before, during, "tune isolate 4-19 changed nothing");
    let doctor = g.json("many-isolated-doctor.out");
    assert_eq!(doctor["rt_cpus"], "4-19", "{}", doctor["rt_cpus"]);
    g.step("many-isolated-measure", 0);
    let inside = cpus(&g.json("many-isolated.json"));
    assert_eq!(
        inside.iter().copied().collect::<BTreeSet<_>>(),
        (4..u64::from(VCPUS)).collect::<BTreeSet<_>>(),
        "measure -a 4-19: {inside:?}"
    );
    g.step("many-revert", 0);
    assert_eq!(
        before,
        g.file("many-state.after"),
        "tune --revert did not put the 20-CPU system back as it was"
    );
}
