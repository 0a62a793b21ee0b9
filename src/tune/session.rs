//! Tuning seen from other commands: the warning every rtscope command
//! prints when a crashed rtscope left changes behind, and the isolation
//! that `measure --isolate` holds for one run (applied before the threads
//! start, the measuring process placed in `rtscope-rt`, its control
//! thread moved back to the housekeeping CPUs once the threads run, and
//! everything reverted when the run ends, on Ctrl-C/SIGTERM, on an error,
//! or on a panic). A SIGKILL leaves the journal; the next command warns.

use super::apply::{self, Outcome, TuneError};
use super::cpuset::{RT_NAME, SYSTEM_NAME};
use super::journal::{self, Journal, Lock, Mode};
use super::revert::{RevertError, RevertResult};
use super::{Env, Request, Restored, SettingError};
use crate::engine::{Control, Observer, RunView};
use crate::sysinfo::cgroup::CpusetVersion;
use crate::sysinfo::tuning::{self, TuningState};
use crate::sysinfo::{SysRoot, cpu};
use crate::units::format_cpu_list;
use std::sync::atomic::AtomicBool;
use thiserror::Error;

/// A one-line warning when a tuning journal was left by an rtscope that
/// did not finish (crash, SIGKILL) or by an earlier boot; `None` when
/// there is nothing to say. Cheap: one stat when there is no journal.
pub fn pending_warning() -> Option<String> {
    let path = journal::journal_path();
    if !path.exists() {
        return None;
    }
    let t = tuning::tuning(&SysRoot::host());
    let Some(t) = t else {
        return Some(format!(
            "warning: the tuning journal {} cannot be read: check it, then run `sudo rtscope tune --revert`",
            path.display()
        ));
    };
    match t.state {
        TuningState::Applied | TuningState::InUse => None,
        TuningState::Stale => Some(format!(
            "note: the tuning journal {} is from before the last reboot (its changes are gone); `sudo rtscope tune --revert` discards it",
            path.display()
        )),
        TuningState::Abandoned => Some(format!(
            "warning: rtscope (pid {}, `{}`) ended without undoing its tuning of CPUs {}: {} changes are still applied; undo them with `sudo rtscope tune --revert`",
            t.pid,
            t.command.join(" "),
            format_cpu_list(&t.isolated_cpus),
            t.changes
        )),
    }
}

/// An isolation left applied by an rtscope that died (a crash, SIGKILL)
/// before it undid it: the isolated CPUs are kept apart and every other
/// task, the next rtscope included, is confined to the housekeeping ones,
/// so a command that measures refuses to start under it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "an isolation left by rtscope (pid {pid}, `{command}`, no longer running) still keeps CPUs {isolated} apart and confines every other task, this one included, to CPUs {housekeeping}: put it back with `sudo rtscope tune --revert`{study_hint}, then retry"
)]
pub struct LeftIsolation {
    pub pid: u32,
    /// The dead process's command line, joined.
    pub command: String,
    pub isolated: String,
    pub housekeeping: String,
    /// `, or \`rtscope study resume\` ...` when a study runner left it.
    study_hint: String,
    /// A study runner left it (its `study resume` puts it back).
    pub by_study: bool,
}

/// The isolation an rtscope that died left applied, if any (a journal
/// whose owner is gone and that was not meant to stay). Cheap: one stat
/// when there is no journal.
pub fn left_isolation() -> Option<LeftIsolation> {
    if !journal::journal_path().exists() {
        return None;
    }
    let t = tuning::tuning(&SysRoot::host())?;
    if t.state != TuningState::Abandoned {
        return None;
    }
    let by_study = t.command.iter().skip(1).any(|w| w == "study");
    Some(LeftIsolation {
        pid: t.pid,
        command: t.command.join(" "),
        isolated: format_cpu_list(&t.isolated_cpus),
        housekeeping: format_cpu_list(&t.housekeeping_cpus),
        study_hint: if by_study {
            " (or `sudo rtscope study resume`, which puts back what its runner left)".into()
        } else {
            String::new()
        },
        by_study,
    })
}

/// Why an isolation a dead rtscope left could not be put back.
#[derive(Debug, Error)]
pub enum LeftBehindError {
    #[error(
        "{count} values of the isolation left by pid {pid} could not be restored (the first: {setting} {error}): retry with `sudo rtscope tune --revert`"
    )]
    NotRestored {
        count: usize,
        pid: u32,
        setting: String,
        error: String,
    },
    #[error(
        "could not put back the isolation left by pid {pid}: {error}; run `sudo rtscope tune --revert`"
    )]
    Revert { pid: u32, error: RevertError },
}

