//! Read-only facts about the system: kernel, preemption model, CPUs,
//! command line. Everything is read below a root directory (`/` on a real
//! system, a fake tree in tests) so that configurations this machine does
//! not have can be tested. Nothing here changes the system.

pub mod cpu;
pub mod fingerprint;
pub mod kernel;

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
}
