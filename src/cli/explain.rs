//! `rtscope explain`: why was a wake-up late? Maps the flags to the
//! library and prints: the explanations a run measured with `--explain`
//! kept (`RUN`), or those of the spikes cyclictest marked in a trace
//! file (`--trace`, through `crate::explain`). Nothing else.

use super::Exit;
use crate::report::why;
use crate::runref;
use crate::ui::interrupt::WaitSignals;
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::PathBuf;

/// Explain why a wake-up was late, from kernel trace events.
///
/// RUN is a run measured with `rtscope measure --explain`: its id (see
/// `rtscope runs`), `last`, the start of its uuid, or a run record file.
/// Every explanation the run kept is printed, largest wake-up first, after
/// one line of counts (threshold, wake-ups that reached it, explained,
/// trace events read and lost). With --json, the run's explain record
/// (the same fields, and the explanations) is printed as JSON.
///
/// --trace FILE reads a trace as text: the output of `trace-cmd report`,
/// or tracefs' `trace` file. It must hold the marker cyclictest writes
/// with `-b USEC --tracemark` ("hit latency threshold (LAT > USEC)") and
/// the events of the marked thread's CPU: sched_switch, sched_waking /
/// sched_wakeup, and for a finer split timer:hrtimer_*, irq:*,
/// irq_vectors:* and workqueue:* (record with e.g. `trace-cmd record -e
/// sched -e timer -e irq -e irq_vectors -e workqueue cyclictest -b 500
/// --tracemark ...`). With --json, an array of explanations.
///
/// Each explanation gives the main cause, the latency split into named
/// parts (timer delay, interrupt handlers, softirqs, threads that ran
/// instead, unexplained) with durations and shares, and the timeline from
/// the deadline to the thread running. An explanation from a trace that
/// lost events is marked PARTIAL. See docs/explain.md.
///
/// Exit status: 0 explained (or nothing reached the threshold), 2 the run
/// was measured without --explain, or bad input.
#[derive(Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplainArgs {
    /// A run measured with --explain: id, `last`, uuid prefix, or a run
    /// record file.
    #[arg(value_name = "RUN")]
    pub run: Option<String>,

    /// A trace as text (`trace-cmd report` output or tracefs' `trace`).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// With --trace: refuse a trace larger than this, unread (K, M, G:
    /// powers of 1024).
    #[arg(long = "max-size", value_name = "SIZE", default_value = "1G", value_parser = super::size_bytes)]
    pub max_size_bytes: u64,

    /// Print JSON instead of text: the run's explain record, or for
    /// --trace an array of explanations.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &ExplainArgs, db: Option<&std::path::Path>) -> Result<Exit> {
    match (&args.trace, &args.run) {
        (Some(path), None) => explain_trace(path, args.max_size_bytes, args.json),
        (None, Some(run)) => explain_run(db, run, args.json),
        (Some(_), Some(run)) => {
            bail!("give either RUN ({run}) or --trace FILE, not both")
        }
        (None, None) => bail!(
            "nothing to explain: give a RUN measured with --explain, or --trace FILE (see --help)"
        ),
    }
}

fn print_explanations(explanations: &[crate::explain::Explanation]) {
    for (i, x) in explanations.iter().enumerate() {
        if i > 0 {
            outln!();
        }
        out!("{}", crate::explain::text::render(x));
    }
}

fn explain_trace(path: &std::path::Path, max_bytes: u64, json: bool) -> Result<Exit> {
    let explanations = crate::explain::explain_trace_file(path, max_bytes)?;
    if json {
        super::print_json(&explanations)?;
    } else {
        print_explanations(&explanations);
    }
    Ok(Exit::Ok)
}

fn explain_run(db: Option<&std::path::Path>, reference: &str, json: bool) -> Result<Exit> {
    // Ctrl-C while a PostgreSQL server keeps the store from opening.
    let signals = WaitSignals::install().context("installing signal handlers")?;
    let (rec, origin) = signals.during(|stop| runref::load_with_origin(db, reference, stop))?;
    let Some(x) = &rec.explain else {
        bail!(
            "{origin} was measured without --explain: nothing to explain (measure with --explain)"
        );
    };
    if json {
        super::print_json(x)?;
        return Ok(Exit::Ok);
    }
    if let Some(nothing) = why::nothing_line(x) {
        outln!("{nothing}");
    }
    outln!("{}", why::counts_line(x));
    if !x.explanations.is_empty() {
        outln!();
        print_explanations(&x.explanations);
    }
    Ok(Exit::Ok)
}
