//! `rtscope push`: copy runs from this store (--db, default the local
//! file) to another, typically a shared PostgreSQL store. Maps flags to
//! `store::push` and its outcomes to lines; idempotent by run uuid.

use super::Exit;
use crate::runref;
use crate::store::Store;
use crate::store::push::{Pushed, push_one};
use crate::ui::interrupt::WaitSignals;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

/// Copy runs to another run store, e.g. a lab's shared PostgreSQL.
///
/// Each run is copied whole (record, histograms, windows, outliers,
/// fingerprint, tags) in one transaction. Runs are matched by uuid: a run
/// the destination already has is not copied again, so pushing twice is
/// harmless; a copy that was cut short there (the server went away during
/// the run) is completed. The source is the store chosen with --db or
/// RTSCOPE_DB (default: the local file); to send runs kept in the local
/// spool while the server was down: rtscope --db ~/.local/share/rtscope/spool.db push ...
#[derive(Args, Debug, Clone)]
pub struct PushArgs {
    /// Run ids, `last`, or uuid prefixes in the source store.
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,
    /// Destination store: postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME
    /// (or an SQLite file). Created (schema and migrations) if empty.
    #[arg(long = "to", value_name = "URL", required = true, value_parser = super::store_location)]
    pub to: PathBuf,
}

pub fn run(args: &PushArgs, db: Option<&std::path::Path>) -> Result<Exit> {
    // Ctrl-C while a PostgreSQL server keeps the store from opening.
    let signals = WaitSignals::install().context("installing signal handlers")?;
    let from = signals.during(|stop| runref::open_store(db, &args.runs.join(" "), stop))?;
    let mut ids = Vec::with_capacity(args.runs.len());
    for r in &args.runs {
        ids.push(from.resolve(r)?);
    }
    ids.sort_unstable();
    ids.dedup();
    let mut to = signals.during(|stop| Store::open_or_stop(&args.to, stop))?;
    if same_store(&from, &to) {
        anyhow::bail!(
            "push: the source and the destination are the same store ({})",
            to.path().display()
        );
    }
    let dest = to.path().display().to_string();
    let (mut copied, mut there, mut running) = (0, 0, 0);
    for id in ids {
        let uuid = from.row(id)?.map(|r| r.uuid).unwrap_or_default();
        let short = &uuid[..uuid.len().min(8)];
        match push_one(&from, &mut to, id)? {
            Pushed::Copied { id: new } => {
                copied += 1;
                outln!("run {id} ({short}): copied as run {new}");
            }
            Pushed::Completed { id: new } => {
                copied += 1;
                outln!("run {id} ({short}): completed run {new}, which was cut short there");
            }
            Pushed::AlreadyThere { id: old } => {
                there += 1;
                outln!("run {id} ({short}): already there as run {old}, not copied");
            }
            Pushed::Running => {
                running += 1;
                outln!(
                    "run {id} ({short}): still being measured, not copied (push it when it has ended)"
                );
            }
        }
    }
    if copied == 0 {
        outln!(
            "nothing copied to {dest}: {there} already there{}",
            if running > 0 {
                format!(", {running} still running")
            } else {
                String::new()
            }
        );
    } else {
        outln!("copied {copied} run(s) to {dest} ({there} already there)");
    }
    Ok(Exit::Ok)
}

/// True when both stores are the same file or the same URL.
fn same_store(a: &Store, b: &Store) -> bool {
    let canon =
        |s: &Store| std::fs::canonicalize(s.path()).unwrap_or_else(|_| s.path().to_path_buf());
    canon(a) == canon(b)
}
