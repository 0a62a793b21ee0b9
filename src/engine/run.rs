//! Running a plan: real-time hygiene (mlockall, PM QoS), spawning and
//! starting the measuring threads together, collecting their windows,
//! giving the observer a view every tick, and stopping cleanly.
//!
//! The control thread (the caller's) never runs real-time code: it polls
//! the window queues every 50 ms and reads the threads' shared statistics.

use super::plan::{Plan, Policy};
use super::preflight;
use super::shared::{LiveStats, SharedStats, StatsSnapshot};
use super::thread::{self, Gate, LoopEnd, SetupMsg, SetupStep, ThreadCtx, TraceMark};
use super::window::{SERIES_CAPACITY, SeriesBuilder, WindowStat};
use crate::record::{BreakEvent, EndReason, SampleAt, WindowSeries};
use crate::sys::clock::{self, Clock};
use crate::sys::{dma, errno, mem, sched, signal};
use crate::units::format_cpu_list;
use std::io;
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;
use thiserror::Error;

/// Capacity of each thread's window queue (windows, not samples).
const WINDOW_QUEUE: usize = 4096;
/// How often the control thread wakes up.
const TICK: Duration = Duration::from_millis(50);
/// Time between "all threads ready" and the first deadline.
const START_DELAY_NS: u64 = 20_000_000;

#[derive(Debug, Error)]
pub enum EngineError {
    #[error("{0}")]
    Privilege(String),
    #[error(
        "mlockall failed ({0}): raise the locked-memory limit (ulimit -l unlimited, or memlock in /etc/security/limits.conf), run as root, or use --no-mlock"
    )]
    Mlock(io::Error),
    #[error("could not pin the main thread to CPUs {cpus}: {source}")]
    MainAffinity { cpus: String, source: io::Error },
    #[error("thread {index}{on}: {what} failed: {source}{hint}")]
    ThreadSetup {
        index: usize,
        on: String,
        what: &'static str,
        source: io::Error,
        hint: String,
    },
    #[error("could not start measuring thread {index}: {source}")]
    Spawn { index: usize, source: io::Error },
}

/// What the observer wants after a tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

/// Receives warnings and periodic views of a running measurement. Every
/// call happens on the control thread, never on a measuring one.
pub trait Observer {
    fn warning(&mut self, _message: &str) {}
    fn started(&mut self, _view: &RunView) {}
    fn tick(&mut self, _view: &RunView) -> Control {
        Control::Continue
    }
    /// Measuring is over (called once by whoever ran the plan, whether
    /// it succeeded or not): clear what was drawn.
    fn ended(&mut self) {}
    /// Warnings the observer raised itself (e.g. a checkpoint that
    /// failed); after each tick they are shown and kept in the record.
    fn notices(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// A do-nothing observer.
pub struct Quiet;
impl Observer for Quiet {}

/// Read access to a running measurement.
pub struct RunView<'a> {
    pub plan: &'a Plan,
    shared: &'a [Arc<SharedStats>],
    series: &'a [SeriesBuilder],
    pub t0_ns: u64,
    pub t0_unix_ns: u64,
}

/// One thread's state at a moment.
#[derive(Clone, Debug)]
pub struct ThreadSnapshot {
    pub plan: super::plan::ThreadPlan,
    pub tid: i32,
    pub stats: StatsSnapshot,
    pub windows: WindowSeries,
}

/// The whole measurement at a moment (during the run or at its end).
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub threads: Vec<ThreadSnapshot>,
    /// Wall-clock time of the first measured deadline.
    pub t0_unix_ns: u64,
    /// Time from the first measured deadline to the snapshot.
    pub elapsed_ns: u64,
    pub taken_unix_ns: u64,
}

impl Snapshot {
    /// Where sample `cycle` of `thread` was in time.
    pub fn sample_at(&self, thread: usize, cycle: u64) -> SampleAt {
        let interval = self.threads[thread].plan.interval_ns;
        let offset = cycle.saturating_mul(interval);
        SampleAt {
            cycle,
            offset_ns: offset,
            unix_ns: self.t0_unix_ns.saturating_add(offset),
        }
    }
}

/// The end of a run.
#[derive(Debug)]
pub struct Outcome {
    pub snapshot: Snapshot,
    pub end_reason: EndReason,
    pub break_event: Option<BreakEvent>,
    pub warnings: Vec<String>,
    pub ended_unix_ns: u64,
    /// Errors of threads that failed while measuring (the run ended).
    pub thread_errors: Vec<String>,
}

