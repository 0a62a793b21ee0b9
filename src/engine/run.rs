//! Running a plan: real-time hygiene (mlockall, PM QoS), spawning and
//! starting the measuring threads together, collecting their windows,
//! giving the observer a view every tick, and stopping cleanly.
//!
//! The control thread (the caller's) never runs real-time code: it polls
//! the window queues every 50 ms and reads the threads' shared statistics.

use super::exceed::Exceedances;
use super::plan::{Plan, Policy};
use super::preflight;
use super::shared::{LiveStats, SharedStats, StatsSnapshot};
use super::thread::{self, Gate, LateWakeup, LoopEnd, SetupMsg, SetupStep, ThreadCtx, TraceMark};
use super::window::{SERIES_BUDGET, SERIES_CAPACITY, SERIES_MIN, SeriesBuilder, WindowStat};
use crate::record::{BreakEvent, EndReason, SampleAt, WindowSeries};
use crate::sys::clock::{self, Clock};
use crate::sys::{dma, errno, mem, sched, signal};
use crate::units::format_cpu_list;
use std::io;
use std::os::unix::thread::JoinHandleExt;
use std::path::Path;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;
use thiserror::Error;

/// Each thread's window queue holds this much time of windows: a
/// collector held up this long (a slow disk under a checkpoint, a store
/// that answers late) loses none.
const WINDOW_QUEUE_SPAN_NS: u64 = 30_000_000_000;
/// Bounds of a window queue, in windows (not samples): 64 windows of 1 s
/// (the default) are 64 s, 3 000 of the 10 ms minimum are 30 s. Each
/// entry is 56 bytes, locked in memory like the rest: a fixed 4096 cost
/// 229 KB a thread.
const WINDOW_QUEUE_MIN: usize = 64;
const WINDOW_QUEUE_MAX: usize = 4096;
/// Each measuring thread's stack. It is locked in memory whole (mlockall),
/// so it is a cost per thread; it holds the 64 KB that
/// [`mem::prefault_stack`] touches and the thread's own frames. Every
/// timer method, --explain and a break ran in 80 KB (64 KB did not: the
/// prefault alone fills it): the frames take under 16 KB, and 128 KB leaves
/// them four times that. 256 KB cost 128 MB more at 1024 threads.
const THREAD_STACK: usize = 128 * 1024;
/// Capacity of each thread's queue of late wake-ups (drained every tick).
const LATE_QUEUE: usize = 1024;
/// How often the control thread wakes up (the observers' ticks).
pub const TICK: Duration = Duration::from_millis(50);
/// Time between "all threads ready" and the first deadline.
const START_DELAY_NS: u64 = 20_000_000;

/// Why [`run`] could not start measuring (nothing was measured).
#[derive(Debug, Error)]
pub enum EngineError {
    /// The plan's real-time policy is not allowed to this process (not
    /// root, no CAP_SYS_NICE, RLIMIT_RTPRIO below the priority): the text
    /// is [`preflight::realtime_refusal`]'s, with what to do.
    #[error("{0}")]
    Privilege(String),
    /// Memory could not be locked (mlockall).
    #[error(
        "mlockall failed ({0}): raise the locked-memory limit (ulimit -l unlimited, or memlock in /etc/security/limits.conf), run as root, or use --no-mlock"
    )]
    Mlock(io::Error),
    /// The control thread could not be pinned to `--main-affinity`'s CPUs.
    /// (`cause` is in the text, not a source: `{:#}` shows it once.)
    #[error("could not pin the main thread to CPUs {cpus}: {cause}")]
    MainAffinity { cpus: String, cause: io::Error },
    /// A measuring thread could not be set up (`what`: the call that
    /// failed, e.g. its affinity or scheduling policy; `hint`: advice).
    #[error("thread {index}{on}: {what} failed: {cause}{hint}")]
    ThreadSetup {
        index: usize,
        on: String,
        what: &'static str,
        cause: io::Error,
        hint: String,
    },
    /// A measuring thread could not be created.
    #[error("could not start measuring thread {index}: {cause}")]
    Spawn { index: usize, cause: io::Error },
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

/// A late wake-up of one thread, as observers see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Late {
    /// Index of the thread in the plan.
    pub thread: usize,
    pub wakeup: LateWakeup,
}

