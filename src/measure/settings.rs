//! [`Settings`]: one measurement described as data, keyed by `rtscope
//! measure`'s long options (`interval`, `policy`, `load-cpus`, ...), typed
//! (times in ns, a [`Policy`], CPU lists, the store's location), and read
//! from what people write: it declares `measure`'s options (its fields'
//! `#[arg]`s, which `src/cli/measure.rs` flattens into the command), and
//! a study cell is its `[fixed]` and `[matrix]` values read as TOML into
//! it. One conversion, [`Settings::request`], makes the [`Request`]; one
//! function, [`Settings::command_line`], writes it back as the `rtscope
//! measure` command that asks for it. Adding an option of `measure` is
//! adding a field here (and its use in [`Settings::request`]).
//!
//! A key left out means `measure`'s default (every field is `None`,
//! `false` or empty in [`Settings::default`]); `false` for any key leaves
//! it out, as a flag not given. Touches nothing; shows nothing but the
//! options' help.

use super::error::SessionError;
use super::outputs::{HistOutput, Outputs};
use super::request::Request;
use crate::engine::{MeasureConfig, Policy, TimerMethod};
use crate::load::LoadRequest;
use crate::store::StoreError;
use crate::sys::clock::Clock;
use crate::trace::EventSet;
use crate::units::{
    ParseError, format_cpu_list, parse_cpu_list, parse_duration_ns, parse_micros_ns,
};
use clap::builder::{ArgPredicate, PossibleValuesParser, TypedValueParser};
use clap::{Arg, Args, Command};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::LazyLock;

/// `--explain` without a threshold: 100us.
pub const DEFAULT_EXPLAIN_NS: u64 = 100_000;
/// `--checkpoint`'s default: 10s.
pub const DEFAULT_CHECKPOINT_NS: u64 = 10_000_000_000;
/// Rows of the cyclictest histogram `--histfile` writes without -h.
pub const DEFAULT_HIST_ROWS: usize = 1000;

/// A CPU list (`2-3`, `0,2`). A name of its own so that clap takes a
/// field of this type as one value, not as a list of values.
pub type Cpus = Vec<usize>;

/// One measurement, as `measure`'s long options name it. Each field is
/// declared once, here: its `#[arg]` makes `measure`'s option (the doc
/// comment is its `--help`), its `#[serde]` the key of a study file and
/// of the settings sent to a board, spelled as the option's long name
/// (a unit test holds them equal). A value a flag takes is parsed by the
/// same function of [`parse`] for both. Defaults shown by `--help` are
/// given when the flag is not (so flags always say them); a file leaves
/// the key out (`None`: the same default, applied by [`Settings::config`]).
/// A file is read with [`Settings::from_table`], which refuses a key that
/// is none of these.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, Args)]
#[serde(default, rename_all = "kebab-case")]
pub struct Settings {
    /// Pin threads to these CPUs, round-robin (e.g. 2-3 or 0,2). Without a
    /// list, or without -a: every CPU this process may use.
    // In a file: `true`, as `-a` without a list.
    #[arg(short = 'a', long = "affinity", value_name = "CPULIST", num_args = 0..=1, value_parser = parse::cpus)]
    #[serde(deserialize_with = "de_all_cpus", serialize_with = "ser_cpus")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Cpus>,

