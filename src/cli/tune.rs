//! `rtscope tune`: isolate CPUs for real-time work with a guaranteed
//! revert (`isolate`, `--revert`, `--status`, `--dry-run`, `settings`),
//! and the hidden `hold-dma-latency` helper process.

use super::Exit;
use super::cpulist;
use crate::sysinfo::tuning::{self, TuningState};
use crate::sysinfo::{SysRoot, cpu};
use crate::tune::apply::{self, Item, Outcome, Reverted, StatusItem, TuneError};
use crate::tune::journal::{self, Journal, Mode};
use crate::tune::revert::RevertResult;
use crate::tune::{self, Env, Request, Restored, SETTINGS};
use crate::units::{CpuList, format_cpu_list};
use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Tune the system for real-time work, and always put it back.
///
/// `rtscope tune isolate CPUS` reserves CPUS for real-time work: cpusets
/// (rtscope-rt for CPUS, rtscope-system for the rest, holding every
/// movable task and kernel thread; a v2 isolated partition where there is
/// no v1 cpuset hierarchy), IRQ affinities moved off, irqbalance paused,
/// workqueues and timers kept off, governor performance, transparent huge
/// pages off. Each original value is written to a journal on disk before
/// it is changed ($RTSCOPE_STATE_DIR, default /var/lib/rtscope), then
/// read back. `rtscope tune --revert` restores everything in reverse
/// order, also after a crash; running it twice is harmless.
///
/// To run a program on the isolated CPUs: `echo $$ >
/// /sys/fs/cgroup/cpuset/rtscope-rt/tasks` in its shell first (cgroup
/// v1; on cgroup v2 the partition's file is the cgroup's `cgroup.procs`,
/// e.g. /sys/fs/cgroup/rtscope-rt/cgroup.procs), or `rtscope measure`
/// (it joins the isolation by itself).
///
/// Exit status: 0 done, 2 refused or failed (nothing left half-applied).
#[derive(Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[command(args_conflicts_with_subcommands = true)]
pub struct TuneArgs {
    #[command(subcommand)]
    pub action: Option<TuneAction>,

    /// Restore every value the journal holds, last change first.
    #[arg(long, conflicts_with = "status")]
    pub revert: bool,

    /// Show the tuning in force: what was changed, and each value now.
    #[arg(long)]
    pub status: bool,

    /// Print what would be done and change nothing.
    #[arg(long, global = true)]
    pub dry_run: bool,

    /// Machine-readable output (JSON) on standard output.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Subcommand, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub enum TuneAction {
    /// Isolate CPUS for real-time work until `rtscope tune --revert`.
    Isolate(IsolateArgs),
    /// List the settings tune knows (names for --skip).
    Settings,
    /// (internal) Hold /dev/cpu_dma_latency until killed.
    #[command(hide = true)]
    HoldDmaLatency {
        value_us: i32,
        #[arg(long)]
        token: String,
    },
}

#[derive(Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IsolateArgs {
    /// CPUs to reserve for real-time work (e.g. 1, 2-3).
    #[arg(value_name = "CPUS", value_parser = cpulist)]
    pub cpus: CpuList,

    /// CPUs for everything else. Default: every other online CPU.
    #[arg(long, value_name = "CPUS", value_parser = cpulist)]
    pub housekeeping: Option<CpuList>,

    /// Also set kernel.sched_rt_runtime_us to -1 (no real-time
    /// throttling; a runaway real-time task can then hang its CPU).
    #[arg(long)]
    pub no_rt_throttling: bool,

    /// Also hold /dev/cpu_dma_latency at US microseconds (default 0) in a
    /// helper process: no deep idle states on any CPU (power, heat).
    #[arg(long, value_name = "US", num_args = 0..=1, default_missing_value = "0")]
    pub hold_dma_latency: Option<i32>,

    /// Settings to leave alone, comma-separated (see `rtscope tune settings`).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub skip: Vec<String>,
}

pub fn run(args: &TuneArgs) -> Result<Exit> {
    match &args.action {
        Some(TuneAction::HoldDmaLatency { value_us, .. }) => {
            tune::dma_latency::hold(*value_us)?;
            Ok(Exit::Ok)
        }
        Some(TuneAction::Settings) => settings(args.json),
        Some(TuneAction::Isolate(i)) => isolate(i, args.dry_run, args.json),
        None if args.revert => revert(args.dry_run, args.json),
        None => status(args.json),
    }
}

fn settings(json: bool) -> Result<Exit> {
    if json {
        let v: Vec<_> = SETTINGS
            .iter()
            .map(|s| serde_json::json!({"name": s.name, "about": s.about, "opt_in": s.opt_in}))
            .collect();
        super::print_json(&v)?;
        return Ok(Exit::Ok);
    }
    for s in SETTINGS {
        let when = s
            .opt_in
            .map(|f| format!(" (only with {f})"))
            .unwrap_or_default();
        outln!("{:<16} {}{when}", s.name, s.about);
    }
    Ok(Exit::Ok)
}

