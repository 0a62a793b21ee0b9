//! What a measurement will do, checked before anything starts: which
//! threads, on which CPUs, at which priority and interval, with which
//! timer. `Plan::build` is pure (it is given the allowed CPUs), so every
//! refusal is unit-tested.

pub use crate::kinds::{Policy, TimerMethod};
use crate::record::DeadlineParams;
use crate::sys::clock::Clock;
use crate::units::{fmt_duration, format_cpu_list};
use std::path::PathBuf;
use thiserror::Error;

impl From<Policy> for crate::sys::sched::KernelPolicy {
    fn from(p: Policy) -> Self {
        use crate::sys::sched::KernelPolicy as K;
        match p {
            Policy::Other => K::Other,
            Policy::Batch => K::Batch,
            Policy::Idle => K::Idle,
            Policy::Fifo => K::Fifo,
            Policy::Rr => K::Rr,
            Policy::Deadline => K::Deadline,
        }
    }
}

/// What the user asked for, before it is checked against the system.
#[derive(Clone, Debug)]
pub struct MeasureConfig {
    /// `-a`: CPUs to place threads on (None: every allowed CPU).
    pub cpus: Option<Vec<usize>>,
    /// `-t N`: number of threads (None: one per CPU of `cpus`).
    pub threads: Option<usize>,
    pub interval_ns: u64,
    pub distance_ns: u64,
    pub policy: Policy,
    /// None: 95 for fifo/rr, 0 otherwise.
    pub priority: Option<i32>,
    pub priospread: bool,
    /// SCHED_DEADLINE runtime / deadline / period (None: defaults).
    pub dl_runtime_ns: Option<u64>,
    pub dl_deadline_ns: Option<u64>,
    pub dl_period_ns: Option<u64>,
    pub timer: TimerMethod,
    pub clock: Clock,
    pub duration_ns: Option<u64>,
    pub loops: Option<u64>,
    pub warmup_ns: u64,
    pub window_ns: u64,
    pub omission_correction: bool,
    pub lock_memory: bool,
    /// Value to hold on /dev/cpu_dma_latency (None: leave it alone).
    pub dma_latency_us: Option<i32>,
    pub dma_path: PathBuf,
    /// `-b`: stop the run when a latency exceeds this.
    pub break_ns: Option<u64>,
    /// `--tracemark`: on a break, mark the trace and stop tracing.
    pub tracemark: bool,
    pub main_affinity: Option<Vec<usize>>,
    /// Report wake-ups at least this late to observers, one by one (for
    /// explaining them); `None`: only statistics.
    pub late_above_ns: Option<u64>,
}

impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            cpus: None,
            threads: None,
            interval_ns: 1_000_000,
            distance_ns: 0,
            policy: Policy::Fifo,
            priority: None,
            priospread: false,
            dl_runtime_ns: None,
            dl_deadline_ns: None,
            dl_period_ns: None,
            timer: TimerMethod::Abs,
            clock: Clock::Monotonic,
            duration_ns: None,
            loops: None,
            warmup_ns: 0,
            window_ns: 1_000_000_000,
            omission_correction: true,
            lock_memory: true,
            dma_latency_us: Some(0),
            dma_path: PathBuf::from(crate::sys::dma::DEFAULT_PATH),
            break_ns: None,
            tracemark: false,
            main_affinity: None,
            late_above_ns: None,
        }
    }
}

/// One measuring thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPlan {
    pub index: usize,
    /// CPU to pin to (None: not pinned).
    pub cpu: Option<usize>,
    pub priority: i32,
    pub interval_ns: u64,
}

/// A checked measurement plan.
#[derive(Clone, Debug)]
pub struct Plan {
    pub config: MeasureConfig,
    pub threads: Vec<ThreadPlan>,
    pub deadline: Option<DeadlineParams>,
}

pub const MIN_INTERVAL_NS: u64 = 10_000;
pub const MAX_INTERVAL_NS: u64 = 3_600_000_000_000;
pub const MIN_WINDOW_NS: u64 = 10_000_000;
/// A window longer than a day would leave a run of days with one point.
pub const MAX_WINDOW_NS: u64 = 86_400_000_000_000;
/// Warm-up is measured too: a day is already more than any use of it.
pub const MAX_WARMUP_NS: u64 = 86_400_000_000_000;
pub const DEFAULT_PRIORITY: i32 = 95;
/// Measuring threads per CPU they are placed on. Each thread locks about
/// 1 MiB (histograms, window queue, stack) and takes real-time CPU time;
/// beyond this many per CPU they measure each other, not the system.
pub const MAX_THREADS_PER_CPU: usize = 64;
/// Measuring threads in all, whatever the number of CPUs.
pub const MAX_THREADS: usize = 1024;

