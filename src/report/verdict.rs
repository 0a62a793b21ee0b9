//! The verdict of a run: which class of real time its observed worst case
//! supports, stated with the evidence it rests on and the limits of that
//! evidence. The classes follow the rule of thumb of Christophe Blaess's
//! articles on measuring real-time Linux with cyclictest (2014): tolerances
//! of milliseconds, a vanilla kernel suffices; hundreds of µs, PREEMPT_RT;
//! tens of µs, a co-kernel such as Xenomai; under 10 µs, not Linux. A
//! class is named as a class ("the hundreds-of-µs class"), never by a
//! kernel's name, which would read as the kernel measured.
//!
//! Only wake-up latencies get a verdict: a run of another quantity (oslat's
//! busy-loop gaps, rtla osnoise's noise) says what it measures instead.
//!
//! A verdict never claims a bound: a maximum observed is a fact about one
//! run, not a guarantee about the system. And it is *provisional* unless
//! the run was long and loaded enough to have met the rare events a
//! verdict speaks of ([`Standing`]): then the headline says so first, and
//! names the class it points to. Pure function of the record.
//!
//! Before the class, the headline says whether the run met its deadline
//! (the user's `--deadline`, else the period), with the periods beyond
//! it and the missed periods ([`deadline`]): a run that missed its
//! deadline is never called fit for it, whatever its class. Its short
//! forms (the report's title and contents, tables) say the deadline first
//! too ([`status_line`]). The maximum is written as every table writes it
//! ([`num::max_latency`]).
//!
//! The classes map a tolerance to the kernel it needs; the verdict speaks
//! of the kernel the run measured. On a PREEMPT_RT kernel (the record's
//! fingerprint says so) a worst case of milliseconds does not point to "a
//! vanilla kernel": it points outside the scheduler (a hypervisor, SMIs,
//! a driver, firmware), and the headline and the class's label say that.
//!
//! Every class has both ends. Above the milliseconds class (1 ms to
//! 10 ms) lies no class of real time: a worst case of 10 ms or more is a
//! stall (a thread that held the CPU, a device, the hypervisor, swapping),
//! and the verdict calls it one rather than "fit for milliseconds".

mod deadline;

pub use deadline::{Beyond, Check, Deadline, Outcome, beyond, share};

use super::known;
use crate::kinds::SourceKind;
use crate::record::{EndReason, LoadRecord, Quantity, RunRecord, RunStatus, Stated, Unknowable};
use crate::text::num;

/// The class of real time a worst case supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// No samples: nothing to judge.
    NoData,
    /// Worst case ≥ 10 ms: beyond every class of real time.
    Stall,
    /// 1 ms ≤ worst case < 10 ms.
    Milliseconds,
    /// 100 µs ≤ worst case < 1 ms.
    HundredsOfMicros,
    /// 10 µs ≤ worst case < 100 µs.
    TensOfMicros,
    /// Worst case < 10 µs.
    UnderTenMicros,
}

impl Class {
    pub fn of_max_ns(max_ns: Option<u64>) -> Class {
        match max_ns {
            None => Class::NoData,
            Some(m) if m >= STALL_NS => Class::Stall,
            Some(m) if m >= 1_000_000 => Class::Milliseconds,
            Some(m) if m >= 100_000 => Class::HundredsOfMicros,
            Some(m) if m >= 10_000 => Class::TensOfMicros,
            Some(_) => Class::UnderTenMicros,
        }
    }

    /// Milliseconds or more: the classes that point outside the scheduler
    /// on PREEMPT_RT.
    pub fn at_least_milliseconds(self) -> bool {
        matches!(self, Class::Milliseconds | Class::Stall)
    }

    /// Short name, also the CSS class of the verdict box.
    pub fn key(self) -> &'static str {
        match self {
            Class::NoData => "no-data",
            Class::Stall => "stall",
            Class::Milliseconds => "milliseconds",
            Class::HundredsOfMicros => "hundreds-us",
            Class::TensOfMicros => "tens-us",
            Class::UnderTenMicros => "under-10us",
        }
    }

    /// The class's short name for prose ("in the tens-of-µs class"),
    /// without a kernel.
    pub fn name(self) -> &'static str {
        match self {
            Class::NoData => "no-data",
            Class::Stall => "stall",
            Class::Milliseconds => "milliseconds",
            Class::HundredsOfMicros => "hundreds-of-µs",
            Class::TensOfMicros => "tens-of-µs",
            Class::UnderTenMicros => "under-10-µs",
        }
    }

    /// The class in words, as a class: no kernel's name, which would
    /// read as the kernel measured ("hundreds of µs (PREEMPT_RT)" on a
    /// vanilla kernel). For a run, use [`tolerance`] (or
    /// [`Verdict::tolerance`]), which knows its kernel.
    pub fn tolerance(self) -> &'static str {
        match self {
            Class::NoData => "no data",
            Class::Stall => "stall class (10 ms or more: no class of real time)",
            Class::Milliseconds => "milliseconds class",
            Class::HundredsOfMicros => "hundreds-of-µs class",
            Class::TensOfMicros => "tens-of-µs class",
            Class::UnderTenMicros => "under-10-µs class",
        }
    }
}

/// Where the milliseconds class ends: a worst case of this or more is a
/// stall, beyond every class of real time.
pub const STALL_NS: u64 = 10_000_000;

/// A verdict needs at least this long a run (rteval and OSADL measure
/// for hours under load; one hour is the least this tool accepts).
pub const VERDICT_MIN_DURATION_NS: u64 = 3_600_000_000_000;
/// [`VERDICT_MIN_DURATION_NS`] in words.
pub const VERDICT_MIN_DURATION_TEXT: &str = "1 h";
/// A verdict needs a load that kept the CPUs it ran on at least this busy
/// on average (rteval's aim: every CPU always has work to schedule).
pub const VERDICT_MIN_LOAD_BUSY_PCT: f64 = 50.0;
/// The load the provisional headline recommends.
pub const RECOMMENDED_LOAD: &str = "hell";

/// Whether a run's evidence is enough for a verdict.
#[derive(Clone, Debug, PartialEq)]
pub enum Standing {
    /// Long enough, under a load that kept the CPUs busy.
    Firm,
    /// Short, unloaded, or loaded too lightly: what falls short, in a few
    /// words each (e.g. "30 s", "no load").
    Provisional(Vec<String>),
}

impl Standing {
    /// The rule: at least [`VERDICT_MIN_DURATION_NS`] measured, under a
    /// load recorded with the run whose achieved CPU busy time, averaged
    /// over the CPUs it ran on, is at least [`VERDICT_MIN_LOAD_BUSY_PCT`].
    /// A load whose achievement was not recorded (older records, imports)
    /// does not count: nothing shows that it kept the CPUs busy.
    pub fn of(run: &RunRecord) -> Standing {
        let mut short = Vec::new();
        let duration = known(run, Unknowable::Duration, || {
            num::duration(crate::units::run_length(run.duration_ns))
        });
        let duration = if run.knows(Unknowable::Duration) {
            duration
        } else {
            format!("duration {duration}")
        };
        if run.duration_ns < VERDICT_MIN_DURATION_NS {
            short.push(duration.clone());
        }
        match &run.load {
            None if run.source.kind.is(SourceKind::Imported) => short.push("load unknown".into()),
            None => short.push("no load".into()),
            Some(l) => match load_busy_pct(l) {
                None => short.push(format!("load '{}' of unknown strength", l.profile)),
                Some(b) if b < VERDICT_MIN_LOAD_BUSY_PCT => {
                    short.push(format!("load '{}' kept the CPUs {b:.0}% busy", l.profile))
                }
                Some(_) => {}
            },
        }
        if short.is_empty() {
            Standing::Firm
        } else {
            // Always say how long it was, even when only the load falls short.
            if run.duration_ns >= VERDICT_MIN_DURATION_NS {
                short.insert(0, duration);
            }
            Standing::Provisional(short)
        }
    }

