//! `rtscope runs`: list the stored runs, show one, remove some, export one
//! as a run record (JSON), a cyclictest histogram, or CSV. Read commands
//! never create a store; removing is one transaction.

use super::Exit;
use crate::kinds::SourceKind;
use crate::record::Quantity;
use crate::report::{csv, histfile, runs_text};
use crate::store::{self, Store};
use crate::text::rank::Rows;
use crate::ui::interrupt::WaitSignals;
use crate::{output, runref};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

/// List, show, remove and export the runs in the store.
///
/// Runs are named by their id (first column of the list), by `last`, or by
/// the first digits of their uuid. The store is chosen with --db or
/// RTSCOPE_DB (default: $XDG_DATA_HOME/rtscope/rtscope.db; else, for
/// root, /var/lib/rtscope/rtscope.db when it exists or HOME is unset;
/// else ~/.local/share/rtscope/rtscope.db).
#[derive(Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunsArgs {
    /// List only the runs measured on host NAME (the fingerprint's host
    /// name, or what `measure --host` or `import --host` recorded);
    /// `unknown`: the runs whose host is unknown.
    #[arg(long = "host", value_name = "NAME")]
    pub host: Option<String>,
    /// List only the runs whose whole label matches GLOB (`*` any text,
    /// `?` one character; quote it).
    #[arg(long = "label", value_name = "GLOB")]
    pub label: Option<String>,
    /// List only the runs with tag KEY=VALUE, or with tag KEY at any
    /// value (repeat: all of them).
    #[arg(long = "tag", value_name = "KEY[=VALUE]")]
    pub tags: Vec<String>,
    /// List only the runs whose whole kernel release matches GLOB
    /// (`6.1*-rt*`; quote it).
    #[arg(long = "kernel", value_name = "GLOB")]
    // Left out when not given: a board's older rtscope reads the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// List only the runs in STATE: running, complete or interrupted (a
    /// run read by `rtscope import` is complete; --origin imported lists
    /// those).
    #[arg(long = "state", value_name = "STATE", value_parser = state)]
    pub state: Option<store::RunState>,
    /// List only the runs of ORIGIN: measured, imported or
    /// characterization (the list's origin column).
    #[arg(long = "origin", value_name = "ORIGIN", value_parser = origin)]
    // Left out when not given: a board's older rtscope reads the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<store::Origin>,
    /// List only the runs started at or after DATE: 2026-11-20,
    /// "2026-11-20 14:30" (UTC, as listed), or a time ago (36h, 7d).
    #[arg(long = "since", value_name = "DATE", value_parser = since)]
    pub since_unix_ns: Option<u64>,
    /// List only the runs started before DATE (a day alone: to its end).
    #[arg(long = "until", value_name = "DATE", value_parser = until)]
    pub until_unix_ns: Option<u64>,
    #[command(subcommand)]
    pub action: Option<RunsAction>,
}

#[derive(Subcommand, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub enum RunsAction {
    /// List the stored runs in the order they were stored (by id; the
    /// default). Latencies in µs.
    List,
    /// Everything about one run: how it was measured, on what system, and
    /// its summary table.
    Show {
        /// Run id, `last`, or the start of its uuid.
        run: String,
        /// A row for every thread in the summary table (by default,
        /// above 16 threads, the 8 worst and one line for the others).
        #[arg(long = "all")]
        all: bool,
    },
    /// Give a run a new label ("" removes it).
    Relabel {
        /// Run id, `last`, or the start of its uuid.
        run: String,
        /// The new label.
        #[arg(value_name = "NEW_LABEL")]
        label: String,
    },
    /// Remove runs from the store (all of them, or none if one is unknown).
    Rm {
        /// Run ids, `last`, or uuid prefixes.
        #[arg(required = true)]
        runs: Vec<String>,
    },
    /// Write a run as a run record (--json), a cyclictest histogram
    /// (--histfile) or CSV (--csv); several at once are fine.
    Export(ExportArgs),
}

#[derive(Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportArgs {
    /// Run id, `last`, the start of its uuid, or a run record file.
    pub run: String,
    /// Write the run record (JSON, schema: rtscope schema) to FILE
    /// (default, or -: standard output).
    #[arg(long = "json", value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// Write cyclictest's histogram format (1 us rows) to FILE (default,
    /// or -: standard output).
    #[arg(long = "histfile", value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub histfile: Option<PathBuf>,
    /// Rows of --histfile (1 us each); later values count as overflows.
    #[arg(long = "rows", value_name = "N", default_value_t = 1000)]
    pub rows: usize,
    /// Add the all-threads column to --histfile (cyclictest -H).
    #[arg(long = "all-column")]
    pub all_column: bool,
    /// Write CSV to FILE (default, or -: standard output).
    #[arg(long = "csv", value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub csv: Option<PathBuf>,
    /// Which table --csv writes: summary (one row per thread), histogram
    /// (one row per bucket, ns) or windows (one row per window, ns).
    #[arg(long = "table", value_name = "TABLE", default_value = "summary", value_parser = table)]
    pub table: csv::Table,
}

