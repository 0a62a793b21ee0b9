//! How a one-time boot is arranged, as steps (commands to run, files to
//! write or remove) that can be shown before they are taken:
//!
//! - `kexec`: load the kernel, its initrd and the command line
//!   (`kexec -l`), then `systemctl kexec` (or, where systemd cannot be
//!   reached, `sync` and `kexec -e`). The firmware and the boot loader are
//!   not touched: a power cut or a panic (the command line gets
//!   `panic=10` when it has no `panic=`) boots the machine as it was.
//! - `grub`: a menu entry of rtscope's own in `/boot/grub/custom.cfg`
//!   (GRUB reads that file at every boot; rtscope writes it only when it
//!   does not exist, and removes it when the study ends), chosen for the
//!   next boot only with `grub-reboot`, then `systemctl reboot`.
//! - `hook`: the user's program, called as `HOOK boot` with the kernel,
//!   initrd and command line in `RTSCOPE_BOOT_*`, for boot loaders rtscope
//!   does not know (Raspberry Pi `tryboot`, U-Boot); `HOOK home` before
//!   the boot back, `HOOK cancel` when pending boots are cancelled.
//!
//! Pure, but for [`run`], which takes the steps.

use super::Target;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// rtscope's GRUB file: read by GRUB's 41_custom at every boot.
pub const GRUB_CUSTOM: &str = "/boot/grub/custom.cfg";
/// The first line of every file rtscope writes for a study's boots.
pub const MARK: &str = "# Written by rtscope for a study that reboots";
/// The id of rtscope's GRUB entry.
const GRUB_ID: &str = "rtscope-study";

/// A boot mechanism.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "name", rename_all = "lowercase")]
pub enum Method {
    Kexec,
    Grub {
        /// The file system that holds `/boot`, as GRUB finds it.
        fs_uuid: String,
        /// `/boot` as GRUB sees it on that file system (`""` when `/boot`
        /// is a partition of its own, else `/boot`).
        prefix: String,
    },
    Hook {
        program: String,
    },
}

/// One step of arranging a boot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Run {
        argv: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// Write a file rtscope owns (never over one it does not).
    Write { path: PathBuf, text: String },
    /// Remove a file rtscope wrote (left alone if it is not rtscope's).
    Remove { path: PathBuf },
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Run { argv, env } => {
                for (k, v) in env {
                    write!(f, "{k}={} ", shell_quote(v))?;
                }
                let q: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
                f.write_str(&q.join(" "))
            }
            Step::Write { path, .. } => write!(f, "write {}", path.display()),
            Step::Remove { path } => write!(f, "remove {}", path.display()),
        }
    }
}

/// `s` as a shell reads it back (for showing commands).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn run(argv: &[&str]) -> Step {
    Step::Run {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
    }
}

impl Method {
    pub fn name(&self) -> &'static str {
        match self {
            Method::Kexec => "kexec",
            Method::Grub { .. } => "grub",
            Method::Hook { .. } => "hook",
        }
    }

    /// The steps that make the next boot `t` (the boot back included).
    pub fn arrange(&self, t: &Target, study: &str) -> Vec<Step> {
        match self {
            Method::Kexec => {
                let mut argv = vec!["kexec".to_string(), "-l".into(), t.image.clone()];
                if let Some(i) = &t.initrd {
                    argv.push(format!("--initrd={i}"));
                }
                argv.push(format!("--command-line={}", t.cmdline));
                vec![Step::Run {
                    argv,
                    env: Vec::new(),
                }]
            }
            Method::Grub { .. } if t.home => vec![Step::Remove {
                path: GRUB_CUSTOM.into(),
            }],
            Method::Grub { fs_uuid, prefix } => vec![
                Step::Write {
                    path: GRUB_CUSTOM.into(),
                    text: grub_entry(t, study, fs_uuid, prefix),
                },
                run(&["grub-reboot", GRUB_ID]),
            ],
            Method::Hook { program } => vec![Step::Run {
                argv: vec![program.clone(), if t.home { "home" } else { "boot" }.into()],
                env: hook_env(t, study),
            }],
        }
    }

    /// The steps that reboot into what was arranged; each is tried in turn
    /// until one works.
    pub fn reboot(&self) -> Vec<Step> {
        match self {
            Method::Kexec => vec![
                run(&["systemctl", "kexec"]),
                run(&["sh", "-c", "sync; exec kexec -e"]),
            ],
            _ => vec![
                run(&["systemctl", "reboot"]),
                run(&["sh", "-c", "sync; exec reboot -f"]),
            ],
        }
    }

    /// The steps that undo an arranged boot (`study pause`, `study stop`,
    /// the end of a study).
    pub fn cancel(&self, study: &str) -> Vec<Step> {
        match self {
            Method::Kexec => vec![run(&["kexec", "-u"])],
            Method::Grub { .. } => vec![
                run(&["grub-editenv", "/boot/grub/grubenv", "unset", "next_entry"]),
                Step::Remove {
                    path: GRUB_CUSTOM.into(),
                },
            ],
            Method::Hook { program } => vec![Step::Run {
                argv: vec![program.clone(), "cancel".into()],
                env: vec![("RTSCOPE_STUDY".into(), study.into())],
            }],
        }
    }
}