    /// Number of threads. Without N (or without -t): one per CPU of -a.
    /// At most 64 per CPU measured, 1024 in all.
    // In a file: `true`, as `-t` without N.
    #[arg(short = 't', long = "threads", value_name = "N", num_args = 0..=1)]
    #[serde(
        deserialize_with = "de_threads",
        skip_serializing_if = "Option::is_none"
    )]
    pub threads: Option<usize>,

    /// Pin the main (non-real-time) thread to these CPUs.
    #[arg(long = "main-affinity", alias = "mainaffinity", value_name = "CPULIST", value_parser = parse::cpus)]
    #[serde(alias = "mainaffinity", deserialize_with = "de_cpus")]
    #[serde(serialize_with = "ser_cpus", skip_serializing_if = "Option::is_none")]
    pub main_affinity: Option<Cpus>,

    /// Period of the threads; a bare number is in microseconds.
    #[arg(short = 'i', long = "interval", value_name = "DUR", default_value = "1000", value_parser = parse::micros)]
    #[serde(rename = "interval", deserialize_with = "de_micros")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub interval_ns: Option<u64>,

    /// Added to the interval of each next thread (bare number: us).
    /// Default 0: every thread at the same interval (cyclictest: 500us).
    #[arg(short = 'd', long = "distance", value_name = "DUR", default_value = "0", value_parser = parse::micros)]
    #[serde(rename = "distance", deserialize_with = "de_micros")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub distance_ns: Option<u64>,

    /// Scheduling policy: other, batch, idle, fifo, rr or deadline.
    #[arg(long = "policy", value_name = "NAME", default_value = "fifo", value_parser = parse::policy)]
    #[serde(
        deserialize_with = "de_policy",
        skip_serializing_if = "Option::is_none"
    )]
    pub policy: Option<Policy>,

    /// Priority of the threads (fifo, rr: 1-99). Default 95; 0 for other.
    #[arg(
        short = 'p',
        long = "priority",
        value_name = "PRIO",
        allow_negative_numbers = true
    )]
    #[serde(
        deserialize_with = "de_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub priority: Option<i32>,

    /// Give thread N priority PRIO-N instead of PRIO for all.
    #[arg(long = "priospread")]
    #[serde(skip_serializing_if = "is_false")]
    pub priospread: bool,

    /// SCHED_DEADLINE runtime (default: 10% of the period, at least 10us).
    #[arg(long = "dl-runtime", value_name = "DUR", value_parser = parse::micros)]
    #[serde(rename = "dl-runtime", deserialize_with = "de_micros")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub dl_runtime_ns: Option<u64>,
    /// SCHED_DEADLINE relative deadline (default: the period).
    #[arg(long = "dl-deadline", value_name = "DUR", value_parser = parse::micros)]
    #[serde(rename = "dl-deadline", deserialize_with = "de_micros")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub dl_deadline_ns: Option<u64>,
    /// SCHED_DEADLINE period (default: the interval).
    #[arg(long = "dl-period", value_name = "DUR", value_parser = parse::micros)]
    #[serde(rename = "dl-period", deserialize_with = "de_micros")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub dl_period_ns: Option<u64>,

    /// How to wait: abs (clock_nanosleep TIMER_ABSTIME), rel
    /// (clock_nanosleep relative), nanosleep, itimer (setitimer + SIGALRM,
    /// one thread), posix (timer_create + signal), timerfd.
    #[arg(long = "timer", value_name = "METHOD", value_parser = parse::timer)]
    #[serde(deserialize_with = "de_timer", skip_serializing_if = "Option::is_none")]
    pub timer: Option<TimerMethod>,

    /// Clock of deadlines and wake-ups: monotonic (0) or realtime (1).
    #[arg(short = 'c', long = "clock", value_name = "CLOCK", default_value = "monotonic", value_parser = parse::clock)]
    #[serde(deserialize_with = "de_clock", skip_serializing_if = "Option::is_none")]
    pub clock: Option<Clock>,

    /// Run for this long (bare number: seconds; 10m, 1h, 2d). Default:
    /// until Ctrl-C.
    #[arg(short = 'D', long = "duration", value_name = "DUR", value_parser = parse::seconds)]
    #[serde(rename = "duration", deserialize_with = "de_seconds")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub duration_ns: Option<u64>,

    /// Stop each thread after this many wake-ups.
    #[arg(short = 'l', long = "loops", value_name = "N")]
    #[serde(
        deserialize_with = "de_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub loops: Option<u64>,

    /// Measure this long first and keep it apart from the result (bare
    /// number: seconds).
    #[arg(long = "warmup", value_name = "DUR", default_value = "0", value_parser = parse::seconds)]
    #[serde(rename = "warmup", deserialize_with = "de_seconds")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub warmup_ns: Option<u64>,

    /// Length of a window of the min/avg/max-over-time series.
    #[arg(long = "window", value_name = "DUR", default_value = "1s", value_parser = parse::seconds)]
    #[serde(rename = "window", deserialize_with = "de_seconds")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub window_ns: Option<u64>,

    /// Record only the late wake-up, not the periods it missed
    /// (cyclictest's counting). Missed periods are still counted.
    #[arg(long = "no-omission-correction")]
    #[serde(skip_serializing_if = "is_false")]
    pub no_omission_correction: bool,

    /// Do not lock memory (mlockall) before measuring.
    #[arg(long = "no-mlock")]
    #[serde(skip_serializing_if = "is_false")]
    pub no_mlock: bool,

    /// Value held on /dev/cpu_dma_latency during the run, in us.
    // None with --no-dma-latency (the flag gives no default then).
    #[arg(long = "latency", value_name = "US", default_value = "0", default_value_if("no_dma_latency", "true", None::<&str>))]
    #[serde(rename = "latency", deserialize_with = "de_number")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<i32>,
    /// Leave /dev/cpu_dma_latency alone (CPUs may enter deep idle states).
    #[arg(long = "no-dma-latency", conflicts_with = "latency_us")]
    #[serde(skip_serializing_if = "is_false")]
    pub no_dma_latency: bool,

    /// Stop the run when a latency exceeds this (bare number: us); exit 1.
    #[arg(short = 'b', long = "breaktrace", value_name = "DUR", value_parser = parse::micros)]
    #[serde(rename = "breaktrace", deserialize_with = "de_micros")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub break_ns: Option<u64>,
    /// With -b: write a marker into the kernel trace and stop tracing.
    #[arg(long = "tracemark")]
    #[serde(skip_serializing_if = "is_false")]
    pub tracemark: bool,

    /// Exit 1 if any thread's maximum exceeds this (bare number: us). The
    /// run goes on; everything is written first.
    #[arg(long = "max-latency", value_name = "DUR", value_parser = parse::micros)]
    #[serde(rename = "max-latency", deserialize_with = "de_micros")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub max_latency_ns: Option<u64>,

    /// The deadline a wake-up is judged against (bare number: us; 250us,
    /// 2ms). Default: the period, past which a wake-up has missed its
    /// next deadline. The verdict says first whether it was met; it sets
    /// no exit status (--max-latency does). Recorded with the run.
    #[arg(long = "deadline", value_name = "DUR", value_parser = parse::deadline)]
    #[serde(rename = "deadline", deserialize_with = "de_deadline")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub deadline_ns: Option<u64>,

    /// Print cyclictest's histogram (N rows of 1us) on standard output at
    /// the end (the summary goes to standard error).
    #[arg(short = 'h', long = "histogram", value_name = "N")]
    #[serde(
        deserialize_with = "de_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub histogram: Option<usize>,
    /// Like -h, with an extra all-threads column.
    #[arg(
        short = 'H',
        long = "histofall",
        value_name = "N",
        conflicts_with = "histogram"
    )]
    #[serde(
        deserialize_with = "de_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub histofall: Option<usize>,
    /// Write the cyclictest histogram here instead of standard output
    /// (rows: -h N, default 1000).
    #[arg(long = "histfile", value_name = "FILE")]
    #[serde(deserialize_with = "de_path", serialize_with = "ser_path")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histfile: Option<PathBuf>,

    /// Write the run record here; - for standard output. The layout is
    /// rtscope's run record (`rtscope schema`), not cyclictest's.
    #[arg(long = "json", value_name = "FILE")]
    #[serde(deserialize_with = "de_path", serialize_with = "ser_path")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json: Option<PathBuf>,

    /// Isolate these CPUs for this run only and measure on them (cpusets,
    /// IRQs, governor ...: as `rtscope tune isolate`); everything is put
    /// back at the end, on Ctrl-C, SIGTERM or an error. Needs root.
    #[arg(long = "isolate", value_name = "CPULIST", value_parser = parse::cpus)]
    #[serde(deserialize_with = "de_cpus", serialize_with = "ser_cpus")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolate: Option<Cpus>,

    /// Explain every wake-up at least ABOVE late (bare number: us; default
    /// 100us) from kernel trace events while the run goes on: what ran
    /// instead, which IRQ, for how long. Uses a tracefs instance of its
    /// own (mounted if needed, removed at the end). Needs root.
    // In a file: `true`, as --explain without ABOVE.
    #[arg(long = "explain", value_name = "ABOVE", num_args = 0..=1, default_missing_value = "100", value_parser = parse::micros)]
    #[serde(rename = "explain", deserialize_with = "de_explain")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub explain_ns: Option<u64>,

    /// Trace events --explain records: "lean" (the default) leaves out
    /// the events every timer wake-up of a measured thread writes before
    /// it runs (timer interrupt, hrtimer expiry, wake-ups) and filters
    /// out its switches to idle, so the thread pays next to nothing;
    /// "full" records them too, naming the timer's own part and the
    /// wake-up, at a cost on the project's VM of about a tenth of the
    /// average latency at 1ms and a third at 100us. See docs/explain.md.
    // None without --explain (the flag gives its default with it only).
    #[arg(
        long = "explain-events",
        value_name = "SET",
        value_parser = PossibleValuesParser::new(["lean", "full"]).try_map(|s| parse::events(&s)),
        default_value_if("explain_ns", ArgPredicate::IsPresent, "lean"),
        requires = "explain_ns"
    )]
    #[serde(deserialize_with = "de_events", serialize_with = "ser_events")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain_events: Option<EventSet>,

    /// Do not save the run in the run store (by default every run is
    /// saved, as it goes: see --checkpoint and --db).
    #[arg(long = "no-save")]
    #[serde(skip_serializing_if = "is_false")]
    pub no_save: bool,

    /// Measure even when another rtscope measures the same CPUs (by
    /// default refused, naming it: both measurements would be disturbed).
    #[arg(long = "force")]
    #[serde(skip_serializing_if = "is_false")]
    pub force: bool,
    /// What is being tried, shown by `rtscope runs` and in reports (e.g.
    /// "PREEMPT_RT, CPU 1 isolated").
    #[arg(long = "label", value_name = "TEXT", value_parser = parse::label)]
    #[serde(deserialize_with = "de_label", skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Host name the run records (default: this machine's, from
    /// /proc/sys/kernel/hostname): the board's name in a shared store,
    /// selected later with `rtscope runs --host NAME`.
    #[arg(long = "host", value_name = "NAME", value_parser = parse::host)]
    #[serde(deserialize_with = "de_host", skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// KEY=VALUE fact about the run (repeatable), e.g. --tag load=hackbench.
    // Kept in the order given; in a file one `KEY=VALUE` or a list.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse::tag)]
    #[serde(
        rename = "tag",
        deserialize_with = "de_tags",
        serialize_with = "ser_tags"
    )]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<(String, String)>,
    /// Save the state of the run in the store every DUR while it runs
    /// (bare number: seconds; at least 1s): a killed run or a power cut
    /// loses at most this much.
    // None with --no-save (the flag gives no default then).
    #[arg(long = "checkpoint", value_name = "DUR", default_value = "10s", default_value_if("no_save", "true", None::<&str>), value_parser = parse::seconds, conflicts_with = "no_save")]
    #[serde(rename = "checkpoint", deserialize_with = "de_seconds")]
    #[serde(serialize_with = "ser_time", skip_serializing_if = "Option::is_none")]
    pub checkpoint_ns: Option<u64>,

    /// The load the measurement runs under (`--load`, `--load-file`,
    /// `--load-cpus`, `--load-dir`; the same keys in a file).
    #[command(flatten)]
    #[serde(flatten)]
    pub load: LoadSettings,

    /// The run store (`--db`: a file or a PostgreSQL URL); none: the
    /// default store ([`crate::store::locate`]). No option of its own:
    /// the global `--db` sets it.
    #[arg(skip)]
    #[serde(deserialize_with = "de_store", serialize_with = "ser_path")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db: Option<PathBuf>,
}

