//! Read-only facts about the system: kernel, preemption model, timers,
//! RCU, command line, CPUs (frequency, idle states, SMT), IRQs, memory,
//! limits, virtualization, watchdogs, scheduler knobs and debug options,
//! the tracers selected, cpusets and the tuning rtscope applied; the board
//! (architecture, device-tree model) and a Raspberry Pi's firmware state
//! and boot files. Everything is read below a root directory (`/`
//! on a real system, a fake tree in tests) so that configurations this
//! machine does not have can be tested. Nothing here changes the system.
//!
//! One file per area; [`facts::Facts`] gathers them all once, and both
//! `doctor` and the run fingerprint read that, so every fact is read one
//! way only.

pub mod board;
pub mod cgroup;
pub mod cmdline;
pub mod cpu;
pub mod cpufreq;
pub mod cpuidle;
pub mod facts;
pub mod fingerprint;
pub mod irq;
pub mod journal;
pub mod kernel;
pub mod kernel_match;
pub mod limits;
pub mod memory;
pub mod owner;
pub mod process;
pub mod raspberrypi;
pub mod rcu;
pub mod sched;
pub mod timers;
pub mod topology;
pub mod tracing;
pub mod tuning;
pub mod virt;
pub mod watchdog;

use std::path::{Path, PathBuf};

/// Where system files are read from.
#[derive(Clone, Debug)]
pub struct SysRoot {
    root: PathBuf,
}

impl Default for SysRoot {
    fn default() -> Self {
        SysRoot::host()
    }
}

impl SysRoot {
    /// The running system.
    pub fn host() -> SysRoot {
        SysRoot {
            root: PathBuf::from("/"),
        }
    }

    /// A fake tree (tests).
    pub fn at(root: impl Into<PathBuf>) -> SysRoot {
        SysRoot { root: root.into() }
    }

    pub fn is_host(&self) -> bool {
        self.root == Path::new("/")
    }

    /// The real path of an absolute system path such as `/proc/cmdline`.
    pub fn path(&self, abs: &str) -> PathBuf {
        self.root.join(abs.trim_start_matches('/'))
    }

    /// File contents, trimmed; `None` when missing or unreadable.
    pub fn read(&self, abs: &str) -> Option<String> {
        std::fs::read_to_string(self.path(abs))
            .ok()
            .map(|s| s.trim().to_string())
    }

    pub fn exists(&self, abs: &str) -> bool {
        self.path(abs).exists()
    }

    /// Raw bytes (for gzip files).
    pub fn read_bytes(&self, abs: &str) -> Option<Vec<u8>> {
        std::fs::read(self.path(abs)).ok()
    }

    /// A CPU list file (`0-3,6`); an empty file is an empty list.
    pub fn read_cpus(&self, abs: &str) -> Option<Vec<usize>> {
        let s = self.read(abs)?;
        if s.is_empty() {
            return Some(Vec::new());
        }
        crate::units::parse_cpu_list(&s).ok()
    }

    /// A file holding one integer.
    pub fn read_i64(&self, abs: &str) -> Option<i64> {
        self.read(abs)?.parse().ok()
    }

    /// Names in a directory, sorted; empty when missing.
    pub fn list(&self, abs: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(abs))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort_by_key(|a| natural(a));
        names
    }
}

/// Sort key that puts `cpu2` before `cpu10`, `9` before `10` and
/// `6.1.0-9` before `6.1.0-27`: runs of digits compare as numbers (and
/// before text), the rest as text.
pub fn natural(s: &str) -> Vec<(bool, u64, String)> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.starts_with(|c: char| c.is_ascii_digit());
        let end = rest
            .find(|c: char| c.is_ascii_digit() != digits)
            .unwrap_or(rest.len());
        let (chunk, tail) = rest.split_at(end);
        out.push(if digits {
            (false, chunk.parse().unwrap_or(u64::MAX), String::new())
        } else {
            (true, 0, chunk.to_string())
        });
        rest = tail;
    }
    out
}

#[cfg(test)]
impl SysRoot {
    /// A tree of real files kept in tests/fixtures/NAME (a Raspberry Pi's,
    /// the arm64 lab guests'), for the unit tests.
    pub fn fixture(name: &str) -> SysRoot {
        SysRoot::at(format!(
            "{}/tests/fixtures/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
    }
}

/// A fake system tree for tests: files written below a fresh temporary
/// directory, removed on drop.
#[doc(hidden)]
pub struct FakeTree {
    pub dir: PathBuf,
}

impl FakeTree {
    /// A tree holding `files`: (absolute system path, contents).
    pub fn new<P: AsRef<str>, T: AsRef<str>>(files: &[(P, T)]) -> FakeTree {
        let dir = std::env::temp_dir().join(format!(
            "rtscope-fake-{}-{}",
            std::process::id(),
            crate::record::new_run_uuid()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let t = FakeTree { dir };
        for (p, text) in files {
            t.write(p.as_ref(), text.as_ref());
        }
        t
    }

    pub fn write(&self, abs: &str, text: &str) {
        let p = self.dir.join(abs.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    pub fn root(&self) -> SysRoot {
        SysRoot::at(&self.dir)
    }
}

impl Drop for FakeTree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
