//! Resource limits of this process that decide whether real-time work is
//! possible without root: locked memory (RLIMIT_MEMLOCK) and real-time
//! priority (RLIMIT_RTPRIO), from `/proc/self/limits`, and whether the
//! process is root.

use super::SysRoot;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Soft limit in bytes; `None` = unlimited.
    pub memlock_bytes: Option<Option<u64>>,
    /// Soft limit; `None` = unlimited.
    pub rtprio: Option<Option<u64>>,
    pub is_root: bool,
}

fn soft_limit(text: &str, name: &str) -> Option<Option<u64>> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let soft = line[name.len()..].split_whitespace().next()?;
    if soft == "unlimited" {
        Some(None)
    } else {
        soft.parse().ok().map(Some)
    }
}

pub fn limits(root: &SysRoot) -> Limits {
    let text = root.read("/proc/self/limits").unwrap_or_default();
    let is_root = root
        .read("/proc/self/status")
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false);
    Limits {
        memlock_bytes: soft_limit(&text, "Max locked memory"),
        rtprio: soft_limit(&text, "Max realtime priority"),
        is_root,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    #[test]
    fn limits_from_proc() {
        let t = FakeTree::new(&[
            (
                "/proc/self/limits",
                "Limit                     Soft Limit           Hard Limit           Units\n\
                 Max locked memory         65536                65536                bytes\n\
                 Max realtime priority     unlimited            unlimited\n",
            ),
            ("/proc/self/status", "Uid:\t1000\t1000\t1000\t1000\n"),
        ]);
        let l = limits(&t.root());
        assert_eq!(l.memlock_bytes, Some(Some(65536)));
        assert_eq!(l.rtprio, Some(None));
        assert!(!l.is_root);
    }
}
