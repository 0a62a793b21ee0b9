//! `rtscope import` of rtla timerlat / osnoise, oslat and jitterdebugger
//! output, then `runs show`, `report` and `compare`: timerlat's IRQ,
//! thread and user latencies stay apart, oslat's busy-loop gaps and
//! osnoise's noise are never taken for wake-up latencies, bad input is
//! refused (exit 2) with nothing imported. And `explain --trace` of a
//! trace-cmd `.dat` file. The oslat fixtures were written by oslat 2.40
//! on this machine; the others follow their tools' sources (see
//! tests/fixtures/import-formats/README.md).

use crate::util::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import-formats")
        .join(name)
        .display()
        .to_string()
}

fn db(dir: &TempDir) -> PathBuf {
    dir.join("runs.db")
}

/// `rtscope --db STORE ARGS`, expecting `code`; its standard output.
fn run(dir: &TempDir, args: &[&str], code: i32) -> String {
    let o = rt(dir, db(dir), args);
    assert_code(&o, code);
    stdout(&o) + &stderr(&o)
}

fn report(dir: &TempDir, ids: &[&str]) -> String {
    let html = dir.join("r.html");
    let mut args = vec!["report"];
    args.extend(ids);
    args.extend(["-o", html.to_str().unwrap()]);
    run(dir, &args, 0);
    std::fs::read_to_string(&html).unwrap()
}

#[test]
fn timerlat_keeps_irq_thread_and_user_apart() {
    let _g = shared_system();
    let dir = TempDir::new("import-timerlat");
    run(&dir, &["import", &fixture("timerlat-hist-u.txt")], 0);
    run(&dir, &["import", &fixture("timerlat-top.txt")], 0);
    let show = run(&dir, &["runs", "show", "1"], 0);
    assert!(show.contains("(rtla-timerlat)"), "{show}");
    assert!(
        show.contains("per CPU:     CPU 1: user (the latency shown) min/avg/max 3.0/4.0/21.0 µs (1000 samples); irq min/avg/max 0.0/0.0/9.0 µs (1000 samples); thread min/avg/max 2.0/3.0/17.0 µs (1000 samples)"),
        "{show}"
    );
    let top = run(&dir, &["runs", "show", "2"], 0);
    assert!(
        top.contains(
            "CPU 0: thread (the latency shown) min/avg/max 2.0/4.0/14.0 µs (10003 samples); irq"
        ),
        "{top}"
    );
    let page = report(&dir, &["1"]);
    assert!(
        page.contains("user (the latency shown)") && page.contains("; irq min"),
        "report lacks the split"
    );
    // User against thread latency: the same quantity, no IRQ involved.
    let cmp = run(&dir, &["compare", "1", "2", "--metric", "max"], 0);
    assert!(!cmp.contains("different quantities"), "{cmp}");
}

#[test]
fn osnoise_is_noise_not_a_wakeup_latency() {
    let _g = shared_system();
    let dir = TempDir::new("import-osnoise");
    run(&dir, &["import", &fixture("osnoise-hist.txt")], 0);
    run(&dir, &["import", &fixture("osnoise-top.txt")], 0);
    run(&dir, &["import", &fixture("timerlat-top.txt")], 0);
    let show = run(&dir, &["runs", "show", "2"], 0);
    assert!(show.contains("quantity:    OS noise"), "{show}");
    assert!(
        show.contains("CPU 1: runtime 9s, noise 312.0 µs (99.99653 % of the CPU left), max noise in a period 21.0 µs, max single 9.0 µs; interference counts HW 0, NMI 0, IRQ 9012, softirq 3, thread 41"),
        "{show}"
    );
    let page = report(&dir, &["1"]);
    assert!(page.contains("OS noise"), "report lacks the quantity");
    // OS noise against a wake-up latency: refused, never set side by side.
    let cmp = run(&dir, &["compare", "1", "3", "--metric", "max"], 2);
    assert!(
        cmp.contains("different quantities are not compared"),
        "{cmp}"
    );
}

