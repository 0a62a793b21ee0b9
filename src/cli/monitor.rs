//! `rtscope monitor`: flags, their conversion to a measuring [`Request`]
//! without end plus a [`MonitorConfig`], and the run: the session, the
//! window roller beside it (and the metrics endpoint when asked), the
//! link to the monitor's previous run.

use super::Exit;
use super::{cpulist, duration};
use crate::engine::{Fanout, Observer, Policy};
use crate::measure::settings::{LoadSettings, Settings, parse::micros};
use crate::measure::{Request, Session, Status};
use crate::metrics::MetricsObserver;
use crate::monitor::{MonitorConfig, WindowRoller};
use crate::store::Store;
use crate::text::rank::Rows;
use crate::ui::live::{LiveMode, LiveObserver, Signals};
use crate::units::{CpuList, fmt_duration};
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::Path;

fn policy(s: &str) -> Result<Policy, String> {
    Policy::parse(s).ok_or_else(|| format!("unknown policy '{s}': use other, fifo or rr"))
}

fn name(s: &str) -> Result<String, String> {
    // `.` and `..` are no names in a path: serve's /monitors/.. would be /.
    let ok = !s.is_empty()
        && s.len() <= 64
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c));
    if ok {
        Ok(s.to_string())
    } else {
        Err(format!(
            "'{s}' is not a monitor name: 1 to 64 letters, digits, - _ . + (not . or ..)"
        ))
    }
}

/// Measure without end, saving the maximum (and the rest) of every
/// window: long-term latency monitoring, as OSADL's farm does.
///
/// One SCHED_FIFO thread at priority 95 per allowed CPU, every 1 ms, as
/// `measure`; every window (default 5 min, aligned on the wall clock)
/// each thread's window is saved in the store as it ends: count, min,
/// avg, p99, max, missed periods and its histogram. Retention keeps the
/// store bounded: histograms for --keep-histograms, window summaries for
/// --keep-windows. The run itself is saved as `measure` saves it
/// (checkpoints every --checkpoint).
///
/// Restarting a monitor of the same --name (after a crash, a kill -9, a
/// reboot: see contrib/systemd/rtscope-monitor.service) starts a new run
/// linked to the previous one; the windows saved before stay, none is
/// saved twice. Ctrl-C or SIGTERM end it cleanly (the last, shorter
/// window is saved). See docs/monitor.md.
///
/// Exit status: 0 ended by a signal, 2 bad options or a system error.
#[derive(Args, Debug, Clone)]
pub struct MonitorArgs {
    /// The monitor's name: a restart with the same name continues it.
    #[arg(long = "name", value_name = "NAME", default_value = "default", value_parser = name)]
    pub name: String,

    /// Length of a window (bare number: seconds; at least 1s). Windows
    /// end at multiples of it on the wall clock.
    #[arg(long = "window", value_name = "DUR", default_value = "5m", value_parser = duration)]
    pub window_ns: u64,

    /// Keep each window's histogram this long (bare number: seconds; at
    /// least one window, at most --keep-windows). Default: 7d, or
    /// --keep-windows when that is shorter.
    #[arg(long = "keep-histograms", value_name = "DUR", value_parser = duration)]
    pub keep_histograms_ns: Option<u64>,

    /// Keep each window's summary (max, p99, ...) this long (bare number:
    /// seconds).
    #[arg(long = "keep-windows", value_name = "DUR", default_value = "400d", value_parser = duration)]
    pub keep_windows_ns: u64,

    /// Pin threads to these CPUs (one thread each). Default: every CPU
    /// this process may use.
    #[arg(short = 'a', long = "affinity", value_name = "CPULIST", value_parser = cpulist)]
    pub affinity: Option<CpuList>,

    /// Period of the threads; a bare number is in microseconds.
    #[arg(short = 'i', long = "interval", value_name = "DUR", default_value = "1000", value_parser = micros)]
    pub interval_ns: u64,

    /// Scheduling policy: other, fifo or rr.
    #[arg(long = "policy", value_name = "NAME", default_value = "fifo", value_parser = policy)]
    pub policy: Policy,