/// The load a measurement runs under: the `--load*` options of `measure`
/// and `monitor` (both flatten it: `measure` through [`Settings`]), and
/// the same keys in a file. Declared as [`Settings`]' fields are.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, Args)]
#[serde(default, rename_all = "kebab-case")]
pub struct LoadSettings {
    /// Measure under this load: a profile (rtscope load --list) with
    /// optional settings, e.g. hell, hell:steady,
    /// rt-interference:prio=60,70,80, hell:period=10s:active=3s-6s.
    #[arg(long = "load", value_name = "PROFILE[:K=V]...", help_heading = "Load")]
    #[serde(deserialize_with = "de_text", skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
    /// Measure under a load profile read from this TOML file (same
    /// vocabulary as the built-in profiles: rtscope load --print hell).
    #[arg(
        long = "load-file",
        value_name = "FILE",
        conflicts_with = "load",
        help_heading = "Load"
    )]
    #[serde(deserialize_with = "de_path", serialize_with = "ser_path")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_file: Option<PathBuf>,
    /// Run the load on these CPUs only (e.g. the housekeeping CPUs).
    /// Default: every CPU this process may use.
    #[arg(long = "load-cpus", value_name = "CPULIST", value_parser = parse::cpus, help_heading = "Load")]
    #[serde(deserialize_with = "de_cpus", serialize_with = "ser_cpus")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_cpus: Option<Cpus>,
    /// Directory for the load's scratch files (a subdirectory
    /// rtscope-load-PID is made and removed). Default: /var/tmp.
    #[arg(long = "load-dir", value_name = "DIR", help_heading = "Load")]
    #[serde(deserialize_with = "de_path", serialize_with = "ser_path")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_dir: Option<PathBuf>,
}

