//! `rtscope study` for real: a malformed file is refused before anything
//! runs (file, line and key named); a study killed with SIGKILL in the
//! middle of a run resumes, keeps every finished run once, redoes the one
//! cut short and leaves no isolation, load or trace instance behind; a
//! kernel dimension runs only the running kernel's cells; the report and
//! the --fail-if gates work on the results.

use super::measure_explain::{mounts, our_instances};
use super::tune::{Kid, assert_same, snapshot, wait_for};
use crate::util::*;
use std::process::{Command, Output, Stdio};

/// A study's directory, store and state directory.
struct Lab {
    dir: TempDir,
}

impl Lab {
    fn new(name: &str) -> Lab {
        Lab {
            dir: TempDir::new(name),
        }
    }

    fn cmd(&self) -> Command {
        let mut c = rtscope(self.dir.path());
        c.env("RTSCOPE_DB", self.dir.join("s.db"))
            .env("RTSCOPE_STATE_DIR", self.dir.join("state"))
            .current_dir(self.dir.path());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    fn file(&self, name: &str, text: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    fn status(&self, name: &str) -> serde_json::Value {
        let o = self.run(&["study", "status", name, "--json"]);
        assert_code(&o, 0);
        serde_json::from_slice(&o.stdout).unwrap()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // A failed test must not leave an isolation applied.
        if self.dir.join("state/tune.journal").exists() {
            let _ = self.run(&["tune", "--revert"]);
        }
    }
}

#[track_caller]
fn refused(o: &Output, file: &str, line: usize, key: &str) {
    assert_code(o, 2);
    let e = stderr(o);
    let want = format!("{file}:{line}: key '{key}'");
    assert!(e.contains(&want), "wanted {want:?} in: {e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn malformed_files_are_refused_before_anything_runs() {
    // The CPUs it may use are read: not while a test isolates one.
    let _system = shared_system();
    let lab = Lab::new("study-bad");
    let cases: &[(&str, &str, usize, &str)] = &[
        (
            "name = \"x\"\nduration = \"5s\"\nspeed = 3\n",
            "unknown key",
            3,
            "speed",
        ),
        (
            "name = \"x\"\nduration = \"5s\"\n[matrix]\npolicy = [\"fifo\"]\nsched = [\"a\", \"b\"]\n",
            "unknown option",
            5,
            "matrix.sched",
        ),
        (
            "name = \"x\"\nduration = \"5s\"\n\n[matrix]\ntimer = [\"abs\", \"itimer\"]\n[fixed]\nthreads = 2\n",
            "itimer",
            5,
            "matrix.timer",
        ),
        (
            "name = \"x\"\nduration = \"5s\"\n[fixed]\nload = \"hell\"\n[matrix]\nload = [\"no-such-load\"]\n",
            "also a dimension",
            4,
            "fixed.load",
        ),
        (
            "name = \"x\"\nduration = \"5s\"\n[matrix]\npolicy = [\"fast\", \"fifo\"]\n",
            "unknown policy 'fast'",
            4,
            "matrix.policy",
        ),
        (
            "name = \"x\"\nduration = \"5s\"\n[matrix]\nload = [\"hell\", \"no-such-load\"]\n",
            "unknown load profile 'no-such-load'",
            4,
            "matrix.load",
        ),
        (
            "name = \"x\"\nduration = \"5s\"\n[fixed]\njson = \"-\"\n",
            "not an option of a study",
            4,
            "fixed.json",
        ),
        (
            "name = \"x\"\nduration = \"soon\"\n",
            "duration",
            2,
            "duration",
        ),
        (
            "name = \"x\"\nduration = \"5s\"\ncmdline = [\"\", \"root=/dev/sda isolcpus=1\"]\n",
            "root= is the boot loader's",
            3,
            "cmdline",
        ),
        (
            "name = \"x\"\nduration = \"5s\"\nboot-method = \"lilo\"\n",
            "unknown boot method 'lilo'",
            3,
            "boot-method",
        ),
        (
            "name = \"x\"\nduration = \"5s\"\n[fixed]\ncmdline = 3\n",
            "cmdline is written as a string",
            4,
            "fixed.cmdline",
        ),
    ];
    for (i, (text, says, line, key)) in cases.iter().enumerate() {
        let f = lab.file(&format!("bad{i}.toml"), text);
        let o = lab.run(&["study", &f]);
        refused(&o, &f, *line, key);
        assert!(stderr(&o).contains(says), "case {i}: {}", stderr(&o));
    }
    // A TOML syntax error names the line too.
    let f = lab.file(
        "syntax.toml",
        "name = \"x\"\nduration = \"5s\"\n[matrix]\npolicy = [\"fifo\"\n",
    );
    let o = lab.run(&["study", &f]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains(&format!("{f}:4:")), "{}", stderr(&o));
    // Nothing ran: no study, no run.
    let o = lab.run(&["study", "status"]);
    assert_code(&o, 2);
    assert!(!lab.dir.join("s.db").exists() || stderr(&o).contains("no study"));
    let o = lab.run(&["study", "resume", "x"]);
    assert_code(&o, 2);
}

#[test]
fn new_writes_an_example_that_checks() {
    // The CPUs it may use are read: not while a test isolates one.
    let _system = shared_system();
    let lab = Lab::new("study-new");
    let o = lab.run(&["study", "new", "bench"]);
    assert_code(&o, 0);
    let f = lab.dir.join("bench.toml");
    let text = std::fs::read_to_string(&f).unwrap();
    assert!(text.contains("name = \"bench\"") && text.contains("[matrix]"));
    let o = lab.run(&["study", "new", "bench"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("exists"), "{}", stderr(&o));
    // --dry-run: every run in order, with its measure command.
    let o = lab.run(&["study", f.to_str().unwrap(), "--dry-run"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    // The starter: idle against hell, 2 cells x 3 repetitions of 1 min
    // (not the seed article's 9-cell matrix, which examples/ holds).
    assert_eq!(
        out.lines()
            .filter(|l| l.contains("rtscope measure"))
            .count(),
        6,
        "{out}"
    );
    assert!(
        out.contains("--load idle") && out.contains("--load hell"),
        "{out}"
    );
    assert!(out.contains("--deadline 500us"), "{out}");
    for example in ["seed-000-matrix.toml", "seed-001-interference.toml"] {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(example);
        let o = lab.run(&["study", p.to_str().unwrap(), "--dry-run"]);
        assert_code(&o, 0);
    }
}

/// The study `status --json` slots in one state.
fn slots_in(s: &serde_json::Value, state: &str) -> usize {
    s["slots"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["state"] == state)
        .count()
}

/// A study under a load: what the load says once (why rtscope could not
/// protect itself from the OOM killer, where it lacks CAP_SYS_RESOURCE)
/// is said once, not once per run; one repetition is "1 repetition".
#[test]
fn a_study_under_load_says_its_warnings_once() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let lab = Lab::new("study-once");
    let f = lab.file(
        "o.toml",
        "name = \"o\"\nduration = \"1s\"\nrepetitions = 1\n\
         [matrix]\ninterval = [\"1ms\", \"2ms\"]\n[fixed]\nthreads = 1\nload = \"idle\"\n",
    );
    let o = lab.run(&["study", &f, "--dry-run"]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("2 cells × 1 repetition = 2 runs of 1s"),
        "{}",
        stdout(&o)
    );
    let o = lab.run(&["study", &f, "-q"]);
    assert_code(&o, 0);
    let err = stderr(&o);
    let said = err.matches("oom_score_adj").count();
    assert!(said <= 1, "said {said} times:\n{err}");
    let o = lab.run(&["study", "status", "o"]);
    assert!(stdout(&o).contains("1 repetition,"), "{}", stdout(&o));
}

#[test]
fn a_killed_study_resumes_and_leaves_nothing_behind() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let lab = Lab::new("study-kill");
    let f = lab.file(
        "k.toml",
        "name = \"k\"\nduration = \"3s\"\nrepetitions = 1\norder = \"interleaved\"\n\
         [matrix]\npolicy = [\"fifo\", \"rr\"]\n\
         [fixed]\nthreads = 1\nisolate = \"1\"\nload = \"cpu:workers=1\"\nexplain = true\n",
    );
    let before = snapshot(&[]);
    let mounts_before = mounts();
    let mut kid = Kid::new(
        lab.cmd()
            .args(["study", &f, "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // In the middle of the first run: its attempt is in the store and
    // its isolation applied.
    wait_for("the first run to start", 30, || {
        let o = lab.run(&["study", "status", "k", "--json"]);
        o.status.success()
            && serde_json::from_slice::<serde_json::Value>(&o.stdout)
                .map(|s| slots_in(&s, "running") == 1)
                .unwrap_or(false)
            && std::fs::read_to_string(lab.dir.join("state/tune.journal"))
                .map(|j| j.contains("\"t\":\"applied\""))
                .unwrap_or(false)
    });
    // One runner at a time.
    let o = lab.run(&["study", "resume", "k"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains(&format!("being run by process {}", kid.id())),
        "{}",
        stderr(&o)
    );
    std::thread::sleep(std::time::Duration::from_millis(1500));
    kid.sigkill();

    let s = lab.status("k");
    assert_eq!(
        (s["done"].as_u64(), s["to_do"].as_u64()),
        (Some(0), Some(2)),
        "{s:#}"
    );
    let o = lab.run(&["study", "resume", "k", "-q"]);
    assert_code(&o, 0);
    let e = stderr(&o);
    assert!(e.contains("put back the isolation"), "{e}");
    assert!(e.contains("2 of 2 runs done"), "{e}");

    let s = lab.status("k");
    assert_eq!(slots_in(&s, "done"), 2, "{s:#}");
    let first = &s["slots"][0];
    let states: Vec<&str> = first["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["interrupted", "done"], "{s:#}");
    assert!(
        first["state_text"]
            .as_str()
            .unwrap()
            .contains("1 cut short")
    );
    // Every finished run once, plus the one cut short.
    let o = lab.run(&["runs"]);
    assert_code(&o, 0);
    let states: Vec<String> = stdout(&o)
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect();
    assert_eq!(
        states.iter().filter(|s| *s == "complete").count(),
        2,
        "{states:?}"
    );
    assert_eq!(
        states.iter().filter(|s| *s == "interrupted").count(),
        1,
        "{states:?}"
    );
    // Nothing left: isolation, load, trace instance, mount.
    assert!(!lab.dir.join("state/tune.journal").exists());
    assert_same(&before, &snapshot(&[]));
    assert!(our_instances().is_empty(), "{:?}", our_instances());
    assert_eq!(mounts(), mounts_before);
    let ps = Command::new("ps").args(["-eo", "comm"]).output().unwrap();
    assert!(!stdout(&ps).contains("stress-ng"), "a load process is left");
    // Resuming a complete study measures nothing more.
    let o = lab.run(&["study", "resume", "k"]);
    assert_code(&o, 0);
    assert!(stderr(&o).contains("is complete"), "{}", stderr(&o));
}

#[test]
fn an_isolation_left_by_a_killed_study_is_named_then_put_back_by_resume() {
    if !require_root() {
        return;
    }
    let _g = exclusive_system();
    let lab = Lab::new("study-left");
    // The measuring thread pinned to the CPU the study isolates: under
    // the left isolation this process may not use CPU 1.
    let f = lab.file(
        "l.toml",
        "name = \"l\"\nduration = \"2s\"\n[fixed]\nthreads = 1\nisolate = \"1\"\naffinity = \"1\"\n",
    );
    let before = snapshot(&[]);
    let mut kid = Kid::new(
        lab.cmd()
            .args(["study", &f, "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for("the isolation to be applied", 30, || {
        std::fs::read_to_string(lab.dir.join("state/tune.journal"))
            .map(|j| j.contains("\"t\":\"applied\""))
            .unwrap_or(false)
    });
    kid.sigkill();

    // Every measuring command names the left isolation and the fix.
    for args in [
        &["measure", "-a", "1", "-D", "1s", "-q", "--no-save"][..],
        &["study", &f, "--dry-run"],
    ] {
        let o = lab.run(args);
        assert_code(&o, 2);
        let e = stderr(&o);
        assert!(
            e.contains(&format!("left by rtscope (pid {}", kid.id()))
                && e.contains("rtscope tune --revert")
                && e.contains("CPUs 1 apart"),
            "{args:?}: {e}"
        );
        assert!(!e.contains("not online"), "{e}");
    }
    assert!(lab.dir.join("state/tune.journal").exists());

    let o = lab.run(&["study", "resume", "l", "-q"]);
    assert_code(&o, 0);
    let e = stderr(&o);
    assert!(e.contains("put back the isolation of CPUs 1"), "{e}");
    assert!(e.contains("1 of 1 runs done"), "{e}");
    assert!(!lab.dir.join("state/tune.journal").exists());
    assert_same(&before, &snapshot(&[]));
}

#[test]
fn kernels_not_running_wait_and_the_report_compares_the_rest() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let lab = Lab::new("study-kernel");
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap()
        .trim()
        .to_string();
    let f = lab.file(
        "kern.toml",
        &format!(
            "name = \"kern\"\nduration = \"2s\"\nrepetitions = 2\nseed = 11\n\
             kernel = [\"{release}\", \"0.0-never*\"]\n\
             [matrix]\npolicy = [\"fifo\", \"other\"]\n[fixed]\nthreads = 1\n"
        ),
    );
    // A second study in the same store.
    let g = lab.file(
        "other.toml",
        "name = \"other\"\nduration = \"1s\"\n[fixed]\nthreads = 1\n",
    );
    let o = lab.run(&["study", &g, "-q"]);
    assert_code(&o, 0);
    let o = lab.run(&["study", &f, "-q"]);
    assert_code(&o, 0);
    let e = stderr(&o);
    assert!(e.contains("4 of 8 runs done"), "{e}");
    assert!(
        e.contains("4 runs wait for kernel 0.0-never* (the kernel is "),
        "{e}"
    );
    let s = lab.status("kern");
    assert_eq!(
        (slots_in(&s, "done"), slots_in(&s, "waiting")),
        (4, 4),
        "{s:#}"
    );
    for slot in s["slots"].as_array().unwrap() {
        let runs_here = slot["label"].as_str().unwrap().contains(&release);
        assert_eq!(slot["state"] == "done", runs_here, "{slot:#}");
        if !runs_here {
            assert!(slot["attempts"].as_array().unwrap().is_empty());
        }
    }
    let o = lab.run(&["study", "status", "kern"]);
    assert!(
        stdout(&o).contains("waits for kernel 0.0-never*"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("other studies in the store: other"),
        "{}",
        stdout(&o)
    );
    // The same file again continues the same study (nothing to do here).
    let o = lab.run(&["study", &f, "-q"]);
    assert_code(&o, 0);
    assert!(stderr(&o).contains("4 of 8 runs done"), "{}", stderr(&o));
    // Another text under the same name is refused.
    let h = lab.file("clash.toml", "name = \"kern\"\nduration = \"1s\"\n");
    let o = lab.run(&["study", &h]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("a different study named 'kern'"),
        "{}",
        stderr(&o)
    );

    let out = lab.dir.join("kern.html");
    let o = lab.run(&["study", "report", "kern", "-o", out.to_str().unwrap()]);
    assert_code(&o, 0);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("0.0-never*"), "the waiting kernel is named");
    // The status and the report number a cell alike: each line of the
    // status names its run's cell as the report's heading does.
    let text = stdout(&lab.run(&["study", "status", "kern"]));
    for slot in s["slots"].as_array().unwrap() {
        let cell = format!("{}. {}", slot["cell"], slot["label"].as_str().unwrap());
        assert!(
            html.contains(&format!("<h3>{cell}</h3>")),
            "{cell} not in the report"
        );
        let line = text
            .lines()
            .find(|l| {
                l.trim_start()
                    .starts_with(&format!("{} ", slot["position"]))
            })
            .unwrap_or_else(|| panic!("run {} not in the status:\n{text}", slot["position"]));
        assert!(line.contains(&cell), "{line:?} should name {cell:?}");
    }
    assert!(!html.contains("<script"));
    // Gates: every cell is above 1 ns; none above 1 hour; one that selects
    // nothing is an error.
    let out_s = out.to_str().unwrap();
    let gate = |g: &str| lab.run(&["study", "report", "kern", "-o", out_s, "--fail-if", g]);
    let o = gate("policy=fifo:max>1ns");
    assert_code(&o, 1);
    assert!(
        stderr(&o).contains("failed for cell policy=fifo"),
        "{}",
        stderr(&o)
    );
    assert_code(&gate("max>1h"), 0);
    assert_code(&gate("policy=rr:max>1ms"), 2);
    let o = lab.run(&["study", "report", "kern", "--fail-if", "max"]);
    assert_code(&o, 2);
    // Removing a study keeps its runs.
    let o = lab.run(&["study", "remove", "other"]);
    assert_code(&o, 0);
    let o = lab.run(&["runs"]);
    assert_eq!(stdout(&o).lines().count(), 1 + 1 + 4, "{}", stdout(&o));
}

/// `--reboot` is checked before anything runs: a study that names no
/// boot, a machine where no one-time boot can be arranged (no systemd,
/// no kexec or GRUB, no hook) or a user who did not confirm are refused
/// with exit 2, nothing measured and no unit left. `--dry-run --reboot`
/// shows each boot configuration and what would boot it.
#[test]
fn reboot_is_refused_before_anything_runs_and_dry_run_shows_the_boots() {
    // The CPUs it may use are read: not while a test isolates one.
    let _system = shared_system();
    let lab = Lab::new("study-reboot");
    let unit = std::path::Path::new("/etc/systemd/system/rtscope-study-itreboot.service");
    let plain = lab.file(
        "plain.toml",
        "name = \"plain\"\nduration = 1\n[fixed]\nthreads = 1\n",
    );
    let o = lab.run(&["study", &plain, "--reboot", "--yes"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("names no boot (kernel or cmdline)"),
        "{}",
        stderr(&o)
    );
    let f = lab.file(
        "itreboot.toml",
        "name = \"itreboot\"\nduration = 1\nkernel = [\"*\", \"0.0-never*\"]\ncmdline = [\"\", \"isolcpus=1\"]\n[fixed]\nthreads = 1\n",
    );
    let o = lab
        .cmd()
        .args(["study", &f, "--reboot"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_code(&o, 2);
    let e = stderr(&o);
    let systemd = std::path::Path::new("/run/systemd/system").exists();
    let why = [
        "--reboot needs root",
        "--reboot needs systemd",
        "no way to arrange a one-time boot here",
        "write reboot = true in its file, or give --yes",
    ];
    assert!(why.iter().any(|w| e.contains(w)), "{e}");
    if !systemd && rustix::process::geteuid().is_root() {
        assert!(e.contains("--reboot needs systemd"), "{e}");
    }
    assert!(!unit.exists(), "a refused --reboot left {}", unit.display());
    let o = lab.run(&["runs"]);
    assert!(
        !stdout(&o).contains("itreboot"),
        "a refused --reboot measured: {}",
        stdout(&o)
    );
    // --yes belongs to --reboot.
    let o = lab.run(&["study", &f, "--yes"]);
    assert_code(&o, 2);
    // A study that never rebooted has nothing to pause.
    let o = lab.run(&["study", "pause", "itreboot"]);
    assert_code(&o, 2);

    // The plan is shown whole, and a plan that cannot be carried out
    // (a configuration no kernel here boots) exits 2.
    let o = lab.run(&["study", &f, "--reboot", "--dry-run"]);
    assert_code(&o, 2);
    let out = stdout(&o);
    if out.contains("boot method: none available here") {
        assert!(!out.contains("boots by "), "{out}");
        assert!(
            stderr(&o).contains("the study cannot reboot here"),
            "{}",
            stderr(&o)
        );
    } else {
        assert!(
            stderr(&o).contains(" boot configurations cannot be booted here"),
            "{}",
            stderr(&o)
        );
    }
    // Runs grouped by the boot they run in, this boot's first; an empty
    // value quoted.
    let here = out.find("\non this boot:\n").expect(&out);
    let there = out
        .find("\nafter a boot into kernel 0.0-never*, command line \"isolcpus=1\":\n")
        .expect(&out);
    assert!(here < there, "{out}");
    assert!(out.contains("cmdline=\"\""), "{out}");
    assert!(
        out.contains("[kernel 0.0-never*, command line \"isolcpus=1\"]: rtscope measure"),
        "{out}"
    );
    assert!(
        out.contains("- kernel *, command line without isolcpus: "),
        "{out}"
    );
    assert!(
        out.contains(
            "- kernel 0.0-never*, command line \"isolcpus=1\": cannot be booted here: no kernel"
        ),
        "{out}"
    );
    assert!(
        out.contains("resume unit: /etc/systemd/system/rtscope-study-itreboot.service"),
        "{out}"
    );
    assert!(!unit.exists());
}
