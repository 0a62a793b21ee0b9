//! `rtscope tune` and `measure --isolate` for real, on this machine
//! (cgroup-v1 cpusets work; some IRQ affinity writes are refused). Every
//! test snapshots each value tune may touch, and checks it is the same,
//! byte for byte, after the revert: also after a SIGKILL in the middle of
//! applying and in the middle of an isolated run. These tests change the
//! system: each holds `exclusive_system()` and uses its own journal
//! directory, and a guard reverts whatever is left if a test fails.
//! `cgroup_v2` runs the same on cgroup v2 with these helpers.

use crate::util::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub(crate) const CPUSET: &str = "/sys/fs/cgroup/cpuset";

/// The cgroup-v2 hierarchy of this machine (it holds the cpuset
/// controller while `cgroup_v2`'s tests have moved it there).
pub(crate) const UNIFIED: &str = "/sys/fs/cgroup/unified";

/// Where the cpuset controller is now: the v1 mount, or else the v2 one.
pub(crate) fn cpuset_root() -> &'static str {
    let v1 = read("/proc/self/mounts")
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(CPUSET));
    if v1 { CPUSET } else { UNIFIED }
}

/// A test's own tuning state directory; reverts on drop.
pub(crate) struct Tuner {
    pub(crate) dir: TempDir,
}

impl Tuner {
    pub(crate) fn new(name: &str) -> Tuner {
        Tuner {
            dir: TempDir::new(name),
        }
    }

    pub(crate) fn state(&self) -> PathBuf {
        self.dir.join("state")
    }

    pub(crate) fn journal(&self) -> PathBuf {
        self.state().join("tune.journal")
    }

    pub(crate) fn cmd(&self) -> Command {
        let mut c = rtscope(self.dir.path());
        c.env("RTSCOPE_STATE_DIR", self.state());
        c
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    /// A quiet `measure --isolate 1` of 60 s, once its isolation is applied.
    pub(crate) fn isolated_run(&self) -> Kid {
        let c = Kid::new(
            self.cmd()
                .args(["measure", "--isolate", "1", "-D", "60s", "-q"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let journal = self.journal();
        wait_for("the isolation to be applied", 20, || {
            read(journal.to_str().unwrap()).contains("\"t\":\"applied\"")
        });
        c
    }
}

impl Drop for Tuner {
    fn drop(&mut self) {
        if self.journal().exists() {
            let _ = self.run(&["tune", "--revert"]);
        }
    }
}

pub(crate) fn read(p: &str) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| format!("<{e}>"))
}

fn glob(dir: &str, file: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| format!("{}/{file}", e.path().display()))
                .filter(|p| Path::new(p).exists())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Start time and kernel-thread flag from /proc/PID/stat.
fn stat_of(pid: &str) -> Option<(u64, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest: Vec<&str> = s[s.rfind(')')? + 1..].split_whitespace().collect();
    Some((rest.get(19)?.parse().ok()?, rest.get(6)?.parse().ok()?))
}

pub(crate) fn cpus_allowed(pid: u32) -> String {
    read(&format!("/proc/{pid}/status"))
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap_or("")
        .trim()
        .to_string()
}

pub(crate) fn cpuset_of(pid: u32) -> String {
    read(&format!("/proc/{pid}/cpuset")).trim().to_string()
}

/// Every value tune may touch. Tasks: kernel threads and the `watch`ed
/// processes (their cpuset and CPU affinity), keyed by pid and start
/// time; other processes belong to other tests and change on their own.
/// The cpuset files are those of the hierarchy that has the controller
/// now (v1, or v2 while `cgroup_v2`'s tests run).
pub(crate) fn snapshot(watch: &[u32]) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let root = cpuset_root();
    let root_files: &[&str] = if root == CPUSET {
        &[
            "cpuset.cpus",
            "cpuset.mems",
            "cpuset.sched_load_balance",
            "cpuset.cpu_exclusive",
        ]
    } else {
        &[
            "cgroup.subtree_control",
            "cpuset.cpus.effective",
            "cpuset.cpus.isolated",
            "cpuset.mems.effective",
        ]
    };
    let mut files = vec![
        "/proc/sys/kernel/timer_migration".to_string(),
        "/proc/sys/kernel/sched_rt_runtime_us".into(),
        "/proc/sys/kernel/sched_rt_period_us".into(),
        "/sys/kernel/mm/transparent_hugepage/enabled".into(),
        "/sys/kernel/mm/transparent_hugepage/defrag".into(),
        "/sys/devices/virtual/workqueue/cpumask".into(),
        "/proc/irq/default_smp_affinity".into(),
    ];
    files.extend(root_files.iter().map(|f| format!("{root}/{f}")));
    files.extend(glob("/proc/irq", "smp_affinity_list"));
    for cpu in glob("/sys/devices/system/cpu", "cpufreq/scaling_governor") {
        files.push(cpu);
    }
    for d in glob("/sys/devices/system/cpu", "cpuidle") {
        files.extend(glob(&d, "disable"));
    }
    for f in files {
        m.insert(f.clone(), read(&f));
    }
    let sets: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("rtscope-load-"))
        .collect();
    m.insert("cpusets".into(), {
        let mut s = sets;
        s.sort();
        s.join(",")
    });
    for e in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        let Some((start, flags)) = stat_of(&name) else {
            continue;
        };
        let kthread = flags & 0x0020_0000 != 0;
        if kthread || watch.contains(&pid) {
            m.insert(
                format!("task {pid}@{start}"),
                format!("{} {}", cpuset_of(pid), cpus_allowed(pid)),
            );
        }
    }
    m
}

