//! The recorder: sets up rtscope's tracefs instance for the measured
//! CPUs (mounting tracefs if needed, journaled first), runs a reader
//! thread that keeps a bounded window of recent events per CPU, and
//! takes everything down again when dropped. The reader is an ordinary
//! SCHED_OTHER thread (never a measuring thread); memory stays bounded by
//! `window_ns` and `max_events_per_cpu` whatever the run length and rate.

use super::instance::{self, CpuStats, EventSet, EventSpec, SettingError};
use super::{journal, tracefs};
use crate::explain::event::{Event, Loss, Window};
use crate::explain::parse::{Line, parse_line};
use crate::explain::{Completeness, Explanation, Spike, analyze};
use crate::sys::clock::{Clock, now_ns};
use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// How to trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceConfig {
    /// The CPUs traced (`tracing_cpumask`): the measured ones.
    pub cpus: Vec<usize>,
    /// Ring buffer per CPU, in KiB.
    pub buffer_size_kb: u64,
    /// How far back the window of each CPU reaches.
    pub window_ns: u64,
    /// Hard cap on the events kept per CPU.
    pub max_events_per_cpu: usize,
    /// CPUs the reader thread may run on (housekeeping); `None`: any.
    pub reader_cpus: Option<Vec<usize>>,
    /// A cgroup v1 `tasks` file the reader thread writes its id to before
    /// it pins itself: the housekeeping cpuset, when this process sits
    /// in an isolated one that would not let it leave the measured CPUs.
    pub reader_cgroup_tasks: Option<PathBuf>,
    /// Where the journal goes (default: the tuning journal's directory).
    pub state_dir: PathBuf,
    /// The events recorded.
    pub events: EventSet,
}

impl TraceConfig {
    pub fn for_cpus(cpus: &[usize]) -> TraceConfig {
        TraceConfig {
            cpus: cpus.to_vec(),
            buffer_size_kb: 4096,
            window_ns: 500_000_000,
            max_events_per_cpu: 50_000,
            reader_cpus: None,
            reader_cgroup_tasks: None,
            state_dir: crate::tune::journal::state_dir(),
            events: EventSet::Full,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("tracing needs root (it mounts tracefs and writes its files): run with sudo")]
    NotPermitted,
    #[error("tracefs is not mounted and cannot be mounted at {dir}: {error}")]
    Mount { dir: PathBuf, error: io::Error },
    #[error("cannot create the trace instance {dir}: {error}")]
    Instance { dir: PathBuf, error: io::Error },
    #[error("cannot set {file} to `{value}`: {error}")]
    Setting {
        file: PathBuf,
        value: String,
        error: io::Error,
    },
    #[error(
        "the trace clock `mono` is not offered in {file}: this kernel cannot trace on CLOCK_MONOTONIC"
    )]
    NoMonoClock { file: PathBuf },
    #[error("the kernel has no {0} event: explain cannot work without it (CONFIG_TRACING?)")]
    MissingEvent(String),
    #[error("cannot write the trace journal {path}: {error}")]
    Journal { path: PathBuf, error: io::Error },
    #[error("cannot open {path}: {error}")]
    Pipe { path: PathBuf, error: io::Error },
    #[error("cannot start the trace reader thread: {0}")]
    Spawn(io::Error),
    #[error("no CPU to trace was given")]
    NoCpus,
}

impl From<SettingError> for TraceError {
    fn from(e: SettingError) -> TraceError {
        if e.source.kind() == io::ErrorKind::PermissionDenied {
            return TraceError::NotPermitted;
        }
        TraceError::Setting {
            file: e.file,
            value: e.value,
            error: e.source,
        }
    }
}

/// What the reader has seen so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReaderStats {
    pub events_read: u64,
    pub lines_unreadable: u64,
    /// Events lost (trace_pipe's LOST markers and the CPU counters).
    pub events_lost: u64,
    /// The reader stopped on an error (then nothing more is read).
    pub error: Option<String>,
}

struct CpuBuf {
    events: VecDeque<Event>,
    losses: VecDeque<Loss>,
    complete_from_ns: u64,
    last_ts_ns: u64,
}

/// The bounded per-CPU windows, shared by the reader and the callers.
struct Windows {
    cpus: BTreeMap<usize, CpuBuf>,
    window_ns: u64,
    max_events: usize,
    stats: ReaderStats,
}

