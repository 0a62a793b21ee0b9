//! `rtscope characterize`: flags in, [`crate::characterize::Options`]
//! out; the isolation (`--isolate`), Ctrl-C, saving each benchmark in the
//! store as it ends, the tables on standard output and `--json`. The
//! benchmarks themselves live in `crate::characterize`.

use super::{Exit, cpulist, duration};
use crate::characterize::{self as ch, Bench, Characterization, Progress};
use crate::store::{RunState, Store};
use crate::units::{CpuList, parse_micros_ns};
use crate::{output, tune};
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

fn micros(s: &str) -> Result<u64, String> {
    parse_micros_ns(s).map_err(|e| e.to_string())
}

/// Characterize the platform: mutex, priority-change and timer costs,
/// clock cost, hand-off, wake-up, context switch, OS noise, priority
/// inversion (plain vs PI).
///
/// Each benchmark runs on threads pinned to a CPU at SCHED_FIFO with
/// memory locked, and keeps every timed call in a lossless histogram:
/// count, min, avg, p50, p99, p99.99 and max, in nanoseconds (ns). The
/// clock's own read cost is measured first and subtracted from timed
/// calls. Single-CPU benchmarks run on the first CPU of --cpus; os-noise
/// runs on every CPU of --cpus at once; wakeup goes from the first CPU to
/// the last.
///
/// Benchmarks (--only NAME,...; --list describes them): clock-gettime,
/// mutex, mutex-handoff, setschedparam, setschedprio, nanosleep, wakeup,
/// ctxswitch, os-noise, priority-inversion.
///
/// The characterization is saved in the run store as it goes (`rtscope
/// runs` lists it; `runs show ID`, `report ID... -o FILE` and `compare A
/// B` show it). Needs root or CAP_SYS_NICE (SCHED_FIFO, mlockall).
///
/// Ctrl-C or SIGTERM stop it after the current benchmark; the ones that
/// ended are printed and saved.
///
/// Exit status: 0 done (even when a self-check failed: it is printed and
/// saved), 2 bad options, missing privileges or a system error.
#[derive(Args, Debug, Clone)]
pub struct CharacterizeArgs {
    /// Run only these benchmarks (comma-separated, in the registry's
    /// order). Default: all.
    #[arg(long = "only", value_name = "NAME,...", value_delimiter = ',')]
    pub only: Vec<String>,

    /// Duration of each benchmark (bare number: seconds; e.g. 200ms, 10s;
    /// 1ms to 1h). priority-inversion runs at least 3 trials of each kind
    /// (about 100 ms) whatever this says.
    #[arg(short = 'D', long = "duration", value_name = "PER_BENCH", default_value = "1s", value_parser = duration)]
    pub per_bench_ns: u64,

    /// CPUs to use (e.g. 1 or 0-3). Default: every CPU this process may
    /// use (with --isolate: the isolated ones).
    #[arg(long = "cpus", value_name = "LIST", value_parser = cpulist)]
    pub cpus: Option<CpuList>,

    /// Interval of the clock_nanosleep rows (bare number: us; 1us to 1s).
    #[arg(short = 'i', long = "interval", value_name = "INTERVAL", default_value = "1000", value_parser = micros)]
    pub interval_ns: u64,

    /// SCHED_FIFO priority of the measuring threads (3 to 99; helper
    /// threads use the one or two below it).
    #[arg(
        short = 'p',
        long = "priority",
        value_name = "PRIO",
        default_value_t = 99
    )]
    pub priority: i32,

    /// Isolate these CPUs for the characterization (cpusets, IRQs,
    /// governor... as `rtscope tune isolate`) and run on them; everything
    /// is put back at the end.
    #[arg(long = "isolate", value_name = "CPULIST", value_parser = cpulist)]
    pub isolate: Option<CpuList>,

    /// Explain OS-noise gaps at least ABOVE long (bare number: us;
    /// default 100us) from kernel trace events while the loops run, as
    /// `measure --explain` explains late wake-ups: the 5 largest per CPU.
    /// Needs a CPU outside --cpus for the trace reader (e.g. --cpus 1).
    #[arg(long = "explain", value_name = "ABOVE", num_args = 0..=1, default_missing_value = "100", value_parser = micros)]
    pub explain_ns: Option<u64>,

    /// Also write the characterization as JSON (units in field names) to
    /// FILE (- for standard output, then the tables are not printed).
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// What is being tried, shown by `rtscope runs` and in reports.
    #[arg(long = "label", value_name = "TEXT")]
    pub label: Option<String>,

    /// Do not save the characterization in the run store.
    #[arg(long = "no-save")]
    pub no_save: bool,

    /// Run even when another rtscope measures the same CPUs (by default
    /// refused, naming it: both would be disturbed).
    #[arg(long = "force")]
    pub force: bool,

    /// List the benchmarks, what each times, and exit.
    #[arg(long = "list")]
    pub list: bool,
}

/// Saves each benchmark as it ends and tells the terminal.
struct Saver {
    store: Option<Store>,
    id: Option<i64>,
    last: Option<Characterization>,
    warned: bool,
}

impl Saver {
    fn save(&mut self, c: &Characterization, state: RunState) {
        if let (Some(s), Some(id)) = (self.store.as_mut(), self.id)
            && let Err(e) = s.save_characterization(id, c, state)
            && !self.warned
        {
            self.warned = true;
            eprintln!("rtscope: warning: saving the characterization failed: {e}");
        }
    }
}

impl Progress for Saver {
    fn started(&mut self, c: &Characterization) {
        if let Some(s) = self.store.as_mut() {
            match s.begin_characterization(c) {
                Ok(id) => self.id = Some(id),
                Err(e) => {
                    eprintln!("rtscope: warning: the characterization will not be saved: {e}")
                }
            }
        }
        self.last = Some(c.clone());
    }

