//! `rtscope plot`: one figure of one or more runs, as SVG or PNG.

use super::Exit;
use crate::record::RunRecord;
use crate::report::NamedRun;
use crate::report::plot::{self, Kind, Size, data};
use crate::ui::interrupt::WaitSignals;
use crate::{output, runref};
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use std::path::{Path, PathBuf};

fn kind(s: &str) -> Result<Kind, String> {
    Kind::parse(s).ok_or_else(|| format!("unknown kind '{s}': use hist, exceedance or timeline"))
}

fn size(s: &str) -> Result<Size, String> {
    Size::parse(s).ok_or_else(|| {
        format!("'{s}' is not a size: use WIDTHxHEIGHT in pixels, each 200-8000 (e.g. 1000x500)")
    })
}

/// Draw one figure (hist, exceedance, timeline) as SVG or PNG.
///
/// Kinds: hist, the latency histogram on log scales in 1 us classes (the
/// seeds' and OSADL's plot); exceedance, the share of periods later than
/// x on a log scale down to one in N; timeline, max (solid) and p99
/// (dashed) per window over the run, load phases as strips above. One run: a
/// curve per CPU. Several runs: a curve per run, overlaid; a run without
/// a histogram (some imports) is left out of hist and exceedance, and a
/// note says which.
///
/// The format follows the file name (.svg or .png). Text uses the
/// embedded DejaVu Sans font; the same runs give the same bytes.
///
/// Exit status: 0 written, 2 bad options, a run that cannot be loaded, or
/// a file that cannot be written.
#[derive(Args, Debug, Clone)]
pub struct PlotArgs {
    /// Runs to draw: run record files (`rtscope measure --json`), or ids
    /// of stored runs.
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,

    /// Which figure: hist, exceedance or timeline.
    #[arg(long = "kind", value_name = "KIND", value_parser = kind)]
    pub kind: Kind,

    /// Write the figure here; .svg or .png.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,

    /// Size in pixels, WIDTHxHEIGHT.
    #[arg(long = "size", value_name = "WxH", default_value = "1000x500", value_parser = size)]
    pub size: Size,

    /// Title above the figure. Default: the run's name and the kind.
    #[arg(long = "title", value_name = "TEXT")]
    pub title: Option<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Svg,
    Png,
}

fn format_of(path: &Path) -> Result<Format> {
    match path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .as_deref()
    {
        Some("svg") => Ok(Format::Svg),
        Some("png") => Ok(Format::Png),
        _ => bail!(
            "cannot tell the format of {}: name the file .svg or .png",
            path.display()
        ),
    }
}

fn default_title(kind: Kind, runs: &[NamedRun]) -> String {
    let what = match kind {
        Kind::Hist => "latency histogram",
        Kind::Exceedance => "exceedance",
        Kind::Timeline => "latency over time",
    };
    match runs {
        [one] => format!("{}: {what}", one.name),
        _ => format!("{} runs compared: {what}", runs.len()),
    }
}

/// The figure `kind` of `runs` (per CPU for one run, per run otherwise),
/// and the references of the runs left out of it: among several runs, a
/// histogram or exceedance figure draws those that have a histogram (it
/// is refused only when none has one).
pub fn figure(kind: Kind, runs: &[NamedRun], title: &str) -> Result<(plot::Figure, Vec<String>)> {
    let no_hist = |r: &NamedRun| {
        r.record
            .threads
            .iter()
            .all(|t| t.histogram.buckets.is_empty())
    };
    let mut left_out = Vec::new();
    let mut drawn: Vec<&NamedRun> = runs.iter().collect();
    if matches!(kind, Kind::Hist | Kind::Exceedance) {
        let (without, with): (Vec<&NamedRun>, Vec<&NamedRun>) =
            runs.iter().partition(|r| no_hist(r));
        if with.is_empty() {
            let refs: Vec<&str> = without.iter().map(|r| r.reference.as_str()).collect();
            bail!(
                "{} {} no latency histogram (the source did not record one): try --kind timeline, or rtscope report",
                if refs.len() == 1 { "run" } else { "runs" },
                if refs.len() == 1 {
                    format!("{} has", refs[0])
                } else {
                    format!("{} have", refs.join(", "))
                }
            );
        }
        left_out = without.iter().map(|r| r.reference.clone()).collect();
        drawn = with;
    }
    let pairs: Vec<(&str, &RunRecord)> =
        drawn.iter().map(|r| (r.name.as_str(), &r.record)).collect();
    let single = match runs {
        [one] => Some(one),
        _ => None,
    };
    let fig = match (kind, single) {
        (Kind::Hist, Some(one)) => data::hist_run(&one.record, title)?,
        (Kind::Hist, None) => data::hist_runs(&pairs, title)?,
        (Kind::Exceedance, Some(one)) => data::exceedance_run(&one.record, title)?,
        (Kind::Exceedance, None) => data::exceedance_runs(&pairs, title)?,
        (Kind::Timeline, Some(one)) => data::timeline_run(&one.record, title).ok_or_else(|| {
            anyhow!(
                "run {} has no per-window series (its source did not record latency over time): try --kind hist",
                one.reference
            )
        })?,
        (Kind::Timeline, None) => data::timeline_runs(&pairs, title)
            .ok_or_else(|| anyhow!("none of these runs has a per-window series: try --kind hist"))?,
    };
    Ok((fig, left_out))
}

pub fn run(args: &PlotArgs, db: Option<&std::path::Path>) -> Result<Exit> {
    // Ctrl-C while a PostgreSQL server keeps the store from opening.
    let signals = WaitSignals::install().context("installing signal handlers")?;
    let format = format_of(&args.output)?;
    output::check_writable(&args.output, "figure file")?;
    let runs = signals.during(|stop| runref::load_named(db, &args.runs, stop))?;
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| default_title(args.kind, &runs));
    let (fig, left_out) = figure(args.kind, &runs, &title)?;
    for r in &left_out {
        eprintln!(
            "rtscope: note: run {r} is left out of the figure: it has no latency histogram (its source did not record one)"
        );
    }
    let bytes = match format {
        Format::Svg => plot::svg::render(&fig, args.size).map(String::into_bytes),
        Format::Png => plot::png::render(&fig, args.size),
    }?;
    output::write_atomic(&args.output, &bytes)?;
    outln!("figure: {}", args.output.display());
    Ok(Exit::Ok)
}