impl Windows {
    fn new(cpus: &[usize], window_ns: u64, max_events: usize, start_ns: u64) -> Windows {
        Windows {
            cpus: cpus
                .iter()
                .map(|&c| {
                    (
                        c,
                        CpuBuf {
                            events: VecDeque::new(),
                            losses: VecDeque::new(),
                            complete_from_ns: start_ns,
                            last_ts_ns: 0,
                        },
                    )
                })
                .collect(),
            window_ns,
            max_events: max_events.max(1),
            stats: ReaderStats::default(),
        }
    }

    fn push(&mut self, e: Event) {
        let Some(b) = self.cpus.get_mut(&e.cpu) else {
            return;
        };
        self.stats.events_read += 1;
        for l in b.losses.iter_mut().rev() {
            if l.before_ns != u64::MAX {
                break;
            }
            l.before_ns = e.ts_ns;
        }
        b.last_ts_ns = b.last_ts_ns.max(e.ts_ns);
        let horizon = b.last_ts_ns.saturating_sub(self.window_ns);
        b.events.push_back(e);
        while let Some(front) = b.events.front() {
            if front.ts_ns >= horizon && b.events.len() <= self.max_events {
                break;
            }
            b.complete_from_ns = b.complete_from_ns.max(front.ts_ns + 1);
            b.events.pop_front();
        }
        while b.losses.front().is_some_and(|l| l.before_ns < horizon) {
            b.losses.pop_front();
        }
        // Bounded too, whatever happens.
        while b.losses.len() > 1024 {
            b.losses.pop_front();
        }
    }

    fn lost(&mut self, cpu: usize, count: Option<u64>) {
        let Some(b) = self.cpus.get_mut(&cpu) else {
            return;
        };
        self.stats.events_lost += count.unwrap_or(1);
        b.losses.push_back(Loss {
            cpu,
            after_ns: b.last_ts_ns,
            before_ns: u64::MAX,
            count,
        });
    }

    fn window(&self, cpu: usize, from_ns: u64, to_ns: u64) -> Window {
        let Some(b) = self.cpus.get(&cpu) else {
            return Window {
                cpu,
                complete_from_ns: Some(u64::MAX),
                ..Window::default()
            };
        };
        Window {
            cpu,
            events: b
                .events
                .iter()
                .filter(|e| e.ts_ns >= from_ns && e.ts_ns <= to_ns)
                .cloned()
                .collect(),
            losses: b.losses.iter().copied().collect(),
            complete_from_ns: Some(b.complete_from_ns),
            own_events_filtered: false,
        }
    }
}

/// How far before a deadline the events are taken (what ran then).
const LOOKBACK_NS: u64 = 50_000_000;
/// The reader's sleep when the pipe is empty.
const POLL_NS: u64 = 10_000_000;
/// How often the per-CPU loss counters are read.
const STATS_EVERY_NS: u64 = 200_000_000;

/// Kernel tracing for the measured CPUs, undone when dropped.
pub struct Recorder {
    entry: journal::Entry,
    journal_path: PathBuf,
    missing: Vec<EventSpec>,
    windows: Arc<Mutex<Windows>>,
    stop: Arc<AtomicBool>,
    drained_at_ns: Arc<AtomicU64>,
    reader: Option<JoinHandle<()>>,
    torn_down: bool,
    /// The set recorded (the lean one leaves the wake-ups out).
    set: EventSet,
    /// Whether `available_tracers` lists timerlat (`None`: unreadable).
    timerlat: Option<bool>,
}

fn not_permitted(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::PermissionDenied
}