/// The most measuring threads a run may have on `cpus` CPUs.
pub fn max_threads(cpus: usize) -> usize {
    cpus.max(1)
        .saturating_mul(MAX_THREADS_PER_CPU)
        .min(MAX_THREADS)
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("CPU {cpu} is not online or not allowed for this process; allowed CPUs: {allowed}")]
    CpuNotAllowed { cpu: usize, allowed: String },
    #[error("no CPU is allowed for this process (sched_getaffinity returned an empty set)")]
    NoCpus,
    #[error("--threads must be at least 1")]
    ZeroThreads,
    #[error(
        "--threads {got} is above the limit of {max} ({per_cpu} per CPU on the {cpus} CPU(s) measured, {hard} at most): use fewer threads"
    )]
    TooManyThreads {
        got: usize,
        max: usize,
        per_cpu: usize,
        cpus: usize,
        hard: usize,
    },
    #[error("--warmup {got} is above the {max} maximum")]
    WarmupTooLong { got: String, max: String },
    #[error("--window {got} is above the {max} maximum")]
    WindowTooLong { got: String, max: String },
    #[error("interval {got} is below the {min} minimum: a wake-up itself costs microseconds")]
    IntervalTooShort { got: String, min: String },
    #[error("interval {got} is above the {max} maximum")]
    IntervalTooLong { got: String, max: String },
    #[error("priority {prio} is out of range for policy {policy}: use {min}..={max}")]
    PriorityRange {
        prio: i32,
        policy: &'static str,
        min: i32,
        max: i32,
    },
    #[error("policy {policy} has no priority (use -p 0 or leave -p out), or choose --policy fifo")]
    PriorityWithoutRt { policy: &'static str },
    #[error(
        "--priospread from priority {prio} with {threads} threads would go below 1: raise -p or use fewer threads"
    )]
    PriospreadUnderflow { prio: i32, threads: usize },
    #[error(
        "--timer itimer uses the one per-process ITIMER_REAL, so it measures one thread only: add -t 1, or use --timer posix for a timer per thread"
    )]
    ItimerThreads,
    #[error(
        "--timer itimer has microsecond resolution: use an interval that is a whole number of microseconds"
    )]
    ItimerResolution,
    #[error(
        "--window {got} must be at least {min} and at least the longest thread interval ({longest})"
    )]
    WindowTooShort {
        got: String,
        min: String,
        longest: String,
    },
    #[error("--duration must be longer than 0")]
    ZeroDuration,
    #[error("--loops must be at least 1")]
    ZeroLoops,
    #[error(
        "SCHED_DEADLINE threads cannot be pinned with -a: the kernel requires their affinity to span the whole root domain (use an exclusive cpuset instead)"
    )]
    DeadlinePinned,
    #[error(
        "SCHED_DEADLINE needs runtime <= deadline <= period (got runtime {runtime}, deadline {deadline}, period {period})"
    )]
    DeadlineParams {
        runtime: String,
        deadline: String,
        period: String,
    },
    #[error("--break threshold must be greater than 0")]
    ZeroBreak,
    #[error(
        "{option} is a SCHED_DEADLINE parameter, but the policy is {policy}: add --policy deadline, or leave {option} out"
    )]
    DeadlineOptionWithoutDeadline {
        option: &'static str,
        policy: &'static str,
    },
}

impl Plan {
    /// Check `config` against the CPUs this process may use and lay out
    /// the threads. The checks run in this order, so the first refusal a
    /// user sees is the same whatever else is wrong.
    pub fn build(config: MeasureConfig, allowed_cpus: &[usize]) -> Result<Plan, PlanError> {
        let place = placement_cpus(&config, allowed_cpus)?;
        let n = thread_count(&config, place.len())?;
        check_bounds(&config, n)?;
        let base_prio = base_priority(&config, n)?;
        let threads = lay_out(&config, &place, n, base_prio)?;
        check_window(&config, &threads)?;
        let deadline = deadline_params(&config)?;
        Ok(Plan {
            config,
            threads,
            deadline,
        })
    }

