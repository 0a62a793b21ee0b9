//! `rtscope import` on real files: cyclictest runs made here with Debian's
//! rt-tests (histogram, --json and status lines of the same run, which
//! must agree), and fixtures of the layouts this machine cannot make
//! (rt-tests 2.7's histogram, -H, the old layout, -N JSON, Xenomai, EVL).
//! A malformed file is refused with its line, and nothing is imported; so
//! is a run record whose counts add past 2^64.

use crate::util::*;
use rtscope::record::RunRecord;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name)
}

fn db(dir: &TempDir) -> PathBuf {
    dir.join("runs.db")
}

fn import(dir: &TempDir, args: &[&str]) -> std::process::Output {
    rtscope(dir.path())
        .arg("--db")
        .arg(db(dir))
        .arg("import")
        .args(args)
        .output()
        .unwrap()
}

fn export(dir: &TempDir, id: &str) -> RunRecord {
    let o = rtscope(dir.path())
        .arg("--db")
        .arg(db(dir))
        .args(["runs", "export", id, "--json"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    serde_json::from_slice(&o.stdout).unwrap()
}

fn count_runs(dir: &TempDir) -> usize {
    let o = rtscope(dir.path())
        .arg("--db")
        .arg(db(dir))
        .arg("runs")
        .output()
        .unwrap();
    assert_code(&o, 0);
    stdout(&o)
        .lines()
        .skip(1)
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .count()
}

/// The numbers after `# Name:` in a cyclictest histogram file.
fn footer(text: &str, name: &str) -> Vec<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("# {name}:")))
        .unwrap_or_else(|| panic!("no '# {name}:' in\n{text}"))
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect()
}

