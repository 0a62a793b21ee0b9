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

/// Enable the wanted events that exist in `dir`; returns those missing
/// (the `irq_vectors` / `ipi` family absent on this architecture is not
/// reported when the other is there).
pub fn enable_events(dir: &Path) -> Result<Vec<EventSpec>, SettingError> {
    let exists = |e: &EventSpec| dir.join("events").join(e.group).join(e.name).is_dir();
    let mut missing = Vec::new();
    let waking = exists(&ev("sched", "sched_waking"));
    for e in WANTED {
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
}
