//! Reading results other tools wrote (and rtscope's own run records) into
//! run records: one file per format, each describing itself, registered in
//! the static list [`IMPORTERS`]. A reader either returns a whole record
//! or refuses the file with the line and what it expected: nothing is
//! ever half-read. Readers never touch the store or the system.
//!
//! Before any reader sees a file, `text::dedent` removes what pasting
//! adds (indentation, fences, `> ` quotes); `read_runs` cuts a file
//! holding several runs into one part per run (`run_starts`, per format)
//! and, with `--lenient`, skips the lines a reader refuses
//! (`text::read_leniently`). `join` makes one record of the JSON and the
//! histogram file of one cyclictest run.
//!
//! Records built here are marked `source.kind = "imported"` with the
//! format and file, carry as much as the source gives (what it does not
//! say is listed in `source.unknown` and shown unknown; unknown system
//! facts are empty), and say in `warnings` what had to be assumed.

pub mod build;
pub mod cyclictest_json;
pub mod cyclictest_summary;
pub mod file;
pub mod histfile;
pub mod jitterdebugger;
pub mod join;
pub mod oslat;
pub mod rtla_osnoise;
pub mod rtla_table;
pub mod rtla_timerlat;
pub mod rtscope_run;
pub mod text;
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
    &rtla_timerlat::IMPORTER,
    &rtla_osnoise::IMPORTER,
    &oslat::IMPORTER,
    &jitterdebugger::IMPORTER,
];

/// What the user told about the file beyond its contents.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// Unit of the numbers in cyclictest summary lines (1000: µs, the
    /// default; 1: ns, for output of cyclictest -N).
    pub summary_unit_ns: u64,
    /// Skip lines a reader refuses (listed in the record's warnings)
    /// instead of refusing the file.
    pub lenient: bool,
    /// The period of a file that does not say it (`import --interval`).
    pub interval: Option<GivenInterval>,
    /// The host the runs were measured on (`import --host`), recorded
    /// as their host name.
    pub host: Option<String>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            summary_unit_ns: 1000,
            lenient: false,
            interval: None,
            host: None,
        }
    }
}

/// Record `host` (`import --host`) as the host `rec` was measured on:
/// the name `runs --host` and the boards find it by. A file that named
/// another host keeps that name in a warning.
pub fn give_host(rec: &mut RunRecord, host: &str) {
    let said = std::mem::replace(&mut rec.fingerprint.hostname, host.to_string());
    if !said.is_empty() && said != host {
        rec.warnings.push(format!(
            "the file says it ran on host '{said}': recorded as host '{host}' (--host)"
        ));
    }
}

/// The period the user gives for a file that does not say it, as
/// cyclictest's `-i` and `-d` set it: thread N wakes every
/// `interval_ns + N × distance_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GivenInterval {
    pub interval_ns: u64,
    pub distance_ns: u64,
}

impl GivenInterval {
    /// The period of thread `index`.
    pub fn of(self, index: u32) -> u64 {
        self.interval_ns
            .saturating_add(u64::from(index).saturating_mul(self.distance_ns))
    }
}

/// Why a given interval was not taken.
#[derive(Debug, thiserror::Error)]
pub enum IntervalError {
    #[error("it measures {0}, which has no period: --interval is for wake-up latencies")]
    NoPeriod(&'static str),
    #[error(
        "it says thread {thread}'s interval is {said}, and --interval/--distance give {given}: leave them out, or correct them"
    )]
    Contradicts {
        thread: u32,
        said: String,
        given: String,
    },
}