/// C: of the last status line of thread `t` in cyclictest's output.
fn last_count(out: &str, t: usize) -> u64 {
    out.lines()
        .rfind(|l| l.trim_start().starts_with(&format!("T:{t:2} ")))
        .and_then(|l| l.split("C:").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line of thread {t} in\n{out}"))
}

#[test]
fn cyclictest_files_made_here_agree_once_imported() {
    let _g = shared_system();
    let dir = TempDir::new("import-ct");
    let hist = dir.join("run.hist");
    let json = dir.join("run.json");
    let prio: &[&str] = if is_root() { &["-p", "80"] } else { &[] };
    // One run, two files: the histogram and the JSON must give the same
    // counts and extremes.
    let o = Command::new("cyclictest")
        .args([
            "-m", "-i", "1000", "-l", "400", "-t", "2", "-a", "-h", "80", "-q",
        ])
        .args(prio)
        .arg(format!("--histfile={}", hist.display()))
        .arg(format!("--json={}", json.display()))
        .output()
        .expect("cyclictest (Debian package rt-tests) must be installed: make deps");
    assert_code(&o, 0);
    // The status lines of another run, as a terminal shows them.
    let summary = dir.join("summary.txt");
    let o = Command::new("cyclictest")
        .args(["-m", "-i", "1000", "-l", "300", "-t", "2", "-a"])
        .args(prio)
        .output()
        .unwrap();
    assert_code(&o, 0);
    std::fs::write(&summary, &o.stdout).unwrap();
    let o_summary = stdout(&o);

    let o = import(
        &dir,
        &[
            hist.to_str().unwrap(),
            json.to_str().unwrap(),
            summary.to_str().unwrap(),
            "--no-join",
            "--label",
            "rt-tests",
            "--tag",
            "tool=cyclictest",
        ],
    );
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("as run 1 (cyclictest-histfile"), "{out}");
    assert!(out.contains("as run 2 (cyclictest-json"), "{out}");
    assert!(out.contains("as run 3 (cyclictest-summary"), "{out}");

    let text = std::fs::read_to_string(&hist).unwrap();
    let h = export(&dir, "1");
    let j = export(&dir, "2");
    let s = export(&dir, "3");
    for r in [&h, &j, &s] {
        assert_eq!(r.source.kind, "imported");
        assert_eq!(r.label.as_deref(), Some("rt-tests"));
        assert_eq!(r.tags["tool"], "cyclictest");
        assert_eq!(r.threads.len(), 2);
        assert_eq!(r.threads[0].histogram.resolution_ns, 1000);
        r.validate().unwrap();
    }
    assert_eq!(h.source.format.as_deref(), Some("cyclictest-histfile"));
    let totals = footer(&text, "Total");
    let overflows = footer(&text, "Histogram Overflows");
    let maxs = footer(&text, "Max Latencies");
    let mins = footer(&text, "Min Latencies");
    let cycles: Vec<u64> = {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (0..2)
            .map(|i| v["thread"][i.to_string()]["cycles"].as_u64().unwrap())
            .collect()
    };
    for t in 0..2 {
        assert_eq!(h.threads[t].stats.samples, totals[t] + overflows[t]);
        assert_eq!(
            h.threads[t].stats.samples, cycles[t],
            "histogram and JSON agree"
        );
        assert_eq!(j.threads[t].stats.samples, cycles[t]);
        assert_eq!(h.threads[t].stats.max_ns, Some(maxs[t] * 1000));
        assert_eq!(j.threads[t].stats.max_ns, h.threads[t].stats.max_ns);
        assert_eq!(j.threads[t].stats.min_ns, Some(mins[t] * 1000));
        assert_eq!(h.threads[t].histogram, j.threads[t].histogram, "thread {t}");
        assert_eq!(s.threads[t].stats.samples, last_count(&o_summary, t));
        assert!(s.threads[t].stats.max_ns >= s.threads[t].stats.min_ns);
    }
    assert_eq!(j.options.interval_ns, 1_000_000);
    assert_eq!(j.tool.name, "cyclictest");
    assert!(!j.fingerprint.kernel_release.is_empty());
    assert_eq!(s.threads[1].interval_ns, 1_500_000, "-d 500 us by default");
    assert_eq!(s.overall.p99_ns, None, "status lines have no histogram");

    // The histogram goes back out as cyclictest wrote it (rows, totals,
    // extremes, overflows; not the overflow cycle numbers, which are not
    // kept).
    let o = rtscope(dir.path())
        .arg("--db")
        .arg(db(&dir))
        .args(["runs", "export", "1", "--histfile", "--rows", "80"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let keep = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with("# Thread") && !l.starts_with("# /dev/") && !l.is_empty())
            .map(String::from)
            .collect()
    };
    assert_eq!(keep(&stdout(&o)), keep(&text));

    // The same files again: skipped, nothing added.
    let o = import(&dir, &[hist.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("already stored as run 1"),
        "{}",
        stdout(&o)
    );
    assert_eq!(count_runs(&dir), 3);

    // Given together without --no-join, the JSON and the histogram file
    // of the run are one record: the JSON's facts, the same histogram.
    let joined = TempDir::new("import-ct-join");
    let o = import(&joined, &[hist.to_str().unwrap(), json.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("are one cyclictest run"),
        "{}",
        stdout(&o)
    );
    assert_eq!(count_runs(&joined), 1);
    let one = export(&joined, "1");
    assert_eq!(one.source.command_line, j.source.command_line);
    assert_eq!(one.started_at_unix_ns, j.started_at_unix_ns);
    for t in 0..2 {
        assert_eq!(one.threads[t].histogram, h.threads[t].histogram);
        assert_eq!(one.threads[t].stats.samples, cycles[t]);
    }
    // Imported one at a time, the second says which stored run it is.
    let apart = TempDir::new("import-ct-apart");
    assert_code(&import(&apart, &[json.to_str().unwrap()]), 0);
    let o = import(&apart, &[hist.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("this and run 1 are one cyclictest run"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn fixtures_of_other_versions_and_tools() {
    let dir = TempDir::new("import-fx");
    let files = [
        "cyclictest-2.7-hist.txt",
        "cyclictest-2.4-histofall.txt",
        "cyclictest-old-hist.txt",
        "cyclictest-2.x-ns.json",
        "xenomai-latency.txt",
        "evl-latmus.txt",
    ];
    let paths: Vec<String> = files
        .iter()
        .map(|f| fixture(f).display().to_string())
        .collect();
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let o = import(&dir, &args);
    assert_code(&o, 0);
    assert_eq!(count_runs(&dir), files.len());

    // rt-tests 2.7: no zero rows, no total; counts from rows + overflows.
    let r = export(&dir, "1");
    let text = std::fs::read_to_string(fixture(files[0])).unwrap();
    assert!(!text.contains("# Total"));
    let rows: u64 = text
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(r.threads[0].stats.samples, rows + 9);
    assert_eq!(r.threads[1].stats.max_ns, Some(408_945_000));
    assert!(
        r.warnings.iter().any(|w| w.contains("lower bounds")),
        "{:?}",
        r.warnings
    );

    // -H: the all-threads column is checked and dropped.
    let r = export(&dir, "2");
    assert_eq!(r.threads.len(), 2);
    assert_eq!(r.threads[0].stats.samples, 377 + 23);
    assert_eq!(r.threads[1].stats.samples, 111 + 16);

    // The old layout: 20 000 samples, the late ones counted.
    let r = export(&dir, "3");
    assert_eq!(r.overall.samples, 20_000);
    assert_eq!(r.overall.max_ns, Some(19_085_000));
    assert_eq!(r.options.dma_latency_us, Some(0));

    // -N JSON: nanoseconds, no colon in the keys, PREEMPT RT (old spelling).
    let r = export(&dir, "4");
    assert_eq!(r.threads[0].histogram.resolution_ns, 1);
    assert_eq!(r.overall.samples, 1000);
    assert_eq!(r.overall.max_ns, Some(52_311));
    assert_eq!(r.overall.min_ns, Some(6210));
    assert_eq!(r.fingerprint.preemption_model, "rt");
    assert_eq!(r.fingerprint.machine, "aarch64");
    assert_eq!(r.tool.version, "2.60");
    assert_eq!(r.options.interval_ns, 250_000);
    assert_eq!(r.threads[0].cpu, Some(1));

    // Xenomai: 12 one-second windows, histogram of every sample.
    let r = export(&dir, "5");
    let t = &r.threads[0];
    assert_eq!(r.source.format.as_deref(), Some("xenomai-latency"));
    assert_eq!(t.stats.samples, 120_000);
    assert_eq!(t.stats.max_ns, Some(38_912));
    assert_eq!(t.stats.missed_periods, 1);
    assert_eq!(t.windows.len(), 12);
    assert_eq!(t.windows.window_ns, 1_000_000_000);
    assert_eq!(*t.windows.max_ns.iter().max().unwrap(), 38_912);
    assert_eq!(r.duration_ns, 12_000_000_000);
    assert!(r.warnings.iter().any(|w| w.contains("below 0")));

    // EVL: the period and CPU come from the RTT line.
    let r = export(&dir, "6");
    assert_eq!(r.threads[0].interval_ns, 1_000_000);
    assert_eq!(r.threads[0].cpu, Some(1));
    assert_eq!(r.threads[0].priority, 98);
    assert_eq!(r.overall.max_ns, Some(14_207));
    assert_eq!(r.overall.samples, 5000);

    // The list marks them as imported.
    let o = rtscope(dir.path())
        .arg("--db")
        .arg(db(&dir))
        .arg("runs")
        .output()
        .unwrap();
    assert_eq!(stdout(&o).matches("imported").count(), files.len());
}

#[test]
fn a_malformed_file_is_refused_with_its_line_and_nothing_is_imported() {
    let dir = TempDir::new("import-bad");
    let good = fixture("cyclictest-old-hist.txt");
    let o = import(&dir, &[good.to_str().unwrap()]);
    assert_code(&o, 0);

    let text = std::fs::read_to_string(&good).unwrap();
    let cases = [
        (
            "row.txt",
            text.replace("000005 ", "00000x "),
            ":8:",
            "expected a bucket number",
        ),
        (
            "total.txt",
            text.replace("# Total: 000019960", "# Total: 000019961"),
            ":43:",
            "sum of its rows",
        ),
        (
            "cut.txt",
            text.lines().take(30).collect::<Vec<_>>().join("\n"),
            "",
            "expected a '# Min Latencies:' line",
        ),
        (
            "x.txt",
            std::fs::read_to_string(fixture("xenomai-latency.txt"))
                .unwrap()
                .replacen("RTD|", "RTD|  oops|", 1),
            ":7:",
            "expected 7 fields",
        ),
        (
            "plain.txt",
            "hello\n".to_string(),
            "",
            "not a format rtscope can read",
        ),
    ];
    for (name, body, at, needle) in cases {
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        // A good file beside the bad one: neither is imported.
        let fresh = dir.join("fresh.txt");
        std::fs::write(&fresh, text.replace("19085", "19086")).unwrap();
        let o = import(&dir, &[fresh.to_str().unwrap(), p.to_str().unwrap()]);
        assert_code(&o, 2);
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains(&format!("{name}{at}")), "{name}: {err}");
        assert!(err.contains(needle), "{name}: '{needle}' not in {err}");
        assert!(err.contains("nothing was imported"), "{err}");
        assert_eq!(count_runs(&dir), 1, "{name}");
    }
    // Forcing a format that does not fit is refused the same way.
    let o = import(
        &dir,
        &["--format", "xenomai-latency", good.to_str().unwrap()],
    );
    assert_code(&o, 2);
    assert!(stderr(&o).contains("Sampling period"), "{}", stderr(&o));
    let o = import(&dir, &["--format", "nope", good.to_str().unwrap()]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("unknown format 'nope'"),
        "{}",
        stderr(&o)
    );
    // --dry-run reads and stores nothing.
    let o = import(
        &dir,
        &["--dry-run", fixture("evl-latmus.txt").to_str().unwrap()],
    );
    assert_code(&o, 0);
    assert!(stdout(&o).contains("would import"));
    assert_eq!(count_runs(&dir), 1);
}

#[test]
fn a_record_whose_counts_add_past_2_64_is_refused() {
    let dir = TempDir::new("import-wrap");
    let half = 1u64 << 63;
    // One thread whose buckets wrap to 2 (its stats say 2, as the
    // wrapped sum did), and two threads that wrap only together.
    let mut one = rtscope::record::synthetic(&[vec![1000, 2000]]);
    one.threads[0].histogram.buckets = vec![[1000, half], [2000, half + 2]];
    let mut two = rtscope::record::synthetic(&[vec![1000], vec![1000]]);
    for t in &mut two.threads {
        t.histogram.buckets = vec![[1000, half]];
        t.stats.samples = half;
    }
    for (name, rec) in [("one.json", one), ("two.json", two)] {
        let p = dir.join(name);
        std::fs::write(&p, serde_json::to_string(&rec).unwrap()).unwrap();
        let o = import(&dir, &[p.to_str().unwrap()]);
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.contains(&u64::MAX.to_string()), "{name}: {err}");
        assert!(err.contains("nothing was imported"), "{name}: {err}");
        let o = rtscope(dir.path())
            .args(["report", p.to_str().unwrap(), "-o"])
            .arg(dir.join("r.html"))
            .output()
            .unwrap();
        assert_code(&o, 2);
    }
    assert!(!db(&dir).exists() || count_runs(&dir) == 0);
}

#[test]
fn a_file_above_the_size_limit_is_refused_unread() {
    let dir = TempDir::new("import-big");
    // Sparse: 300 MiB that take no room, above the 256 MiB default.
    let big = dir.join("big.txt");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(300 << 20)
        .unwrap();
    let good = fixture("cyclictest-old-hist.txt");
    for args in [
        vec![big.to_str().unwrap()],
        vec![good.to_str().unwrap(), "--max-size", "512"],
    ] {
        let o = import(&dir, &args);
        assert_code(&o, 2);
        let e = stderr(&o);
        assert!(
            e.contains("limit of an import")
                && e.contains("--max-size")
                && e.contains("nothing was imported"),
            "{args:?}: {e}"
        );
    }
    // At or under the limit: read.
    let o = import(
        &dir,
        &["--max-size", "1K", "--dry-run", good.to_str().unwrap()],
    );
    assert_code(&o, 0);
}

/// `rtscope` with the test's store, expecting `code`.
fn rt(dir: &TempDir, args: &[&str], code: i32) -> std::process::Output {
    let o = crate::util::rt(dir, db(dir), args);
    assert_code(&o, code);
    o
}

#[test]
fn what_an_import_could_not_know_reads_unknown_everywhere() {
    let _g = shared_system();
    let dir = TempDir::new("import-unknown");
    // `-q -h` prints the histogram only: no interval, priority, policy or
    // duration; cyclictest never counts missed periods.
    let hist = dir.join("quiet.txt");
    let prio: &[&str] = if is_root() { &["-p", "80"] } else { &[] };
    let o = Command::new("cyclictest")
        .args(["-m", "-i", "1000", "-l", "300", "-q", "-h", "100"])
        .args(prio)
        .output()
        .expect("cyclictest (Debian package rt-tests) must be installed: make deps");
    assert_code(&o, 0);
    std::fs::write(&hist, &o.stdout).unwrap();
    // Status lines alone: no histogram.
    let lines = dir.join("lines.txt");
    std::fs::write(
        &lines,
        "policy: fifo: loadavg: 0.57 0.69 0.47 1/90 10368\n\
         T: 0 (10367) P:80 I:1000 C:   1500 Min:      9 Act:   15 Avg:   18 Max:      47\n",
    )
    .unwrap();
    let json = fixture("cyclictest-2.x-ns.json");
    for f in [&hist, &lines, &json] {
        assert_code(&import(&dir, &[f.to_str().unwrap()]), 0);
    }
    let rec = export(&dir, "1");
    assert!(rec.source.unknown.len() >= 5, "{:?}", rec.source.unknown);

    let show = stdout(&rt(&dir, &["runs", "show", "1"], 0));
    assert!(
        show.contains("priority unknown, interval unknown"),
        "{show}"
    );
    assert!(!show.contains("priority 0"), "{show}");
    let row = show
        .lines()
        .find(|l| l.trim_start().starts_with("0 "))
        .unwrap_or_else(|| panic!("no thread row: {show}"));
    assert!(row.trim_end().ends_with("unknown"), "missed periods: {row}");
    assert!(
        show.contains("missed: unknown (not counted by cyclictest)"),
        "{show}"
    );

    let html = dir.join("r.html");
    rt(&dir, &["report", "1", "-o", html.to_str().unwrap()], 0);
    let page = std::fs::read_to_string(&html).unwrap();
    for bad in ["provisional: 0 s", "priority 0", "Missed periods: 0"] {
        assert!(!page.contains(bad), "report shows '{bad}'");
    }
    assert!(page.contains("duration unknown"));
    assert!(page.contains("Missed periods: unknown"));

    let csv = stdout(&rt(&dir, &["runs", "export", "1", "--csv"], 0));
    let first = csv.lines().nth(1).unwrap();
    assert!(
        first.starts_with("0,,,,"),
        "priority and interval empty: {first}"
    );
    assert!(first.ends_with(','), "missed periods empty: {first}");

    // Against an import that recorded some of the system: the fields
    // one side lacks are one list, not a line each.
    let cmp = stdout(&rt(&dir, &["compare", "3", "1"], 0));
    assert!(!cmp.contains("(absent)"), "{cmp}");
    assert!(cmp.contains("not recorded by B: "), "{cmp}");
    assert!(!cmp.contains("over 0 s"), "{cmp}");

    // A figure of several runs draws those with a histogram and names
    // the one left out; with none, it is refused.
    let svg = dir.join("h.svg");
    let o = rt(
        &dir,
        &[
            "plot",
            "1",
            "2",
            "3",
            "--kind",
            "hist",
            "-o",
            svg.to_str().unwrap(),
        ],
        0,
    );
    assert!(
        stderr(&o).contains("run 2 is left out of the figure"),
        "{}",
        stderr(&o)
    );
    assert!(svg.exists());
    let o = rt(
        &dir,
        &[
            "plot",
            "2",
            "--kind",
            "exceedance",
            "-o",
            svg.to_str().unwrap(),
        ],
        2,
    );
    assert!(
        stderr(&o).contains("no latency histogram"),
        "{}",
        stderr(&o)
    );
}

/// Status lines of one run as a terminal leaves them (thread 0 and 1).
fn status_block(tid: u32, count: u64, max_us: u64) -> String {
    format!(
        "# /dev/cpu_dma_latency set to 0us\n\
         policy: fifo: loadavg: 0.10 0.20 0.30 1/90 100\n\n\
         T: 0 ({tid:5}) P:99 I:1000 C:{count:7} Min:      3 Act:    5 Avg:    6 Max:{max_us:8}\n\
         T: 1 ({:5}) P:99 I:1500 C:{:7} Min:      4 Act:    6 Avg:    7 Max:{max_us:8}\n",
        tid + 1,
        count * 2 / 3
    )
}

#[test]
fn pasted_results_several_runs_indented_and_cut_lines() {
    let _g = shared_system();
    let dir = TempDir::new("import-paste");
    // A README: a PREEMPT_RT run, then a vanilla one, indented as markdown
    // code: two runs, not the last one alone.
    let indent = |t: &str| -> String { t.lines().map(|l| format!("    {l}\n")).collect() };
    let readme = dir.join("README.md");
    std::fs::write(
        &readme,
        format!(
            "# Our board\n\nPREEMPT_RT:\n\n{}\nVanilla:\n\n{}",
            indent(&status_block(1001, 60000, 24)),
            indent(&status_block(2001, 60000, 4210))
        ),
    )
    .unwrap();
    let o = import(&dir, &[readme.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("README.md holds 2 runs: imported as runs 1 (part=1), 2 (part=2)"),
        "{}",
        stdout(&o)
    );
    assert_eq!(export(&dir, "1").overall.max_ns, Some(24_000));
    assert_eq!(export(&dir, "2").overall.max_ns, Some(4_210_000));

    // A histogram quoted in an issue (`> `) inside a fence keeps its
    // histogram and overflows.
    let quoted = dir.join("issue.md");
    let hist = "# Histogram\n000005 000002\n000007 000001\n# Min Latencies: 00005\n# Avg Latencies: 00009\n# Max Latencies: 00120\n# Histogram Overflows: 00003\n";
    let body: String = hist.lines().map(|l| format!("> {l}\n")).collect();
    std::fs::write(&quoted, format!("> ```\n{body}> ```\n")).unwrap();
    let o = import(&dir, &[quoted.to_str().unwrap()]);
    assert_code(&o, 0);
    let r = export(&dir, "3");
    assert_eq!(r.source.format.as_deref(), Some("cyclictest-histfile"));
    assert_eq!(r.overall.samples, 6);
    assert_eq!(r.overall.max_ns, Some(120_000));

    // An RTD line cut in two: refused by default with its line, read with
    // --lenient, the line listed on stderr and in the run's notes.
    let cut = dir.join("latency.txt");
    std::fs::write(
        &cut,
        "== Sampling period: 100 us\n\
         RTD|      1.154|      2.000|      3.000|       0|     0|      1.154|      3.000\n\
         RTD|      1.200|      2.100|\n      3.100|       0|     0|      1.154|      3.100\n\
         RTD|      1.300|      2.200|      3.300|       0|     0|      1.154|      3.300\n",
    )
    .unwrap();
    let o = import(&dir, &[cut.to_str().unwrap()]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("latency.txt:3:"), "{}", stderr(&o));
    assert_eq!(count_runs(&dir), 3);
    let o = import(&dir, &["--lenient", cut.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(
        stderr(&o).contains("line 3 skipped (--lenient)"),
        "{}",
        stderr(&o)
    );
    let r = export(&dir, "4");
    assert_eq!(r.overall.min_ns, Some(1154), "three decimals kept");
    assert!(r.warnings.iter().any(|w| w.contains("line 3 skipped")));
}

/// A path as an argument.
fn ps(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `rtscope --db DB ARGS…` in `dir`, its output.
fn rt_db(dir: &TempDir, args: &[&str]) -> std::process::Output {
    rtscope(dir.path())
        .arg("--db")
        .arg(db(dir))
        .args(args)
        .output()
        .unwrap()
}

/// Issue 37: a cyclictest histogram with overflows (40 samples beyond
/// its 40 µs rows, values unknown; the largest, 19 085 µs, is the max).
/// The import, `runs show` and the report say how many; against a
/// deadline above the rows the count is a range, never "1 of" as if the
/// 39 others had been on time.
#[test]
fn overflows_are_shown_and_counted_as_a_range_against_a_deadline() {
    let dir = TempDir::new("import-overflows");
    let o = import(&dir, &[ps(&fixture("cyclictest-old-hist.txt"))]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("20000 samples (40 beyond its histogram, values unknown)"),
        "{}",
        stdout(&o)
    );
    let rec = export(&dir, "1");
    let over = rec.overall.overflow.expect("the overflows are kept");
    assert_eq!((over.count, over.from_ns), (40, 40_000));
    let show = rt_db(&dir, &["runs", "show", "1"]);
    assert_code(&show, 0);
    assert!(
        stdout(&show).contains(
            "overflows: 40 samples beyond the source's histogram, values unknown (each at \
             least 40.0 µs, the largest the maximum)"
        ),
        "{}",
        stdout(&show)
    );
    let html = dir.join("r.html");
    let o = rt_db(
        &dir,
        &["report", "1", "--deadline", "100us", "-o", ps(&html)],
    );
    assert_code(&o, 0);
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.contains(
            "Deadline missed: 1 to 40 of the 20\u{202f}000 periods (50 to 2\u{202f}000 per \
             million) woke later than the deadline (yours, 100 µs), 39 of them overflows the \
             source counted beyond its histogram without their values"
        ),
        "{html}"
    );
    assert!(html.contains("Overflows: 40 samples beyond the source"));
    // The maximum the table shows is the one the prose shows.
    assert!(html.contains("The worst case, 19085.0 µs,"), "{html}");
    // Below the rows, every overflow is certainly late.
    let html2 = dir.join("r2.html");
    let o = rt_db(
        &dir,
        &["report", "1", "--deadline", "30us", "-o", ps(&html2)],
    );
    assert_code(&o, 0);
    let html2 = std::fs::read_to_string(&html2).unwrap();
    assert!(!html2.contains("of them overflows"), "{html2}");
}

/// Issue 54: a quantile among the overflows is only a lower bound, in
/// every view. cyclictest-old-hist.txt: 20 000 periods, 40 beyond its
/// 40 µs rows, so p99 (rank 19 800) is a figure and p99.9 and p99.99
/// (ranks 19 980 and 19 998) are at least 40 µs, never "40.5 µs" (where
/// the histogram keeps them); xenomai-latency.txt has no overflows.
#[test]
fn quantiles_among_the_overflows_are_bounds_in_every_view() {
    let dir = TempDir::new("import-bounds");
    let o = import(&dir, &[ps(&fixture("cyclictest-old-hist.txt"))]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("p99.99 ≥40.0us,"), "{}", stdout(&o));
    assert_code(&import(&dir, &[ps(&fixture("xenomai-latency.txt"))]), 0);
    // `runs`: the p99.99 column.
    let list = rt_db(&dir, &["runs"]);
    assert_code(&list, 0);
    let line = stdout(&list)
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .map(str::to_string)
        .unwrap();
    assert!(line.contains(" ≥40.0   19085.0"), "{}", stdout(&list));
    // `runs show`: the summary's p99, p99.9, p99.99 and max.
    let show = rt_db(&dir, &["runs", "show", "1"]);
    assert_code(&show, 0);
    assert!(
        stdout(&show).contains(" 34.5  ≥40.0   ≥40.0  19085.0 "),
        "{}",
        stdout(&show)
    );
    assert!(!stdout(&show).contains("40.5"), "{}", stdout(&show));
    // The report: its verdict box and its table.
    let html = dir.join("r.html");
    assert_code(&rt_db(&dir, &["report", "1", "-o", ps(&html)]), 0);
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.contains(
            "Percentiles p99.99 and p99.9 are at least 40.0 µs, not known exactly: they lie \
             among the overflows."
        ),
        "{html}"
    );
    assert!(!html.contains("99.9 % within"), "{html}");
    assert!(!html.contains("40.5"), "{html}");
    assert!(html.contains("≥40.0"), "{html}");
    // The CSV summary: no number where there is none.
    let csv = rt_db(&dir, &["runs", "export", "1", "--csv"]);
    assert_code(&csv, 0);
    assert!(
        stdout(&csv).contains(",>=40000,>=40000,19085000,"),
        "{}",
        stdout(&csv)
    );
    // `compare`: a bound above the other figure is worse by at least the
    // gap; two bounds have no difference.
    let c = rt_db(&dir, &["compare", "2", "1", "--metric", "p99.9"]);
    assert_code(&c, 0);
    let text = stdout(&c);
    assert!(text.contains("≥40.0"), "{text}");
    assert!(
        text.contains("B worse by at least +")
            && text.contains("B's p99.9 is a lower bound, ≥40.0 us"),
        "{text}"
    );
    assert!(!text.contains("40.5"), "{text}");
    let j = rt_db(
        &dir,
        &["compare", "2", "1", "--metric", "p99.9", "--json", "-"],
    );
    assert_code(&j, 0);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    let all = v["against_baseline"][0]["rows"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(all["run_ns"], serde_json::Value::Null, "{all}");
    assert_eq!(all["run_at_least_ns"], 40_000.0, "{all}");
    assert_eq!(all["difference_ns"], serde_json::Value::Null, "{all}");
    assert_eq!(all["bound"]["order"], "worse", "{all}");
    let c = rt_db(&dir, &["compare", "1", "1", "--metric", "p99.9"]);
    assert_code(&c, 0);
    assert!(
        stdout(&c).contains("unknown: both are lower bounds (≥40.0 us and ≥40.0 us"),
        "{}",
        stdout(&c)
    );
    // A gate the bounds leave undecided is refused, --raw or not.
    let g = rt_db(
        &dir,
        &[
            "compare",
            "1",
            "1",
            "--metric",
            "p99.9",
            "--fail-if-worse",
            "10",
            "--raw",
        ],
    );
    assert_code(&g, 2);
    assert!(stderr(&g).contains("not bounds"), "{}", stderr(&g));
}

/// Issue 37: in a page of several runs, what an import did not record
/// reads "unknown", never "none" (load) or 0 (samples); runs of another
/// quantity (oslat's gaps, osnoise's noise) say what they measure and get
/// no wake-up verdict.
#[test]
fn a_page_of_imports_never_shows_unknown_as_none_or_zero() {
    let dir = TempDir::new("import-unknowns");
    let formats = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import-formats");
    for f in [
        fixture("cyclictest-2.7-hist.txt"),
        formats.join("oslat.txt"),
        formats.join("osnoise-top.txt"),
    ] {
        let o = import(&dir, &[ps(&f)]);
        assert_code(&o, 0);
        if f.ends_with("osnoise-top.txt") {
            assert!(stdout(&o).contains("unknown samples"), "{}", stdout(&o));
            assert!(!stdout(&o).contains(" 0 samples"), "{}", stdout(&o));
        }
    }
    let out = dir.join("all.html");
    let o = rt_db(&dir, &["report", "1", "2", "3", "-o", ps(&out)]);
    assert_code(&o, 0);
    let html = std::fs::read_to_string(&out).unwrap();
    let row = |name: &str| -> String {
        let start = html
            .find(&format!("<th>{name}</th>"))
            .or_else(|| html.find(&format!(">{name}</td>")))
            .unwrap_or_else(|| panic!("no row {name}: {html}"));
        let end = html[start..].find("</tr>").unwrap() + start;
        html[start..end].to_string()
    };
    let load = row("load");
    assert!(!load.contains(">none<"), "{load}");
    assert_eq!(load.matches("unknown (not recorded)").count(), 3, "{load}");
    let samples = row("samples");
    assert!(samples.contains(">unknown<"), "{samples}");
    assert!(!samples.contains(">0<"), "{samples}");
    let measures = row("measures");
    assert!(measures.contains("busy-loop gap (oslat)"), "{measures}");
    assert!(measures.contains("OS noise (rtla osnoise)"), "{measures}");
    let verdicts = row("verdict");
    assert_eq!(
        verdicts.matches("no wake-up verdict").count(),
        2,
        "{verdicts}"
    );
    assert!(
        html.contains("No wake-up verdict: this run measures busy-loop gap (oslat)"),
        "{html}"
    );
}

/// Issue 37: `rtscope runs` lists oslat's gaps and osnoise's noise under
/// the same p99.99 and max columns as wake-up latencies; each line says
/// what its figures measure, the others' figures are marked and a note
/// says they are not wake-up latencies, and what an import did not
/// record reads unknown, never 0 or a dash.
#[test]
fn the_run_list_says_what_each_run_measures() {
    let dir = TempDir::new("import-list");
    let formats = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import-formats");
    for f in [
        fixture("cyclictest-2.7-hist.txt"),
        formats.join("oslat.txt"),
        formats.join("osnoise-top.txt"),
    ] {
        assert_code(&import(&dir, &[ps(&f)]), 0);
    }
    let o = rt_db(&dir, &["runs"]);
    assert_code(&o, 0);
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("measures"), "{text}");
    let line = |id: &str| -> &str {
        lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("no run {id}: {text}"))
    };
    let cyclictest = line("1");
    assert!(cyclictest.contains("wake-up latency"), "{text}");
    assert!(!cyclictest.contains('*'), "{text}");
    let oslat = line("2");
    assert!(oslat.contains("busy-loop gap (oslat)"), "{text}");
    assert!(oslat.trim_end().ends_with('*'), "{text}");
    let osnoise = line("3");
    assert!(osnoise.contains("OS noise (osnoise)"), "{text}");
    assert!(!osnoise.contains("wake-up latency"), "{text}");
    assert!(
        text.contains("* not a wake-up latency") && text.contains("no wake-up deadline or class"),
        "{text}"
    );
    // Unknown reads unknown: no cell is a bare dash but the label.
    for l in &lines[1..4] {
        let cells: Vec<&str> = l
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert!(
            cells.iter().filter(|c| **c == "-").count() <= 1,
            "only the missing label may be '-': {l}"
        );
    }
}

/// Imports that create the store race each other: 20 at once into a
/// store that does not exist yet all exit 0 and every run is there (a
/// store half made by one was taken for another program's, or was
/// locked, by the others: 4 imports of 720 were lost). A few rounds,
/// each into a new store, make the race likely.
#[test]
fn parallel_imports_creating_the_store_lose_nothing() {
    let dir = TempDir::new("import-create-race");
    let files: Vec<PathBuf> = (0..20u64)
        .map(|i| {
            let f = dir.join(&format!("lines-{i}.txt"));
            std::fs::write(&f, status_block(2000 + i as u32, 1000 + i, 40 + i)).unwrap();
            f
        })
        .collect();
    for round in 0..12 {
        let db = dir.join(&format!("round-{round}/store/runs.db"));
        let children: Vec<_> = files
            .iter()
            .map(|f| {
                rtscope(dir.path())
                    .arg("--db")
                    .arg(&db)
                    .arg("import")
                    .arg(f)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let o = wait_output(c, std::time::Duration::from_secs(60));
            assert_code(&o, 0);
        }
        let o = rtscope(dir.path())
            .arg("--db")
            .arg(&db)
            .arg("runs")
            .output()
            .unwrap();
        assert_code(&o, 0);
        let listed = stdout(&o)
            .lines()
            .skip(1)
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .count();
        assert_eq!(listed, 20, "round {round}:\n{}", stdout(&o));
        let left: Vec<_> = std::fs::read_dir(db.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with("runs.db"))
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

/// `import` of a FIFO no program writes is refused in bounded time (it
/// blocked for ever), a device is refused unread, and a pipe a program
/// writes (`/dev/stdin`) is still read.
#[test]
fn a_fifo_without_a_writer_is_refused_and_a_pipe_is_read() {
    let dir = TempDir::new("import-fifo");
    let fifo = dir.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let child = rtscope(dir.path())
        .arg("--db")
        .arg(db(&dir))
        .arg("import")
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_output(child, std::time::Duration::from_secs(60));
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("is a FIFO (named pipe) and no program wrote to it"),
        "{}",
        stderr(&o)
    );
    let o = import(&dir, &["/dev/null"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("character device"), "{}", stderr(&o));
    let text = std::fs::read(fixture("xenomai-latency.txt")).unwrap();
    let mut child = rtscope(dir.path())
        .arg("--db")
        .arg(db(&dir))
        .args(["import", "/dev/stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut w = child.stdin.take().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        w.write_all(&text).unwrap();
    }
    let o = wait_output(child, std::time::Duration::from_secs(60));
    assert_code(&o, 0);
    assert_eq!(count_runs(&dir), 1);
}

/// A run record holding what the engine could never have written is
/// refused with the field it names, exit 2, and nothing imported: a run
/// id that is a path or 100 000 characters, a percentile of 2^64 − 1
/// above the max, samples without threads, a thread's missed periods
/// the summary contradicts, tag keys no `--tag` gives, a 5 MB label.
#[test]
fn a_record_the_engine_could_not_have_written_is_refused_naming_the_field() {
    let dir = TempDir::new("import-invalid");
    type Edit = fn(&mut RunRecord);
    let cases: [(&str, Edit, &str); 9] = [
        (
            "path-uuid",
            |r| r.run_uuid = "../../etc/passwd".into(),
            "run_uuid",
        ),
        (
            "long-uuid",
            |r| r.run_uuid = "a".repeat(100_000),
            "run_uuid",
        ),
        ("p9999", |r| r.overall.p9999_ns = Some(u64::MAX), "p9999_ns"),
        (
            "no-threads",
            |r| {
                r.threads.clear();
                r.overall.samples = 200;
            },
            "overall.samples",
        ),
        (
            "missed",
            |r| {
                r.threads[0].stats.missed_periods = u64::MAX;
                r.overall.missed_periods = 4;
            },
            "overall.missed_periods",
        ),
        (
            "empty-key",
            |r| drop(r.tags.insert("".into(), "v".into())),
            "tags",
        ),
        (
            "space-key",
            |r| drop(r.tags.insert("a b".into(), "v".into())),
            "tags",
        ),
        (
            "nul-key",
            |r| drop(r.tags.insert("k\0".into(), "v".into())),
            "tags",
        ),
        ("label", |r| r.label = Some("x".repeat(5 << 20)), "label"),
    ];
    for (name, edit, field) in cases {
        let mut rec = rtscope::record::synthetic(&[vec![1000, 2000, 3000]]);
        edit(&mut rec);
        let p = dir.join(&format!("{name}.json"));
        std::fs::write(&p, serde_json::to_string(&rec).unwrap()).unwrap();
        let o = import(&dir, &[ps(&p)]);
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.contains(field), "{name}: {err}");
        assert!(err.contains("nothing was imported"), "{name}: {err}");
        assert!(err.len() < 1000, "{name}: the value is not echoed whole");
    }
    assert!(!db(&dir).exists() || count_runs(&dir) == 0);
}

/// `report` and `plot --kind exceedance` once panicked on two imports
/// whose stated min lies above every bucket of their histogram, with no
/// max: an rtla osnoise histogram (min 37, buckets to 30, no max line)
/// and an oslat JSON (min 6165, a histogram from 1 µs, no max). The
/// import repairs the min from the histogram with a note; both draw.
#[test]
fn a_min_above_every_bucket_is_repaired_and_reported() {
    let dir = TempDir::new("import-repaired");
    let formats = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import-formats");
    let read = |f: &str| std::fs::read_to_string(formats.join(f)).unwrap();
    let osnoise: String = read("osnoise-hist.txt")
        .replace("min:          0         0", "min:         37         0")
        .replace("avg:          6         5", "avg:         40         5")
        .lines()
        .filter(|l| !l.starts_with("max:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let oslat = read("oslat.json")
        .replace("\"min\": 1,", "\"min\": 6165,")
        .replace("\"avg\": 1.008961,", "\"avg\": 7000.5,")
        .replace("\"max\": 12293,\n", "");
    for (k, (name, text)) in [("osnoise.txt", osnoise), ("oslat.json", oslat)]
        .into_iter()
        .enumerate()
    {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        let o = import(&dir, &[ps(&p)]);
        assert_code(&o, 0);
        assert!(
            stdout(&o).contains("is taken as the min"),
            "{name}: {}",
            stdout(&o)
        );
        let id = (k + 1).to_string();
        let html = dir.join(&format!("{name}.html"));
        assert_code(&rt_db(&dir, &["report", &id, "-o", ps(&html)]), 0);
        let svg = dir.join(&format!("{name}.svg"));
        let o = rt_db(&dir, &["plot", "--kind", "exceedance", &id, "-o", ps(&svg)]);
        assert_code(&o, 0);
        assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    }
}

/// `import --host NAME` records the board the runs were measured on, so
/// `runs --host NAME` finds them (it was refused); a run whose host is
/// unknown (the file names none, no --host) is found as `unknown`, the
/// name every list shows for it; a file that names another host keeps
/// that name in a note; a name a record cannot keep is refused.
#[test]
fn an_import_is_given_a_host_and_an_unknown_one_is_found_as_unknown() {
    let dir = TempDir::new("import-host");
    let evl = fixture("evl-latmus.txt");
    let o = import(&dir, &["--host", "pi", evl.to_str().unwrap()]);
    assert_code(&o, 0);
    assert_eq!(export(&dir, "1").fingerprint.hostname, "pi");
    let listed = stdout(&rt(&dir, &["runs", "--host", "pi"], 0));
    assert_eq!(listed.lines().count(), 2, "{listed}");

    let xeno = fixture("xenomai-latency.txt");
    assert_code(&import(&dir, &[xeno.to_str().unwrap()]), 0);
    assert_eq!(export(&dir, "2").fingerprint.hostname, "");
    let listed = stdout(&rt(&dir, &["runs", "--host", "unknown"], 0));
    assert_eq!(listed.lines().count(), 2, "{listed}");
    assert!(
        listed
            .lines()
            .nth(1)
            .unwrap()
            .trim_start()
            .starts_with("2 ")
    );

    // The JSON says it ran on rpi4.
    let json = fixture("cyclictest-2.x-ns.json");
    let o = import(&dir, &["--host", "board-7", json.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("the file says it ran on host 'rpi4': recorded as host 'board-7'"),
        "{}",
        stdout(&o)
    );

    for bad in ["", "a\tb", &"x".repeat(300)] {
        let o = import(&dir, &["--host", bad, xeno.to_str().unwrap()]);
        assert_code(&o, 2);
    }
    assert_eq!(count_runs(&dir), 3);
}

/// A file whose content is stored already is skipped, and `--dry-run`
/// says so too (it said "would import"); what this import gives that the
/// stored run does not hold (another --interval, --host) is said on
/// stderr with the way to apply it, in both.
#[test]
fn a_reimport_is_skipped_as_the_dry_run_says_and_what_differs_is_said() {
    let dir = TempDir::new("import-again");
    let hist = fixture("cyclictest-2.7-hist.txt");
    let h = hist.to_str().unwrap();
    let o = import(&dir, &["--dry-run", h, h]);
    assert_code(&o, 0);
    assert!(stdout(&o).starts_with("would import "), "{}", stdout(&o));
    assert!(
        stdout(&o).contains(": same content as a file above"),
        "{}",
        stdout(&o)
    );
    assert!(!db(&dir).exists(), "a dry run makes no store");
    assert_code(&import(&dir, &[h]), 0);
    for dry in [true, false] {
        let mut args = vec!["--interval", "1ms", "--host", "pi", h];
        if dry {
            args.insert(0, "--dry-run");
        }
        let o = import(&dir, &args);
        assert_code(&o, 0);
        let verb = if dry { "would skip" } else { "skipped" };
        assert_eq!(
            stdout(&o).trim(),
            format!("{verb} {h}: already stored as run 1 (same content)")
        );
        let err = stderr(&o);
        assert!(
            err.contains("is not imported again: run 1 holds its content, and its interval is unknown, not 1ms, its host is 'unknown', not 'pi'"),
            "{err}"
        );
        assert!(
            err.contains("rtscope runs rm 1, then import it again"),
            "{err}"
        );
    }
    // The same again: nothing differs, nothing on stderr.
    let o = import(&dir, &["--dry-run", h]);
    assert!(stdout(&o).starts_with("would skip "), "{}", stdout(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(count_runs(&dir), 1);
}

/// A file that does not say when its run ran has an unknown start: the
/// list, `runs show` and the report say "unknown", and the file's
/// modification time is only named in a note (it was shown as the run's
/// start).
#[test]
fn an_import_without_a_date_has_an_unknown_start() {
    let dir = TempDir::new("import-undated");
    let hist = fixture("cyclictest-2.7-hist.txt");
    let o = import(&dir, &[hist.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("note: the source does not say when it ran: its start is unknown (the file was last modified "),
        "{}",
        stdout(&o)
    );
    let rec = export(&dir, "1");
    assert_eq!(rec.started_at_unix_ns, 0);
    assert_eq!(rec.ended_at_unix_ns, None);
    let list = stdout(&rt(&dir, &["runs"], 0));
    let row = list.lines().nth(1).unwrap();
    assert!(row.contains("imported  unknown"), "{list}");
    let show = stdout(&rt(&dir, &["runs", "show", "1"], 0));
    assert!(show.contains("started:     unknown"), "{show}");
    let html = dir.join("r.html");
    rt(&dir, &["report", "1", "-o", html.to_str().unwrap()], 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("1970-01-01"), "the report shows 1970");
    assert!(page.contains("<dt>started</dt><dd>unknown</dd>"));
    // Its host too, by the name that finds it (runs --host unknown).
    assert!(
        page.contains("<dt>host</dt><dd>unknown</dd>"),
        "the host shown as -"
    );
}
