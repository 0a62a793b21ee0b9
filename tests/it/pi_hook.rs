//! The Raspberry Pi boot hook (`contrib/raspberrypi/rtscope-tryboot`,
//! docs/raspberrypi.md), the real script run on a fake firmware folder:
//! called as a study calls a hook (`study::reboot::method`: the same
//! arguments and `RTSCOPE_BOOT_*`), `boot` writes rtscope's kernel,
//! initrd, command line and tryboot.txt there and the reboot flag, and
//! nothing else; `home` and `cancel` remove exactly those; a tryboot.txt
//! or a reboot flag that is not rtscope's is refused and left as it is;
//! a boot without its kernel or command line is refused. Needs no root:
//! it writes below a temporary directory only.

use crate::util::*;
use rtscope::study::reboot::Target;
use rtscope::study::reboot::method::{self, Method};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CONFIG_TXT: &str =
    "# the Pi's own\narm_64bit=1\n[pi4]\ndtoverlay=vc4-kms-v3d\n[all]\nauto_initramfs=1";
const CMDLINE_TXT: &str = "console=serial0,115200 root=PARTUUID=1234-02 rootwait quiet\n";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/raspberrypi/rtscope-tryboot")
}

/// A fake Pi: a firmware folder, `/boot` with two kernels, `/run/systemd`.
struct Pi {
    dir: TempDir,
}

impl Pi {
    fn new(name: &str) -> Pi {
        let dir = TempDir::new(name);
        let w = |p: &str, b: &[u8]| {
            let p = dir.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b).unwrap();
        };
        w("firmware/config.txt", CONFIG_TXT.as_bytes());
        w("firmware/cmdline.txt", CMDLINE_TXT.as_bytes());
        w("firmware/kernel8.img", b"the Pi's own kernel");
        w("firmware/start4.elf", b"firmware");
        w("firmware/overlays/vc4-kms-v3d.dtbo", b"overlay");
        w("boot/vmlinuz-6.6.51-rt", &[0x1f, 0x8b, 8, 0, 1, 2, 3, 0xff]);
        w("boot/initrd.img-6.6.51-rt", b"rt initrd");
        w("boot/vmlinuz-6.6.51+rpt-rpi-v8", b"vanilla kernel");
        std::fs::create_dir_all(dir.join("run/systemd")).unwrap();
        // The hook as a user points a study at it with another firmware
        // folder: a wrapper that sets RTSCOPE_PI_FIRMWARE.
        let wrapper = dir.join("hook");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nRTSCOPE_PI_FIRMWARE='{}' RTSCOPE_PI_REBOOT_PARAM='{}' exec '{}' \"$@\"\n",
                dir.join("firmware").display(),
                dir.join("run/systemd/reboot-param").display(),
                script().display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        Pi { dir }
    }

    fn p(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn hook(&self) -> Method {
        Method::Hook {
            program: self.p("hook").display().to_string(),
        }
    }

    /// The boot a study asks for (home: the boot back).
    fn target(&self, release: &str, initrd: bool, home: bool) -> Target {
        Target {
            config: "kernel rt, command line \"isolcpus=3 nohz_full=3 rcu_nocbs=3\"".into(),
            release: release.into(),
            image: self.p(&format!("boot/vmlinuz-{release}")).display().to_string(),
            initrd: initrd.then(|| self.p(&format!("boot/initrd.img-{release}")).display().to_string()),
            cmdline: "console=ttyS0,115200 root=PARTUUID=1234-02 rootwait quiet isolcpus=3 nohz_full=3 rcu_nocbs=3 panic=10".into(),
            home,
        }
    }

    /// The script run directly with `args` and only the `env` given (and
    /// PATH, the overrides).
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = Command::new(script());
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("RTSCOPE_PI_FIRMWARE", self.p("firmware"))
            .env(
                "RTSCOPE_PI_REBOOT_PARAM",
                self.p("run/systemd/reboot-param"),
            )
            .args(args);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    /// Every file below the firmware folder and `run/systemd`, with its bytes.
    fn files(&self) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        for top in ["firmware", "run/systemd"] {
            let mut stack = vec![self.p(top)];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap() {
                    let p = e.unwrap().path();
                    if p.is_dir() {
                        stack.push(p);
                    } else {
                        let rel = p.strip_prefix(self.dir.path()).unwrap();
                        out.insert(rel.display().to_string(), std::fs::read(&p).unwrap());
                    }
                }
            }
        }
        out
    }

    fn text(&self, rel: &str) -> String {
        std::fs::read_to_string(self.p(rel)).unwrap()
    }
}

