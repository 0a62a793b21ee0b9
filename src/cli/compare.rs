//! `rtscope compare`: runs side by side on one metric, each against the
//! first, with the regression gate for CI pipelines. Maps flags in and
//! outcomes (text, JSON, HTML, exit code) out; the comparison itself is
//! `report::compare`.

use super::Exit;
use crate::report::{self, compare};
use crate::ui::interrupt::WaitSignals;
use crate::{output, runref};
use anyhow::{Context, Result, anyhow};
use clap::Args;
use std::path::PathBuf;

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

/// Compare runs per CPU on one metric, each against the first; a regression gate for CI.
///
/// Every run after the first is set against the first (A, the baseline): a
/// table per CPU and overall with the ratio to A, and warnings when two
/// runs differ in what no label or tag names (kernel, command line,
/// set-up, load...). Runs of different quantities (a wake-up latency
/// against oslat's busy-loop gaps or osnoise's noise) are refused.
///
/// Each row says whether the difference is within the noise of the runs'
/// own windows or beyond it (worse or better), by how much and what the
/// noise is: a permutation test of the windows at the 5 % level, the
/// noise being the difference that shuffling the windows between the two
/// runs reaches in 5 % of the shuffles (at least 10 windows per run).
/// Only max, min, avg and p99 are kept per window, so only they have a
/// noise model; the default metric is p99. On p50, p90, p99.9 or p99.99
/// the differences are judged raw, on the figures alone, and said so.
///
/// How often a real regression is found (docs/report.md, "What it finds",
/// in the unit tests' model of windows): on p99 with 30 windows a 10 %
/// shift in at least 70 % of runs, a 25 % shift in at least 95 %; with 10
/// windows 25 % and 90 %. On max a 25 % shift is found in only 25 % of
/// runs of 30 windows, a 10 % one no more often than by chance.
///
/// Each run's deadline (--deadline, else the run's own: its --deadline,
/// else its period) is said met or missed, with the periods beyond it.
///
/// On p99 the verdict judges the windows' mean p99 (the windows keep no
/// p99 that merges): the difference and the noise beside the verdict are
/// that figure's and say so, the table's are the runs' own p99.
///
/// Latencies in microseconds (us). With --fail-if-worse, exit 1 when any
/// run's overall metric is more than PCT percent above A's and the
/// difference is beyond the noise. A gate whose noise cannot be judged (a
/// metric without a noise model, a run with fewer than 10 windows) is
/// refused unless --raw says to gate on the figures alone.
///
/// A quantile among an imported run's overflows (samples its source
/// counted beyond its histogram, values unknown) is only a lower bound:
/// it is shown as one (≥40.0) and never subtracted from another bound. A
/// bound above the other run's figure is still worse (or better) by at
/// least the gap; otherwise the order is unknown, and a gate it leaves
/// undecided is refused, --raw or not.
///
/// Exit status: 0 done (gate passed), 1 the gate failed, 2 bad options,
/// fewer than two runs, a run that cannot be loaded, runs of different
/// quantities, a gate whose noise cannot be judged without --raw, or a
/// gate a lower bound leaves undecided.
#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// The runs: run record files (.json) or stored runs' ids. The first
    /// is the baseline (A); each other (B, C...) is set against it.
    #[arg(value_name = "RUN", num_args = 2.., required = true)]
    pub runs: Vec<String>,

    /// Metric: min, avg, p50, p90, p99, p99.9, p99.99 or max. Only min,
    /// avg, p99 and max have a noise model; the others are judged raw.
    #[arg(long = "metric", value_name = "NAME", default_value = compare::DEFAULT_METRIC, value_parser = metric)]
    pub metric: String,

    /// Exit 1 if any run's overall metric is more than PCT percent above
    /// the baseline's (0: any increase fails) and the difference is beyond
    /// the noise of the runs' windows. A pair whose noise cannot be judged
    /// (a run with fewer than 10 windows, or none) is refused (exit 2),
    /// saying so, unless --raw.
    #[arg(long = "fail-if-worse", value_name = "PCT", value_parser = percent)]
    pub fail_if_worse: Option<f64>,

    /// Let --fail-if-worse gate on the raw figures alone where the noise
    /// cannot be judged: a metric without a noise model (p50, p90,
    /// p99.9, p99.99), or a run with fewer than 10 windows. Chance alone
    /// may then fail the gate. Without it such a gate is refused (exit 2).
    #[arg(long = "raw", requires = "fail_if_worse")]
    pub raw: bool,

    /// Also write the comparison as JSON to FILE (- for standard output,
    /// instead of the table): each run's rows against the baseline, with
    /// the difference, the noise and the verdict, and the gate.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Also write an HTML report of the runs to FILE: each run against the
    /// first, every difference on min, avg, p99 and max marked within the
    /// noise or beyond it, then each run's own section.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Judge every run against this deadline instead of the ones they
    /// recorded (bare number: us; 250us, 2ms); the stored runs are left
    /// as they are.
    #[arg(long = "deadline", value_name = "DUR", value_parser = crate::measure::settings::parse::deadline)]
    pub deadline_ns: Option<u64>,

    /// Print a row for every CPU. Above 16 CPUs the table shows the 8
    /// that got worse the most (the largest B - A first), a line for the
    /// others (their CPUs, the range of their change, how many the noise
    /// judged worse or better) and the all row; the JSON always has
    /// every row.
    #[arg(long = "all")]
    pub all: bool,
}