/// Put back an isolation a dead rtscope left (as `tune --revert`):
/// a line saying what was done, or why it could not be.
pub fn revert_left(left: &LeftIsolation) -> Result<String, LeftBehindError> {
    match super::revert::revert(&Env::host()) {
        Ok(RevertResult::Done { reverted, .. }) if !reverted.failed.is_empty() => {
            Err(LeftBehindError::NotRestored {
                count: reverted.failed.len(),
                pid: left.pid,
                setting: reverted.failed[0].0.setting.clone(),
                error: reverted.failed[0].1.clone(),
            })
        }
        Ok(_) => Ok(format!(
            "put back the isolation of CPUs {} left by rtscope pid {} (`{}`), which was killed",
            left.isolated, left.pid, left.command
        )),
        Err(error) => Err(LeftBehindError::Revert {
            pid: left.pid,
            error,
        }),
    }
}

/// Isolation held by a measuring process.
pub struct Isolation {
    env: Env,
    lock: Option<Lock>,
    pub isolated: Vec<usize>,
    reverted: bool,
}

fn move_to(env: &Env, cpuset: &str, file: &str, id: u32) -> Result<(), SettingError> {
    let fs = super::cpuset::fs_of(env)?;
    Ok(env.write(&fs.file(cpuset, file), &id.to_string())?)
}