impl Recorder {
    /// Mount tracefs if needed, create and set up the instance, enable
    /// the events, start the reader. Everything made is journaled first
    /// and undone on error.
    pub fn start(cfg: &TraceConfig) -> Result<Recorder, TraceError> {
        if cfg.cpus.is_empty() {
            return Err(TraceError::NoCpus);
        }
        let pid = std::process::id();
        let journal_path = journal::path_in(&cfg.state_dir, pid);
        let jerr = |error| TraceError::Journal {
            path: journal_path.clone(),
            error,
        };
        let (tracefs, mount_needed) = match tracefs::find() {
            Some(t) => (t, false),
            None => (PathBuf::from(tracefs::DEFAULT_MOUNT), true),
        };
        let instance = instance::path_for(&tracefs, pid);
        let entry = journal::Entry::for_this_process(&tracefs, mount_needed, &instance);
        journal::write(&journal_path, &entry).map_err(|e| {
            if not_permitted(&e) {
                TraceError::NotPermitted
            } else {
                jerr(e)
            }
        })?;
        // From here on, the guard undoes whatever was made.
        let mut rec = Recorder {
            entry,
            journal_path,
            missing: Vec::new(),
            windows: Arc::new(Mutex::new(Windows::new(
                &cfg.cpus,
                cfg.window_ns,
                cfg.max_events_per_cpu,
                0,
            ))),
            stop: Arc::new(AtomicBool::new(false)),
            drained_at_ns: Arc::new(AtomicU64::new(0)),
            reader: None,
            torn_down: false,
            set: cfg.events,
            timerlat: None,
        };
        if mount_needed {
            tracefs::mount(&tracefs).map_err(|source| {
                if source.raw_os_error() == Some(crate::sys::errno::EPERM) {
                    TraceError::NotPermitted
                } else {
                    TraceError::Mount {
                        dir: tracefs.clone(),
                        error: source,
                    }
                }
            })?;
        }
        std::fs::create_dir(&instance).map_err(|source| {
            if not_permitted(&source) {
                TraceError::NotPermitted
            } else {
                TraceError::Instance {
                    dir: instance.clone(),
                    error: source,
                }
            }
        })?;
        // Noted only: the timerlat tracer's threads would compete with
        // the measured ones, so it is never started here.
        rec.timerlat = std::fs::read_to_string(tracefs.join("available_tracers"))
            .ok()
            .map(|t| offers_tracer(&t, "timerlat"));
        rec.configure(cfg)?;
        rec.start_reader(cfg)?;
        Ok(rec)
    }

    fn configure(&mut self, cfg: &TraceConfig) -> Result<(), TraceError> {
        let dir = self.entry.instance.clone();
        instance::write(&dir, "tracing_on", "0")?;
        instance::write(&dir, "trace_clock", "mono")?;
        let clock = std::fs::read_to_string(dir.join("trace_clock")).unwrap_or_default();
        if !instance::clock_selected(&clock, "mono") {
            return Err(TraceError::NoMonoClock {
                file: dir.join("trace_clock"),
            });
        }
        instance::write(&dir, "buffer_size_kb", &cfg.buffer_size_kb.to_string())?;
        instance::write(
            &dir,
            "tracing_cpumask",
            &crate::units::format_cpu_mask(&cfg.cpus),
        )?;
        // Marks written to the top-level trace_marker (cyclictest
        // --tracemark) reach this instance too, where the kernel can.
        let _ = instance::write(&dir, "options/copy_trace_marker", "1");
        self.missing = instance::enable_events(&dir, cfg.events)?;
        if let Some(req) = instance::REQUIRED.iter().find(|r| self.missing.contains(r)) {
            return Err(TraceError::MissingEvent(req.to_string()));
        }
        let start = now_ns(Clock::Monotonic);
        instance::write(&dir, "tracing_on", "1")?;
        if let Ok(mut w) = self.windows.lock() {
            for b in w.cpus.values_mut() {
                b.complete_from_ns = start;
            }
        }
        Ok(())
    }

    fn start_reader(&mut self, cfg: &TraceConfig) -> Result<(), TraceError> {
        let path = self.entry.instance.join("trace_pipe");
        let pipe = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(&path)
            .map_err(|error| TraceError::Pipe {
                path: path.clone(),
                error,
            })?;
        let ctx = ReaderCtx {
            pipe,
            dir: self.entry.instance.clone(),
            cpus: cfg.cpus.clone(),
            windows: self.windows.clone(),
            stop: self.stop.clone(),
            drained_at_ns: self.drained_at_ns.clone(),
            reader_cpus: cfg.reader_cpus.clone(),
            reader_cgroup_tasks: cfg.reader_cgroup_tasks.clone(),
        };
        let h = std::thread::Builder::new()
            .name("rtscope-trace".into())
            .spawn(move || ctx.run())
            .map_err(TraceError::Spawn)?;
        self.reader = Some(h);
        Ok(())
    }

