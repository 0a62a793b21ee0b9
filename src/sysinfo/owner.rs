//! Which process writes a running run, and whether it still lives: host
//! name, boot id (`/proc/sys/kernel/random/boot_id`), pid and the
//! process's start time in clock ticks since boot (`/proc/PID/stat`, field
//! 22), so that a reused pid or a reboot is never mistaken for the writer.
//! Read-only: looks at /proc, changes nothing.

use std::path::Path;

/// The writer of a running run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub host: String,
    pub boot_id: String,
    pub pid: u32,
    pub start_ticks: u64,
}

/// What can be said of an owner from here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    Gone,
    /// Another host: cannot be checked from this one.
    Unknown,
}

/// This host's name.
fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// This boot's id.
fn boot_id() -> String {
    crate::sysinfo::kernel::boot_id(&crate::sysinfo::SysRoot::host()).unwrap_or_default()
}

/// Start time (clock ticks after boot) of `pid`, from `/proc/PID/stat`.
pub fn start_ticks(proc_root: &Path, pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")).ok()?;
    crate::sysinfo::process::parse_stat(&stat)?.start_ticks
}

impl Owner {
    /// This process.
    pub fn this_process() -> Owner {
        let pid = std::process::id();
        Owner {
            host: host(),
            boot_id: boot_id(),
            pid,
            start_ticks: start_ticks(Path::new("/proc"), pid).unwrap_or(0),
        }
    }

    /// Whether this owner's process still runs, seen from this host.
    pub fn liveness(&self) -> Liveness {
        if self.host != host() {
            return Liveness::Unknown;
        }
        if self.boot_id != boot_id() {
            return Liveness::Gone;
        }
        match start_ticks(Path::new("/proc"), self.pid) {
            Some(t) if t == self.start_ticks => Liveness::Alive,
            _ => Liveness::Gone,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_others_are_not() {
        let me = Owner::this_process();
        assert!(me.pid > 0 && me.start_ticks > 0 && !me.boot_id.is_empty());
        assert_eq!(me.liveness(), Liveness::Alive);
        let reused = Owner {
            start_ticks: me.start_ticks + 1,
            ..me.clone()
        };
        assert_eq!(reused.liveness(), Liveness::Gone);
        let rebooted = Owner {
            boot_id: "00000000-0000-0000-0000-000000000000".into(),
            ..me.clone()
        };
        assert_eq!(rebooted.liveness(), Liveness::Gone);
        let elsewhere = Owner {
            host: format!("{}-elsewhere", me.host),
            ..me
        };
        assert_eq!(elsewhere.liveness(), Liveness::Unknown);
    }

    #[test]
    fn stat_with_parentheses_in_the_name() {
        let d =
            std::env::temp_dir().join(format!("rtscope-owner-{}", crate::record::new_run_uuid()));
        std::fs::create_dir_all(d.join("42")).unwrap();
        let mut fields = vec!["S".to_string()];
        for i in 4..=22 {
            fields.push(i.to_string());
        }
        std::fs::write(
            d.join("42/stat"),
            format!("42 (a (b) c) {} 23 24\n", fields.join(" ")),
        )
        .unwrap();
        assert_eq!(start_ticks(&d, 42), Some(22));
        assert_eq!(start_ticks(&d, 43), None);
        std::fs::remove_dir_all(d).ok();
    }
}