impl LoadSettings {
    /// The load these settings ask for (none without `load` or
    /// `load-file`).
    pub fn request(&self) -> LoadRequest {
        LoadRequest {
            spec: self.load.clone(),
            file: self.load_file.clone(),
            cpus: self.load_cpus.clone(),
            dir: self.load_dir.clone(),
        }
    }
}

/// `measure`'s options that [`Settings`] declares, as a command of their
/// own: what [`KEYS`] and [`ALIASES`] are read from.
pub fn options() -> Command {
    Settings::augment_args(Command::new("measure").disable_help_flag(true))
}

static OPTIONS: LazyLock<Command> = LazyLock::new(options);

/// Every key of [`Settings`], in the order of its fields (the order
/// [`Settings::command_line`] writes them): the long name of each field's
/// option, then `db` (the global `--db`).
pub static KEYS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let longs = OPTIONS.get_arguments().filter_map(Arg::get_long);
    longs.chain(["db"]).collect()
});

/// Other names a key is read under (cyclictest's spelling), with the key:
/// the options' aliases.
pub static ALIASES: LazyLock<Vec<(&'static str, &'static str)>> = LazyLock::new(|| {
    let mut pairs = Vec::new();
    for a in OPTIONS.get_arguments() {
        if let Some(long) = a.get_long() {
            let aliases = a.get_all_aliases().unwrap_or_default();
            pairs.extend(aliases.into_iter().map(|alias| (alias, long)));
        }
    }
    pairs
});

