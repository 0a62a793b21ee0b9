//! Tuning the system for real-time work, always reversibly. Every setting
//! lives in its own file with the same four functions (the rtla model):
//! `plan` reads the original value and says what it would become, `apply`
//! sets it and reads it back, `restore` puts the original back
//! (idempotent: nothing is written when it is already there), `current`
//! reads it for `--status`. [`SETTINGS`] is the one list, in apply order;
//! restore runs in reverse.
//!
//! The discipline around them (journal on disk before touching anything,
//! verify, roll back on a required failure, revert from the journal after
//! a crash) is in `apply`; `revert` is `tune --revert`'s procedure; `session` ties it to `measure --isolate` and
//! warns every rtscope command about a journal left behind. Settings never
//! write outside the paths they plan, never touch cgroups named
//! `rtscope-load-*` (loads own those), and never panic on a system value.

pub mod apply;
pub mod cpuset;
pub mod dma_latency;
pub mod file;
pub mod governor;
pub mod irq;
pub mod irqbalance;
pub mod journal;
pub mod revert;
pub mod rt_throttling;
pub mod session;
pub mod tasks;
pub mod thp;
pub mod timer_migration;
pub mod workqueue;

use crate::sysinfo::SysRoot;
use crate::sysinfo::cgroup::{self, CpusetFs};
use journal::Change;
use thiserror::Error;

/// Where settings are read and written (the real `/`, or a fake tree in
/// unit tests).
#[derive(Clone, Debug)]
pub struct Env {
    pub root: SysRoot,
    pub cpuset: Option<CpusetFs>,
}

impl Env {
    pub fn new(root: SysRoot) -> Env {
        let cpuset = cgroup::cpuset_fs(&root);
        Env { root, cpuset }
    }

    pub fn host() -> Env {
        Env::new(SysRoot::host())
    }

    pub fn read(&self, abs: &str) -> Option<String> {
        self.root.read(abs)
    }

    /// Write `value` to an existing system file (never creates one), the
    /// way a shell's `echo value > file` does.
    pub fn write(&self, abs: &str, value: &str) -> Result<(), WriteError> {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(self.root.path(abs))
            .and_then(|mut f| f.write_all(value.as_bytes()))
            .map_err(|io| WriteError {
                path: abs.to_string(),
                value: value.to_string(),
                io,
            })
    }
}

/// A system file that refused a value. The kernel's error number tells
/// why ([`WriteError::errno`]): a task that exited, a value it will not
/// take, a missing privilege.
#[derive(Debug, Error)]
#[error("writing '{value}' to {path} failed: {io}")]
pub struct WriteError {
    pub path: String,
    pub value: String,
    /// Part of the message rather than its source, so that a cause chain
    /// does not print it twice.
    pub io: std::io::Error,
}

impl WriteError {
    /// The kernel's error number (None when the failure was not the
    /// kernel's).
    pub fn errno(&self) -> Option<i32> {
        self.io.raw_os_error()
    }
}

/// Why a setting could not be planned, applied or restored. Only printed
/// and journaled (never branched on), so each variant words itself for
/// people; the text is what the journal and `tune` print.
#[derive(Debug, Error)]
pub enum SettingError {
    /// A system file refused a value.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The value written does not read back.
    #[error("{path} reads '{read}' after writing '{value}': the kernel did not take it")]
    NotTaken {
        path: String,
        value: String,
        read: String,
    },
    /// The file cannot be read back at all.
    #[error("{path} cannot be read back after writing '{value}'")]
    Unreadable { path: String, value: String },
    /// A journal entry without a field the setting needs (written by
    /// another version, or edited by hand).
    #[error("journal entry without {0}")]
    MissingField(&'static str),
    /// A journal key the setting cannot read (`key`), with the shape it
    /// takes (`shape`).
    #[error("journal key '{key}' is not {shape}")]
    BadKey { key: String, shape: &'static str },
    /// Something only the real system can do, asked of a fake system tree
    /// (unit tests).
    #[error("cannot {0} on a fake system tree")]
    FakeTree(&'static str),
    /// The setting's own reason, already worded for people (what failed,
    /// with what value, what to do; built with `refuse!`): the system
    /// refused or did not do what was asked (no task could be moved, a
    /// process that did not stop or resume, a partition the kernel found
    /// invalid, a holder that did not start), the system is in a state
    /// the setting cannot work from (no cpuset controller, another
    /// tuning's cpuset), a value it cannot take (`--hold-dma-latency`
    /// below 0), or a journal entry naming a setting or cpuset version
    /// this rtscope does not know. Kept as one variant: like the others
    /// it is only printed and journaled, and nothing would branch on
    /// which of these it is.
    #[error("{0}")]
    Refused(String),
}

/// Errors compare by what they say (tests compare whole results).
impl PartialEq for SettingError {
    fn eq(&self, other: &SettingError) -> bool {
        self.to_string() == other.to_string()
    }
}

/// A [`SettingError::Refused`] worded like `format!`.
macro_rules! refuse {
    ($($arg:tt)*) => {
        $crate::tune::SettingError::Refused(format!($($arg)*))
    };
}
pub(crate) use refuse;

/// What the user asked `tune` for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// CPUs reserved for real-time work.
    pub isolated: Vec<usize>,
    /// CPUs everything else runs on.
    pub housekeeping: Vec<usize>,
    /// `--no-rt-throttling`.
    pub no_rt_throttling: bool,
    /// `--hold-dma-latency [US]`.
    pub hold_dma_latency_us: Option<i32>,
    /// Settings not to touch (`--skip`).
    pub skip: Vec<String>,
}

impl Request {
    /// `cpus` without the isolated CPUs, or the housekeeping CPUs when
    /// none is left.
    pub fn off_isolated(&self, cpus: &[usize]) -> Vec<usize> {
        let v: Vec<usize> = cpus
            .iter()
            .copied()
            .filter(|c| !self.isolated.contains(c))
            .collect();
        if v.is_empty() {
            self.housekeeping.clone()
        } else {
            v
        }
    }
}

/// A change `plan` proposes.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    pub change: Change,
    /// A failure aborts the whole tuning (and rolls it back).
    pub required: bool,
    /// Not done, and why (already at target, not available ...).
    pub skip: Option<String>,
}

impl Planned {
    pub fn new(setting: &str, key: &str, original: &str, target: &str) -> Planned {
        Planned {
            change: Change {
                seq: 0,
                setting: setting.into(),
                key: key.into(),
                original: original.into(),
                target: target.into(),
                extra: serde_json::Value::Null,
            },
            required: false,
            skip: None,
        }
    }