impl RunView<'_> {
    pub fn clock(&self) -> Clock {
        self.plan.config.clock
    }

    /// Time since the first measured deadline (0 during warm-up).
    pub fn elapsed_ns(&self) -> u64 {
        clock::now_ns(self.clock()).saturating_sub(self.t0_ns)
    }

    pub fn live(&self, thread: usize) -> LiveStats {
        self.shared[thread].live()
    }

    pub fn tid(&self, thread: usize) -> i32 {
        self.shared[thread]
            .tid
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn thread_count(&self) -> usize {
        self.shared.len()
    }

    pub fn snapshot(&self) -> Snapshot {
        let threads = self
            .plan
            .threads
            .iter()
            .zip(self.shared.iter().zip(self.series.iter()))
            .map(|(p, (s, w))| ThreadSnapshot {
                plan: p.clone(),
                tid: s.tid.load(SeqCst),
                stats: s.snapshot(),
                windows: w.series().clone(),
            })
            .collect();
        Snapshot {
            threads,
            t0_unix_ns: self.t0_unix_ns,
            elapsed_ns: self.elapsed_ns(),
            taken_unix_ns: clock::unix_now_ns(),
        }
    }
}

fn setup_hint(policy: Policy, step: SetupStep, err: &io::Error) -> String {
    match (step, err.raw_os_error()) {
        (SetupStep::Scheduler, Some(errno::EPERM)) if policy == Policy::Deadline => {
            " (SCHED_DEADLINE needs root, and an affinity spanning the root domain; check sched_rt_runtime_us too)".into()
        }
        (SetupStep::Scheduler, Some(errno::EPERM)) => {
            " (needs root or CAP_SYS_NICE, or RLIMIT_RTPRIO at least the priority: run with sudo, or use --policy other)".into()
        }
        (SetupStep::Scheduler, Some(errno::EBUSY)) => {
            " (the SCHED_DEADLINE bandwidth does not fit: lower --dl-runtime or use fewer threads)".into()
        }
        (SetupStep::Affinity, Some(errno::EINVAL)) => " (the CPU is offline or outside this cpuset)".into(),
        _ => String::new(),
    }
}

/// Move the finished windows waiting in each thread's queue into its series.
fn drain(consumers: &mut [rtrb::Consumer<WindowStat>], series: &mut [SeriesBuilder]) {
    for (c, s) in consumers.iter_mut().zip(series.iter_mut()) {
        while let Ok(w) = c.pop() {
            s.push(w);
        }
    }
}