/// Compare snapshots: every setting identically, tasks present in both.
#[track_caller]
pub(crate) fn assert_same(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) {
    let mut diffs = Vec::new();
    for (k, v) in before {
        match after.get(k) {
            Some(w) if w != v => diffs.push(format!("{k}: {v:?} -> {w:?}")),
            None if !k.starts_with("task ") => diffs.push(format!("{k}: gone")),
            _ => {}
        }
    }
    for k in after.keys() {
        if !k.starts_with("task ") && !before.contains_key(k) {
            diffs.push(format!("{k}: new"));
        }
    }
    assert!(diffs.is_empty(), "not restored:\n{}", diffs.join("\n"));
    let common = before
        .keys()
        .filter(|k| k.starts_with("task ") && after.contains_key(*k))
        .count();
    assert!(common > 10, "too few tasks compared ({common})");
}

/// A child process, killed when dropped (also when an assertion fails,
/// so that a paused or running rtscope never outlives its test).
pub(crate) struct Kid(Option<Child>);

impl Kid {
    pub(crate) fn new(c: Child) -> Kid {
        Kid(Some(c))
    }

    pub(crate) fn id(&self) -> u32 {
        self.0.as_ref().unwrap().id()
    }

    /// SIGKILL and reap.
    pub(crate) fn sigkill(&mut self) {
        let c = self.0.as_mut().unwrap();
        c.kill().unwrap();
        c.wait().unwrap();
    }