fn table(s: &str) -> Result<csv::Table, String> {
    csv::Table::parse(s)
        .ok_or_else(|| format!("unknown table '{s}': use summary, histogram or windows"))
}

fn state(s: &str) -> Result<store::RunState, String> {
    store::RunState::parse_named(s)
}

fn origin(s: &str) -> Result<store::Origin, String> {
    store::Origin::parse_named(s)
}

fn since(s: &str) -> Result<u64, String> {
    crate::units::parse_date_ns(s, crate::sys::clock::unix_now_ns(), false)
}

fn until(s: &str) -> Result<u64, String> {
    crate::units::parse_date_ns(s, crate::sys::clock::unix_now_ns(), true)
}

pub fn run(args: &RunsArgs, db: Option<&Path>) -> Result<Exit> {
    // Ctrl-C while a PostgreSQL server keeps the store from opening.
    let signals = WaitSignals::install().context("installing signal handlers")?;
    let s = &signals;
    match args.action.clone().unwrap_or(RunsAction::List) {
        RunsAction::List => list(args, db, s),
        RunsAction::Relabel { run, label } => relabel(db, &run, &label, s),
        RunsAction::Show { run, all } => show(db, &run, Rows::from_all(all), s),
        RunsAction::Rm { runs } => remove(db, &runs, s),
        RunsAction::Export(e) => export(db, &e, s),
    }
}

/// `--tag KEY[=VALUE]` filters: a key with that value, or any value.
pub(super) fn tag_filters(given: &[String]) -> Result<Vec<(String, Option<String>)>> {
    Ok(store::RunFilter::parse_tags(given)?)
}

fn filter_of(args: &RunsArgs) -> Result<store::RunFilter> {
    Ok(store::RunFilter {
        label: args.label.clone(),
        tags: tag_filters(&args.tags)?,
        state: args.state,
        origin: args.origin,
        host: args.host.clone(),
        kernel: args.kernel.clone(),
        since_unix_ns: args.since_unix_ns,
        until_unix_ns: args.until_unix_ns,
    })
}

fn list(args: &RunsArgs, db: Option<&Path>, signals: &WaitSignals) -> Result<Exit> {
    let filter = filter_of(args)?;
    let db = store::locate(db)?;
    let store = signals.during(|stop| Store::open_existing_or_stop(&db, stop))?;
    let rows = match &store {
        Some(s) => s.list_filtered(&filter)?,
        None => Vec::new(),
    };
    if rows.is_empty() && filter != store::RunFilter::default() {
        match &args.host {
            Some(h)
                if filter.tags.is_empty()
                    && filter.label.is_none()
                    && filter.state.is_none()
                    && filter.origin.is_none()
                    && filter.kernel.is_none() =>
            {
                outln!("no runs of host '{h}' stored in {}", db.display())
            }
            _ => outln!("no stored run matches in {}", db.display()),
        }
        return Ok(Exit::Ok);
    }
    if rows.is_empty() {
        outln!(
            "no runs stored in {} yet (rtscope measure saves every run; rtscope import reads other tools' results)",
            db.display()
        );
        return Ok(Exit::Ok);
    }
    let s = store.context("the store vanished while being listed")?;
    let listed = rows
        .into_iter()
        .map(|r| {
            let q = quantity(&s, &r)?;
            Ok((r, q))
        })
        .collect::<Result<Vec<_>>>()?;
    out!("{}", runs_text::render_list(&listed));
    Ok(Exit::Ok)
}

/// What a listed run's figures measure: a wake-up latency for rtscope's
/// own runs; an import says in its record (oslat, osnoise); `None` for a
/// characterization, which is no latency run. Only imports are read.
fn quantity(s: &Store, r: &store::RunRow) -> Result<Option<Quantity>> {
    if r.source_kind.as_str() == store::characterizations::SOURCE_KIND {
        return Ok(None);
    }
    if !r.source_kind.is(SourceKind::Imported) {
        return Ok(Some(Quantity::WakeupLatency));
    }
    let rec = s
        .load(r.id)
        .with_context(|| format!("reading run {} to say what it measures", r.id))?;
    Ok(Some(Quantity::of(&rec)))
}

