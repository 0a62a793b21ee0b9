//! Remote runs on a real PREEMPT_RT kernel: the RT guest booted with its
//! sshd forwarded to a loopback port plays the board, and rtscope here
//! drives it with `--on ssh://lab-rt` through the system's OpenSSH client
//! and an ssh config of the test's own (the guest's glibc is not this
//! machine's: the board is given the static binary).
//!
//! Facts only: which kernel the runs were measured on, under which host
//! name they were copied here, what doctor says there, that a second
//! fetch copies nothing and that the binary was copied once. Never a
//! timing: under TCG the latencies are the emulator's.

use crate::guest::{Lab, check, one_guest, tail};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The board's name: the ssh config's alias, and the host its runs are
/// recorded under.
const BOARD: &str = "lab-rt";
/// The guest's life, boot included; it is stopped earlier at the end.
const GUEST_TIMEOUT_S: u32 = 600;
/// How long sshd may take to answer after qemu starts (TCG, a machine
/// shared with builds: 1-3 minutes).
const BOOT_WAIT: Duration = Duration::from_secs(240);
/// One rtscope command, the binary's first copy included.
const COMMAND_LIMIT: Duration = Duration::from_secs(300);

#[test]
fn rt_guest_is_measured_from_the_host_over_ssh() {
    let Some(lab) = Lab::get() else {
        return;
    };
    let _one = one_guest();
    let started = Instant::now();
    let dir = temp_dir("remote");
    let mut guest = SshGuest::boot(&lab, &dir, "rt", &[], GUEST_TIMEOUT_S);
    let cfg = dir.join("ssh_config");
    write_config(&cfg, guest.port, &lab);
    guest.wait_for_ssh(&cfg);
    eprintln!(
        "lab: rt guest up over ssh after {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let here = Workstation {
        db: dir.join("local.db"),
        cfg: cfg.clone(),
        boards: dir.join("boards.toml"),
        static_bin: lab.bin.clone(),
    };
    let release = lab.release("rt");

    // measure: started on the board, copied here under the board's name.
    let json = dir.join("rt.json");
    here.on(&["measure", "-D", "5s", "-q", "--json", path(&json)])
        .expect(0, "measure --on");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        run["fingerprint"]["preemption_model"], "rt",
        "{}",
        run["fingerprint"]
    );
    assert_eq!(
        run["fingerprint"]["hostname"], BOARD,
        "{}",
        run["fingerprint"]
    );
    let runs = here
        .here(&["runs", "--host", BOARD])
        .expect(0, "runs --host");
    let rows: Vec<&str> = runs
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(rows.len(), 1, "one run of {BOARD} here:\n{runs}");
    assert!(
        rows[0].contains(" complete ") && rows[0].contains(&release),
        "the run copied from {BOARD} is not a complete run on {release}:\n{runs}"
    );

    // doctor: run there in the foreground, its JSON here.
    let doctor = here.on(&["doctor", "--json"]).expect(0, "doctor --on");
    let doctor: serde_json::Value = serde_json::from_str(&doctor).unwrap_or_else(|e| {
        panic!(
            "doctor --on --json is not JSON ({e}):\n{}",
            tail(&doctor, 20)
        )
    });
    let p = check(&doctor, "preemption");
    assert_eq!(p["status"], "ok", "{p}");
    assert!(p["found"].as_str().unwrap().contains("PREEMPT_RT"), "{p}");

    // characterize: detached there, its record and its --json here.
    let c_json = dir.join("c.json");
    here.on(&[
        "characterize",
        "--only",
        "mutex-handoff",
        "-D",
        "1s",
        "--json",
        path(&c_json),
    ])
    .expect(0, "characterize --on");
    let text = std::fs::read_to_string(&c_json)
        .unwrap_or_else(|e| panic!("characterize --on wrote no {} here: {e}", c_json.display()));
    let c: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        c["fingerprint"]["preemption_model"], "rt",
        "{}",
        c["fingerprint"]
    );
    assert_eq!(c["benches"], serde_json::json!(["mutex-handoff"]));
    assert_eq!(c["complete"], true);
    let runs = here.here(&["runs"]).expect(0, "runs");
    assert!(
        runs.lines().any(|l| l.contains(" characterization ")),
        "the characterization made on {BOARD} is not in the store here:\n{runs}"
    );

    // fetch: everything is here already; twice copies nothing either.
    let url = format!("ssh://{BOARD}");
    here.fetch(&url).expect(0, "the first fetch");
    let second = here.fetch(&url);
    let lines = second.expect(0, "the second fetch");
    assert!(
        lines.lines().count() >= 2 && lines.lines().all(|l| l.contains("already here")),
        "the second fetch copied something:\n{lines}\n{}",
        second.stderr
    );
    assert!(second.stderr.contains(" 0 copied"), "{}", second.stderr);

    // The board holds one copy of the binary, named by its hash, and no
    // run folder once the runs are whole here.
    holds_one_binary(&cfg, &lab.bin);
    let folders = ssh(&cfg, "ls -A /root/.cache/rtscope/runs 2>/dev/null; true")
        .expect(0, "ls runs on the board");
    assert_eq!(folders.trim(), "", "run folders left on the board");

    let left = guest.stop();
    assert!(left.is_empty(), "qemu of the test still running: {left:?}");
    eprintln!("lab: rt over ssh: {:.0} s", started.elapsed().as_secs_f64());
}