    /// The CPUs of `allowed` that no thread measures on, where helper
    /// threads (the trace reader, the metrics server) keep off the
    /// measured CPUs. Empty when every allowed CPU is measured, or when
    /// the threads are not pinned (SCHED_DEADLINE: any CPU may be).
    pub fn unmeasured_cpus(&self, allowed: &[usize]) -> Vec<usize> {
        let mut measured = Vec::new();
        for t in &self.threads {
            match t.cpu {
                Some(c) => measured.push(c),
                None => return Vec::new(),
            }
        }
        allowed
            .iter()
            .copied()
            .filter(|c| !measured.contains(c))
            .collect()
    }

    /// Number of warm-up periods of a thread (its first deadlines, kept
    /// apart from the result).
    pub fn warmup_periods(&self, t: &ThreadPlan) -> u64 {
        self.config.warmup_ns.div_ceil(t.interval_ns)
    }
}

/// The CPUs threads are placed on: `-a`'s list, or every allowed CPU.
/// Refuses a CPU (of `-a` or the main thread's affinity) that is not
/// allowed, and `-a` under SCHED_DEADLINE.
fn placement_cpus(config: &MeasureConfig, allowed_cpus: &[usize]) -> Result<Vec<usize>, PlanError> {
    let mut allowed = allowed_cpus.to_vec();
    allowed.sort_unstable();
    allowed.dedup();
    if allowed.is_empty() {
        return Err(PlanError::NoCpus);
    }
    for list in [&config.cpus, &config.main_affinity].into_iter().flatten() {
        if let Some(&cpu) = list.iter().find(|c| !allowed.contains(c)) {
            return Err(PlanError::CpuNotAllowed {
                cpu,
                allowed: format_cpu_list(&allowed),
            });
        }
    }
    if config.policy == Policy::Deadline && config.cpus.is_some() {
        return Err(PlanError::DeadlinePinned);
    }
    Ok(match &config.cpus {
        Some(list) if !list.is_empty() => list.clone(),
        _ => allowed,
    })
}

/// `-t`, or one thread per placement CPU; bounded before anything is laid
/// out, since the layout itself is proportional to the count.
fn thread_count(config: &MeasureConfig, cpus: usize) -> Result<usize, PlanError> {
    let n = match config.threads {
        Some(0) => return Err(PlanError::ZeroThreads),
        Some(n) => n,
        None => cpus,
    };
    let max = max_threads(cpus);
    if n > max {
        return Err(PlanError::TooManyThreads {
            got: n,
            max,
            per_cpu: MAX_THREADS_PER_CPU,
            cpus,
            hard: MAX_THREADS,
        });
    }
    Ok(n)
}

/// Warm-up and window ceilings, the itimer's limits, and counts that
/// must not be zero.
fn check_bounds(config: &MeasureConfig, threads: usize) -> Result<(), PlanError> {
    if config.warmup_ns > MAX_WARMUP_NS {
        return Err(PlanError::WarmupTooLong {
            got: fmt_duration(config.warmup_ns),
            max: fmt_duration(MAX_WARMUP_NS),
        });
    }
    if config.window_ns > MAX_WINDOW_NS {
        return Err(PlanError::WindowTooLong {
            got: fmt_duration(config.window_ns),
            max: fmt_duration(MAX_WINDOW_NS),
        });
    }
    if config.timer == TimerMethod::Itimer {
        if threads != 1 {
            return Err(PlanError::ItimerThreads);
        }
        if !config.interval_ns.is_multiple_of(1000) || !config.distance_ns.is_multiple_of(1000) {
            return Err(PlanError::ItimerResolution);
        }
    }
    if config.duration_ns == Some(0) {
        return Err(PlanError::ZeroDuration);
    }
    if config.loops == Some(0) {
        return Err(PlanError::ZeroLoops);
    }
    if config.break_ns == Some(0) {
        return Err(PlanError::ZeroBreak);
    }
    Ok(())
}