    fn bench_started(&mut self, b: &Bench) {
        eprintln!("rtscope: characterize: {} ({})", b.name, b.help);
    }

    fn bench_done(&mut self, c: &Characterization, _b: &Bench) {
        self.save(c, RunState::Running);
        self.last = Some(c.clone());
    }
}

fn list() -> Result<Exit> {
    let mut rows = vec![vec![
        "name".to_string(),
        "table".to_string(),
        "what".to_string(),
    ]];
    for b in ch::BENCHES {
        rows.push(vec![b.name.into(), b.group.title().into(), b.help.into()]);
    }
    for r in rows {
        outln!(
            "{:<20} {:<18} {}",
            r[0],
            r[1].split(' ').next().unwrap_or(""),
            r[2]
        );
    }
    outln!();
    for b in ch::BENCHES {
        outln!("{}: {}", b.name, b.measures);
    }
    Ok(Exit::Ok)
}

/// Block the control signals in this thread (the benchmark threads
/// inherit it) and turn the first of them into `stop`.
fn watch_signals(stop: &'static AtomicBool) {
    let set = crate::sys::signal::control_signals();
    if set.block().is_err() {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("rtscope-signals".into())
        .spawn(move || {
            while set.wait().is_err() {}
            eprintln!("rtscope: stopping after the current benchmark");
            stop.store(true, Ordering::SeqCst);
        });
}

static STOP: AtomicBool = AtomicBool::new(false);

pub fn run(args: &CharacterizeArgs) -> Result<Exit> {
    if args.list {
        return list();
    }
    let mut opts = ch::Options {
        only: args.only.iter().map(|s| s.trim().to_string()).collect(),
        per_bench_ns: args.per_bench_ns,
        interval_ns: args.interval_ns,
        priority: args.priority,
        cpus: Vec::new(),
        label: args.label.clone(),
        command_line: crate::store::postgres::own_command_line(),
        isolated_cpus: args.isolate.as_ref().map(|c| c.0.clone()),
        explain_above_ns: args.explain_ns,
    };
    if args.explain_ns.is_some() && args.isolate.is_some() {
        anyhow::bail!(
            "--explain cannot be combined with --isolate yet: isolate with `rtscope tune isolate CPUS` first, then characterize --cpus CPUS --explain"
        );
    }
    let allowed = super::allowed_cpus()?;
    let online = crate::sysinfo::cpu::online_cpus(&crate::sysinfo::SysRoot::host())
        .unwrap_or_else(|| allowed.clone());
    // Checked against the CPUs as they are now; with --isolate, again
    // once the process sits on the isolated CPUs.
    let wanted = args
        .cpus
        .as_ref()
        .map(|c| c.0.clone())
        .or_else(|| args.isolate.as_ref().map(|c| c.0.clone()))
        .unwrap_or_else(|| allowed.clone());
    opts.cpus = wanted.clone();
    let check_against = if args.isolate.is_some() {
        &online
    } else {
        &allowed
    };
    ch::validate(&opts, check_against)?;
    if let Some(iso) = &args.isolate
        && let Some(c) = wanted.iter().find(|c| !iso.0.contains(c))
    {
        anyhow::bail!(
            "--cpus includes CPU {c}, which --isolate does not isolate: leave --cpus out, or give CPUs of --isolate"
        );
    }
    if let Some(why) = ch::privilege_refusal(opts.priority) {
        anyhow::bail!(why);
    }
    if let Some(p) = &args.json {
        output::check_writable(p, "--json")?;
    }
    // Held until the end: another rtscope on these CPUs refuses this one.
    let (_cpu_locks, warnings) =
        crate::cpulock::lock_cpus(&crate::cpulock::lock_dir(), &wanted, args.force)?;
    for w in warnings {
        eprintln!("rtscope: warning: {w}");
    }
    watch_signals(&STOP);
    let isolation = match &args.isolate {
        Some(iso) => tune::session::for_measure(Some(&iso.0), Some(&wanted), false, &STOP)
            .context("isolating the CPUs")?,
        None => None,
    };
    let allowed = super::allowed_cpus()?;
    let store = if args.no_save {
        None
    } else {
        match Store::open_default() {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("rtscope: warning: the characterization will not be saved: {e}");
                None
            }
        }
    };
    let mut saver = Saver {
        store,
        id: None,
        last: None,
        warned: false,
    };
    let result = ch::run(&opts, &allowed, &STOP, &mut saver);
    drop(isolation);
    let c = match result {
        Ok(c) => c,
        Err(e) => {
            if let Some(last) = saver.last.clone() {
                saver.save(&last, RunState::Interrupted);
            }
            return Err(e.into());
        }
    };
    saver.save(
        &c,
        if c.complete {
            RunState::Complete
        } else {
            RunState::Interrupted
        },
    );
    let to_stdout = args.json.as_deref().is_some_and(|p| p.as_os_str() == "-");
    if let Some(p) = &args.json {
        let mut text =
            serde_json::to_string_pretty(&c).context("serializing the characterization")?;
        text.push('\n');
        output::write_atomic(p, text.as_bytes())?;
    }
    if !to_stdout {
        out!("{}", ch::text::render(&c));
        if let (Some(s), Some(id)) = (&saver.store, saver.id) {
            outln!(
                "saved as run {id} in {} (rtscope runs show {id}; rtscope report {id} -o FILE; rtscope compare {id} OTHER)",
                s.path().display()
            );
        }
    }
    Ok(Exit::Ok)
}