    pub fn required(mut self) -> Planned {
        self.required = true;
        self
    }

    pub fn skipped(mut self, why: impl Into<String>) -> Planned {
        self.skip = Some(why.into());
        self
    }

    pub fn with_extra(mut self, extra: serde_json::Value) -> Planned {
        self.change.extra = extra;
        self
    }

    /// A line that says nothing will be changed here, and why.
    pub fn nothing(setting: &str, why: impl Into<String>) -> Planned {
        Planned::new(setting, "-", "", "").skipped(why)
    }
}

/// How a restore went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restored {
    /// The original value was written back and read back.
    Done(Option<String>),
    /// The original value was already there; nothing written.
    AlreadyOriginal,
    /// What was changed no longer exists (an IRQ, a process).
    Gone,
}

/// One tunable, described by itself.
pub struct Setting {
    /// Name used in the journal, `--skip` and reports.
    pub name: &'static str,
    /// What it changes and why (one line).
    pub about: &'static str,
    /// `None`: part of `tune isolate`; `Some(flag)`: only with that flag.
    pub opt_in: Option<&'static str>,
    pub plan: fn(&Env, &Request) -> Result<Vec<Planned>, SettingError>,
    /// Set the target value, then read it back; `Ok(note)`.
    pub apply: fn(&Env, &Change) -> Result<Option<String>, SettingError>,
    pub restore: fn(&Env, &Change) -> Result<Restored, SettingError>,
    /// The value now, for `--status`.
    pub current: fn(&Env, &Change) -> Option<String>,
}

/// Every setting, in the order they are applied (reverted in reverse).
/// irqbalance is paused before IRQs are moved, or it would move them back.
pub static SETTINGS: &[&Setting] = &[
    &cpuset::SETTING,
    &tasks::SETTING,
    &irqbalance::SETTING,
    &irq::SETTING,
    &workqueue::SETTING,
    &timer_migration::SETTING,
    &governor::SETTING,
    &thp::SETTING,
    &rt_throttling::SETTING,
    &dma_latency::SETTING,
];

pub fn setting(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().copied().find(|s| s.name == name)
}

/// Is this cpuset one of rtscope's isolation cpusets (and not a load's)?
pub fn is_isolation_cpuset(name: &str) -> bool {
    name == cpuset::RT_NAME || name == cpuset::SYSTEM_NAME
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_and_described() {
        let mut names: Vec<&str> = SETTINGS.iter().map(|s| s.name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
        for s in SETTINGS {
            assert!(!s.about.is_empty(), "{}", s.name);
            assert!(setting(s.name).is_some());
        }
        assert!(!is_isolation_cpuset("rtscope-load-123"));
        assert!(is_isolation_cpuset("rtscope-rt"));
    }

    /// A journal entry a setting cannot act on is named for what is wrong
    /// with it, never filed with the settings' own refusals.
    #[test]
    fn journal_entries_a_setting_cannot_act_on_say_what_is_wrong() {
        let t = crate::sysinfo::FakeTree::new(&[("/proc/1/stat", "1 (init) S 0\n")]);
        let env = Env::new(t.root());
        let change = |name: &str, key: &str| Planned::new(name, key, "a", "b").change;
        let irqbalance = setting("irqbalance").unwrap();
        let e = (irqbalance.restore)(&env, &change("irqbalance", "12")).unwrap_err();
        assert!(matches!(e, SettingError::BadKey { .. }), "{e:?}");
        assert_eq!(e.to_string(), "journal key '12' is not PID@START");
        let tasks = setting("tasks").unwrap();
        let e = (tasks.apply)(&env, &change("tasks", "/cg/tasks")).unwrap_err();
        assert!(matches!(e, SettingError::MissingField("target")), "{e:?}");
        assert_eq!(e.to_string(), "journal entry without target");
        let dma = setting("dma-latency").unwrap();
        let e = (dma.apply)(&env, &change("dma-latency", dma_latency::DEVICE)).unwrap_err();
        assert!(matches!(e, SettingError::FakeTree(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "cannot start a holder process on a fake system tree"
        );
    }
}
