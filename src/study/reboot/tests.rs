use super::*;
use crate::store::boots::BootRow;
use crate::store::studies::{SlotRow, StudyRow};
use crate::study::boots::Boots;
use crate::study::state::SlotStatus;
use crate::study::{matrix, spec};

const FILE: &str = r#"
name = "b"
duration = 5
kernel = ["vanilla", "rt", "6.99*"]
cmdline = ["", "isolcpus=1"]
"#;

const HOME_LINE: &str = "BOOT_IMAGE=/boot/vmlinuz-6.1.0-27-amd64 root=/dev/vda ro quiet";

fn kernel(release: &str, model: &str, cmdline: &str, isolated: &[usize]) -> Kernel {
    Kernel {
        cmdline: cmdline.into(),
        isolated_cpus: isolated.to_vec(),
        ..Kernel::plain(release, model)
    }
}

fn installed() -> Vec<Installed> {
    kernels::installed(&kernels::tests::boot_tree().root())
}

/// The study on `kernel`, the cells listed in `done` measured, with the
/// round's boots `rows`.
fn study(kernel: &Kernel, done: &[usize], rows: Vec<BootRow>) -> Study {
    let spec = spec::parse(FILE, "b.toml").unwrap();
    let cells = matrix::cells(&spec);
    let boots = Boots::of(&spec, &cells);
    let failed: Vec<&BootRow> = rows
        .iter()
        .filter(|b| b.state == BootState::Failed)
        .collect();
    let slots = cells
        .iter()
        .map(|c| {
            let need = &boots.needs[c.index];
            let label = boots.label(need);
            let state = if done.contains(&c.index) {
                SlotState::Done {
                    run_uuid: format!("u{}", c.index),
                }
            } else if let Err(why) = boots.check(need, kernel) {
                match failed.iter().find(|b| b.config == label) {
                    Some(b) => SlotState::CannotBoot {
                        boot: label,
                        why: b.detail.clone().unwrap_or_default(),
                    },
                    None => SlotState::Waiting {
                        boot: label,
                        why: why.to_string(),
                    },
                }
            } else {
                SlotState::ToDo
            };
            SlotStatus {
                slot: SlotRow {
                    position: c.index,
                    cell: c.index,
                    repetition: 1,
                    label: c.label(),
                    kernel: c.kernel(&spec.fixed),
                },
                state,
                attempts: Vec::new(),
            }
        })
        .collect();
    Study {
        row: StudyRow {
            id: 1,
            uuid: "u".into(),
            name: "b".into(),
            file_text: FILE.into(),
            file_path: None,
            seed: 1,
            created_at_unix_ns: 0,
            running: None,
        },
        spec,
        cells,
        boots,
        round: None,
        boot_rows: rows,
        slots,
    }
}

fn row(config: &str, state: BootState, detail: &str) -> BootRow {
    BootRow {
        id: 1,
        round: 1,
        config: config.into(),
        target: String::new(),
        state,
        detail: Some(detail.into()),
        boot_id: "b0".into(),
        asked_at_unix_ns: 0,
        ended_at_unix_ns: None,
    }
}

/// The two 6.99* configurations, failed.
fn failed_rows() -> Vec<BootRow> {
    vec![
        row(
            "kernel 6.99*, command line without isolcpus",
            BootState::Failed,
            "no kernel",
        ),
        row(
            "kernel 6.99*, command line \"isolcpus=1\"",
            BootState::Failed,
            "no kernel",
        ),
    ]
}

fn plan(home: &Kernel) -> Plan {
    Plan {
        home: home_target(home, &installed()),
        method: Method::Kexec,
        max_reboots: 10,
        command: vec![],
    }
}

