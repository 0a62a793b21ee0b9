//! Reading results other tools wrote (and rtscope's own run records) into
//! run records: one file per format, each describing itself, registered in
//! the static list [`IMPORTERS`]. A reader either returns a whole record
//! or refuses the file with the line and what it expected: nothing is
//! ever half-read. Readers never touch the store or the system.
//!
//! Records built here are marked `source.kind = "imported"` with the
//! format and file, carry as much as the source gives (unknown options are
//! "unknown" or 0, unknown system facts are empty), and say in `warnings`
//! what had to be assumed.

pub mod build;
pub mod cyclictest_json;
pub mod cyclictest_summary;
pub mod file;
pub mod histfile;
pub mod rtscope_run;
pub mod xenomai;

#[cfg(test)]
mod fuzz;

use crate::record::RunRecord;
use std::fmt;
use std::path::Path;

/// A reader of one file format.
pub struct Importer {
    /// Name used in `--format` and in `source.format`.
    pub name: &'static str,
    /// One line for `rtscope import --help` and docs.
    pub description: &'static str,
    /// How sure the reader is that `text` is its format: 0 (not at all)
    /// to 100 (certain). Must be cheap and never fail.
    pub detect: fn(text: &str) -> u8,
    /// Read the file into a record.
    pub parse: fn(src: &Source) -> Result<RunRecord, ImportError>,
}

/// Every reader, in the order formats are tried.
pub static IMPORTERS: &[&Importer] = &[
    &rtscope_run::IMPORTER,
    &cyclictest_json::IMPORTER,
    &histfile::IMPORTER,
    &xenomai::IMPORTER,
    &cyclictest_summary::IMPORTER,
];

/// What the user told about the file beyond its contents.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// Unit of the numbers in cyclictest summary lines (1000: µs, the
    /// default; 1: ns, for output of cyclictest -N).
    pub summary_unit_ns: u64,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            summary_unit_ns: 1000,
        }
    }
}

/// A file to read.
pub struct Source<'a> {
    pub path: &'a Path,
    pub text: &'a str,
    /// Last modification of the file (when the tool finished writing it).
    pub modified_unix_ns: Option<u64>,
    pub options: &'a ImportOptions,
}

/// Why a file was refused: where, and what was expected there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    /// 1-based line, when the problem is on one line.
    pub line: Option<usize>,
    pub message: String,
}

impl ImportError {
    pub fn at(line: usize, message: impl Into<String>) -> ImportError {
        ImportError {
            line: Some(line),
            message: message.into(),
        }
    }

    pub fn whole(message: impl Into<String>) -> ImportError {
        ImportError {
            line: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

/// The reader called `name`.
pub fn by_name(name: &str) -> Option<&'static Importer> {
    IMPORTERS.iter().copied().find(|i| i.name == name)
}

/// Names of every format, for messages.
pub fn names() -> String {
    IMPORTERS
        .iter()
        .map(|i| i.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The reader most sure of `text`, if any is.
pub fn detect(text: &str) -> Option<&'static Importer> {
    IMPORTERS
        .iter()
        .copied()
        .map(|i| ((i.detect)(text), i))
        .filter(|(score, _)| *score > 0)
        .max_by_key(|(score, _)| *score)
        .map(|(_, i)| i)
}

/// Read `src` with `importer`, or with the format it looks like.
pub fn read(src: &Source, importer: Option<&'static Importer>) -> Result<RunRecord, ImportError> {
    let imp = match importer.or_else(|| detect(src.text)) {
        Some(i) => i,
        None => {
            return Err(ImportError::whole(format!(
                "not a format rtscope can read (expected one of: {}); name it with --format if it is one",
                names()
            )));
        }
    };
    let rec = (imp.parse)(src)?;
    rec.validate()
        .map_err(|e| ImportError::whole(format!("read as {} but inconsistent: {e}", imp.name)))?;
    Ok(rec)
}

/// Lines of `text` with their 1-based numbers, line ends and a final
/// carriage return removed.
pub fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
}

/// Shorten a line for a message.
pub fn excerpt(line: &str) -> String {
    crate::units::shorten(line.trim(), 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_importer_describes_itself_and_names_are_unique() {
        let mut names: Vec<&str> = IMPORTERS.iter().map(|i| i.name).collect();
        for i in IMPORTERS {
            assert!(!i.description.is_empty());
            assert_eq!((i.detect)(""), 0, "{} claims an empty file", i.name);
            assert_eq!(
                (i.detect)("hello\nworld\n"),
                0,
                "{} claims plain text",
                i.name
            );
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), IMPORTERS.len());
        assert!(by_name("cyclictest-histfile").is_some());
    }

    #[test]
    fn unknown_text_is_refused_with_the_formats() {
        let o = ImportOptions::default();
        let src = Source {
            path: Path::new("x.txt"),
            text: "hello\n",
            modified_unix_ns: None,
            options: &o,
        };
        let e = read(&src, None).unwrap_err();
        assert!(e.message.contains("cyclictest-json"), "{e}");
    }
}
