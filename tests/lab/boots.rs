//! A study that reboots, on the lab guest: 3 kernels (Debian's vanilla,
//! its PREEMPT_RT, and one that is not installed) × 2 command lines (none
//! of the study's, `isolcpus=1 rcu_nocbs=1`), started once with
//! `study FILE --reboot` on the vanilla guest (kexec), with its disk kept
//! across boots. The power is cut twice (qemu killed, then booted again
//! from the same disk, which boots the vanilla kernel as a power cut
//! would): once between the decision to reboot and the reboot, once in
//! the middle of a cell on the RT kernel. The study must end in the boot
//! it started from, with every configuration measured on the boot it
//! names, the missing kernel's cells reported as failed, and its unit
//! removed.
//!
//! Facts only: under TCG the latencies are the emulator's.

use crate::guest::{Lab, one_guest, tail};
use crate::remote::{SshGuest, bounded, path, ssh, ssh_command, temp_dir, write_config};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One qemu's life (boots by kexec included).
const GUEST_TIMEOUT_S: u32 = 1800;
/// The whole study, from start to the boot back.
pub(crate) const STUDY_LIMIT: Duration = Duration::from_secs(1500);
/// The study's store on the guest.
const DB: &str = "/var/lib/rtscope/boots.db";

const STUDY: &str = r#"
name = "boots"
description = "2 kernels (and one not installed) × 2 command lines, one reboot each"
duration = "20s"
seed = 7
reboot = true
kernel = ["vanilla", "rt", "6.99*"]
cmdline = ["", "isolcpus=1 rcu_nocbs=1"]
[fixed]
threads = 1
"#;

/// The study a workstation starts on the guest with `--on`.
const REMOTE_STUDY: &str = r#"
name = "remote-boots"
duration = "2s"
reboot = true
kernel = ["vanilla", "rt"]
[fixed]
threads = 1
"#;

/// Boot the vanilla kernel from the test's disk and wait for its sshd;
/// each boot's console and log in a folder of its own (`n`), which the
/// guest removes when dropped (the disk and the ssh config stay).
pub(crate) fn up(lab: &Lab, dir: &Path, cfg: &Path, n: u32) -> SshGuest {
    let disk = dir.join("disk.qcow2");
    let here = dir.join(format!("boot-{n}"));
    std::fs::create_dir_all(&here).unwrap();
    let mut g = SshGuest::boot(
        lab,
        &here,
        "vanilla",
        &["--disk", path(&disk), "--allow-reboot"],
        GUEST_TIMEOUT_S,
    );
    write_config(cfg, g.port, lab);
    g.wait_for_ssh(cfg);
    g
}

/// `study status boots --json` on the guest, if it answers.
fn status(cfg: &Path) -> Option<serde_json::Value> {
    let mut c = ssh_command(cfg, &format!("rtscope --db {DB} study status boots --json"));
    let (code, out, _) = bounded(&mut c, Duration::from_secs(60));
    (code == Some(0))
        .then(|| serde_json::from_str(&out).ok())
        .flatten()
}

/// Wait until `f` holds of the study's status (the guest may be
/// rebooting meanwhile).
fn wait_status(
    cfg: &Path,
    what: &str,
    start: Instant,
    f: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let mut last = serde_json::Value::Null;
    while start.elapsed() < STUDY_LIMIT {
        if let Some(s) = status(cfg) {
            if f(&s) {
                return s;
            }
            last = s;
        }
        std::thread::sleep(Duration::from_secs(3));
    }
    panic!("the study never reached: {what}; last status:\n{last:#}");
}

