//! Everything a study file can be refused for, found before anything
//! runs: every option and value as `measure` would take it (read into
//! `measure::Settings`), then every cell as a whole (`itimer` with
//! several threads, a load that does not exist, CPUs this machine lacks),
//! each mistake named by file, line and key. Touches nothing on the
//! system. Also the measurement one cell asks for ([`cell_request`]).

use super::boots::ArgError;
use super::matrix::{self, Cell};
use super::spec::{CMDLINE_KEY, KERNEL_KEY, Spec, SpecError, Value, is_boot_key};
use crate::measure::settings::SettingsError;
use crate::measure::{Request, Session, SessionError, Settings};
use std::path::Path;
use thiserror::Error;

/// Why a study cannot set an option or a value, or measure a cell.
#[derive(Debug, Error)]
pub enum CheckError {
    /// An option the study sets itself, or that makes no sense for one
    /// of its runs (why).
    #[error("not an option of a study's runs: {0}")]
    NotInAStudy(&'static str),
    #[error(
        "unknown option: keys are measure's long options (`rtscope measure --help`), e.g. policy, timer, interval, priority, threads, load, isolate"
    )]
    UnknownOption,
    /// A value `measure` does not take.
    #[error(transparent)]
    Value(#[from] SettingsError),
    /// The kernel or the command line written other than as a string.
    #[error("{key} is written as a string (e.g. {key} = \"{example}\")")]
    NotText { key: String, example: &'static str },
    #[error(transparent)]
    Cmdline(#[from] ArgError),
    /// A kernel requirement that names no model or release.
    #[error(transparent)]
    Kernel(#[from] crate::sysinfo::kernel_match::EmptyRequirement),
    /// A cell `measure` refuses as a whole.
    #[error(transparent)]
    Cell(#[from] SessionError),
}

/// Options a study sets itself, or that make no sense for one run of it.
const NOT_IN_A_STUDY: &[(&str, &str)] = &[
    (
        "duration",
        "the study's duration (at the top of the file) sets every run's",
    ),
    ("loops", "the study's duration sets how long each run lasts"),
    ("label", "the study names its runs after their cell"),
    (
        "json",
        "every run is in the store: `rtscope runs`, `rtscope report`",
    ),
    (
        "histogram",
        "every run is in the store: `rtscope plot` draws it",
    ),
    (
        "histofall",
        "every run is in the store: `rtscope plot` draws it",
    ),
    ("histfile", "every run is in the store"),
    ("no-save", "a study keeps its runs in the store"),
    (
        "db",
        "give --db to `rtscope study`: the study and its runs share one store",
    ),
    ("quiet", "give -q to `rtscope study`"),
    ("live", "the study shows its own progress"),
    ("help", "not an option of a run"),
    (
        "metrics",
        "give --metrics to `rtscope study`: one endpoint serves every run",
    ),
    ("metrics-auth", "give it to `rtscope study`, with --metrics"),
    (
        "metrics-linger",
        "give it to `rtscope study`, with --metrics",
    ),
    (
        "nanosleep",
        "cyclictest's -n: clock_nanosleep is the default (timer = \"abs\")",
    ),
    ("relative", "cyclictest's -r: write timer = \"rel\""),
    (
        "system",
        "cyclictest's -s: write timer = \"nanosleep\" or \"itimer\"",
    ),
    ("posix-timers", "cyclictest's -x: write timer = \"posix\""),
    (
        "mlockall",
        "cyclictest's -m: memory is locked unless no-mlock = true",
    ),
];

/// Check that `key` is an option a study may set.
pub fn check_key(key: &str) -> Result<(), CheckError> {
    if let Some((_, why)) = NOT_IN_A_STUDY.iter().find(|(k, _)| *k == key) {
        return Err(CheckError::NotInAStudy(why));
    }
    if !Settings::has_key(key) {
        return Err(CheckError::UnknownOption);
    }
    Ok(())
}

/// Check one option and its value (a `[fixed]` entry or one matrix value)
/// alone: an error if `measure` would refuse it, or if a study cannot
/// set it (outputs, the duration).
pub fn check_value(key: &str, value: &Value) -> Result<(), CheckError> {
    check_key(key)?;
    let table = toml::Table::from_iter([(key.to_string(), value.to_toml())]);
    Settings::from_table(table)?;
    Ok(())
}

/// The measurement one cell asks for: its settings, run for the study's
/// duration, named `label`, with `tags` added, saved in `store` (`None`:
/// the default store); refused as `measure` would refuse it.
pub fn cell_request(
    spec: &Spec,
    cell: &Cell,
    label: String,
    tags: &[(String, String)],
    store: Option<&Path>,
) -> Result<Request, CheckError> {
    let mut settings = Settings::from_table(cell.table(&spec.fixed))?;
    settings.duration_ns = Some(spec.duration_ns);
    settings.tags.extend_from_slice(tags);
    settings.db = store.map(Path::to_path_buf);
    // The command line recorded is what a user would type to measure this
    // cell alone.
    let mut request = settings.request()?;
    request.label = Some(label);
    Session::check(&request)?;
    Ok(request)
}

/// The line and key to blame for a whole cell's refusal: the first of the
/// cell's options that the message names (`--timer ...`), the matrix's
/// first, else the top of the file.
fn blame(spec: &Spec, cell: &Cell, message: &str) -> (usize, Option<String>) {
    let named = |k: &str| {
        message.contains(&format!("--{k} "))
            || message.contains(&format!("--{k}:"))
            || message.contains(&format!("--{k},"))
            || message.ends_with(&format!("--{k}"))
    };
    let keys = cell
        .choice
        .iter()
        .map(|(k, _)| k.as_str())
        .chain(spec.fixed.iter().map(|s| s.key.as_str()));
    for k in keys {
        if named(k)
            && let Some(line) = spec.line_of(k)
        {
            return (line, Some(k.to_string()));
        }
    }
    match spec.matrix.first() {
        Some(d) => (d.line, Some(d.key.clone())),
        None => (1, None),
    }
}

/// Where a key is shown in messages: `matrix.policy`, `fixed.load`.
fn shown(spec: &Spec, key: &str) -> String {
    if is_boot_key(key) && spec.fixed.iter().all(|s| s.key != key) {
        return key.to_string();
    }
    if spec.matrix.iter().any(|d| d.key == key) {
        format!("matrix.{key}")
    } else {
        format!("fixed.{key}")
    }
}

/// Check one value of the kernel or the command line.
fn check_boot(key: &str, value: &Value) -> Result<(), CheckError> {
    let Value::Text(text) = value else {
        return Err(CheckError::NotText {
            key: key.to_string(),
            example: if key == KERNEL_KEY {
                "rt"
            } else {
                "isolcpus=1 nohz_full=1"
            },
        });
    };
    if key == CMDLINE_KEY {
        super::boots::parse_args(text)?;
        return Ok(());
    }
    Ok(crate::sysinfo::kernel_match::check(text)?)
}

/// Check `spec` (read from `file`) against what `measure` accepts.
pub fn check(spec: &Spec, file: &str) -> Result<(), SpecError> {
    let err = |line: usize, key: &str, e: CheckError| SpecError {
        file: file.to_string(),
        line,
        key: Some(shown(spec, key)),
        message: crate::text::chain(&e),
    };
    for s in &spec.fixed {
        if is_boot_key(&s.key) {
            check_boot(&s.key, &s.value).map_err(|m| err(s.line, &s.key, m))?;
            continue;
        }
        check_value(&s.key, &s.value).map_err(|m| err(s.line, &s.key, m))?;
    }
    for d in &spec.matrix {
        if !is_boot_key(&d.key) {
            check_key(&d.key).map_err(|m| err(d.line, &d.key, m))?;
        }
        for v in &d.values {
            if is_boot_key(&d.key) {
                check_boot(&d.key, v).map_err(|m| err(d.line, &d.key, m))?;
                continue;
            }
            check_value(&d.key, v).map_err(|m| {
                let mut e = err(d.line, &d.key, m);
                e.message = format!("value '{v}': {}", e.message);
                e
            })?;
        }
    }
    for cell in matrix::cells(spec) {
        if let Err(e) = cell_request(spec, &cell, cell.label(), &[], None) {
            let m = crate::text::chain(&e);
            let (line, key) = blame(spec, &cell, &m);
            return Err(SpecError {
                file: file.to_string(),
                line,
                key: key.map(|k| shown(spec, &k)),
                message: format!("cell '{}': {m}", cell.label()),
            });
        }
    }
    Ok(())
}
