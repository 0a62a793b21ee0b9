//! `rtscope import FILE…`: read results other tools wrote (cyclictest
//! histograms, --json and status lines, Xenomai latency) or rtscope run
//! records into the store. Every file is read and checked first; then all
//! are stored in one transaction, or none is.

use super::Exit;
use crate::import::file::Stored;
use crate::import::{self, ImportOptions};
use crate::record::{Quantity, RunRecord, Stated, Unknowable};
use crate::store::Store;
use crate::units::fmt_us;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Parse a `KEY=VALUE` tag (the rule of `measure --tag`).
pub use crate::measure::settings::parse::tag;
use crate::measure::settings::parse::{deadline, micros, tag_map};

fn format_name(s: &str) -> Result<String, String> {
    import::by_name(s)
        .map(|i| i.name.to_string())
        .ok_or_else(|| format!("unknown format '{s}': use one of {}", import::names()))
}

/// Read other tools' results (or rtscope run records) into the store.
///
/// Formats (recognized from the contents; force one with --format):
/// cyclictest-histfile (cyclictest -h / --histfile, rt-tests before and
/// after 2.7), cyclictest-json (cyclictest --json), cyclictest-summary
/// (cyclictest's "T: 0 (…) P:… I:… C:… Min:… Avg:… Max:…" status lines),
/// xenomai-latency (Xenomai's latency tool: RTD/RTS lines, EVL's latmus),
/// rtla-timerlat (rtla timerlat hist or top), rtla-osnoise (rtla osnoise
/// hist or top), oslat (its summary or --json), jitterdebugger (its
/// results.json), rtscope-run (a run record from measure --json or runs
/// export --json).
///
/// Imported runs are marked as such and hold what the file gives; what
/// had to be assumed is in their warnings (rtscope runs show ID). A file
/// that does not say when it ran has an unknown start (the file's
/// modification time is named in a note, never taken as the start). A file
/// that cannot be read is refused with its line and what was expected,
/// and then nothing at all is imported. A file imported before (same
/// content) is skipped, and --dry-run says so; when this import gives
/// what the stored run does not hold (another --interval, --host, --label
/// or --tag), stderr says it is not applied and how to apply it.
#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    /// Files to read.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Label of the imported runs (what was being tried).
    #[arg(long = "label", value_name = "TEXT", value_parser = crate::measure::settings::parse::label)]
    pub label: Option<String>,
    /// Host the imported runs were measured on (a board's name), as
    /// `measure --host` records it: `runs --host NAME` and the boards of
    /// `serve` find them by it. Default: the host the file names (cyclictest
    /// --json, oslat --json, jitterdebugger, run records), else unknown
    /// (listed and selected as `unknown`).
    #[arg(long = "host", value_name = "NAME", value_parser = crate::measure::settings::parse::host)]
    pub host: Option<String>,
    /// KEY=VALUE fact about the imported runs (repeatable), e.g.
    /// --tag kernel=rt.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = tag)]
    pub tags: Vec<(String, String)>,
    /// Read every file as this format instead of recognizing it.
    #[arg(long = "format", value_name = "FORMAT", value_parser = format_name)]
    pub format: Option<String>,
    /// Numbers in cyclictest status lines are nanoseconds (output of
    /// cyclictest -N); default: microseconds.
    #[arg(long = "ns")]
    pub ns: bool,
    /// Refuse a file larger than this, unread (K, M, G: powers of 1024).
    #[arg(long = "max-size", value_name = "SIZE", default_value = "256M", value_parser = super::size_bytes)]
    pub max_size_bytes: u64,
    /// Skip lines a reader refuses instead of refusing the file: the
    /// rest is imported, and the lines skipped are listed (number, text)
    /// on stderr and in the run's notes.
    #[arg(long = "lenient")]
    pub lenient: bool,
    /// Keep the JSON and the histogram file of one cyclictest run as two
    /// runs (by default, given in one call, they become one record).
    #[arg(long = "no-join")]
    pub no_join: bool,
    /// Read and check the files and say what would be stored; store
    /// nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// The loop's period, for files that do not say it (a cyclictest
    /// histogram or status lines): its wake-ups are then judged against
    /// it. Bare number: us (cyclictest's -i). A file that says another
    /// interval is refused.
    #[arg(long = "interval", value_name = "DUR", value_parser = deadline)]
    pub interval_ns: Option<u64>,
    /// With --interval: added to the interval of each next thread, as
    /// cyclictest's -d. Default 0 (every thread at --interval);
    /// cyclictest's own default is 500us, so a run made without -d 0
    /// needs --distance 500us. Bare number: us.
    #[arg(long = "distance", value_name = "DUR", requires = "interval_ns", value_parser = micros)]
    pub distance_ns: Option<u64>,
}