/// The first thread's priority: `-p`, 95 for a real-time policy, 0
/// otherwise; in 1..=99 for a real-time policy, and with room for
/// `--priospread` over `threads` threads.
fn base_priority(config: &MeasureConfig, threads: usize) -> Result<i32, PlanError> {
    let policy = config.policy;
    let base_prio = match (policy.has_priority(), config.priority) {
        (true, Some(p)) => p,
        (true, None) => DEFAULT_PRIORITY,
        (false, None) | (false, Some(0)) => 0,
        (false, Some(_)) => {
            return Err(PlanError::PriorityWithoutRt {
                policy: policy.name(),
            });
        }
    };
    if policy.has_priority() {
        let (min, max) = (1, 99);
        if !(min..=max).contains(&base_prio) {
            return Err(PlanError::PriorityRange {
                prio: base_prio,
                policy: policy.name(),
                min,
                max,
            });
        }
        if config.priospread && base_prio - (threads as i32 - 1) < 1 {
            return Err(PlanError::PriospreadUnderflow {
                prio: base_prio,
                threads,
            });
        }
    }
    Ok(base_prio)
}

/// The threads: round-robin over `place` (unpinned under SCHED_DEADLINE),
/// each interval `distance` longer than the last and within bounds.
fn lay_out(
    config: &MeasureConfig,
    place: &[usize],
    n: usize,
    base_prio: i32,
) -> Result<Vec<ThreadPlan>, PlanError> {
    let mut threads = Vec::with_capacity(n);
    for i in 0..n {
        let interval_ns = config
            .interval_ns
            .saturating_add(config.distance_ns.saturating_mul(i as u64));
        check_interval(interval_ns)?;
        let priority = if config.priospread && config.policy.has_priority() {
            base_prio - i as i32
        } else {
            base_prio
        };
        let cpu = if config.policy == Policy::Deadline {
            None
        } else {
            Some(place[i % place.len()])
        };
        threads.push(ThreadPlan {
            index: i,
            cpu,
            priority,
            interval_ns,
        });
    }
    Ok(threads)
}

/// One thread's interval, between the minimum and the maximum.
fn check_interval(interval_ns: u64) -> Result<(), PlanError> {
    if interval_ns < MIN_INTERVAL_NS {
        return Err(PlanError::IntervalTooShort {
            got: fmt_duration(interval_ns),
            min: fmt_duration(MIN_INTERVAL_NS),
        });
    }
    if interval_ns > MAX_INTERVAL_NS {
        return Err(PlanError::IntervalTooLong {
            got: fmt_duration(interval_ns),
            max: fmt_duration(MAX_INTERVAL_NS),
        });
    }
    Ok(())
}

/// The window holds at least the minimum and the longest interval.
fn check_window(config: &MeasureConfig, threads: &[ThreadPlan]) -> Result<(), PlanError> {
    let longest = threads.iter().map(|t| t.interval_ns).max().unwrap_or(0);
    if config.window_ns < MIN_WINDOW_NS || config.window_ns < longest {
        return Err(PlanError::WindowTooShort {
            got: fmt_duration(config.window_ns),
            min: fmt_duration(MIN_WINDOW_NS),
            longest: fmt_duration(longest),
        });
    }
    Ok(())
}