fn relabel(db: Option<&Path>, reference: &str, label: &str, signals: &WaitSignals) -> Result<Exit> {
    let mut s = signals.during(|stop| runref::open_store(db, reference, stop))?;
    let id = s.resolve(reference)?;
    let label = label.trim();
    s.relabel(id, (!label.is_empty()).then_some(label))?;
    if label.is_empty() {
        outln!("run {id} has no label now");
    } else {
        outln!("run {id} is labelled '{label}' now");
    }
    Ok(Exit::Ok)
}

fn show(db: Option<&Path>, reference: &str, rows: Rows, signals: &WaitSignals) -> Result<Exit> {
    let s = signals.during(|stop| runref::open_store(db, reference, stop))?;
    let id = s.resolve(reference)?;
    if s.is_characterization(id)? {
        let c = s.load_characterization(id)?;
        let row = s.row(id)?.context("the run vanished while being read")?;
        outln!("run {id} ({}), uuid {}", row.state.name(), row.uuid);
        out!("{}", crate::characterize::text::render(&c));
        return Ok(Exit::Ok);
    }
    let rec = s.load(id)?;
    let row = s.row(id)?.context("the run vanished while being read")?;
    out!("{}", runs_text::render_show(id, &row, &rec, rows));
    Ok(Exit::Ok)
}

fn remove(db: Option<&Path>, refs: &[String], signals: &WaitSignals) -> Result<Exit> {
    let mut s = signals.during(|stop| runref::open_store(db, &refs.join(" "), stop))?;
    let mut ids = Vec::with_capacity(refs.len());
    for r in refs {
        ids.push(s.resolve(r)?);
    }
    ids.sort_unstable();
    ids.dedup();
    s.remove(&ids)?;
    let list: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
    outln!(
        "removed run{} {} from {}",
        if ids.len() > 1 { "s" } else { "" },
        list.join(", "),
        s.path().display()
    );
    Ok(Exit::Ok)
}

fn export(db: Option<&Path>, a: &ExportArgs, signals: &WaitSignals) -> Result<Exit> {
    if a.json.is_none() && a.histfile.is_none() && a.csv.is_none() {
        bail!(
            "runs export: choose what to write: --json, --histfile or --csv (each takes a file, - or nothing for standard output)"
        );
    }
    if a.rows == 0 || a.rows > 10_000_000 {
        bail!("--rows must be between 1 and 10000000 (got {})", a.rows);
    }
    let outs = [
        (&a.json, "--json"),
        (&a.histfile, "--histfile"),
        (&a.csv, "--csv"),
    ];
    let stdout_users = outs
        .iter()
        .filter(|(p, _)| p.as_deref().is_some_and(|p| p.as_os_str() == "-"))
        .count();
    if stdout_users > 1 {
        bail!("runs export: only one output can go to standard output; give the others a file");
    }
    for (p, what) in outs {
        if let Some(p) = p {
            output::check_writable(p, what)?;
        }
    }
    if let Some(mut c) = signals.during(|stop| runref::load_characterization(db, &a.run, stop))? {
        c.command_line = crate::redact::command_line(&c.command_line);
        if a.histfile.is_some() || a.csv.is_some() {
            bail!(
                "'{}' is a characterization: it exports as JSON only (--json)",
                a.run
            );
        }
        if let Some(p) = &a.json {
            let mut text =
                serde_json::to_string_pretty(&c).context("serializing the characterization")?;
            text.push('\n');
            output::write_atomic(p, text.as_bytes())?;
        }
        return Ok(Exit::Ok);
    }
    let mut rec = signals.during(|stop| runref::load(db, &a.run, stop))?;
    // Runs recorded before passwords were kept out of command lines.
    rec.source.command_line = crate::redact::command_line(&rec.source.command_line);
    if let Some(p) = &a.json {
        let mut text = serde_json::to_string_pretty(&rec).context("serializing the run record")?;
        text.push('\n');
        output::write_atomic(p, text.as_bytes())?;
    }
    if let Some(p) = &a.histfile {
        let text = histfile::render(&rec, a.rows, a.all_column)?;
        output::write_atomic(p, text.as_bytes())?;
    }
    if let Some(p) = &a.csv {
        let text = csv::render(&rec, a.table)?;
        output::write_atomic(p, text.as_bytes())?;
    }
    Ok(Exit::Ok)
}