#[test]
fn oslat_is_a_busy_loop_gap_never_compared_silently() {
    let _g = shared_system();
    let dir = TempDir::new("import-oslat");
    run(&dir, &["import", &fixture("oslat.txt")], 0);
    run(&dir, &["import", &fixture("oslat.json")], 0);
    run(
        &dir,
        &["import", &fixture("jitterdebugger-results.json")],
        0,
    );
    for id in ["1", "2"] {
        let show = run(&dir, &["runs", "show", id], 0);
        assert!(show.contains("(oslat)"), "{show}");
        assert!(show.contains("quantity:    busy-loop gap"), "{show}");
    }
    let page = report(&dir, &["2"]);
    assert!(page.contains("busy-loop gap"), "report lacks the quantity");
    // The text and the JSON of one run agree.
    let cmp = run(&dir, &["compare", "1", "2", "--metric", "max"], 0);
    assert!(cmp.contains("1.00"), "{cmp}");
    assert!(!cmp.contains("different quantities"), "{cmp}");
    // A wake-up latency against oslat, alone or among others: refused.
    for args in [&["3", "1"][..], &["3", "3", "1"]] {
        let mut argv = vec!["compare", "--metric", "max"];
        argv.extend(args);
        let cmp = run(&dir, &argv, 2);
        assert!(
            cmp.contains("measures busy-loop gap (oslat)")
                && cmp.contains("different quantities are not compared"),
            "{cmp}"
        );
    }
}

#[test]
fn jitterdebugger_results_are_wakeups_per_thread() {
    let _g = shared_system();
    let dir = TempDir::new("import-jd");
    run(
        &dir,
        &["import", &fixture("jitterdebugger-results.json")],
        0,
    );
    let show = run(&dir, &["runs", "show", "1"], 0);
    assert!(show.contains("(jitterdebugger)"), "{show}");
    assert!(!show.contains("quantity:"), "{show}");
    assert!(show.contains("which CPU each ran on is unknown"), "{show}");
}

#[test]
fn bad_files_of_the_new_formats_are_refused_and_nothing_is_imported() {
    let _g = shared_system();
    let dir = TempDir::new("import-formats-bad");
    let read = |n: &str| std::fs::read_to_string(fixture(n)).unwrap();
    let cases = [
        (
            "t.txt",
            read("timerlat-hist-u.txt").replace("count:     1000", "count:     1001"),
        ),
        ("o.txt", read("osnoise-top.txt").replace("99.99653", "9x.9")),
        (
            "l.txt",
            read("oslat.txt").replace("     Maximum:\t 12293", "     Maximum:\t 1x"),
        ),
        (
            "j.json",
            read("jitterdebugger-results.json").replace("\"count\": 10000", "\"count\": 10"),
        ),
    ];
    for (name, text) in &cases {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        let out = run(&dir, &["import", f.to_str().unwrap()], 2);
        assert!(out.contains("nothing was imported"), "{name}: {out}");
    }
    let list = run(&dir, &["runs"], 0);
    assert!(
        !list
            .lines()
            .skip(1)
            .any(|l| l.trim_start().starts_with('1')),
        "{list}"
    );
}

#[test]
fn explain_reads_trace_cmd_dat_files_through_trace_cmd_report() {
    use std::os::unix::fs::PermissionsExt;
    let _g = shared_system();
    let dir = TempDir::new("explain-dat");
    // A file that starts as trace-cmd's .dat files do, and a trace-cmd
    // that answers `report FILE` with the text of a real report: rtscope
    // must run it on the file and explain what it prints.
    let dat = dir.join("trace.dat");
    std::fs::write(&dat, b"\x17\x08Dtracing6\0\0\x08\0\x10binary").unwrap();
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let report = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/explain/cyclictest-hog.report.txt");
    let fake = bin.join("trace-cmd");
    let script = format!(
        "#!/bin/sh\n[ \"$1\" = report ] && [ \"$2\" = '{}' ] || exit 9\ncat '{}'\n",
        dat.display(),
        report.display()
    );
    std::fs::write(&fake, script).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let o = rtscope(dir.path())
        .env("PATH", &path)
        .args(["explain", "--trace", dat.to_str().unwrap()])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(stdout(&o).contains("perl"), "{}", stdout(&o));
    // Without trace-cmd on the PATH: exit 2, saying what to do.
    let o = rtscope(dir.path())
        .env("PATH", dir.path())
        .args(["explain", "--trace", dat.to_str().unwrap()])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(stderr(&o).contains("install trace-cmd"), "{}", stderr(&o));
}

