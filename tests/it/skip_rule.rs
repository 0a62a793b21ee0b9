//! The suite's one skip rule (tests/common/need.rs) seen from outside: a
//! root-only test of this binary run as another user fails and says it
//! needs root; under RTSCOPE_ALLOW_SKIP=1 it prints exactly one SKIP line
//! and passes; a named exception that is not `root` does not let it skip.
//! The test binary runs itself, one test, as `nobody` (setpriv).

use crate::util::*;
use std::process::{Command, Output};

/// A root-only test of this binary: it starts with `require_root()`.
const ROOT_TEST: &str = "doctor::run_fingerprint_records_the_system_facts";

/// This test binary, running ROOT_TEST alone as nobody, with
/// RTSCOPE_ALLOW_SKIP set to `allow` (None: unset).
fn as_nobody(allow: Option<&str>) -> Output {
    let me = std::env::current_exe().unwrap();
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(me)
        .args(["--exact", ROOT_TEST, "--test-threads=1"])
        .env_remove("RTSCOPE_ALLOW_SKIP")
        .current_dir("/");
    if let Some(a) = allow {
        c.env("RTSCOPE_ALLOW_SKIP", a);
    }
    c.output().unwrap()
}

fn skip_lines(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.starts_with("SKIP "))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_root_test_run_as_another_user_fails_saying_it_needs_root() {
    if !require_root() {
        return;
    }
    for allow in [None, Some(""), Some("0"), Some("cgroup-v2")] {
        let o = as_nobody(allow);
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert!(!o.status.success(), "RTSCOPE_ALLOW_SKIP={allow:?}: {all}");
        assert!(
            all.contains("this test needs root") && all.contains("RTSCOPE_ALLOW_SKIP=1"),
            "RTSCOPE_ALLOW_SKIP={allow:?}: {all}"
        );
        assert!(all.contains("1 failed"), "{all}");
        assert_eq!(skip_lines(&o), Vec::<String>::new(), "{all}");
    }
    for allow in ["1", "root", "cgroup-v2,root"] {
        let o = as_nobody(Some(allow));
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert!(o.status.success(), "RTSCOPE_ALLOW_SKIP={allow}: {all}");
        assert!(all.contains("1 passed"), "{all}");
        assert_eq!(
            skip_lines(&o),
            vec![format!(
                "SKIP {ROOT_TEST}: needs root: run the tests as root (sudo make test) (RTSCOPE_ALLOW_SKIP={allow})"
            )],
            "{all}"
        );
    }
}