fn require_root(what: &str) -> Result<()> {
    if crate::sys::sched::euid() != 0 {
        return Err(TuneError::NotRoot { what: what.into() }.into());
    }
    Ok(())
}

fn outcome_text(o: &Outcome) -> String {
    match o {
        Outcome::Planned => "would change".into(),
        Outcome::Skipped(why) => format!("skipped: {why}"),
        Outcome::Done(None) => "done".into(),
        Outcome::Done(Some(n)) => format!("done: {n}"),
        Outcome::Refused(e) => format!("REFUSED: {e}"),
    }
}

fn print_items(items: &[Item]) {
    for i in items {
        if i.key == "-" {
            outln!("  {:<16} {}", i.setting, outcome_text(&i.outcome));
            continue;
        }
        outln!(
            "  {:<16} {}: {} -> {}  [{}]",
            i.setting,
            i.key,
            if i.original.is_empty() {
                "-"
            } else {
                &i.original
            },
            i.target,
            outcome_text(&i.outcome)
        );
    }
}

fn isolate(a: &IsolateArgs, dry_run: bool, json: bool) -> Result<Exit> {
    let host = SysRoot::host();
    let online = cpu::online_cpus(&host).unwrap_or_default();
    let req = apply::validate(
        Request {
            isolated: a.cpus.0.clone(),
            housekeeping: a.housekeeping.clone().map(|c| c.0).unwrap_or_default(),
            no_rt_throttling: a.no_rt_throttling,
            hold_dma_latency_us: a.hold_dma_latency,
            skip: a.skip.clone(),
        },
        &online,
    )?;
    let env = Env::host();
    let header = format!(
        "isolating CPUs {} (housekeeping CPUs {})",
        format_cpu_list(&req.isolated),
        format_cpu_list(&req.housekeeping)
    );
    if dry_run {
        let items = apply::dry_run(&env, &req)?;
        if json {
            super::print_json(&serde_json::json!({
                "dry_run": true,
                "isolated_cpus": format_cpu_list(&req.isolated),
                "housekeeping_cpus": format_cpu_list(&req.housekeeping),
                "items": items,
            }))?;
        } else {
            outln!("rtscope tune (dry run, nothing is changed): {header}");
            print_items(&items);
        }
        return Ok(Exit::Ok);
    }
    require_root("rtscope tune isolate")?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())?;
    }
    let mut notes = Vec::new();
    let applied = apply::apply(&env, &req, Mode::Persistent, Some(&stop), &mut notes)?;
    for n in &notes {
        eprintln!("rtscope: {n}");
    }
    let done = applied
        .items
        .iter()
        .filter(|i| matches!(i.outcome, Outcome::Done(_)))
        .count();
    let refused = applied
        .items
        .iter()
        .filter(|i| matches!(i.outcome, Outcome::Refused(_)))
        .count();
    if json {
        super::print_json(&serde_json::json!({
            "isolated_cpus": format_cpu_list(&req.isolated),
            "housekeeping_cpus": format_cpu_list(&req.housekeeping),
            "journal": applied.journal,
            "items": applied.items,
        }))?;
    } else {
        outln!(
            "rtscope tune: {header}; journal {}",
            applied.journal.display()
        );
        print_items(&applied.items);
        outln!(
            "{done} changes applied, {refused} refused by the system (listed above, not fatal). Undo with: sudo rtscope tune --revert"
        );
    }
    Ok(Exit::Ok)
}

fn revert(dry_run: bool, json: bool) -> Result<Exit> {
    let env = Env::host();
    let result = if dry_run {
        tune::revert::plan(&env)?
    } else {
        tune::revert::revert(&env)?
    };
    match result {
        RevertResult::NoJournal { journal, stray } => {
            if json && !dry_run {
                super::print_json(&serde_json::json!({"journal": null, "stray": stray}))?;
            } else {
                let lead = if dry_run {
                    ""
                } else {
                    "rtscope tune --revert: "
                };
                outln!(
                    "{lead}no tuning journal at {}: nothing to revert",
                    journal.display()
                );
                for s in &stray {
                    outln!("  {s}");
                }
            }
            Ok(Exit::Ok)
        }
        RevertResult::Planned { journal, items } => {
            print_planned(&journal, &items, json)?;
            Ok(Exit::Ok)
        }
        RevertResult::Done {
            journal,
            stale,
            reverted,
        } => print_reverted(&journal, stale, &reverted, json),
    }
}

