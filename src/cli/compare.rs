//! `rtscope compare`: two runs side by side on one metric, with the
//! regression gate for CI pipelines.

use super::Exit;
use crate::report::{self, compare};
use crate::runref;
use anyhow::{Result, anyhow};
use clap::Args;

fn metric(s: &str) -> Result<String, String> {
    if crate::record::METRICS.contains(&s) {
        Ok(s.to_string())
    } else {
        Err(compare::CompareError::Metric(s.into()).to_string())
    }
}

fn percent(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches('%');
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "'{s}' is not a percentage: use a number >= 0, e.g. 10 or 10%"
        )),
    }
}

/// Compare two runs per CPU on one metric; a regression gate for CI.
///
/// B is compared with A (the baseline): a table per CPU and overall with
/// the ratio B/A, and warnings when the two runs differ in what no label
/// or tag names (kernel, command line, set-up, load...).
///
/// Each row also says whether the difference is beyond the noise of the
/// runs' own windows (max, min, avg and p99; at least 10 windows per run),
/// or why the noise is unknown.
///
/// Each run's deadline (--deadline, else the run's own: its --deadline,
/// else its period) is said met or missed, with the periods beyond it.
///
/// Latencies in microseconds (us). With --fail-if-worse, exit 1 when B's
/// overall metric is more than PCT percent above A's and the difference
/// is beyond the noise (or the noise is unknown, which it says): a
/// regression gate for CI pipelines.
///
/// Exit status: 0 done (gate passed), 1 the gate failed, 2 bad options or
/// a run that cannot be loaded.
#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// The baseline run: a run record file (.json) or a stored run's id.
    #[arg(value_name = "A")]
    pub a: String,

    /// The run compared with it.
    #[arg(value_name = "B")]
    pub b: String,

    /// Metric: min, avg, p50, p90, p99, p99.9, p99.99 or max.
    #[arg(long = "metric", value_name = "NAME", default_value = "p99.99", value_parser = metric)]
    pub metric: String,

    /// Exit 1 if B's overall metric is more than PCT percent above A's
    /// (0: any increase fails) and the difference is beyond the noise of
    /// the runs' windows; a noise that cannot be judged gates on the
    /// figure alone.
    #[arg(long = "fail-if-worse", value_name = "PCT", value_parser = percent)]
    pub fail_if_worse: Option<f64>,

    /// Judge both runs against this deadline instead of the ones they
    /// recorded (bare number: us; 250us, 2ms); the stored runs are left
    /// as they are.
    #[arg(long = "deadline", value_name = "DUR", value_parser = crate::measure::settings::parse::deadline)]
    pub deadline_ns: Option<u64>,
}

pub fn run(args: &CompareArgs, db: Option<&std::path::Path>) -> Result<Exit> {
    let refs = [args.a.clone(), args.b.clone()];
    if let Some(cs) = runref::load_characterizations(db, &refs)? {
        if args.fail_if_worse.is_some() {
            anyhow::bail!(
                "--fail-if-worse gates latency runs; characterizations are compared side by side only"
            );
        }
        if args.deadline_ns.is_some() {
            anyhow::bail!("--deadline judges latency runs; a characterization has no deadline");
        }
        let cs: Vec<_> = cs.iter().collect();
        out!("{}", crate::characterize::compare::render(&cs, &refs));
        return Ok(Exit::Ok);
    }
    let mut a = runref::load(db, &args.a)?;
    let mut b = runref::load(db, &args.b)?;
    if let Some(d) = args.deadline_ns {
        a.limits.deadline_ns = Some(d);
        b.limits.deadline_ns = Some(d);
    }
    let runs = report::name_runs(vec![(args.a.clone(), a), (args.b.clone(), b)]);
    let c = compare::compare(&runs[0], &runs[1], &args.metric).map_err(|e| anyhow!(e))?;
    out!("{}", c.render(&runs[0], &runs[1]));
    for (tag, r) in [("A", &runs[0]), ("B", &runs[1])] {
        outln!(
            "{tag} deadline {}",
            report::verdict::deadline_status(&r.record)
        );
    }
    if let Some(pct) = args.fail_if_worse {
        let gate = c.gate(pct);
        outln!("{}", gate.message);
        if !gate.passed {
            return Ok(Exit::GateFailed);
        }
    }
    Ok(Exit::Ok)
}
