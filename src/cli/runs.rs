//! `rtscope runs`: list the stored runs, show one, remove some, export one
//! as a run record (JSON), a cyclictest histogram, or CSV. Read commands
//! never create a store; removing is one transaction.

use super::Exit;
use crate::report::{csv, histfile, runs_text};
use crate::store::{self, Store};
use crate::{output, runref};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// List, show, remove and export the runs in the store.
///
/// Runs are named by their id (first column of the list), by `last`, or by
/// the first digits of their uuid. The store is chosen with --db or
/// RTSCOPE_DB (default: $XDG_DATA_HOME/rtscope/rtscope.db, else
/// ~/.local/share/rtscope/rtscope.db).
#[derive(Args, Debug, Clone)]
pub struct RunsArgs {
    /// List only the runs measured on host NAME (the fingerprint's host
    /// name, or what `measure --host` recorded).
    #[arg(long = "host", value_name = "NAME")]
    pub host: Option<String>,
    #[command(subcommand)]
    pub action: Option<RunsAction>,
}

#[derive(Subcommand, Debug, Clone)]
pub enum RunsAction {
    /// List the stored runs, oldest first (the default). Latencies in us.
    List,
    /// Everything about one run: how it was measured, on what system, and
    /// its summary table.
    Show {
        /// Run id, `last`, or the start of its uuid.
        run: String,
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

#[derive(Args, Debug, Clone)]
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

pub fn run(args: &RunsArgs) -> Result<Exit> {
    match args.action.clone().unwrap_or(RunsAction::List) {
        RunsAction::List => list(args.host.as_deref()),
        RunsAction::Show { run } => show(&run),
        RunsAction::Rm { runs } => remove(&runs),
        RunsAction::Export(e) => export(&e),
    }
}

fn list(host: Option<&str>) -> Result<Exit> {
    let db = store::db_path()?;
    let rows = match (Store::open_existing(&db)?, host) {
        (Some(s), Some(h)) => s.list_host(h)?,
        (Some(s), None) => s.list()?,
        (None, _) => Vec::new(),
    };
    if rows.is_empty()
        && let Some(h) = host
    {
        outln!("no runs of host '{h}' stored in {}", db.display());
        return Ok(Exit::Ok);
    }
    if rows.is_empty() {
        outln!(
            "no runs stored in {} yet (rtscope measure saves every run; rtscope import reads other tools' results)",
            db.display()
        );
        return Ok(Exit::Ok);
    }
    out!("{}", runs_text::render_list(&rows));
    Ok(Exit::Ok)
}

fn show(reference: &str) -> Result<Exit> {
    let s = runref::open_store(reference)?;
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
    out!("{}", runs_text::render_show(id, &row, &rec));
    Ok(Exit::Ok)
}

fn remove(refs: &[String]) -> Result<Exit> {
    let mut s = runref::open_store(&refs.join(" "))?;
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

fn export(a: &ExportArgs) -> Result<Exit> {
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
    if let Some(mut c) = runref::load_characterization(&a.run)? {
        c.command_line = crate::store::postgres::redact_command_line(&c.command_line);
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
    let mut rec = runref::load(&a.run)?;
    // Runs recorded before passwords were kept out of command lines.
    rec.source.command_line = crate::store::postgres::redact_command_line(&rec.source.command_line);
    if let Some(p) = &a.json {
        let mut text = serde_json::to_string_pretty(&rec).context("serializing the run record")?;
        text.push('\n');
        output::write_atomic(p, text.as_bytes())?;
    }
    if let Some(p) = &a.histfile {
        let text = histfile::render(&rec, a.rows, a.all_column).map_err(anyhow::Error::msg)?;
        output::write_atomic(p, text.as_bytes())?;
    }
    if let Some(p) = &a.csv {
        let text = csv::render(&rec, a.table).map_err(anyhow::Error::msg)?;
        output::write_atomic(p, text.as_bytes())?;
    }
    Ok(Exit::Ok)
}
