//! The isolation on real cgroup v2. This machine mounts the cpuset
//! controller as cgroup v1; each test here moves it to the v2 hierarchy
//! (`/sys/fs/cgroup/unified`), as a distribution booted with cgroup v2
//! has it, runs rtscope there and puts it back: `tune isolate` (rtscope-rt
//! an isolated partition) and its revert, the revert after a SIGKILL
//! while applying and during an isolated run, `measure --isolate` ended
//! by SIGTERM, and a load's cpuset cgroup beside the isolation. Every
//! test compares the `tune` snapshot (every value tune may touch, the v2
//! root's cpuset files included) before and after.
//!
//! [`CgroupV2`] is the switch. It holds `exclusive_system()` for as long
//! as the controller is away (other tests use the v1 cpusets), records
//! how the v1 hierarchy was mounted (source, options) and the values of
//! its root cpuset, and its `Drop` undoes everything on every way out of
//! a test, a failed assertion included: rtscope cgroups left in v2 are
//! removed (and named: a test that leaves one fails), `-cpuset` when the
//! v2 root did not give it to its children before, the v1 hierarchy is
//! mounted again with the same source and options, and its root values
//! are checked (written back if they differ). What it switched from is
//! also kept in [`MARK`] until undone, so that a test binary killed
//! meanwhile is undone by the next switch. Where the switch cannot be
//! made (not root, a child cpuset keeps the v1 hierarchy alive, umount
//! refused, no v2 mount) the test fails saying why, under the suite's
//! one skip rule (tests/common/need.rs): only where RTSCOPE_ALLOW_SKIP
//! allows `cgroup-v2` (`make test` does: README, "Tests that need
//! something") does it print one SKIP line instead, and test nothing.

use crate::load::assert_nothing_left;
use crate::tune::{
    Tuner, UNIFIED, assert_same, busy, cpus_allowed, cpuset_of, fake_irqbalance, last_cpu, pinned,
    read, snapshot, state_of, wait_for,
};
use crate::util::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::RwLockWriteGuard;
use std::time::{Duration, Instant};

/// What a switch was made from, while it lasts: the v1 mount line, then
/// the v2 root's `cgroup.subtree_control`.
const MARK: &str = "/run/rtscope-it-cgroup-v2";

/// One line of /proc/self/mounts.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mount {
    source: String,
    target: String,
    fstype: String,
    options: String,
}

impl Mount {
    fn parse(line: &str) -> Option<Mount> {
        let f: Vec<&str> = line.split_whitespace().collect();
        Some(Mount {
            source: f.first()?.to_string(),
            target: f.get(1)?.to_string(),
            fstype: f.get(2)?.to_string(),
            options: f.get(3)?.to_string(),
        })
    }

    fn line(&self) -> String {
        format!(
            "{} {} {} {}",
            self.source, self.target, self.fstype, self.options
        )
    }

    /// Mount it again as it was, retrying while the controller is still
    /// held by the v2 hierarchy (its cgroups go away asynchronously).
    fn remount(&self) -> Result<(), String> {
        let start = Instant::now();
        loop {
            let o = Command::new("mount")
                .args(["-t", &self.fstype, "-o", &self.options])
                .args([&self.source, &self.target])
                .output()
                .map_err(|e| format!("mount: {e}"))?;
            if o.status.success() {
                return Ok(());
            }
            if start.elapsed() > Duration::from_secs(5) {
                return Err(format!(
                    "mounting {} failed for 5 s: {}",
                    self.line(),
                    stderr(&o).trim()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The v1 hierarchy holding the cpuset controller, if mounted.
fn v1_cpuset() -> Option<Mount> {
    read("/proc/self/mounts")
        .lines()
        .filter_map(Mount::parse)
        .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == "cpuset"))
}

fn lists_cpuset(controllers: &str) -> bool {
    controllers.split_whitespace().any(|c| c == "cpuset")
}

/// A file of the v2 root, trimmed.
fn v2(file: &str) -> String {
    read(&format!("{UNIFIED}/{file}")).trim().to_string()
}

fn write(path: &str, value: &str) -> std::io::Result<()> {
    std::fs::write(path, value)
}

/// The cgroups directly below `dir`.
fn children(dir: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// How many cgroups the cpuset hierarchy has, its root and the ones
/// being removed included (/proc/cgroups).
fn cpuset_cgroups() -> Option<u64> {
    read("/proc/cgroups").lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.first() == Some(&"cpuset")).then(|| f.get(2)?.parse().ok())?
    })
}

/// The values of the writable files of the v1 root cpuset (what a new
/// mount of the hierarchy would reset).
fn root_values(mount: &str) -> Vec<(String, String)> {
    use std::os::unix::fs::PermissionsExt;
    let mut v: Vec<(String, String)> = std::fs::read_dir(mount)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name();
            let writable = e
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o200 != 0);
            writable && name != "tasks" && name != "cgroup.procs"
        })
        .map(|e| {
            let p = e.path().display().to_string();
            let value = read(&p);
            (p, value)
        })
        .collect();
    v.sort();
    v
}

