//! The suite's one skip rule (tests/common/need.rs) for the lab: a lab
//! test whose image variable is set but empty, as `make test` leaves it
//! where scripts/lab/prepare declined, fails saying what it needs; only
//! RTSCOPE_ALLOW_SKIP allowing `lab` turns it into one SKIP line. No guest
//! boots: the test binary runs one lab test of its own, which stops at
//! `Lab::get`.

use std::process::{Command, Output};

const LAB_TEST: &str = "vanilla_kernel_facts_and_isolation_on_systemds_cgroup_v2";

fn with_empty_image(allow: Option<&str>) -> Output {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", LAB_TEST, "--test-threads=1"])
        .env("RTSCOPE_LAB_IMAGE", "")
        .env_remove("RTSCOPE_ALLOW_SKIP");
    if let Some(a) = allow {
        c.env("RTSCOPE_ALLOW_SKIP", a);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_lab_test_with_an_empty_image_variable_fails() {
    for allow in [None, Some("cgroup-v2")] {
        let o = with_empty_image(allow);
        let (out, err) = text(&o);
        assert!(!o.status.success(), "{allow:?}: {out}{err}");
        assert!(
            out.contains("this test needs the amd64 lab: RTSCOPE_LAB_IMAGE is unset or empty"),
            "{allow:?}: {out}{err}"
        );
        assert!(!err.contains("SKIP"), "{err}");
    }
    let o = with_empty_image(Some("lab"));
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    let skips: Vec<&str> = err.lines().filter(|l| l.starts_with("SKIP ")).collect();
    assert_eq!(skips.len(), 1, "{err}");
    assert!(
        skips[0].starts_with(&format!("SKIP {LAB_TEST}: needs the amd64 lab: ")),
        "{err}"
    );
}