/// SCHED_DEADLINE's runtime, deadline and period (None for any other
/// policy): the period defaults to the interval, the deadline to the
/// period, the runtime to a tenth of the period (at least 10 us, at most
/// the deadline).
fn deadline_params(config: &MeasureConfig) -> Result<Option<DeadlineParams>, PlanError> {
    if config.policy != Policy::Deadline {
        let given = [
            ("--dl-runtime", config.dl_runtime_ns),
            ("--dl-deadline", config.dl_deadline_ns),
            ("--dl-period", config.dl_period_ns),
        ];
        if let Some((option, _)) = given.iter().find(|(_, v)| v.is_some()) {
            return Err(PlanError::DeadlineOptionWithoutDeadline {
                option,
                policy: config.policy.name(),
            });
        }
        return Ok(None);
    }
    let period = config.dl_period_ns.unwrap_or(config.interval_ns);
    let dl = config.dl_deadline_ns.unwrap_or(period);
    let runtime = config
        .dl_runtime_ns
        .unwrap_or((period / 10).max(10_000).min(dl));
    if !(runtime <= dl && dl <= period) || runtime < 1024 {
        return Err(PlanError::DeadlineParams {
            runtime: fmt_duration(runtime),
            deadline: fmt_duration(dl),
            period: fmt_duration(period),
        });
    }
    Ok(Some(DeadlineParams {
        runtime_ns: runtime,
        deadline_ns: dl,
        period_ns: period,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> MeasureConfig {
        MeasureConfig::default()
    }

    #[test]
    fn default_is_one_fifo95_thread_per_allowed_cpu() {
        let p = Plan::build(cfg(), &[0, 1, 3]).unwrap();
        assert_eq!(p.threads.len(), 3);
        assert_eq!(
            p.threads.iter().map(|t| t.cpu).collect::<Vec<_>>(),
            vec![Some(0), Some(1), Some(3)]
        );
        assert!(
            p.threads
                .iter()
                .all(|t| t.priority == 95 && t.interval_ns == 1_000_000)
        );
    }

    #[test]
    fn unmeasured_cpus_are_the_allowed_ones_no_thread_is_pinned_to() {
        let one = MeasureConfig {
            cpus: Some(vec![1]),
            ..cfg()
        };
        let p = Plan::build(one, &[0, 1, 3]).unwrap();
        assert_eq!(p.unmeasured_cpus(&[0, 1, 3]), vec![0, 3]);
        let every = Plan::build(cfg(), &[0, 1]).unwrap();
        assert!(every.unmeasured_cpus(&[0, 1]).is_empty());
        // SCHED_DEADLINE threads are not pinned: any CPU may be measured.
        let dl = MeasureConfig {
            policy: Policy::Deadline,
            ..cfg()
        };
        let p = Plan::build(dl, &[0, 1]).unwrap();
        assert!(p.threads.iter().all(|t| t.cpu.is_none()));
        assert!(p.unmeasured_cpus(&[0, 1]).is_empty());
    }

    #[test]
    fn affinity_threads_distance_and_priospread() {
        let c = MeasureConfig {
            cpus: Some(vec![1, 2]),
            threads: Some(3),
            distance_ns: 500_000,
            priority: Some(80),
            priospread: true,
            ..cfg()
        };
        let p = Plan::build(c, &[0, 1, 2, 3]).unwrap();
        assert_eq!(
            p.threads.iter().map(|t| t.cpu).collect::<Vec<_>>(),
            vec![Some(1), Some(2), Some(1)]
        );
        assert_eq!(
            p.threads.iter().map(|t| t.priority).collect::<Vec<_>>(),
            vec![80, 79, 78]
        );
        assert_eq!(
            p.threads.iter().map(|t| t.interval_ns).collect::<Vec<_>>(),
            vec![1_000_000, 1_500_000, 2_000_000]
        );
    }

    #[test]
    fn refusals() {
        let e = Plan::build(
            MeasureConfig {
                cpus: Some(vec![7]),
                ..cfg()
            },
            &[0, 1],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "CPU 7 is not online or not allowed for this process; allowed CPUs: 0-1"
        );
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    priority: Some(100),
                    ..cfg()
                },
                &[0]
            ),
            Err(PlanError::PriorityRange { .. })
        ));
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    priority: Some(0),
                    ..cfg()
                },
                &[0]
            ),
            Err(PlanError::PriorityRange { .. })
        ));
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    policy: Policy::Other,
                    priority: Some(5),
                    ..cfg()
                },
                &[0]
            ),
            Err(PlanError::PriorityWithoutRt { .. })
        ));
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    interval_ns: 0,
                    ..cfg()
                },
                &[0]
            ),
            Err(PlanError::IntervalTooShort { .. })
        ));
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    interval_ns: 7_200_000_000_000,
                    ..cfg()
                },
                &[0]
            ),
            Err(PlanError::IntervalTooLong { .. })
        ));
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    timer: TimerMethod::Itimer,
                    ..cfg()
                },
                &[0, 1]
            ),
            Err(PlanError::ItimerThreads)
        ));
        assert!(
            Plan::build(
                MeasureConfig {
                    timer: TimerMethod::Itimer,
                    threads: Some(1),
                    ..cfg()
                },
                &[0, 1]
            )
            .is_ok()
        );
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    threads: Some(3),
                    priority: Some(2),
                    priospread: true,
                    ..cfg()
                },
                &[0]
            ),
            Err(PlanError::PriospreadUnderflow { .. })
        ));
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    threads: Some(0),
                    ..cfg()
                },
                &[0]
            ),
            Err(PlanError::ZeroThreads)
        ));
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    window_ns: 1_000_000,
                    ..cfg()
                },
                &[0]
            ),
            Err(PlanError::WindowTooShort { .. })
        ));
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    policy: Policy::Deadline,
                    cpus: Some(vec![0]),
                    ..cfg()
                },
                &[0]
            ),
            Err(PlanError::DeadlinePinned)
        ));
        assert!(matches!(Plan::build(cfg(), &[]), Err(PlanError::NoCpus)));
    }

    /// Numbers from the command line that would scale threads or memory
    /// are refused before anything is laid out, with the value and the
    /// limit in the message.
    #[test]
    fn counts_and_sizes_are_bounded() {
        let e = Plan::build(
            MeasureConfig {
                threads: Some(100_000),
                ..cfg()
            },
            &[0, 1],
        )
        .unwrap_err();
        assert_eq!(
            e,
            PlanError::TooManyThreads {
                got: 100_000,
                max: 128,
                per_cpu: 64,
                cpus: 2,
                hard: 1024
            }
        );
        let text = e.to_string();
        assert!(text.contains("100000") && text.contains("128"), "{text}");
        // The limit is that of the CPUs threads are placed on (-a).
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    cpus: Some(vec![1]),
                    threads: Some(65),
                    ..cfg()
                },
                &[0, 1]
            ),
            Err(PlanError::TooManyThreads { max: 64, .. })
        ));
        assert_eq!(
            Plan::build(
                MeasureConfig {
                    cpus: Some(vec![1]),
                    threads: Some(64),
                    ..cfg()
                },
                &[0, 1]
            )
            .unwrap()
            .threads
            .len(),
            64
        );
        // Many CPUs: the fixed ceiling.
        let many: Vec<usize> = (0..64).collect();
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    threads: Some(1025),
                    ..cfg()
                },
                &many
            ),
            Err(PlanError::TooManyThreads { max: 1024, .. })
        ));
        assert_eq!(max_threads(0), 64);
        assert_eq!(max_threads(1000), MAX_THREADS);
        let e = Plan::build(
            MeasureConfig {
                warmup_ns: u64::MAX,
                ..cfg()
            },
            &[0],
        )
        .unwrap_err();
        assert!(matches!(e, PlanError::WarmupTooLong { .. }), "{e}");
        let e = Plan::build(
            MeasureConfig {
                window_ns: MAX_WINDOW_NS + 1,
                ..cfg()
            },
            &[0],
        )
        .unwrap_err();
        assert!(matches!(e, PlanError::WindowTooLong { .. }), "{e}");
        // The interval's bounds hold for every thread (-d adds up).
        assert!(matches!(
            Plan::build(
                MeasureConfig {
                    threads: Some(3),
                    distance_ns: MAX_INTERVAL_NS,
                    ..cfg()
                },
                &[0, 1, 2]
            ),
            Err(PlanError::IntervalTooLong { .. })
        ));
    }

    #[test]
    fn deadline_defaults_and_other_priority() {
        let p = Plan::build(
            MeasureConfig {
                policy: Policy::Deadline,
                ..cfg()
            },
            &[0, 1],
        )
        .unwrap();
        assert!(p.threads.iter().all(|t| t.cpu.is_none()));
        let d = p.deadline.unwrap();
        assert_eq!(
            (d.runtime_ns, d.deadline_ns, d.period_ns),
            (100_000, 1_000_000, 1_000_000)
        );
        let p = Plan::build(
            MeasureConfig {
                policy: Policy::Other,
                ..cfg()
            },
            &[0],
        )
        .unwrap();
        assert_eq!(p.threads[0].priority, 0);
        let w = Plan::build(
            MeasureConfig {
                warmup_ns: 2_500_000,
                ..cfg()
            },
            &[0],
        )
        .unwrap();
        assert_eq!(w.warmup_periods(&w.threads[0]), 3);
    }

    #[test]
    fn deadline_parameters_need_the_deadline_policy() {
        for (c, option) in [
            (
                MeasureConfig {
                    dl_runtime_ns: Some(100_000),
                    ..cfg()
                },
                "--dl-runtime",
            ),
            (
                MeasureConfig {
                    policy: Policy::Other,
                    dl_period_ns: Some(1_000_000),
                    ..cfg()
                },
                "--dl-period",
            ),
        ] {
            let e = Plan::build(c, &[0]).unwrap_err();
            assert!(
                matches!(e, PlanError::DeadlineOptionWithoutDeadline { option: o, .. } if o == option),
                "{e}"
            );
            assert!(e.to_string().contains("--policy deadline"), "{e}");
        }
    }
}