/// rtscope's GRUB entry for `t`.
fn grub_entry(t: &Target, study: &str, fs_uuid: &str, prefix: &str) -> String {
    let path = |p: &str| format!("{prefix}/{}", p.strip_prefix("/boot/").unwrap_or(p));
    let mut s = format!(
        "{MARK} ({study}): the one-time entry its next boot takes (grub-reboot); removed when the study ends\n\
         menuentry 'rtscope study {study}: {}' --id {GRUB_ID} {{\n\
         \tsearch --no-floppy --fs-uuid --set=root {fs_uuid}\n\
         \tlinux {} {}\n",
        t.config.replace('\'', ""),
        path(&t.image),
        t.cmdline
    );
    if let Some(i) = &t.initrd {
        s.push_str(&format!("\tinitrd {}\n", path(i)));
    }
    s.push_str("}\n");
    s
}

fn hook_env(t: &Target, study: &str) -> Vec<(String, String)> {
    vec![
        ("RTSCOPE_STUDY".into(), study.into()),
        ("RTSCOPE_BOOT_CONFIG".into(), t.config.clone()),
        ("RTSCOPE_BOOT_RELEASE".into(), t.release.clone()),
        ("RTSCOPE_BOOT_KERNEL".into(), t.image.clone()),
        (
            "RTSCOPE_BOOT_INITRD".into(),
            t.initrd.clone().unwrap_or_default(),
        ),
        ("RTSCOPE_BOOT_CMDLINE".into(), t.cmdline.clone()),
    ]
}

/// Whether the file at `path` is one rtscope wrote.
pub fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.starts_with(MARK))
}

/// Why a step could not be taken.
#[derive(Debug, Error)]
pub enum StepError {
    /// The step's program could not be started.
    #[error("cannot run {program}")]
    Spawn {
        program: String,
        #[source]
        io: std::io::Error,
    },
    /// A step's command ended by a signal.
    #[error("`{step}` was ended by signal {signal}")]
    Killed { step: String, signal: i32 },
    /// A step's command exited with a failure, and what it printed.
    #[error("`{step}` failed ({status}): {said}")]
    Failed {
        step: String,
        status: std::process::ExitStatus,
        said: String,
    },
    /// A file rtscope would write is somebody else's.
    #[error(
        "{} exists and is not rtscope's: it is left as it is (use boot-method = \"kexec\" or \"hook\")",
        path.display()
    )]
    NotOurs { path: PathBuf },
    /// A file rtscope owns could not be written (the message names it).
    #[error(transparent)]
    Write(#[from] crate::output::OutputError),
    #[error("cannot remove {}", path.display())]
    Remove {
        path: PathBuf,
        #[source]
        io: std::io::Error,
    },
    /// No step to take (a method without a way to reboot).
    #[error("nothing to run")]
    Nothing,
}

/// Take `steps` under `root` (`/` but in tests): the first failure stops
/// them, with what it printed.
pub fn take(steps: &[Step], root: &Path) -> Result<(), StepError> {
    for s in steps {
        take_one(s, root)?;
    }
    Ok(())
}