/// This machine's side: the binary under test with a local store of the
/// test's own.
struct Workstation {
    db: PathBuf,
    cfg: PathBuf,
    boards: PathBuf,
    static_bin: PathBuf,
}

impl Workstation {
    fn rtscope(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rtscope"));
        c.env("RTSCOPE_BOARDS", &self.boards)
            .env_remove("RTSCOPE_DB")
            .env_remove("RTSCOPE_SSH_CONFIG")
            .arg("--db")
            .arg(&self.db);
        c
    }

    /// `rtscope --on ssh://lab-rt ARGS` with the board's binary.
    fn on(&self, args: &[&str]) -> Out {
        let mut c = self.rtscope();
        c.arg("--ssh-config")
            .arg(&self.cfg)
            .args(["--on", &format!("ssh://{BOARD}")])
            .arg("--binary")
            .arg(&self.static_bin)
            .args(args);
        Out::of(c, args)
    }

    /// `rtscope ARGS` here.
    fn here(&self, args: &[&str]) -> Out {
        let mut c = self.rtscope();
        c.args(args);
        Out::of(c, args)
    }

    fn fetch(&self, url: &str) -> Out {
        let mut c = self.rtscope();
        c.arg("--ssh-config")
            .arg(&self.cfg)
            .arg("--binary")
            .arg(&self.static_bin)
            .args(["fetch", url]);
        Out::of(c, &["fetch", url])
    }
}

