//! `measure --explain`: the observer that explains late wake-ups while
//! the run goes on. The engine hands it, every tick, the wake-ups at
//! least the threshold late; it takes the largest of each thread and has
//! the trace recorder explain it from the events of that thread's CPU,
//! and keeps each thread's largest explanation and the largest others
//! (bounded, whatever the run's length). Runs on the control thread;
//! the recorder's reader is a thread of its own, never a measuring one.

use crate::engine::{Control, Late, Observer, Plan, RunView};
use crate::explain::{Explanation, Spike};
use crate::record::ExplainRecord;
use crate::sys::clock::Clock;
use crate::trace::{EventSet, Recorder, TraceConfig, TraceError};

/// Default threshold of `--explain` without a value.
pub const DEFAULT_ABOVE_NS: u64 = 100_000;
/// Explanations kept beyond each thread's largest.
pub const MAX_KEPT: usize = 32;
/// How long one explanation may wait for the trace reader.
const SYNC_TIMEOUT_NS: u64 = 200_000_000;

/// Explains late wake-ups of one run.
pub struct Explainer {
    recorder: Option<Recorder>,
    threshold_ns: u64,
    events: Vec<String>,
    missing: Vec<String>,
    /// Kernel filters set (the lean set's on the threads' switches).
    filters: Vec<String>,
    seen: u64,
    explained: u64,
    /// The largest explanation of each thread.
    best: Vec<Option<Explanation>>,
    /// The largest of the others, largest first, at most MAX_KEPT.
    others: Vec<Explanation>,
    /// Warnings for the run (shown once, kept in the record).
    notices: Vec<String>,
    /// The kernel offers the timerlat tracer (never started here).
    timerlat: Option<bool>,
}

impl Explainer {
    /// Start tracing the CPUs of `plan` (needs root and tracefs). The
    /// plan must report late wake-ups on the monotonic clock.
    /// Under isolation, `housekeeping` names the CPUs outside it and the
    /// cpuset `tasks` file that lets the reader reach them (this process
    /// sits in the isolated cpuset).
    pub fn start(
        plan: &Plan,
        threshold_ns: u64,
        set: EventSet,
        housekeeping: Option<(Vec<usize>, std::path::PathBuf)>,
    ) -> Result<Explainer, TraceError> {
        let allowed = crate::sysinfo::cpu::allowed_cpus().unwrap_or_default();
        let mut cpus: Vec<usize> = plan.threads.iter().filter_map(|t| t.cpu).collect();
        cpus.sort_unstable();
        cpus.dedup();
        if cpus.is_empty() {
            // SCHED_DEADLINE threads are not pinned: trace every CPU.
            cpus = allowed.clone();
        }
        let mut cfg = TraceConfig::for_cpus(&cpus);
        cfg.events = set;
        // The reader works in the kernel (formatting trace_pipe); on a
        // kernel without full preemption a measuring thread cannot take
        // its CPU back until that work ends: keep it off measured CPUs.
        let (reachable, tasks) = match housekeeping {
            Some((cpus, tasks)) => {
                let mut all = allowed.clone();
                all.extend(cpus);
                all.sort_unstable();
                all.dedup();
                (all, Some(tasks))
            }
            None => (allowed.clone(), None),
        };
        let housekeeping = plan.unmeasured_cpus(&reachable);
        cfg.reader_cgroup_tasks = tasks;
        let mut notices = Vec::new();
        if housekeeping.is_empty() {
            notices.push(
                "--explain: every CPU this run may use is measured, so the trace reader shares them and its kernel work adds latency; measure on fewer CPUs (e.g. -a 1) to explain at no cost".to_string(),
            );
        } else {
            cfg.reader_cpus = Some(housekeeping);
        }
        let recorder = Recorder::start(&cfg)?;
        Ok(Explainer {
            notices,
            events: recorder.events(),
            missing: recorder.missing_events(),
            timerlat: recorder.timerlat_available(),
            recorder: Some(recorder),
            filters: Vec::new(),
            threshold_ns,
            seen: 0,
            explained: 0,
            best: vec![None; plan.threads.len()],
            others: Vec::new(),
        })
    }