    /// SIGTERM, then wait for the output.
    pub(crate) fn sigterm_and_wait(mut self) -> Output {
        let c = self.0.take().unwrap();
        assert!(
            Command::new("kill")
                .args(["-TERM", &c.id().to_string()])
                .status()
                .unwrap()
                .success()
        );
        c.wait_with_output().unwrap()
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A process busy on whatever CPU it may use.
pub(crate) fn busy() -> Kid {
    Kid::new(
        Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap(),
    )
}

/// A process pinned to CPU 1 by its own affinity.
pub(crate) fn pinned() -> Kid {
    Kid::new(
        Command::new("taskset")
            .args(["-c", "1", "sleep", "300"])
            .spawn()
            .unwrap(),
    )
}

/// A stand-in irqbalance (a copy of sleep named irqbalance).
pub(crate) fn fake_irqbalance(dir: &TempDir) -> Kid {
    let exe = dir.join("irqbalance");
    std::fs::copy("/bin/sleep", &exe).unwrap();
    Kid::new(Command::new(exe).arg("300").spawn().unwrap())
}

pub(crate) fn state_of(pid: u32) -> char {
    let s = read(&format!("/proc/{pid}/stat"));
    s[s.rfind(')').unwrap() + 2..].chars().next().unwrap()
}

/// The CPU a task last ran on (field 39 of /proc/PID/stat).
pub(crate) fn last_cpu(pid: u32) -> u32 {
    let s = read(&format!("/proc/{pid}/stat"));
    let rest: Vec<&str> = s[s.rfind(')').unwrap() + 1..].split_whitespace().collect();
    rest[39 - 3].parse().unwrap()
}

pub(crate) fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(
            t.elapsed() < Duration::from_secs(secs),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn isolate_moves_tasks_off_the_cpu_and_revert_restores_every_value() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let t = Tuner::new("tune-iso");
    let b = busy();
    let p = pinned();
    let irqb = fake_irqbalance(&t.dir);
    std::thread::sleep(Duration::from_millis(100));
    let watch = [b.id(), p.id(), irqb.id()];
    let before = snapshot(&watch);
    assert_eq!(cpus_allowed(b.id()), "0-1");

    let o = t.run(&[
        "tune",
        "isolate",
        "1",
        "--no-rt-throttling",
        "--hold-dma-latency",
    ]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(
        out.contains("Undo with: sudo rtscope tune --revert"),
        "{out}"
    );
    // Every IRQ the system refused to move is listed, not fatal.
    for line in out.lines().filter(|l| l.contains("REFUSED")) {
        assert!(
            line.contains("/proc/irq/"),
            "only IRQs may refuse here: {line}"
        );
    }
    // The tasks really left CPU 1.
    assert_eq!(cpus_allowed(b.id()), "0");
    assert_eq!(cpus_allowed(p.id()), "0");
    assert_eq!(cpuset_of(b.id()), "/rtscope-system");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(last_cpu(b.id()), 0, "the busy process still runs on CPU 1");
    assert_eq!(
        read(&format!("{CPUSET}/rtscope-rt/cpuset.cpus")).trim(),
        "1"
    );
    assert_eq!(state_of(irqb.id()), 'T', "irqbalance is paused");
    assert_eq!(read("/proc/sys/kernel/timer_migration").trim(), "0");
    assert_eq!(read("/proc/sys/kernel/sched_rt_runtime_us").trim(), "-1");
    let holder: u32 = out
        .split("held at 0 µs by pid ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no cpu_dma_latency holder: {out}"));
    assert!(read(&format!("/proc/{holder}/cmdline")).contains("hold-dma-latency"));

    let s = t.run(&["tune", "--status"]);
    assert_code(&s, 0);
    assert!(
        stdout(&s).contains("rtscope tuning: applied"),
        "{}",
        stdout(&s)
    );
    assert_retune_refused_and_measure_joins(&t);
    // The main thread of a joined run goes to the housekeeping CPUs:
    // --main-affinity is refused before anything is measured.
    let ma = t.run(&["measure", "-D", "300ms", "-q", "--main-affinity", "0"]);
    assert_code(&ma, 2);
    assert!(
        stderr(&ma).contains("--main-affinity cannot be used"),
        "{}",
        stderr(&ma)
    );

    let rv = t.run(&["tune", "--revert"]);
    assert_code(&rv, 0);
    assert!(!t.journal().exists());
    let after = snapshot(&watch);
    assert_eq!(cpus_allowed(b.id()), "0-1");
    assert_eq!(
        cpus_allowed(p.id()),
        "1",
        "the pinned process keeps its own affinity"
    );
    assert_eq!(state_of(irqb.id()), 'S', "irqbalance resumed");
    assert!(
        !read(&format!("/proc/{holder}/cmdline")).contains("hold-dma-latency"),
        "the cpu_dma_latency holder was ended"
    );
    assert_same(&before, &after);
    // Revert is idempotent.
    let rv2 = t.run(&["tune", "--revert"]);
    assert_code(&rv2, 0);
    assert!(
        stdout(&rv2).contains("nothing to revert"),
        "{}",
        stdout(&rv2)
    );
}

#[test]
fn dry_run_changes_nothing_and_writes_no_journal() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let t = Tuner::new("tune-dry");
    let before = snapshot(&[]);
    let o = t.run(&["tune", "isolate", "1", "--no-rt-throttling", "--dry-run"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("dry run, nothing is changed"), "{out}");
    assert!(
        out.contains("rtscope-rt: absent -> cpus=1  [would change]"),
        "{out}"
    );
    assert!(out.contains("rt-throttling"), "{out}");
    let j = t.run(&["tune", "isolate", "1", "--dry-run", "--json"]);
    assert_code(&j, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout(&j)).unwrap();
    assert_eq!(v["isolated_cpus"], "1");
    assert!(
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["outcome"]["status"] == "planned")
    );
    assert!(!t.state().exists(), "a dry run creates no state");
    assert_same(&before, &snapshot(&[]));
}

#[test]
fn refuses_what_would_hurt() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let t = Tuner::new("tune-refuse");
    let before = snapshot(&[]);
    for (args, msg) in [
        (vec!["tune", "isolate", "0-1"], "no housekeeping CPU"),
        (vec!["tune", "isolate", "7"], "not online"),
        (
            vec!["tune", "isolate", "1", "--housekeeping", "1"],
            "overlaps",
        ),
        (
            vec!["tune", "isolate", "1", "--skip", "bogus"],
            "unknown setting 'bogus'",
        ),
        (
            vec!["measure", "--isolate", "0-1", "-D", "1s"],
            "no housekeeping CPU",
        ),
        (
            vec!["measure", "--isolate", "1", "-a", "0", "-D", "1s"],
            "does not isolate",
        ),
        (
            vec!["measure", "--isolate", "1", "-p", "200", "-D", "1s"],
            "out of range",
        ),
        (
            vec![
                "measure",
                "--isolate",
                "1",
                "-D",
                "1s",
                "--json",
                "/nonexistent/r.json",
            ],
            "does not exist",
        ),
    ] {
        let o = t.run(&args);
        assert_code(&o, 2);
        let e = stderr(&o);
        assert!(e.contains(msg), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
    }
    // Not root: a clear message.
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(bin())
        .args(["tune", "isolate", "1"])
        .env("RTSCOPE_STATE_DIR", t.state())
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(stderr(&o).contains("needs root"), "{}", stderr(&o));
    assert!(!t.journal().exists());
    assert_same(&before, &snapshot(&[]));
}

#[test]
fn sigkill_mid_apply_is_announced_and_reverted() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let t = Tuner::new("tune-kill-apply");
    let b = busy();
    std::thread::sleep(Duration::from_millis(50));
    let before = snapshot(&[b.id()]);
    let mut c = Kid::new(
        t.cmd()
            .args(["tune", "isolate", "1"])
            .env("RTSCOPE_TUNE_TEST_PAUSE_AFTER", "4")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let journal = t.journal();
    wait_for("4 journaled changes", 20, || {
        read(journal.to_str().unwrap())
            .matches("\"t\":\"result\"")
            .count()
            >= 4
    });
    assert_eq!(
        cpus_allowed(b.id()),
        "0",
        "tasks were moved before the kill"
    );
    c.sigkill();
    // The next rtscope command, whatever it is, warns.
    let d = t.run(&["doctor", "--cpus", "1"]);
    assert_code(&d, 0);
    let e = stderr(&d);
    assert!(
        e.contains("ended without undoing its tuning of CPUs 1")
            && e.contains("rtscope tune --revert"),
        "{e}"
    );
    assert!(stdout(&d).contains("left behind by pid"), "{}", stdout(&d));
    let s = t.run(&["tune", "--status"]);
    assert!(stdout(&s).contains("ABANDONED"), "{}", stdout(&s));
    assert_code(&t.run(&["tune", "--revert"]), 0);
    assert_code(&t.run(&["tune", "--revert"]), 0);
    assert!(!t.journal().exists());
    assert_eq!(cpus_allowed(b.id()), "0-1");
    assert_same(&before, &snapshot(&[b.id()]));
}

#[test]
fn sigkill_mid_isolated_run_is_reverted_by_tune_revert() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let t = Tuner::new("tune-kill-run");
    let b = busy();
    std::thread::sleep(Duration::from_millis(50));
    let before = snapshot(&[b.id()]);
    let mut c = t.isolated_run();
    // Its measuring thread runs in rtscope-rt (the control thread goes
    // back to the housekeeping CPUs once the threads run).
    wait_for("a measuring thread in rtscope-rt", 10, || {
        std::fs::read_dir(format!("/proc/{}/task", c.id()))
            .map(|rd| {
                rd.filter_map(|e| e.ok()).any(|e| {
                    read(&format!("{}/cpuset", e.path().display())).trim() == "/rtscope-rt"
                })
            })
            .unwrap_or(false)
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(cpus_allowed(b.id()), "0");
    c.sigkill();
    let s = t.run(&["tune", "--status"]);
    assert!(stdout(&s).contains("ABANDONED"), "{}", stdout(&s));
    let e = stderr(&t.run(&["schema"]));
    assert!(e.contains("ended without undoing"), "{e}");
    let rv = t.run(&["tune", "--revert"]);
    assert_code(&rv, 0);
    assert_eq!(cpus_allowed(b.id()), "0-1");
    assert_same(&before, &snapshot(&[b.id()]));
}

#[test]
fn sigterm_ends_an_isolated_run_cleanly_and_reverts() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let t = Tuner::new("tune-term");
    let before = snapshot(&[]);
    let json = t.dir.join("run.json");
    let c = Kid::new(
        t.cmd()
            .args([
                "measure",
                "--isolate",
                "1",
                "-D",
                "60s",
                "-q",
                "--json",
                json.to_str().unwrap(),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let journal = t.journal();
    wait_for("the isolation to be applied", 20, || {
        read(journal.to_str().unwrap()).contains("\"t\":\"applied\"")
    });
    std::thread::sleep(Duration::from_millis(700));
    // The measuring thread runs in rtscope-rt, the control thread went
    // back to the housekeeping CPUs.
    let threads: Vec<String> = std::fs::read_dir(format!("/proc/{}/task", c.id()))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| {
            read(&format!("{}/cpuset", e.path().display()))
                .trim()
                .to_string()
        })
        .collect();
    assert_eq!(cpuset_of(c.id()), "/rtscope-system", "{threads:?}");
    assert!(threads.iter().any(|t| t == "/rtscope-rt"), "{threads:?}");
    let o = c.sigterm_and_wait();
    assert_code(&o, 0);
    let e = stderr(&o);
    assert!(e.contains("isolated CPUs 1 for this run"), "{e}");
    assert!(e.contains("isolation of CPUs 1 undone"), "{e}");
    assert!(
        !t.journal().exists(),
        "the journal is removed after the revert"
    );
    let r = read_json(&json);
    assert_eq!(r["end_reason"], "signal");
    assert_eq!(
        r["threads"].as_array().unwrap().len(),
        1,
        "one thread per isolated CPU"
    );
    assert_eq!(r["threads"][0]["cpu"], 1);
    let tuning = &r["fingerprint"]["tuning"];
    assert_eq!(tuning["mode"], "run");
    assert_eq!(tuning["isolated_cpus"], "1");
    assert_eq!(tuning["housekeeping_cpus"], "0");
    let settings: Vec<&str> = tuning["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        settings.contains(&"cpuset") && settings.contains(&"tasks"),
        "{settings:?}"
    );
    assert_same(&before, &snapshot(&[]));
}

/// Samples of a run's only thread at or above `ns`, from its histogram.
fn samples_above(r: &serde_json::Value, ns: u64) -> u64 {
    r["threads"][0]["histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b[0].as_u64().unwrap() >= ns)
        .map(|b| b[1].as_u64().unwrap())
        .sum()
}

/// The seeds' Table 10 on this machine: a SCHED_FIFO hog (20 ms busy every
/// 100 ms) on CPU 1 blocks a priority-50 measuring thread there, unless
/// CPU 1 is isolated.
#[test]
fn isolation_frees_the_measured_cpu_from_a_realtime_hog() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let t = Tuner::new("tune-proof");
    let _hog = Hog::start(1);
    let plain = t.dir.join("plain.json");
    let isolated = t.dir.join("isolated.json");
    let measure = |place: [&str; 2], json: &Path| {
        let mut args = vec!["measure", place[0], place[1]];
        args.extend(["-t", "1", "-p", "50", "-D", "2s", "-q", "--json"]);
        args.push(json.to_str().unwrap());
        t.run(&args)
    };
    // The VM itself stalls for a few ms at times (and other engineers'
    // tests may disturb CPU 1 meanwhile): up to three tries.
    let mut tries = Vec::new();
    for _ in 0..3 {
        let o = measure(["-a", "1"], &plain);
        assert_code(&o, 0);
        let o2 = measure(["--isolate", "1"], &isolated);
        assert_code(&o2, 0);
        let (a, b) = (read_json(&plain), read_json(&isolated));
        assert_eq!(b["threads"][0]["cpu"], 1);
        assert!(a["fingerprint"].get("tuning").is_none());
        assert_eq!(b["fingerprint"]["tuning"]["mode"], "run");
        // A 20 ms block shows as samples of 15 ms and more (the late
        // wake-up and the periods it missed).
        let blocked = samples_above(&a, 15_000_000);
        let blocked_iso = samples_above(&b, 15_000_000);
        let missed = a["threads"][0]["stats"]["missed_periods"].as_u64().unwrap();
        assert!(
            blocked >= 10 && missed >= 10,
            "the hog was not seen without isolation: {blocked} samples >= 15 ms, {missed} missed"
        );
        eprintln!(
            "proof: max {} ns / {} samples >= 15 ms without isolation; max {} ns / {} isolated",
            a["threads"][0]["stats"]["max_ns"],
            blocked,
            b["threads"][0]["stats"]["max_ns"],
            blocked_iso
        );
        tries.push((blocked, blocked_iso));
        if blocked_iso * 5 <= blocked {
            break;
        }
    }
    let (blocked, blocked_iso) = *tries.last().unwrap();
    assert!(
        blocked_iso * 5 <= blocked,
        "isolation did not remove the hog (samples >= 15 ms, not isolated vs isolated): {tries:?}"
    );
}

#[test]
fn second_concurrent_tune_is_refused_while_a_run_holds_the_isolation() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let t = Tuner::new("tune-busy");
    let c = t.isolated_run();
    let o = t.run(&["tune", "isolate", "1"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("another rtscope is tuning"),
        "{}",
        stderr(&o)
    );
    let r = t.run(&["tune", "--revert"]);
    assert_code(&r, 2);
    assert!(
        stderr(&r).contains("holds the tuning lock"),
        "{}",
        stderr(&r)
    );
    let s = t.run(&["tune", "--status"]);
    assert!(
        stdout(&s).contains("in use by a running rtscope"),
        "{}",
        stdout(&s)
    );
    assert!(
        stderr(&s).is_empty(),
        "no crash warning while the owner lives: {}",
        stderr(&s)
    );
    // Stop it once it measures (a SIGTERM during its set-up would end it
    // with "stopped before measuring began", exit 2).
    let pid = c.id();
    wait_for("the measuring thread", 30, || has_fifo_thread(pid));
    let o = c.sigterm_and_wait();
    assert_code(&o, 0);
    assert!(!t.journal().exists());
}

/// Whether a thread of `pid` runs SCHED_FIFO (field 41 of its stat).
fn has_fifo_thread(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.flatten().any(|e| {
                let s = read(&format!("{}/stat", e.path().display()));
                s.rfind(')')
                    .and_then(|i| s[i + 1..].split_whitespace().nth(38).map(|p| p == "1"))
                    .unwrap_or(false)
            })
        })
        .unwrap_or(false)
}

/// With CPU 1 isolated by `tune isolate 1`: a second tuning is refused
/// and changes nothing, and a `measure` joins the isolation on CPU 1
/// (although its parent is not in the isolated cpuset).
#[track_caller]
pub(crate) fn assert_retune_refused_and_measure_joins(t: &Tuner) {
    let again = t.run(&["tune", "isolate", "1"]);
    assert_code(&again, 2);
    assert!(
        stderr(&again).contains("already in force"),
        "{}",
        stderr(&again)
    );
    let json = t.dir.join("joined.json");
    let m = t.run(&[
        "measure",
        "-D",
        "300ms",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_code(&m, 0);
    let r = read_json(&json);
    assert_eq!(r["threads"].as_array().unwrap().len(), 1);
    assert_eq!(r["threads"][0]["cpu"], 1);
    assert_eq!(r["fingerprint"]["tuning"]["mode"], "persistent");
    assert_eq!(r["fingerprint"]["tuning"]["isolated_cpus"], "1");
    // Named with -a, the isolated CPU is accepted although this process
    // is kept off it until it joins (it was refused as "not allowed").
    let named = t.dir.join("joined-a.json");
    let m = t.run(
        &["measure", "-a", "1", "-D", "300ms", "-q", "--json"]
            .into_iter()
            .chain([named.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    assert_code(&m, 0);
    assert_eq!(read_json(&named)["threads"][0]["cpu"], 1);
}
