//! The `rt-interference` load, built into rtscope: on every load CPU, one
//! SCHED_FIFO thread per given priority, each busy for BUSY then asleep
//! for SLEEP (defaults 17 ms / 100 ms, the interference test of the
//! seeds' Table 10). A measurement below those priorities must see
//! wake-ups late by about BUSY and missed periods; one above must not.
//!
//! Timing: thread j of n on a CPU wakes at its own deadline, spins until
//! deadline + BUSY (wall clock, so a preempted thread does not stretch
//! its spell), then sleeps until deadline + BUSY + SLEEP. The threads of a
//! CPU are spread evenly over that period, so their busy spells do not
//! overlap unless BUSY × threads exceeds it.
//!
//! It runs as a child process (`rtscope __rt-interference`) so that it
//! lives in the load's process group like every other part, and ends with
//! it. Must never run on the measuring process.

use super::part::{BuildCtx, Kind, OptionDef, Part, ValueError, Values};
use crate::sys::clock::{self, Clock};
use crate::sys::{mem, sched};
use crate::units::{fmt_duration, format_cpu_list};

static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "prio",
        help: "SCHED_FIFO priorities of the threads on each CPU",
        kind: Kind::Priorities,
        default: Some("60,70,80"),
    },
    OptionDef {
        name: "busy",
        help: "how long each thread keeps its CPU busy",
        kind: Kind::Duration {
            min_ns: 100_000,
            max_ns: 10_000_000_000,
        },
        default: Some("17ms"),
    },
    OptionDef {
        name: "sleep",
        help: "how long each thread then sleeps",
        kind: Kind::Duration {
            min_ns: 1_000_000,
            max_ns: 60_000_000_000,
        },
        default: Some("100ms"),
    },
];

/// The hidden subcommand that runs the threads.
pub const SUBCOMMAND: &str = "__rt-interference";

fn build(v: &Values, ctx: &BuildCtx) -> Result<Vec<String>, ValueError> {
    let prios = v.priorities("prio");
    let (busy, sleep) = (v.duration_ns("busy"), v.duration_ns("sleep"));
    Ok(vec![
        ctx.self_exe.display().to_string(),
        SUBCOMMAND.into(),
        "--prio".into(),
        prios
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(","),
        "--busy".into(),
        format!("{busy}ns"),
        "--sleep".into(),
        format!("{sleep}ns"),
        "--cpus".into(),
        format_cpu_list(&ctx.cpus),
    ])
}

pub static PART: Part = Part {
    name: "rt-interference",
    help: "SCHED_FIFO threads per CPU, each busy then asleep (built in)",
    tool: None,
    realtime: true,
    options: OPTIONS,
    build,
};

/// What the interference process runs.
#[derive(Clone, Debug)]
pub struct Interference {
    pub prios: Vec<i32>,
    pub busy_ns: u64,
    pub sleep_ns: u64,
    pub cpus: Vec<usize>,
}

/// Deadline of thread `j` of `n`: spread evenly over the period.
pub fn phase_ns(j: usize, n: usize, period_ns: u64) -> u64 {
    if n == 0 {
        0
    } else {
        period_ns / n as u64 * j as u64
    }
}

enum Setup {
    Ready,
    Failed(SetupError),
}

/// Why the interference threads could not be set up (one line, already
/// naming `rt-interference`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(String);

