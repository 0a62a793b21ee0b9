//! Studies that reboot (`rtscope study FILE --reboot`): when the running
//! boot owes no more runs, pick the next boot configuration that does,
//! record the boot in the study's state, arrange it for one boot only
//! ([`method`]), and reboot; after the boot a systemd unit ([`unit`])
//! resumes the study, which first checks that the machine came up as
//! asked. When no configuration owes runs, the machine boots back into
//! the configuration it started from and the unit is removed.
//!
//! Every step is written to the store before it is taken: a power cut at
//! any moment leaves a boot recorded as asked, and the next runner sees
//! whether the machine came up as asked (`arrived`), otherwise
//! (`missed`: asked again, once), or never rebooted (`cancelled`). A
//! configuration asked twice and missed twice, or whose kernel is not
//! installed, is `failed`: its runs are reported as not measured, and
//! the study goes on with the others. A round stops at its reboot limit,
//! `study pause` and `study stop`.

pub mod kernels;
pub mod method;
pub mod unit;

use super::StudyError;
use super::boots::BootNeed;
use super::state::{SlotState, Study};
use crate::store::boots::{BootRow, BootState, RoundRow, RoundState};
use crate::store::studies::StudyRow;
use crate::store::{Store, StoreError};
use crate::sysinfo::cmdline::param_name;
use crate::sysinfo::kernel_match::Kernel;
use kernels::Installed;
use method::{Method, StepError};
use std::path::Path;
use thiserror::Error;
use unit::UnitError;

/// The label of the boot the study started from.
pub const HOME: &str = "the boot the study started from";

