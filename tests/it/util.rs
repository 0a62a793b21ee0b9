//! Test helpers: a command for the built binary, temporary directories,
//! and the lock that keeps tests which change the system (isolation,
//! loads) from running while others measure.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static SYSTEM: RwLock<()> = RwLock::new(());

/// Hold while measuring: many measuring tests may run together.
pub fn shared_system() -> RwLockReadGuard<'static, ()> {
    SYSTEM.read().unwrap_or_else(|e| e.into_inner())
}

/// Hold while changing the system (cpusets, IRQs, loads, hogs): no other
/// test runs meanwhile.
pub fn exclusive_system() -> RwLockWriteGuard<'static, ()> {
    SYSTEM.write().unwrap_or_else(|e| e.into_inner())
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rtscope"))
}

/// `rtscope --db DB ARGS…` (a store file or a `postgresql://` URL).
pub fn rt(dir: &TempDir, db: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Output {
    rtscope(dir.path())
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

/// `rtscope --db DB runs export ID --json`, read back.
pub fn export(
    dir: &TempDir,
    db: impl AsRef<std::ffi::OsStr>,
    id: &str,
) -> rtscope::record::RunRecord {
    let o = rt(dir, db, &["runs", "export", id, "--json"]);
    assert_code(&o, 0);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `rtscope` with an isolated environment (its own data directory).
pub fn rtscope(dir: &Path) -> Command {
    let mut c = Command::new(bin());
    c.env("XDG_DATA_HOME", dir.join("data"))
        .env("HOME", dir)
        // Its own CPU locks: tests measure side by side on purpose.
        .env("RTSCOPE_RUN_DIR", dir.join("run"))
        .env_remove("RTSCOPE_DB");
    c
}

pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

pub use crate::need::{Need, require};

/// May this root-only test run? True as root; otherwise the suite's one
/// skip rule ([`require`], tests/common/need.rs): the test fails saying
/// so, or under RTSCOPE_ALLOW_SKIP prints one SKIP line and the caller
/// returns (`if !require_root() { return; }`).
#[track_caller]
pub fn require_root() -> bool {
    require(
        Need::Root,
        is_root(),
        "root: run the tests as root (sudo make test)",
    )
}

/// A fresh temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let mut bytes = [0u8; 8];
        let _ = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
        let tag: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let p = std::env::temp_dir().join(format!("rtscope-it-{name}-{tag}"));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    pub fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Assert the exit code, showing the output when it differs.
#[track_caller]
pub fn assert_code(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "exit status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

pub fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A SCHED_FIFO thread at priority 90 pinned to one CPU that busies it
/// for 20 ms every 100 ms: a known disturbance. Stopped when dropped (also
/// when an assertion fails).
pub struct Hog {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
    /// Its kernel thread id (its comm is [`Hog::COMM`]).
    pub tid: i32,
}

impl Hog {
    /// The hog thread's name, as the kernel shows it.
    pub const COMM: &'static str = "rtscope-hog";

    pub fn start(cpu: usize) -> Hog {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::time::{Duration, Instant};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let body = move || {
            // SAFETY: plain libc calls on this thread with valid arguments.
            let _ = tid_tx.send(unsafe { libc::gettid() });
            // SAFETY: as above.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                assert_eq!(
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
                    0
                );
                let p = libc::sched_param { sched_priority: 90 };
                assert_eq!(libc::sched_setscheduler(0, libc::SCHED_FIFO, &p), 0);
            }
            let mut next = Instant::now();
            while !flag.load(Ordering::Relaxed) {
                let busy_until = Instant::now() + Duration::from_millis(20);
                while Instant::now() < busy_until {
                    std::hint::spin_loop();
                }
                next += Duration::from_millis(100);
                if let Some(d) = next.checked_duration_since(Instant::now()) {
                    std::thread::sleep(d);
                }
            }
        };
        let handle = std::thread::Builder::new()
            .name(Hog::COMM.into())
            .spawn(body)
            .unwrap();
        Hog {
            stop,
            handle: Some(handle),
            tid: tid_rx.recv().unwrap(),
        }
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Wait for `child`, collecting its output as it comes (a full pipe never
/// blocks it); the test fails, with what it printed, when it runs past
/// `limit` (it is killed then).
pub fn wait_output(child: std::process::Child, limit: std::time::Duration) -> Output {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let id = child.id() as i32;
    let (done, killed) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (d, k) = (done.clone(), killed.clone());
    let killer = std::thread::spawn(move || {
        let start = std::time::Instant::now();
        while !d.load(Ordering::SeqCst) {
            if start.elapsed() >= limit {
                k.store(true, Ordering::SeqCst);
                // SAFETY: kill(2) of our own child, not yet reaped.
                unsafe { libc::kill(id, libc::SIGKILL) };
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    let o = child.wait_with_output().unwrap();
    done.store(true, Ordering::SeqCst);
    let _ = killer.join();
    assert!(
        !killed.load(Ordering::SeqCst),
        "rtscope did not finish within {limit:?}\n--- stdout\n{}\n--- stderr\n{}",
        stdout(&o),
        stderr(&o)
    );
    o
}

/// Poll `done` until it holds; fail, saying `what`, after `limit`.
#[track_caller]
pub fn wait_until(what: &str, limit: std::time::Duration, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The body of an HTTP/1.1 answer sent with `Transfer-Encoding: chunked`
/// (the metrics endpoint's and serve's), its chunks joined.
pub fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}