/// The keys an unknown key's message lists: each key, then its aliases
/// (the list serde's `deny_unknown_fields` gave).
static EXPECTED: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut names = Vec::new();
    for key in KEYS.iter() {
        names.push(*key);
        names.extend(ALIASES.iter().filter(|(_, k)| k == key).map(|(a, _)| *a));
    }
    names
});

/// Why settings read from a file were refused.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[error("{0}")]
pub struct SettingsError(pub String);

impl Settings {
    /// Whether `key` names a setting (or one of its aliases).
    pub fn has_key(key: &str) -> bool {
        KEYS.iter().any(|k| *k == key) || ALIASES.iter().any(|(a, _)| *a == key)
    }

    /// Read settings from a TOML table (keys as [`KEYS`] spell them, or
    /// [`ALIASES`]). A key that is neither is refused here, as serde's
    /// `deny_unknown_fields` words it (which cannot be used on a struct
    /// with a flattened field, as [`Settings::load`] is): read settings
    /// through this function only.
    pub fn from_table(table: toml::Table) -> Result<Settings, SettingsError> {
        if let Some(key) = table.keys().find(|k| !Settings::has_key(k)) {
            let e: de::value::Error = de::Error::unknown_field(key, EXPECTED.as_slice());
            return Err(SettingsError(e.to_string()));
        }
        toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| SettingsError(e.message().trim().to_string()))
    }

    /// The settings as a TOML table: the keys that are set, nothing else.
    pub fn to_table(&self) -> toml::Table {
        // Every value is written as a string, number, boolean or list
        // (paths as text): this cannot fail.
        match toml::Value::try_from(self) {
            Ok(toml::Value::Table(t)) => t,
            _ => toml::Table::new(),
        }
    }

    /// The `rtscope measure` command that asks for these settings: every
    /// key that is set, in [`KEYS`]'s order, as its long option. The store
    /// is left out (it is the global `--db`, and may hold a password).
    pub fn command_line(&self) -> Vec<String> {
        let table = self.to_table();
        let mut words = vec!["rtscope".to_string(), "measure".to_string()];
        for key in KEYS.iter().filter(|k| **k != "db") {
            if let Some(v) = table.get(*key) {
                push_words(&mut words, key, v);
            }
        }
        words
    }
}

/// The words of option `--key` with value `v`: the flag alone for `true`,
/// the option once per item of a list.
fn push_words(words: &mut Vec<String>, key: &str, v: &toml::Value) {
    match v {
        toml::Value::Boolean(true) => words.push(format!("--{key}")),
        toml::Value::Boolean(false) => {}
        toml::Value::Array(items) => items.iter().for_each(|i| push_words(words, key, i)),
        toml::Value::String(s) => words.extend([format!("--{key}"), s.clone()]),
        other => words.extend([format!("--{key}"), other.to_string()]),
    }
}

// ------------------------------------------------------------ the request

impl Settings {
    /// The measurement these settings ask for. Refuses the combinations
    /// `measure`'s flags refuse (two outputs of the histogram, a setting
    /// and its opposite, a tag given twice); the command line recorded is
    /// [`Settings::command_line`] (`measure` puts its own instead).
    pub fn request(&self) -> Result<Request, SessionError> {
        self.check_conflicts()?;
        Ok(Request {
            config: self.config(),
            isolate: self.isolate.clone(),
            load: self.load.request(),
            checkpoint_ns: (!self.no_save)
                .then_some(self.checkpoint_ns.unwrap_or(DEFAULT_CHECKPOINT_NS)),
            outputs: Outputs {
                json: self.json.clone(),
                histogram: self.histogram(),
            },
            label: self.label.clone(),
            host: self.host.clone(),
            tags: self.tag_map()?,
            max_latency_ns: self.max_latency_ns,
            deadline_ns: self.deadline_ns,
            command_line: self.command_line(),
            explain_above_ns: self.explain_ns,
            explain_events: self.explain_events.unwrap_or_default(),
            force_shared_cpus: self.force,
            store: self.db.clone(),
        })
    }