/// Run `plan` to its end (duration, loops, break, or the observer asking
/// to stop), and return what was measured.
pub fn run(plan: &Plan, observer: &mut dyn Observer) -> Result<Outcome, EngineError> {
    if let Some(why) = preflight::realtime_refusal(plan) {
        return Err(EngineError::Privilege(why));
    }
    let cfg = &plan.config;
    let mut warnings = Vec::new();
    let mut warn = |observer: &mut dyn Observer, w: String| {
        observer.warning(&w);
        warnings.push(w);
    };
    if let Some(cpus) = &cfg.main_affinity {
        sched::set_affinity(0, cpus).map_err(|source| EngineError::MainAffinity {
            cpus: format_cpu_list(cpus),
            source,
        })?;
    }
    if cfg.lock_memory {
        mem::lock_all().map_err(EngineError::Mlock)?;
        mem::keep_heap();
    }
    let _dma = match cfg.dma_latency_us {
        Some(v) => match dma::CpuDmaLatency::hold(&cfg.dma_path, v) {
            Ok(h) => Some(h),
            Err(e) => {
                warn(
                    observer,
                    format!(
                        "could not hold {} at {v} us ({e}): CPUs may enter deep idle states and add wake-up latency",
                        cfg.dma_path.display()
                    ),
                );
                None
            }
        },
        None => None,
    };
    let tracemark = if cfg.tracemark && cfg.break_ns.is_some() {
        match open_tracemark() {
            Ok(t) => Some(Arc::new(t)),
            Err(e) => {
                warn(
                    observer,
                    format!(
                        "--tracemark: tracefs is not usable ({e}); the break will not be marked in the trace"
                    ),
                );
                None
            }
        }
    } else {
        None
    };
    // Timer signals are taken synchronously: block them everywhere (threads
    // inherit the mask), and let the wake signal interrupt waits at stop.
    let _ = signal::timer_signals().block();
    let _ = signal::install_wake_handler();

    let n = plan.threads.len();
    let gate = Arc::new(Gate::new());
    let (ready_tx, ready_rx) = mpsc::channel();
    let mut shared = Vec::with_capacity(n);
    let mut consumers = Vec::with_capacity(n);
    let mut series = Vec::with_capacity(n);
    let mut handles: Vec<JoinHandle<LoopEnd>> = Vec::with_capacity(n);
    for t in &plan.threads {
        let stats = Arc::new(SharedStats::new());
        let (producer, consumer) = rtrb::RingBuffer::new(WINDOW_QUEUE);
        let ctx = ThreadCtx {
            plan: t.clone(),
            policy: cfg.policy,
            deadline: plan.deadline,
            timer: cfg.timer,
            clock: cfg.clock,
            shared: stats.clone(),
            windows: producer,
            window_ns: cfg.window_ns,
            warmup_periods: plan.warmup_periods(t),
            loops: cfg.loops,
            correct: cfg.omission_correction,
            break_ns: cfg.break_ns,
            tracemark: tracemark.clone(),
        };
        let g = gate.clone();
        let tx = ready_tx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("rtscope-m{}", t.index))
            .stack_size(256 * 1024)
            .spawn(move || thread::thread_main(ctx, g, tx));
        match spawned {
            Ok(h) => handles.push(h),
            Err(source) => {
                // Release the threads already started, then report.
                gate.abort.store(true, SeqCst);
                gate.release();
                for h in handles {
                    let _ = h.join();
                }
                if cfg.lock_memory {
                    let _ = mem::unlock_all();
                }
                return Err(EngineError::Spawn {
                    index: t.index,
                    source,
                });
            }
        }
        shared.push(stats);
        consumers.push(consumer);
        series.push(SeriesBuilder::new(cfg.window_ns, SERIES_CAPACITY));
    }
    drop(ready_tx);

    // Wait for every thread's set-up.
    let mut failure: Option<EngineError> = None;
    for _ in 0..n {
        match ready_rx.recv() {
            Ok(SetupMsg::Ready) => {}
            Ok(SetupMsg::Failed { index, step, error }) => {
                if failure.is_none() {
                    let t = &plan.threads[index];
                    failure = Some(EngineError::ThreadSetup {
                        index,
                        on: t.cpu.map(|c| format!(" on CPU {c}")).unwrap_or_default(),
                        what: match step {
                            SetupStep::Affinity => "sched_setaffinity",
                            SetupStep::Scheduler => "setting the scheduling policy",
                            SetupStep::Timer => "creating the timer",
                        },
                        hint: setup_hint(cfg.policy, step, &error),
                        source: error,
                    });
                }
            }
            Err(_) => break,
        }
    }
    let t0 = clock::now_ns(cfg.clock) + START_DELAY_NS + cfg.warmup_ns;
    let t0_unix = clock::unix_now_ns() + t0.saturating_sub(clock::now_ns(cfg.clock));
    gate.t0_ns.store(t0, SeqCst);
    if let Some(d) = cfg.duration_ns {
        gate.end_ns.store(t0.saturating_add(d), SeqCst);
    }
    if failure.is_some() {
        gate.abort.store(true, SeqCst);
    }
    gate.release();
    if let Some(e) = failure {
        for h in handles {
            let _ = h.join();
        }
        if cfg.lock_memory {
            let _ = mem::unlock_all();
        }
        return Err(e);
    }

    let mut stopped_by_observer = false;
    {
        let view = RunView {
            plan,
            shared: &shared,
            series: &series,
            t0_ns: t0,
            t0_unix_ns: t0_unix,
        };
        observer.started(&view);
    }
    loop {
        std::thread::sleep(TICK);
        drain(&mut consumers, &mut series);
        let all_done = shared.iter().all(|s| s.done.load(SeqCst));
        if all_done {
            break;
        }
        let view = RunView {
            plan,
            shared: &shared,
            series: &series,
            t0_ns: t0,
            t0_unix_ns: t0_unix,
        };
        if !gate.stop.load(SeqCst) && observer.tick(&view) == Control::Stop {
            stopped_by_observer = true;
            gate.stop.store(true, SeqCst);
        }
        for n in observer.notices() {
            warn(observer, n);
        }
        if gate.stop.load(SeqCst) {
            for h in &handles {
                let _ = signal::wake_thread(h.as_pthread_t());
            }
        }
    }
    let mut ends = Vec::with_capacity(n);
    for h in handles {
        ends.push(h.join().unwrap_or(LoopEnd::Error(io::Error::other(
            "measuring thread panicked",
        ))));
    }
    drain(&mut consumers, &mut series);
    let ended_unix_ns = clock::unix_now_ns();
    let view = RunView {
        plan,
        shared: &shared,
        series: &series,
        t0_ns: t0,
        t0_unix_ns: t0_unix,
    };
    let snapshot = view.snapshot();
    for (t, s) in snapshot.threads.iter().enumerate() {
        if s.stats.dropped_windows > 0 {
            warn(
                observer,
                format!(
                    "thread {t}: {} windows were dropped (the control thread fell behind)",
                    s.stats.dropped_windows
                ),
            );
        }
        if s.stats.early > 0 {
            warn(
                observer,
                format!(
                    "thread {t}: {} wake-ups came before their deadline (clock step or late timer signal); they are counted, not in the histogram",
                    s.stats.early
                ),
            );
        }
    }
    let mut break_event = None;
    let mut thread_errors = Vec::new();
    let saw = |r: EndReason, acc: &mut Option<EndReason>| {
        let rank = |r: EndReason| match r {
            EndReason::Error => 5,
            EndReason::BreakThreshold => 4,
            EndReason::Signal => 3,
            EndReason::Duration => 2,
            EndReason::Loops => 1,
            EndReason::Unknown => 0,
        };
        if acc.is_none_or(|a| rank(r) > rank(a)) {
            *acc = Some(r);
        }
    };
    let mut reason: Option<EndReason> = None;
    for (i, e) in ends.into_iter().enumerate() {
        match e {
            LoopEnd::Duration => saw(EndReason::Duration, &mut reason),
            LoopEnd::Loops => saw(EndReason::Loops, &mut reason),
            LoopEnd::Stopped => {
                if stopped_by_observer {
                    saw(EndReason::Signal, &mut reason)
                }
            }
            LoopEnd::Break { latency_ns, cycle } => {
                saw(EndReason::BreakThreshold, &mut reason);
                break_event = Some(BreakEvent {
                    thread: i as u32,
                    latency_ns,
                    at: snapshot.sample_at(i, cycle),
                });
            }
            LoopEnd::Error(err) => {
                saw(EndReason::Error, &mut reason);
                thread_errors.push(format!("thread {i}: {err}"));
            }
            LoopEnd::NotStarted => {}
        }
    }
    if cfg.lock_memory {
        let _ = mem::unlock_all();
    }
    Ok(Outcome {
        snapshot,
        end_reason: reason.unwrap_or(EndReason::Unknown),
        break_event,
        warnings,
        ended_unix_ns,
        thread_errors,
    })
}