    /// Priority of the threads (fifo, rr: 1-99). Default 95.
    #[arg(short = 'p', long = "priority", value_name = "PRIO")]
    pub priority: Option<i32>,

    /// Save the run's state every DUR (bare number: seconds; at least 1s).
    #[arg(long = "checkpoint", value_name = "DUR", default_value = "60s", value_parser = duration)]
    pub checkpoint_ns: u64,

    /// The deadline a wake-up is judged against (bare number: us; 250us,
    /// 2ms). Default: the period. Recorded with the run; the summary at
    /// the end and the reports say whether it was met.
    #[arg(long = "deadline", value_name = "DUR", value_parser = crate::measure::settings::parse::deadline)]
    pub deadline_ns: Option<u64>,

    /// What is monitored, shown by `rtscope runs`, in reports and as the
    /// `label` of the metrics. Default: "monitor NAME".
    #[arg(long = "label", value_name = "TEXT", value_parser = crate::measure::settings::parse::label)]
    pub label: Option<String>,
    /// Host name the monitor records and its metrics carry (default: this
    /// machine's): the board's name in a shared store (`rtscope runs
    /// --host NAME`) and the `host` label in Prometheus.
    #[arg(long = "host", value_name = "NAME", value_parser = super::measure::host_name)]
    pub host: Option<String>,
    /// KEY=VALUE fact about the run (repeatable).
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = super::import::tag)]
    pub tags: Vec<(String, String)>,

    /// Measure even when another rtscope measures the same CPUs (by
    /// default refused, naming it). A second monitor of the same --name
    /// is refused whatever this says.
    #[arg(long = "force")]
    pub force: bool,

    /// A live display on the terminal (default: a line at the start and
    /// the summary at the end, for journald).
    #[arg(long = "live")]
    pub live: bool,
    /// A line for every thread in the live display and a row for every
    /// thread in the summary at the end. By default, above 16 threads,
    /// the 8 worst (by max) and one line for the others.
    #[arg(long = "all")]
    pub all: bool,

    #[command(flatten)]
    pub load: LoadSettings,

    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,
}

impl MonitorArgs {
    /// The options a monitor refuses that `measure` would take.
    fn check(&self) -> Result<()> {
        if self.window_ns < 1_000_000_000 {
            bail!(
                "--window {} is below the 1s minimum",
                fmt_duration(self.window_ns)
            );
        }
        if self.keep_windows_ns < self.window_ns {
            bail!(
                "--keep-windows {} is shorter than a window ({})",
                fmt_duration(self.keep_windows_ns),
                fmt_duration(self.window_ns)
            );
        }
        self.keep_histograms()?;
        if !matches!(self.policy, Policy::Other | Policy::Fifo | Policy::Rr) {
            bail!("monitor measures with --policy other, fifo or rr");
        }
        Ok(())
    }

    /// How long windows keep their histogram: `--keep-histograms`, at
    /// least a window (a histogram deleted as soon as it is saved is no
    /// histogram) and at most `--keep-windows` (a histogram goes with its
    /// window); without it 7 days, or `--keep-windows` when shorter.
    pub fn keep_histograms(&self) -> Result<u64> {
        const DEFAULT_NS: u64 = 7 * 86_400 * 1_000_000_000;
        let Some(keep) = self.keep_histograms_ns else {
            return Ok(DEFAULT_NS.min(self.keep_windows_ns));
        };
        if keep < self.window_ns {
            bail!(
                "--keep-histograms {} is shorter than a window ({}): each window's histogram would be deleted as soon as it is saved; keep them at least one window",
                fmt_duration(keep),
                fmt_duration(self.window_ns)
            );
        }
        if keep > self.keep_windows_ns {
            bail!(
                "--keep-histograms {} is longer than --keep-windows {}: a histogram is deleted with its window; shorten --keep-histograms or lengthen --keep-windows",
                fmt_duration(keep),
                fmt_duration(self.keep_windows_ns)
            );
        }
        Ok(keep)
    }