fn boots_in(s: &serde_json::Value, state: &str) -> Vec<String> {
    s["reboots"]["boots"]
        .as_array()
        .map(|b| {
            b.iter()
                .filter(|b| b["state"] == state)
                .map(|b| b["config"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_study_reboots_into_each_configuration_and_comes_back() {
    let Some(lab) = Lab::get() else {
        return;
    };
    let _one = one_guest();
    let started = Instant::now();
    let dir = temp_dir("boots");
    let cfg = dir.join("ssh_config");
    let mut guest = up(&lab, &dir, &cfg, 1);
    let vanilla = lab.release("vanilla");
    let rt = lab.release("rt");

    // The static binary and the study file on the guest's disk.
    let mut put = ssh_command(
        &cfg,
        "cat > /usr/local/bin/rtscope && chmod 755 /usr/local/bin/rtscope",
    );
    put.stdin(Stdio::from(std::fs::File::open(&lab.bin).unwrap()));
    assert!(
        put.status().unwrap().success(),
        "copying rtscope to the guest"
    );
    std::fs::write(dir.join("b.toml"), STUDY).unwrap();
    let mut put = ssh_command(&cfg, "cat > /root/b.toml");
    put.stdin(Stdio::from(
        std::fs::File::open(dir.join("b.toml")).unwrap(),
    ));
    assert!(put.status().unwrap().success(), "copying the study file");
    // The plan is shown whole; its two configurations of a kernel not
    // installed make it exit 2, saying so (the study itself fails their
    // runs and goes on, below).
    let dry = ssh(
        &cfg,
        &format!("rtscope --db {DB} study /root/b.toml --reboot --dry-run"),
    );
    let plan = dry.expect(2, "--dry-run --reboot");
    assert!(
        dry.stderr
            .contains("2 of 6 boot configurations cannot be booted here"),
        "{}",
        dry.stderr
    );
    assert!(plan.contains("boots by kexec"), "{plan}");
    assert!(
        plan.contains(&format!("boots {rt} with \"root=/dev/vda rw")),
        "{plan}"
    );
    assert!(plan.contains("kernel 6.99*, command line without isolcpus, rcu_nocbs: cannot be booted here: no kernel installed in /boot is 6.99*"), "{plan}");

    // Started once, held between the decision and the reboot: the power
    // is cut there.
    ssh(
        &cfg,
        &format!(
            "systemd-run --unit rtscope-first --setenv=RTSCOPE_STUDY_HOLD_BEFORE_REBOOT=900 rtscope --db {DB} study /root/b.toml --reboot -q"
        ),
    )
    .expect(0, "starting the study");
    let s = wait_status(&cfg, "a boot asked for", started, |s| {
        !boots_in(s, "asked").is_empty()
    });
    let first = boots_in(&s, "asked")[0].clone();
    assert_eq!(
        boots_in(&s, "failed").len(),
        2,
        "the 6.99* configurations fail before any reboot: {s:#}"
    );
    let unit =
        ssh(&cfg, "cat /etc/systemd/system/rtscope-study-boots.service").expect(0, "the unit");
    assert!(
        unit.contains("study resume boots --continue-boots"),
        "{unit}"
    );
    eprintln!("lab: boots: power cut before the reboot into {first}");
    assert!(guest.stop().is_empty());
    drop(guest);
    guest = up(&lab, &dir, &cfg, 2);

    // The unit resumes the study after every boot. Cut the power again
    // in the middle of a cell on the RT kernel.
    let s =
        wait_status(&cfg, "a cell measured on the RT kernel", started, |s| {
            s["slots"].as_array().unwrap().iter().any(|x| {
                x["state"] == "running" && x["label"].as_str().unwrap().contains("kernel=rt")
            })
        });
    assert!(
        boots_in(&s, "missed").contains(&first),
        "the boot cut before it happened is recorded as missed: {s:#}"
    );
    eprintln!("lab: boots: power cut in a cell on the RT kernel");
    assert!(guest.stop().is_empty());
    drop(guest);
    guest = up(&lab, &dir, &cfg, 3);

    let s = wait_status(&cfg, "the round done", started, |s| {
        s["reboots"]["state"] == "done"
    });
    eprintln!(
        "lab: boots: done after {:.0} s",
        started.elapsed().as_secs_f64()
    );
    // Back in the boot it started from; its unit gone.
    let now = ssh(&cfg, "uname -r; cat /proc/cmdline; ls /etc/systemd/system/rtscope-study-boots.service 2>&1; true")
        .expect(0, "the guest at the end");
    assert!(now.starts_with(&format!("{vanilla}\n")), "{now}");
    assert!(!now.contains("isolcpus"), "{now}");
    assert!(now.contains("No such file"), "the unit is left: {now}");
    // Every configuration measured on the boot it names; the missing
    // kernel's cells failed, said why.
    let slots = s["slots"].as_array().unwrap();
    assert_eq!(s["done"], 4, "{s:#}");
    for x in slots {
        let label = x["label"].as_str().unwrap();
        if label.contains("6.99*") {
            assert_eq!(x["state"], "cannot_boot", "{x:#}");
            continue;
        }
        assert_eq!(x["state"], "done", "{x:#}");
        let last = x["attempts"].as_array().unwrap().last().unwrap();
        let want = if label.contains("kernel=rt") {
            &rt
        } else {
            &vanilla
        };
        assert_eq!(last["kernel_release"], want.as_str(), "{x:#}");
    }
    assert!(
        slots.iter().any(|x| x["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["state"] == "interrupted")),
        "the cell cut by the power is recorded as interrupted: {s:#}"
    );
    let arrived = boots_in(&s, "arrived");
    assert!(
        arrived.len() >= 4,
        "3 configurations and the boot back: {s:#}"
    );
    // One report across the boots, each cell with the boot it ran on.
    let html = ssh(&cfg, &format!("rtscope --db {DB} study report boots -o /root/b.html >/dev/null 2>&1 && cat /root/b.html"))
        .expect(0, "study report");
    assert!(
        html.contains("isolcpus=1 rcu_nocbs=1"),
        "{}",
        tail(&html, 5)
    );
    assert!(html.contains(&rt) && html.contains(&vanilla));
    assert!(
        html.contains("could not be booted"),
        "the failed configuration is in the report"
    );

    // From a workstation: `--on BOARD study FILE --reboot` follows the
    // study across the board's reboots and copies its runs here.
    study_from_host(&lab, &dir, &cfg, Some(&lab.bin));

    let left = guest.stop();
    assert!(left.is_empty(), "qemu of the test still running: {left:?}");
    drop(guest);
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("lab: boots: {:.0} s", started.elapsed().as_secs_f64());
}

/// From a workstation: `--on ssh://lab-rt [--binary BIN] study FILE
/// --reboot` (REMOTE_STUDY) follows the study across the board's reboots
/// and copies its two runs into `dir/local.db`, one on each kernel. Without
/// `binary`, `--on` picks the build for the board's machine by itself.
pub(crate) fn study_from_host(lab: &Lab, dir: &Path, cfg: &Path, binary: Option<&Path>) {
    std::fs::write(dir.join("r.toml"), REMOTE_STUDY).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_rtscope"));
    c.env("RTSCOPE_BOARDS", dir.join("boards.toml"))
        .env_remove("RTSCOPE_DB")
        .env_remove("RTSCOPE_SSH_CONFIG")
        .arg("--db")
        .arg(dir.join("local.db"))
        .arg("--ssh-config")
        .arg(cfg)
        .args(["--on", "ssh://lab-rt"]);
    if let Some(bin) = binary {
        c.arg("--binary").arg(bin);
    }
    c.args(["study", path(&dir.join("r.toml")), "--reboot", "-q"]);
    let (code, _, err) = bounded(&mut c, STUDY_LIMIT);
    assert_eq!(
        code,
        Some(0),
        "--on ... study --reboot:\n{}",
        tail(&err, 40)
    );
    // (A boot shows as "rebooting into" only if a look falls in the few
    // seconds before the board goes down, and "does not answer" only if a
    // look fails while it reboots; qemu's forwarded port may hold the
    // connection until sshd is back: neither is asserted.)
    for said in [
        "board lab-rt: booted into kernel rt",
        "board lab-rt: booted into the boot the study started from",
        "study 'remote-boots': 2 of 2 runs done; its reboots are done",
    ] {
        assert!(
            err.contains(said),
            "wanted {said:?} in:\n{}",
            tail(&err, 40)
        );
    }
    let mut c = Command::new(env!("CARGO_BIN_EXE_rtscope"));
    c.arg("--db")
        .arg(dir.join("local.db"))
        .args(["runs", "--host", "lab-rt"]);
    let (code, runs, _) = bounded(&mut c, Duration::from_secs(60));
    assert_eq!(code, Some(0));
    let rows: Vec<&str> = runs.lines().filter(|l| l.contains(" complete ")).collect();
    assert_eq!(rows.len(), 2, "the two runs copied here:\n{runs}");
    for kernel in ["rt", "vanilla"] {
        let release = lab.release(kernel);
        assert!(rows.iter().any(|l| l.contains(&release)), "{runs}");
    }
}