/// How the cpuset controller is offered in v2 when a test starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum V2Start {
    /// Among the root's controllers only: rtscope has to enable it for
    /// the root's children (and disables it again on revert).
    Available,
    /// Already enabled for the root's children (`cgroup.subtree_control`),
    /// as systemd distributions have it.
    Enabled,
}

/// Where the switch cannot be made: the suite's skip rule (the test fails
/// saying why, or under RTSCOPE_ALLOW_SKIP prints one SKIP line).
fn refused(need: Need, why: &str) {
    require(need, false, why);
}

/// The cpuset controller moved to cgroup v2 for one test; put back on
/// drop. Holds `exclusive_system()` meanwhile.
struct CgroupV2 {
    v1: Mount,
    v1_root: Vec<(String, String)>,
    subtree: String,
    // Released after `drop` has put everything back.
    _system: RwLockWriteGuard<'static, ()>,
}

impl CgroupV2 {
    /// Move the cpuset controller to v2; where that is refused, fail the
    /// test saying why, or (RTSCOPE_ALLOW_SKIP allows `cgroup-v2`) print
    /// one SKIP line and return None.
    fn switch(start: V2Start) -> Option<CgroupV2> {
        if !require_root() {
            return None;
        }
        let system = exclusive_system();
        if let Err(e) = undo_killed_switch() {
            panic!("{e}");
        }
        let Some(v1) = v1_cpuset() else {
            refused(
                Need::CgroupV1,
                "a cgroup-v1 cpuset hierarchy to move to cgroup v2 (none is mounted here)",
            );
            return None;
        };
        if !Path::new(UNIFIED).join("cgroup.controllers").exists() {
            refused(
                Need::CgroupV2,
                &format!("a cgroup-v2 hierarchy at {UNIFIED} to move the cpuset controller to"),
            );
            return None;
        }
        let kids = children(&v1.target);
        if !kids.is_empty() {
            refused(
                Need::CgroupV2,
                &format!(
                    "the cpuset controller moved to cgroup v2, refused now: the v1 cpuset hierarchy has child cpusets ({}), which keep it alive after umount (run it when they are gone)",
                    kids.join(", ")
                ),
            );
            return None;
        }
        // A cpuset just removed (by a test that ran before) lives on for a
        // moment; umount would then keep the hierarchy alive.
        let t = Instant::now();
        while cpuset_cgroups() != Some(1) {
            if t.elapsed() > Duration::from_secs(5) {
                refused(
                    Need::CgroupV2,
                    &format!(
                        "the cpuset controller moved to cgroup v2, refused now: the v1 cpuset hierarchy still counts {:?} cgroups in /proc/cgroups after 5 s (removed cpusets not yet gone)",
                        cpuset_cgroups()
                    ),
                );
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let subtree = v2("cgroup.subtree_control");
        let v1_root = root_values(&v1.target);
        std::fs::write(MARK, format!("{}\n{subtree}\n", v1.line())).unwrap();
        let g = CgroupV2 {
            v1,
            v1_root,
            subtree,
            _system: system,
        };
        // From here on, dropping `g` puts everything back.
        let o = Command::new("umount").arg(&g.v1.target).output().unwrap();
        if !o.status.success() {
            refused(
                Need::CgroupV2,
                &format!(
                    "the cpuset controller moved to cgroup v2, refused here: umount {} failed ({})",
                    g.v1.target,
                    stderr(&o).trim()
                ),
            );
            return None;
        }
        // The v1 hierarchy is destroyed asynchronously.
        let t = Instant::now();
        while !lists_cpuset(&v2("cgroup.controllers")) {
            if t.elapsed() > Duration::from_secs(3) {
                refused(
                    Need::CgroupV2,
                    &format!(
                        "the cpuset controller moved to cgroup v2, refused here: 3 s after umount {}, cgroup v2 still does not offer it (the v1 hierarchy stays alive)",
                        g.v1.target
                    ),
                );
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if start == V2Start::Enabled {
            write(&format!("{UNIFIED}/cgroup.subtree_control"), "+cpuset").unwrap();
            assert!(lists_cpuset(&v2("cgroup.subtree_control")));
        }
        assert!(v1_cpuset().is_none());
        Some(g)
    }

    /// Put everything back; what could not be, one line each.
    fn undo(&self) -> Vec<String> {
        let mut problems = remove_rtscope_cgroups();
        let subtree = format!("{UNIFIED}/cgroup.subtree_control");
        if !lists_cpuset(&self.subtree)
            && lists_cpuset(&read(&subtree))
            && let Err(e) = write(&subtree, "-cpuset")
        {
            problems.push(format!("-cpuset > {subtree}: {e}"));
        }
        if v1_cpuset().is_none()
            && let Err(e) = self.v1.remount()
        {
            problems.push(e);
        }
        match v1_cpuset() {
            Some(m) if m == self.v1 => {}
            other => problems.push(format!(
                "the v1 cpuset hierarchy is mounted as {:?}, it was {}",
                other.map(|m| m.line()),
                self.v1.line()
            )),
        }
        for (file, value) in &self.v1_root {
            if read(file) == *value {
                continue;
            }
            let _ = write(file, value.trim_end_matches('\n'));
            if read(file) != *value {
                problems.push(format!(
                    "{file} is {:?} after the remount, it was {value:?}",
                    read(file)
                ));
            }
        }
        let now = v2("cgroup.subtree_control");
        if now != self.subtree {
            problems.push(format!("{subtree} is '{now}', it was '{}'", self.subtree));
        }
        if problems.iter().all(|p| p.contains("left behind")) {
            let _ = std::fs::remove_file(MARK);
        }
        problems
    }
}

impl Drop for CgroupV2 {
    fn drop(&mut self) {
        let problems = self.undo();
        if problems.is_empty() {
            return;
        }
        let message = format!(
            "cgroup v2 switch: {}\nby hand: rmdir {UNIFIED}/rtscope-*; echo -cpuset > {UNIFIED}/cgroup.subtree_control unless it was there before (it was '{}'); mount -t cgroup -o {} {} {}",
            problems.join("; "),
            self.subtree,
            self.v1.options,
            self.v1.source,
            self.v1.target
        );
        if std::thread::panicking() {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "WARNING {message}");
        } else {
            panic!("{message}");
        }
    }
}

/// Remove the rtscope cgroups left in v2 (their processes go to the
/// root); one line for each, and for each that stays.
fn remove_rtscope_cgroups() -> Vec<String> {
    let mut problems = Vec::new();
    for name in children(UNIFIED)
        .into_iter()
        .filter(|n| n.starts_with("rtscope-"))
    {
        let dir = format!("{UNIFIED}/{name}");
        problems.push(format!(
            "{dir} was left behind (removed by the test's guard)"
        ));
        let _ = write(&format!("{dir}/cpuset.cpus.partition"), "member");
        let t = Instant::now();
        while std::fs::remove_dir(&dir).is_err() && t.elapsed() < Duration::from_secs(2) {
            for pid in read(&format!("{dir}/cgroup.procs")).split_whitespace() {
                let _ = write(&format!("{UNIFIED}/cgroup.procs"), pid);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if Path::new(&dir).exists() {
            problems.push(format!("{dir} cannot be removed"));
        }
    }
    problems
}

/// A switch whose test binary was killed (no `Drop` ran): mount the v1
/// hierarchy back as [`MARK`] says.
fn undo_killed_switch() -> Result<(), String> {
    let Ok(mark) = std::fs::read_to_string(MARK) else {
        return Ok(());
    };
    let mut lines = mark.lines();
    let (Some(v1), subtree) = (lines.next().and_then(Mount::parse), lines.next()) else {
        return Err(format!("{MARK} cannot be read: {mark:?}"));
    };
    if v1_cpuset().is_none() {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "NOTE cgroup v2: an earlier test run left the cpuset controller in v2 ({MARK}): putting it back"
        );
        for p in remove_rtscope_cgroups() {
            let _ = writeln!(std::io::stderr(), "NOTE cgroup v2: {p}");
        }
        let path = format!("{UNIFIED}/cgroup.subtree_control");
        if !lists_cpuset(subtree.unwrap_or("")) && lists_cpuset(&read(&path)) {
            write(&path, "-cpuset").map_err(|e| format!("-cpuset > {path}: {e}"))?;
        }
        v1.remount()?;
    }
    let _ = std::fs::remove_file(MARK);
    Ok(())
}

#[track_caller]
fn assert_isolated_partition(cpus: &str, housekeeping: &str) {
    let rt = format!("{UNIFIED}/rtscope-rt");
    assert_eq!(read(&format!("{rt}/cpuset.cpus")).trim(), cpus);
    assert_eq!(
        read(&format!("{rt}/cpuset.cpus.partition")).trim(),
        "isolated"
    );
    assert_eq!(v2("cpuset.cpus.effective"), housekeeping);
    assert_eq!(v2("cpuset.cpus.isolated"), cpus);
    assert!(
        !Path::new(UNIFIED).join("rtscope-system").exists(),
        "v2 needs no housekeeping cgroup"
    );
}

#[test]
fn v2_isolate_status_join_and_revert_restore_every_value() {
    let Some(_v2) = CgroupV2::switch(V2Start::Available) else {
        return;
    };
    let t = Tuner::new("cg2-iso");
    let b = busy();
    let p = pinned();
    let irqb = fake_irqbalance(&t.dir);
    std::thread::sleep(Duration::from_millis(100));
    let watch = [b.id(), p.id(), irqb.id()];
    let before = snapshot(&watch);
    assert_eq!(cpus_allowed(b.id()), "0-1");

    let dry = t.run(&["tune", "isolate", "1", "--dry-run"]);
    assert_code(&dry, 0);
    let plan = stdout(&dry);
    assert!(
        plan.contains("-> +cpuset") && plan.contains("-> cpus=1 partition=isolated"),
        "{plan}"
    );
    assert!(plan.contains("cgroup v2: the isolated partition"), "{plan}");
    assert_same(&before, &snapshot(&watch));

    let o = t.run(&["tune", "isolate", "1"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("partition type isolated"), "{out}");
    assert!(
        lists_cpuset(&v2("cgroup.subtree_control")),
        "tune enabled cpuset for the root's children"
    );
    assert_isolated_partition("1", "0");
    // Every other task left CPU 1, and stays in its own cgroup.
    assert_eq!(cpus_allowed(b.id()), "0");
    assert_eq!(cpus_allowed(p.id()), "0");
    assert_eq!(cpuset_of(b.id()), "/");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(last_cpu(b.id()), 0, "the busy process still runs on CPU 1");
    assert_eq!(state_of(irqb.id()), 'T', "irqbalance is paused");

    let s = t.run(&["tune", "--status"]);
    assert_code(&s, 0);
    let status = stdout(&s);
    assert!(status.contains("rtscope tuning: applied"), "{status}");
    assert!(status.contains("(v2 cpuset, 0 tasks)"), "{status}");
    let d = t.run(&["doctor", "--cpus", "1", "--json"]);
    assert_code(&d, 0);
    let d: serde_json::Value = serde_json::from_str(&stdout(&d)).unwrap();
    let isolation = d["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "isolation")
        .unwrap();
    assert_eq!(isolation["status"], "ok", "{isolation}");
    // A second tuning is refused; measure joins the partition on CPU 1.
    crate::tune::assert_retune_refused_and_measure_joins(&t);

    let rv = t.run(&["tune", "--revert"]);
    assert_code(&rv, 0);
    assert!(!t.journal().exists());
    assert_eq!(v2("cgroup.subtree_control"), "", "cpuset disabled again");
    assert_eq!(cpus_allowed(b.id()), "0-1");
    assert_eq!(
        cpus_allowed(p.id()),
        "1",
        "the pinned process gets its own affinity back"
    );
    assert_eq!(state_of(irqb.id()), 'S', "irqbalance resumed");
    assert_same(&before, &snapshot(&watch));
}

#[test]
fn v2_sigkill_mid_apply_is_announced_and_reverted() {
    let Some(_v2) = CgroupV2::switch(V2Start::Enabled) else {
        return;
    };
    let t = Tuner::new("cg2-kill-apply");
    let b = busy();
    std::thread::sleep(Duration::from_millis(50));
    let before = snapshot(&[b.id()]);
    // cpuset is enabled already: the partition is the first change.
    let mut c = crate::tune::Kid::new(
        t.cmd()
            .args(["tune", "isolate", "1"])
            .env("RTSCOPE_TUNE_TEST_PAUSE_AFTER", "2")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let journal = t.journal();
    wait_for("2 journaled changes", 20, || {
        read(journal.to_str().unwrap())
            .matches("\"t\":\"result\"")
            .count()
            >= 2
    });
    assert_isolated_partition("1", "0");
    assert_eq!(
        cpus_allowed(b.id()),
        "0",
        "tasks left CPU 1 before the kill"
    );
    c.sigkill();
    let d = t.run(&["doctor", "--cpus", "1"]);
    assert_code(&d, 0);
    let e = stderr(&d);
    assert!(
        e.contains("ended without undoing its tuning of CPUs 1"),
        "{e}"
    );
    let s = t.run(&["tune", "--status"]);
    assert!(stdout(&s).contains("ABANDONED"), "{}", stdout(&s));
    assert_code(&t.run(&["tune", "--revert"]), 0);
    assert_code(&t.run(&["tune", "--revert"]), 0);
    assert!(!t.journal().exists());
    assert_eq!(v2("cgroup.subtree_control"), "cpuset", "left as it was");
    assert_eq!(cpus_allowed(b.id()), "0-1");
    assert_same(&before, &snapshot(&[b.id()]));
}

#[test]
fn v2_sigkill_mid_isolated_run_is_reverted_by_tune_revert() {
    let Some(_v2) = CgroupV2::switch(V2Start::Enabled) else {
        return;
    };
    let t = Tuner::new("cg2-kill-run");
    let b = busy();
    std::thread::sleep(Duration::from_millis(50));
    let before = snapshot(&[b.id()]);
    let mut c = t.isolated_run();
    // v2 keeps a process's threads together: all of rtscope is in the
    // partition.
    wait_for("rtscope in rtscope-rt", 10, || {
        cpuset_of(c.id()) == "/rtscope-rt"
    });
    assert_isolated_partition("1", "0");
    assert_eq!(cpus_allowed(b.id()), "0");
    c.sigkill();
    let s = t.run(&["tune", "--status"]);
    assert!(stdout(&s).contains("ABANDONED"), "{}", stdout(&s));
    let rv = t.run(&["tune", "--revert"]);
    assert_code(&rv, 0);
    assert!(!Path::new(UNIFIED).join("rtscope-rt").exists());
    assert_eq!(cpus_allowed(b.id()), "0-1");
    assert_same(&before, &snapshot(&[b.id()]));
}

#[test]
fn v2_sigterm_ends_an_isolated_run_cleanly_and_reverts() {
    let Some(_v2) = CgroupV2::switch(V2Start::Available) else {
        return;
    };
    let t = Tuner::new("cg2-term");
    let before = snapshot(&[]);
    let json = t.dir.join("run.json");
    let c = crate::tune::Kid::new(
        t.cmd()
            .args(["measure", "--isolate", "1", "-D", "60s", "-q", "--json"])
            .arg(&json)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let journal = t.journal();
    wait_for("the isolation to be applied", 20, || {
        read(journal.to_str().unwrap()).contains("\"t\":\"applied\"")
    });
    wait_for("rtscope in rtscope-rt", 10, || {
        cpuset_of(c.id()) == "/rtscope-rt"
    });
    std::thread::sleep(Duration::from_millis(500));
    assert_isolated_partition("1", "0");
    let o = c.sigterm_and_wait();
    assert_code(&o, 0);
    let e = stderr(&o);
    assert!(e.contains("isolated CPUs 1 for this run"), "{e}");
    assert!(e.contains("isolation of CPUs 1 undone"), "{e}");
    assert!(!t.journal().exists());
    let r = read_json(&json);
    assert_eq!(r["end_reason"], "signal");
    assert_eq!(r["threads"].as_array().unwrap().len(), 1);
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
        settings.contains(&"cpuset") && !settings.contains(&"tasks"),
        "v2 moves no task itself: {settings:?}"
    );
    assert_eq!(v2("cgroup.subtree_control"), "");
    assert_same(&before, &snapshot(&[]));
}

/// A load beside an isolated run, with cpuset enabled in v2 as
/// distributions have it: its cpuset cgroup is a v2 cgroup on the
/// housekeeping CPUs (its cpu cgroup stays in v1 here), a stale one of
/// a dead rtscope is swept, and nothing is left at the end.
#[test]
fn v2_a_load_beside_an_isolated_run_gets_its_cgroup_in_v2() {
    let Some(_v2) = CgroupV2::switch(V2Start::Enabled) else {
        return;
    };
    let t = Tuner::new("cg2-load");
    let before = snapshot(&[]);
    // Left by an rtscope that died (no process has this pid).
    let stale = format!("{UNIFIED}/rtscope-load-999999999");
    std::fs::create_dir(&stale).unwrap();
    let json = t.dir.join("load.json");
    let child = t
        .cmd()
        .args([
            "measure",
            "--isolate",
            "1",
            "--load",
            "cpu:steady",
            "-D",
            "60s",
            "-q",
            "--json",
        ])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let c = crate::tune::Kid::new(child);
    let name = format!("rtscope-load-{}", c.id());
    let cg = format!("{UNIFIED}/{name}");
    let procs = format!("{cg}/cgroup.procs");
    let members = || std::fs::read_to_string(&procs).unwrap_or_default();
    wait_for("the load in its v2 cgroup", 20, || {
        !members().trim().is_empty()
    });
    wait_for("rtscope in rtscope-rt", 10, || {
        cpuset_of(c.id()) == "/rtscope-rt"
    });
    assert!(!Path::new(&stale).exists(), "the stale cgroup was swept");
    assert_isolated_partition("1", "0");
    assert_eq!(read(&format!("{cg}/cpuset.cpus")).trim(), "0");
    assert_eq!(read(&format!("{cg}/cpuset.cpus.effective")).trim(), "0");
    for pid in members().split_whitespace() {
        let cgroups = read(&format!("/proc/{pid}/cgroup"));
        if cgroups.starts_with('<') {
            continue; // ended meanwhile
        }
        assert!(
            cgroups.contains(&format!("0::/{name}\n")) && cgroups.contains(&format!("cpu:/{name}")),
            "{pid}: {cgroups}"
        );
        assert_eq!(cpus_allowed(pid.parse().unwrap()), "0", "{pid}");
    }
    let o = c.sigterm_and_wait();
    assert_code(&o, 0);
    let r = read_json(&json);
    let load = &r["load"];
    let cgroups: Vec<&str> = load["cgroups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(cgroups.contains(&cg.as_str()), "{cgroups:?}");
    assert!(
        !r["warnings"].to_string().contains("no cpuset cgroup"),
        "{}",
        r["warnings"]
    );
    assert_nothing_left(load);
    assert_same(&before, &snapshot(&[]));
}

/// A load started first asks for every CPU in its v2 cgroup; the kernel
/// would make a partition of CPU 1 invalid, so `tune isolate` and
/// `measure --isolate` refuse at once, naming the load's cgroup, and
/// change nothing.
#[test]
fn v2_isolation_refuses_cpus_a_running_load_asks_for() {
    let Some(_v2) = CgroupV2::switch(V2Start::Enabled) else {
        return;
    };
    let t = Tuner::new("cg2-load-first");
    let before = snapshot(&[]);
    let json = t.dir.join("load.json");
    let load = crate::tune::Kid::new(
        t.cmd()
            .args(["load", "cpu:steady", "-D", "60", "-q", "--json"])
            .arg(&json)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let cg = format!("{UNIFIED}/rtscope-load-{}", load.id());
    let procs = format!("{cg}/cgroup.procs");
    wait_for("the load in its v2 cgroup", 20, || {
        !std::fs::read_to_string(&procs)
            .unwrap_or_default()
            .trim()
            .is_empty()
    });
    assert_eq!(read(&format!("{cg}/cpuset.cpus")).trim(), "0-1");
    for args in [
        vec!["tune", "isolate", "1"],
        vec!["measure", "--isolate", "1", "-D", "1s"],
    ] {
        let o = t.run(&args);
        assert_code(&o, 2);
        let e = stderr(&o);
        assert!(
            e.contains(&format!("cgroup {cg} asks for CPU 1 (cpuset.cpus 0-1)"))
                && e.contains(&format!("a load of rtscope pid {}", load.id())),
            "{args:?}: {e}"
        );
        assert!(!Path::new(UNIFIED).join("rtscope-rt").exists());
        assert!(!t.journal().exists());
    }
    let o = load.sigterm_and_wait();
    assert_code(&o, 0);
    assert_nothing_left(&read_json(&json));
    assert_same(&before, &snapshot(&[]));
}