/// `files` after `before` gained `added` (names), else unchanged.
#[track_caller]
fn assert_added(
    before: &BTreeMap<String, Vec<u8>>,
    after: &BTreeMap<String, Vec<u8>>,
    added: &[&str],
) {
    let mut want: Vec<&str> = before.keys().map(String::as_str).collect();
    want.extend(added);
    want.sort();
    let got: Vec<&str> = after.keys().map(String::as_str).collect();
    assert_eq!(got, want);
    for (k, v) in before {
        assert_eq!(after.get(k), Some(v), "{k} changed");
    }
}

#[test]
fn boot_writes_its_files_and_the_flag_and_home_and_cancel_remove_only_those() {
    let pi = Pi::new("pi-hook-boot");
    let before = pi.files();
    let rt = pi.target("6.6.51-rt", true, false);
    method::take(
        &pi.hook().arrange(&rt, "seed-001-raspberrypi"),
        Path::new("/"),
    )
    .unwrap();
    let after = pi.files();
    assert_added(
        &before,
        &after,
        &[
            "firmware/rtscope-cmdline.txt",
            "firmware/rtscope-initrd.img",
            "firmware/rtscope-kernel.img",
            "firmware/tryboot.txt",
            "run/systemd/reboot-param",
        ],
    );
    assert_eq!(
        after["firmware/rtscope-kernel.img"],
        std::fs::read(pi.p("boot/vmlinuz-6.6.51-rt")).unwrap()
    );
    assert_eq!(after["firmware/rtscope-initrd.img"], b"rt initrd");
    assert_eq!(
        pi.text("firmware/rtscope-cmdline.txt"),
        format!("{}\n", rt.cmdline)
    );
    assert_eq!(pi.text("run/systemd/reboot-param"), "0 tryboot\n");
    let tryboot = pi.text("firmware/tryboot.txt");
    // rtscope's mark first, as rtscope's own files have it.
    assert!(method::is_ours(&pi.p("firmware/tryboot.txt")), "{tryboot}");
    let mut lines = tryboot.lines();
    assert!(
        lines.next().unwrap().contains("(seed-001-raspberrypi)"),
        "{tryboot}"
    );
    assert_eq!(
        lines.collect::<Vec<_>>().join("\n"),
        format!(
            "# config.txt as it was when this boot was arranged:\n{CONFIG_TXT}\n[all]\n\
             # The boot rtscope asked for: {}, from {}\n\
             kernel=rtscope-kernel.img\ninitramfs rtscope-initrd.img followkernel\ncmdline=rtscope-cmdline.txt",
            rt.config, rt.image
        )
    );

    // Again, with another kernel and no initrd: the same files, the
    // initrd gone, tryboot.txt without an initramfs line.
    let vanilla = pi.target("6.6.51+rpt-rpi-v8", false, false);
    for _ in 0..2 {
        method::take(
            &pi.hook().arrange(&vanilla, "seed-001-raspberrypi"),
            Path::new("/"),
        )
        .unwrap();
    }
    let again = pi.files();
    assert_added(
        &before,
        &again,
        &[
            "firmware/rtscope-cmdline.txt",
            "firmware/rtscope-kernel.img",
            "firmware/tryboot.txt",
            "run/systemd/reboot-param",
        ],
    );
    assert_eq!(again["firmware/rtscope-kernel.img"], b"vanilla kernel");
    let tryboot = pi.text("firmware/tryboot.txt");
    assert!(!tryboot.contains("initramfs rtscope"), "{tryboot}");
    assert!(
        tryboot.ends_with("\nkernel=rtscope-kernel.img\ncmdline=rtscope-cmdline.txt\n"),
        "{tryboot}"
    );

    // cancel (study pause, stop): back to the folder as it was, twice.
    for _ in 0..2 {
        method::take(&pi.hook().cancel("seed-001-raspberrypi"), Path::new("/")).unwrap();
        assert_eq!(pi.files(), before);
    }
    // home (the boot back): the same.
    method::take(&pi.hook().arrange(&rt, "s"), Path::new("/")).unwrap();
    let home = pi.target("6.6.51+rpt-rpi-v8", false, true);
    for _ in 0..2 {
        method::take(&pi.hook().arrange(&home, "s"), Path::new("/")).unwrap();
        assert_eq!(pi.files(), before);
    }
}