/// Run the threads until the process is killed. Returns only on a set-up
/// failure, with a one-line reason.
pub fn run(cfg: &Interference) -> Result<(), SetupError> {
    if cfg.prios.is_empty() || cfg.cpus.is_empty() {
        return Err(SetupError("rt-interference: no priority or no CPU".into()));
    }
    // Exec'd as /proc/self/exe, it would show as "exe" in ps.
    let _ = crate::sys::thread::set_name("rtscope-rtint");
    if let Err(e) = mem::lock_all() {
        crate::ui::say_line(&format!(
            "rt-interference: warning: mlockall failed ({e}); page faults may stretch busy spells"
        ));
    }
    let period = cfg.busy_ns + cfg.sleep_ns;
    let start = clock::now_ns(Clock::Monotonic) + 50_000_000;
    let (tx, rx) = std::sync::mpsc::channel();
    let n = cfg.prios.len();
    for &cpu in &cfg.cpus {
        for (j, &prio) in cfg.prios.iter().enumerate() {
            let tx = tx.clone();
            let busy = cfg.busy_ns;
            let first = start + phase_ns(j, n, period);
            std::thread::Builder::new()
                .name(format!("rtint-c{cpu}-p{prio}"))
                .spawn(move || {
                    if let Err(e) = sched::set_affinity(0, &[cpu]) {
                        let _ = tx.send(Setup::Failed(SetupError(format!(
                            "rt-interference: sched_setaffinity to CPU {cpu} failed: {e}"
                        ))));
                        return;
                    }
                    if let Err(e) = sched::set_scheduler_current(sched::KernelPolicy::Fifo, prio) {
                        let _ = tx.send(Setup::Failed(SetupError(format!(
                            "rt-interference: SCHED_FIFO priority {prio} on CPU {cpu} failed: {e} (needs root or CAP_SYS_NICE)"
                        ))));
                        return;
                    }
                    let _ = tx.send(Setup::Ready);
                    drop(tx);
                    spin_forever(first, busy, period);
                })
                .map_err(|e| SetupError(format!("rt-interference: could not start a thread: {e}")))?;
        }
    }
    drop(tx);
    for _ in 0..cfg.cpus.len() * n {
        match rx.recv() {
            Ok(Setup::Ready) => {}
            Ok(Setup::Failed(why)) => return Err(why),
            Err(_) => {
                return Err(SetupError(
                    "rt-interference: a thread ended during set-up".into(),
                ));
            }
        }
    }
    crate::ui::say_line(&format!(
        "rt-interference: {} thread(s) per CPU on CPUs {} at SCHED_FIFO {:?}, busy {} then asleep {}",
        n,
        format_cpu_list(&cfg.cpus),
        cfg.prios,
        fmt_duration(cfg.busy_ns),
        fmt_duration(cfg.sleep_ns)
    ));
    loop {
        // The process ends by a signal (its group is killed).
        std::thread::park();
    }
}

fn spin_forever(first_ns: u64, busy_ns: u64, period_ns: u64) -> ! {
    let mut deadline = first_ns;
    loop {
        let _ = clock::sleep_until_ns(Clock::Monotonic, deadline);
        let until = deadline + busy_ns;
        while clock::now_ns(Clock::Monotonic) < until {
            std::hint::spin_loop();
        }
        deadline += period_ns;
        let now = clock::now_ns(Clock::Monotonic);
        if deadline < now {
            // Held off for whole periods (by a higher priority or the
            // real-time throttle): keep the phase, skip what was missed.
            let behind = (now - deadline) / period_ns + 1;
            deadline += behind * period_ns;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::part::test_ctx;

    #[test]
    fn threads_are_spread_over_the_period() {
        let p = 117_000_000;
        assert_eq!(phase_ns(0, 3, p), 0);
        assert_eq!(phase_ns(1, 3, p), 39_000_000);
        assert_eq!(phase_ns(2, 3, p), 78_000_000);
    }

    #[test]
    fn command_line_carries_every_setting() {
        let v = PART.check(&Default::default()).unwrap();
        let argv = (PART.build)(&v, &test_ctx()).unwrap();
        assert_eq!(argv[1], SUBCOMMAND);
        assert!(argv.windows(2).any(|w| w == ["--prio", "60,70,80"]));
        assert!(argv.windows(2).any(|w| w == ["--busy", "17000000ns"]));
        assert!(argv.windows(2).any(|w| w == ["--sleep", "100000000ns"]));
        assert!(argv.windows(2).any(|w| w == ["--cpus", "0-1"]));
    }
}