    pub fn is_provisional(&self) -> bool {
        matches!(self, Standing::Provisional(_))
    }

    /// "provisional: 30 s, no load; measure ≥ 1 h with --load hell for a
    /// verdict", or `None` for a firm verdict.
    pub fn note(&self) -> Option<String> {
        match self {
            Standing::Firm => None,
            Standing::Provisional(why) => Some(format!(
                "provisional: {}; measure ≥ {VERDICT_MIN_DURATION_TEXT} with --load {RECOMMENDED_LOAD} for a verdict",
                why.join(", "),
            )),
        }
    }
}

/// Average CPU busy time the load achieved over the CPUs it ran on (all
/// CPUs sampled when it was not confined), if the record says.
fn load_busy_pct(load: &LoadRecord) -> Option<f64> {
    let achieved = load.achieved.as_ref()?;
    let confined = load
        .cpus
        .as_deref()
        .and_then(|c| crate::units::parse_cpu_list(c).ok());
    let per_cpu: Vec<f64> = achieved["cpus"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|c| {
                    let cpu = c["cpu"].as_u64().map(|v| v as usize);
                    match (&confined, cpu) {
                        (Some(list), Some(cpu)) => list.contains(&cpu),
                        _ => true,
                    }
                })
                .filter_map(|c| c["busy_pct_avg"].as_f64())
                .collect()
        })
        .unwrap_or_default();
    if per_cpu.is_empty() {
        return achieved["cpu_busy_pct_avg"].as_f64();
    }
    Some(per_cpu.iter().sum::<f64>() / per_cpu.len() as f64)
}

/// The class of `run`'s worst case in words, on the kernel it measured:
/// [`Class::tolerance`], except that milliseconds on PREEMPT_RT point
/// outside the scheduler rather than to a vanilla kernel.
pub fn tolerance(run: &RunRecord) -> String {
    let class = Class::of_max_ns(run.overall.max_ns);
    if class == Class::Milliseconds && is_rt_kernel(run) {
        "milliseconds class (on PREEMPT_RT: a cause outside the scheduler)".into()
    } else if class == Class::Stall && is_rt_kernel(run) {
        "stall class (10 ms or more; on PREEMPT_RT: a cause outside the scheduler)".into()
    } else {
        class.tolerance().into()
    }
}

/// A run whose numbers are not wake-up latencies: what they are.
fn other_quantity(run: &RunRecord) -> Option<&'static str> {
    let q = Quantity::of(run);
    (q != Quantity::WakeupLatency).then(|| q.describe())
}

/// One line for the report's title and contents, tables and `compare`,
/// the deadline first: "deadline missed (yours, 1 ms); worst case in the
/// milliseconds class (provisional: 20 s, no load)". A run of another
/// quantity gets no wake-up verdict: the line says what it measures.
pub fn status_line(run: &RunRecord) -> String {
    let class = Class::of_max_ns(run.overall.max_ns);
    if let Some(q) = other_quantity(run) {
        return format!("no wake-up verdict: {q}");
    }
    if class == Class::NoData {
        return "no verdict: no samples".into();
    }
    let check = deadline::Check::of(run);
    let deadline = match check.outcome() {
        Outcome::Met => format!("deadline met ({})", check.deadline.describe()),
        Outcome::Missed => format!("deadline missed ({})", check.deadline.describe()),
        Outcome::PossiblyMissed => {
            format!("deadline possibly missed ({})", check.deadline.describe())
        }
        Outcome::Unknown if check.deadline == Deadline::Unknown => "deadline unknown".into(),
        Outcome::Unknown => format!("deadline not judged ({})", check.deadline.describe()),
    };
    let mut s = format!("{deadline}; worst case in the {}", tolerance(run));
    if let Standing::Provisional(why) = Standing::of(run) {
        s.push_str(&format!(" (provisional: {})", why.join(", ")));
    }
    s
}

