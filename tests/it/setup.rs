//! What the make targets install (README: Quick start): building, running
//! and packaging rtscope install nothing from apt, the test suite's
//! servers belong to `make test` alone, and no install step ever removes
//! a package the user has. scripts/install-deps.sh is run here against a
//! stand-in apt (scripts on PATH that log what they are asked), never the
//! machine's.

use crate::util::{TempDir, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The packages `install-deps.sh --list SET` names.
fn listed(set: &str) -> Vec<String> {
    let o = Command::new(repo().join("scripts/install-deps.sh"))
        .args(["--list", set])
        .env_remove("RTSCOPE_PACKAGES")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o).lines().map(str::to_string).collect()
}

/// The suite's servers and browser: what a workstation must not get from
/// a build.
const TEST_ONLY: [&str; 5] = [
    "postgresql",
    "prometheus",
    "openssh-server",
    "chromium",
    "poppler-utils",
];

#[test]
fn building_and_running_install_nothing_and_the_servers_are_the_suites() {
    assert_eq!(listed("build"), Vec::<String>::new());
    let bench = listed("bench");
    assert!(
        bench.iter().all(|p| p == "rt-tests" || p == "stress-ng"),
        "{bench:?}"
    );
    let test = listed("test");
    for p in TEST_ONLY {
        assert!(test.iter().any(|t| t == p), "{p} missing from {test:?}");
    }
}

/// The commands `make -n TARGET` would run.
fn planned(target: &str) -> String {
    let o = Command::new("make")
        .args(["-n", "--no-print-directory", target])
        .current_dir(repo())
        // Run from make test: not the parent make's flags and jobserver.
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove("MAKELEVEL")
        .output()
        .unwrap();
    assert!(o.status.success(), "make -n {target}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn make_run_and_the_package_builds_ask_for_the_build_set_alone() {
    for target in ["run", "build", "static", "deb", "deb-arm64", "deb-armhf"] {
        let plan = planned(target);
        assert!(
            plan.contains("scripts/install-deps.sh build"),
            "make {target}:\n{plan}"
        );
        assert!(
            !plan.contains("install-deps.sh test") && !plan.contains("install-deps.sh bench"),
            "make {target} installs more than it uses:\n{plan}"
        );
    }
    assert!(planned("test").contains("scripts/install-deps.sh test"));
}

#[test]
fn every_apt_install_in_the_scripts_refuses_to_remove() {
    let mut scripts = vec![
        repo().join("scripts/install-deps.sh"),
        repo().join("scripts/install-cross.sh"),
    ];
    for e in std::fs::read_dir(repo().join("scripts/lab")).unwrap() {
        scripts.push(e.unwrap().path());
    }
    let mut installs = 0;
    for s in scripts {
        let Ok(text) = std::fs::read_to_string(&s) else {
            continue; // a folder or a binary file: no script
        };
        for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            if line.contains(" install -y") {
                installs += 1;
                assert!(
                    line.contains("--no-remove"),
                    "{}: an install that may remove packages: {line}",
                    s.display()
                );
            }
        }
    }
    assert!(
        installs >= 3,
        "found {installs} installs: the scripts moved?"
    );
}

/// A stand-in apt in `dir/bin`: dpkg-query says nothing is installed,
/// `apt-get install -s` prints `sim` as apt's plan, and every call is
/// logged to `dir/apt.log`.
fn fake_apt(dir: &Path, sim: &str) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.join("apt.log");
    let scripts = [
        ("dpkg-query", "exit 1\n".to_string()),
        ("id", "echo 0\n".to_string()),
        (
            "apt-get",
            format!(
                "echo \"$*\" >>'{}'\ncase \" $* \" in *' -s '*) printf '%s\\n' '{sim}' ;; esac\nexit 0\n",
                log.display()
            ),
        ),
    ];
    for (name, body) in scripts {
        let p = bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
        let mut perm = std::fs::metadata(&p).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&p, perm).unwrap();
    }
}

fn install_deps(dir: &TempDir) -> Output {
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new(repo().join("scripts/install-deps.sh"))
        .arg("bench")
        .env("PATH", path)
        .env_remove("RTSCOPE_PACKAGES")
        .env("RTSCOPE_APT_LOCK", dir.join("apt.lock"))
        .env("RTSCOPE_POLICY_RC_D", dir.join("policy-rc.d"))
        .output()
        .unwrap()
}

#[test]
fn an_install_that_would_remove_a_package_installs_nothing_and_names_it() {
    let dir = TempDir::new("deps-remove");
    fake_apt(dir.path(), "Remv rustc [1.63.0+dfsg1-2]");
    let o = install_deps(&dir);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("would remove rustc"), "{}", stderr(&o));
    let log = std::fs::read_to_string(dir.join("apt.log")).unwrap();
    assert!(
        !log.lines().any(|l| l.contains("install -y")),
        "it installed anyway:\n{log}"
    );
    assert!(!dir.join("policy-rc.d").exists());

    // Without a removal, it installs (never removing) and says what.
    let dir = TempDir::new("deps-install");
    fake_apt(dir.path(), "Inst rt-tests (2.5-1 Debian:12/stable [amd64])");
    let o = install_deps(&dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("installed rt-tests stress-ng"),
        "{}",
        stdout(&o)
    );
    let log = std::fs::read_to_string(dir.join("apt.log")).unwrap();
    let install = log.lines().find(|l| l.contains("install -y")).unwrap();
    assert!(install.contains("--no-remove"), "{install}");
    assert!(
        !dir.join("policy-rc.d").exists(),
        "its policy-rc.d was left"
    );
}
