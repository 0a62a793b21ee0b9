//! The one discipline every change goes through: check the request, take
//! the tuning lock, plan (reading every original), then per change write
//! the journal line and sync it BEFORE touching the system, apply, read
//! back. A required change that fails, or SIGINT/SIGTERM while applying,
//! rolls everything back from the journal. `revert` restores a journal in
//! reverse order, idempotently, and keeps only what could not be put back.
//! `--dry-run` goes through `plan` only: it writes nothing, not even the
//! journal.

use super::journal::{self, Change, Header, Journal, JournalError, Lock, Mode, Writer};
use super::{Env, Planned, Request, Restored, SETTINGS, SettingError, refuse, setting};
use crate::sysinfo::{SysRoot, kernel};
use crate::units::format_cpu_list;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TuneError {
    #[error(
        "{what} changes system settings and needs root: run it with sudo (`rtscope tune --status`, `--dry-run` and `rtscope doctor` work without)"
    )]
    NotRoot { what: String },
    #[error("no CPU to isolate: give a list such as 1 or 2-3")]
    NoCpus,
    #[error(
        "CPU {cpus} is not online: bring it online first (echo 1 > /sys/devices/system/cpu/cpuN/online) or leave it out"
    )]
    Offline { cpus: String },
    #[error(
        "isolating CPUs {isolated} leaves no housekeeping CPU (online: {online}): keep at least one CPU for the rest of the system"
    )]
    NoHousekeeping { isolated: String, online: String },
    #[error(
        "--housekeeping {housekeeping} overlaps the isolated CPUs {isolated}: give disjoint lists"
    )]
    Overlap {
        housekeeping: String,
        isolated: String,
    },
    #[error("unknown setting '{name}' in --skip: known settings are {known}")]
    UnknownSetting { name: String, known: String },
    #[error(
        "another rtscope is tuning this system right now (lock {lock}): wait for it, or stop it (it reverts on exit)"
    )]
    Busy { lock: PathBuf },
    #[error(
        "a tuning is already in force ({what}; journal {journal}): revert it first with `rtscope tune --revert`"
    )]
    AlreadyTuned { what: String, journal: PathBuf },
    #[error("planning '{setting}' failed: {error}")]
    Plan {
        setting: String,
        error: SettingError,
    },
    #[error("{setting} {key}: {error}; every change made so far was rolled back{rollback}")]
    Required {
        setting: String,
        key: String,
        error: SettingError,
        rollback: String,
    },
    #[error(
        "interrupted by a signal while tuning; every change made so far was rolled back{rollback}"
    )]
    Interrupted { rollback: String },
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("{error}; every change made so far was rolled back{rollback}")]
    JournalMidway {
        error: JournalError,
        rollback: String,
    },
}

