//! rtscope's own tracefs instance (`instances/rtscope-PID`): its
//! settings (`trace_clock` mono, `buffer_size_kb`, `tracing_cpumask`),
//! the events `explain` reads, and the per-CPU loss counters. Never
//! touches the top-level buffer or another instance. Creating and
//! removing the directory is the caller's (the recorder's guard).

use std::io;
use std::path::{Path, PathBuf};

/// One event `explain` can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventSpec {
    pub group: &'static str,
    pub name: &'static str,
}

const fn ev(group: &'static str, name: &'static str) -> EventSpec {
    EventSpec { group, name }
}

/// Without it, nothing can be explained.
pub const REQUIRED: &[EventSpec] = &[ev("sched", "sched_switch")];

/// Which of the wanted events a recording enables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EventSet {
    /// Every wanted event.
    Full,
    /// Without the events every timer wake-up of a measured thread
    /// writes before it runs, which cost it time there: the timer path
    /// ([`TIMER_PATH`]) and the wake-ups ([`WAKE_UPS`]); and (once their
    /// tids are known) without the measured threads' switches to idle
    /// ([`own_switch_filter`]).
    #[default]
    Lean,
}

impl EventSet {
    /// Does this set record `e`?
    pub fn has(self, e: &EventSpec) -> bool {
        self == EventSet::Full || !(TIMER_PATH.contains(e) || WAKE_UPS.contains(e))
    }
}

/// The events every timer wake-up of the measured thread writes besides
/// its own `sched_waking`: the hrtimer's expiry and the local timer
/// vector around it (x86). Without them the wake-up stands for the
/// timer's expiry.
pub const TIMER_PATH: &[EventSpec] = &[
    ev("timer", "hrtimer_expire_entry"),
    ev("timer", "hrtimer_expire_exit"),
    ev("irq_vectors", "local_timer_entry"),
    ev("irq_vectors", "local_timer_exit"),
];

/// Wake-ups: a measured thread's own, written on every period, cost it
/// time even when a kernel filter drops them (the event is built before
/// the filter runs); other tasks' only name them, as their switches do.
pub const WAKE_UPS: &[EventSpec] = &[ev("sched", "sched_waking"), ev("sched", "sched_wakeup")];

/// The events enabled when present. x86 has `irq_vectors`, arm64 the
/// `ipi` entry/exit pair: only one family is expected. Each event on the
/// measured thread's own wake-up path costs it time, so there are no
/// redundant ones: `sched_wakeup` only stands in for a missing
/// `sched_waking`, and `hrtimer_start` (re-arming, not expiry) is left out.
pub const WANTED: &[EventSpec] = &[
    ev("sched", "sched_switch"),
    ev("sched", "sched_waking"),
    ev("sched", "sched_wakeup"),
    ev("timer", "hrtimer_expire_entry"),
    ev("timer", "hrtimer_expire_exit"),
    ev("irq", "irq_handler_entry"),
    ev("irq", "irq_handler_exit"),
    ev("irq", "softirq_entry"),
    ev("irq", "softirq_exit"),
    ev("irq_vectors", "local_timer_entry"),
    ev("irq_vectors", "local_timer_exit"),
    ev("irq_vectors", "reschedule_entry"),
    ev("irq_vectors", "reschedule_exit"),
    ev("irq_vectors", "call_function_entry"),
    ev("irq_vectors", "call_function_exit"),
    ev("irq_vectors", "call_function_single_entry"),
    ev("irq_vectors", "call_function_single_exit"),
    ev("irq_vectors", "irq_work_entry"),
    ev("irq_vectors", "irq_work_exit"),
    ev("ipi", "ipi_entry"),
    ev("ipi", "ipi_exit"),
    ev("workqueue", "workqueue_execute_start"),
    ev("workqueue", "workqueue_execute_end"),
];

impl std::fmt::Display for EventSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.group, self.name)
    }
}

/// The instance directory of process `pid` under a tracefs mount.
pub fn path_for(tracefs: &Path, pid: u32) -> PathBuf {
    tracefs.join("instances").join(format!("rtscope-{pid}"))
}

/// A setting that could not be made.
#[derive(Debug)]
pub struct SettingError {
    pub file: PathBuf,
    pub value: String,
    pub source: io::Error,
}

pub fn write(dir: &Path, file: &str, value: &str) -> Result<(), SettingError> {
    let path = dir.join(file);
    std::fs::write(&path, value).map_err(|source| SettingError {
        file: path,
        value: value.into(),
        source,
    })
}

/// Does `trace_clock` (`[local] global ... mono ...`) select `clock`?
pub fn clock_selected(trace_clock: &str, clock: &str) -> bool {
    trace_clock
        .split_whitespace()
        .any(|c| c == format!("[{clock}]"))
}

/// Enable the wanted events of `set` that exist in `dir`; returns those
/// missing (the `irq_vectors` / `ipi` family absent on this architecture
/// is not reported when the other is there).
pub fn enable_events(dir: &Path, set: EventSet) -> Result<Vec<EventSpec>, SettingError> {
    let exists = |e: &EventSpec| dir.join("events").join(e.group).join(e.name).is_dir();
    let mut missing = Vec::new();
    let waking = exists(&ev("sched", "sched_waking"));
    for e in WANTED.iter().filter(|e| set.has(e)) {
        if e.name == "sched_wakeup" && waking {
            continue;
        }
        if exists(e) {
            write(dir, &format!("events/{}/{}/enable", e.group, e.name), "1")?;
        } else {
            missing.push(*e);
        }
    }
    let has = |g: &str| WANTED.iter().any(|e| e.group == g && exists(e));
    let (vectors, ipi) = (has("irq_vectors"), has("ipi"));
    missing.retain(|e| match e.group {
        "ipi" => !vectors,
        "irq_vectors" => !ipi,
        _ => true,
    });
    Ok(missing)
}

