//! `rtscope tail RUN`: the worst case a run has not seen, estimated from
//! its histogram and windows (extreme value theory, `crate::tail`), or a
//! refusal that names the gate it failed and says what the run does
//! support. Flags in, the shared rendering (`report::tail`) out.

use super::Exit;
use crate::measure::settings::parse::deadline;
use crate::report::tail::{self as view, Ask};
use crate::runref::{self, Origin};
use crate::tail::TailEstimate;
use crate::ui::interrupt::WaitSignals;
use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;

/// Estimate the worst case a run has not seen (or refuse, saying why).
///
/// From a stored run (or a run record file): the latency exceeded with
/// probability P in an hour, a day and a year of operation at the run's
/// period, each with a 95 % upper bound, and the probability of a
/// wake-up beyond the deadline in one hour. The estimate is a
/// generalized Pareto fit to the tail of the lossless histogram, checked
/// by gates (enough exceedances, goodness of fit, a shape inside the
/// fit's bounds, a stable shape, stationary windows, a held-out check,
/// agreement with the windows' block maxima). When a gate fails, the
/// answer is "insufficient evidence", with the gate and its figure, the
/// run's exact maximum and the 3/N bound. Every level says how far past
/// the run it reaches (e.g. "120 × the 30 s observed"); past 100 × it is
/// "beyond what the run supports", not a number. Method and limits:
/// docs/tail.md.
///
/// Exit status: 0 answered (an estimate or a refusal), 2 the run cannot
/// be loaded or analysed.
#[derive(Args, Debug, Clone)]
pub struct TailArgs {
    /// Run id, `last`, the start of its uuid, or a run record file.
    #[arg(value_name = "RUN")]
    pub run: String,
    /// The levels are exceeded with this probability per hour, day and
    /// year of operation (0 < P < 1; `1%` works too).
    #[arg(long = "probability", value_name = "P", default_value = "0.01", value_parser = probability)]
    pub probability: f64,
    /// Deadline of a wake-up (bare number: µs; 1ms, 500us). Default: the
    /// run's (`measure --deadline`), else its period.
    #[arg(long = "deadline", value_name = "DUR", value_parser = deadline)]
    pub deadline_ns: Option<u64>,
    /// Analyse one thread (its index, as `rtscope runs show` lists it).
    /// Default: every thread's histogram merged (same period needed).
    #[arg(long = "thread", value_name = "N")]
    pub thread: Option<u32>,
    /// The loop's period (bare number: µs; 1ms, 200us), for an input that
    /// does not say it (an import without its interval). A period that
    /// contradicts the run's own is refused (exit 2).
    #[arg(long = "period", value_name = "DUR", value_parser = deadline)]
    pub period_ns: Option<u64>,
    /// Print the analysis as JSON (every threshold, fit and gate).
    #[arg(long = "json")]
    pub json: bool,
}

/// A probability in (0, 1), as a fraction or a percentage.
fn probability(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    match num.parse::<f64>().map(|v| v * scale) {
        Ok(p) if p > 0.0 && p < 1.0 => Ok(p),
        _ => Err(format!(
            "'{s}' is not a probability between 0 and 1 (exclusive): give 0.01 or 1%"
        )),
    }
}

/// The JSON output: the estimate, with the run it is about.
#[derive(Serialize)]
struct TailJson<'a> {
    run_id: Option<i64>,
    run_file: Option<String>,
    run_uuid: &'a str,
    thread: Option<u32>,
    inputs: &'a [String],
    #[serde(flatten)]
    estimate: &'a TailEstimate,
}

pub fn run(args: &TailArgs, db: Option<&std::path::Path>) -> Result<Exit> {
    // Ctrl-C while a PostgreSQL server keeps the store from opening.
    let signals = WaitSignals::install().context("installing signal handlers")?;
    let (rec, origin) = signals.during(|stop| runref::load_with_origin(db, &args.run, stop))?;
    let ask = Ask {
        thread: args.thread,
        probability: args.probability,
        deadline_ns: args.deadline_ns,
        period_ns: args.period_ns,
    };
    let (est, inputs) = view::analyze_run(&rec, &ask)?;
    if args.json {
        let (run_id, run_file) = match &origin {
            Origin::Stored { id } => (Some(*id), None),
            Origin::File(p) => (None, Some(p.display().to_string())),
        };
        super::print_json(&TailJson {
            run_id,
            run_file,
            run_uuid: &rec.run_uuid,
            thread: args.thread,
            inputs: &inputs,
            estimate: &est,
        })?;
    } else {
        outln!("Tail of {origin}:");
        out!("{}", view::text(&view::view(&est, &inputs)));
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probability_takes_fractions_and_percentages_in_range() {
        assert_eq!(probability("0.01"), Ok(0.01));
        assert!((probability("1%").unwrap() - 0.01).abs() < 1e-12);
        for bad in ["0", "1", "-0.1", "abc", "150%", "NaN", ""] {
            assert!(probability(bad).is_err(), "{bad}");
        }
        assert!(deadline("0").is_err());
        assert_eq!(deadline("1ms"), Ok(1_000_000));
    }
}