/// One line on an imported run: its format, threads, samples (and the
/// overflows among them), duration, p99.99 and max, and what it measures
/// when that is not a wake-up latency. Unknown is said, never 0.
fn describe(rec: &RunRecord) -> String {
    let o = |v: Option<u64>| v.map(fmt_us).unwrap_or_else(|| "-".into());
    let samples = if rec.knows(Unknowable::Count) {
        rec.overall.samples.to_string()
    } else {
        "unknown".into()
    };
    let overflow = match rec.overall.overflow {
        Some(o) if o.count > 0 => format!(" ({} beyond its histogram, values unknown)", o.count),
        _ => String::new(),
    };
    let quantity = match Quantity::of(rec) {
        Quantity::WakeupLatency => String::new(),
        q => format!("; measures {}", q.describe()),
    };
    format!(
        "{}: {} thread(s), {samples} samples{overflow}, {}, p99.99 {}, max {}{quantity}",
        rec.source
            .format
            .as_deref()
            .unwrap_or(rec.source.kind.as_str()),
        rec.threads.len(),
        if rec.duration_ns > 0 {
            crate::units::fmt_run_length(rec.duration_ns)
        } else {
            "duration unknown".into()
        },
        match rec.overall.quantile("p99.99") {
            Some(Stated::AtLeast(ns)) => format!("{}{}", crate::units::AT_LEAST, fmt_us(ns)),
            v => o(v.map(Stated::value)),
        },
        o(rec.overall.max_ns)
    )
}

pub fn run(args: &ImportArgs, db: Option<&std::path::Path>) -> Result<Exit> {
    let records = read_all(args)?;
    let path = crate::store::locate(db)?;
    if args.dry_run {
        let store = Store::open_existing_read_only_or_stop(
            &path,
            &std::sync::atomic::AtomicBool::new(false),
        )?;
        let planned = import::file::plan(store.as_ref(), &records)?;
        for ((file, rec), s) in records.iter().zip(&planned) {
            match s {
                Stored::New(_) => outln!("would import {} ({})", file.display(), describe(rec)),
                _ => say_skipped(store.as_ref(), file, rec, s, "would skip")?,
            }
        }
        return Ok(Exit::Ok);
    }
    let mut store = Store::open(&path)?;
    let stored = import::file::save(&mut store, &records)?;
    for ((file, rec), s) in records.iter().zip(&stored) {
        if !matches!(s, Stored::New(_)) {
            say_skipped(Some(&store), file, rec, s, "skipped")?;
        }
    }
    say_parts(&records, &stored);
    for ((path, rec), s) in records.iter().zip(&stored) {
        if let Stored::New(id) = s {
            outln!(
                "imported {} as run {id} ({})",
                path.display(),
                describe(rec)
            );
            for w in &rec.warnings {
                outln!("  note: {w}");
            }
            if let Some(note) = stored_partner(&store, rec, *id)? {
                outln!("  note: {note}");
            }
        }
    }
    Ok(Exit::Ok)
}

/// Every file read (each run it holds one record, the lines --lenient
/// skipped said on stderr), labelled and tagged, the JSON and histogram
/// file of one cyclictest run joined.
fn read_all(args: &ImportArgs) -> Result<Vec<(PathBuf, RunRecord)>> {
    let options = ImportOptions {
        summary_unit_ns: if args.ns { 1 } else { 1000 },
        lenient: args.lenient,
        interval: args.interval_ns.map(|interval_ns| import::GivenInterval {
            interval_ns,
            distance_ns: args.distance_ns.unwrap_or(0),
        }),
        host: args.host.clone(),
    };
    let forced = args.format.as_deref().and_then(import::by_name);
    let tags = tag_map(&args.tags)?;
    let mut records = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let recs = import::file::read_file(path, forced, &options, args.max_size_bytes)
            .map_err(|e| anyhow::anyhow!("{e}; nothing was imported"))?;
        for mut rec in recs {
            for w in rec
                .warnings
                .iter()
                .filter(|w| w.contains("skipped (--lenient)"))
            {
                eprintln!("rtscope: warning: {}: {w}", path.display());
            }
            if args.label.is_some() {
                rec.label = args.label.clone();
            }
            for (k, v) in &tags {
                rec.tags.insert(k.clone(), v.clone());
            }
            records.push((path.clone(), rec));
        }
    }
    if args.no_join {
        return Ok(records);
    }
    let (records, notes) = import::join::join_all(records);
    for n in notes {
        outln!("{n}");
    }
    Ok(records)
}