/// Why a round's step could not be taken.
#[derive(Debug, Error)]
pub enum RebootError {
    #[error("the study's reboot plan in the store is unreadable")]
    Plan(#[source] serde_json::Error),
    #[error("a boot in the store is unreadable")]
    Boot(#[source] serde_json::Error),
    /// The boot back could not be arranged (the round stops).
    #[error("the boot could not be arranged")]
    Arrange(#[source] StepError),
    /// Everything was arranged, but no way of rebooting worked.
    #[error("the machine could not be rebooted")]
    Reboot(#[source] StepError),
    /// The round's reboots are used up and the machine is back home.
    #[error("study '{name}': {detail}")]
    Limit { name: String, detail: String },
    #[error(transparent)]
    Unit(#[from] UnitError),
    #[error(transparent)]
    Study(#[from] StudyError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A boot to arrange.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Target {
    /// The configuration, as the study names it ([`HOME`] for the boot
    /// back).
    pub config: String,
    pub release: String,
    pub image: String,
    pub initrd: Option<String>,
    /// The whole kernel command line.
    pub cmdline: String,
    /// The boot back to where the study started.
    pub home: bool,
}

impl Target {
    /// Whether `kernel` runs this boot: its release, and its command line
    /// but for what the boot loader adds. (For the boot back; a
    /// configuration is checked as a cell's boot is.)
    pub fn is_running(&self, kernel: &Kernel) -> bool {
        kernel.release == self.release && strip_loader(&kernel.cmdline) == self.cmdline
    }
}

/// A round's plan, kept in the store.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Plan {
    pub home: Target,
    pub method: Method,
    /// Boots into a configuration allowed in this round (the boot back is
    /// always allowed).
    pub max_reboots: u32,
    /// What the resume unit runs.
    pub command: Vec<String>,
}

impl Plan {
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).expect("a plan serializes")
    }

    pub fn parse(text: &str) -> Result<Plan, RebootError> {
        serde_json::from_str(text).map_err(RebootError::Plan)
    }
}

/// A command line without what the boot loader adds (`BOOT_IMAGE=`,
/// `initrd=`): what a boot of the same kernel is given again.
pub fn strip_loader(cmdline: &str) -> String {
    let words: Vec<&str> = cmdline
        .split_whitespace()
        .filter(|w| !w.starts_with("BOOT_IMAGE=") && !w.starts_with("initrd="))
        .collect();
    words.join(" ")
}

/// The boot the machine runs now, as a target to come back to.
pub fn home_target(kernel: &Kernel, installed: &[Installed]) -> Target {
    let k = installed.iter().find(|k| k.release == kernel.release);
    Target {
        config: HOME.into(),
        release: kernel.release.clone(),
        image: k
            .map(|k| k.image.clone())
            .unwrap_or_else(|| format!("/boot/vmlinuz-{}", kernel.release)),
        initrd: k.and_then(|k| k.initrd.clone()),
        cmdline: strip_loader(&kernel.cmdline),
        home: true,
    }
}

/// The target of a boot configuration: its kernel, and the home command
/// line without the arguments the study varies, with the configuration's
/// (and `panic=10` when no `panic=` is given, so that a kernel that
/// panics reboots into the machine's own boot).
pub fn target_for(
    need: &BootNeed,
    config: &str,
    home: &Target,
    managed: &[String],
    installed: &[Installed],
) -> Result<Target, kernels::NoKernel> {
    let k = kernels::choose(need, &home.release, installed)?;
    let mut words: Vec<String> = Vec::new();
    let mut after_init: Vec<String> = Vec::new();
    let mut init = false;
    for w in home.cmdline.split_whitespace() {
        if w == "--" {
            init = true;
        }
        if init {
            after_init.push(w.to_string());
            continue;
        }
        if !managed.contains(&param_name(w)) {
            words.push(w.to_string());
        }
    }
    words.extend(need.args.iter().map(|a| a.text.clone()));
    if !words.iter().any(|w| w.starts_with("panic=")) {
        words.push("panic=10".into());
    }
    words.extend(after_init);
    Ok(Target {
        config: config.to_string(),
        release: k.release.clone(),
        image: k.image.clone(),
        initrd: k.initrd.clone(),
        cmdline: words.join(" "),
        home: false,
    })
}

/// Whether the machine runs the boot the study started from.
pub fn is_home(plan: &Plan, kernel: &Kernel) -> bool {
    plan.home.is_running(kernel)
}

/// The boot the round asked for last, if nothing has been made of it yet.
fn asked(study: &Study) -> Option<&BootRow> {
    study
        .boot_rows
        .iter()
        .rev()
        .find(|b| b.state == BootState::Asked)
}

/// What to do once the running boot owes no more runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Boot into this configuration.
    Boot(Target),
    /// This configuration cannot be booted: record it, decide again.
    Fail { config: String, why: String },
    /// Boot back to where the study started.
    Home(Target),
    /// Nothing left, and the machine is home.
    Done,
}

/// The next step of `study`'s round (the plan `plan`), on `kernel`, with
/// the kernels `installed`. Pure.
pub fn decide(study: &Study, plan: &Plan, kernel: &Kernel, installed: &[Installed]) -> Decision {
    let since = study.round.as_ref().map_or(0, |r| r.started_at_unix_ns);
    let waiting = study
        .slots
        .iter()
        .filter(|s| matches!(s.state, SlotState::Waiting { .. }))
        // A run that failed on its boot in this round is not worth
        // another reboot (`study resume` on that boot tries it again).
        .filter(|s| {
            !(s.failure().is_some()
                && s.attempts
                    .last()
                    .is_some_and(|a| a.started_at_unix_ns >= since))
        })
        .map(|s| s.slot.cell);
    // Every configuration that cannot be booted fails first (the study
    // says so at once), then the first one owed is booted.
    let mut first = None;
    for (need, config) in study.boots.distinct(waiting) {
        let missed: Vec<&str> = study
            .boot_rows
            .iter()
            .filter(|b| b.config == config && b.state == BootState::Missed)
            .map(|b| {
                b.detail
                    .as_deref()
                    .unwrap_or("the machine came up otherwise")
            })
            .collect();
        if missed.len() >= 2 {
            return Decision::Fail {
                config,
                why: format!(
                    "asked for twice, the machine came up otherwise: {}",
                    missed[missed.len() - 1]
                ),
            };
        }
        match target_for(need, &config, &plan.home, &study.boots.managed, installed) {
            Ok(t) => {
                first.get_or_insert(t);
            }
            Err(e) => {
                return Decision::Fail {
                    config,
                    why: e.to_string(),
                };
            }
        }
    }
    if let Some(t) = first {
        return Decision::Boot(t);
    }
    if is_home(plan, kernel) {
        Decision::Done
    } else {
        Decision::Home(plan.home.clone())
    }
}

/// Reboots into configurations taken in the round so far.
pub fn reboots_taken(study: &Study) -> u32 {
    study
        .boot_rows
        .iter()
        .filter(|b| {
            matches!(
                b.state,
                BootState::Asked | BootState::Arrived | BootState::Missed
            )
        })
        .filter(|b| b.config != HOME)
        .count() as u32
}

/// The newest round and its plan, if the study has one.
pub fn round_of(study: &Study) -> Result<Option<(RoundRow, Plan)>, RebootError> {
    match &study.round {
        Some(r) => Ok(Some((r.clone(), Plan::parse(&r.plan)?))),
        None => Ok(None),
    }
}

/// Look at the boot the round asked for last, if it is still open: did
/// the machine come up as asked? Returns what to tell the user.
pub fn arrive(
    store: &Store,
    study: &Study,
    kernel: &Kernel,
    boot_id: &str,
) -> Result<Option<String>, RebootError> {
    let Some(last) = asked(study) else {
        return Ok(None);
    };
    if last.boot_id == boot_id {
        let why = "the machine was not rebooted (the runner stopped before it): asked again";
        store.end_boot(last.id, BootState::Cancelled, Some(why))?;
        return Ok(Some(format!("boot into {}: {why}", last.config)));
    }
    let t: Target = serde_json::from_str(&last.target).map_err(RebootError::Boot)?;
    let check = if t.home {
        if t.is_running(kernel) {
            Ok(())
        } else {
            Err("not the boot the study started from".to_string())
        }
    } else if kernel.release != t.release {
        Err(format!(
            "the kernel is {}, not {}",
            kernel.release, t.release
        ))
    } else {
        match study
            .boots
            .needs
            .iter()
            .find(|n| study.boots.label(n) == t.config)
        {
            Some(n) => study.boots.check(n, kernel).map_err(|m| m.to_string()),
            None => Ok(()),
        }
    };
    Ok(Some(match check {
        Ok(()) => {
            store.end_boot(last.id, BootState::Arrived, None)?;
            format!("booted into {} as asked ({})", t.config, kernel.describe())
        }
        Err(why) => {
            let detail = format!(
                "came up in {} with \"{}\": {why}",
                kernel.describe(),
                strip_loader(&kernel.cmdline)
            );
            store.end_boot(last.id, BootState::Missed, Some(&detail))?;
            format!("asked to boot into {}, the machine {detail}", t.config)
        }
    }))
}

/// How long to wait between arranging a boot and rebooting, for tests
/// that cut the power there (`RTSCOPE_STUDY_HOLD_BEFORE_REBOOT`, seconds).
fn hold() {
    if let Some(s) = std::env::var("RTSCOPE_STUDY_HOLD_BEFORE_REBOOT")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_secs(s.min(3600)));
    }
}