#[test]
fn the_next_boot_is_the_first_configuration_owed_then_home() {
    let home = kernel("6.1.0-27-amd64", "voluntary", HOME_LINE, &[]);
    let p = plan(&home);
    assert_eq!(p.home.cmdline, "root=/dev/vda ro quiet");
    assert_eq!(p.home.image, "/boot/vmlinuz-6.1.0-27-amd64");
    // Home measured its cell (vanilla, no isolcpus). 6.99* is not
    // installed: its configurations fail first, said why.
    let s = study(&home, &[0], vec![]);
    let Decision::Fail { config, why } = decide(&s, &p, &home, &installed()) else {
        panic!()
    };
    assert_eq!(config, "kernel 6.99*, command line without isolcpus");
    assert!(
        why.starts_with("no kernel installed in /boot is 6.99* (found: "),
        "{why}"
    );
    let rows = failed_rows();
    // Then the first configuration owed: vanilla with isolcpus=1.
    let s = study(&home, &[0], rows.clone());
    let Decision::Boot(t) = decide(&s, &p, &home, &installed()) else {
        panic!()
    };
    assert_eq!(t.config, "kernel vanilla, command line \"isolcpus=1\"");
    assert_eq!(t.release, "6.1.0-27-amd64");
    assert_eq!(t.cmdline, "root=/dev/vda ro quiet isolcpus=1 panic=10");
    assert_eq!(t.initrd.as_deref(), Some("/boot/initrd.img-6.1.0-27-amd64"));
    // On that boot, its cell measured: the RT kernel, without isolcpus
    // (taken off the command line the study started from).
    let there = kernel(
        "6.1.0-27-amd64",
        "voluntary",
        "root=/dev/vda ro quiet isolcpus=1 panic=10",
        &[1],
    );
    let s = study(&there, &[0, 1], rows.clone());
    let Decision::Boot(t) = decide(&s, &p, &there, &installed()) else {
        panic!()
    };
    assert_eq!(
        (t.config.as_str(), t.release.as_str()),
        (
            "kernel rt, command line without isolcpus",
            "6.1.0-27-rt-amd64"
        )
    );
    assert_eq!(t.cmdline, "root=/dev/vda ro quiet panic=10");
    // All measured but 6.99*'s: home, then done.
    let s = study(&there, &[0, 1, 2, 3], rows.clone());
    assert_eq!(s.waiting(), 0);
    assert_eq!(s.cannot_boot(), 2);
    assert_eq!(
        decide(&s, &p, &there, &installed()),
        Decision::Home(p.home.clone())
    );
    let back = kernel("6.1.0-27-amd64", "voluntary", "root=/dev/vda ro quiet", &[]);
    assert!(is_home(&p, &back));
    assert!(is_home(&p, &home), "BOOT_IMAGE= is the loader's");
    let s = study(&back, &[0, 1, 2, 3], rows);
    assert_eq!(decide(&s, &p, &back, &installed()), Decision::Done);
}

#[test]
fn a_configuration_missed_twice_fails() {
    let home = kernel("6.1.0-27-amd64", "voluntary", HOME_LINE, &[]);
    let p = plan(&home);
    let config = "kernel vanilla, command line \"isolcpus=1\"";
    let once = vec![row(config, BootState::Missed, "came up in 6.1 (voluntary)")];
    let with = |mut v: Vec<BootRow>| {
        v.extend(failed_rows());
        v
    };
    let s = study(&home, &[0], with(once.clone()));
    assert!(matches!(decide(&s, &p, &home, &installed()), Decision::Boot(t) if t.config == config));
    let mut twice = once;
    twice.push(row(
        config,
        BootState::Missed,
        "came up in 6.1 (voluntary) again",
    ));
    let s = study(&home, &[0], with(twice));
    let Decision::Fail { config: c, why } = decide(&s, &p, &home, &installed()) else {
        panic!()
    };
    assert_eq!(c, config);
    assert!(why.ends_with("came up in 6.1 (voluntary) again"), "{why}");
    assert_eq!(reboots_taken(&s), 2);
}

#[test]
fn init_arguments_stay_last_and_panic_is_kept() {
    let need = BootNeed {
        kernel: None,
        args: crate::study::boots::parse_args("isolcpus=1").unwrap(),
    };
    let home = Target {
        cmdline: "root=/dev/vda isolcpus=0 panic=5 -- single".into(),
        ..home_target(
            &kernel("6.1.0-27-amd64", "voluntary", "", &[]),
            &installed(),
        )
    };
    let t = target_for(&need, "c", &home, &["isolcpus".into()], &installed()).unwrap();
    assert_eq!(t.cmdline, "root=/dev/vda panic=5 isolcpus=1 -- single");
}

#[test]
fn a_run_that_failed_on_its_boot_is_not_worth_another_reboot() {
    use crate::store::boots::{RoundRow, RoundState};
    use crate::store::studies::{AttemptRow, AttemptState};
    let home = kernel("6.1.0-27-amd64", "voluntary", HOME_LINE, &[]);
    let p = plan(&home);
    let mut s = study(&home, &[0], failed_rows());
    s.round = Some(RoundRow {
        round: 1,
        plan: p.to_text(),
        state: RoundState::Active,
        detail: None,
        started_at_unix_ns: 100,
    });
    // Cell 1 (vanilla, isolcpus=1) was booted in this round and failed.
    s.slots[1].attempts = vec![AttemptRow {
        id: 1,
        position: 1,
        run_uuid: None,
        state: AttemptState::Failed,
        detail: Some("no such load".into()),
        kernel_release: "6.1.0-27-amd64".into(),
        preemption_model: "voluntary".into(),
        started_at_unix_ns: 200,
        ended_at_unix_ns: Some(201),
    }];
    let Decision::Boot(t) = decide(&s, &p, &home, &installed()) else {
        panic!()
    };
    assert_eq!(t.config, "kernel rt, command line without isolcpus");
    // Failed before this round: a new round boots it again.
    s.slots[1].attempts[0].started_at_unix_ns = 50;
    let Decision::Boot(t) = decide(&s, &p, &home, &installed()) else {
        panic!()
    };
    assert_eq!(t.config, "kernel vanilla, command line \"isolcpus=1\"");
}
