//! `doctor`: what stands between this system and good real-time latency.
//! Each check judges [`Facts`] (gathered once by `sysinfo`) for the CPUs
//! that will run real-time work and says ok / info / warn / fail, with
//! the value found, why it matters and the fix. One file per area; every
//! check is registered in [`CHECKS`]. Checks only read facts: they never
//! touch the system, never panic on an odd value (an unreadable fact is
//! `info`, "unknown").

pub mod board;
pub mod cpufreq;
pub mod cpuidle;
pub mod irq;
pub mod isolation;
pub mod kernel;
pub mod limits;
pub mod memory;
pub mod raspberrypi;
pub mod rcu;
pub mod sched;
pub mod smt;
pub mod timers;
pub mod virt;
pub mod watchdog;

use crate::sysinfo::board::Arch;
use crate::sysinfo::facts::Facts;
use crate::sysinfo::tuning::TuningState;
use crate::units::format_cpu_list;
use serde::Serialize;

/// How a check came out, from good to bad.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Info,
    Warn,
    Fail,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Info => "info",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        }
    }
}

/// What a check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub status: Status,
    pub found: String,
    pub fix: Option<String>,
    /// False when the check is about hardware this system does not have
    /// (a Raspberry Pi's firmware on a PC): doctor then leaves it out
    /// instead of printing a line that says so.
    pub applies: bool,
}

impl Verdict {
    pub fn new(status: Status, found: impl Into<String>) -> Verdict {
        Verdict {
            status,
            found: found.into(),
            fix: None,
            applies: true,
        }
    }

    /// The check is about hardware this system lacks; `why` says what
    /// was looked for (kept for the unit tests, never printed).
    pub fn not_applicable(why: &str) -> Verdict {
        Verdict {
            applies: false,
            ..Verdict::new(Status::Info, why)
        }
    }

    pub fn fix(mut self, fix: impl Into<String>) -> Verdict {
        self.fix = Some(fix.into());
        self
    }

    pub fn unknown(what: &str) -> Verdict {
        Verdict::new(Status::Info, format!("unknown ({what})"))
    }
}

/// What the checks look at.
pub struct Ctx<'a> {
    pub facts: &'a Facts,
    /// CPUs that will run real-time work.
    pub rt_cpus: Vec<usize>,
}

impl Ctx<'_> {
    /// The architecture: fixes name ARM's boot options and files there,
    /// not x86's.
    pub fn arch(&self) -> Arch {
        self.facts.board.arch
    }

    pub fn rt_list(&self) -> String {
        format_cpu_list(&self.rt_cpus)
    }

    /// Real-time CPUs that are not in `set` (e.g. not in nohz_full).
    pub fn rt_cpus_outside(&self, set: &[usize]) -> Vec<usize> {
        self.rt_cpus
            .iter()
            .copied()
            .filter(|c| !set.contains(c))
            .collect()
    }

    /// Online CPUs that do not run real-time work.
    pub fn housekeeping(&self) -> Vec<usize> {
        self.facts
            .online
            .iter()
            .copied()
            .filter(|c| !self.rt_cpus.contains(c))
            .collect()
    }
}

/// One check, described by itself.
pub struct Check {
    pub id: &'static str,
    pub area: &'static str,
    pub title: &'static str,
    /// Why it matters for latency (one or two sentences).
    pub why: &'static str,
    pub run: fn(&Ctx) -> Verdict,
}

/// Every check, in the order they are shown.
pub static CHECKS: &[&Check] = &[
    &kernel::PREEMPTION,
    &kernel::DEBUG_OPTIONS,
    &kernel::CONFIG,
    &timers::HIGH_RES,
    &timers::HZ,
    &timers::NOHZ_FULL,
    &timers::CLOCKSOURCE,
    &timers::TIMER_MIGRATION,
    &rcu::BOOST,
    &rcu::NOCBS,
    &isolation::ISOLATION,
    &isolation::TUNING,
    &sched::RT_THROTTLING,
    &cpufreq::GOVERNOR,
    &cpuidle::IDLE_STATES,
    &smt::SIBLINGS,
    &irq::IRQBALANCE,
    &irq::IRQS,
    &memory::SWAP,
    &memory::THP,
    &limits::MEMLOCK,
    &limits::RTPRIO,
    &virt::VIRTUALIZATION,
    &board::BOARD,
    &raspberrypi::THROTTLING,
    &raspberrypi::BOOT_CONFIG,
    &watchdog::WATCHDOGS,
];

/// A check's result, ready to print.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub id: &'static str,
    pub area: &'static str,
    pub title: &'static str,
    pub status: Status,
    pub found: String,
    pub why: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// The findings of every check that applies to this system.
pub fn run(ctx: &Ctx) -> Vec<Finding> {
    CHECKS
        .iter()
        .filter_map(|c| {
            let v = (c.run)(ctx);
            v.applies.then_some(Finding {
                id: c.id,
                area: c.area,
                title: c.title,
                status: v.status,
                found: v.found,
                why: c.why,
                fix: v.fix,
            })
        })
        .collect()
}

/// The CPUs to judge when `--cpus` is not given, and where that choice
/// came from: CPUs isolated by rtscope, else by isolcpus, else nohz_full,
/// else every online CPU.
pub fn default_rt_cpus(f: &Facts) -> (Vec<usize>, String) {
    if let Some(t) = &f.tuning
        && matches!(t.state, TuningState::Applied | TuningState::InUse)
    {
        return (t.isolated_cpus.clone(), "isolated by rtscope tune".into());
    }
    if let Some(iso) = f.kernel_isolated.clone().filter(|v| !v.is_empty()) {
        return (iso, "isolated by isolcpus".into());
    }
    if let Some(c) = f.boot.isolcpus_cpus().filter(|v| !v.is_empty()) {
        return (c, "isolcpus".into());
    }
    if let Some(c) = f.timers.nohz_full_cpus.clone().filter(|v| !v.is_empty()) {
        return (c, "nohz_full".into());
    }
    (
        f.online.clone(),
        "all online CPUs; choose with --cpus".into(),
    )
}

/// Counts per status.
pub fn summary(findings: &[Finding]) -> [(Status, usize); 4] {
    let n = |s| findings.iter().filter(|f| f.status == s).count();
    [
        (Status::Fail, n(Status::Fail)),
        (Status::Warn, n(Status::Warn)),
        (Status::Ok, n(Status::Ok)),
        (Status::Info, n(Status::Info)),
    ]
}

/// Helper for checks: "CPU 2: x; CPU 3: y".
pub fn per_cpu(items: &[(usize, String)]) -> String {
    items
        .iter()
        .map(|(c, s)| format!("CPU {c}: {s}"))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests;