/// Record the boot `t`, arrange it and reboot. `Ok(false)`: the
/// arrangement failed and the configuration is recorded as failed (decide
/// again); an error: the reboot itself failed (the round stops).
pub fn take(
    store: &Store,
    study: &Study,
    round: i64,
    plan: &Plan,
    t: &Target,
    boot_id: &str,
    root: &Path,
) -> Result<bool, RebootError> {
    let id = store.ask_boot(
        study.row.id,
        round,
        &t.config,
        &serde_json::to_string(t).expect("a target serializes"),
        boot_id,
    )?;
    if let Err(e) = method::take(&plan.method.arrange(t, &study.row.name), root) {
        let e = RebootError::Arrange(e);
        let why = crate::text::chain(&e);
        if t.home {
            store.end_boot(id, BootState::Cancelled, Some(&why))?;
            return Err(e);
        }
        store.end_boot(id, BootState::Failed, Some(&why))?;
        return Ok(false);
    }
    // Everything the next boot needs (the store, the unit, the binary it
    // runs, the arranged boot's files) on disk before the reboot: a power
    // cut between here and the reboot then boots into a study that
    // resumes (a binary copied just before, still in the page cache, was
    // seen truncated by one).
    rustix::fs::sync();
    hold();
    if let Err(e) = method::take_first(&plan.method.reboot(), root, &method::system_stopping) {
        let e = RebootError::Reboot(e);
        store.end_boot(id, BootState::Cancelled, Some(&crate::text::chain(&e)))?;
        let _ = method::take(&plan.method.cancel(&study.row.name), root);
        return Err(e);
    }
    Ok(true)
}

