//! The suite's one skip rule, shared by both test binaries (tests/it and
//! tests/lab include this file): a test that needs something of its
//! environment (root, two CPUs, a build `make test` makes, a tool, a
//! cgroup hierarchy, the lab's images) asks for it with [`require`].
//! Where it is there, the test runs. Where it is not, the test fails and
//! says what it needs, unless the opt-in `RTSCOPE_ALLOW_SKIP` allows that
//! requirement: then the test prints exactly one line, `SKIP <test>:
//! <why>`, past the harness's capture, and returns.
//!
//! `RTSCOPE_ALLOW_SKIP=1` allows every requirement (a workstation's
//! `cargo test`); a comma list of requirement names allows those alone
//! (`RTSCOPE_ALLOW_SKIP=cgroup-v2`, the exception `make test` names).
//! No test prints SKIP, or returns untested, any other way.

#![allow(dead_code)]

/// What a test can need of its environment; its name is what
/// `RTSCOPE_ALLOW_SKIP` lists to allow that requirement alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Root (SCHED_FIFO, cpusets, mounts, tracefs).
    Root,
    /// More CPUs than this machine has.
    Cpus,
    /// A build `make test` makes and names in a variable (the static
    /// binary, the packages, the ARM builds).
    Build,
    /// A program of the system (PostgreSQL, sshd, Chromium, Prometheus).
    Tool,
    /// A tmpfs this test may mount.
    Tmpfs,
    /// A kernel feature (a trace event).
    Kernel,
    /// The cpuset controller on cgroup v1, as this suite's machines have it.
    CgroupV1,
    /// Moving the cpuset controller from cgroup v1 to v2 for a test
    /// (tests/it/cgroup_v2.rs): refused where something keeps the v1
    /// hierarchy busy.
    CgroupV2,
    /// The lab's guest images (scripts/lab/prepare).
    Lab,
}

impl Need {
    pub const ALL: [Need; 9] = [
        Need::Root,
        Need::Cpus,
        Need::Build,
        Need::Tool,
        Need::Tmpfs,
        Need::Kernel,
        Need::CgroupV1,
        Need::CgroupV2,
        Need::Lab,
    ];

    /// The name `RTSCOPE_ALLOW_SKIP` lists.
    pub fn name(self) -> &'static str {
        match self {
            Need::Root => "root",
            Need::Cpus => "cpus",
            Need::Build => "build",
            Need::Tool => "tool",
            Need::Tmpfs => "tmpfs",
            Need::Kernel => "kernel",
            Need::CgroupV1 => "cgroup-v1",
            Need::CgroupV2 => "cgroup-v2",
            Need::Lab => "lab",
        }
    }
}

/// Does the opt-in `value` (RTSCOPE_ALLOW_SKIP's) allow a test that
/// lacks `need` to skip? `1` allows all, unset, empty or `0` none;
/// otherwise a comma list of names.
/// An unknown name is an error, not a silent no: a misspelt exception
/// would otherwise fail tests far from its cause.
pub fn allows(value: Option<&str>, need: Need) -> bool {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty() && *v != "0") else {
        return false;
    };
    if value == "1" {
        return true;
    }
    let names: Vec<&str> = value.split(',').map(str::trim).collect();
    for n in &names {
        assert!(
            Need::ALL.iter().any(|k| k.name() == *n),
            "RTSCOPE_ALLOW_SKIP={value}: '{n}' is no requirement (1, or a comma list of: {})",
            Need::ALL.map(Need::name).join(", ")
        );
    }
    names.contains(&need.name())
}

/// May this test run? True when `have`. Otherwise the test fails saying
/// it needs `needs`, unless RTSCOPE_ALLOW_SKIP allows `need`: then one
/// SKIP line and false (`if !require(Need::Tool, ok, "…") { return; }`).
#[track_caller]
pub fn require(need: Need, have: bool, needs: &str) -> bool {
    if have {
        return true;
    }
    let opt_in = std::env::var("RTSCOPE_ALLOW_SKIP").ok();
    if allows(opt_in.as_deref(), need) {
        skip_line(&format!(
            "needs {needs} (RTSCOPE_ALLOW_SKIP={})",
            opt_in.unwrap_or_default()
        ));
        return false;
    }
    panic!(
        "this test needs {needs}; run it where that holds, or set RTSCOPE_ALLOW_SKIP=1 (or ={}) to skip it (it prints a SKIP line)",
        need.name()
    );
}

/// `SKIP <test>: <reason>` on standard error past the harness's capture
/// (which takes `eprintln!` and hides it): the line is seen in every run.
/// Private to the rule: no test says SKIP without going through it.
fn skip_line(reason: &str) {
    use std::io::Write as _;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let _ = std::io::stderr().write_all(format!("SKIP {test}: {reason}\n").as_bytes());
}

#[cfg(test)]
mod rule {
    use super::*;

    #[test]
    fn the_opt_in_allows_what_it_names_and_nothing_else() {
        assert!(!allows(None, Need::Root));
        assert!(!allows(Some(""), Need::Root));
        assert!(!allows(Some("0"), Need::Root));
        for n in Need::ALL {
            assert!(allows(Some("1"), n));
        }
        assert!(allows(Some("cgroup-v2"), Need::CgroupV2));
        assert!(!allows(Some("cgroup-v2"), Need::Root));
        assert!(!allows(Some("cgroup-v2"), Need::Lab));
        assert!(!allows(Some("cgroup-v2"), Need::CgroupV1));
        assert!(allows(Some("lab, cgroup-v2"), Need::Lab));
    }

    #[test]
    #[should_panic(expected = "'cgroupv2' is no requirement")]
    fn a_misspelt_opt_in_is_an_error() {
        allows(Some("cgroupv2"), Need::CgroupV2);
    }
}