/// The board's binary cache holds exactly one file: `bin`, named by its
/// hash as `--on` installs it.
pub fn holds_one_binary(cfg: &Path, bin: &Path) {
    let hash: String = Sha256::digest(std::fs::read(bin).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let bins = ssh(cfg, "ls -A /root/.cache/rtscope/bin").expect(0, "ls bin on the board");
    assert_eq!(
        bins.lines().collect::<Vec<_>>(),
        [format!("rtscope-{}", &hash[..16])],
        "the board's binaries"
    );
}

/// An ssh config naming the guest on `port` as the board [`BOARD`],
/// with the lab's key.
pub fn write_config(cfg: &Path, port: u16, lab: &Lab) {
    std::fs::write(
        cfg,
        format!(
            "Host {BOARD}\n  HostName 127.0.0.1\n  Port {port}\n  User root\n  IdentityFile \"{}\"\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n",
            lab.image.join("id_ed25519").display()
        ),
    )
    .unwrap();
}

/// `ssh -F CFG lab-rt SCRIPT`, as a user would check the board.
pub fn ssh(cfg: &Path, script: &str) -> Out {
    Out::of(ssh_command(cfg, script), &[script])
}

/// The `ssh` command that runs `script` on the guest, never prompting.
pub fn ssh_command(cfg: &Path, script: &str) -> Command {
    let mut c = Command::new("ssh");
    c.arg("-F").arg(cfg).args([
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=5",
        BOARD,
        script,
    ]);
    c
}

/// A command's end: its status (`None`: killed at the limit) and output.
pub struct Out {
    what: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn of(mut c: Command, args: &[&str]) -> Out {
        let (code, stdout, stderr) = bounded(&mut c, COMMAND_LIMIT);
        Out {
            what: args.join(" "),
            code,
            stdout,
            stderr,
        }
    }

    /// Its standard output, after checking that it exited with `code`.
    #[track_caller]
    pub fn expect(&self, code: i32, name: &str) -> String {
        assert_eq!(
            self.code,
            Some(code),
            "{name} ({}): exit {:?} (None: stopped after {} s), expected {code}\nstdout:\n{}\nstderr:\n{}",
            self.what,
            self.code,
            COMMAND_LIMIT.as_secs(),
            tail(&self.stdout, 40),
            tail(&self.stderr, 40)
        );
        self.stdout.clone()
    }
}

/// Run `c` with no input, its output collected, killed after `limit`.
pub fn bounded(c: &mut Command, limit: Duration) -> (Option<i32>, String, String) {
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {c:?}: {e}"));
    let read = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = read(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = read(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let code = loop {
        match child.try_wait().unwrap() {
            Some(s) => break s.code(),
            None if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(100)),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    (code, out.join().unwrap(), err.join().unwrap())
}

/// The RT guest, up with its sshd on a loopback port, until stopped
/// (also when the test fails: [`Drop`]).
pub struct SshGuest {
    script: Child,
    pub port: u16,
    dir: PathBuf,
    stopped: bool,
}

impl SshGuest {
    /// Boot `kernel` with scripts/lab/run's `extra` options, for at most
    /// `timeout_s`.
    pub fn boot(lab: &Lab, dir: &Path, kernel: &str, extra: &[&str], timeout_s: u32) -> SshGuest {
        let port = free_port();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("run.log"))
            .unwrap();
        let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/lab/run");
        // In the test's process group: a Ctrl-C reaches the script too,
        // which then stops qemu.
        let script = Command::new(run)
            .arg("--image")
            .arg(&lab.image)
            .args(["--arch", lab.arch.name()])
            .args(["--kernel", kernel, "--ssh", &port.to_string()])
            .args(["--timeout", &timeout_s.to_string()])
            .args(extra)
            .arg("--console")
            .arg(dir.join("console.log"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        SshGuest {
            script,
            port,
            dir: dir.to_path_buf(),
            stopped: false,
        }
    }

    /// Wait until `ssh lab-rt true` works (the guest booted, sshd up).
    pub fn wait_for_ssh(&mut self, cfg: &Path) {
        let start = Instant::now();
        let mut last = String::new();
        while start.elapsed() < BOOT_WAIT {
            if let Some(s) = self.script.try_wait().unwrap() {
                panic!(
                    "the guest ended before its sshd answered ({s}):\n{}",
                    self.logs()
                );
            }
            let (code, _, err) = bounded(&mut ssh_command(cfg, "true"), Duration::from_secs(60));
            if code == Some(0) {
                return;
            }
            last = err;
            std::thread::sleep(Duration::from_secs(3));
        }
        panic!(
            "the guest's sshd did not answer within {} s (ssh: {})\n{}",
            BOOT_WAIT.as_secs(),
            last.trim(),
            self.logs()
        );
    }

    pub fn logs(&self) -> String {
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
        format!(
            "scripts/lab/run:\n{}\nconsole (end):\n{}",
            tail(&read("run.log"), 20),
            tail(&read("console.log"), 30)
        )
    }

    /// Stop the guest: SIGTERM to scripts/lab/run, which stops qemu by
    /// its PID file; a qemu of ours still there after that is killed.
    /// Returns the qemu processes that were left.
    pub fn stop(&mut self) -> Vec<i32> {
        if !self.stopped {
            self.stopped = true;
            let pid = self.script.id() as i32;
            if self.script.try_wait().ok().flatten().is_none() {
                // SAFETY: a signal to our own child, not yet reaped.
                unsafe { libc::kill(pid, libc::SIGTERM) };
                let start = Instant::now();
                while self.script.try_wait().ok().flatten().is_none() {
                    if start.elapsed() > Duration::from_secs(30) {
                        let _ = self.script.kill();
                        let _ = self.script.wait();
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
        // qemu ends an instant after its stop: look for a few seconds.
        let start = Instant::now();
        let mut left = qemu_of(self.port);
        while !left.is_empty() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(200));
            left = qemu_of(self.port);
        }
        for &p in &left {
            // SAFETY: a qemu whose command line forwards our port.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        left
    }
}

impl Drop for SshGuest {
    fn drop(&mut self) {
        let left = self.stop();
        if std::thread::panicking() {
            eprintln!("{}", self.logs());
            eprintln!("lab: the guest's files are kept in {}", self.dir.display());
            if !left.is_empty() {
                eprintln!("lab: qemu left running, killed: {left:?}");
            }
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The processes that forward `port` to a guest: the test's own qemu (and
/// the `timeout` it runs under).
fn qemu_of(port: u16) -> Vec<i32> {
    let forward = format!("hostfwd=tcp:127.0.0.1:{port}-:22");
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(&forward) {
            pids.push(pid);
        }
    }
    pids
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn temp_dir(what: &str) -> PathBuf {
    let base = std::env::temp_dir();
    for n in 0..1000 {
        let d = base.join(format!("rtscope-lab-{what}-{}-{n}", std::process::id()));
        if std::fs::create_dir(&d).is_ok() {
            return d;
        }
    }
    panic!("no temporary folder for the remote lab test");
}

pub fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}