    /// The monitor's measurement as `measure`'s settings: a run without
    /// end whose window series is the monitor's windows, saved in `db`
    /// (`--db`; `None`: the default store), tagged `monitor=NAME`.
    pub fn settings(&self, db: Option<&Path>) -> Result<Settings> {
        self.check()?;
        if self.tags.iter().any(|(k, _)| k == "monitor") {
            bail!("--tag monitor=... is set by the monitor (its --name)");
        }
        let mut tags = self.tags.clone();
        tags.push(("monitor".into(), self.name.clone()));
        Ok(Settings {
            affinity: self.affinity.clone().map(|c| c.0),
            interval_ns: Some(self.interval_ns),
            policy: Some(self.policy),
            priority: self.priority,
            window_ns: Some(self.window_ns),
            checkpoint_ns: Some(self.checkpoint_ns),
            deadline_ns: self.deadline_ns,
            label: Some(
                self.label
                    .clone()
                    .unwrap_or_else(|| format!("monitor {}", self.name)),
            ),
            host: self.host.clone(),
            tags,
            force: self.force,
            load: self.load.clone(),
            db: db.map(Path::to_path_buf),
            ..Settings::default()
        })
    }

    /// The monitor's measuring request (its settings' request, with the
    /// monitor's own command line).
    pub fn request(&self, db: Option<&Path>) -> Result<Request> {
        let mut r = self.settings(db)?.request()?;
        r.command_line = crate::redact::own_command_line();
        Ok(r)
    }
}