/// Give `rec` the period its file did not say (and so a deadline to
/// judge its wake-ups against). A record that knows its interval keeps
/// it: a given one that agrees changes nothing, one that differs is
/// refused.
pub fn give_interval(rec: &mut RunRecord, given: GivenInterval) -> Result<(), IntervalError> {
    use crate::record::{Quantity, Unknowable};
    let q = Quantity::of(rec);
    if q != Quantity::WakeupLatency {
        return Err(IntervalError::NoPeriod(q.describe()));
    }
    let fmt = crate::units::fmt_duration;
    if rec.knows(Unknowable::Interval) {
        for t in &rec.threads {
            if t.interval_ns != 0 && t.interval_ns != given.of(t.index) {
                return Err(IntervalError::Contradicts {
                    thread: t.index,
                    said: fmt(t.interval_ns),
                    given: fmt(given.of(t.index)),
                });
            }
        }
        return Ok(());
    }
    rec.options.interval_ns = given.interval_ns;
    rec.options.distance_ns = given.distance_ns;
    for t in &mut rec.threads {
        t.interval_ns = given.of(t.index);
    }
    rec.source.unknown.retain(|u| *u != Unknowable::Interval);
    rec.warnings.push(if given.distance_ns == 0 || rec.threads.len() < 2 {
        format!(
            "the file does not say its interval: {} given with --interval",
            fmt(given.interval_ns)
        )
    } else {
        format!(
            "the file does not say its interval: {} for thread 0 and {} more for each next thread, given with --interval and --distance",
            fmt(given.interval_ns),
            fmt(given.distance_ns)
        )
    });
    Ok(())
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

/// Read `src` with `importer`, or with the format it looks like, as one
/// run (indentation, fences and quote markers of a paste removed first).
pub fn read(src: &Source, importer: Option<&'static Importer>) -> Result<RunRecord, ImportError> {
    let text = text::dedent(src.text);
    let src = Source {
        text: &text,
        ..*src
    };
    let imp = choose(&text, importer)?;
    read_as(&src, imp)
}

fn choose(
    text: &str,
    importer: Option<&'static Importer>,
) -> Result<&'static Importer, ImportError> {
    importer.or_else(|| detect(text)).ok_or_else(|| {
        ImportError::whole(format!(
            "not a format rtscope can read (expected one of: {}); name it with --format if it is one",
            names()
        ))
    })
}

fn read_as(src: &Source, imp: &'static Importer) -> Result<RunRecord, ImportError> {
    let mut rec = (imp.parse)(src)?;
    rec.admit()
        .map_err(|e| ImportError::whole(format!("read as {} but inconsistent: {e}", imp.name)))?;
    Ok(rec)
}

/// Where the second, third… run of a file starts (0-based lines), for
/// the formats that can hold several.
fn run_starts(format: &str, text: &str) -> Vec<usize> {
    match format {
        "cyclictest-summary" => cyclictest_summary::run_starts(text),
        "cyclictest-histfile" => histfile::run_starts(text),
        "xenomai-latency" => xenomai::run_starts(text),
        "rtla-timerlat" | "rtla-osnoise" => rtla_table::run_starts(text),
        "oslat" => oslat::run_starts(text),
        _ => Vec::new(),
    }
}

/// Every run `src` holds, each read on its own (its lines kept in place,
/// the others blanked) and tagged `part=N` when there are several; with
/// `--lenient`, lines a reader refuses are skipped and listed in the
/// record's warnings.
pub fn read_runs(
    src: &Source,
    importer: Option<&'static Importer>,
) -> Result<Vec<RunRecord>, ImportError> {
    let text = text::dedent(src.text);
    let imp = choose(&text, importer)?;
    let starts = run_starts(imp.name, &text);
    let mut bounds = vec![0];
    bounds.extend(&starts);
    bounds.push(usize::MAX);
    let mut out = Vec::with_capacity(bounds.len() - 1);
    for (k, w) in bounds.windows(2).enumerate() {
        let part: std::borrow::Cow<str> = if starts.is_empty() {
            std::borrow::Cow::Borrowed(&text)
        } else {
            std::borrow::Cow::Owned(text::part(&text, w[0], w[1]))
        };
        let (mut rec, skipped) = text::read_leniently(&part, src.options.lenient, |t| {
            read_as(&Source { text: t, ..*src }, imp)
        })
        .map_err(|e| in_part(e, k, starts.len()))?;
        rec.warnings.extend(skipped.iter().map(text::Skipped::note));
        if !starts.is_empty() {
            rec.tags.insert("part".into(), (k + 1).to_string());
            rec.warnings.push(format!(
                "the file holds {} runs: this is run {} of them, from line {}",
                starts.len() + 1,
                k + 1,
                w[0] + 1
            ));
        }
        out.push(rec);
    }
    Ok(out)
}