    /// The events recorded (those of the wanted ones enabled here).
    pub fn events(&self) -> Vec<String> {
        instance::enabled_events(&self.entry.instance)
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    /// With the lean set, leave the switches to idle of the threads
    /// `tids` out of the trace (a kernel filter:
    /// [`instance::own_switch_filter`]). Returns the filter set, as
    /// `group:name: filter`.
    pub fn filter_own_switches(&self, tids: &[i32]) -> Result<Option<String>, TraceError> {
        if self.set != EventSet::Lean {
            return Ok(None);
        }
        Ok(instance::filter_own_switches(&self.entry.instance, tids)?)
    }

    /// Whether the kernel offers the timerlat tracer, so that `rtla
    /// timerlat` could cross-check the split (`None`: not known).
    pub fn timerlat_available(&self) -> Option<bool> {
        self.timerlat
    }

    /// The wanted events this kernel does not have.
    pub fn missing_events(&self) -> Vec<String> {
        self.missing.iter().map(|e| e.to_string()).collect()
    }

    /// The instance directory (for messages and tests).
    pub fn instance_dir(&self) -> &Path {
        &self.entry.instance
    }

    pub fn stats(&self) -> ReaderStats {
        self.windows
            .lock()
            .map(|w| w.stats.clone())
            .unwrap_or_default()
    }

    /// Wait until the reader has read everything traced up to `ts_ns`
    /// (CLOCK_MONOTONIC), at most `timeout_ns`. False on timeout.
    pub fn sync(&self, ts_ns: u64, timeout_ns: u64) -> bool {
        let give_up = now_ns(Clock::Monotonic) + timeout_ns;
        loop {
            if self.drained_at_ns.load(Ordering::Acquire) > ts_ns {
                return true;
            }
            if now_ns(Clock::Monotonic) > give_up || self.reader_done() {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    fn reader_done(&self) -> bool {
        self.reader.as_ref().is_none_or(|h| h.is_finished())
    }

    /// The events of `cpu` in `[from_ns, to_ns]` that the window holds.
    pub fn window(&self, cpu: usize, from_ns: u64, to_ns: u64) -> Window {
        match self.windows.lock() {
            Ok(w) => w.window(cpu, from_ns, to_ns),
            Err(p) => p.into_inner().window(cpu, from_ns, to_ns),
        }
    }

    /// Explain `spike`: wait (at most `timeout_ns`) for the reader to
    /// catch up with it, then analyze the window of its CPU.
    pub fn explain(&self, spike: &Spike, timeout_ns: u64) -> Explanation {
        let caught_up = self.sync(spike.wake_ns + 1_000_000, timeout_ns);
        let mut w = self.window(
            spike.cpu,
            spike.deadline_ns.saturating_sub(LOOKBACK_NS),
            spike.wake_ns + 1_000_000,
        );
        w.own_events_filtered = self.set == EventSet::Lean;
        let mut x = analyze(&w, spike);
        if !caught_up {
            mark_partial(
                &mut x,
                "the trace reader had not read up to the wake-up in time".into(),
            );
        }
        x
    }

    /// Stop reading and undo everything; the result says what could not
    /// be undone. (Dropping does the same and prints failures.)
    pub fn stop(mut self) -> Result<(), journal::UndoError> {
        self.teardown()
    }

    fn teardown(&mut self) -> Result<(), journal::UndoError> {
        if self.torn_down {
            return Ok(());
        }
        self.torn_down = true;
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.reader.take() {
            let _ = h.join();
        }
        let res = journal::undo(&self.entry);
        if res.is_ok() {
            let _ = journal::remove(&self.journal_path);
        }
        res.map(|_| ())
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            eprintln!("rtscope: warning: {e}");
        }
    }
}

/// Does `available_tracers` (its text) list `tracer`?
pub fn offers_tracer(available_tracers: &str, tracer: &str) -> bool {
    available_tracers.split_whitespace().any(|t| t == tracer)
}

/// Mark an explanation partial for a reason found outside the analysis.
pub fn mark_partial(x: &mut Explanation, reason: String) {
    if x.completeness == Completeness::Complete {
        x.cause.push_str(" (partial: the trace misses events)");
    }
    x.completeness = Completeness::Partial;
    x.partial_reasons.push(reason);
}

struct ReaderCtx {
    pipe: std::fs::File,
    dir: PathBuf,
    cpus: Vec<usize>,
    windows: Arc<Mutex<Windows>>,
    stop: Arc<AtomicBool>,
    drained_at_ns: Arc<AtomicU64>,
    reader_cpus: Option<Vec<usize>>,
    reader_cgroup_tasks: Option<PathBuf>,
}

impl ReaderCtx {
    fn run(mut self) {
        // Never real-time where threads are measured. On housekeeping
        // CPUs, SCHED_FIFO 1: above the load's SCHED_OTHER processes
        // (which would starve it and let the kernel drop events), below
        // everything real-time.
        let _ = crate::sys::process::ensure_not_realtime();
        if let Some(tasks) = &self.reader_cgroup_tasks {
            let _ = std::fs::write(tasks, crate::sys::sched::gettid().to_string());
        }
        if let Some(cpus) = &self.reader_cpus
            && crate::sys::sched::set_affinity(0, cpus).is_ok()
        {
            let _ =
                crate::sys::sched::set_scheduler_current(crate::sys::sched::KernelPolicy::Fifo, 1);
        }
        let mut buf = vec![0u8; 64 * 1024];
        let mut pending: Vec<u8> = Vec::new();
        let mut next_stats = 0u64;
        let mut last: BTreeMap<usize, CpuStats> = BTreeMap::new();
        for &c in &self.cpus {
            last.insert(c, instance::read_stats(&self.dir, c).unwrap_or_default());
        }
        loop {
            let before = now_ns(Clock::Monotonic);
            match self.pipe.read(&mut buf) {
                Ok(0) => self.idle(before),
                Ok(n) => {
                    pending.extend_from_slice(&buf[..n]);
                    self.take_lines(&mut pending);
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.idle(before),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    if let Ok(mut w) = self.windows.lock() {
                        w.stats.error = Some(format!("reading trace_pipe: {e}"));
                    }
                    return;
                }
            }
            if before >= next_stats {
                next_stats = before + STATS_EVERY_NS;
                self.check_counters(&mut last);
            }
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_nanos(POLL_NS));
        }
    }

    /// The pipe was empty at `before`: everything traced earlier is read.
    fn idle(&self, before: u64) {
        self.drained_at_ns.store(before, Ordering::Release);
    }

    fn take_lines(&self, pending: &mut Vec<u8>) {
        let Some(end) = pending.iter().rposition(|&b| b == b'\n') else {
            return;
        };
        let text = String::from_utf8_lossy(&pending[..end]).into_owned();
        pending.drain(..=end);
        let Ok(mut w) = self.windows.lock() else {
            return;
        };
        for line in text.lines() {
            match parse_line(line) {
                Ok(Line::Event(e)) => w.push(e),
                Ok(Line::Lost { cpu, count }) => w.lost(cpu, count),
                Ok(Line::Ignored) => {}
                Err(_) => w.stats.lines_unreadable += 1,
            }
        }
    }

    /// The kernel's per-CPU counters: a rise means events were lost since
    /// the last look.
    fn check_counters(&self, last: &mut BTreeMap<usize, CpuStats>) {
        for &c in &self.cpus {
            let Some(now) = instance::read_stats(&self.dir, c) else {
                continue;
            };
            let before = last.insert(c, now).unwrap_or_default();
            let lost = now.overrun.saturating_sub(before.overrun)
                + now.dropped.saturating_sub(before.dropped);
            if lost > 0
                && let Ok(mut w) = self.windows.lock()
            {
                w.lost(c, Some(lost));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::EventKind;

    fn ev(cpu: usize, ts_ns: u64) -> Event {
        Event {
            ts_ns,
            cpu,
            pid: 1,
            comm: "x".into(),
            kind: EventKind::Other { name: "y".into() },
        }
    }

    #[test]
    fn the_timerlat_tracer_is_found_by_name() {
        assert!(offers_tracer("timerlat osnoise function nop\n", "timerlat"));
        assert!(!offers_tracer("osnoise function nop\n", "timerlat"));
        assert!(!offers_tracer("timerlat_x nop", "timerlat"));
        assert!(!offers_tracer("", "timerlat"));
    }

    #[test]
    fn windows_stay_bounded_and_say_from_when_they_are_complete() {
        let mut w = Windows::new(&[1], 1_000, 10, 0);
        for t in 0..100u64 {
            w.push(ev(1, t * 100));
        }
        w.push(ev(7, 5)); // a CPU not traced: ignored
        let b = &w.cpus[&1];
        assert!(b.events.len() <= 11);
        assert!(b.events.iter().all(|e| e.ts_ns + 1_000 >= 9_900));
        let win = w.window(1, 0, u64::MAX);
        assert_eq!(win.complete_from_ns, Some(8_901));
        // The count cap holds whatever the rate.
        for _ in 0..1000 {
            w.push(ev(1, 9_900));
        }
        assert_eq!(w.cpus[&1].events.len(), 10);
        // A loss is dated between the events around it.
        w.lost(1, Some(5));
        w.push(ev(1, 10_000));
        let win = w.window(1, 0, u64::MAX);
        assert_eq!(
            win.losses,
            vec![Loss {
                cpu: 1,
                after_ns: 9_900,
                before_ns: 10_000,
                count: Some(5)
            }]
        );
        assert_eq!(w.stats.events_lost, 5);
    }
}