    /// The engine's configuration: `measure`'s defaults, overlaid.
    pub fn config(&self) -> MeasureConfig {
        let d = MeasureConfig::default();
        MeasureConfig {
            cpus: self.affinity.clone(),
            threads: self.threads,
            interval_ns: self.interval_ns.unwrap_or(d.interval_ns),
            distance_ns: self.distance_ns.unwrap_or(d.distance_ns),
            policy: self.policy.unwrap_or(d.policy),
            priority: self.priority,
            priospread: self.priospread,
            dl_runtime_ns: self.dl_runtime_ns,
            dl_deadline_ns: self.dl_deadline_ns,
            dl_period_ns: self.dl_period_ns,
            timer: self.timer.unwrap_or(d.timer),
            clock: self.clock.unwrap_or(d.clock),
            duration_ns: self.duration_ns,
            loops: self.loops,
            warmup_ns: self.warmup_ns.unwrap_or(d.warmup_ns),
            window_ns: self.window_ns.unwrap_or(d.window_ns),
            omission_correction: !self.no_omission_correction,
            lock_memory: !self.no_mlock,
            dma_latency_us: (!self.no_dma_latency).then_some(self.latency_us.unwrap_or(0)),
            dma_path: std::env::var_os("RTSCOPE_CPU_DMA_LATENCY")
                .map(PathBuf::from)
                .unwrap_or(d.dma_path),
            break_ns: self.break_ns,
            tracemark: self.tracemark,
            main_affinity: self.main_affinity.clone(),
            late_above_ns: None,
        }
    }

    /// The cyclictest histogram asked for (`-h`, `-H`, `--histfile`).
    fn histogram(&self) -> Option<HistOutput> {
        let (rows, all_column) = match (self.histogram, self.histofall, &self.histfile) {
            (Some(n), _, _) => (n, false),
            (_, Some(n), _) => (n, true),
            (None, None, Some(_)) => (DEFAULT_HIST_ROWS, false),
            _ => return None,
        };
        let path = self.histfile.clone().unwrap_or_else(|| PathBuf::from("-"));
        Some(HistOutput {
            rows,
            all_column,
            path,
        })
    }

    /// Tags as a map, refusing a key given twice.
    fn tag_map(&self) -> Result<crate::record::Tags, SessionError> {
        parse::tag_map(&self.tags).map_err(|e| SessionError::Usage(e.to_string()))
    }

    /// The pairs `measure`'s flags refuse together (clap refuses them on
    /// the command line; a file meets them here, with the same words).
    fn check_conflicts(&self) -> Result<(), SessionError> {
        let pairs = [
            (
                self.histogram.is_some(),
                self.histofall.is_some(),
                "--histogram <N>",
                "--histofall <N>",
            ),
            (
                self.latency_us.is_some(),
                self.no_dma_latency,
                "--latency <US>",
                "--no-dma-latency",
            ),
            (
                self.checkpoint_ns.is_some(),
                self.no_save,
                "--checkpoint <DUR>",
                "--no-save",
            ),
            (
                self.load.load.is_some(),
                self.load.load_file.is_some(),
                "--load <PROFILE[:K=V]...>",
                "--load-file <FILE>",
            ),
        ];
        if let Some((_, _, a, b)) = pairs.iter().find(|(x, y, _, _)| *x && *y) {
            return Err(SessionError::Usage(format!(
                "the argument '{a}' cannot be used with '{b}'"
            )));
        }
        if self.explain_events.is_some() && self.explain_ns.is_none() {
            return Err(SessionError::Usage(
                "--explain-events needs --explain (the trace events it records are for explaining)"
                    .into(),
            ));
        }
        Ok(())
    }
}

// ------------------------------------------------------------ parsing text

/// Why a value written for an option (a flag's, or a file's) is refused.
/// The messages are the ones clap shows after "invalid value".
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ValueError {
    #[error("unknown policy '{0}': use other, batch, idle, fifo, rr or deadline")]
    Policy(String),
    #[error("unknown timer '{0}': use abs, rel, nanosleep, itimer, posix or timerfd")]
    Timer(String),
    #[error("unknown clock '{0}': use monotonic (0) or realtime (1)")]
    Clock(String),
    #[error("unknown event set '{0}': use lean or full")]
    EventSet(String),
    /// `--deadline 0`.
    #[error(
        "deadline '{0}' is 0: a wake-up is never on time to the nanosecond; give the time a wake-up may take, e.g. 500us or 1ms (bare number: us)"
    )]
    ZeroDeadline(String),
    /// `--deadline` that is not a time.
    #[error("{0}; --deadline takes a time such as 500us or 1ms (bare number: us)")]
    Deadline(ParseError),
    #[error("'{0}' is not a host name: give 1 to 255 printable characters")]
    HostName(String),
    /// A label or a tag's value the run could not be read back with
    /// (`record::TEXT_MAX_BYTES`, no control character).
    #[error(
        "{what} {shown} is not a text a run keeps: give at most {} bytes of printable characters",
        crate::record::TEXT_MAX_BYTES
    )]
    Text { what: &'static str, shown: String },
    #[error("tag '{0}' is not KEY=VALUE")]
    TagNotPair(String),
    #[error("tag key '{0}' must be letters, digits, '_', '-' or '.'")]
    TagKey(String),
    #[error("--tag {0} is given twice: give each key once")]
    TagTwice(String),
    /// A count (threads, priority, ...) that is not a number of its type.
    #[error("'{0}' is not a whole number in range")]
    Number(String),
}

