//! Protecting rtscope's measuring process from the OOM killer while loads
//! run: `/proc/self/oom_score_adj` is read, set to -1000 (never chosen),
//! checked, and put back when the guard is dropped. Load processes get
//! +1000 (chosen first) when they start, so they do not inherit this.
//!
//! A failure to protect is a warning, a failure to restore a loud one;
//! neither is ever a panic.

use std::fs;

const PATH: &str = "/proc/self/oom_score_adj";
pub const PROTECTED: i32 = -1000;

fn read() -> Option<i32> {
    fs::read_to_string(PATH).ok()?.trim().parse().ok()
}

fn write(v: i32) -> std::io::Result<()> {
    fs::write(PATH, format!("{v}\n"))
}

/// Holds the protection; restores the original score on drop.
#[derive(Debug)]
pub struct OomGuard {
    original: i32,
}

/// Why rtscope could not protect itself from the OOM killer (a warning:
/// the load still starts).
#[derive(Debug, thiserror::Error)]
pub enum OomError {
    #[error("{PATH} is not readable")]
    Unreadable,
    #[error(
        "rtscope could not set its oom_score_adj to {PROTECTED} ({0}: needs CAP_SYS_RESOURCE); load processes still get +1000, so the OOM killer picks them first"
    )]
    Refused(std::io::Error),
    #[error(
        "{PATH} reads {0:?} after writing {PROTECTED}: rtscope is not protected from the OOM killer"
    )]
    NotTaken(Option<i32>),
}

impl OomGuard {
    /// Protect this process. Returns the guard, or why it could not.
    pub fn protect() -> Result<OomGuard, OomError> {
        let original = read().ok_or(OomError::Unreadable)?;
        if original == PROTECTED {
            return Ok(OomGuard { original });
        }
        write(PROTECTED).map_err(OomError::Refused)?;
        match read() {
            Some(PROTECTED) => Ok(OomGuard { original }),
            other => {
                let _ = write(original);
                Err(OomError::NotTaken(other))
            }
        }
    }

    #[cfg(test)]
    pub fn original(&self) -> i32 {
        self.original
    }

    /// Put the original score back; returns a warning on failure.
    pub fn restore(self) -> Option<String> {
        let original = self.original;
        std::mem::forget(self);
        restore_to(original)
    }
}

fn restore_to(original: i32) -> Option<String> {
    if read() == Some(original) {
        return None;
    }
    match write(original).ok().and_then(|_| read()) {
        Some(v) if v == original => None,
        other => Some(format!(
            "could not restore {PATH} to {original} (it reads {other:?}): rtscope stays protected from the OOM killer until it exits"
        )),
    }
}

impl Drop for OomGuard {
    fn drop(&mut self) {
        if let Some(w) = restore_to(self.original) {
            crate::ui::say_line(&format!("rtscope: warning: {w}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Does this process hold CAP_SYS_RESOURCE (bit 24 of CapEff), the
    /// capability a lower oom_score_adj needs?
    fn may_lower() -> bool {
        let status = fs::read_to_string("/proc/self/status").unwrap();
        let caps = status
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .expect("CapEff in /proc/self/status");
        u64::from_str_radix(caps.trim(), 16).unwrap() & (1 << 24) != 0
    }

    /// With CAP_SYS_RESOURCE (root, as `make test` runs) the protection
    /// is taken and put back; without it, the refusal is the one a caller
    /// is told of (Refused, permission denied) and nothing changed. Any
    /// other outcome fails: neither an Unreadable file nor a NotTaken
    /// write passes as "not root".
    #[test]
    fn protect_and_restore() {
        let before = read().unwrap();
        let outcome = OomGuard::protect();
        if may_lower() || before == PROTECTED {
            let g = outcome.unwrap_or_else(|e| panic!("with CAP_SYS_RESOURCE: {e}"));
            assert_eq!(read(), Some(PROTECTED));
            assert_eq!(g.original(), before);
            assert_eq!(g.restore(), None);
        } else {
            match outcome {
                Err(OomError::Refused(e)) => {
                    assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}")
                }
                other => panic!("without CAP_SYS_RESOURCE: {other:?}"),
            }
        }
        assert_eq!(read(), Some(before));
    }
}
