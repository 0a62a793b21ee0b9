//! `rtscope import FILE…`: read results other tools wrote (cyclictest
//! histograms, --json and status lines, Xenomai latency) or rtscope run
//! records into the store. Every file is read and checked first; then all
//! are stored in one transaction, or none is.

use super::Exit;
use crate::import::file::Stored;
use crate::import::{self, ImportOptions};
use crate::record::RunRecord;
use crate::store::Store;
use crate::units::{fmt_duration, fmt_us};
use anyhow::Result;
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Parse a `KEY=VALUE` tag (the rule of `measure --tag`).
pub use crate::measure::settings::parse::tag;

/// Tags as a map, refusing a key given twice.
pub fn tag_map(tags: &[(String, String)]) -> Result<BTreeMap<String, String>> {
    crate::measure::settings::parse::tag_map(tags).map_err(anyhow::Error::msg)
}

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
/// xenomai-latency (Xenomai's latency tool: RTD/RTS lines), rtscope-run
/// (a run record from measure --json or runs export --json).
///
/// Imported runs are marked as such and hold what the file gives; what
/// had to be assumed is in their warnings (rtscope runs show ID). A file
/// that cannot be read is refused with its line and what was expected,
/// and then nothing at all is imported. A file imported before (same
/// content) is skipped.
#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    /// Files to read.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Label of the imported runs (what was being tried).
    #[arg(long = "label", value_name = "TEXT")]
    pub label: Option<String>,
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
    /// Read and check the files and say what would be stored; store
    /// nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
}

fn describe(rec: &RunRecord) -> String {
    let o = |v: Option<u64>| v.map(fmt_us).unwrap_or_else(|| "-".into());
    format!(
        "{}: {} thread(s), {} samples, {}, p99.99 {}, max {}",
        rec.source
            .format
            .as_deref()
            .unwrap_or(rec.source.kind.as_str()),
        rec.threads.len(),
        rec.overall.samples,
        if rec.duration_ns > 0 {
            fmt_duration(rec.duration_ns)
        } else {
            "duration unknown".into()
        },
        o(rec.overall.p9999_ns),
        o(rec.overall.max_ns)
    )
}

pub fn run(args: &ImportArgs, db: Option<&std::path::Path>) -> Result<Exit> {
    let options = ImportOptions {
        summary_unit_ns: if args.ns { 1 } else { 1000 },
    };
    let forced = args.format.as_deref().and_then(import::by_name);
    let tags = tag_map(&args.tags)?;
    let mut records = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let mut rec = import::file::read_file(path, forced, &options, args.max_size_bytes)
            .map_err(|e| anyhow::anyhow!("{e}; nothing was imported"))?;
        if args.label.is_some() {
            rec.label = args.label.clone();
        }
        for (k, v) in &tags {
            rec.tags.insert(k.clone(), v.clone());
        }
        records.push((path.clone(), rec));
    }
    if args.dry_run {
        for (path, rec) in &records {
            outln!("would import {} ({})", path.display(), describe(rec));
        }
        return Ok(Exit::Ok);
    }
    let mut store = Store::open(&crate::store::locate(db)?)?;
    let stored = import::file::save(&mut store, &records)?;
    for ((path, _), s) in records.iter().zip(&stored) {
        match s {
            Stored::Known(id) => outln!(
                "skipped {}: already stored as run {id} (same content)",
                path.display()
            ),
            Stored::Repeated => outln!("skipped {}: same content as a file above", path.display()),
            Stored::New(_) => {}
        }
    }
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
        }
    }
    Ok(Exit::Ok)
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
}