/// The files the tools themselves wrote: rtla 6.1 and oslat 2.4 on the
/// lab's PREEMPT_RT guest (lab-rt-6.1/make.sh), jitterdebugger 0.3.1 on
/// this machine (jitterdebugger-vm/make.sh). Each is read as its format,
/// with the figures the tool printed.
#[test]
fn files_the_tools_wrote_are_read_as_they_are() {
    let _g = shared_system();
    let dir = TempDir::new("import-real");
    let cases = [
        ("lab-rt-6.1/timerlat-hist.txt", "(rtla-timerlat)", 85692.0),
        (
            "lab-rt-6.1/timerlat-hist-nano.txt",
            "(rtla-timerlat)",
            41659.9,
        ),
        // "max:      23874     26588" (the thread's, --no-irq)
        (
            "lab-rt-6.1/timerlat-hist-noirq-b10.txt",
            "(rtla-timerlat)",
            26588.0,
        ),
        ("lab-rt-6.1/timerlat-top.txt", "(rtla-timerlat)", 42872.0),
        // the thread's max column, 53771110 ns on CPU 0
        (
            "lab-rt-6.1/timerlat-top-nano.txt",
            "(rtla-timerlat)",
            53771.1,
        ),
        // "max:      59133     80286"
        ("lab-rt-6.1/osnoise-hist.txt", "(rtla-osnoise)", 80286.0),
        // Max Single of CPU 1
        ("lab-rt-6.1/osnoise-top.txt", "(rtla-osnoise)", 48106.0),
        ("lab-rt-6.1/oslat.txt", "(oslat)", 36623.0),
        // thread 0's "max": 36165
        ("lab-rt-6.1/oslat.json", "(oslat)", 36165.0),
        // CPU 1's "max": 1052 (beyond its histogram's last slot, 919)
        ("jitterdebugger-vm/results.json", "(jitterdebugger)", 1052.0),
        (
            "jitterdebugger-vm/samples/results.json",
            "(jitterdebugger)",
            971.0,
        ),
        // The binary stream of the same run: every sample, 971 us its max.
        (
            "jitterdebugger-vm/samples/samples.raw",
            "(jitterdebugger-raw)",
            971.0,
        ),
    ];
    for (i, (file, format, max_us)) in cases.iter().enumerate() {
        let out = run(&dir, &["import", &fixture(file)], 0);
        let show = run(&dir, &["runs", "show", &(i + 1).to_string()], 0);
        assert!(show.contains(format), "{file}: {out}\n{show}");
        assert_eq!(
            table_max_us(&show),
            Some(*max_us),
            "{file}: the table's largest max, expected {max_us} us:\n{show}"
        );
    }
}

/// The largest figure of the max column of `runs show`'s table (the
/// column before `missed`, the last: rows of all threads have no CPU, P
/// or I).
fn table_max_us(show: &str) -> Option<f64> {
    let mut lines = show.lines().skip_while(|l| !l.starts_with("T "));
    let header: Vec<&str> = lines.next()?.split_whitespace().collect();
    assert_eq!(header[header.len() - 2..], ["max", "missed"], "{show}");
    lines
        .skip_while(|l| l.starts_with('-'))
        .take_while(|l| !l.trim().is_empty() && !l.contains(':'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.get(f.len().checked_sub(2)?)?.parse::<f64>().ok()
        })
        .reduce(f64::max)
}

/// Two rtla sessions pasted one after the other are two runs; a top that
/// refreshed its screen is one.
#[test]
fn two_rtla_sessions_in_one_file_are_two_runs() {
    let _g = shared_system();
    let dir = TempDir::new("import-rtla-two");
    let read = |f: &str| std::fs::read_to_string(fixture(f)).unwrap();
    let both = dir.join("both.txt");
    std::fs::write(
        &both,
        read("lab-rt-6.1/timerlat-hist.txt") + "\n" + &read("lab-rt-6.1/timerlat-hist-nano.txt"),
    )
    .unwrap();
    let out = run(&dir, &["import", both.to_str().unwrap()], 0);
    assert!(out.contains("holds 2 runs"), "{out}");
    let list = run(&dir, &["runs"], 0);
    assert!(
        list.contains("part=1") || run(&dir, &["runs", "show", "2"], 0).contains("part=2"),
        "{list}"
    );
    let refreshed = run(&dir, &["import", &fixture("timerlat-top.txt")], 0);
    assert!(!refreshed.contains("holds"), "{refreshed}");
}