/// End the study's round (if it has one): undo any arranged boot, remove
/// the unit (not for a pause), record `state`.
pub fn end_round(
    store: &Store,
    study: &Study,
    state: RoundState,
    detail: &str,
    root: &Path,
) -> Result<(), RebootError> {
    let Some((round, plan)) = round_of(study)? else {
        return Ok(());
    };
    let _ = method::take(&plan.method.cancel(&study.row.name), root);
    if let Some(last) = asked(study) {
        store.end_boot(last.id, BootState::Cancelled, Some(detail))?;
    }
    if state != RoundState::Paused {
        unit::remove(root, &study.row.name)?;
    }
    store.set_round_state(study.row.id, round.round, state, Some(detail))?;
    Ok(())
}

/// The machine a round's step runs on: its kernel, the kernels it can
/// boot, this boot's id and the root its files are under.
pub struct Here<'a> {
    pub kernel: &'a Kernel,
    pub installed: &'a [Installed],
    pub boot_id: &'a str,
    pub root: &'a Path,
}

/// What [`after_runs`] left the machine doing.
#[derive(Debug, PartialEq, Eq)]
pub enum After {
    /// Nothing more to boot here (no round, a round paused, stopped or
    /// done): the runner goes on as without reboots.
    Stay,
    /// A reboot is under way: the runner ends.
    Rebooting,
}

/// After the runs of this boot, the round's next step: fail what cannot
/// be booted, then boot the next configuration, or back home, or end the
/// round. Each step is said through `say`.
pub fn after_runs(
    store: &Store,
    row: &StudyRow,
    here: &Here,
    say: &mut dyn FnMut(String),
) -> Result<After, RebootError> {
    let name = &row.name;
    loop {
        let study = Study::of_row(store, row.clone(), here.kernel)?;
        let Some((round, plan)) = round_of(&study)? else {
            return Ok(After::Stay);
        };
        if round.state != RoundState::Active {
            say(format!(
                "study '{name}': its reboots are {} ({}): no boot is taken",
                round.state.name(),
                round.detail.as_deref().unwrap_or("")
            ));
            return Ok(After::Stay);
        }
        let target = match decide(&study, &plan, here.kernel, here.installed) {
            Decision::Fail { config, why } => {
                say(format!(
                    "study '{name}': {config} cannot be booted: {why}; the study goes on without it"
                ));
                store.fail_boot(row.id, round.round, &config, here.boot_id, &why)?;
                continue;
            }
            Decision::Done => {
                let detail = "every boot configuration was measured or failed; the machine is back in the boot the study started from";
                end_round(store, &study, RoundState::Done, detail, here.root)?;
                say(format!("study '{name}': {detail}; its unit is removed"));
                return Ok(After::Stay);
            }
            Decision::Boot(t) => within_limit(store, &study, &plan, here, t, say)?,
            Decision::Home(t) => t,
        };
        say(format!(
            "study '{name}': rebooting into {} ({}, \"{}\") by {}",
            target.config,
            target.release,
            target.cmdline,
            plan.method.name()
        ));
        if take(
            store,
            &study,
            round.round,
            &plan,
            &target,
            here.boot_id,
            here.root,
        )? {
            return Ok(After::Rebooting);
        }
        say(format!(
            "study '{name}': the boot into {} could not be arranged: recorded as failed",
            target.config
        ));
    }
}

/// `t`, or the boot back when the round's reboots are used up (then, if
/// the machine is back already, the round stops: an error).
fn within_limit(
    store: &Store,
    study: &Study,
    plan: &Plan,
    here: &Here,
    t: Target,
    say: &mut dyn FnMut(String),
) -> Result<Target, RebootError> {
    if reboots_taken(study) < plan.max_reboots {
        return Ok(t);
    }
    let name = &study.row.name;
    let detail = format!(
        "the limit of {} reboots is reached; `rtscope study resume {name} --reboot --max-reboots N` starts a new round",
        plan.max_reboots
    );
    if is_home(plan, here.kernel) {
        end_round(store, study, RoundState::Stopped, &detail, here.root)?;
        return Err(RebootError::Limit {
            name: name.clone(),
            detail,
        });
    }
    say(format!("study '{name}': {detail}; booting back first"));
    Ok(plan.home.clone())
}

#[cfg(test)]
mod tests;