/// A file not stored, and why: its content is stored already, or
/// repeated above. What the user gave that the stored run does not hold
/// (another --interval, --host, --label, --tag) is not applied: said on
/// stderr, with how to apply it.
fn say_skipped(
    store: Option<&Store>,
    file: &std::path::Path,
    rec: &RunRecord,
    s: &Stored,
    verb: &str,
) -> Result<()> {
    let Stored::Known(id) = *s else {
        outln!("{verb} {}: same content as a file above", file.display());
        return Ok(());
    };
    outln!(
        "{verb} {}: already stored as run {id} (same content)",
        file.display()
    );
    let Some(store) = store else {
        return Ok(());
    };
    let differs = import::file::not_applied(&store.load(id)?, rec);
    if !differs.is_empty() {
        eprintln!(
            "rtscope: warning: {} is not imported again: run {id} holds its content, and {}; a stored run is never rewritten: to store it so, rtscope runs rm {id}, then import it again",
            file.display(),
            differs.join(", ")
        );
    }
    Ok(())
}

/// "FILE holds 2 runs: imported as runs 5 (part=1), 6 (part=2)".
fn say_parts(records: &[(PathBuf, RunRecord)], stored: &[Stored]) {
    let mut i = 0;
    while i < records.len() {
        let path = &records[i].0;
        let n = records[i..].iter().take_while(|(p, _)| p == path).count();
        if n > 1 {
            let ids: Vec<String> = records[i..i + n]
                .iter()
                .zip(&stored[i..i + n])
                .map(|((_, rec), s)| {
                    let part = rec.tags.get("part").map(String::as_str).unwrap_or("?");
                    match s {
                        Stored::New(id) | Stored::Known(id) => format!("{id} (part={part})"),
                        Stored::Repeated => format!("none (part={part}, repeated)"),
                    }
                })
                .collect();
            outln!(
                "{} holds {n} runs: imported as runs {}",
                path.display(),
                ids.join(", ")
            );
        }
        i += n;
    }
}

/// A stored run that is the other half of `rec` (the JSON and histogram
/// file of one cyclictest run imported in separate calls), said so.
fn stored_partner(store: &Store, rec: &RunRecord, id: i64) -> Result<Option<String>> {
    let other = match rec.source.format.as_deref() {
        Some("cyclictest-json") => "cyclictest-histfile",
        Some("cyclictest-histfile") => "cyclictest-json",
        _ => return Ok(None),
    };
    for row in store.list()? {
        if row.id == id
            || row.source_format.as_deref() != Some(other)
            || row.samples != rec.overall.samples
            || row.max_ns != rec.overall.max_ns
        {
            continue;
        }
        if import::join::same_run(rec, &store.load(row.id)?) {
            return Ok(Some(format!(
                "this and run {other_id} are one cyclictest run (its JSON and its histogram file: same threads, counts, minima and maxima); to have them as one record: rtscope runs rm {other_id} {id}, then import both files in one call",
                other_id = row.id
            )));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags() {
        assert_eq!(
            tag("load=hackbench").unwrap(),
            ("load".into(), "hackbench".into())
        );
        assert_eq!(tag("a.b-c_d=x=y").unwrap().1, "x=y");
        assert!(tag("novalue").is_err());
        assert!(tag("=x").is_err());
        assert!(tag("sp ace=x").is_err());
        assert!(tag_map(&[("a".into(), "1".into()), ("a".into(), "2".into())]).is_err());
    }

    /// `import --help` names every format there is a reader for.
    #[test]
    fn the_help_names_every_format() {
        use clap::CommandFactory;
        let cli = crate::cli::Cli::command();
        let help = cli
            .find_subcommand("import")
            .and_then(|c| c.get_long_about())
            .map(|h| h.to_string())
            .unwrap_or_default();
        for i in crate::import::IMPORTERS {
            assert!(
                help.contains(i.name),
                "import --help leaves out {}:\n{help}",
                i.name
            );
        }
    }
}
