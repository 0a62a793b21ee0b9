//! `rtscope characterize`: flags in ([`crate::characterize::Settings`]),
//! Ctrl-C turned into a stop, the outcome out (the tables on standard
//! output, where it was saved). The characterization itself (isolation,
//! store, `--json`) is `crate::characterize::run`.

use super::{Exit, cpulist, duration};
use crate::characterize::{self as ch, Bench, Progress};
use crate::measure::settings::parse::micros;
use crate::units::CpuList;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

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
#[derive(Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
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

    /// Record this host name instead of this machine's (`--on BOARD`
    /// records the board's name).
    #[arg(long = "host", value_name = "NAME", value_parser = super::measure::host_name)]
    pub host: Option<String>,

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

    /// The command line the characterization records: empty, this
    /// process's; in a request from a workstation (`--on`), the one typed
    /// there (not `rtscope __request characterize FILE`).
    #[arg(skip)]
    pub command_line: Vec<String>,
}

/// Tells the terminal how the characterization goes.
struct Terminal;

impl Progress for Terminal {
    fn warning(&mut self, message: &str) {
        eprintln!("rtscope: warning: {message}");
    }

    fn bench_started(&mut self, b: &Bench) {
        eprintln!("rtscope: characterize: {} ({})", b.name, b.help);
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

impl CharacterizeArgs {
    /// The characterization these flags ask for.
    fn settings(&self) -> ch::Settings {
        ch::Settings {
            only: self.only.iter().map(|s| s.trim().to_string()).collect(),
            per_bench_ns: self.per_bench_ns,
            interval_ns: self.interval_ns,
            priority: self.priority,
            cpus: self.cpus.as_ref().map(|c| c.0.clone()),
            isolate: self.isolate.as_ref().map(|c| c.0.clone()),
            explain_above_ns: self.explain_ns,
            json: self.json.clone(),
            label: self.label.clone(),
            host: self.host.clone(),
            command_line: if self.command_line.is_empty() {
                crate::redact::own_command_line()
            } else {
                crate::redact::command_line(&self.command_line)
            },
            save: !self.no_save,
            store: None,
            force: self.force,
        }
    }
}

pub fn run(args: &CharacterizeArgs, db: Option<&std::path::Path>) -> Result<Exit> {
    if args.list {
        return list();
    }
    let settings = ch::Settings {
        store: db.map(std::path::Path::to_path_buf),
        ..args.settings()
    };
    watch_signals(&STOP);
    let outcome = ch::run(&settings, &STOP, &mut Terminal)?;
    if !settings.json_on_stdout() {
        out!("{}", ch::text::render(&outcome.characterization));
        if let Some(s) = &outcome.saved {
            outln!(
                "saved as run {id} in {} (rtscope runs show {id}; rtscope report {id} -o FILE; rtscope compare {id} OTHER)",
                s.store.display(),
                id = s.id
            );
        }
    }
    Ok(Exit::Ok)
}
