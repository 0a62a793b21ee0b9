//! Booting a lab guest from a test: the job folder (the static rtscope,
//! job.sh made of the jobs/ parts), `scripts/lab/run`, and what the guest
//! left in out/. One guest at a time: each wants both CPUs. A guest is
//! amd64 (RTSCOPE_LAB_IMAGE, RTSCOPE_STATIC_BIN) or arm64
//! (RTSCOPE_LAB_IMAGE_ARM64, RTSCOPE_STATIC_BIN_ARM64, else the aarch64
//! build under target/).

use crate::need::{Need, require};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

static ONE_GUEST: Mutex<()> = Mutex::new(());

/// Held while a guest runs: one at a time, each wants both CPUs. `make
/// test` runs the amd64 and the arm64 lab in two processes side by side
/// (each beside other work), so the turn is also a lock on a file the two
/// share (flock: released when the process ends, however it ends).
pub struct GuestTurn {
    _thread: std::sync::MutexGuard<'static, ()>,
    _process: std::fs::File,
}

pub fn one_guest() -> GuestTurn {
    let thread = ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner());
    let path = std::env::temp_dir().join("rtscope-lab-guest.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("the lab's guest lock {}: {e}", path.display()));
    let waited = std::time::Instant::now();
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
        .unwrap_or_else(|e| panic!("the lab's guest lock {}: {e}", path.display()));
    if waited.elapsed().as_secs() >= 5 {
        eprintln!(
            "lab: waited {:.0} s for the other lab's guest to end",
            waited.elapsed().as_secs_f64()
        );
    }
    GuestTurn {
        _thread: thread,
        _process: file,
    }
}

/// A guest architecture: the variables that name its image and its
/// static binary (scripts/lab/prepare ARCH prints the image's folder).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    Amd64,
    Arm64,
}

impl Arch {
    pub fn name(self) -> &'static str {
        match self {
            Arch::Amd64 => "amd64",
            Arch::Arm64 => "arm64",
        }
    }

    fn image_var(self) -> &'static str {
        match self {
            Arch::Amd64 => "RTSCOPE_LAB_IMAGE",
            Arch::Arm64 => "RTSCOPE_LAB_IMAGE_ARM64",
        }
    }

    fn bin_var(self) -> &'static str {
        match self {
            Arch::Amd64 => "RTSCOPE_STATIC_BIN",
            Arch::Arm64 => "RTSCOPE_STATIC_BIN_ARM64",
        }
    }

    /// The build `--on` finds by itself for a board of this kind
    /// (src/remote/deploy.rs): target/<triple>/release/rtscope in the
    /// `target/` the binary under test is in (target/release/rtscope, or
    /// target/<host triple>/release/rtscope as `make test` builds it).
    pub fn target_bin(self) -> Option<PathBuf> {
        let triple = match self {
            Arch::Amd64 => return None,
            Arch::Arm64 => "aarch64-unknown-linux-gnu",
        };
        let target = Path::new(env!("CARGO_BIN_EXE_rtscope"))
            .ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == "target"))?;
        Some(target.join(triple).join("release").join("rtscope"))
    }
}

/// The lab as `make test` prepared it: the image's folder and the static
/// binary the guests run. Without the image (its variable unset, as in a
/// plain `cargo test`, or empty, as `make test` leaves it where
/// scripts/lab/prepare declined: not root, no room, no qemu) the test
/// fails saying so, unless RTSCOPE_ALLOW_SKIP allows `lab` (`make test
/// RTSCOPE_LAB=0` does): then one SKIP line and `None`.
pub struct Lab {
    pub arch: Arch,
    pub image: PathBuf,
    pub bin: PathBuf,
}

impl Lab {
    /// The amd64 lab.
    pub fn get() -> Option<Lab> {
        Lab::of(Arch::Amd64)
    }

    /// The lab of `arch`. An arm64 image given with no aarch64 build at
    /// hand fails the test: prepare built the image because it could.
    pub fn of(arch: Arch) -> Option<Lab> {
        // Set but empty is what `make test` passes when scripts/lab/prepare
        // declined (it said why in its SKIP line): the same as unset.
        let image = std::env::var_os(arch.image_var()).filter(|v| !v.is_empty());
        let bin = std::env::var_os(arch.bin_var())
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let bin = match (&image, bin) {
            (Some(_), None) if arch == Arch::Arm64 => arch.target_bin(),
            (_, bin) => bin,
        };
        match (image, bin) {
            (Some(image), Some(bin)) => {
                let lab = Lab {
                    arch,
                    image: image.into(),
                    bin,
                };
                assert!(
                    lab.image.join("ready").exists(),
                    "{}={} is not a ready lab image",
                    arch.image_var(),
                    lab.image.display()
                );
                assert!(
                    lab.bin.exists(),
                    "the {} guests' static rtscope {} is missing ({}; for arm64: make static-arm64)",
                    arch.name(),
                    lab.bin.display(),
                    arch.bin_var()
                );
                Some(lab)
            }
            (image, _) => {
                // The suite's one skip rule (tests/common/need.rs): a lab
                // test without the lab fails and says what it needs,
                // unless RTSCOPE_ALLOW_SKIP allows `lab` (one SKIP line).
                let why = match image {
                    None => format!(
                        "the {} lab: {} is unset or empty (make test sets it where scripts/lab/prepare can build the image; prepare's `SKIP lab` line above says why it did not; RTSCOPE_LAB=0 leaves the lab out on purpose)",
                        arch.name(),
                        arch.image_var()
                    ),
                    Some(_) => format!(
                        "the {} guests' static rtscope in {}",
                        arch.name(),
                        arch.bin_var()
                    ),
                };
                require(
                    Need::Lab,
                    false,
                    &format!("{why}; `make test` or `make lab` set them"),
                );
                None
            }
        }
    }