/// What happened (or would happen) to one planned change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "detail", rename_all = "snake_case")]
pub enum Outcome {
    /// Dry run: would be changed.
    Planned,
    /// Not changed: the reason (already as wanted, `--skip`, nothing to
    /// change on this system).
    Skipped(String),
    /// Changed; what the setting noted about it, if anything.
    Done(Option<String>),
    /// Not required and refused by the system (listed, not fatal): the
    /// [`SettingError`]'s message, as the journal keeps it.
    Refused(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Item {
    pub setting: String,
    pub key: String,
    pub original: String,
    pub target: String,
    pub outcome: Outcome,
}

impl Item {
    fn of(p: &Planned, outcome: Outcome) -> Item {
        Item {
            setting: p.change.setting.clone(),
            key: p.change.key.clone(),
            original: p.change.original.clone(),
            target: p.change.target.clone(),
            outcome,
        }
    }
}

/// The result of applying (or planning) a tuning.
pub struct Applied {
    pub items: Vec<Item>,
    pub journal: PathBuf,
    /// Held while the tuning belongs to this process (run mode).
    pub lock: Option<Lock>,
}

/// Check a request against the online CPUs and fill in the housekeeping
/// CPUs (every other online CPU) when not given.
pub fn validate(mut req: Request, online: &[usize]) -> Result<Request, TuneError> {
    req.isolated.sort_unstable();
    req.isolated.dedup();
    if req.isolated.is_empty() {
        return Err(TuneError::NoCpus);
    }
    let not_online = |cpus: &[usize]| -> Vec<usize> {
        cpus.iter()
            .copied()
            .filter(|c| !online.contains(c))
            .collect()
    };
    let off = not_online(&req.isolated);
    if !off.is_empty() {
        return Err(TuneError::Offline {
            cpus: format_cpu_list(&off),
        });
    }
    if req.housekeeping.is_empty() {
        req.housekeeping = online
            .iter()
            .copied()
            .filter(|c| !req.isolated.contains(c))
            .collect();
    } else {
        req.housekeeping.sort_unstable();
        req.housekeeping.dedup();
        let off = not_online(&req.housekeeping);
        if !off.is_empty() {
            return Err(TuneError::Offline {
                cpus: format_cpu_list(&off),
            });
        }
        if req.housekeeping.iter().any(|c| req.isolated.contains(c)) {
            return Err(TuneError::Overlap {
                housekeeping: format_cpu_list(&req.housekeeping),
                isolated: format_cpu_list(&req.isolated),
            });
        }
    }
    if req.housekeeping.is_empty() {
        return Err(TuneError::NoHousekeeping {
            isolated: format_cpu_list(&req.isolated),
            online: format_cpu_list(online),
        });
    }
    for name in &req.skip {
        if setting(name).is_none() {
            return Err(TuneError::UnknownSetting {
                name: name.clone(),
                known: SETTINGS
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    Ok(req)
}

/// Every change the request would make, in apply order, with the
/// originals read now. Changes nothing.
pub fn plan(env: &Env, req: &Request) -> Result<Vec<Planned>, TuneError> {
    let mut out = Vec::new();
    for s in SETTINGS {
        if req.skip.iter().any(|n| n == s.name) {
            out.push(Planned::nothing(s.name, "left alone (--skip)"));
            continue;
        }
        let planned = (s.plan)(env, req).map_err(|error| TuneError::Plan {
            setting: s.name.into(),
            error,
        })?;
        out.extend(planned);
    }
    Ok(out)
}

/// The dry run: the plan as items. Writes nothing.
pub fn dry_run(env: &Env, req: &Request) -> Result<Vec<Item>, TuneError> {
    Ok(plan(env, req)?
        .iter()
        .map(|p| {
            Item::of(
                p,
                match &p.skip {
                    Some(why) => Outcome::Skipped(why.clone()),
                    None => Outcome::Planned,
                },
            )
        })
        .collect())
}

/// Start time of this process, in clock ticks.
fn own_start_ticks() -> u64 {
    crate::sysinfo::process::task(&SysRoot::host(), std::process::id())
        .map(|t| t.start_ticks)
        .unwrap_or(0)
}

/// Refuse when a tuning is recorded already (a journal from an earlier
/// boot is discarded: the reboot undid it).
fn check_no_tuning(path: &Path) -> Result<Option<String>, TuneError> {
    let Some(j) = Journal::load(path)? else {
        return Ok(None);
    };
    if j.from_earlier_boot() {
        journal::rewrite(&j, &[])?;
        return Ok(Some(format!(
            "discarded {}: it was written before the last reboot, which undid its changes",
            path.display()
        )));
    }
    Err(TuneError::AlreadyTuned {
        what: format!(
            "{} tuning of CPUs {} by `{}`",
            j.header.mode.name(),
            format_cpu_list(&j.header.isolated_cpus),
            j.header.command.join(" ")
        ),
        journal: path.into(),
    })
}

/// Apply a validated request with the full discipline. In `Mode::Run`
/// the returned lock must be kept until the revert.
pub fn apply(
    env: &Env,
    req: &Request,
    mode: Mode,
    stop: Option<&AtomicBool>,
    notes: &mut Vec<String>,
) -> Result<Applied, TuneError> {
    let dir = journal::state_dir();
    let path = journal::journal_path();
    let lock = Lock::try_take(&dir)?.ok_or_else(|| TuneError::Busy {
        lock: dir.join(journal::LOCK_NAME),
    })?;
    if let Some(n) = check_no_tuning(&path)? {
        notes.push(n);
    }
    let planned = plan(env, req)?;
    let header = header(req, mode);
    let mut w = Writer::create(&path, &header)?;
    let mut items = Vec::new();
    let pause_after = test_pause_after();
    let mut made = 0usize;
    // Changes made so far, in memory too: if the journal itself fails
    // midway, they are undone from here.
    let mut done: Vec<Change> = Vec::new();
    let midway = |error: JournalError, done: &[Change]| TuneError::JournalMidway {
        error,
        rollback: rollback_or_memory(env, &path, &header, done),
    };
    for p in &planned {
        if pause_after == Some(made) {
            std::thread::sleep(std::time::Duration::from_secs(30));
        }
        if let Some(why) = &p.skip {
            items.push(Item::of(p, Outcome::Skipped(why.clone())));
            continue;
        }
        if stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
            let rollback = rollback(env, &path);
            return Err(TuneError::Interrupted { rollback });
        }
        let s = setting(&p.change.setting).expect("planned by a registered setting");
        let c = w.change(p.change.clone()).map_err(|e| midway(e, &done))?;
        made += 1;
        done.push(c.clone());
        match (s.apply)(env, &c) {
            Ok(note) => {
                w.result(c.seq, true, note.clone())
                    .map_err(|e| midway(e, &done))?;
                items.push(Item::of(p, Outcome::Done(note)));
            }
            Err(error) => {
                w.result(c.seq, false, Some(error.to_string()))
                    .map_err(|e| midway(e, &done))?;
                if p.required {
                    let rollback = rollback(env, &path);
                    return Err(TuneError::Required {
                        setting: c.setting,
                        key: c.key,
                        error,
                        rollback,
                    });
                }
                items.push(Item::of(p, Outcome::Refused(error.to_string())));
            }
        }
    }
    w.applied().map_err(|e| midway(e, &done))?;
    Ok(Applied {
        items,
        journal: path,
        lock: Some(lock),
    })
}

/// The journal's header: this process, its command line, the CPUs.
fn header(req: &Request, mode: Mode) -> Header {
    Header {
        format: journal::FORMAT,
        boot_id: kernel::boot_id(&SysRoot::host()).unwrap_or_default(),
        pid: std::process::id(),
        pid_start_ticks: own_start_ticks(),
        mode,
        // A password in --db is never written to the journal.
        command: crate::redact::own_command_line(),
        isolated_cpus: req.isolated.clone(),
        housekeeping_cpus: req.housekeeping.clone(),
        started_unix_ns: crate::sys::clock::unix_now_ns(),
    }
}

/// Test hook: stop for a while after N changes, so that a test can kill
/// the process in the middle of applying.
fn test_pause_after() -> Option<usize> {
    std::env::var("RTSCOPE_TUNE_TEST_PAUSE_AFTER")
        .ok()
        .and_then(|v| v.parse().ok())
}

/// Revert after the journal failed midway: from the journal when it can
/// be read back, else from the changes kept in memory.
fn rollback_or_memory(env: &Env, path: &Path, header: &Header, done: &[Change]) -> String {
    if let Ok(Some(_)) = Journal::load(path) {
        return rollback(env, path);
    }
    let j = Journal {
        path: path.to_path_buf(),
        header: header.clone(),
        entries: done
            .iter()
            .map(|c| journal::Entry {
                change: c.clone(),
                ok: Some(true),
                message: None,
            })
            .collect(),
        applied: false,
        unreadable_lines: 0,
    };
    let r = revert(env, &j);
    if r.failed.is_empty() {
        " (from memory: the journal could not be read back)".into()
    } else {
        format!(
            " except: {} (the journal could not be read back: restore these by hand)",
            r.failed
                .iter()
                .map(|(c, e)| format!("{} {} to '{}': {e}", c.setting, c.key, c.original))
                .collect::<Vec<_>>()
                .join("; ")
        )
    }
}

/// Revert what the journal at `path` holds; the text to add to an error.
fn rollback(env: &Env, path: &Path) -> String {
    match Journal::load(path) {
        Ok(Some(j)) => {
            let r = revert(env, &j);
            if r.failed.is_empty() {
                String::new()
            } else {
                format!(
                    " except: {} (journal kept in {}; retry with `rtscope tune --revert`)",
                    r.failed
                        .iter()
                        .map(|(c, e)| format!("{} {}: {e}", c.setting, c.key))
                        .collect::<Vec<_>>()
                        .join("; "),
                    path.display()
                )
            }
        }
        Ok(None) => String::new(),
        Err(e) => format!(" except: the journal could not be read back ({e})"),
    }
}

/// How a revert went.
#[derive(Debug, Default)]
pub struct Reverted {
    pub restored: Vec<(Change, Restored)>,
    pub failed: Vec<(Change, String)>,
}

/// Put back every change of `j`, last first. Restores are idempotent, so
/// a revert that is interrupted can simply be run again. The journal is
/// removed when all is back, else rewritten with what is left.
pub fn revert(env: &Env, j: &Journal) -> Reverted {
    let mut out = Reverted::default();
    let mut keep = Vec::new();
    let stale = j.from_earlier_boot();
    for e in j.entries.iter().rev() {
        let c = &e.change;
        if stale {
            // A reboot already put the boot values back.
            out.restored.push((c.clone(), Restored::Gone));
            continue;
        }
        let result = match setting(&c.setting) {
            Some(s) => (s.restore)(env, c),
            None => Err(refuse!(
                "unknown setting '{}' (journal written by another rtscope version)",
                c.setting
            )),
        };
        match result {
            Ok(r) => out.restored.push((c.clone(), r)),
            Err(err) => {
                out.failed.push((c.clone(), err.to_string()));
                keep.push(e.clone());
            }
        }
    }
    keep.reverse();
    if let Err(err) = journal::rewrite(j, &keep) {
        out.failed.push((
            Change {
                seq: 0,
                setting: "journal".into(),
                key: j.path.display().to_string(),
                original: String::new(),
                target: String::new(),
                extra: serde_json::Value::Null,
            },
            err.to_string(),
        ));
    }
    out
}

/// One journaled change and its value now.
#[derive(Clone, Debug, Serialize)]
pub struct StatusItem {
    pub setting: String,
    pub key: String,
    pub original: String,
    pub target: String,
    pub applied: Option<bool>,
    pub message: Option<String>,
    pub now: Option<String>,
}

pub fn status_items(env: &Env, j: &Journal) -> Vec<StatusItem> {
    j.entries
        .iter()
        .map(|e| {
            let c = &e.change;
            StatusItem {
                setting: c.setting.clone(),
                key: c.key.clone(),
                original: c.original.clone(),
                target: c.target.clone(),
                applied: e.ok,
                message: e.message.clone(),
                now: setting(&c.setting).and_then(|s| (s.current)(env, c)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(iso: &[usize], hk: &[usize]) -> Request {
        Request {
            isolated: iso.to_vec(),
            housekeeping: hk.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn validation_refuses_what_would_hurt() {
        let online = [0, 1, 2, 3];
        let r = validate(req(&[3, 2, 3], &[]), &online).unwrap();
        assert_eq!((r.isolated, r.housekeeping), (vec![2, 3], vec![0, 1]));
        assert!(matches!(
            validate(req(&[0, 1, 2, 3], &[]), &online),
            Err(TuneError::NoHousekeeping { .. })
        ));
        assert!(matches!(
            validate(req(&[5], &[]), &online),
            Err(TuneError::Offline { .. })
        ));
        assert!(matches!(
            validate(req(&[1], &[1, 2]), &online),
            Err(TuneError::Overlap { .. })
        ));
        assert!(matches!(
            validate(req(&[1], &[7]), &online),
            Err(TuneError::Offline { .. })
        ));
        assert!(matches!(
            validate(req(&[], &[]), &online),
            Err(TuneError::NoCpus)
        ));
        let mut bad = req(&[1], &[]);
        bad.skip = vec!["frobnicate".into()];
        let e = validate(bad, &online).unwrap_err().to_string();
        assert!(
            e.contains("frobnicate") && e.contains("irq-affinity"),
            "{e}"
        );
    }

    #[test]
    fn revert_restores_in_reverse_and_a_journal_from_another_boot_is_only_discarded() {
        let t = crate::sysinfo::FakeTree::new(&[
            ("/proc/sys/kernel/timer_migration", "0\n"),
            (
                "/sys/kernel/mm/transparent_hugepage/enabled",
                "always madvise [never]\n",
            ),
        ]);
        let env = Env::new(t.root());
        let path = t.dir.join("state/tune.journal");
        let header = |boot_id: &str| Header {
            format: journal::FORMAT,
            boot_id: boot_id.into(),
            pid: 1,
            pid_start_ticks: 1,
            mode: Mode::Persistent,
            command: vec![],
            isolated_cpus: vec![1],
            housekeeping_cpus: vec![0],
            started_unix_ns: 0,
        };
        let write = |boot_id: &str| {
            let mut w = Writer::create(&path, &header(boot_id)).unwrap();
            for (setting, key, orig, target) in [
                (
                    "timer-migration",
                    "/proc/sys/kernel/timer_migration",
                    "1",
                    "0",
                ),
                (
                    "thp",
                    "/sys/kernel/mm/transparent_hugepage/enabled",
                    "madvise",
                    "never",
                ),
            ] {
                let c = w
                    .change(Planned::new(setting, key, orig, target).change)
                    .unwrap();
                w.result(c.seq, true, None).unwrap();
            }
            w.applied().unwrap();
            Journal::load(&path).unwrap().unwrap()
        };
        // Another boot: nothing is written back, the journal goes.
        let old = write("another-boot");
        assert!(old.from_earlier_boot());
        let r = revert(&env, &old);
        assert!(r.failed.is_empty());
        assert!(r.restored.iter().all(|(_, x)| *x == Restored::Gone));
        assert_eq!(
            env.read("/proc/sys/kernel/timer_migration").as_deref(),
            Some("0")
        );
        assert!(!path.exists());
        // This boot: last change first, then the journal goes; twice is fine.
        let now = write(&kernel::boot_id(&SysRoot::host()).unwrap_or_default());
        let r = revert(&env, &now);
        assert!(r.failed.is_empty(), "{:?}", r.failed);
        assert_eq!(r.restored[0].0.setting, "thp", "reverse order");
        assert_eq!(
            env.read("/proc/sys/kernel/timer_migration").as_deref(),
            Some("1")
        );
        assert_eq!(
            env.read("/sys/kernel/mm/transparent_hugepage/enabled")
                .as_deref(),
            Some("madvise")
        );
        assert!(!path.exists());
        let again = revert(&env, &now);
        assert!(
            again
                .restored
                .iter()
                .all(|(_, x)| *x == Restored::AlreadyOriginal)
        );
    }

    #[test]
    fn a_journal_lost_midway_is_rolled_back_from_memory() {
        // The change was made (the tree holds the target), then the
        // journal vanished: the in-memory list puts the original back.
        let t = crate::sysinfo::FakeTree::new(&[("/proc/sys/kernel/timer_migration", "0\n")]);
        let env = Env::new(t.root());
        let path = t.dir.join("state/never-written.journal");
        let header = Header {
            format: journal::FORMAT,
            boot_id: kernel::boot_id(&SysRoot::host()).unwrap_or_default(),
            pid: 1,
            pid_start_ticks: 1,
            mode: Mode::Run,
            command: vec![],
            isolated_cpus: vec![1],
            housekeeping_cpus: vec![0],
            started_unix_ns: 0,
        };
        let done = vec![
            Planned::new(
                "timer-migration",
                "/proc/sys/kernel/timer_migration",
                "1",
                "0",
            )
            .change,
        ];
        let text = rollback_or_memory(&env, &path, &header, &done);
        assert!(text.contains("from memory"), "{text}");
        assert_eq!(
            env.read("/proc/sys/kernel/timer_migration").as_deref(),
            Some("1")
        );
    }

    #[test]
    fn plan_on_a_fake_tree_reads_originals_and_changes_nothing() {
        let t = crate::sysinfo::FakeTree::new(&[
            ("/proc/mounts", "cgroup /cg cgroup rw,cpuset 0 0\n"),
            ("/cg/cpuset.mems", "0\n"),
            ("/cg/tasks", ""),
            ("/proc/sys/kernel/timer_migration", "1\n"),
            (
                "/sys/kernel/mm/transparent_hugepage/enabled",
                "[always] madvise never\n",
            ),
            (
                "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
                "powersave\n",
            ),
            ("/proc/irq/9/smp_affinity_list", "0-1\n"),
        ]);
        let env = Env::new(t.root());
        let r = validate(req(&[1], &[]), &[0, 1]).unwrap();
        let items = dry_run(&env, &r).unwrap();
        let planned: Vec<(&str, &str, &str)> = items
            .iter()
            .filter(|i| i.outcome == Outcome::Planned)
            .map(|i| (i.setting.as_str(), i.original.as_str(), i.target.as_str()))
            .collect();
        assert!(
            planned.contains(&("timer-migration", "1", "0")),
            "{planned:?}"
        );
        assert!(planned.contains(&("thp", "always", "never")));
        assert!(planned.contains(&("governor", "powersave", "performance")));
        assert!(planned.contains(&("irq-affinity", "0-1", "0")));
        assert!(planned.contains(&("cpuset", "absent", "cpus=1")));
        assert!(
            !planned
                .iter()
                .any(|p| p.0 == "rt-throttling" || p.0 == "dma-latency")
        );
        assert_eq!(
            env.read("/proc/sys/kernel/timer_migration").as_deref(),
            Some("1"),
            "a dry run changes nothing"
        );
        assert!(!env.root.path("/cg/rtscope-rt").exists());
    }
}