/// The words people write for values, parsed the same way for flags and
/// files (`src/cli/` uses these as clap's value parsers).
pub mod parse {
    use super::*;

    pub fn policy(s: &str) -> Result<Policy, ValueError> {
        Policy::parse(s).ok_or_else(|| ValueError::Policy(s.to_string()))
    }

    pub fn timer(s: &str) -> Result<TimerMethod, ValueError> {
        TimerMethod::parse(s).ok_or_else(|| ValueError::Timer(s.to_string()))
    }

    pub fn clock(s: &str) -> Result<Clock, ValueError> {
        match s {
            "0" | "monotonic" => Ok(Clock::Monotonic),
            "1" | "realtime" => Ok(Clock::Realtime),
            _ => Err(ValueError::Clock(s.to_string())),
        }
    }

    /// `--explain-events`: lean or full.
    pub fn events(s: &str) -> Result<EventSet, ValueError> {
        match s {
            "lean" => Ok(EventSet::Lean),
            "full" => Ok(EventSet::Full),
            _ => Err(ValueError::EventSet(s.to_string())),
        }
    }

    /// A time whose bare number is in microseconds (`-i`, `-b`).
    pub fn micros(s: &str) -> Result<u64, ParseError> {
        parse_micros_ns(s)
    }

    /// `--deadline`: a time whose bare number is in microseconds, above 0.
    pub fn deadline(s: &str) -> Result<u64, ValueError> {
        match parse_micros_ns(s) {
            Ok(0) => Err(ValueError::ZeroDeadline(s.to_string())),
            Ok(ns) => Ok(ns),
            Err(e) => Err(ValueError::Deadline(e)),
        }
    }

    /// A time whose bare number is in seconds (`-D`, `--window`).
    pub fn seconds(s: &str) -> Result<u64, ParseError> {
        parse_duration_ns(s)
    }

    pub fn cpus(s: &str) -> Result<Vec<usize>, ParseError> {
        parse_cpu_list(s)
    }

    /// `--host` (of `measure`, `import`, `monitor`, `characterize`): a
    /// text a record keeps (`record::is_kept_text`), not empty, at most
    /// 255 bytes.
    pub fn host(s: &str) -> Result<String, ValueError> {
        let t = s.trim();
        if t.is_empty() || t.len() > 255 || !crate::record::is_kept_text(t) {
            return Err(ValueError::HostName(s.to_string()));
        }
        Ok(t.to_string())
    }

    /// `--label`: what a record keeps (at most `record::TEXT_MAX_BYTES`,
    /// no control character), refused before anything is measured.
    pub fn label(s: &str) -> Result<String, ValueError> {
        text("label", s)
    }

    fn text(what: &'static str, s: &str) -> Result<String, ValueError> {
        if !crate::record::is_kept_text(s) {
            let head: String = s.chars().take(40).collect();
            let shown = if s.chars().count() > 40 {
                format!("{head:?}… ({} bytes)", s.len())
            } else {
                format!("{head:?}")
            };
            return Err(ValueError::Text { what, shown });
        }
        Ok(s.to_string())
    }

    /// `--tag KEY=VALUE`.
    pub fn tag(s: &str) -> Result<(String, String), ValueError> {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| ValueError::TagNotPair(s.to_string()))?;
        let k = k.trim();
        if k.is_empty()
            || !k
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return Err(ValueError::TagKey(k.to_string()));
        }
        Ok((k.to_string(), text("tag value", v.trim())?))
    }

    /// `--tag` pairs as a map, refusing a key given twice.
    pub fn tag_map(tags: &[(String, String)]) -> Result<crate::record::Tags, ValueError> {
        let mut m = BTreeMap::new();
        for (k, v) in tags {
            if m.insert(k.clone(), v.clone()).is_some() {
                return Err(ValueError::TagTwice(k.clone()));
            }
        }
        Ok(m)
    }

    /// A store location: a file or a `postgresql://` URL.
    pub fn store(s: &str) -> Result<PathBuf, StoreError> {
        crate::store::check_location(s)
    }
}

// ------------------------------------------------------------ reading values

/// One value as a file writes it: a boolean, or the text of a value
/// (numbers as the command line would spell them).
enum Word {
    Flag(bool),
    Text(String),
}

struct WordVisitor;

