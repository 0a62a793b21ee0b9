//! `rtscope explain`: why was a wake-up late? Maps the flags to the
//! library (`crate::explain`) and prints its explanations; nothing else.
//! Today it reads trace files (`--trace`); explaining a stored RUN comes
//! with `measure --explain`.

use super::Exit;
use anyhow::{Result, bail};
use clap::Args;
use std::path::PathBuf;

/// Explain why a wake-up was late, from kernel trace events.
///
/// --trace FILE reads a trace as text: the output of `trace-cmd report`,
/// or tracefs' `trace` file. It must hold the marker cyclictest writes
/// with `-b USEC --tracemark` ("hit latency threshold (LAT > USEC)") and
/// the events of the marked thread's CPU: sched_switch, sched_waking /
/// sched_wakeup, and for a finer split timer:hrtimer_*, irq:*,
/// irq_vectors:* and workqueue:* (record with e.g. `trace-cmd record -e
/// sched -e timer -e irq -e irq_vectors -e workqueue cyclictest -b 500
/// --tracemark ...`). For each marked spike it prints the main cause, the
/// latency split into named parts (timer delay, interrupt handlers,
/// softirqs, threads that ran instead, unexplained) with durations and
/// shares, and the timeline from the deadline to the thread running. An
/// explanation from a trace that lost events is marked PARTIAL.
#[derive(Args, Debug, Clone)]
pub struct ExplainArgs {
    /// A stored run to explain (not available yet: use --trace).
    #[arg(value_name = "RUN")]
    pub run: Option<String>,

    /// A trace as text (`trace-cmd report` output or tracefs' `trace`).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// Print the explanations as JSON (an array) instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &ExplainArgs) -> Result<Exit> {
    let path = match (&args.trace, &args.run) {
        (Some(p), None) => p,
        (Some(_), Some(run)) => {
            bail!("give either RUN ({run}) or --trace FILE, not both")
        }
        (None, Some(run)) => bail!(
            "explaining a stored run ({run}) is not available yet: record a trace and give --trace FILE"
        ),
        (None, None) => bail!("nothing to explain: give --trace FILE (see --help)"),
    };
    let explanations = crate::explain::explain_trace_file(path)?;
    if args.json {
        super::print_json(&explanations)?;
    } else {
        for (i, x) in explanations.iter().enumerate() {
            if i > 0 {
                outln!();
            }
            out!("{}", crate::explain::text::render(x));
        }
    }
    Ok(Exit::Ok)
}