pub fn run(args: &CompareArgs, db: Option<&std::path::Path>) -> Result<Exit> {
    // Ctrl-C while a PostgreSQL server keeps the store from opening.
    let signals = WaitSignals::install().context("installing signal handlers")?;
    if args.fail_if_worse.is_some() {
        compare::check_gate_metric(&args.metric, args.raw).map_err(|e| anyhow!(e))?;
    }
    let dash = |p: &Option<PathBuf>| p.as_ref().is_some_and(|p| p.as_os_str() == "-");
    if dash(&args.json) && dash(&args.output) {
        anyhow::bail!(
            "--json - and -o - both write to standard output: send one of them to a file"
        );
    }
    for p in args.json.iter().chain(args.output.iter()) {
        output::check_writable(p, "compare output")?;
    }
    if let Some(cs) = signals.during(|stop| runref::load_characterizations(db, &args.runs, stop))? {
        if args.fail_if_worse.is_some() {
            anyhow::bail!(
                "--fail-if-worse gates latency runs; characterizations are compared side by side only"
            );
        }
        if args.deadline_ns.is_some() {
            anyhow::bail!("--deadline judges latency runs; a characterization has no deadline");
        }
        if args.json.is_some() || args.output.is_some() {
            anyhow::bail!(
                "--json and -o write latency comparisons; `rtscope report` writes characterizations' pages"
            );
        }
        let cs: Vec<_> = cs.iter().collect();
        let text = crate::characterize::compare::render(&cs, &args.runs);
        out!("{}", crate::text::for_terminal_lines(&text));
        return Ok(Exit::Ok);
    }
    let mut runs = signals.during(|stop| runref::load_named(db, &args.runs, stop))?;
    if let Some(d) = args.deadline_ns {
        for r in &mut runs {
            r.record.limits.deadline_ns = Some(d);
        }
    }
    let c = compare::compare_all(&runs, &args.metric).map_err(|e| anyhow!(e))?;
    if let Some(pct) = args.fail_if_worse {
        c.check_gate_bounds(pct).map_err(|e| anyhow!(e))?;
        c.check_gate_noise(args.raw).map_err(|e| anyhow!(e))?;
    }
    let gates = args.fail_if_worse.map(|pct| (pct, c.gates(pct)));
    let json_to_stdout = args.json.as_ref().is_some_and(|p| p.as_os_str() == "-");
    if !json_to_stdout {
        out!(
            "{}",
            c.render(&runs, crate::text::rank::Rows::from_all(args.all))
        );
        for (i, r) in runs.iter().enumerate() {
            outln!(
                "{} deadline {}",
                compare::tag(i),
                report::verdict::deadline_status(&r.record)
            );
        }
        for g in gates.iter().flat_map(|(_, g)| g) {
            outln!("{}", crate::text::for_terminal(&g.message));
        }
    }
    if let Some(p) = &args.json {
        let v = c.to_json(&runs, gates.as_ref().map(|(pct, g)| (*pct, g.as_slice())));
        let mut text = serde_json::to_string_pretty(&v).context("serializing the comparison")?;
        text.push('\n');
        output::write_atomic(p, text.as_bytes())?;
    }
    if let Some(p) = &args.output {
        let page = report::html::render(&runs, None)
            .map_err(anyhow::Error::msg)
            .context("making the report")?;
        output::write_atomic(p, page.as_bytes())?;
        if p.as_os_str() != "-" && !json_to_stdout {
            outln!("report: {}", p.display());
        }
    }
    if gates.iter().flat_map(|(_, g)| g).any(|g| !g.passed) {
        return Ok(Exit::GateFailed);
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use crate::report::noise::{POWER, Power};

    /// `compare --help` states the verdict's power as
    /// `report::noise::POWER` holds it (whose test measures it).
    #[test]
    fn help_states_the_tested_power() {
        let mut cmd = super::super::command();
        cmd.build();
        let help = cmd
            .find_subcommand_mut("compare")
            .unwrap()
            .render_long_help()
            .to_string();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        let at = |metric: &str, windows: usize| -> Power {
            *POWER
                .iter()
                .find(|p| p.metric == metric && p.windows == windows)
                .unwrap()
        };
        let (p30, p10, m30) = (at("p99", 30), at("p99", 10), at("max", 30));
        assert_eq!(m30.at_10_pct, 0, "the help says: chance");
        for said in [
            format!(
                "on p99 with 30 windows a 10 % shift in at least {} % of runs, a 25 % shift in at least {} %;",
                p30.at_10_pct, p30.at_25_pct
            ),
            format!(
                "with 10 windows {} % and {} %.",
                p10.at_10_pct, p10.at_25_pct
            ),
            format!(
                "On max a 25 % shift is found in only {} % of runs of 30 windows, a 10 % one no more often than by chance.",
                m30.at_25_pct
            ),
        ] {
            assert!(help.contains(&said), "{said}\nnot in:\n{help}");
        }
    }
}