    /// The kernel release a guest kernel (`vanilla` or `rt`) boots.
    pub fn release(&self, kernel: &str) -> String {
        std::fs::read_to_string(self.image.join(format!("release-{kernel}")))
            .unwrap()
            .trim()
            .to_string()
    }

    /// Boot `kernel` with `append`, run the job made of `parts` (files of
    /// tests/lab/jobs, in order), and return what the guest left.
    pub fn boot(&self, kernel: &str, append: &str, parts: &[&str], timeout_s: u32) -> Guest {
        self.boot_smp(kernel, append, parts, timeout_s, 2)
    }

    /// [`Lab::boot`] with `smp` vCPUs (scripts/lab/run's `--smp`).
    pub fn boot_smp(
        &self,
        kernel: &str,
        append: &str,
        parts: &[&str],
        timeout_s: u32,
        smp: u32,
    ) -> Guest {
        let _one = one_guest();
        let dir = tempfile(kernel);
        std::fs::copy(&self.bin, dir.join("rtscope")).unwrap();
        let jobs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lab/jobs");
        let mut script = String::from("#!/bin/sh\n");
        for p in ["prelude.sh"].iter().chain(parts) {
            script += &std::fs::read_to_string(jobs.join(p)).unwrap();
            script.push('\n');
        }
        let job = dir.join("job.sh");
        std::fs::write(&job, script).unwrap();
        set_executable(&job);
        let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/lab/run");
        let started = std::time::Instant::now();
        let o = Command::new(run)
            .arg("--image")
            .arg(&self.image)
            .args(["--arch", self.arch.name()])
            .args(["--kernel", kernel, "--append", append, "--timeout"])
            .arg(timeout_s.to_string())
            .arg("--smp")
            .arg(smp.to_string())
            .arg("--job")
            .arg(&dir)
            .output()
            .unwrap();
        let g = Guest {
            out: dir.join("out"),
            dir,
            status: o.status.code(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        };
        eprintln!(
            "lab: {} {kernel} '{append}': {:.0} s, exit {:?}",
            self.arch.name(),
            started.elapsed().as_secs_f64(),
            g.status
        );
        assert_eq!(
            g.status,
            Some(0),
            "the {} {kernel} guest's job failed: {}\njob.log:\n{}\nconsole (end):\n{}",
            self.arch.name(),
            g.stderr,
            g.file("job.log"),
            tail(&g.file("console.log"), 30)
        );
        g
    }
}

/// What a guest's job left in its out/ folder.
pub struct Guest {
    pub dir: PathBuf,
    pub out: PathBuf,
    pub status: Option<i32>,
    pub stderr: String,
}

impl Guest {
    /// out/NAME, or "" when the job did not write it.
    pub fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.out.join(name)).unwrap_or_default()
    }

    /// A step's standard output (the prelude's `step NAME ...`), after
    /// checking that it exited with `code`.
    #[track_caller]
    pub fn step(&self, name: &str, code: i32) -> String {
        let exit = self.file(&format!("{name}.exit"));
        assert_eq!(
            exit.trim(),
            code.to_string(),
            "guest step {name}: exit {exit:?}, expected {code}\nstdout:\n{}\nstderr:\n{}",
            tail(&self.file(&format!("{name}.out")), 40),
            tail(&self.file(&format!("{name}.err")), 40)
        );
        self.file(&format!("{name}.out"))
    }

    pub fn json(&self, name: &str) -> serde_json::Value {
        let text = self.file(name);
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("guest file {name} is not JSON ({e}): {}", tail(&text, 20)))
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            eprintln!("lab: the guest's files are kept in {}", self.dir.display());
        }
    }
}

fn tempfile(kernel: &str) -> PathBuf {
    let base = std::env::temp_dir();
    for n in 0..1000 {
        let d = base.join(format!(
            "rtscope-lab-job-{kernel}-{}-{n}",
            std::process::id()
        ));
        if std::fs::create_dir(&d).is_ok() {
            return d;
        }
    }
    panic!("no temporary folder for the lab job");
}

fn set_executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

pub fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

/// A doctor check by id, from `doctor --json`.
pub fn check<'a>(doctor: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("doctor has no check {id}"))
}

/// The report's headline (`<p class="headline">`), entities decoded.
pub fn headline(html: &str) -> String {
    let start = html
        .find("<p class=\"headline\">")
        .expect("the report has a headline")
        + "<p class=\"headline\">".len();
    let end = start + html[start..].find("</p>").unwrap();
    html[start..end]
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#x27;", "'")
        .replace("&quot;", "\"")
}
