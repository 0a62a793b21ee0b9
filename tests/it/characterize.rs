//! `rtscope characterize` run for real: every benchmark's facts (counts,
//! ordering of the quantiles, the self-checks: trylock of a held mutex
//! fails, setschedprio changes the reported priority, inversion without
//! PI waits for the hog and with PI not), the busy loop
//! beside a FIFO hog sees the hog's busy time, the store (runs, runs
//! show, report, compare), and every refusal with exit 2. Short: -D
//! 200ms or less per benchmark.

use crate::util::*;
use serde_json::Value;
use std::process::Output;

fn characterize(dir: &TempDir, args: &[&str]) -> Output {
    rtscope(dir.path())
        .arg("characterize")
        .args(args)
        .output()
        .unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

/// The result rows of `bench` in a characterization's JSON.
fn rows<'a>(c: &'a Value, bench: &str) -> Vec<&'a Value> {
    c["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["bench"] == bench)
        .collect()
}

fn last_cpu() -> usize {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let last = text.trim().rsplit([',', '-']).next().unwrap();
    last.parse().unwrap()
}

#[test]
fn every_benchmark_checks_itself_and_is_saved_shown_reported_and_compared() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("char-all");
    let json = dir.join("c.json");
    let o = characterize(
        &dir,
        &[
            "-D",
            "200ms",
            "--label",
            "first",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_code(&o, 0);
    let out = stdout(&o);
    for table in [
        "Clock",
        "Mutexes",
        "Priority changes",
        "Timers",
        "Threads",
        "OS noise",
        "Priority inversion",
    ] {
        assert!(out.contains(table), "no {table} table:\n{out}");
    }
    assert!(out.contains("saved as run 1"), "{out}");
    let c = read_json(&json);
    assert_eq!(c["schema"], "rtscope-characterization/1");
    assert_eq!(c["complete"], true);
    assert!(u(&c["clock_read_ns"]) > 0);
    for bench in [
        "clock-gettime",
        "mutex",
        "mutex-handoff",
        "setschedparam",
        "setschedprio",
        "nanosleep",
        "wakeup",
        "ctxswitch",
        "os-noise",
        "priority-inversion",
    ] {
        let rs = rows(&c, bench);
        assert!(!rs.is_empty(), "no rows of {bench}");
        for r in rs {
            let s = &r["stats"];
            let v = |k: &str| u(&s[k]);
            assert!(v("count") > 0, "{bench}: {r}");
            assert!(v("min_ns") <= v("p50_ns"), "{bench}: {s}");
            assert!(
                v("p50_ns") <= v("p99_ns") && v("p99_ns") <= v("p9999_ns"),
                "{bench}: {s}"
            );
            assert!(
                v("p9999_ns") <= v("max_ns") && v("avg_ns") <= v("max_ns"),
                "{bench}: {s}"
            );
            let in_hist: u64 = r["histogram"]["buckets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| u(&b[1]))
                .sum();
            assert_eq!(in_hist, v("count"), "{bench}: the histogram is lossless");
        }
    }
    assert_eq!(rows(&c, "mutex").len(), 6, "lock/trylock/unlock x plain/pi");
    assert_eq!(rows(&c, "nanosleep").len(), 4);
    // The facts every benchmark checks about itself.
    let checks = c["checks"].as_array().unwrap();
    for needle in [
        "trylock of a held plain mutex fails",
        "trylock of a held pi mutex fails",
        "pthread_setschedprio",
        "without PI",
        "with PI",
    ] {
        let k = checks
            .iter()
            .find(|k| k["fact"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("no check '{needle}' in {checks:?}"));
        assert_eq!(k["held"], true, "{k}");
    }
    // Inversion: without PI the high thread gets the mutex only after the
    // hog's busy time (so waits at least that long), with PI before the
    // hog runs; the verdict says so.
    let inv = rows(&c, "priority-inversion");
    let plain = inv.iter().find(|r| r["variant"] == "plain").unwrap();
    let pi = inv.iter().find(|r| r["variant"] == "pi").unwrap();
    let hog = u(&plain["inversion"]["hog_busy_ns"]);
    assert!(u(&plain["inversion"]["trials"]) > 0, "{plain}");
    assert_eq!(
        plain["inversion"]["after_hog"],
        plain["inversion"]["trials"]
    );
    assert!(u(&plain["stats"]["min_ns"]) >= hog, "{plain}");
    assert!(u(&pi["inversion"]["trials"]) > 0, "{pi}");
    assert_eq!(pi["inversion"]["before_hog"], pi["inversion"]["trials"]);
    assert_eq!(c["pi_verdict"]["pi_works"], true);
    assert!(out.contains("PI works on this system"), "{out}");
    // OS noise: one row per CPU, the share left to the loop is a share.
    for r in rows(&c, "os-noise") {
        let n = &r["noise"];
        let share = n["cpu_left_to_loop_percent"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&share), "{n}");
        let gaps = n["largest_gaps"].as_array().unwrap();
        for w in gaps.windows(2) {
            assert!(
                u(&w[0]["gap_ns"]) >= u(&w[1]["gap_ns"]),
                "largest first: {n}"
            );
        }
        assert!(u(&n["loops"]) == u(&r["stats"]["count"]));
    }

    // The store: listed, shown, reported, compared.
    let o = characterize(
        &dir,
        &[
            "-D",
            "50ms",
            "--only",
            "clock-gettime,mutex",
            "--label",
            "second",
        ],
    );
    assert_code(&o, 0);
    let o = rtscope(dir.path()).arg("runs").output().unwrap();
    assert_code(&o, 0);
    let list = stdout(&o);
    assert_eq!(list.matches(" characterization ").count(), 2, "{list}");
    let o = rtscope(dir.path())
        .args(["runs", "show", "1"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(stdout(&o).contains("mutex (lock, pi)"), "{}", stdout(&o));
    let html = dir.join("r.html");
    let o = rtscope(dir.path())
        .args(["report", "1", "2", "-o", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("Side by side") && page.contains("<table"),
        "report"
    );
    assert!(page.contains("PI works on this system"));
    let o = rtscope(dir.path())
        .args(["compare", "1", "2"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let cmp = stdout(&o);
    assert!(
        cmp.contains("A = 1 (first)") && cmp.contains("B = 2 (second)"),
        "{cmp}"
    );
    assert!(
        cmp.contains("mutex (unlock, plain)") && cmp.contains("B/A avg"),
        "{cmp}"
    );
    // A stored characterization against its own --json file: same rows.
    let o = rtscope(dir.path())
        .args(["compare", "1", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(stdout(&o).contains("1.00"), "{}", stdout(&o));
    // Exported as the JSON it was written as.
    let exported = dir.join("x.json");
    let o = rtscope(dir.path())
        .args(["runs", "export", "1", "--json", exported.to_str().unwrap()])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let mut back = read_json(&exported);
    let mut first = c.clone();
    // The store's copy is the same record (its label, rows and checks).
    for v in [&mut back, &mut first] {
        v.as_object_mut().unwrap().remove("duration_ns");
    }
    assert_eq!(back["results"], first["results"]);
    assert_eq!(back["uuid"], first["uuid"]);
    // Commands that want a latency run say what a characterization is.
    let o = rtscope(dir.path())
        .args(["runs", "export", "1", "--csv"])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("is a characterization"),
        "{}",
        stderr(&o)
    );
    let o = rtscope(dir.path())
        .args([
            "plot",
            "1",
            "--kind",
            "hist",
            "-o",
            dir.join("p.svg").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("is a characterization"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_busy_loop_beside_a_fifo_hog_sees_the_hogs_busy_time() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let dir = TempDir::new("char-noise");
    let cpu = last_cpu();
    let json = dir.join("n.json");
    // The hog (FIFO 90) busies the CPU for 20 ms every 100 ms; the loop
    // runs below it (FIFO 80).
    let hog = Hog::start(cpu);
    let o = characterize(
        &dir,
        &[
            "--only",
            "os-noise",
            "--cpus",
            &cpu.to_string(),
            "-p",
            "80",
            "-D",
            "250ms",
            "--no-save",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    drop(hog);
    assert_code(&o, 0);
    let c = read_json(&json);
    let r = rows(&c, "os-noise");
    assert_eq!(r.len(), 1);
    let n = &r[0]["noise"];
    let largest = u(&n["largest_gaps"][0]["gap_ns"]);
    assert!(
        largest >= 20_000_000,
        "largest gap {largest} ns < the hog's 20 ms: {n}"
    );
    assert!(u(&r[0]["stats"]["max_ns"]) == largest);
    assert!(
        n["cpu_left_to_loop_percent"].as_f64().unwrap() < 95.0,
        "{n}"
    );
}

#[test]
fn bad_input_is_refused_with_exit_2_and_the_valid_names() {
    let dir = TempDir::new("char-bad");
    let o = characterize(&dir, &["--only", "mutex,nope", "-D", "50ms"]);
    assert_code(&o, 2);
    let e = stderr(&o);
    assert!(
        e.contains("unknown benchmark 'nope'") && e.contains("priority-inversion"),
        "{e}"
    );
    let o = characterize(&dir, &["-D", "soon"]);
    assert_code(&o, 2);
    let o = characterize(&dir, &["-D", "0"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("out of range"), "{}", stderr(&o));
    let o = characterize(&dir, &["--cpus", "4000", "-D", "50ms"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("valid CPUs are"), "{}", stderr(&o));
    let o = characterize(&dir, &["-p", "1", "-D", "50ms"]);
    assert_code(&o, 2);
    // Nothing was measured or saved.
    assert!(!dir.join("data/rtscope/rtscope.db").exists());
    let o = characterize(&dir, &["--list"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("os-noise") && stdout(&o).contains("mutex-handoff"));
}

#[test]
fn without_privileges_it_says_so_with_exit_2() {
    if !require_root() {
        return;
    }
    let dir = TempDir::new("char-priv");
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let o = std::process::Command::new("prlimit")
        .args([
            "--rtprio=0",
            "setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(bin())
        .args(["characterize", "-D", "50ms"])
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.join("data"))
        .output()
        .unwrap();
    assert_code(&o, 2);
    let e = stderr(&o);
    assert!(
        e.contains("needs root or CAP_SYS_NICE") && e.contains("sudo"),
        "{e}"
    );
}

#[test]
fn isolate_runs_on_the_isolated_cpu_and_puts_everything_back() {
    if !require_root() {
        return;
    }
    if !require(Need::Cpus, last_cpu() > 0, "two CPUs (one is isolated)") {
        return;
    }
    let _g = exclusive_system();
    let dir = TempDir::new("char-iso");
    let cpu = last_cpu().to_string();
    let json = dir.join("i.json");
    let o = characterize(
        &dir,
        &[
            "--isolate",
            &cpu,
            "--only",
            "clock-gettime,os-noise",
            "-D",
            "50ms",
            "--no-save",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_code(&o, 0);
    assert!(stderr(&o).contains("undone"), "{}", stderr(&o));
    assert!(!std::path::Path::new("/var/lib/rtscope/tune.journal").exists());
    let c = read_json(&json);
    assert_eq!(c["isolated_cpus"], serde_json::json!([last_cpu()]));
    let noise = rows(&c, "os-noise");
    assert_eq!(noise.len(), 1);
    assert_eq!(u(&noise[0]["cpu"]), last_cpu() as u64);
}

#[test]
fn sigterm_stops_after_the_current_benchmark_and_keeps_what_ended() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("char-term");
    let json = dir.join("t.json");
    let child = rtscope(dir.path())
        .args([
            "characterize",
            "-D",
            "300ms",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(900));
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 0);
    let c = read_json(&json);
    assert_eq!(c["complete"], false);
    let done = c["results"].as_array().unwrap().len();
    assert!(done > 0, "the benchmarks that ended are kept");
    assert!(
        rows(&c, "priority-inversion").is_empty(),
        "stopped before the last"
    );
    let o = rtscope(dir.path()).arg("runs").output().unwrap();
    assert!(stdout(&o).contains("interrupted"), "{}", stdout(&o));
}

#[test]
fn explain_names_the_fifo_hog_behind_its_gaps() {
    if !require_root() {
        return;
    }
    if !require(Need::Cpus, last_cpu() > 0, "two CPUs (one is isolated)") {
        return;
    }
    let _g = exclusive_system();
    let dir = TempDir::new("char-explain");
    let cpu = last_cpu();
    let json = dir.join("e.json");
    let hog = Hog::start(cpu);
    let o = characterize(
        &dir,
        &[
            "--only",
            "os-noise",
            "--cpus",
            &cpu.to_string(),
            "-p",
            "80",
            "-D",
            "250ms",
            "--explain",
            "5ms",
            "--no-save",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    drop(hog);
    assert_code(&o, 0);
    let c = read_json(&json);
    let n = &rows(&c, "os-noise")[0]["noise"];
    assert_eq!(u(&n["explained_above_ns"]), 5_000_000);
    let xs = n["explanations"].as_array().unwrap();
    assert!(!xs.is_empty(), "no gap explained: {n}");
    // The hog's gaps are explained as the hog's (not necessarily the
    // largest: a hypervisor stall of this VM can be as long).
    let hog = xs
        .iter()
        .find(|x| x["cause"].to_string().contains(Hog::COMM))
        .unwrap_or_else(|| panic!("the hog is not named: {n}"));
    assert!(u(&hog["spike"]["latency_ns"]) >= 20_000_000, "{hog}");
    assert!(stdout(&o).contains("explained from kernel trace events"));
    // --explain needs a CPU for the trace reader.
    let o = characterize(&dir, &["--only", "os-noise", "--explain", "-D", "50ms"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("outside --cpus"), "{}", stderr(&o));
}
