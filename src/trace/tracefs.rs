//! Where tracefs is, and mounting it when it is not: the one place that
//! mounts or unmounts (`mount(2)` / `umount(2)` through rustix). Knows
//! nothing of instances or events.

use std::io;
use std::path::{Path, PathBuf};

/// Where rtscope mounts tracefs when nothing has.
pub const DEFAULT_MOUNT: &str = "/sys/kernel/tracing";
/// Where debugfs exposes tracefs (mounted on first access).
const DEBUGFS_TRACING: &str = "/sys/kernel/debug/tracing";

/// The mount points of tracefs in a mounts table (`/proc/self/mounts`):
/// the reader doctor uses too.
pub fn tracefs_mounts(mounts: &str) -> Vec<PathBuf> {
    crate::sysinfo::tracing::tracefs_mounts(mounts)
        .into_iter()
        .map(PathBuf::from)
        .collect()
}

fn mounts_now() -> String {
    std::fs::read_to_string("/proc/self/mounts").unwrap_or_default()
}

/// Is tracefs mounted at `dir` now?
pub fn is_mounted_at(dir: &Path) -> bool {
    tracefs_mounts(&mounts_now()).iter().any(|m| m == dir)
}

/// Is any tracefs mounted now? (What tests compare before and after.)
pub fn mount_points() -> Vec<PathBuf> {
    tracefs_mounts(&mounts_now())
}

/// The tracefs in use: the first mounted one that has `instances`, else
/// the one debugfs exposes. `None`: tracefs is not mounted.
pub fn find() -> Option<PathBuf> {
    let mounted = tracefs_mounts(&mounts_now());
    if let Some(m) = mounted.iter().find(|m| m.join("instances").is_dir()) {
        return Some(m.clone());
    }
    let dbg = Path::new(DEBUGFS_TRACING);
    dbg.join("instances").is_dir().then(|| dbg.to_path_buf())
}

/// `mount("nodev", dir, "tracefs", 0, NULL)`.
pub fn mount(dir: &Path) -> io::Result<()> {
    rustix::mount::mount(
        "nodev",
        dir,
        "tracefs",
        rustix::mount::MountFlags::empty(),
        None,
    )
    .map_err(io::Error::from)
}

/// `umount(dir)`.
pub fn unmount(dir: &Path) -> io::Result<()> {
    rustix::mount::unmount(dir, rustix::mount::UnmountFlags::empty()).map_err(io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_tracefs_in_a_mounts_table() {
        let t = "sysfs /sys sysfs rw 0 0\nnodev /sys/kernel/tracing tracefs rw,relatime 0 0\ntracefs /mnt/my\\040trace tracefs rw 0 0\n";
        assert_eq!(
            tracefs_mounts(t),
            vec![
                PathBuf::from("/sys/kernel/tracing"),
                PathBuf::from("/mnt/my trace")
            ]
        );
        assert!(tracefs_mounts("garbage\n\n").is_empty());
    }
}