impl Visitor<'_> for WordVisitor {
    type Value = Word;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string, a number or a boolean")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Word, E> {
        Ok(Word::Flag(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Word, E> {
        Ok(Word::Text(v.to_string()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Word, E> {
        Ok(Word::Text(v.to_string()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Word, E> {
        Ok(Word::Text(v.to_string()))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Word, E> {
        Ok(Word::Text(v.to_string()))
    }
}

/// An option's value: `false` leaves it out, `true` is `on_true` (the
/// option without a value) or refused, text goes through `parse`.
fn value<'de, D, T, E>(
    d: D,
    on_true: Option<Option<T>>,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    E: fmt::Display,
{
    match d.deserialize_any(WordVisitor)? {
        Word::Flag(false) => Ok(None),
        Word::Flag(true) => on_true
            .ok_or_else(|| de::Error::custom("this option takes a value (false leaves it out)")),
        Word::Text(s) => parse(&s).map(Some).map_err(de::Error::custom),
    }
}

fn de_micros<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    value(d, None, parse::micros)
}

fn de_deadline<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    value(d, None, parse::deadline)
}

fn de_seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    value(d, None, parse::seconds)
}

fn de_explain<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    value(d, Some(Some(DEFAULT_EXPLAIN_NS)), parse::micros)
}

fn de_cpus<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<usize>>, D::Error> {
    value(d, None, parse::cpus)
}

/// `-a` without a list: every CPU, as without `-a`.
fn de_all_cpus<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<usize>>, D::Error> {
    value(d, Some(None), parse::cpus)
}

/// `-t` without N: one thread per CPU, as without `-t`.
fn de_threads<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    value(d, Some(None), number)
}

fn de_number<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: std::str::FromStr,
{
    value(d, None, number)
}

fn number<T: std::str::FromStr>(s: &str) -> Result<T, ValueError> {
    s.trim()
        .parse()
        .map_err(|_| ValueError::Number(s.to_string()))
}

fn de_policy<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Policy>, D::Error> {
    value(d, None, parse::policy)
}

fn de_timer<'de, D: Deserializer<'de>>(d: D) -> Result<Option<TimerMethod>, D::Error> {
    value(d, None, parse::timer)
}

fn de_clock<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Clock>, D::Error> {
    value(d, None, parse::clock)
}

fn de_events<'de, D: Deserializer<'de>>(d: D) -> Result<Option<EventSet>, D::Error> {
    value(d, None, parse::events)
}

fn de_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    value(d, None, |s| Ok::<_, ValueError>(s.to_string()))
}

fn de_label<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    value(d, None, parse::label)
}

fn de_host<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    value(d, None, parse::host)
}

fn de_path<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
    value(d, None, |s| Ok::<_, ValueError>(PathBuf::from(s)))
}

fn de_store<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
    value(d, None, parse::store)
}

/// `tag = "k=v"` or `tag = ["a=1", "b=2"]` (`false`: none).
fn de_tags<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    struct Tags;
    impl<'de> Visitor<'de> for Tags {
        type Value = Vec<(String, String)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("KEY=VALUE, or a list of them")
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            match v {
                false => Ok(Vec::new()),
                true => Err(E::custom("this option takes a value (false leaves it out)")),
            }
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            parse::tag(v).map(|t| vec![t]).map_err(E::custom)
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(s) = seq.next_element::<String>()? {
                out.push(parse::tag(&s).map_err(de::Error::custom)?);
            }
            Ok(out)
        }
    }
    d.deserialize_any(Tags)
}

// ------------------------------------------------------------ writing values

fn is_false(b: &bool) -> bool {
    !*b
}

/// A time in the largest unit that keeps it exact (`1ms`, `1500ns`): read
/// back the same whatever a bare number would mean.
pub fn time_word(ns: u64) -> String {
    for (unit, per) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns.is_multiple_of(per) {
            return format!("{}{unit}", ns / per);
        }
    }
    format!("{ns}ns")
}

fn ser_time<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(ns) => s.serialize_str(&time_word(*ns)),
        None => s.serialize_none(),
    }
}

fn ser_cpus<S: Serializer>(v: &Option<Vec<usize>>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(c) => s.serialize_str(&format_cpu_list(c)),
        None => s.serialize_none(),
    }
}

/// A path as text (one that is not UTF-8 is written lossily: TOML and
/// command lines shown to people hold text).
fn ser_path<S: Serializer>(v: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(p) => s.serialize_str(&p.to_string_lossy()),
        None => s.serialize_none(),
    }
}

fn ser_events<S: Serializer>(v: &Option<EventSet>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(EventSet::Lean) => s.serialize_str("lean"),
        Some(EventSet::Full) => s.serialize_str("full"),
        None => s.serialize_none(),
    }
}

fn ser_tags<S: Serializer>(v: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|(k, v)| format!("{k}={v}")))
}

#[cfg(test)]
mod tests;