/// One line on the run's deadline, for summaries, tables and `compare`
/// ([`Check::status`]); a run of another quantity has none.
pub fn deadline_status(run: &RunRecord) -> String {
    match other_quantity(run) {
        Some(q) => format!("not judged: {q}"),
        None => Check::of(run).status(),
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// The run against its deadline (the headline's first sentence).
    pub deadline: Check,
    pub class: Class,
    /// The class in words, on the kernel measured ([`tolerance`]).
    pub tolerance: String,
    /// The short form, deadline first ([`status_line`]): the report's
    /// title and contents.
    pub title: String,
    /// Whether the evidence is enough for a verdict.
    pub standing: Standing,
    /// The verdict in one or two sentences.
    pub headline: String,
    /// What it rests on.
    pub evidence: Vec<String>,
    /// Why it may not hold.
    pub limits: Vec<String>,
    /// What to try next, when something is worth trying.
    pub advice: Vec<String>,
}

fn is_rt_kernel(run: &RunRecord) -> bool {
    run.fingerprint.preemption_model == "rt"
}

fn headline(class: Class, max: &str) -> String {
    match class {
        Class::NoData => "No verdict: this run holds no latency samples.".into(),
        Class::Stall => format!(
            "Worst case {max}: 10 ms or more, beyond every class of real time. As measured, \
             this system stalled (a thread that held the CPU, a device or a hypervisor that \
             stopped it, memory swapped in) and is fit for no real-time tolerance until the \
             stall is found: trace it with --explain."
        ),
        Class::Milliseconds => format!(
            "Worst case {max}: as measured, this system is fit for tolerances of milliseconds, \
             the class for which a vanilla kernel suffices. It does not support tolerances of \
             hundreds of microseconds or less."
        ),
        Class::HundredsOfMicros => format!(
            "Worst case {max}: as measured, this system is fit for tolerances of hundreds of \
             microseconds, the class PREEMPT_RT is meant for. It does not support tolerances of \
             tens of microseconds."
        ),
        Class::TensOfMicros => format!(
            "Worst case {max}: as measured, this system is fit for tolerances of tens of \
             microseconds, the class for which the rule of thumb turns to a co-kernel such as \
             Xenomai."
        ),
        Class::UnderTenMicros => format!(
            "Worst case {max}: under 10 µs. The rule of thumb does not trust Linux with \
             tolerances under 10 µs: read this as the best this run saw, not as a property \
             of the system."
        ),
    }
}

/// The headline of a provisional verdict: what falls short first, then
/// the class the run points to, without "fit for".
fn provisional_headline(class: Class, max: &str, note: &str) -> String {
    let points = match class {
        Class::NoData => return headline(class, max),
        Class::Stall => "a stall of 10 ms or more, beyond every class of real time",
        Class::Milliseconds => {
            "tolerances of milliseconds, the class for which a vanilla kernel suffices"
        }
        Class::HundredsOfMicros => {
            "tolerances of hundreds of microseconds, the class PREEMPT_RT is meant for"
        }
        Class::TensOfMicros => {
            "tolerances of tens of microseconds, the class for which the rule of thumb turns to a co-kernel such as Xenomai"
        }
        Class::UnderTenMicros => "under 10 µs, where the rule of thumb no longer trusts Linux",
    };
    format!(
        "{}. So far the worst case, {max}, points to {points}.",
        sentence(note)
    )
}

/// `note` with a capital first letter.
fn sentence(note: &str) -> String {
    let mut note = note.to_string();
    if let Some(first) = note.get(..1) {
        note.replace_range(..1, &first.to_uppercase());
    }
    note
}

/// What a millisecond spike on PREEMPT_RT points to, the run's
/// hypervisor first when it ran in a virtual machine.
fn outside_causes(run: &RunRecord) -> String {
    let rest = "SMIs (firmware), a driver that holds interrupts or preemption off, or \
                power management";
    match virtualization(run) {
        Some(v) => format!("the hypervisor of this virtual machine ({v}), then {rest}"),
        None => format!("a hypervisor (in a virtual machine), {rest}"),
    }
}

/// The headline of a PREEMPT_RT run whose worst case is milliseconds or
/// a stall (`note`: what falls short, for a provisional one).
fn rt_spike_headline(class: Class, max: &str, note: Option<&str>, causes: &str) -> String {
    let why = format!(
        "PREEMPT_RT is the kernel for tolerances of hundreds of microseconds, so spikes of \
         milliseconds on it point outside the scheduler: {causes}."
    );
    let (fit, points) = match class {
        Class::Stall => (
            "stalled for 10 ms or more and is fit for no real-time tolerance",
            "a stall of 10 ms or more",
        ),
        _ => (
            "is fit for tolerances of milliseconds only",
            "tolerances of milliseconds only",
        ),
    };
    match note {
        None => format!(
            "Worst case {max} on a PREEMPT_RT kernel: as measured, this system {fit}. {why}"
        ),
        Some(n) => format!(
            "{}. So far the worst case, {max}, on a PREEMPT_RT kernel, points to {points}. {why}",
            sentence(n)
        ),
    }
}

/// Where a sample was taken, for prose: `CPU 1, 8.77 s into the run
/// (cycle 8766, 2026-11-20 23:37:41 UTC)`.
fn where_max(run: &RunRecord) -> Option<String> {
    let max = run.overall.max_ns?;
    let at = run.overall.max_at?;
    let thread = run
        .threads
        .iter()
        .find(|t| t.stats.max_ns == Some(max))
        .map(|t| super::plot::data::thread_name(run, t));
    Some(format!(
        "{}{} into the run (cycle {}, {})",
        thread.map(|t| format!("{t}, ")).unwrap_or_default(),
        crate::units::fmt_duration(at.offset_ns),
        at.cycle,
        crate::units::fmt_unix_utc(at.unix_ns)
    ))
}

/// The hypervisor the run was measured under, if any: the fingerprint's
/// `virtualization`, or an older record's `extra` entry about it.
fn virtualization(run: &RunRecord) -> Option<String> {
    run.fingerprint
        .virtualization
        .clone()
        .or_else(|| {
            run.fingerprint
                .extra
                .iter()
                .find(|(k, _)| k.contains("virt") || k.contains("hypervisor"))
                .map(|(_, v)| v.clone())
        })
        .filter(|v| !v.is_empty() && v != "none" && v != "bare-metal" && v != "false")
}

/// The verdict on `run`: whether it met its deadline, the class of its
/// maximum, the evidence it rests on, what limits it, and what to do next.
pub fn verdict(run: &RunRecord) -> Verdict {
    let class = Class::of_max_ns(run.overall.max_ns);
    let max = run
        .overall
        .max_ns
        .map(num::max_latency)
        .unwrap_or_else(|| "-".into());
    let mut limits = limits_of_the_maximum(run, class, &max);
    limits.extend(limits_of_the_run(run));
    let standing = Standing::of(run);
    let check = Check::of(run);
    let headline = match (class, other_quantity(run)) {
        (Class::NoData, _) => headline(class, &max),
        (_, Some(q)) => format!(
            "No wake-up verdict: this run measures {q}, so neither a wake-up deadline nor a \
             wake-up latency class applies. Its largest value was {max}."
        ),
        _ => format!(
            "{} {}",
            check.sentence(&max),
            class_headline(run, class, &max, &check, standing.note().as_deref())
        ),
    };
    Verdict {
        deadline: check,
        class,
        tolerance: tolerance(run),
        title: status_line(run),
        standing,
        headline,
        evidence: evidence(run, &max, &check),
        limits,
        advice: advice(run, class),
    }
}

/// What the headline says of the class, after the deadline: after a miss,
/// that the worst case is too slow for it (never "fit for"); else the
/// class the run supports, or points to while it is provisional.
fn class_headline(
    run: &RunRecord,
    class: Class,
    max: &str,
    check: &Check,
    note: Option<&str>,
) -> String {
    if matches!(check.outcome(), Outcome::Missed | Outcome::PossiblyMissed) {
        let mut s = check.class_after_miss(class, max);
        if class.at_least_milliseconds() && is_rt_kernel(run) {
            s.push_str(&format!(
                " On PREEMPT_RT, spikes of milliseconds point outside the scheduler: {}.",
                outside_causes(run)
            ));
        }
        if let Some(n) = note {
            s.push_str(&format!(" {}.", sentence(n)));
        }
        return s;
    }
    if class.at_least_milliseconds() && is_rt_kernel(run) {
        rt_spike_headline(class, max, note, &outside_causes(run))
    } else {
        match note {
            Some(note) => provisional_headline(class, max, note),
            None => headline(class, max),
        }
    }
}

/// What was measured: how much, where, how; the worst case and the
/// tail, missed periods, kernel, load and limit.
fn evidence(run: &RunRecord, max: &str, check: &Check) -> Vec<String> {
    let s = &run.overall;
    let mut evidence = vec![what_was_measured(run)];
    evidence.push(format!("Deadline: {}.", check.status()));
    if let Some(w) = where_max(run) {
        evidence.push(format!("The worst case, {max}, happened on {w}."));
    }
    if let (Some(p4), Some(p3)) = (s.quantile("p99.99"), s.quantile("p99.9")) {
        evidence.push(tail_sentence(p4, p3));
    }
    if run.knows(Unknowable::MissedPeriods) {
        evidence.push(format!(
            "Missed periods: {} (periods whose start had already passed when the thread woke \
             for an earlier one, so they had no wake-up of their own).",
            num::count(s.missed_periods)
        ));
    } else {
        evidence.push("Missed periods: unknown (the source does not count them).".into());
    }
    if let Some(o) = overflow_text(run) {
        evidence.push(format!("{o}."));
    }
    let kernel = &run.fingerprint;
    if !kernel.kernel_release.is_empty() {
        evidence.push(format!(
            "Kernel {}, preemption model {}{}.",
            kernel.kernel_release,
            kernel.preemption_model,
            kernel
                .preempt_dynamic_mode
                .as_ref()
                .map(|m| format!(" (PREEMPT_DYNAMIC mode {m})"))
                .unwrap_or_default()
        ));
    }
    if let Some(l) = &run.load {
        evidence.push(format!(
            "Measured under the load '{}' ({} phase{}).",
            l.profile,
            l.phases.len(),
            if l.phases.len() == 1 { "" } else { "s" }
        ));
    }
    if let Some(limit) = run.limits.max_latency_ns {
        evidence.push(format!(
            "The limit asked for (--max-latency, the exit status), {}, was {}.",
            num::latency(limit),
            if run.limits.exceeded {
                "exceeded"
            } else {
                "met"
            }
        ));
    }
    evidence
}

/// "99.99 % of periods woke within 40.5 µs, 99.9 % within 38.5 µs."; a
/// quantile among an import's overflows is said as the bound it is
/// ("Percentiles p99.99 and p99.9 are at least 40.0 µs, not known
/// exactly: they lie among the overflows.").
fn tail_sentence(p4: Stated<u64>, p3: Stated<u64>) -> String {
    let shares = [("99.99 %", "p99.99", p4), ("99.9 %", "p99.9", p3)];
    let exact: Vec<String> = shares
        .iter()
        .filter_map(|(share, _, v)| v.exact().map(|ns| (share, ns)))
        .enumerate()
        .map(|(i, (share, ns))| {
            let periods = if i == 0 { " of periods woke" } else { "" };
            format!("{share}{periods} within {}", num::max_latency(ns))
        })
        .collect();
    let exact = exact.join(", ");
    let bounds: Vec<(&str, u64)> = shares
        .iter()
        .filter(|(_, _, v)| v.is_bound())
        .map(|(_, name, v)| (*name, v.value()))
        .collect();
    if bounds.is_empty() {
        return format!("{exact}.");
    }
    let names: Vec<&str> = bounds.iter().map(|(n, _)| *n).collect();
    let lowest = bounds.iter().map(|(_, v)| *v).min().unwrap_or(0);
    let (verb, pronoun) = if bounds.len() == 1 {
        ("is", "it lies")
    } else {
        ("are", "they lie")
    };
    let bound = format!(
        "{} {verb} at least {}, not known exactly: {pronoun} among the overflows",
        names.join(" and "),
        num::max_latency(lowest)
    );
    if exact.is_empty() {
        format!("Percentiles {bound}.")
    } else {
        format!("{exact}; {bound}.")
    }
}

/// "Overflows: 250 samples beyond the source's histogram, values unknown
/// (each at least 1000.0 µs, the largest the maximum)", when the source
/// counted some.
pub fn overflow_text(run: &RunRecord) -> Option<String> {
    let o = run.overall.overflow.filter(|o| o.count > 0)?;
    Some(format!(
        "Overflows: {} sample{} beyond the source's histogram, value{} unknown (each at least \
         {}, the largest the maximum)",
        num::count(o.count),
        if o.count == 1 { "" } else { "s" },
        if o.count == 1 { "" } else { "s" },
        num::max_latency(o.from_ns)
    ))
}

/// The first sentence of the evidence: periods, duration, threads and
/// CPUs, interval, policy and priority.
fn what_was_measured(run: &RunRecord) -> String {
    let s = &run.overall;
    // A compact list (`0-127`): 128 threads are not 128 numbers.
    let cpus: Vec<usize> = run
        .threads
        .iter()
        .filter_map(|t| t.cpu.map(|c| c as usize))
        .collect();
    let list = crate::units::format_cpu_list(&cpus);
    format!(
        "{} periods measured over {} by {} thread{}{}, every {}, policy {} priority {}.",
        num::count(s.samples),
        known(run, Unknowable::Duration, || num::duration_with_hours(
            crate::units::run_length(run.duration_ns)
        )),
        run.threads.len(),
        if run.threads.len() == 1 { "" } else { "s" },
        if cpus.is_empty() {
            String::new()
        } else {
            format!(
                " on CPU{} {list}",
                if list.contains([',', '-']) { "s" } else { "" }
            )
        },
        known(run, Unknowable::Interval, || num::period(
            run.options.interval_ns
        )),
        run.options.policy,
        known(run, Unknowable::Priority, || run
            .options
            .priority
            .to_string()),
    )
}

/// How far the maximum can be trusted: not a bound, no load, the
/// number of periods, the length of the run.
fn limits_of_the_maximum(run: &RunRecord, class: Class, max: &str) -> Vec<String> {
    let s = &run.overall;
    let mut limits = Vec::new();
    if class != Class::NoData {
        limits.push(
            "A maximum observed is not a bound guaranteed: a longer run, another load or a \
             rare event (firmware, SMI, thermal throttling, a driver) can exceed it."
                .into(),
        );
    }
    if run.load.is_none() {
        limits.push(
            "No load was recorded with this run. Worst cases show under load (CPU, memory, \
             I/O, interrupts): an idle system looks better than it will be in use."
                .into(),
        );
    }
    if s.samples > 0 {
        limits.push(format!(
            "With {} periods and none above {max}, the chance that one period exceeds it is \
             below 3/N = {} (one period in {}) at 95 % confidence, and only if periods were \
             independent, which latency spikes are not (they come in bursts).",
            num::count(s.samples),
            num::probability(3.0 / s.samples as f64),
            num::count(s.samples.div_ceil(3)),
        ));
    }
    if run.duration_ns < 3_600_000_000_000 && s.samples > 0 && run.knows(Unknowable::Duration) {
        limits.push(format!(
            "The run lasted {}. Rare spikes take hours to show: Christophe Blaess's articles \
             on measuring real-time Linux let such tests run 12 hours or more, under heavy load \
             (OSADL's test farm measures for hours too).",
            num::duration(crate::units::run_length(run.duration_ns))
        ));
    }
    limits
}

/// What the run itself leaves out: its policy, how it ended, where it
/// came from, its omission correction, a virtual machine.
fn limits_of_the_run(run: &RunRecord) -> Vec<String> {
    let mut limits = Vec::new();
    if run.options.policy.known().is_some_and(|p| !p.is_realtime()) {
        limits.push(format!(
            "The threads ran under the time-sharing policy '{}': this measures an ordinary \
             task, not a real-time one.",
            run.options.policy
        ));
    }
    if run.status == RunStatus::Interrupted {
        limits.push(
            "The run was interrupted: it holds what was recorded up to its last checkpoint.".into(),
        );
    }
    match run.end_reason {
        EndReason::BreakThreshold => limits.push(
            "The run stopped at its break threshold: its maximum is the event that stopped it, \
             and the time after it was not measured."
                .into(),
        ),
        EndReason::Error => {
            limits.push("The run stopped on an error: the time after it was not measured.".into())
        }
        _ => {}
    }
    if run.source.kind.is(SourceKind::Imported) {
        let res = run
            .threads
            .first()
            .map(|t| t.histogram.resolution_ns)
            .unwrap_or(1);
        limits.push(format!(
            "Imported from {}: latencies at {} resolution; what the source did not record is \
             missing.",
            run.source.format.as_deref().unwrap_or("another tool"),
            num::period(res)
        ));
    }
    if !run.options.omission_correction && !run.source.kind.is(SourceKind::Imported) {
        // (An imported run says what its source did not count above.)
        limits.push(
            "Missed periods were counted but not recorded with their lateness \
             (--no-omission-correction): quantiles understate long stalls."
                .into(),
        );
    }
    if let Some(v) = virtualization(run) {
        limits.push(format!(
            "Measured in a virtual machine ({v}): the host's scheduling adds latencies a bare \
             machine would not have, and can hide others."
        ));
    }
    limits
}

/// The usual next step for the class of the maximum, on this kernel.
fn advice(run: &RunRecord, class: Class) -> Vec<String> {
    let mut advice = Vec::new();
    match class {
        Class::Stall => advice.push(
            "Find the stall before tuning anything: measure again with --explain (it names \
             what ran instead of the measuring thread), look for SCHED_FIFO or SCHED_RR \
             threads that spin, swapping, a driver or a hypervisor that stops the CPU."
                .into(),
        ),
        Class::Milliseconds if !is_rt_kernel(run) => advice.push(
            "For tolerances of hundreds of µs, the usual next steps are a PREEMPT_RT kernel, \
             real-time threads on isolated CPUs, then a new measurement under load."
                .into(),
        ),
        Class::Milliseconds => advice.push(
            "A PREEMPT_RT kernel with millisecond spikes points at something outside the \
             scheduler: a hypervisor, SMIs or firmware, a driver holding interrupts or \
             preemption off, deep idle states, frequency changes, interrupts on the measuring \
             CPUs. Trace the worst case; on a virtual machine, measure the same kernel on bare \
             metal."
                .into(),
        ),
        Class::HundredsOfMicros if is_rt_kernel(run) => advice.push(
            "For tens of µs: isolate the measuring CPUs (isolcpus, nohz_full, rcu_nocbs, \
             interrupt affinity), fix the CPU frequency, or consider a co-kernel."
                .into(),
        ),
        _ => {}
    }

    advice
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::synthetic;

    #[test]
    fn classes_follow_the_rule_of_thumb() {
        assert_eq!(Class::of_max_ns(None), Class::NoData);
        assert_eq!(Class::of_max_ns(Some(9_999)), Class::UnderTenMicros);
        assert_eq!(Class::of_max_ns(Some(10_000)), Class::TensOfMicros);
        assert_eq!(Class::of_max_ns(Some(99_999)), Class::TensOfMicros);
        assert_eq!(Class::of_max_ns(Some(100_000)), Class::HundredsOfMicros);
        assert_eq!(Class::of_max_ns(Some(1_000_000)), Class::Milliseconds);
        // Every class has an upper end: 10 ms and more is a stall.
        assert_eq!(Class::of_max_ns(Some(9_999_999)), Class::Milliseconds);
        assert_eq!(Class::of_max_ns(Some(10_000_000)), Class::Stall);
        assert_eq!(Class::of_max_ns(Some(409_000_000)), Class::Stall);
    }

    #[test]
    fn a_virtual_machine_is_named_as_a_limit() {
        let mut run = synthetic(&[vec![5_000, 7_000]]);
        assert!(
            !verdict(&run)
                .limits
                .iter()
                .any(|l| l.contains("virtual machine"))
        );
        run.fingerprint.virtualization = Some("kvm".into());
        assert!(
            verdict(&run)
                .limits
                .iter()
                .any(|l| l.contains("virtual machine (kvm)"))
        );
        run.fingerprint.virtualization = Some("none".into());
        assert!(
            !verdict(&run)
                .limits
                .iter()
                .any(|l| l.contains("virtual machine"))
        );
    }

    #[test]
    fn an_imported_run_is_not_told_of_an_option_it_never_had() {
        let mut run = synthetic(&[vec![5_000, 7_000]]);
        run.options.omission_correction = false;
        let said = |run: &RunRecord| {
            verdict(run)
                .limits
                .iter()
                .any(|l| l.contains("--no-omission-correction"))
        };
        assert!(said(&run));
        run.source.kind = SourceKind::Imported.into();
        assert!(!said(&run));
    }

    #[test]
    fn a_short_idle_vanilla_run_says_so() {
        // Every 10 ms: a worst case of 3.43 ms meets the period.
        let mut run = synthetic(&[vec![5_000, 7_000, 3_432_529]]);
        run.options.interval_ns = 10_000_000;
        let v = verdict(&run);
        assert_eq!(v.class, Class::Milliseconds);
        assert_eq!(v.deadline.outcome(), Outcome::Met);
        assert_eq!(
            v.standing,
            Standing::Provisional(vec!["60 s".into(), "no load".into()])
        );
        assert!(
            v.headline.starts_with(
                "Deadline met: none of the 3 periods woke later than the deadline (the period, \
                 10 ms); the worst case was 3432.5 µs. Provisional: 60 s, no load; measure ≥ 1 \
                 h with --load hell for a verdict. "
            ),
            "{}",
            v.headline
        );
        assert!(v.headline.contains("vanilla kernel suffices"));
        assert!(!v.headline.contains("fit for"), "{}", v.headline);
        assert_eq!(v.tolerance, "milliseconds class");
        let limits = v.limits.join("\n");
        assert!(limits.contains("not a bound guaranteed"));
        assert!(limits.contains("3/N = 1 (one period in 1)"), "{limits}");
        assert!(limits.contains("No load was recorded"));
        assert!(limits.contains("lasted 60 s"));
        let evidence = v.evidence.join("\n");
        assert!(
            evidence.contains("3 periods measured over 60 s"),
            "{evidence}"
        );
        assert!(
            evidence.contains("CPU 0, 42ms into the run (cycle 42"),
            "{evidence}"
        );
        assert!(
            evidence.contains("Deadline: met (the period, 10 ms): no period later."),
            "{evidence}"
        );
        assert!(v.advice[0].contains("PREEMPT_RT"));
    }

    /// A worst case of 409 ms (an import without a period: the class is
    /// all the user is told) is a stall, never "fit for milliseconds",
    /// on any kernel.
    #[test]
    fn hundreds_of_milliseconds_are_a_stall_not_a_class_of_real_time() {
        let mut run = synthetic(&[vec![5_000, 7_000, 409_000_000]]);
        run.options.interval_ns = 1_000_000_000;
        let v = verdict(&run);
        assert_eq!(v.class, Class::Stall);
        assert!(
            v.headline.contains("beyond every class of real time"),
            "{}",
            v.headline
        );
        assert!(
            !v.headline.contains("vanilla kernel suffices"),
            "{}",
            v.headline
        );
        assert!(!v.headline.contains("fit for tolerances"), "{}", v.headline);
        assert!(
            v.title.contains("worst case in the stall class"),
            "{}",
            v.title
        );
        assert!(v.advice[0].contains("--explain"), "{:?}", v.advice);
        run.fingerprint.preemption_model = "rt".into();
        let v = verdict(&run);
        assert!(
            v.headline.contains("outside the scheduler"),
            "{}",
            v.headline
        );
        assert!(
            v.headline.contains("a stall of 10 ms or more"),
            "{}",
            v.headline
        );
        assert!(v.tolerance.starts_with("stall class"), "{}", v.tolerance);
    }

    /// The case: a 1 ms loop that woke 8.27 ms late and missed
    /// 109 periods is never told that a vanilla kernel suffices.
    #[test]
    fn a_missed_period_is_said_first_and_never_called_sufficient() {
        let mut late = vec![5_000; 20_000];
        // One stall, each period it missed recorded with its lateness.
        late.extend((0..9).map(|k| 8_270_000 - k * 1_000_000));
        let mut run = synthetic(&[late]);
        run.overall.missed_periods = 109;
        let v = verdict(&run);
        assert_eq!(v.deadline.outcome(), Outcome::Missed);
        assert!(
            v.headline.starts_with(
                "Deadline missed: 8 of the 20\u{202f}009 periods (400 per million) woke later \
                 than the deadline (the period, 1 ms); besides, 109 periods were missed: their \
                 1 ms period had already begun when the thread woke for an earlier one, so they \
                 had no wake-up of their own (a wake-up k whole periods late misses k). The \
                 worst case, 8270.0 µs, is in the milliseconds class, too slow for this 1 ms \
                 period. Meeting it takes a worst case under 1 ms: tolerances of hundreds of \
                 microseconds, the class PREEMPT_RT is meant for."
            ),
            "{}",
            v.headline
        );
        for never in ["suffices", "fit for", "sufficient"] {
            assert!(!v.headline.contains(never), "{never}: {}", v.headline);
        }
        // The standing still says what falls short.
        assert!(v.headline.ends_with(
            "Provisional: 60 s, no load; measure ≥ 1 h with --load hell for a verdict."
        ));
        assert_eq!(
            deadline_status(&run),
            "MISSED (the period, 1 ms): 8 of 20\u{202f}009 periods (400 per million) later than \
             1 ms; besides, 109 periods missed (their 1 ms period began before the thread woke \
             for an earlier one)"
        );
        // The one-line status (compare, tables, summaries) says it first
        // too, and names no kernel that would suffice.
        assert_eq!(
            status_line(&run),
            "deadline missed (the period, 1 ms); worst case in the milliseconds class \
             (provisional: 60 s, no load)"
        );
        // Firm: still no "fit for".
        run.duration_ns = 2 * 3_600_000_000_000;
        run.load = Some(loaded("hell", None, &[(0, 97.0)]));
        let v = verdict(&run);
        assert!(
            v.headline.starts_with("Deadline missed: 8 of"),
            "{}",
            v.headline
        );
        assert!(!v.headline.contains("fit for"), "{}", v.headline);
        assert!(!v.headline.contains("suffices"), "{}", v.headline);
    }

    #[test]
    fn the_limit_and_the_deadline_are_shown_apart() {
        let mut run = synthetic(&[vec![5_000, 42_000]]);
        run.limits.max_latency_ns = Some(100_000);
        let v = verdict(&run);
        assert!(
            v.headline.starts_with(
                "Deadline met: none of the 2 periods woke later than the deadline (the period, \
                 1 ms); the worst case was 42.0 µs. Provisional:"
            ),
            "{}",
            v.headline
        );
        let evidence = v.evidence.join("\n");
        assert!(
            evidence.contains("Deadline: met (the period, 1 ms)"),
            "{evidence}"
        );
        assert!(
            evidence
                .contains("The limit asked for (--max-latency, the exit status), 100 µs, was met."),
            "{evidence}"
        );
    }

    /// A deadline tighter than the period: yours, and the class it takes.
    #[test]
    fn your_deadline_tighter_than_the_period() {
        let mut run = synthetic(&[vec![5_000, 6_000, 7_000, 42_000]]);
        run.limits.deadline_ns = Some(20_000);
        let v = verdict(&run);
        assert_eq!(v.deadline.deadline, Deadline::Yours(20_000));
        assert!(
            v.headline.starts_with(
                "Deadline missed: 1 of the 4 periods (250\u{202f}000 per million) woke later \
                 than the deadline (yours, 20 µs); 0 periods were missed. The worst case, 42.0 µs, is in the \
                 tens-of-µs class, too slow for your 20 µs deadline. Meeting it takes a worst \
                 case under 20 µs: tolerances of tens of microseconds, where the rule of thumb \
                 turns to a co-kernel such as Xenomai."
            ),
            "{}",
            v.headline
        );
        // Looser than the worst case: met, and the class as before.
        run.limits.deadline_ns = Some(50_000);
        let v = verdict(&run);
        assert!(
            v.headline.starts_with(
                "Deadline met: none of the 4 periods woke later than the deadline (yours, 50 µs)"
            ),
            "{}",
            v.headline
        );
        assert!(
            v.headline
                .contains("points to tolerances of tens of microseconds")
        );
    }

    /// A source that counted its samples and kept their extremes but no
    /// histogram (status lines, Xenomai's latency without -h) is judged
    /// by them: met when the max is within the deadline, else the max's
    /// period is late and every other but the min's may be; all are late
    /// when the min is. Without a sample count it stays unjudged.
    #[test]
    fn a_run_without_histogram_is_judged_by_its_extremes() {
        let mut run = synthetic(&[vec![5_000, 6_000, 14_000, 7_000]]);
        run.threads[0].histogram.buckets.clear();
        run.threads[0].histogram.resolution_ns = 1_000;
        run.overall.samples = 4;
        let met = Check::of(&run);
        assert_eq!(met.outcome(), Outcome::Met);
        assert_eq!(
            beyond(&run, 1_000_000).map(|b| (b.certain, b.at_most, b.samples)),
            Some((0, 0, 4))
        );
        assert_eq!(met.status(), "met (the period, 1 ms): no period later");
        assert!(
            verdict(&run)
                .headline
                .starts_with("Deadline met: none of the 4 periods woke later"),
            "{}",
            verdict(&run).headline
        );
        let late = |d| beyond(&run, d).map(|b| (b.certain, b.at_most, b.samples));
        // The max (14 µs) beyond 10 µs, the min (5 µs) within.
        assert_eq!(late(10_000), Some((1, 3, 4)));
        // The min beyond: every period.
        assert_eq!(late(4_000), Some((4, 4, 4)));
        // The max within the deadline but its 1 µs unit not: possible.
        assert_eq!(late(14_500), Some((0, 3, 4)));
        run.source.kind = SourceKind::Imported.into();
        run.source.unknown.push(Unknowable::Count);
        assert_eq!(Check::of(&run).outcome(), Outcome::Unknown);
    }

    /// A bucket that holds values on both sides of the deadline counts
    /// as "N to M"; a source's resolution can make a miss only possible.
    #[test]
    fn a_bucket_that_straddles_the_deadline_gives_a_range() {
        // 999 500 and 1 000 100 ns share the bucket [999 424, 1 000 447].
        let run = synthetic(&[vec![5_000, 999_500, 1_000_100]]);
        let b = beyond(&run, 1_000_000).unwrap();
        assert_eq!((b.certain, b.at_most, b.samples), (1, 2, 3));
        let v = verdict(&run);
        assert!(
            v.headline.starts_with(
                "Deadline missed: 1 to 2 of the 3 periods (333\u{202f}333 to 666\u{202f}667 \
                     per million)"
            ),
            "{}",
            v.headline
        );
        // Below the bucket: none beyond, whatever the bucket's width.
        assert_eq!(beyond(&run, 1_000_447).unwrap().at_most, 0);
        // A source of 1 µs resolution whose worst value is 1000 µs: it
        // may have been up to 1000.999 µs.
        let mut imported = synthetic(&[vec![5_000, 1_000_000]]);
        imported.threads[0].histogram.resolution_ns = 1_000;
        let v = verdict(&imported);
        assert_eq!(v.deadline.outcome(), Outcome::PossiblyMissed);
        assert!(
            v.headline.starts_with(
                "Deadline possibly missed: 0 to 1 of the 2 periods (0 to 500\u{202f}000 per \
                 million) may have woken later than the deadline (the period, 1 ms)"
            ),
            "{}",
            v.headline
        );
        assert!(v.headline.contains("at the edge of this 1 ms period"));
        assert!(!v.headline.contains("suffices"), "{}", v.headline);
    }

    #[test]
    fn an_import_without_its_interval_has_an_unknown_deadline() {
        let mut run = synthetic(&[vec![5_000, 3_000_000]]);
        run.source.kind = SourceKind::Imported.into();
        run.source.unknown = vec![Unknowable::Interval];
        run.options.interval_ns = 0;
        let v = verdict(&run);
        assert_eq!(v.deadline.outcome(), Outcome::Unknown);
        assert!(
            v.headline.starts_with(
                "Deadline unknown (the source did not record its period); pass --deadline. "
            ),
            "{}",
            v.headline
        );
        assert!(!v.headline.contains("1 ms"), "{}", v.headline);
        assert_eq!(
            deadline_status(&run),
            "unknown (the source did not record its period); pass --deadline"
        );
        // --deadline judges it.
        run.limits.deadline_ns = Some(2_000_000);
        assert!(
            verdict(&run).headline.starts_with(
                "Deadline missed: 1 of the 2 periods (500\u{202f}000 per million) woke later \
                 than the deadline (yours, 2 ms)"
            ),
            "{}",
            verdict(&run).headline
        );
    }

    #[test]
    fn shares_read_per_million_only() {
        assert_eq!(share(1, 4), "250\u{202f}000 per million");
        assert_eq!(share(1, 1000), "1\u{202f}000 per million");
        assert_eq!(share(8, 20_009), "400 per million");
        assert_eq!(share(3, 3_600_000), "0.833 per million");
        assert_eq!(share(0, 10), "0 per million");
        assert_eq!(share(0, 0), "-");
    }

    #[test]
    fn milliseconds_on_preempt_rt_point_outside_the_scheduler() {
        let mut run = synthetic(&[vec![5_000, 7_000, 3_432_529]]);
        run.options.interval_ns = 10_000_000;
        run.fingerprint.preemption_model = "rt".into();
        let v = verdict(&run);
        assert_eq!(v.class, Class::Milliseconds);
        assert!(
            v.headline.contains(
                "(the period, 10 ms); the worst case was 3432.5 µs. Provisional: 60 s, no load; \
                 measure ≥ 1 h with --load hell for a verdict. So far the worst case, 3432.5 \
                 µs, on a PREEMPT_RT kernel, points to tolerances of milliseconds only."
            ),
            "{}",
            v.headline
        );
        assert!(
            v.headline.contains("outside the scheduler: a hypervisor"),
            "{}",
            v.headline
        );
        assert!(v.headline.contains("SMIs"), "{}", v.headline);
        assert!(!v.headline.contains("vanilla"), "{}", v.headline);
        assert_eq!(
            v.tolerance,
            "milliseconds class (on PREEMPT_RT: a cause outside the scheduler)"
        );
        assert!(
            !status_line(&run).contains("vanilla"),
            "{}",
            status_line(&run)
        );
        assert!(v.advice[0].contains("outside the scheduler"));
        // Firm, in a virtual machine: its hypervisor is named first.
        run.duration_ns = 2 * 3_600_000_000_000;
        run.load = Some(loaded("hell", None, &[(0, 97.0)]));
        run.fingerprint.virtualization = Some("kvm".into());
        let v = verdict(&run);
        assert!(
            v.headline.contains(
                "the worst case was 3432.5 µs. Worst case 3432.5 µs on a PREEMPT_RT kernel: as \
                 measured, this system is fit for tolerances of milliseconds only."
            ),
            "{}",
            v.headline
        );
        assert!(
            v.headline
                .contains("the hypervisor of this virtual machine (kvm), then SMIs"),
            "{}",
            v.headline
        );
        // The same worst case on a vanilla kernel, every 10 ms: the class
        // as before.
        run.options.interval_ns = 10_000_000;
        run.fingerprint.preemption_model = "voluntary".into();
        let v = verdict(&run);
        assert!(
            v.headline.contains("a vanilla kernel suffices"),
            "{}",
            v.headline
        );
        assert_eq!(v.tolerance, "milliseconds class");
    }

    #[test]
    fn a_missed_period_on_preempt_rt_points_outside_the_scheduler() {
        let mut run = synthetic(&[vec![5_000, 7_000, 3_432_529]]);
        run.fingerprint.preemption_model = "rt".into();
        run.fingerprint.virtualization = Some("kvm".into());
        // A 1 ms period missed on PREEMPT_RT: the miss first, then the
        // causes outside the scheduler, never "vanilla".
        let v = verdict(&run);
        assert!(
            v.headline
                .starts_with("Deadline missed: 1 of the 3 periods")
        );
        assert!(
            v.headline.contains(
                "On PREEMPT_RT, spikes of milliseconds point outside the scheduler: the \
                 hypervisor of this virtual machine (kvm)"
            ),
            "{}",
            v.headline
        );
        assert!(!v.headline.contains("vanilla"), "{}", v.headline);
    }

    #[test]
    fn hundreds_of_microseconds_on_preempt_rt_is_its_class() {
        let mut run = synthetic(&[vec![5_000, 420_000]]);
        run.fingerprint.preemption_model = "rt".into();
        let v = verdict(&run);
        assert_eq!(v.class, Class::HundredsOfMicros);
        assert_eq!(v.tolerance, "hundreds-of-µs class");
        assert!(
            v.headline
                .contains("points to tolerances of hundreds of microseconds, the class PREEMPT_RT is meant for"),
            "{}",
            v.headline
        );
        assert!(!v.headline.contains("outside the scheduler"));
    }

    #[test]
    fn an_rt_run_under_load_with_tens_of_microseconds() {
        let mut run = synthetic(&[vec![5_000; 1000], vec![42_000]]);
        run.fingerprint.preemption_model = "rt".into();
        run.duration_ns = 12 * 3_600_000_000_000;
        run.load = Some(loaded("hell", None, &[(0, 97.0), (1, 91.0)]));
        let v = verdict(&run);
        assert_eq!(v.class, Class::TensOfMicros);
        assert_eq!(v.standing, Standing::Firm);
        assert!(
            v.headline
                .starts_with("Deadline met: none of the 1\u{202f}001 periods"),
            "{}",
            v.headline
        );
        assert!(v.headline.contains(". Worst case 42"), "{}", v.headline);
        assert!(v.headline.contains("Xenomai"));
        let limits = v.limits.join("\n");
        assert!(!limits.contains("No load"));
        assert!(!limits.contains("lasted"));
        assert!(v.evidence.join(" ").contains("load 'hell'"));
        assert!(v.evidence.join(" ").contains("measured over 12 h by"));
    }

    /// A load record whose sampler saw these CPUs this busy.
    fn loaded(profile: &str, cpus: Option<&str>, busy: &[(u32, f64)]) -> LoadRecord {
        let per_cpu: Vec<serde_json::Value> = busy
            .iter()
            .map(|(c, b)| serde_json::json!({"cpu": c, "busy_pct_avg": b}))
            .collect();
        let all = busy.iter().map(|(_, b)| b).sum::<f64>() / busy.len().max(1) as f64;
        LoadRecord {
            profile: profile.into(),
            cpus: cpus.map(String::from),
            achieved: Some(serde_json::json!({"cpu_busy_pct_avg": all, "cpus": per_cpu})),
            ..Default::default()
        }
    }

    #[test]
    fn provisional_unless_an_hour_under_a_load_that_kept_the_cpus_busy() {
        const HOUR: u64 = 3_600_000_000_000;
        // Short and idle: the case of twenty 1 s runs on an idle VM.
        let mut run = synthetic(&[vec![5_000, 42_000]]);
        run.duration_ns = 1_000_000_000;
        let v = verdict(&run);
        assert_eq!(v.class, Class::TensOfMicros);
        assert_eq!(
            v.standing,
            Standing::Provisional(vec!["1 s".into(), "no load".into()])
        );
        assert!(v.headline.contains(
            "(the period, 1 ms); the worst case was 42.0 µs. Provisional: 1 s, no load;"
        ));
        assert!(
            v.headline
                .contains("points to tolerances of tens of microseconds")
        );
        assert_eq!(
            status_line(&run),
            "deadline met (the period, 1 ms); worst case in the tens-of-µs class (provisional: 1 \
             s, no load)"
        );
        // Long but idle.
        run.duration_ns = 2 * HOUR;
        assert_eq!(
            Standing::of(&run),
            Standing::Provisional(vec!["2 h".into(), "no load".into()])
        );
        // Loaded, but lightly.
        run.load = Some(loaded("hackbench", None, &[(0, 30.0), (1, 10.0)]));
        assert_eq!(
            Standing::of(&run),
            Standing::Provisional(vec![
                "2 h".into(),
                "load 'hackbench' kept the CPUs 20% busy".into()
            ])
        );
        // A load whose achievement is unknown does not count.
        run.load = Some(LoadRecord {
            profile: "hell".into(),
            ..Default::default()
        });
        assert!(Standing::of(&run).is_provisional());
        // Busy on the CPUs it was confined to (the measuring CPU idle).
        run.load = Some(loaded("hell", Some("0"), &[(0, 96.0), (1, 3.0)]));
        assert_eq!(Standing::of(&run), Standing::Firm);
        assert_eq!(
            status_line(&run),
            "deadline met (the period, 1 ms); worst case in the tens-of-µs class"
        );
        let v = verdict(&run);
        assert!(v.headline.contains("42.0 µs. Worst case"), "{}", v.headline);
        // Exactly an hour is enough; a second less is not.
        run.duration_ns = HOUR;
        assert_eq!(Standing::of(&run), Standing::Firm);
        run.duration_ns = HOUR - 1_000_000_000;
        assert!(Standing::of(&run).is_provisional());
        // An import says nothing of its load.
        let mut imported = synthetic(&[vec![5_000]]);
        imported.duration_ns = 12 * HOUR;
        imported.source.kind = SourceKind::Imported.into();
        assert_eq!(
            Standing::of(&imported),
            Standing::Provisional(vec!["12 h".into(), "load unknown".into()])
        );
    }

    /// The case: cyclictest's overflows (values unknown, recorded
    /// at the histogram's end) may cross a deadline above that end: the
    /// count is a range, never "1 of" as if they were on time.
    #[test]
    fn overflows_that_may_cross_the_deadline_give_a_range() {
        use crate::record::Overflow;
        // 1 000 periods at 5 µs; 250 overflows beyond a 50 µs histogram:
        // 249 recorded at its end, the largest (3 ms) at the max.
        let mut vals = vec![5_000; 1000];
        vals.extend(vec![50_000; 249]);
        vals.push(3_000_000);
        let mut run = synthetic(&[vals]);
        let o = Overflow {
            count: 250,
            from_ns: 50_000,
        };
        run.threads[0].stats.overflow = Some(o);
        run.overall.overflow = Some(o);
        let b = beyond(&run, 1_000_000).unwrap();
        assert_eq!((b.certain, b.at_most, b.unknown), (1, 250, 249));
        let v = verdict(&run);
        assert!(
            v.headline.starts_with(
                "Deadline missed: 1 to 250 of the 1\u{202f}250 periods (800 to 200\u{202f}000 \
                 per million) woke later than the deadline (the period, 1 ms), 249 of them \
                 overflows the source counted beyond its histogram without their values"
            ),
            "{}",
            v.headline
        );
        assert!(
            deadline_status(&run).starts_with(
                "MISSED (the period, 1 ms): 1 to 250 of 1\u{202f}250 periods (800 to \
                 200\u{202f}000 per million) later than 1 ms, 249 of them overflows"
            ),
            "{}",
            deadline_status(&run)
        );
        assert!(
            v.evidence
                .iter()
                .any(|e| e.starts_with("Overflows: 250 samples beyond the source's histogram")),
            "{:?}",
            v.evidence
        );
        // p99.9 lies among the overflows: a bound, never a "99.9 %
        // within" (issue 54); p99.99, the last of 1 250 samples, is the
        // maximum, which the source gave.
        assert!(
            v.evidence.contains(
                &"99.99 % of periods woke within 3000.0 µs; p99.9 is at least 50.0 µs, not known \
                  exactly: it lies among the overflows."
                    .to_string()
            ),
            "{:?}",
            v.evidence
        );
        // With more samples both lie among them.
        let mut more = run.clone();
        more.overall.samples = 20_000;
        more.overall.overflow = Some(Overflow {
            count: 40,
            from_ns: 40_000,
        });
        assert!(
            verdict(&more).evidence.contains(
                &"Percentiles p99.99 and p99.9 are at least 40.0 µs, not known exactly: they lie \
                  among the overflows."
                    .to_string()
            ),
            "{:?}",
            verdict(&more).evidence
        );
        // Below the histogram's end, every overflow is certainly later.
        let b = beyond(&run, 40_000).unwrap();
        assert_eq!((b.certain, b.at_most, b.unknown), (250, 250, 0));
        // Above the maximum, none is.
        let b = beyond(&run, 3_000_000).unwrap();
        assert_eq!((b.certain, b.at_most), (0, 0));
    }

    /// `-i 200us --deadline 1ms`: two counts, one sentence that says what
    /// each counts.
    #[test]
    fn missed_periods_and_the_deadline_count_are_explained_together() {
        // Every 200 µs: one wake-up 1.5 ms late (7 periods missed), one
        // 500 µs late (2 missed, within the 1 ms deadline).
        let mut run = synthetic(&[vec![5_000, 1_500_000, 500_000, 6_000]]);
        run.options.interval_ns = 200_000;
        run.limits.deadline_ns = Some(1_000_000);
        run.overall.missed_periods = 9;
        let v = verdict(&run);
        assert!(
            v.headline.starts_with(
                "Deadline missed: 1 of the 4 periods (250\u{202f}000 per million) woke later \
                 than the deadline (yours, 1 ms); besides, 9 periods were missed: their 200 µs \
                 period had already begun when the thread woke for an earlier one, so they had \
                 no wake-up of their own (a wake-up k whole periods late misses k)."
            ),
            "{}",
            v.headline
        );
        assert_eq!(
            deadline_status(&run),
            "MISSED (yours, 1 ms): 1 of 4 periods (250\u{202f}000 per million) later than 1 ms; \
             besides, 9 periods missed (their 200 µs period began before the thread woke for \
             an earlier one)"
        );
        // One period is one period, not "1 periods".
        let mut met = run.clone();
        met.limits.deadline_ns = Some(2_000_000);
        met.overall.missed_periods = 1;
        let status = deadline_status(&met);
        assert!(status.contains("; besides, 1 period missed ("), "{status}");
        // The same counts need no explanation.
        run.overall.missed_periods = 1;
        assert!(
            verdict(&run)
                .headline
                .contains("(yours, 1 ms); 1 period was missed. The worst case"),
            "{}",
            verdict(&run).headline
        );
        // Met, with periods missed: said too.
        run.limits.deadline_ns = Some(2_000_000);
        run.overall.missed_periods = 9;
        assert!(
            verdict(&run)
                .headline
                .contains("the worst case was 1500.0 µs; besides, 9 periods were missed"),
            "{}",
            verdict(&run).headline
        );
    }

    /// One maximum: the headline and evidence write it as the table does.
    #[test]
    fn the_maximum_is_written_as_the_table_writes_it() {
        let run = synthetic(&[vec![5_000, 7_161_500]]);
        let v = verdict(&run);
        let table = crate::report::summary::render(&run);
        assert!(table.contains("7161.5"), "{table}");
        assert!(v.headline.contains("7161.5 µs"), "{}", v.headline);
        assert!(!v.headline.contains("7.16 ms"), "{}", v.headline);
        assert!(
            v.evidence
                .iter()
                .any(|e| e.contains("The worst case, 7161.5 µs")),
            "{:?}",
            v.evidence
        );
    }

    /// A class is a class: no kernel's name in its short form, whatever
    /// the kernel measured; the short form says the deadline first.
    #[test]
    fn a_class_never_reads_as_a_kernel_and_the_deadline_comes_first() {
        let mut run = synthetic(&[vec![5_000, 420_000]]);
        run.fingerprint.preemption_model = "none".into();
        let line = status_line(&run);
        assert_eq!(
            line,
            "deadline met (the period, 1 ms); worst case in the hundreds-of-µs class \
             (provisional: 60 s, no load)"
        );
        assert!(!line.contains("PREEMPT_RT"), "{line}");
        assert_eq!(verdict(&run).title, line);
        for c in [
            Class::Milliseconds,
            Class::HundredsOfMicros,
            Class::TensOfMicros,
            Class::UnderTenMicros,
        ] {
            let t = c.tolerance();
            assert!(
                !t.contains("PREEMPT_RT") && !t.contains("vanilla") && !t.contains("Xenomai"),
                "{t}"
            );
        }
    }

    /// 3/N is never written 0, and no jargon a newcomer cannot place.
    #[test]
    fn three_over_n_is_never_zero_and_sources_are_named() {
        let mut vals = vec![5_000; 999];
        vals.push(42_000);
        let v = verdict(&synthetic(&[vals]));
        let limits = v.limits.join("\n");
        assert!(
            limits.contains("3/N = 0.003 (one period in 334)"),
            "{limits}"
        );
        assert!(!limits.contains("seed"), "{limits}");
        assert!(limits.contains("Christophe Blaess"), "{limits}");
    }

    /// oslat's gaps and osnoise's noise are not wake-up latencies: no
    /// deadline, no class, what they measure said instead.
    #[test]
    fn another_quantity_gets_no_wake_up_verdict() {
        let mut run = synthetic(&[vec![5_000, 3_000_000]]);
        run.quantity = Some(Quantity::BusyLoopGap);
        let v = verdict(&run);
        assert!(
            v.headline.starts_with(
                "No wake-up verdict: this run measures busy-loop gap (oslat): no timer, not a \
                 wake-up latency"
            ),
            "{}",
            v.headline
        );
        assert!(!v.headline.contains("Deadline"), "{}", v.headline);
        assert!(!v.headline.contains("milliseconds class"), "{}", v.headline);
        assert_eq!(
            status_line(&run),
            "no wake-up verdict: busy-loop gap (oslat): no timer, not a wake-up latency"
        );
        assert!(deadline_status(&run).starts_with("not judged:"));
        run.quantity = Some(Quantity::OsNoise);
        assert!(status_line(&run).contains("OS noise"));
    }

    #[test]
    fn no_samples_no_verdict() {
        let run = synthetic(&[vec![]]);
        let v = verdict(&run);
        assert_eq!(v.class, Class::NoData);
        assert!(v.headline.starts_with("No verdict"));
        assert!(!v.limits.join(" ").contains("3/N"));
    }
}