fn open_tracemark() -> io::Result<TraceMark> {
    let base = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .into_iter()
        .find(|b| std::path::Path::new(b).join("trace_marker").exists())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "no trace_marker under /sys/kernel/tracing",
            )
        })?;
    let open = |f: &str| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(format!("{base}/{f}"))
    };
    Ok(TraceMark {
        marker: open("trace_marker")?,
        tracing_on: open("tracing_on")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{MeasureConfig, TimerMethod};
    use crate::sys::alloc_audit::hot_allocations;

    /// The hot loop allocates nothing, with every timer method that can
    /// run inside the test process (`itimer`'s SIGALRM is process-wide and
    /// would kill the test harness; its loop is the same code, and the
    /// strace test covers it).
    #[test]
    fn hot_loop_never_allocates() {
        let root = sched::euid() == 0;
        for timer in TimerMethod::ALL
            .into_iter()
            .filter(|m| *m != TimerMethod::Itimer)
        {
            let config = MeasureConfig {
                cpus: Some(vec![0]),
                threads: Some(1),
                timer,
                interval_ns: 200_000,
                duration_ns: Some(300_000_000),
                window_ns: 10_000_000,
                policy: if root { Policy::Fifo } else { Policy::Other },
                lock_memory: false,
                dma_latency_us: None,
                ..Default::default()
            };
            let plan = Plan::build(config, &[0]).unwrap();
            let before = hot_allocations();
            let out = run(&plan, &mut Quiet).unwrap();
            assert_eq!(
                hot_allocations(),
                before,
                "{} allocated in its hot loop",
                timer.name()
            );
            let s = &out.snapshot.threads[0];
            assert!(
                s.stats.samples >= 1400,
                "{}: {} samples",
                timer.name(),
                s.stats.samples
            );
            // 30 windows of 10 ms went through the queue.
            assert!(
                s.windows.len() >= 25,
                "{}: {} windows",
                timer.name(),
                s.windows.len()
            );
            assert_eq!(out.end_reason, EndReason::Duration);
        }
    }
}