pub fn run(args: &MonitorArgs, db: Option<&Path>) -> Result<Exit> {
    let _ = crate::sys::signal::timer_signals().block();
    let signals = Signals::install().context("installing signal handlers")?;
    let request = args.request(db)?;
    // One monitor of a name per host, held until this process ends.
    let host = match &args.host {
        Some(h) => h.clone(),
        None => crate::sysinfo::fingerprint::take(&crate::sysinfo::SysRoot::host()).hostname,
    };
    let (_name, warnings) =
        crate::cpulock::lock_monitor(&crate::cpulock::lock_dir(), &host, &args.name)?;
    for w in warnings {
        eprintln!("rtscope: warning: {w}");
    }
    let metrics = args.metrics.start()?;
    let session = Session::prepare(request, &signals.stop)?;
    let ctx = session.context();
    let cfg = MonitorConfig {
        name: args.name.clone(),
        host: ctx.fingerprint.hostname.clone(),
        window_ns: args.window_ns,
        keep_histograms_ns: args.keep_histograms()?,
        keep_windows_ns: args.keep_windows_ns,
    };
    let store = Store::open(&crate::store::locate(db)?)?;
    let previous = store.begin_monitor_run(
        &cfg.name,
        &cfg.host,
        &ctx.run_uuid,
        crate::sys::clock::unix_now_ns(),
    )?;
    eprintln!(
        "rtscope: monitor '{}' on {}: run {} ({}), windows of {} saved in {}; Ctrl-C or SIGTERM ends it",
        cfg.name,
        cfg.host,
        ctx.run_uuid,
        match &previous {
            Some(p) => format!("follows run {p}"),
            None => "its first run".to_string(),
        },
        fmt_duration(cfg.window_ns),
        store.path().display()
    );
    let mut roller = WindowRoller::new(store, cfg, session.plan(), &ctx.run_uuid);
    let mode = LiveMode::choose(!args.live, args.live);
    // A line per window in the log (journalctl), unless the live display
    // has the terminal.
    roller.log = mode == LiveMode::Off;
    let mut live = LiveObserver::new(
        mode,
        session.plan(),
        session.context(),
        signals.clone(),
        if args.all {
            crate::report::summary::render_all
        } else {
            crate::report::summary::render
        },
        Rows::from_all(args.all),
    );
    let mut exporter = metrics
        .as_ref()
        .map(|m| MetricsObserver::new(m.feed(), session.plan(), session.context()));
    let mut parts: Vec<&mut dyn Observer> = vec![&mut live, &mut roller];
    if let Some(e) = exporter.as_mut() {
        parts.push(e);
    }
    let threads = session.plan().threads.len() as u64;
    let outcome = session.run(&mut Fanout::new(parts), &signals.stop)?;
    eprint!("{}", outcome.summary_text(Rows::from_all(args.all)));
    eprintln!(
        "rtscope: monitor saved {} ({} each)",
        crate::text::num::counted(roller.stored, "window", "windows"),
        crate::text::num::counted(threads, "thread", "threads")
    );
    for e in &outcome.thread_errors {
        eprintln!("rtscope: error: {e}");
    }
    match outcome.status() {
        Status::Ok | Status::LimitExceeded => Ok(Exit::Ok),
        Status::NotWritten(failures) => bail!("{}", failures.join("; ")),
        Status::ThreadFailed => bail!("measuring stopped on an error"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn dot_and_dot_dot_are_no_monitor_names() {
        assert_eq!(name("lab-1.rt").unwrap(), "lab-1.rt");
        assert_eq!(name("...").unwrap(), "...");
        for bad in [".", "..", "", "a/b"] {
            assert!(name(bad).is_err(), "{bad}");
        }
    }

    #[derive(Parser, Debug)]
    #[command(name = "x", disable_help_flag = true)]
    enum Line {
        Monitor(MonitorArgs),
        Measure(super::super::measure::MeasureArgs),
    }

    fn request(words: &[&str]) -> Result<Request> {
        let db = Some(Path::new("/tmp/s.db"));
        match Line::try_parse_from(std::iter::once("x").chain(words.iter().copied())).unwrap() {
            Line::Monitor(m) => m.request(db),
            Line::Measure(m) => m.request(db),
        }
    }

    /// The load flags are `measure`'s ([`LoadSettings`]).
    #[test]
    fn a_monitor_reads_the_load_flags() {
        let words = ["x", "monitor", "--load", "hell", "--load-cpus", "1"];
        let Line::Monitor(m) = Line::try_parse_from(words).unwrap() else {
            panic!("not a monitor");
        };
        let want = LoadSettings {
            load: Some("hell".into()),
            load_cpus: Some(vec![1]),
            ..LoadSettings::default()
        };
        assert_eq!(m.load, want);
        let r = m.request(None).unwrap();
        assert_eq!(r.load.spec.as_deref(), Some("hell"));
        assert_eq!(r.load.cpus, Some(vec![1]));
        let both = ["x", "monitor", "--load", "hell", "--load-file", "l.toml"];
        assert!(Line::try_parse_from(both).is_err());
    }

    /// A monitor measures as `measure` would with the same options, its
    /// window, checkpoint, label and tag: one way to a request.
    #[test]
    fn a_monitor_asks_what_measure_would_with_its_options() {
        // The options both take, then each one's own.
        let both = "-a 0 -i 500 -p 80 --deadline 300us --tag site=lab --load cpu --window 10s";
        let line = |head: &'static str, tail: &[&'static str]| -> Vec<&'static str> {
            let words = head.split_whitespace().chain(both.split_whitespace());
            words.chain(tail.iter().copied()).collect()
        };
        let monitor = request(&line("monitor --name bench", &[])).unwrap();
        let measure = request(&line(
            "measure --tag monitor=bench --checkpoint 60s",
            &["--label", "monitor bench"],
        ))
        .unwrap();
        let shown = |r: &Request| {
            let mut r = r.clone();
            r.command_line.clear();
            format!("{r:?}")
        };
        assert_eq!(shown(&monitor), shown(&measure));
        assert_eq!(monitor.config.window_ns, 10_000_000_000);
        assert_eq!(monitor.tags["monitor"], "bench");

        let e = request(&["monitor", "--tag", "monitor=x"]).unwrap_err();
        assert!(e.to_string().contains("set by the monitor"), "{e}");
        let e = request(&["monitor", "--tag", "a=1", "--tag", "a=2"]).unwrap_err();
        assert!(e.to_string().contains("--tag a is given twice"), "{e}");
        let e = request(&["monitor", "--window", "500ms"]).unwrap_err();
        assert!(e.to_string().contains("below the 1s minimum"), "{e}");
    }
}
