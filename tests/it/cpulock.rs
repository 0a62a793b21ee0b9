//! Two rtscope measurements on one CPU: the second is refused (exit 2,
//! the first named) unless --force; a second monitor of the same name is
//! refused whatever; a holder killed with SIGKILL leaves no lock behind.

use super::tune::{Kid, wait_for};
use crate::util::*;
use std::process::Stdio;

/// A quiet rtscope started with `args`, once it holds the lock `lock`.
fn holder(dir: &TempDir, args: &[&str], lock: &str) -> Kid {
    let kid = Kid::new(
        rtscope(dir.path())
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let file = dir.join(&format!("run/{lock}"));
    let me = format!("pid {} ", kid.id());
    wait_for("the lock to be taken", 20, || {
        std::fs::read_to_string(&file).is_ok_and(|t| t.starts_with(&me))
    });
    kid
}

#[test]
fn a_second_measurement_of_a_cpu_is_refused_unless_forced() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("cpulock-measure");
    let mut first = holder(
        &dir,
        &["measure", "-a", "0", "-D", "60s", "-q", "--no-save"],
        "cpu-0.lock",
    );
    let short = ["measure", "-a", "0-1", "-D", "1s", "-q", "--no-save"];
    let o = rtscope(dir.path()).args(short).output().unwrap();
    assert_code(&o, 2);
    let e = stderr(&o);
    assert!(
        e.contains("another rtscope measures CPU 0:")
            && e.contains(&format!("pid {} (`", first.id()))
            && e.contains("--force"),
        "{e}"
    );
    // A monitor or a characterization of that CPU too.
    for args in [
        &["monitor", "-a", "0", "--name", "x"][..],
        &[
            "characterize",
            "--cpus",
            "0",
            "--only",
            "clock-gettime",
            "--no-save",
        ],
    ] {
        let o = rtscope(dir.path()).args(args).output().unwrap();
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains("another rtscope measures CPU 0"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // --force goes on, and says beside whom.
    let o = rtscope(dir.path())
        .args(short)
        .arg("--force")
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(
        stderr(&o).contains("--force: measuring CPU 0 beside"),
        "{}",
        stderr(&o)
    );
    // Other CPUs are free.
    let o = rtscope(dir.path())
        .args(["measure", "-a", "1", "-D", "1s", "-q", "--no-save"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    // SIGKILL leaves no lock behind.
    first.sigkill();
    let o = rtscope(dir.path()).args(short).output().unwrap();
    assert_code(&o, 0);
}

#[test]
fn a_second_monitor_of_a_name_is_refused_while_the_first_runs() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let dir = TempDir::new("cpulock-monitor");
    let mut first = holder(
        &dir,
        &["monitor", "--name", "m", "-a", "0", "--window", "1s"],
        "cpu-0.lock",
    );
    // The lock of the name (its file is named after the host too).
    let name = std::fs::read_dir(dir.join("run"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("monitor-") && n.ends_with("-m.lock"))
        .unwrap();
    // The same name, on other CPUs and with --force: refused.
    let o = rtscope(dir.path())
        .args(["monitor", "--name", "m", "-a", "1", "--force"])
        .output()
        .unwrap();
    assert_code(&o, 2);
    let e = stderr(&o);
    assert!(
        e.contains("monitor 'm' already runs") && e.contains(&format!("pid {} (`", first.id())),
        "{e}"
    );
    first.sigkill();
    // Once it is gone, the monitor starts again: it takes the name.
    let again = holder(
        &dir,
        &["monitor", "--name", "m", "-a", "0", "--window", "1s"],
        &name,
    );
    drop(again);
}
