//! `rtscope measure` run for real: counts, ordering, formats, signals,
//! exit codes, every refusal, the ground truth of a known disturbance, and
//! the hot path's syscalls.

use crate::util::*;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn wait_timeout(child: &mut Child, limit: Duration) -> std::process::Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("rtscope did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut out = Vec::new();
    let mut err = Vec::new();
    child.stdout.take().map(|mut s| s.read_to_end(&mut out));
    child.stderr.take().map(|mut s| s.read_to_end(&mut err));
    std::process::Output {
        status: child.wait().unwrap(),
        stdout: out,
        stderr: err,
    }
}

fn run_measure(dir: &TempDir, args: &[&str]) -> std::process::Output {
    let mut child = rtscope(dir.path())
        .arg("measure")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_timeout(&mut child, Duration::from_secs(60))
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

#[test]
fn a_short_run_counts_orders_and_validates() {
    let _g = shared_system();
    let dir = TempDir::new("basic");
    let json = dir.join("run.json");
    let hist = dir.join("run.hist");
    let o = run_measure(
        &dir,
        &[
            "-D",
            "2",
            "-i",
            "1ms",
            "--json",
            json.to_str().unwrap(),
            "--histfile",
            hist.to_str().unwrap(),
            "-h",
            "200",
        ],
    );
    assert_code(&o, 0);
    let r = read_json(&json);
    assert_eq!(r["schema"], "rtscope.run");
    assert_eq!(r["end_reason"], "duration");
    assert_eq!(r["status"], "complete");
    let threads = r["threads"].as_array().unwrap();
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert_eq!(threads.len(), cpus, "one thread per allowed CPU");
    for t in threads {
        let s = &t["stats"];
        let samples = u(&s["samples"]);
        // 2 s at 1 ms: 2000 periods, each one a sample or a missed period
        // (a wake-up late by more than a period, as when another test's
        // FIFO thread holds the CPU; loosely: start and end fall on period
        // boundaries).
        let missed = u(&s["missed_periods"]);
        assert!(
            (1990..=2010).contains(&(samples + missed)),
            "samples {samples} + missed periods {missed}"
        );
        assert!(u(&s["wakeups"]) + u(&s["missed_periods"]) >= samples);
        let (min, p50, p99, max) = (
            u(&s["min_ns"]),
            u(&s["p50_ns"]),
            u(&s["p99_ns"]),
            u(&s["max_ns"]),
        );
        assert!(
            min <= p50 && p50 <= p99 && p99 <= max,
            "{min} {p50} {p99} {max}"
        );
        let hist_total: u64 = t["histogram"]["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| u(&b[1]))
            .sum();
        assert_eq!(hist_total, samples);
        let windows: u64 = t["windows"]["count"]
            .as_array()
            .unwrap()
            .iter()
            .map(u)
            .sum();
        assert_eq!(windows, samples, "window series covers every sample");
        assert!(u(&s["max_at"]["cycle"]) < samples);
    }
    assert!(r["fingerprint"]["kernel_release"].as_str().unwrap().len() > 1);
    assert_eq!(u(&r["options"]["interval_ns"]), 1_000_000);

    // The record validates against the published schema.
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../docs/run-record.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&r).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");

    // The histfile is cyclictest's format, and agrees with the record.
    let text = std::fs::read_to_string(&hist).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "# Histogram");
    let rows: Vec<&str> = lines
        .iter()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .copied()
        .collect();
    assert_eq!(rows.len(), 200);
    let mut per_thread = vec![0u64; cpus];
    for (i, row) in rows.iter().enumerate() {
        let cols: Vec<&str> = row.split([' ', '\t']).collect();
        assert_eq!(cols[0], format!("{i:06}"));
        for j in 0..cpus {
            per_thread[j] += cols[1 + j].parse::<u64>().unwrap();
        }
    }
    let total = lines.iter().find(|l| l.starts_with("# Total:")).unwrap();
    let overflows = lines
        .iter()
        .find(|l| l.starts_with("# Histogram Overflows:"))
        .unwrap();
    let nums = |l: &str| {
        l.split(':')
            .nth(1)
            .unwrap()
            .split_whitespace()
            .map(|n| n.parse::<u64>().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(nums(total), per_thread);
    for (j, t) in threads.iter().enumerate() {
        assert_eq!(
            nums(total)[j] + nums(overflows)[j],
            u(&t["stats"]["samples"])
        );
    }
    assert!(lines.iter().any(|l| l.starts_with("# Max Latencies:")));
    assert!(lines.contains(&"# Histogram Overflow at cycle number:"));
}

#[test]
fn published_schema_is_current() {
    let dir = TempDir::new("schema");
    let o = rtscope(dir.path()).arg("schema").output().unwrap();
    assert_code(&o, 0);
    assert_eq!(
        stdout(&o),
        include_str!("../../docs/run-record.schema.json"),
        "docs/run-record.schema.json is stale: run `rtscope schema > docs/run-record.schema.json`"
    );
}

#[test]
fn cyclictest_flags_work() {
    let _g = shared_system();
    let dir = TempDir::new("compat");
    let o = run_measure(
        &dir,
        &[
            "-m",
            "-p99",
            "-t",
            "-a",
            "-i",
            "1000",
            "-q",
            "-h",
            "400",
            "-D",
            "1",
            "-n",
            "--policy",
            "fifo",
            "-d",
            "0",
            "--latency",
            "0",
        ],
    );
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.starts_with("# Histogram\n000000 "), "{out}");
    assert_eq!(
        out.lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .count(),
        400
    );
    // The summary goes to stderr when the histogram takes stdout.
    assert!(stderr(&o).contains("p99.99"));
}

#[test]
fn loops_priospread_and_distance() {
    let _g = shared_system();
    let dir = TempDir::new("loops");
    let json = dir.join("l.json");
    let o = run_measure(
        &dir,
        &[
            "-t",
            "2",
            "-a",
            "0",
            "-l",
            "300",
            "-i",
            "500us",
            "-d",
            "250us",
            "-p",
            "80",
            "--priospread",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_code(&o, 0);
    let r = read_json(&json);
    assert_eq!(r["end_reason"], "loops");
    let t = r["threads"].as_array().unwrap();
    assert_eq!(u(&t[0]["stats"]["wakeups"]), 300);
    assert_eq!(u(&t[1]["stats"]["wakeups"]), 300);
    assert_eq!(
        (t[0]["priority"].as_i64(), t[1]["priority"].as_i64()),
        (Some(80), Some(79))
    );
    assert_eq!(
        (u(&t[0]["interval_ns"]), u(&t[1]["interval_ns"])),
        (500_000, 750_000)
    );
    assert_eq!(
        (t[0]["cpu"].as_u64(), t[1]["cpu"].as_u64()),
        (Some(0), Some(0))
    );
}

#[test]
fn max_latency_exceeded_exits_1_after_writing_everything() {
    let _g = shared_system();
    let dir = TempDir::new("limit");
    let json = dir.join("l.json");
    let o = run_measure(
        &dir,
        &[
            "-D",
            "1",
            "-q",
            "--max-latency",
            "1ns",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_code(&o, 1);
    let r = read_json(&json);
    assert_eq!(r["limits"]["exceeded"], true);
    assert_eq!(u(&r["limits"]["max_latency_ns"]), 1);
    assert!(stdout(&o).contains("EXCEEDED"));
    // A generous limit is met: exit 0.
    let o = run_measure(&dir, &["-D", "1", "-q", "--max-latency", "10s"]);
    assert_code(&o, 0);
}

/// `--deadline` is recorded with the run and judged first: a 1 us
/// deadline is always missed; the same run judged by `report` against
/// 1 s (never reached in a 2 s run of 1 ms periods) is met, and the
/// stored record keeps its own deadline.
#[test]
fn a_deadline_is_recorded_and_said_met_or_missed() {
    let _g = shared_system();
    let dir = TempDir::new("deadline");
    let json = dir.join("d.json");
    let o = run_measure(
        &dir,
        &[
            "-D",
            "2s",
            "-i",
            "1ms",
            "-q",
            "--deadline",
            "1us",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_code(&o, 0);
    let r = read_json(&json);
    assert_eq!(u(&r["limits"]["deadline_ns"]), 1_000);
    let out = stdout(&o);
    assert!(out.contains("deadline MISSED (yours, 1 µs): "), "{out}");
    let html = dir.join("d.html");
    let o = rtscope(dir.path())
        .args([
            "report",
            json.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
        ])
        .args(["--deadline", "1s"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Deadline met: none of the"), "met expected");
    assert!(page.contains("(yours, 1 s)"));
    assert!(!page.contains("Deadline missed"));
    // Without --deadline, the report judges the run's own: missed.
    let o = rtscope(dir.path())
        .args([
            "report",
            json.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Deadline missed: "), "missed expected");
    assert!(page.contains("(yours, 1 µs)"));
    // The file was not rewritten by the report's --deadline.
    assert_eq!(u(&read_json(&json)["limits"]["deadline_ns"]), 1_000);
}

#[test]
fn break_threshold_stops_the_run_with_exit_1() {
    let _g = shared_system();
    let dir = TempDir::new("break");
    let json = dir.join("b.json");
    let o = run_measure(
        &dir,
        &[
            "-D",
            "30",
            "-q",
            "-b",
            "1ns",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_code(&o, 1);
    let r = read_json(&json);
    assert_eq!(r["end_reason"], "break_threshold");
    assert!(u(&r["limits"]["break_event"]["latency_ns"]) > 1);
}

#[test]
fn sigint_and_sigterm_end_cleanly_with_results_written() {
    let _g = shared_system();
    for sig in ["-INT", "-TERM"] {
        let dir = TempDir::new("sigint");
        let json = dir.join("s.json");
        let mut child = rtscope(dir.path())
            .args(["measure", "-q", "--json", json.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        // SIGUSR1 prints the summary so far without stopping.
        Command::new("kill")
            .args(["-USR1", &child.id().to_string()])
            .status()
            .unwrap();
        std::thread::sleep(Duration::from_millis(500));
        Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap();
        let o = wait_timeout(&mut child, Duration::from_secs(20));
        assert_code(&o, 0);
        assert!(
            stderr(&o).contains("summary after"),
            "SIGUSR1 summary missing: {}",
            stderr(&o)
        );
        let r = read_json(&json);
        assert_eq!(r["end_reason"], "signal");
        assert!(u(&r["overall"]["samples"]) > 500);
    }
}

#[test]
fn long_interval_stops_promptly_on_sigint() {
    let _g = shared_system();
    let dir = TempDir::new("longint");
    let mut child = rtscope(dir.path())
        .args(["measure", "-q", "-i", "30s", "--window", "30s", "-t", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    // A thread asleep for 30 s is woken: the run ends well before that.
    let o = wait_timeout(&mut child, Duration::from_secs(10));
    assert_code(&o, 0);
}

#[test]
fn omission_correction_can_be_turned_off() {
    let _g = shared_system();
    let dir = TempDir::new("omission");
    let json = dir.join("o.json");
    let o = run_measure(
        &dir,
        &[
            "-D",
            "1",
            "-q",
            "--no-omission-correction",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_code(&o, 0);
    let r = read_json(&json);
    assert_eq!(r["options"]["omission_correction"], false);
    for t in r["threads"].as_array().unwrap() {
        assert_eq!(u(&t["stats"]["samples"]), u(&t["stats"]["wakeups"]));
    }
}

#[test]
fn warmup_is_kept_apart() {
    let _g = shared_system();
    let dir = TempDir::new("warmup");
    let json = dir.join("w.json");
    let o = run_measure(
        &dir,
        &[
            "-D",
            "1",
            "-t",
            "1",
            "-q",
            "--warmup",
            "500ms",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_code(&o, 0);
    let t = &read_json(&json)["threads"][0];
    // The warm-up's periods, woken or missed: a late wake-up that
    // swallows periods counts them as missed, not as samples (the count
    // is a fact, the split between the two is this VM's timing). The
    // statistics' samples include the missed periods (omission
    // correction).
    let periods = u(&t["warmup"]["samples"]) + u(&t["warmup"]["missed_periods"]);
    assert!((495..=505).contains(&periods), "{}", t["warmup"]);
    // After it, every period is woken or missed; the histogram's samples
    // are the wake-ups plus the synthetic values omission correction
    // records for missed periods (none for one whose value would fall
    // under the interval), so they lie between the two.
    let s = &t["stats"];
    let (woken, missed) = (u(&s["wakeups"]), u(&s["missed_periods"]));
    assert!((990..=1010).contains(&(woken + missed)), "{s}");
    assert!((woken..=woken + missed).contains(&u(&s["samples"])), "{s}");
    // The summary says the warm-up is left out; no warning at 500 ms of 1 s.
    assert!(
        stdout(&o).contains("the first 500ms (warm-up) are not in the statistics"),
        "{}",
        stdout(&o)
    );
    assert!(!stderr(&o).contains("--warmup"), "{}", stderr(&o));
    // A warm-up as long as the measurement is warned about.
    let o = run_measure(
        &dir,
        &[
            "-D",
            "300ms",
            "-t",
            "1",
            "-q",
            "--no-save",
            "--warmup",
            "300ms",
        ],
    );
    assert_code(&o, 0);
    assert!(
        stderr(&o).contains("warning: --warmup 300ms is as long as -D 300ms or longer"),
        "{}",
        stderr(&o)
    );
}

fn expect_refusal(args: &[&str], needle: &str) {
    let dir = TempDir::new("bad");
    let o = run_measure(&dir, args);
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains(needle),
        "for {args:?} expected '{needle}' in:\n{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        err.trim().lines().count(),
        1,
        "one-line message expected for {args:?}:\n{err}"
    );
}

#[test]
fn bad_input_is_refused_with_exit_2() {
    expect_refusal(&["-a", "999", "-D", "1"], "allowed CPUs: ");
    expect_refusal(&["-a", "x", "-D", "1"], "not a CPU list");
    expect_refusal(&["-p", "100", "-D", "1"], "priority 100 is out of range");
    expect_refusal(&["-i", "0", "-D", "1"], "below the 10us minimum");
    expect_refusal(&["-i", "5h", "-D", "1"], "above the 1h00m00s maximum");
    expect_refusal(
        &["--timer", "sundial", "-D", "1"],
        "unknown timer 'sundial'",
    );
    expect_refusal(&["--policy", "fast", "-D", "1"], "unknown policy 'fast'");
    expect_refusal(&["-D", "ten"], "not a duration");
    expect_refusal(&["--deadline", "0", "-D", "1"], "deadline '0' is 0");
    expect_refusal(
        &["--deadline", "soon", "-D", "1"],
        "--deadline takes a time",
    );
    expect_refusal(&["-D", "0"], "longer than 0");
    expect_refusal(
        &["--policy", "other", "-p", "5", "-D", "1"],
        "has no priority",
    );
    expect_refusal(&["--timer", "itimer", "-D", "1"], "add -t 1");
    expect_refusal(
        &["-D", "1h", "--json", "/nonexistent-dir/x.json"],
        "does not exist",
    );
    expect_refusal(&["-D", "1h", "--histfile", "/proc/version"], "not writable");
    expect_refusal(&["-D", "1h", "--json", "/tmp"], "is a directory");
    expect_refusal(&["-r", "-x", "-D", "1"], "conflicting timer options");
    expect_refusal(
        &["--dl-runtime", "100", "-D", "1"],
        "--dl-runtime is a SCHED_DEADLINE parameter, but the policy is fifo",
    );
    expect_refusal(
        &["--policy", "other", "--dl-period", "2ms", "-D", "1"],
        "add --policy deadline",
    );
}

/// Numbers from the command line that scale threads or memory are
/// bounded: a message with the value and the limit, exit 2, never a panic
/// (`-t 100000` used to abort on a stack guard page).
#[test]
fn counts_that_scale_threads_or_memory_are_refused_with_exit_2() {
    // The CPUs it may use are read: not while a test isolates one.
    let _system = shared_system();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let limit = (cpus * 64).min(1024);
    expect_refusal(
        &["-t", "100000", "-D", "1"],
        &format!("--threads 100000 is above the limit of {limit} (64 per CPU"),
    );
    expect_refusal(
        &["-t", &(limit + 1).to_string(), "-D", "1"],
        &format!("is above the limit of {limit}"),
    );
    expect_refusal(&["-a", "0", "-t", "65", "-D", "1"], "above the limit of 64");
    expect_refusal(
        &["--warmup", "1000d", "-D", "1"],
        "--warmup 24000h00m00s is above the 24h00m00s maximum",
    );
    expect_refusal(
        &["--window", "2d", "-D", "1"],
        "--window 48h00m00s is above the 24h00m00s maximum",
    );
    expect_refusal(&["-h", "0", "-D", "1"], "(got 0)");
    expect_refusal(&["-h", "10000001", "-D", "1"], "between 1 and 10000000");
    expect_refusal(&["-l", "0", "-D", "1"], "--loops must be at least 1");
    expect_refusal(&["-i", "99999999999999", "-D", "1"], "maximum");
}

/// Run the binary as `nobody` with extra limits (setpriv, prlimit from
/// util-linux).
fn as_nobody(dir: &TempDir, limits: &[&str], args: &[&str]) -> std::process::Output {
    let mut c = Command::new("prlimit");
    c.args(limits)
        .args([
            "setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(bin())
        .arg("measure")
        .args(args)
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.join("data"));
    c.output().unwrap()
}

#[test]
fn privileges_are_checked_before_measuring() {
    if !require_root() {
        return;
    }
    let dir = TempDir::new("priv");
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let o = as_nobody(&dir, &["--rtprio=0"], &["-D", "1", "-q"]);
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("needs root or CAP_SYS_NICE") && err.contains("RLIMIT_RTPRIO is 0"),
        "{err}"
    );
    // mlockall refused: a clear message naming the way out.
    let o = as_nobody(
        &dir,
        &["--memlock=0"],
        &["-D", "1", "-q", "--policy", "other"],
    );
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("mlockall failed") && stderr(&o).contains("--no-mlock"),
        "{}",
        stderr(&o)
    );
    // Without real-time and locking, an unprivileged user can measure.
    let o = as_nobody(
        &dir,
        &["--memlock=0"],
        &[
            "-D",
            "1",
            "-q",
            "--policy",
            "other",
            "--no-mlock",
            "--no-dma-latency",
        ],
    );
    assert_code(&o, 0);
}

#[test]
fn missing_cpu_dma_latency_warns_and_goes_on() {
    let _g = shared_system();
    let dir = TempDir::new("dma");
    let o = rtscope(dir.path())
        .args(["measure", "-D", "1", "-q", "-t", "1"])
        .env("RTSCOPE_CPU_DMA_LATENCY", dir.join("no-such-device"))
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(
        stderr(&o).contains("warning: could not hold"),
        "{}",
        stderr(&o)
    );
}

/// The hog's spell (tests/it/util.rs, `Hog`: 20 ms busy by the clock,
/// every 100 ms, SCHED_FIFO 90).
const HOG_BUSY_NS: u64 = 20_000_000;
/// What the machine may add on its own to a wake-up held off by a spell:
/// over four times the largest stall CI has shown (11.7 ms). A wake-up
/// waits out one spell at most (spells are 80 ms apart), so a maximum
/// above spell + room is no wake-up's lateness (a period, the run's
/// length, a unit off by 1000); a tighter bound would time this VM.
const STALL_ROOM_NS: u64 = 50_000_000;

/// A known disturbance, seen by every timer method: a maximum of about the
/// spell (at least 15 ms, at most the spell plus [`STALL_ROOM_NS`]) and
/// missed periods.
#[test]
fn ground_truth_a_known_disturbance_is_seen_by_every_timer_method() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let hog = Hog::start(1);
    let dir = TempDir::new("truth");
    let mut failures = Vec::new();
    for timer in ["abs", "rel", "nanosleep", "itimer", "posix", "timerfd"] {
        let json = dir.join(&format!("{timer}.json"));
        let o = run_measure(
            &dir,
            &[
                "-a",
                "1",
                "-t",
                "1",
                "-p",
                "50",
                "-D",
                "1500ms",
                "-q",
                "--timer",
                timer,
                "--json",
                json.to_str().unwrap(),
            ],
        );
        assert_code(&o, 0);
        let r = read_json(&json);
        let s = &r["threads"][0]["stats"];
        let (max, missed) = (u(&s["max_ns"]), u(&s["missed_periods"]));
        if !(15_000_000..=HOG_BUSY_NS + STALL_ROOM_NS).contains(&max) || missed == 0 {
            failures.push(format!("{timer}: max {max} ns, missed {missed}"));
        }
        assert_eq!(r["options"]["timer"], timer);
    }
    drop(hog);
    assert!(
        failures.is_empty(),
        "a 20 ms disturbance was not seen as one (max 15 ms to {} ns, periods missed): {failures:?}",
        HOG_BUSY_NS + STALL_ROOM_NS
    );
}

/// Syscall names made by each thread, from `strace -f` output.
fn syscalls_by_thread(trace: &str) -> std::collections::BTreeMap<u32, Vec<String>> {
    let mut by: std::collections::BTreeMap<u32, Vec<String>> = Default::default();
    for line in trace.lines() {
        let mut parts = line.splitn(2, ' ');
        let (Some(pid), Some(rest)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let rest = rest.trim_start();
        let name = if let Some(r) = rest.strip_prefix("<... ") {
            r.split_whitespace().next().unwrap_or("").to_string()
        } else if rest.starts_with("---") || rest.starts_with("+++") {
            continue;
        } else {
            rest.split('(').next().unwrap_or("").to_string()
        };
        if rest.starts_with("<... ") {
            // The resumed half of a call already counted.
            continue;
        }
        by.entry(pid).or_default().push(name);
    }
    by
}

#[test]
fn hot_loop_makes_no_syscall_but_its_timer() {
    if Command::new("strace").arg("-V").output().is_err() {
        panic!("strace is missing: `make test` installs it (scripts/install-deps.sh)");
    }
    let _g = shared_system();
    let dir = TempDir::new("strace");
    for (timer, hot) in [
        ("abs", vec!["clock_nanosleep"]),
        ("rel", vec!["clock_nanosleep"]),
        ("nanosleep", vec!["nanosleep", "clock_nanosleep"]),
        ("itimer", vec!["rt_sigtimedwait"]),
        ("posix", vec!["rt_sigtimedwait"]),
        ("timerfd", vec!["read"]),
    ] {
        let trace = dir.join(&format!("{timer}.trace"));
        let o = Command::new("strace")
            .args(["-f", "-qq", "-o", trace.to_str().unwrap()])
            .arg(bin())
            .args([
                "measure", "-t", "1", "-a", "0", "-D", "1", "-q", "-i", "2ms", "--timer", timer,
            ])
            .env("XDG_DATA_HOME", dir.join("data"))
            .output()
            .unwrap();
        assert_code(&o, 0);
        let text = std::fs::read_to_string(&trace).unwrap();
        let by = syscalls_by_thread(&text);
        // The measuring thread is the one that set a real-time policy.
        let (tid, calls) = by
            .iter()
            .find(|(_, c)| c.iter().any(|n| n == "sched_setscheduler"))
            .unwrap_or_else(|| panic!("no measuring thread in the trace:\n{text}"));
        let first = calls
            .iter()
            .position(|n| hot.contains(&n.as_str()))
            .expect("no timer call");
        let last = calls
            .iter()
            .rposition(|n| hot.contains(&n.as_str()))
            .unwrap();
        let inside: Vec<&String> = calls[first..=last]
            .iter()
            .filter(|n| !hot.contains(&n.as_str()))
            .collect();
        assert!(
            inside.is_empty(),
            "{timer}: thread {tid} made {inside:?} inside its loop"
        );
        assert!(
            last - first > 100,
            "{timer}: only {} timer calls",
            last - first
        );
    }
}

/// Every wake-up above each thread's final threshold is in its table,
/// with its cycle, and `tail` estimates θ from the tables.
#[test]
fn exceedance_times_are_complete_and_give_tail_its_theta() {
    let _g = shared_system();
    let dir = TempDir::new("exceedances");
    let json = dir.join("run.json");
    let o = run_measure(
        &dir,
        &["-D", "3s", "-i", "200us", "--json", json.to_str().unwrap()],
    );
    assert_code(&o, 0);
    let r = read_json(&json);
    for t in r["threads"].as_array().unwrap() {
        let e = &t["exceedances"];
        let threshold = u(&e["threshold_ns"]);
        let cycles: Vec<u64> = e["cycles"].as_array().unwrap().iter().map(u).collect();
        let lat: Vec<u64> = e["latencies_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(u)
            .collect();
        assert_eq!(cycles.len(), lat.len());
        // 15 000 wake-ups: the table (1024) filled and its threshold rose.
        assert!(threshold > 0, "{e}");
        assert!((1..1024).contains(&lat.len()), "{} kept", lat.len());
        assert!(cycles.windows(2).all(|w| w[0] < w[1]), "cycles ascending");
        assert!(lat.iter().all(|&l| l > threshold));
        // Complete: each of the 32 largest wake-ups above the threshold
        // is there, at its cycle; the maximum above all.
        let max = u(&t["stats"]["max_ns"]);
        assert_eq!(lat.iter().copied().max(), Some(max));
        for out in t["outliers"].as_array().unwrap() {
            let (l, c) = (u(&out["latency_ns"]), u(&out["at"]["cycle"]));
            if l > threshold {
                let i = cycles
                    .binary_search(&c)
                    .expect("outlier's cycle in the table");
                assert_eq!(lat[i], l);
            }
        }
    }
    let o = rtscope(dir.path())
        .args(["tail", json.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let theta = crate::truth::theta_from_exceedance_times(&v);
    assert!(theta > 0.0 && theta <= 1.0, "{theta}");
}