/// Why a run's isolation could not be set up (or joined).
#[derive(Debug, Error)]
pub enum IsolateError {
    #[error(
        "--main-affinity cannot be combined with --isolate: the main thread runs on the housekeeping CPUs"
    )]
    MainAffinity,
    #[error(
        "--main-affinity cannot be used while `rtscope tune isolate` is in force (CPUs {isolated}): the main thread runs on the housekeeping CPUs; leave out --main-affinity"
    )]
    MainAffinityJoined { isolated: String },
    /// `-a` names a CPU that `--isolate` leaves out.
    #[error(
        "-a includes CPU {cpu}, which --isolate {isolated} does not isolate: measure on the isolated CPUs (leave out -a)"
    )]
    AffinityOutside { cpu: usize, isolated: String },
    /// Applying the isolation was refused or failed (rolled back).
    #[error(transparent)]
    Tune(#[from] TuneError),
    /// This process could not join `rtscope-rt`.
    #[error("placing rtscope on the isolated CPUs failed")]
    Enter(#[source] SettingError),
}

/// Set up isolation for a `measure` run.
///
/// With `isolate`: apply `tune isolate` for this run (refused when a
/// tuning is already in force) and place this process on the isolated
/// CPUs. Without it, when `rtscope tune isolate` is in force and the run
/// targets the isolated CPUs (no `-a`, or `-a` within them), join it:
/// place this process in `rtscope-rt` so its threads may use them.
/// In both cases the main thread goes to the housekeeping CPUs, so
/// `--main-affinity` is refused.
pub fn isolate(
    isolate: Option<&[usize]>,
    affinity: Option<&[usize]>,
    main_affinity_given: bool,
    stop: &AtomicBool,
) -> Result<Option<Isolation>, IsolateError> {
    let Some(cpus) = isolate else {
        return join(affinity, main_affinity_given);
    };
    let req = isolate_request(cpus, affinity, main_affinity_given)?;
    let env = Env::host();
    // Ctrl-C / SIGTERM / SIGHUP while applying: roll back and stop.
    let mut notes = Vec::new();
    let mut applied = apply::apply(&env, &req, Mode::Run, Some(stop), &mut notes)?;
    for n in notes {
        eprintln!("rtscope: {n}");
    }
    let iso = Isolation {
        env,
        lock: applied.lock.take(),
        isolated: req.isolated.clone(),
        reverted: false,
    };
    say_applied(&applied, &req);
    iso.enter()?;
    Ok(Some(iso))
}

/// The request `measure --isolate CPUS` makes, refused when it cannot
/// be: with `--main-affinity`, without root, CPUs offline or leaving no
/// housekeeping CPU, `-a` outside the isolated CPUs.
fn isolate_request(
    cpus: &[usize],
    affinity: Option<&[usize]>,
    main_affinity_given: bool,
) -> Result<Request, IsolateError> {
    let host = SysRoot::host();
    if main_affinity_given {
        return Err(IsolateError::MainAffinity);
    }
    if crate::sys::sched::euid() != 0 {
        return Err(TuneError::NotRoot {
            what: "measure --isolate".into(),
        }
        .into());
    }
    let online = cpu::online_cpus(&host).unwrap_or_default();
    let req = apply::validate(
        Request {
            isolated: cpus.to_vec(),
            ..Default::default()
        },
        &online,
    )?;
    if let Some(a) = affinity
        && let Some(c) = a.iter().find(|c| !req.isolated.contains(c))
    {
        return Err(IsolateError::AffinityOutside {
            cpu: *c,
            isolated: format_cpu_list(&req.isolated),
        });
    }
    Ok(req)
}

/// Tell what the isolation did: how many changes, and each one refused
/// (the IRQs that stayed in one line).
fn say_applied(applied: &apply::Applied, req: &Request) {
    let done = applied
        .items
        .iter()
        .filter(|i| matches!(i.outcome, Outcome::Done(_)))
        .count();
    let refused: Vec<&apply::Item> = applied
        .items
        .iter()
        .filter(|i| matches!(i.outcome, Outcome::Refused(_)))
        .collect();
    eprintln!(
        "rtscope: isolated CPUs {} for this run (housekeeping {}): {done} changes, journal {}",
        format_cpu_list(&req.isolated),
        format_cpu_list(&req.housekeeping),
        applied.journal.display()
    );
    if !refused.is_empty() {
        let irqs: Vec<String> = refused
            .iter()
            .filter(|i| i.setting == "irq-affinity")
            .map(|i| {
                i.key
                    .trim_start_matches("/proc/irq/")
                    .trim_end_matches("/smp_affinity_list")
                    .to_string()
            })
            .collect();
        if !irqs.is_empty() {
            eprintln!("rtscope: {}", irqs_refused_line(&irqs, &req.isolated));
        }
        for i in refused.iter().filter(|i| i.setting != "irq-affinity") {
            if let Outcome::Refused(e) = &i.outcome {
                eprintln!("rtscope: warning: {} not applied: {e}", i.setting);
            }
        }
    }
}

/// The IRQs (by number) that stayed on the isolated CPUs, in a sentence:
/// `IRQ 36 refused to leave CPU 1`, `IRQs 36, 40 refused to leave CPUs 1-2`.
pub fn irqs_refused_line(irqs: &[String], isolated: &[usize]) -> String {
    format!(
        "{} {} refused to leave {} {}",
        if irqs.len() == 1 { "IRQ" } else { "IRQs" },
        irqs.join(", "),
        if isolated.len() == 1 { "CPU" } else { "CPUs" },
        format_cpu_list(isolated)
    )
}

/// The `tune isolate` in force that a run could join (root, applied, its
/// cpuset there): the environment and its isolated CPUs.
fn joinable() -> Option<(Env, Vec<usize>)> {
    let host = SysRoot::host();
    let t = tuning::tuning(&host)?;
    if t.state != TuningState::Applied || crate::sys::sched::euid() != 0 {
        return None;
    }
    let env = Env::host();
    let there = env
        .cpuset
        .as_ref()
        .is_some_and(|fs| host.path(&fs.dir(RT_NAME)).exists());
    there.then_some((env, t.isolated_cpus))
}

/// The CPUs a run gains by joining the `tune isolate` in force (its
/// isolated CPUs; none when there is none to join), for the checks made
/// before it joins: until then, this process may be kept off them (by
/// `rtscope-system` on cgroup v1, by the isolated partition on v2), and
/// `-a` naming them is right all the same.
pub fn joinable_cpus() -> Vec<usize> {
    joinable().map(|(_, cpus)| cpus).unwrap_or_default()
}

fn join(
    affinity: Option<&[usize]>,
    main_affinity_given: bool,
) -> Result<Option<Isolation>, IsolateError> {
    let Some((env, isolated)) = joinable() else {
        return Ok(None);
    };
    if affinity.is_some_and(|a| a.iter().any(|c| !isolated.contains(c))) {
        return Ok(None);
    }
    if main_affinity_given {
        return Err(IsolateError::MainAffinityJoined {
            isolated: format_cpu_list(&isolated),
        });
    }
    let iso = Isolation {
        env,
        lock: None,
        isolated: isolated.clone(),
        reverted: true,
    };
    iso.enter()?;
    eprintln!(
        "rtscope: `rtscope tune isolate` is in force: measuring on the isolated CPUs {}",
        format_cpu_list(&isolated)
    );
    Ok(Some(iso))
}

impl Isolation {
    /// Place this whole process in `rtscope-rt` (threads created later
    /// inherit it).
    fn enter(&self) -> Result<(), IsolateError> {
        move_to(&self.env, RT_NAME, "cgroup.procs", std::process::id()).map_err(IsolateError::Enter)
    }

    /// Move the calling thread (the control thread, once the measuring
    /// threads run) to the housekeeping CPUs. cgroup v2 keeps a process's
    /// threads together, so there it stays.
    fn leave_control_thread(&self) {
        let Some(fs) = self.env.cpuset.as_ref() else {
            return;
        };
        if fs.version == CpusetVersion::V1 {
            let tid = crate::sys::sched::gettid() as u32;
            let _ = move_to(&self.env, SYSTEM_NAME, "tasks", tid);
        }
    }

    /// Where a helper thread of this process (the trace reader) goes to
    /// keep off the isolated CPUs: the housekeeping CPUs and the `tasks`
    /// file of their cpuset, which it joins first (cgroup v1). `None` on
    /// cgroup v2, which keeps a process's threads together.
    pub fn housekeeping(&self) -> Option<(Vec<usize>, std::path::PathBuf)> {
        let fs = self.env.cpuset.as_ref()?;
        if fs.version != CpusetVersion::V1 {
            return None;
        }
        let online = cpu::online_cpus(&self.env.root).unwrap_or_default();
        let cpus: Vec<usize> = online
            .into_iter()
            .filter(|c| !self.isolated.contains(c))
            .collect();
        let tasks = self.env.root.path(&fs.file(SYSTEM_NAME, "tasks"));
        (!cpus.is_empty() && tasks.exists()).then_some((cpus, tasks))
    }

    /// Undo the tuning now (also done on drop); prints one line, or loud
    /// warnings for what could not be restored.
    pub fn revert(&mut self) {
        if self.reverted {
            return;
        }
        self.reverted = true;
        let path = journal::journal_path();
        let j = match Journal::load(&path) {
            Ok(Some(j)) => j,
            Ok(None) => return,
            Err(e) => {
                eprintln!(
                    "rtscope: WARNING: could not read back the tuning journal: {e}; run `sudo rtscope tune --revert`"
                );
                return;
            }
        };
        let r = apply::revert(&self.env, &j);
        drop(self.lock.take());
        let restored = r
            .restored
            .iter()
            .filter(|(_, x)| matches!(x, Restored::Done(_)))
            .count();
        if r.failed.is_empty() {
            eprintln!(
                "rtscope: isolation of CPUs {} undone ({restored} values restored)",
                format_cpu_list(&self.isolated)
            );
        } else {
            for (c, e) in &r.failed {
                eprintln!(
                    "rtscope: WARNING: could not restore {} {} to '{}': {e}",
                    c.setting, c.key, c.original
                );
            }
            eprintln!(
                "rtscope: WARNING: {} values are not restored; the journal {} keeps them: retry with `sudo rtscope tune --revert`",
                r.failed.len(),
                path.display()
            );
        }
    }
}

impl Drop for Isolation {
    fn drop(&mut self) {
        self.revert();
    }
}

/// An observer that moves the control thread off the isolated CPUs once
/// the measuring threads have started, and otherwise passes everything
/// to `inner`.
pub struct IsolatedObserver<'a> {
    inner: &'a mut dyn Observer,
    iso: Option<&'a Isolation>,
}

pub fn observe<'a>(
    iso: Option<&'a Isolation>,
    inner: &'a mut dyn Observer,
) -> IsolatedObserver<'a> {
    IsolatedObserver { inner, iso }
}

impl Observer for IsolatedObserver<'_> {
    fn warning(&mut self, message: &str) {
        self.inner.warning(message)
    }

    fn started(&mut self, view: &RunView) {
        if let Some(i) = self.iso {
            i.leave_control_thread();
        }
        self.inner.started(view)
    }

    fn tick(&mut self, view: &RunView) -> Control {
        self.inner.tick(view)
    }

    fn ended(&mut self) {
        self.inner.ended()
    }

    fn notices(&mut self) -> Vec<String> {
        self.inner.notices()
    }
}

#[cfg(test)]
mod tests {
    use super::irqs_refused_line;

    #[test]
    fn refused_irqs_are_named_by_number() {
        assert_eq!(
            irqs_refused_line(&["36".into()], &[1]),
            "IRQ 36 refused to leave CPU 1"
        );
        assert_eq!(
            irqs_refused_line(&["36".into(), "40".into()], &[1, 2]),
            "IRQs 36, 40 refused to leave CPUs 1-2"
        );
    }
}