#[test]
fn a_tryboot_txt_or_a_reboot_flag_not_rtscope_s_is_refused_and_left_as_it_is() {
    let pi = Pi::new("pi-hook-foreign");
    let theirs = "# another tool's one-time boot\nkernel=other.img\n";
    std::fs::write(pi.p("firmware/tryboot.txt"), theirs).unwrap();
    let before = pi.files();
    let rt = pi.target("6.6.51-rt", true, false);
    let e = method::take(&pi.hook().arrange(&rt, "s"), Path::new("/")).unwrap_err();
    let e = format!("{e:#}");
    assert!(e.contains("tryboot.txt exists and is not rtscope's"), "{e}");
    assert!(e.contains("exit status: 2"), "{e}");
    assert_eq!(pi.files(), before);
    // home and cancel leave it too (and exit 0: nothing of theirs is
    // rtscope's to remove).
    let o = pi.run(&["cancel"], &[]);
    assert_code(&o, 0);
    assert!(
        stderr(&o).contains("is not rtscope's: it is left as it is"),
        "{}",
        stderr(&o)
    );
    assert_code(&pi.run(&["home"], &[]), 0);
    assert_eq!(pi.files(), before);
    // ... with a "0 tryboot" flag beside it, which is then theirs.
    std::fs::write(pi.p("run/systemd/reboot-param"), "0 tryboot\n").unwrap();
    std::fs::write(pi.p("firmware/rtscope-kernel.img"), "left by a boot").unwrap();
    assert_code(&pi.run(&["home"], &[]), 0);
    assert_eq!(pi.text("run/systemd/reboot-param"), "0 tryboot\n");
    assert_eq!(pi.text("firmware/tryboot.txt"), theirs);
    assert!(!pi.p("firmware/rtscope-kernel.img").exists());

    // Another reboot argument: refused, kept; nothing written.
    let pi = Pi::new("pi-hook-flag");
    std::fs::write(pi.p("run/systemd/reboot-param"), "recovery\n").unwrap();
    let before = pi.files();
    let e = method::take(
        &pi.hook().arrange(&pi.target("6.6.51-rt", true, false), "s"),
        Path::new("/"),
    )
    .unwrap_err();
    assert!(
        format!("{e:#}").contains("holds a reboot argument that is not rtscope's (recovery)"),
        "{e:#}"
    );
    assert_eq!(pi.files(), before);
    assert_code(&pi.run(&["cancel"], &[]), 0);
    assert_eq!(pi.files(), before);
}