/// The kernel filter on `sched_switch` that keeps the measured threads'
/// own switches to idle out of the trace: written on every period when
/// they sleep, these (with the wake-ups the lean set leaves out) are most
/// of what tracing costs a thread that wakes from idle. Every other
/// switch stays: one to a measured thread from another task, or from a
/// measured thread to another task. None for no tids.
pub fn own_switch_filter(tids: &[i32]) -> Option<String> {
    if tids.is_empty() {
        return None;
    }
    let not = tids
        .iter()
        .map(|t| format!("prev_pid != {t}"))
        .collect::<Vec<_>>()
        .join(" && ");
    Some(format!("({not}) || next_pid != 0"))
}

/// Set [`own_switch_filter`] on `sched_switch` in `dir` (always enabled:
/// [`REQUIRED`]); returns it as `sched:sched_switch: FILTER`.
pub fn filter_own_switches(dir: &Path, tids: &[i32]) -> Result<Option<String>, SettingError> {
    let Some(filter) = own_switch_filter(tids) else {
        return Ok(None);
    };
    let e = REQUIRED[0];
    write(
        dir,
        &format!("events/{}/{}/filter", e.group, e.name),
        &filter,
    )?;
    Ok(Some(format!("{e}: {filter}")))
}

/// The wanted events enabled in `dir`.
pub fn enabled_events(dir: &Path) -> Vec<EventSpec> {
    WANTED
        .iter()
        .filter(|e| {
            std::fs::read_to_string(dir.join("events").join(e.group).join(e.name).join("enable"))
                .is_ok_and(|v| v.trim() == "1")
        })
        .copied()
        .collect()
}

/// The loss counters of one CPU's buffer (`per_cpu/cpuN/stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuStats {
    /// Events overwritten before they were read.
    pub overrun: u64,
    /// Events dropped (buffer full, overwrite off).
    pub dropped: u64,
}

/// Parse a `stats` file.
pub fn parse_stats(text: &str) -> CpuStats {
    let mut s = CpuStats::default();
    for l in text.lines() {
        if let Some((k, v)) = l.split_once(':') {
            let v: u64 = v.trim().parse().unwrap_or(0);
            match k.trim() {
                "overrun" => s.overrun = v,
                "dropped events" => s.dropped = v,
                _ => {}
            }
        }
    }
    s
}

pub fn read_stats(dir: &Path, cpu: usize) -> Option<CpuStats> {
    std::fs::read_to_string(dir.join(format!("per_cpu/cpu{cpu}/stats")))
        .ok()
        .map(|t| parse_stats(&t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stats_and_the_clock() {
        let s = parse_stats(
            "entries: 12512\noverrun: 3\ncommit overrun: 0\nbytes: 1\noldest event ts:   544.471537\nnow ts:   545.637419\ndropped events: 7\nread events: 0\n",
        );
        assert_eq!(
            s,
            CpuStats {
                overrun: 3,
                dropped: 7
            }
        );
        assert!(clock_selected("local global [mono] boot", "mono"));
        assert!(!clock_selected("[local] global mono", "mono"));
    }

    /// An instance directory as tracefs lays it out, with every wanted
    /// event of x86 (and `sched_wakeup`); returns the enabled ones.
    fn enabled_in_fake_instance(set: EventSet) -> (Vec<String>, Vec<EventSpec>) {
        let dir =
            std::env::temp_dir().join(format!("rtscope-instance-{set:?}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for e in WANTED.iter().filter(|e| e.group != "ipi") {
            std::fs::create_dir_all(dir.join("events").join(e.group).join(e.name)).unwrap();
        }
        let missing = enable_events(&dir, set).unwrap();
        let on: Vec<String> = enabled_events(&dir).iter().map(|e| e.to_string()).collect();
        std::fs::remove_dir_all(&dir).unwrap();
        (on, missing)
    }

    #[test]
    fn the_own_switch_filter_keeps_every_switch_but_the_threads_to_idle() {
        assert_eq!(own_switch_filter(&[]), None);
        assert_eq!(
            own_switch_filter(&[41, 42]).unwrap(),
            "(prev_pid != 41 && prev_pid != 42) || next_pid != 0"
        );
        assert_eq!(REQUIRED[0].to_string(), "sched:sched_switch");
    }

    #[test]
    fn the_lean_set_leaves_out_the_timer_path_and_the_wake_ups_only() {
        let (full, missing) = enabled_in_fake_instance(EventSet::Full);
        assert!(missing.is_empty(), "{missing:?}");
        let (lean, missing) = enabled_in_fake_instance(EventSet::Lean);
        assert!(missing.is_empty(), "{missing:?}");
        assert!(
            !full.contains(&"sched:sched_wakeup".to_string()),
            "sched_waking is there"
        );
        for e in TIMER_PATH {
            assert!(
                full.contains(&e.to_string()) && !lean.contains(&e.to_string()),
                "{e}"
            );
        }
        assert!(full.contains(&"sched:sched_waking".to_string()));
        assert!(!lean.contains(&"sched:sched_waking".to_string()));
        let left_out: Vec<&String> = full.iter().filter(|e| !lean.contains(e)).collect();
        assert_eq!(left_out.len(), TIMER_PATH.len() + 1, "{left_out:?}");
        for e in [
            "sched:sched_switch",
            "irq:irq_handler_entry",
            "irq:softirq_exit",
            "irq_vectors:reschedule_entry",
            "workqueue:workqueue_execute_end",
        ] {
            assert!(lean.contains(&e.to_string()), "{e} in {lean:?}");
        }
    }
}