/// A refusal of part `k` of a file holding `more + 1` runs says which.
fn in_part(e: ImportError, k: usize, more: usize) -> ImportError {
    if more == 0 {
        return e;
    }
    ImportError {
        line: e.line,
        message: format!(
            "{} (in run {} of the {} the file holds)",
            e.message,
            k + 1,
            more + 1
        ),
    }
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

    fn file(name: &str, interval: Option<GivenInterval>) -> Result<Vec<RunRecord>, String> {
        let o = ImportOptions {
            interval,
            ..Default::default()
        };
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name);
        file::read_file(&path, None, &o, 1 << 30).map_err(|e| e.to_string())
    }

    #[test]
    fn a_given_interval_fills_what_the_file_left_unsaid_and_never_contradicts_it() {
        use crate::record::Unknowable;
        let hist = "tests/fixtures/import/cyclictest-2.7-hist.txt";
        let before = &file(hist, None).unwrap()[0];
        assert!(!before.knows(Unknowable::Interval));
        assert_eq!(before.deadline_ns(), None);
        let given = GivenInterval {
            interval_ns: 1_000_000,
            distance_ns: 500_000,
        };
        let r = &file(hist, Some(given)).unwrap()[0];
        assert!(r.knows(Unknowable::Interval));
        assert_eq!(r.deadline_ns(), Some(1_000_000));
        let periods: Vec<u64> = r.threads.iter().map(|t| t.interval_ns).collect();
        let want: Vec<u64> = (0..r.threads.len() as u64)
            .map(|i| 1_000_000 + i * 500_000)
            .collect();
        assert_eq!(periods, want);
        assert!(
            r.warnings.iter().any(|w| w.contains("--interval")),
            "{:?}",
            r.warnings
        );
        r.validate().unwrap();

        // A file that says its interval keeps it; another is refused.
        let json = "tests/fixtures/import/cyclictest-2.x-ns.json";
        let own = &file(json, None).unwrap()[0];
        assert!(own.knows(Unknowable::Interval));
        let same = GivenInterval {
            interval_ns: own.threads[0].interval_ns,
            distance_ns: own
                .threads
                .get(1)
                .map_or(0, |t| t.interval_ns - own.threads[0].interval_ns),
        };
        assert_eq!(&file(json, Some(same)).unwrap()[0], own);
        let other = GivenInterval {
            interval_ns: own.threads[0].interval_ns + 1000,
            distance_ns: 0,
        };
        let e = file(json, Some(other)).unwrap_err();
        assert!(e.contains("interval is") && e.contains("--interval"), "{e}");

        // oslat has no period.
        let e = file("tests/fixtures/import-formats/oslat.txt", Some(given)).unwrap_err();
        assert!(e.contains("no period"), "{e}");
    }

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

    fn runs(text: &str, lenient: bool) -> Result<Vec<RunRecord>, ImportError> {
        let o = ImportOptions {
            lenient,
            ..Default::default()
        };
        read_runs(
            &Source {
                path: Path::new("paste.md"),
                text,
                modified_unix_ns: Some(1_700_000_000_000_000_000),
                options: &o,
            },
            None,
        )
    }

    const RT: &str = "# /dev/cpu_dma_latency set to 0us\npolicy: fifo: loadavg: 0.10 0.20 0.30 1/90 100\n\nT: 0 ( 1001) P:99 I:1000 C:   5000 Min:      3 Act:    5 Avg:    6 Max:      21\nT: 1 ( 1002) P:99 I:1500 C:   3333 Min:      4 Act:    6 Avg:    7 Max:      25\n";
    const VANILLA: &str = "# /dev/cpu_dma_latency set to 0us\npolicy: fifo: loadavg: 0.10 0.20 0.30 1/90 100\n\nT: 0 ( 2001) P:99 I:1000 C:   5000 Min:      4 Act:   50 Avg:   60 Max:    4210\nT: 1 ( 2002) P:99 I:1500 C:   3333 Min:      5 Act:   60 Avg:   70 Max:    3825\n";

    #[test]
    fn two_status_blocks_under_two_headers_are_two_runs() {
        let text = format!("PREEMPT_RT:\n\n{RT}\nvanilla:\n\n{VANILLA}");
        let r = runs(&text, false).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].overall.max_ns, Some(25_000));
        assert_eq!(r[1].overall.max_ns, Some(4_210_000));
        assert_eq!(r[0].tags["part"], "1");
        assert_eq!(r[1].tags["part"], "2");
        assert_ne!(r[0].run_uuid, r[1].run_uuid);
        // Without the second header, thread 0's count falling back tells.
        let fallback = format!(
            "{RT}{}",
            VANILLA
                .replace("C:   5000", "C:   4000")
                .replace("# /dev/cpu_dma_latency set to 0us\n", "")
        );
        let r = runs(&fallback, false).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].threads[0].stats.samples, 4000);
        // Refreshes of one terminal (counts going up) stay one run.
        let refresh = format!(
            "{}{}",
            RT.replace("C:   5000", "C:   1000"),
            RT.replace("# /dev/cpu_dma_latency set to 0us\n", "")
        );
        let r = runs(&refresh, false).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].threads[0].stats.samples, 5000);
        assert!(!r[0].tags.contains_key("part"));
    }

    const HIST: &str = "# /dev/cpu_dma_latency set to 0us\n# Histogram\n000005 000002\n000007 000001\n# Min Latencies: 00005\n# Avg Latencies: 00009\n# Max Latencies: 00120\n# Histogram Overflows: 00003\n# Histogram Overflow at cycle number:\n# Thread 0: 00011 00012 00013\n";

    #[test]
    fn an_indented_quoted_or_fenced_histogram_is_read_whole() {
        let plain = &runs(HIST, false).unwrap()[0];
        assert_eq!(plain.overall.samples, 6);
        let indented: String = HIST.lines().map(|l| format!("    {l}\n")).collect();
        let quoted: String = HIST.lines().map(|l| format!("> {l}\n")).collect();
        let fenced = format!("Our board:\n\n```\n{HIST}```\n");
        for text in [indented, quoted, fenced] {
            assert!(detect(&text::dedent(&text)).is_some_and(|i| i.name == "cyclictest-histfile"));
            let r = runs(&text, false).unwrap();
            assert_eq!(r.len(), 1, "{text}");
            assert_eq!(r[0].overall.samples, 6, "overflows kept: {text}");
            assert_eq!(r[0].overall.max_ns, Some(120_000));
        }
    }

    #[test]
    fn two_histograms_and_two_xenomai_outputs_are_two_runs() {
        let two = format!("{HIST}\n{}", HIST.replace("00120", "00130"));
        let r = runs(&two, false).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].overall.max_ns, Some(130_000));
        let x = "== Sampling period: 100 us\n== Test mode: periodic user-mode task\nRTT|  00:00:01  (periodic user-mode task, 100 us period, priority 99)\nRTH|----lat min|----lat avg|----lat max|-overrun|---msw|---lat best|--lat worst\nRTD|      1.154|      2.000|      3.000|       0|     0|      1.154|      3.000\nRTS|      1.154|      2.000|      3.000|       0|     0|    00:00:01/00:00:01\n";
        let r = runs(&format!("{x}\n{}", x.replace("3.000", "9.876")), false).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].overall.min_ns, Some(1154));
        assert_eq!(r[1].overall.max_ns, Some(9876));
    }

    #[test]
    fn lenient_skips_a_cut_line_and_says_so_strict_refuses() {
        let x = "== Sampling period: 100 us\nRTD|      1.154|      2.000|      3.000|       0|     0|      1.154|      3.000\nRTD|      1.200|      2.100|\n      3.100|       0|     0|      1.154|      3.100\nRTD|      1.300|      2.200|      3.300|       0|     0|      1.154|      3.300\n";
        let e = runs(x, false).unwrap_err();
        assert_eq!(e.line, Some(3));
        let r = runs(x, true).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].threads[0].windows.count.len(), 2);
        assert!(
            r[0].warnings
                .iter()
                .any(|w| w.starts_with("line 3 skipped (--lenient): 'RTD|")),
            "{:?}",
            r[0].warnings
        );
    }

    #[test]
    fn the_hss_count_is_the_sample_count() {
        let x = "== Sampling period: 100 us\nRTD|      1.154|      2.000|      3.000|       0|     0|      1.154|      3.000\nRTS|      1.154|      2.000|      3.000|       0|     0|    00:00:01/00:00:01\nHSH|--param|--samples-|--average--|---stddev--\nHSS|    avg|      9998|      2.000|      0.100\n";
        let r = runs(x, false).unwrap();
        assert_eq!(r[0].overall.samples, 9998);
        assert_eq!(r[0].overall.min_ns, Some(1154));
    }
}