#[test]
fn a_boot_without_its_kernel_or_command_line_or_firmware_is_refused() {
    let pi = Pi::new("pi-hook-env");
    let before = pi.files();
    let kernel = pi.p("boot/vmlinuz-6.6.51-rt").display().to_string();
    let cases: [(&[(&str, &str)], &str); 4] = [
        (
            &[("RTSCOPE_BOOT_CMDLINE", "root=/dev/mmcblk0p2")],
            "RTSCOPE_BOOT_KERNEL is not set",
        ),
        (
            &[("RTSCOPE_BOOT_KERNEL", &kernel)],
            "RTSCOPE_BOOT_CMDLINE is not set",
        ),
        (
            &[
                ("RTSCOPE_BOOT_KERNEL", "/boot/vmlinuz-0.0-none"),
                ("RTSCOPE_BOOT_CMDLINE", "x"),
            ],
            "the kernel /boot/vmlinuz-0.0-none is not a readable file",
        ),
        (
            &[
                ("RTSCOPE_BOOT_KERNEL", &kernel),
                ("RTSCOPE_BOOT_INITRD", "/boot/initrd.img-0.0-none"),
                ("RTSCOPE_BOOT_CMDLINE", "x"),
            ],
            "the initrd /boot/initrd.img-0.0-none is not a readable file",
        ),
    ];
    for (env, said) in cases {
        let o = pi.run(&["boot"], env);
        assert_code(&o, 2);
        assert!(stderr(&o).contains(said), "{env:?}: {}", stderr(&o));
        assert_eq!(pi.files(), before, "{env:?}");
    }
    // No command, an unknown one.
    assert_code(&pi.run(&[], &[]), 2);
    let o = pi.run(&["reboot"], &[]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("unknown command reboot"),
        "{}",
        stderr(&o)
    );
    // A firmware folder without config.txt (not the Pi's boot partition).
    std::fs::remove_file(pi.p("firmware/config.txt")).unwrap();
    let o = pi.run(
        &["boot"],
        &[
            ("RTSCOPE_BOOT_KERNEL", &kernel),
            ("RTSCOPE_BOOT_CMDLINE", "x"),
        ],
    );
    assert_code(&o, 2);
    assert!(stderr(&o).contains("has no config.txt"), "{}", stderr(&o));
    assert!(!pi.p("firmware/tryboot.txt").exists());
    assert!(!pi.p("run/systemd/reboot-param").exists());
}

/// The example study for a Pi parses, and its dry run plans 16 runs and
/// its boots by the hook (where this machine has fewer than 4 CPUs, its
/// CPU 3 is read as CPU 1: the cells are checked against the CPUs here).
#[test]
fn the_raspberry_pi_example_study_plans_its_boots_by_the_hook() {
    if !require_root() {
        return;
    }
    let _g = shared_system();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/seed-001-raspberrypi.toml");
    let mut text = std::fs::read_to_string(&src).unwrap();
    assert!(text.contains(
        "\nboot-method = \"hook\"\nboot-hook = \"/usr/share/rtscope/rtscope-tryboot\"\n"
    ));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !require(Need::Cpus, cpus >= 2, "two CPUs") {
        return;
    }
    if cpus < 4 {
        text = text.replace("\"3\"", "\"1\"").replace("=3", "=1");
    }
    let dir = TempDir::new("pi-hook-example");
    let file = dir.join("seed-001-raspberrypi.toml");
    std::fs::write(&file, text).unwrap();
    let o = rtscope(dir.path())
        .args([
            "study",
            file.to_str().unwrap(),
            "--reboot",
            "--dry-run",
            "--boot-hook",
        ])
        .arg(script())
        .output()
        .unwrap();
    let out = stdout(&o);
    // The plan is shown whole; configurations no kernel here boots (this
    // is not a Pi) make it exit 2, saying how many.
    let unbootable = out.matches(": cannot be booted here: ").count();
    if unbootable > 0 {
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains(&format!(
                "{unbootable} of 4 boot configurations cannot be booted here"
            )),
            "{}",
            stderr(&o)
        );
    } else {
        assert_code(&o, 0);
    }
    assert_eq!(
        out.lines()
            .filter(|l| l.contains(": rtscope measure "))
            .count(),
        16,
        "{out}"
    );
    assert!(out.contains("\nboots by hook; "), "{out}");
    assert!(out.contains("seed-001-raspberrypi.service"), "{out}");
}
