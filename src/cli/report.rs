//! `rtscope report`: one self-contained HTML report of one or more runs.

use super::Exit;
use crate::report::html;
use crate::ui::interrupt::WaitSignals;
use crate::{output, runref};
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

/// Write a self-contained HTML report of one or more runs.
///
/// Per run: the verdict (which class of real time the worst case
/// supports, with its evidence and limits), a summary table per CPU, the
/// latency histogram (log-log), the exceedance curve, max and p99 over
/// time with load phases as strips above, the largest wake-ups, set-up and system
/// fingerprint. With several runs, a comparison first: a side by side
/// table, overlaid curves, and a warning for every pair that differs in
/// what no label or tag names.
///
/// The file is self-contained (inline CSS and SVG, no script, no network):
/// it opens from a USB stick and prints on A4. Latencies are in
/// microseconds (µs) unless a unit is shown.
///
/// Exit status: 0 written, 2 a run could not be loaded or the file could
/// not be written.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Runs to report on: run record files (`rtscope measure --json`), or
    /// ids of stored runs.
    #[arg(value_name = "RUN", required_unless_present_any = ["tags", "host"])]
    pub runs: Vec<String>,

    /// Add every stored run with tag KEY=VALUE (or tag KEY at any value),
    /// oldest first: `--tag study=seed-000` reports a study's runs, from
    /// every board it ran on, side by side. Repeat to ask for all.
    #[arg(long = "tag", value_name = "KEY[=VALUE]")]
    pub tags: Vec<String>,

    /// Add every stored run measured on host NAME (a board's name for
    /// runs made with --on); with --tag, the runs that match both.
    #[arg(long = "host", value_name = "NAME")]
    pub host: Option<String>,

    /// Write the report to this file (HTML); - for standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,

    /// Title at the top of the report. Default: from the runs' labels or
    /// file names.
    #[arg(long = "title", value_name = "TEXT")]
    pub title: Option<String>,

    /// Judge the runs against this deadline instead of the one they
    /// recorded (bare number: us; 250us, 2ms). The stored runs are left
    /// as they are. Default: each run's own (its --deadline, else its
    /// period).
    #[arg(long = "deadline", value_name = "DUR", value_parser = crate::measure::settings::parse::deadline)]
    pub deadline_ns: Option<u64>,
}

pub fn run(args: &ReportArgs, db: Option<&std::path::Path>) -> Result<Exit> {
    output::check_writable(&args.output, "report file")?;
    // Ctrl-C while a PostgreSQL server keeps the store from opening, or
    // while a FIFO given as the file has no reader.
    let signals = WaitSignals::install().context("installing signal handlers")?;
    let refs = signals.during(|stop| references(args, db, stop))?;
    let args = &ReportArgs {
        runs: refs,
        ..args.clone()
    };
    let write = |page: &str| {
        signals.during(|stop| output::write_atomic_or_stop(&args.output, page.as_bytes(), stop))
    };
    if let Some(cs) = signals.during(|stop| runref::load_characterizations(db, &args.runs, stop))? {
        if args.deadline_ns.is_some() {
            anyhow::bail!(
                "--deadline judges latency runs; a characterization has no deadline to judge"
            );
        }
        let refs: Vec<_> = cs.iter().collect();
        let page = crate::characterize::html::render(&refs, &args.runs, args.title.as_deref())
            .context("making the report")?;
        write(&page)?;
        if args.output.as_os_str() != "-" {
            outln!("report: {}", args.output.display());
        }
        return Ok(Exit::Ok);
    }
    let mut runs = signals.during(|stop| runref::load_named(db, &args.runs, stop))?;
    if let Some(d) = args.deadline_ns {
        for r in &mut runs {
            r.record.limits.deadline_ns = Some(d);
        }
    }
    let long_term = signals.during(|stop| monitor_views(db, &runs, stop))?;
    let page = html::render_with(&runs, args.title.as_deref(), &long_term)
        .map_err(anyhow::Error::msg)
        .context("making the report")?;
    write(&page)?;
    if args.output.as_os_str() != "-" {
        outln!("report: {}", args.output.display());
    }
    Ok(Exit::Ok)
}

/// The runs named, then the stored latency runs `--tag` and `--host`
/// select (oldest first); none selected is an error.
fn references(
    args: &ReportArgs,
    db: Option<&std::path::Path>,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Vec<String>> {
    let mut refs = args.runs.clone();
    if args.tags.is_empty() && args.host.is_none() {
        return Ok(refs);
    }
    let filter = crate::store::RunFilter {
        tags: super::runs::tag_filters(&args.tags)?,
        host: args.host.clone(),
        ..Default::default()
    };
    let path = crate::store::locate(db)?;
    let store = crate::store::Store::open_existing_or_stop(&path, stop)?;
    let mut found = 0;
    for row in store
        .as_ref()
        .map(|s| s.list_filtered(&filter))
        .transpose()?
        .unwrap_or_default()
    {
        let s = store.as_ref().context("the store")?;
        if !s.is_characterization(row.id)? && !refs.contains(&row.id.to_string()) {
            refs.push(row.id.to_string());
            found += 1;
        }
    }
    if found == 0 {
        anyhow::bail!(
            "no stored run in {} has {}: `rtscope runs --tag KEY=VALUE --host NAME` lists what is there",
            path.display(),
            [
                args.tags
                    .iter()
                    .map(|t| format!("tag {t}"))
                    .collect::<Vec<_>>(),
                args.host.iter().map(|h| format!("host {h}")).collect(),
            ]
            .concat()
            .join(" and ")
        );
    }
    Ok(refs)
}

/// For each run made by `rtscope monitor`, the monitor's long-term view
/// (every host of that monitor in the store). Runs from files, or a store
/// that cannot be read, simply have none; a signal while waiting for the
/// store's server ends the report.
fn monitor_views(
    db: Option<&std::path::Path>,
    runs: &[crate::report::NamedRun],
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Vec<(usize, crate::report::plot::Figure, String)>, crate::store::StoreError> {
    let store = match crate::store::locate(db)
        .and_then(|p| crate::store::Store::open_existing_or_stop(&p, stop))
    {
        Ok(Some(store)) => store,
        Err(e) if e.is_interrupted() => return Err(e),
        Ok(None) | Err(_) => return Ok(Vec::new()),
    };
    Ok(crate::report::stored::monitor_views(&store, runs))
}