    fn spike(view: &RunView, late: &Late) -> Spike {
        let t = &view.plan.threads[late.thread];
        let w = late.wakeup;
        Spike {
            thread: late.thread as u32,
            cpu: t.cpu.unwrap_or(0),
            tid: view.tid(late.thread),
            deadline_ns: w.deadline_ns,
            wake_ns: w.wake_ns,
            latency_ns: w.latency_ns,
            cycle: Some(w.cycle),
        }
    }

    /// Keep `x` if it is among the largest.
    fn keep(&mut self, x: Explanation) {
        let t = x.spike.thread as usize;
        let lat = x.spike.latency_ns;
        let x = match self.best.get_mut(t) {
            Some(slot) if slot.as_ref().is_none_or(|b| b.spike.latency_ns < lat) => {
                match slot.replace(x) {
                    Some(old) => old,
                    None => return,
                }
            }
            _ => x,
        };
        let at = self
            .others
            .partition_point(|o| o.spike.latency_ns >= x.spike.latency_ns);
        if at < MAX_KEPT {
            self.others.insert(at, x);
            self.others.truncate(MAX_KEPT);
        }
    }

    /// The record of what was explained, largest first; tracing stops.
    pub fn finish(mut self) -> (ExplainRecord, Option<String>) {
        let stats = self
            .recorder
            .as_ref()
            .map(|r| r.stats())
            .unwrap_or_default();
        let undo = self
            .recorder
            .take()
            .and_then(|r| r.stop().err())
            .map(|e| e.to_string());
        let mut explanations: Vec<Explanation> = self.best.into_iter().flatten().collect();
        explanations.extend(self.others);
        explanations.sort_by_key(|x| std::cmp::Reverse(x.spike.latency_ns));
        let rec = ExplainRecord {
            threshold_ns: self.threshold_ns,
            events: self.events,
            missing_events: self.missing,
            filters: self.filters,
            spikes_seen: self.seen,
            spikes_explained: self.explained,
            events_read: stats.events_read,
            events_lost: stats.events_lost,
            explanations,
            timerlat_available: self.timerlat,
        };
        (rec, undo)
    }
}

impl Observer for Explainer {
    fn notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// The threads exist: with the lean set, filter their switches to
    /// idle out of the trace (a filter the kernel refuses only costs
    /// time, so it is a notice).
    fn started(&mut self, view: &RunView) {
        let tids: Vec<i32> = (0..view.thread_count())
            .map(|t| view.tid(t))
            .filter(|&t| t > 0)
            .collect();
        if let Some(r) = &self.recorder {
            match r.filter_own_switches(&tids) {
                Ok(f) => self.filters = f.into_iter().collect(),
                Err(e) => self.notices.push(format!(
                    "--explain: the measured threads' switches to idle stay in the trace, at a cost to them ({e})"
                )),
            }
        }
    }

    fn tick(&mut self, view: &RunView) -> Control {
        if view.late.is_empty() {
            return Control::Continue;
        }
        self.seen += view.late.len() as u64;
        // The largest late wake-up of each thread since the last tick.
        let mut largest: Vec<Option<&Late>> = vec![None; view.thread_count()];
        for l in view.late {
            let slot = &mut largest[l.thread];
            if slot.is_none_or(|b| b.wakeup.latency_ns < l.wakeup.latency_ns) {
                *slot = Some(l);
            }
        }
        for l in largest.into_iter().flatten() {
            let spike = Explainer::spike(view, l);
            if let Some(r) = &self.recorder {
                let x = r.explain(&spike, SYNC_TIMEOUT_NS);
                self.explained += 1;
                self.keep(x);
            }
        }
        Control::Continue
    }
}

/// Can `--explain` work with this clock? Trace events are stamped on
/// CLOCK_MONOTONIC.
pub fn clock_supported(clock: Clock) -> bool {
    clock == Clock::Monotonic
}