fn print_planned(journal: &std::path::Path, items: &[StatusItem], json: bool) -> Result<()> {
    if json {
        return super::print_json(
            &serde_json::json!({"dry_run": true, "journal": journal, "restore": items.iter().rev().collect::<Vec<_>>()}),
        );
    }
    outln!(
        "rtscope tune --revert (dry run, nothing is changed): would restore, last change first:"
    );
    for i in items.iter().rev() {
        outln!(
            "  {:<16} {}: now {} -> {}",
            i.setting,
            i.key,
            i.now.as_deref().unwrap_or("?"),
            i.original
        );
    }
    Ok(())
}

fn print_reverted(j: &Journal, stale: bool, r: &Reverted, json: bool) -> Result<Exit> {
    let path = &j.path;
    if json {
        let restored: Vec<_> = r
            .restored
            .iter()
            .map(|(c, x)| serde_json::json!({"setting": c.setting, "key": c.key, "original": c.original, "result": format!("{x:?}")}))
            .collect();
        let failed: Vec<_> = r
            .failed
            .iter()
            .map(|(c, e)| serde_json::json!({"setting": c.setting, "key": c.key, "original": c.original, "error": e}))
            .collect();
        super::print_json(
            &serde_json::json!({"journal": path, "stale": stale, "restored": restored, "failed": failed}),
        )?;
    } else {
        outln!(
            "rtscope tune --revert: {} tuning of CPUs {} by `{}`",
            j.header.mode.name(),
            format_cpu_list(&j.header.isolated_cpus),
            j.header.command.join(" ")
        );
        if stale {
            outln!(
                "  the journal is from before the last reboot: its changes are already gone; journal discarded"
            );
        }
        for (c, x) in &r.restored {
            let what = match x {
                Restored::Done(None) => "restored".to_string(),
                Restored::Done(Some(n)) => format!("restored: {n}"),
                Restored::AlreadyOriginal => "already original".into(),
                Restored::Gone => "gone (nothing to restore)".into(),
            };
            if !stale {
                outln!("  {:<16} {} -> {}  [{what}]", c.setting, c.key, c.original);
            }
        }
    }
    for (c, e) in &r.failed {
        eprintln!(
            "rtscope: WARNING: could not restore {} {} to '{}': {e}",
            c.setting, c.key, c.original
        );
    }
    if !r.failed.is_empty() {
        bail!(
            "{} values could not be restored (listed above); the journal {} keeps them: fix the cause and run `rtscope tune --revert` again",
            r.failed.len(),
            path.display()
        );
    }
    if !json {
        outln!("everything restored; journal removed");
    }
    Ok(Exit::Ok)
}

fn status(json: bool) -> Result<Exit> {
    let env = Env::host();
    let path = journal::journal_path();
    let t = tuning::tuning(&SysRoot::host());
    let j = Journal::load(&path)?;
    let (Some(t), Some(j)) = (t, j) else {
        if json {
            super::print_json(&serde_json::json!({"tuning": null, "journal": path}))?;
        } else {
            outln!(
                "no rtscope tuning in force (no journal at {})",
                path.display()
            );
        }
        return Ok(Exit::Ok);
    };
    let state = match t.state {
        TuningState::Applied => "applied",
        TuningState::InUse => "in use by a running rtscope",
        TuningState::Abandoned => "ABANDONED: its owner died without undoing it",
        TuningState::Stale => "stale: from before the last reboot (already undone by it)",
    };
    let items = apply::status_items(&env, &j);
    if json {
        super::print_json(&serde_json::json!({
            "journal": path,
            "state": format!("{:?}", t.state).to_lowercase(),
            "mode": t.mode.name(),
            "command": t.command,
            "pid": t.pid,
            "isolated_cpus": format_cpu_list(&t.isolated_cpus),
            "housekeeping_cpus": format_cpu_list(&t.housekeeping_cpus),
            "started_unix_ns": t.started_unix_ns,
            "changes": items,
        }))?;
        return Ok(Exit::Ok);
    }
    outln!(
        "rtscope tuning: {state}\n  CPUs {} isolated, housekeeping {}; {} by `{}` (pid {})\n  journal {}",
        format_cpu_list(&t.isolated_cpus),
        format_cpu_list(&t.housekeeping_cpus),
        t.mode.name(),
        t.command.join(" "),
        t.pid,
        path.display()
    );
    for i in &items {
        let result = match (i.applied, &i.message) {
            (Some(true), Some(m)) => format!("applied: {m}"),
            (Some(true), None) => "applied".into(),
            (Some(false), Some(m)) => format!("refused: {m}"),
            (Some(false), None) => "refused".into(),
            (None, _) => "interrupted while applying".into(),
        };
        outln!(
            "  {:<16} {}: {} -> {} (now {})  [{result}]",
            i.setting,
            i.key,
            i.original,
            i.target,
            i.now.as_deref().unwrap_or("?")
        );
    }
    if t.state != TuningState::InUse {
        outln!("undo with: sudo rtscope tune --revert");
    }
    Ok(Exit::Ok)
}