/// Read access to a running measurement.
pub struct RunView<'a> {
    pub plan: &'a Plan,
    shared: &'a [Arc<SharedStats>],
    series: &'a [SeriesBuilder],
    exceedances: &'a [Exceedances],
    /// Wake-ups at least `late_above_ns` late since the last tick (empty
    /// unless the plan asks for them).
    pub late: &'a [Late],
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
    /// Every wake-up above `exceedances.threshold_ns` (engine/exceed.rs),
    /// complete: raised above any wake-up the queue lost.
    pub exceedances: Exceedances,
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

    /// Late wake-ups of `thread` that found its queue full.
    pub fn late_dropped(&self, thread: usize) -> u64 {
        self.shared[thread].dropped_late()
    }

    /// The live statistics of `thread`, to be read later (e.g. once the
    /// run is over, when they are exact) from the control side.
    pub fn stats_handle(&self, thread: usize) -> Arc<SharedStats> {
        Arc::clone(&self.shared[thread])
    }

    /// The last finished window of `thread` that holds samples, and the
    /// window length it covers (longer than `--window` once the series
    /// was compacted).
    pub fn last_window(&self, thread: usize) -> Option<(u64, crate::record::WindowPoint)> {
        let w = self.series[thread].series();
        (0..w.len())
            .rev()
            .map(|i| w.point(i))
            .find(|p| p.count > 0)
            .map(|p| (w.window_ns, p))
    }

    pub fn snapshot(&self) -> Snapshot {
        let threads = self
            .plan
            .threads
            .iter()
            .zip(self.shared.iter().zip(self.series.iter()))
            .zip(self.exceedances.iter())
            .map(|((p, (s, w)), e)| ThreadSnapshot {
                plan: p.clone(),
                tid: s.tid.load(SeqCst),
                stats: s.snapshot(),
                windows: w.series().clone(),
                exceedances: e.complete_above(s.lost_late_max()),
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

/// What the process holds for real-time work while a plan runs: locked
/// memory, the PM QoS request, the trace marker. Memory is unlocked when
/// it is dropped, on every path. `characterize` holds one too.
pub struct Hygiene {
    unlock: bool,
    _dma: Option<dma::CpuDmaLatency>,
    tracemark: Option<Arc<TraceMark>>,
}

impl Drop for Hygiene {
    fn drop(&mut self) {
        if self.unlock {
            let _ = mem::unlock_all();
        }
    }
}

impl Hygiene {
    /// Lock memory (when `lock_memory`) and hold cpu_dma_latency at
    /// `dma` (its path, the value in us); a PM QoS request that cannot be
    /// held is a warning, not a failure.
    pub fn hold(
        lock_memory: bool,
        dma: Option<(&Path, i32)>,
        warn: &mut dyn FnMut(String),
    ) -> Result<Hygiene, EngineError> {
        if lock_memory {
            mem::lock_all().map_err(EngineError::Mlock)?;
            mem::keep_heap();
        }
        let mut held = Hygiene {
            unlock: lock_memory,
            _dma: None,
            tracemark: None,
        };
        if let Some((path, v)) = dma {
            match dma::CpuDmaLatency::hold(path, v) {
                Ok(h) => held._dma = Some(h),
                Err(e) => warn(format!(
                    "could not hold {} at {v} µs ({e}): CPUs may enter deep idle states and add wake-up latency",
                    path.display()
                )),
            }
        }
        Ok(held)
    }
}

/// Pin the main thread, lock memory, hold cpu_dma_latency, open the
/// trace marker; what cannot be held is a warning, not a failure.
fn hygiene(plan: &Plan, warn: &mut dyn FnMut(String)) -> Result<Hygiene, EngineError> {
    let cfg = &plan.config;
    if let Some(cpus) = &cfg.main_affinity {
        sched::set_affinity(0, cpus).map_err(|cause| EngineError::MainAffinity {
            cpus: format_cpu_list(cpus),
            cause,
        })?;
    }
    let dma = cfg.dma_latency_us.map(|v| (cfg.dma_path.as_path(), v));
    let mut held = Hygiene::hold(cfg.lock_memory, dma, warn)?;
    if cfg.tracemark && cfg.break_ns.is_some() {
        match open_tracemark() {
            Ok(t) => held.tracemark = Some(Arc::new(t)),
            Err(e) => warn(format!(
                "--tracemark: tracefs is not usable ({e}); the break will not be marked in the trace"
            )),
        }
    }
    Ok(held)
}

/// The measuring threads, held until joined. Dropping them without
/// [`Threads::join`] aborts those not started and joins them all.
struct Threads {
    gate: Arc<Gate>,
    handles: Vec<JoinHandle<LoopEnd>>,
}

impl Threads {
    /// Wait for every thread and return how each loop ended.
    fn join(mut self) -> Vec<LoopEnd> {
        std::mem::take(&mut self.handles)
            .into_iter()
            .map(|h| {
                h.join().unwrap_or(LoopEnd::Error(io::Error::other(
                    "measuring thread panicked",
                )))
            })
            .collect()
    }

    /// Interrupt every thread's wait (at stop).
    fn wake(&self) {
        for h in &self.handles {
            let _ = signal::wake_thread(h.as_pthread_t());
        }
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        if self.handles.is_empty() {
            return;
        }
        self.gate.abort.store(true, SeqCst);
        self.gate.release();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// What the control thread reads while the threads measure.
struct Collected {
    shared: Vec<Arc<SharedStats>>,
    consumers: Vec<rtrb::Consumer<WindowStat>>,
    series: Vec<SeriesBuilder>,
    late_queues: Vec<rtrb::Consumer<LateWakeup>>,
    /// Late wake-ups taken from the queues at the last drain, at least
    /// the plan's `late_above_ns` late (the observers').
    late: Vec<Late>,
    late_above_ns: u64,
    /// Per thread: every wake-up above its threshold, with its cycle.
    exceedances: Vec<Exceedances>,
    t0_ns: u64,
    t0_unix_ns: u64,
}

impl Collected {
    /// Move the finished windows waiting in each thread's queue into its
    /// series.
    fn drain(&mut self) {
        for (c, s) in self.consumers.iter_mut().zip(self.series.iter_mut()) {
            while let Ok(w) = c.pop() {
                s.push(w);
            }
        }
        self.late.clear();
        for (thread, q) in self.late_queues.iter_mut().enumerate() {
            let table = &mut self.exceedances[thread];
            let mut raised = None;
            while let Ok(wakeup) = q.pop() {
                if wakeup.latency_ns >= self.late_above_ns {
                    self.late.push(Late { thread, wakeup });
                }
                if let Some(t) = table.push(wakeup.cycle, wakeup.latency_ns) {
                    raised = Some(t);
                }
            }
            if let Some(t) = raised {
                self.shared[thread].set_late_floor(late_floor(t, self.late_above_ns));
            }
        }
    }

    fn all_done(&self) -> bool {
        self.shared.iter().all(|s| s.done.load(SeqCst))
    }

    fn view<'a>(&'a self, plan: &'a Plan) -> RunView<'a> {
        RunView {
            plan,
            shared: &self.shared,
            series: &self.series,
            exceedances: &self.exceedances,
            late: &self.late,
            t0_ns: self.t0_ns,
            t0_unix_ns: self.t0_unix_ns,
        }
    }
}

/// The measuring thread queues wake-ups at least this late: those above
/// the exceedance threshold, and those the observers asked for.
fn late_floor(exceedance_threshold_ns: u64, late_above_ns: u64) -> u64 {
    exceedance_threshold_ns.saturating_add(1).min(late_above_ns)
}

/// Start one thread per planned thread; they wait at the gate.
fn spawn(
    plan: &Plan,
    tracemark: Option<Arc<TraceMark>>,
    ready: &mpsc::Sender<SetupMsg>,
) -> Result<(Threads, Collected), EngineError> {
    let cfg = &plan.config;
    let n = plan.threads.len();
    let mut threads = Threads {
        gate: Arc::new(Gate::new()),
        handles: Vec::with_capacity(n),
    };
    let mut collected = Collected {
        // Filled by wait_ready: each thread allocates its own.
        shared: Vec::new(),
        consumers: Vec::with_capacity(n),
        series: Vec::with_capacity(n),
        late_queues: Vec::with_capacity(n),
        late: Vec::new(),
        late_above_ns: cfg.late_above_ns.unwrap_or(u64::MAX),
        exceedances: Vec::with_capacity(n),
        t0_ns: 0,
        t0_unix_ns: 0,
    };
    for t in &plan.threads {
        let (producer, consumer) = rtrb::RingBuffer::new(window_queue(cfg.window_ns));
        let (late, late_queue) = rtrb::RingBuffer::new(LATE_QUEUE);
        let ctx = ThreadCtx {
            plan: t.clone(),
            policy: cfg.policy,
            deadline: plan.deadline,
            timer: cfg.timer,
            clock: cfg.clock,
            late_floor: late_floor(0, collected.late_above_ns),
            windows: producer,
            window_ns: cfg.window_ns,
            warmup_periods: plan.warmup_periods(t),
            loops: cfg.loops,
            correct: cfg.omission_correction,
            break_ns: cfg.break_ns,
            tracemark: tracemark.clone(),
            late,
        };
        let (gate, tx) = (threads.gate.clone(), ready.clone());
        let handle = std::thread::Builder::new()
            .name(format!("rtscope-m{}", t.index))
            .stack_size(THREAD_STACK)
            .spawn(move || thread::thread_main(ctx, gate, tx))
            .map_err(|cause| EngineError::Spawn {
                index: t.index,
                cause,
            })?;
        threads.handles.push(handle);
        collected.consumers.push(consumer);
        collected.late_queues.push(late_queue);
        collected.exceedances.push(Exceedances::new());
        collected
            .series
            .push(SeriesBuilder::new(cfg.window_ns, series_capacity(n)));
    }
    Ok((threads, collected))
}

/// A thread's window queue for windows of `window_ns`: room for
/// [`WINDOW_QUEUE_SPAN_NS`] of them, within the bounds.
fn window_queue(window_ns: u64) -> usize {
    let windows = WINDOW_QUEUE_SPAN_NS / window_ns.max(1);
    (windows as usize).clamp(WINDOW_QUEUE_MIN, WINDOW_QUEUE_MAX)
}

/// Points kept per thread's series when `threads` threads measure: the
/// full [`SERIES_CAPACITY`] up to 64 threads, then less (a power of two)
/// so that the series of all threads together stay within 2^19 points
/// (25 MB), never under [`SERIES_MIN`] a thread (a day in windows of
/// 85 s at 512 threads and more). A day-long run fills its series, so
/// this, not the run's length, bounds their memory: 393 KB a thread at
/// 8192 points, 49 KB at 1024.
fn series_capacity(threads: usize) -> usize {
    let points = (SERIES_BUDGET / threads.max(1)).clamp(SERIES_MIN, SERIES_CAPACITY);
    // A power of two, as the columns grow by doubling: none overshoots.
    1 << points.ilog2()
}

/// Wait for every thread's set-up and take the stats each allocated on
/// its CPU, in plan order; the first failure, if any.
fn wait_ready(
    plan: &Plan,
    ready: mpsc::Receiver<SetupMsg>,
    collected: &mut Collected,
) -> Option<EngineError> {
    let mut failure = None;
    let mut shared: Vec<Option<Arc<SharedStats>>> = vec![None; plan.threads.len()];
    for _ in 0..plan.threads.len() {
        match ready.recv() {
            Ok(SetupMsg::Ready { index, shared: s }) => shared[index] = Some(s),
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
                        hint: setup_hint(plan.config.policy, step, &error),
                        cause: error,
                    });
                }
            }
            Err(_) => break,
        }
    }
    // A thread that never said (it died in set-up) measured nothing: empty
    // stats, done, keep the others' places.
    collected.shared = shared
        .into_iter()
        .map(|s| {
            s.unwrap_or_else(|| {
                let s = SharedStats::new();
                s.done.store(true, SeqCst);
                Arc::new(s)
            })
        })
        .collect();
    failure
}

/// Set the first deadline and the end, and let the threads go.
fn release(plan: &Plan, threads: &Threads, collected: &mut Collected) {
    let cfg = &plan.config;
    let t0 = clock::now_ns(cfg.clock) + START_DELAY_NS + cfg.warmup_ns;
    collected.t0_ns = t0;
    collected.t0_unix_ns = clock::unix_now_ns() + t0.saturating_sub(clock::now_ns(cfg.clock));
    threads.gate.t0_ns.store(t0, SeqCst);
    if let Some(d) = cfg.duration_ns {
        threads.gate.end_ns.store(t0.saturating_add(d), SeqCst);
    }
    threads.gate.release();
}

/// Tick the observer until every thread is done; true when the observer
/// asked to stop.
fn supervise(
    plan: &Plan,
    threads: &Threads,
    collected: &mut Collected,
    observer: &mut dyn Observer,
    warnings: &mut Vec<String>,
) -> bool {
    let gate = &threads.gate;
    let mut stopped_by_observer = false;
    observer.started(&collected.view(plan));
    loop {
        std::thread::sleep(TICK);
        collected.drain();
        let done = collected.all_done();
        if done {
            // The last wake-ups drained still reach the observers (the
            // run's largest may be among them); asking to stop is moot.
            if !collected.late.is_empty() {
                observer.tick(&collected.view(plan));
            }
        } else if !gate.stop.load(SeqCst) && observer.tick(&collected.view(plan)) == Control::Stop {
            stopped_by_observer = true;
            gate.stop.store(true, SeqCst);
        }
        for n in observer.notices() {
            observer.warning(&n);
            warnings.push(n);
        }
        if done {
            return stopped_by_observer;
        }
        if gate.stop.load(SeqCst) {
            threads.wake();
        }
    }
}

/// Warnings about windows dropped and wake-ups before their deadline.
fn thread_warnings(snapshot: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    for (t, s) in snapshot.threads.iter().enumerate() {
        if s.stats.dropped_windows > 0 {
            out.push(format!(
                "thread {t}: {} windows were dropped (the control thread fell behind)",
                s.stats.dropped_windows
            ));
        }
        if s.stats.early > 0 {
            out.push(format!(
                "thread {t}: {} wake-ups came before their deadline (clock step or late timer signal); they are counted, not in the histogram",
                s.stats.early
            ));
        }
    }
    out
}

/// Why the run ended, the break that stopped it, and the threads' errors,
/// from how each loop ended.
fn ending(
    ends: Vec<LoopEnd>,
    snapshot: &Snapshot,
    stopped_by_observer: bool,
) -> (EndReason, Option<BreakEvent>, Vec<String>) {
    let mut reason = EndReason::Unknown;
    let mut break_event = None;
    let mut errors = Vec::new();
    for (i, e) in ends.into_iter().enumerate() {
        let r = match e {
            LoopEnd::Duration => EndReason::Duration,
            LoopEnd::Loops => EndReason::Loops,
            LoopEnd::Stopped if stopped_by_observer => EndReason::Signal,
            LoopEnd::Stopped | LoopEnd::NotStarted => EndReason::Unknown,
            LoopEnd::Break { latency_ns, cycle } => {
                break_event = Some(BreakEvent {
                    thread: i as u32,
                    latency_ns,
                    at: snapshot.sample_at(i, cycle),
                });
                EndReason::BreakThreshold
            }
            LoopEnd::Error(err) => {
                errors.push(format!("thread {i}: {err}"));
                EndReason::Error
            }
        };
        reason = reason.max(r);
    }
    (reason, break_event, errors)
}

/// Run `plan` to its end (duration, loops, break, or the observer asking
/// to stop), and return what was measured.
pub fn run(plan: &Plan, observer: &mut dyn Observer) -> Result<Outcome, EngineError> {
    if let Some(why) = preflight::realtime_refusal(plan) {
        return Err(EngineError::Privilege(why));
    }
    let mut warnings = Vec::new();
    let hygiene = hygiene(plan, &mut |w: String| {
        observer.warning(&w);
        warnings.push(w);
    })?;
    // Timer signals are taken synchronously: block them everywhere (threads
    // inherit the mask), and let the wake signal interrupt waits at stop.
    let _ = signal::timer_signals().block();
    let _ = signal::install_wake_handler();

    let (ready_tx, ready_rx) = mpsc::channel();
    let (threads, mut collected) = spawn(plan, hygiene.tracemark.clone(), &ready_tx)?;
    drop(ready_tx);
    if let Some(e) = wait_ready(plan, ready_rx, &mut collected) {
        // Dropping the threads aborts and joins them.
        return Err(e);
    }
    release(plan, &threads, &mut collected);
    let stopped_by_observer = supervise(plan, &threads, &mut collected, observer, &mut warnings);
    let ends = threads.join();
    collected.drain();
    let ended_unix_ns = clock::unix_now_ns();
    let snapshot = collected.view(plan).snapshot();
    for w in thread_warnings(&snapshot) {
        observer.warning(&w);
        warnings.push(w);
    }
    let (end_reason, break_event, thread_errors) = ending(ends, &snapshot, stopped_by_observer);
    drop(hygiene);
    Ok(Outcome {
        snapshot,
        end_reason,
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

    /// The cause of a failed set-up is said once, however the error is
    /// printed (`{:#}` follows sources).
    #[test]
    fn a_set_up_failure_says_its_cause_once() {
        let cause = || io::Error::from_raw_os_error(22);
        for e in [
            EngineError::MainAffinity {
                cpus: "1".into(),
                cause: cause(),
            },
            EngineError::Spawn {
                index: 0,
                cause: cause(),
            },
            EngineError::ThreadSetup {
                index: 0,
                on: " on CPU 1".into(),
                what: "sched_setaffinity",
                cause: cause(),
                hint: String::new(),
            },
        ] {
            let text = format!("{:#}", anyhow::Error::from(e));
            assert_eq!(text.matches("Invalid argument").count(), 1, "{text}");
        }
    }

    /// Each thread allocates its stats on its own CPU and hands them back;
    /// the control side keeps them in plan order whatever order the
    /// threads were ready in: the stats of thread i are those its thread
    /// `rtscope-m{i}` writes (its tid, read while it runs).
    #[test]
    fn each_thread_s_stats_are_its_own_in_plan_order() {
        struct Names(Vec<String>);
        impl Observer for Names {
            fn started(&mut self, view: &RunView) {
                for i in 0..view.thread_count() {
                    let tid = view.stats_handle(i).tid.load(SeqCst);
                    let comm = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
                        .unwrap_or_default();
                    self.0.push(comm.trim().to_string());
                }
            }
        }
        let config = MeasureConfig {
            threads: Some(6),
            interval_ns: 1_000_000,
            duration_ns: Some(100_000_000),
            window_ns: 10_000_000,
            policy: Policy::Other,
            lock_memory: false,
            dma_latency_us: None,
            ..Default::default()
        };
        let plan = Plan::build(config, &[0]).unwrap();
        let mut names = Names(Vec::new());
        let out = run(&plan, &mut names).unwrap();
        let want: Vec<String> = (0..6).map(|i| format!("rtscope-m{i}")).collect();
        assert_eq!(names.0, want);
        assert_eq!(out.snapshot.threads.len(), 6);
    }

    #[test]
    fn a_window_queue_holds_thirty_seconds_within_its_bounds() {
        assert_eq!(window_queue(1_000_000_000), WINDOW_QUEUE_MIN);
        assert_eq!(window_queue(100_000_000), 300);
        assert_eq!(window_queue(crate::engine::plan::MIN_WINDOW_NS), 3000);
        assert_eq!(window_queue(1_000_000), WINDOW_QUEUE_MAX);
        assert_eq!(window_queue(0), WINDOW_QUEUE_MAX);
    }

    #[test]
    fn series_share_a_budget_above_64_threads() {
        for t in [1, 2, 16, 64] {
            assert_eq!(series_capacity(t), SERIES_CAPACITY, "{t} threads");
        }
        assert_eq!(series_capacity(65), 4096);
        assert_eq!(series_capacity(128), 4096);
        assert_eq!(series_capacity(192), 2048);
        assert_eq!(series_capacity(256), 2048);
        assert_eq!(series_capacity(1024), SERIES_MIN);
        assert_eq!(series_capacity(100_000), SERIES_MIN);
        for t in 1..=1024 {
            let c = series_capacity(t);
            assert!(c.is_power_of_two(), "{t}: {c}");
            assert!(
                t <= 64 || t * c <= SERIES_BUDGET || c == SERIES_MIN,
                "{t}: {c}"
            );
        }
    }

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
            // The loop ran: most of its 1 500 periods (not all: under
            // qemu-user's emulation a period can take longer than 200 µs,
            // and 1 374 were seen there).
            let s = &out.snapshot.threads[0];
            assert!(
                s.stats.samples >= 1000,
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

    /// Counts the late wake-ups the ticks hand over.
    #[derive(Default)]
    struct CountLate {
        seen: usize,
    }

    impl Observer for CountLate {
        fn tick(&mut self, view: &RunView) -> Control {
            self.seen += view.late.len();
            Control::Continue
        }
    }

    /// Wake-ups drained after the threads ended (a run shorter than a
    /// tick: all of them) still reach the observer.
    #[test]
    fn the_last_late_wake_ups_reach_the_observer() {
        let config = MeasureConfig {
            cpus: Some(vec![0]),
            threads: Some(1),
            interval_ns: 1_000_000,
            loops: Some(5),
            policy: Policy::Other,
            lock_memory: false,
            dma_latency_us: None,
            late_above_ns: Some(0),
            ..Default::default()
        };
        let plan = Plan::build(config, &[0]).unwrap();
        let mut obs = CountLate::default();
        let out = run(&plan, &mut obs).unwrap();
        assert_eq!(out.end_reason, EndReason::Loops);
        assert_eq!(obs.seen, 5);
    }
}