/// Take the ways of rebooting, best first, until one works.
///
/// A reboot step can look failed because the reboot it asked for is
/// already under way: the shutdown stops the study's unit and every
/// process in it, the step's included (`systemctl kexec` killed while it
/// waits for its answer). Trying the next way then, or undoing the
/// arranged boot (`kexec -u`), would break the reboot taking place. So a
/// step ended by a signal, or one that fails while `going_down` says the
/// system is stopping, counts as done.
pub fn take_first(
    steps: &[Step],
    root: &Path,
    going_down: &dyn Fn() -> bool,
) -> Result<(), StepError> {
    let mut last = None;
    for s in steps {
        match take_one(s, root) {
            Ok(()) => return Ok(()),
            Err(StepError::Killed { .. }) => return Ok(()),
            Err(_) if going_down() => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or(StepError::Nothing))
}

/// Whether systemd says the system is shutting down (`systemctl
/// is-system-running` prints `stopping`); false where it cannot be asked.
pub fn system_stopping() -> bool {
    std::process::Command::new("systemctl")
        .arg("is-system-running")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "stopping")
}

fn under(root: &Path, p: &Path) -> PathBuf {
    root.join(p.strip_prefix("/").unwrap_or(p))
}

fn take_one(s: &Step, root: &Path) -> Result<(), StepError> {
    match s {
        Step::Run { argv, env } => {
            let out = std::process::Command::new(&argv[0])
                .args(&argv[1..])
                .envs(env.iter().map(|(k, v)| (k, v)))
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|io| StepError::Spawn {
                    program: argv[0].clone(),
                    io,
                })?;
            if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&out.status) {
                return Err(StepError::Killed {
                    step: s.to_string(),
                    signal,
                });
            }
            if !out.status.success() {
                return Err(StepError::Failed {
                    step: s.to_string(),
                    status: out.status,
                    said: String::from_utf8_lossy(&out.stderr).trim().to_string(),
                });
            }
        }
        Step::Write { path, text } => {
            let p = under(root, path);
            let taken = p.symlink_metadata().ok();
            if taken.is_some_and(|m| m.file_type().is_symlink() || !is_ours(&p)) {
                return Err(StepError::NotOurs { path: p });
            }
            crate::output::write_atomic(&p, text.as_bytes())?;
        }
        Step::Remove { path } => {
            let p = under(root, path);
            if is_ours(&p) {
                std::fs::remove_file(&p).map_err(|io| StepError::Remove {
                    path: p.clone(),
                    io,
                })?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(home: bool) -> Target {
        Target {
            config: "kernel rt, command line \"isolcpus=1\"".into(),
            release: "6.1.0-27-rt-amd64".into(),
            image: "/boot/vmlinuz-6.1.0-27-rt-amd64".into(),
            initrd: Some("/boot/initrd.img-6.1.0-27-rt-amd64".into()),
            cmdline: "root=/dev/vda ro quiet isolcpus=1 panic=10".into(),
            home,
        }
    }

    #[test]
    fn kexec_loads_the_kernel_and_reboots_through_systemd_first() {
        let steps = Method::Kexec.arrange(&target(false), "s");
        let shown: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            shown,
            [
                "kexec -l /boot/vmlinuz-6.1.0-27-rt-amd64 --initrd=/boot/initrd.img-6.1.0-27-rt-amd64 '--command-line=root=/dev/vda ro quiet isolcpus=1 panic=10'"
            ]
        );
        let r: Vec<String> = Method::Kexec
            .reboot()
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(r, ["systemctl kexec", "sh -c 'sync; exec kexec -e'"]);
        assert_eq!(Method::Kexec.cancel("s")[0].to_string(), "kexec -u");
    }

    #[test]
    fn a_reboot_step_ended_by_the_shutdown_is_not_a_failed_reboot() {
        let d = std::env::temp_dir();
        let sh = |c: &str| run(&["sh", "-c", c]);
        let tried = d.join(format!("rtscope-reboot-tried-{}", std::process::id()));
        let _ = std::fs::remove_file(&tried);
        let next = sh(&format!("touch {}", tried.display()));
        // Killed while it waits (the shutdown stopping the unit): done, and
        // the next way is not tried.
        take_first(&[sh("kill -TERM $$"), next.clone()], &d, &|| false).unwrap();
        assert!(!tried.exists(), "the next way was tried");
        // Failing while the system is stopping: done too.
        take_first(&[sh("exit 1"), next.clone()], &d, &|| true).unwrap();
        assert!(!tried.exists());
        // Failing otherwise: the next way is tried; when all fail, the
        // last error says what it printed.
        let e = take_first(&[sh("exit 1"), sh("echo no >&2; exit 3")], &d, &|| false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("exit status: 3") && e.ends_with("no"), "{e}");
        take_first(&[sh("exit 1"), next], &d, &|| false).unwrap();
        assert!(tried.exists(), "the next way was not tried");
        let _ = std::fs::remove_file(&tried);
    }

    #[test]
    fn grub_writes_its_own_entry_and_chooses_it_once() {
        let m = Method::Grub {
            fs_uuid: "1234-abcd".into(),
            prefix: "/boot".into(),
        };
        let steps = m.arrange(&target(false), "seed-001");
        let Step::Write { path, text } = &steps[0] else {
            panic!("{steps:?}")
        };
        assert_eq!(path, Path::new(GRUB_CUSTOM));
        assert!(text.starts_with(MARK));
        assert!(text.contains("--id rtscope-study {"), "{text}");
        assert!(text.contains("\tsearch --no-floppy --fs-uuid --set=root 1234-abcd\n"));
        assert!(text.contains(
            "\tlinux /boot/vmlinuz-6.1.0-27-rt-amd64 root=/dev/vda ro quiet isolcpus=1 panic=10\n"
        ));
        assert!(text.contains("\tinitrd /boot/initrd.img-6.1.0-27-rt-amd64\n"));
        assert_eq!(steps[1].to_string(), "grub-reboot rtscope-study");
        // A /boot partition of its own: paths from its root.
        let m2 = Method::Grub {
            fs_uuid: "u".into(),
            prefix: String::new(),
        };
        let Step::Write { text, .. } = &m2.arrange(&target(false), "s")[0] else {
            panic!()
        };
        assert!(
            text.contains("\tlinux /vmlinuz-6.1.0-27-rt-amd64 "),
            "{text}"
        );
        // The boot back: the entry removed, the default entry boots.
        assert_eq!(
            m.arrange(&target(true), "s"),
            [Step::Remove {
                path: GRUB_CUSTOM.into()
            }]
        );
        assert_eq!(m.reboot()[0].to_string(), "systemctl reboot");
    }

    #[test]
    fn a_hook_gets_the_boot_in_its_environment() {
        let m = Method::Hook {
            program: "/usr/local/sbin/tryboot-into".into(),
        };
        let s = m.arrange(&target(false), "s")[0].to_string();
        assert!(s.starts_with("RTSCOPE_STUDY=s RTSCOPE_BOOT_CONFIG='kernel rt, command line \"isolcpus=1\"' RTSCOPE_BOOT_RELEASE=6.1.0-27-rt-amd64 "), "{s}");
        assert!(
            s.contains(" RTSCOPE_BOOT_CMDLINE='root=/dev/vda ro quiet isolcpus=1 panic=10' "),
            "{s}"
        );
        assert!(s.ends_with("/usr/local/sbin/tryboot-into boot"), "{s}");
        assert!(
            m.arrange(&target(true), "s")[0]
                .to_string()
                .ends_with(" home")
        );
        assert!(m.cancel("s")[0].to_string().ends_with(" cancel"));
    }

    #[test]
    fn files_not_rtscope_s_are_never_replaced_or_removed() {
        let d =
            std::env::temp_dir().join(format!("rtscope-boot-{}", crate::record::new_run_uuid()));
        std::fs::create_dir_all(d.join("boot/grub")).unwrap();
        let custom = d.join("boot/grub/custom.cfg");
        std::fs::write(&custom, "menuentry 'mine' {}\n").unwrap();
        let m = Method::Grub {
            fs_uuid: "u".into(),
            prefix: "/boot".into(),
        };
        let e = take(&m.arrange(&target(false), "s")[..1], &d).unwrap_err();
        assert!(e.to_string().contains("is not rtscope's"), "{e}");
        take(
            &[Step::Remove {
                path: GRUB_CUSTOM.into(),
            }],
            &d,
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&custom).unwrap(),
            "menuentry 'mine' {}\n"
        );
        std::fs::remove_file(&custom).unwrap();
        take(&m.arrange(&target(false), "s")[..1], &d).unwrap();
        assert!(is_ours(&custom));
        take(
            &[Step::Remove {
                path: GRUB_CUSTOM.into(),
            }],
            &d,
        )
        .unwrap();
        assert!(!custom.exists());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
