//! Property tests of every reader of files that come from elsewhere: each
//! importer, and the run-record reader (`record::from_json`, used by
//! `report`, `plot`, `compare` and `import`). Arbitrary mutations of real
//! files, and arbitrary text, must give a record or a typed refusal, never
//! a panic; an accepted record must pass the record's validation
//! (`RunRecord::validate`) and then go through everything that shows it
//! (summary, verdict, histfile, CSV, comparison, the HTML report and every
//! plot kind) without one either.
//!
//! Cases per property: `PROPTEST_CASES` (default 256, so `make test` stays
//! fast); `make fuzz FUZZ_CASES=N` runs them longer. Test names start
//! with `fuzz_` so that target can pick them out.

use super::{IMPORTERS, ImportOptions, Source};
use crate::record::{self, ReadError, RunRecord};
use crate::report::plot::{Size, data as plot_data, svg as plot_svg};
use crate::report::{NamedRun, compare, csv, histfile, html, summary, verdict};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestRunner};
use std::path::Path;

/// Files in the formats we read: the fixtures, and the layouts no fixture
/// has (cyclictest's summary lines, its JSON with trailing-colon keys, a
/// record written by `--json`).
fn corpus() -> Vec<(&'static str, String)> {
    let ns_json = include_str!("../../tests/fixtures/import/cyclictest-2.x-ns.json");
    let mut out: Vec<(&'static str, String)> = vec![
        (
            "cyclictest-histfile",
            include_str!("../../tests/fixtures/import/cyclictest-2.4-histofall.txt").into(),
        ),
        (
            "cyclictest-histfile",
            include_str!("../../tests/fixtures/import/cyclictest-2.7-hist.txt").into(),
        ),
        (
            "cyclictest-histfile",
            include_str!("../../tests/fixtures/import/cyclictest-old-hist.txt").into(),
        ),
        ("cyclictest-json", ns_json.into()),
        (
            "cyclictest-json",
            ns_json
                .replace("\"cmdline\"", "\"cmdline:\"")
                .replace("\"resolution_in_ns\": 1", "\"resolution_in_ns\": 0"),
        ),
        (
            "xenomai-latency",
            include_str!("../../tests/fixtures/import/xenomai-latency.txt").into(),
        ),
        (
            "xenomai-latency",
            include_str!("../../tests/fixtures/import/evl-latmus.txt").into(),
        ),
        (
            "cyclictest-summary",
            "# /dev/cpu_dma_latency set to 0us\n\
             policy: fifo: loadavg: 0.10 0.05 0.01 1/123 4567\n\n\
             T: 0 ( 1234) P:95 I:1000 C:  10000 Min:      3 Act:    5 Avg:    4 Max:      21\n\
             T: 1 ( 1235) P:95 I:1500 C:   6667 Min:      4 Act:    6 Avg:    5 Max:      33\n"
                .into(),
        ),
        (
            "rtla-timerlat",
            include_str!("../../tests/fixtures/import-formats/timerlat-hist-u.txt").into(),
        ),
        (
            "rtla-timerlat",
            include_str!("../../tests/fixtures/import-formats/timerlat-top.txt").into(),
        ),
        (
            "rtla-osnoise",
            include_str!("../../tests/fixtures/import-formats/osnoise-hist.txt").into(),
        ),
        (
            "rtla-osnoise",
            include_str!("../../tests/fixtures/import-formats/osnoise-top.txt").into(),
        ),
        (
            "oslat",
            include_str!("../../tests/fixtures/import-formats/oslat.txt").into(),
        ),
        (
            "oslat",
            include_str!("../../tests/fixtures/import-formats/oslat.json").into(),
        ),
        ("rtla-osnoise", osnoise_min_above_buckets()),
        ("oslat", oslat_min_above_buckets()),
        (
            "jitterdebugger",
            include_str!("../../tests/fixtures/import-formats/jitterdebugger-results.json").into(),
        ),
        (
            "rtscope-run",
            include_str!("../../tests/fixtures/store/v1-run2.json").into(),
        ),
    ];
    let mut rec = record::synthetic(&[vec![3_000, 4_500, 19_000, 7_250], vec![5_100, 60_000]]);
    rec.threads[0].windows.push(crate::record::WindowPoint {
        count: 4,
        min_ns: 3_000,
        avg_ns: 8_437,
        max_ns: 19_000,
        p99_ns: 19_000,
        missed: 0,
    });
    out.push((
        "rtscope-run",
        serde_json::to_string_pretty(&rec).expect("a record serializes"),
    ));
    out
}

/// An rtla osnoise histogram whose CPU 0 min (37 µs) is above its last
/// bucket (30) and which has no max line: accepted, it once panicked the
/// exceedance figure (report, plot, serve).
fn osnoise_min_above_buckets() -> String {
    include_str!("../../tests/fixtures/import-formats/osnoise-hist.txt")
        .replace("min:          0         0", "min:         37         0")
        .replace("avg:          6         5", "avg:         40         5")
        .lines()
        .filter(|l| !l.starts_with("max:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// An oslat JSON whose thread min (6165 µs) is above every bucket of its
/// histogram (from 1 µs), without a max: the same panic.
fn oslat_min_above_buckets() -> String {
    include_str!("../../tests/fixtures/import-formats/oslat.json")
        .replace("\"min\": 1,", "\"min\": 6165,")
        .replace("\"avg\": 1.008961,", "\"avg\": 7000.5,")
        .replace("\"max\": 12293,\n", "")
}

/// Text that is likely to break a reader when dropped somewhere.
const TOKENS: &[&str] = &[
    "0",
    "-1",
    "1",
    "9",
    "00",
    "-",
    "+",
    ".",
    "e",
    "1e308",
    "-0.5",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "NaN",
    " ",
    "\t",
    "\n",
    "\r\n",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "null",
    "true",
    "#",
    "# Total:",
    "# Min Latencies:",
    "# Max Latencies:",
    "# Histogram Overflows:",
    "# Thread 0:",
    "T: 0 ( 1) P:95 I:1000 C: 5 Min: 9 Act: 1 Avg: 2 Max: 0",
    "RTD|",
    "RTS|",
    "HSD|",
    "\"min\": ",
    "\"max\": ",
    "\"cycles\": ",
    "\"histogram\": {\"0\": 1}",
    "é",
];

/// One edit of a text.
#[derive(Clone, Debug)]
enum Edit {
    /// Remove up to `len` characters at a place.
    Delete(Index, usize),
    /// Insert a token at a place.
    Insert(Index, usize),
    /// Replace the character at a place with a token.
    Replace(Index, usize),
    /// Change a digit at a place (the next digit from there).
    Digit(Index, u8),
    /// Replace the next whole number from a place with another: figures
    /// that contradict each other (a min above the max) come from here.
    Number(Index, u64),
    /// Repeat the line at a place.
    DuplicateLine(Index),
    /// Cut the text at a place (a file written half-way).
    Truncate(Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    let tok = 0..TOKENS.len();
    prop_oneof![
        (any::<Index>(), 1usize..40).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<Index>(), tok.clone()).prop_map(|(i, t)| Edit::Insert(i, t)),
        (any::<Index>(), tok).prop_map(|(i, t)| Edit::Replace(i, t)),
        (any::<Index>(), 0u8..10).prop_map(|(i, d)| Edit::Digit(i, d)),
        (
            any::<Index>(),
            prop_oneof![0u64..100, 0u64..100_000, any::<u64>()]
        )
            .prop_map(|(i, v)| Edit::Number(i, v)),
        any::<Index>().prop_map(Edit::DuplicateLine),
        any::<Index>().prop_map(Edit::Truncate),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut c: Vec<char> = text.chars().collect();
    for e in edits {
        let at = |i: &Index, len: usize| if len == 0 { 0 } else { i.index(len) };
        match e {
            Edit::Delete(i, n) => {
                let p = at(i, c.len());
                let end = (p + n).min(c.len());
                c.drain(p..end);
            }
            Edit::Insert(i, t) => {
                let p = at(i, c.len() + 1);
                c.splice(p..p, TOKENS[*t].chars());
            }
            Edit::Replace(i, t) => {
                if !c.is_empty() {
                    let p = at(i, c.len());
                    c.splice(p..p + 1, TOKENS[*t].chars());
                }
            }
            Edit::Digit(i, d) => {
                let p = at(i, c.len());
                if let Some(q) = (p..c.len()).find(|&q| c[q].is_ascii_digit()) {
                    c[q] = char::from(b'0' + d);
                }
            }
            Edit::Number(i, v) => {
                let p = at(i, c.len());
                if let Some(q) = (p..c.len()).find(|&q| c[q].is_ascii_digit()) {
                    let end = (q..c.len())
                        .find(|&e| !c[e].is_ascii_digit())
                        .unwrap_or(c.len());
                    c.splice(q..end, v.to_string().chars());
                }
            }
            Edit::DuplicateLine(i) => {
                let p = at(i, c.len());
                let start = c[..p].iter().rposition(|&x| x == '\n').map_or(0, |s| s + 1);
                let end = c[p..]
                    .iter()
                    .position(|&x| x == '\n')
                    .map_or(c.len(), |e| p + e + 1);
                let line: Vec<char> = c[start..end].to_vec();
                c.splice(end..end, line);
            }
            Edit::Truncate(i) => {
                let p = at(i, c.len() + 1);
                c.truncate(p);
            }
        }
    }
    c.into_iter().collect()
}

fn runner() -> TestRunner {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

/// Everything that shows an accepted record must take it.
fn show(rec: &RunRecord) {
    let _ = summary::render(rec);
    let _ = verdict::verdict(rec);
    let _ = verdict::status_line(rec);
    let _ = histfile::render(rec, 200, true);
    for table in [
        csv::Table::Summary,
        csv::Table::Histogram,
        csv::Table::Windows,
    ] {
        let _ = csv::render(rec, table);
    }
    let named = NamedRun {
        name: "a".into(),
        reference: "a".into(),
        record: rec.clone(),
    };
    for m in crate::record::METRICS {
        if let Ok(c) = compare::compare(&named, &named, m) {
            let _ = c.render(&named, &named);
        }
    }
    let _ = html::render(std::slice::from_ref(&named), None);
    plots(rec);
}

/// Every kind of `rtscope plot` (hist, exceedance, timeline) of the run
/// alone and of the run beside itself, drawn.
fn plots(rec: &RunRecord) {
    let two = [("a", rec), ("b", rec)];
    let figures = [
        plot_data::hist_run(rec, "t").ok(),
        plot_data::hist_runs(&two, "t").ok(),
        plot_data::exceedance_run(rec, "t").ok(),
        plot_data::exceedance_runs(&two, "t").ok(),
        plot_data::timeline_run(rec, "t"),
        plot_data::timeline_runs(&two, "t"),
    ];
    for fig in figures.iter().flatten() {
        let _ = plot_svg::render(fig, Size::REPORT);
    }
}

/// Read `text` with the importer called `format` (or the one detection
/// picks); an accepted record is valid and can be shown.
fn import(text: &str, format: Option<&str>) {
    let options = ImportOptions::default();
    let ns = ImportOptions {
        summary_unit_ns: 1,
        ..Default::default()
    };
    for options in [&options, &ns] {
        let src = Source {
            path: Path::new("fuzzed"),
            text,
            modified_unix_ns: Some(1_700_000_000_000_000_000),
            options,
        };
        let imp = format.map(|f| super::by_name(f).expect("a registered format"));
        if let Ok(rec) = super::read(&src, imp) {
            rec.validate().expect("read() returns valid records");
            show(&rec);
        }
        // Every run of the file, skipping lines leniently: valid too.
        let lenient = ImportOptions {
            lenient: true,
            ..options.clone()
        };
        let src = Source {
            options: &lenient,
            ..src
        };
        for rec in super::read_runs(&src, imp).unwrap_or_default() {
            rec.validate().expect("read_runs() returns valid records");
        }
    }
}

fn check_mutations(format: &'static str) {
    let files: Vec<String> = corpus()
        .into_iter()
        .filter(|(f, _)| *f == format)
        .map(|(_, t)| t)
        .collect();
    assert!(!files.is_empty(), "no file in the corpus for {format}");
    // The unmutated files are read as what they are.
    for f in &files {
        let src = Source {
            path: Path::new("fixture"),
            text: f,
            modified_unix_ns: None,
            options: &ImportOptions::default(),
        };
        let imp = super::by_name(format).expect("a registered format");
        if let Err(e) = super::read(&src, Some(imp)) {
            panic!("{format}: a corpus file is refused: {e}");
        }
    }
    let n = files.len();
    runner()
        .run(
            &(0..n, prop::collection::vec(edit(), 1..5)),
            |(k, edits)| {
                let text = apply(&files[k], &edits);
                import(&text, Some(format));
                import(&text, None);
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn fuzz_cyclictest_histfile_never_panics() {
    check_mutations("cyclictest-histfile");
}

#[test]
fn fuzz_cyclictest_summary_never_panics() {
    check_mutations("cyclictest-summary");
}

#[test]
fn fuzz_cyclictest_json_never_panics() {
    check_mutations("cyclictest-json");
}

#[test]
fn fuzz_xenomai_never_panics() {
    check_mutations("xenomai-latency");
}

#[test]
fn fuzz_rtla_timerlat_never_panics() {
    check_mutations("rtla-timerlat");
}

#[test]
fn fuzz_rtla_osnoise_never_panics() {
    check_mutations("rtla-osnoise");
}

#[test]
fn fuzz_oslat_never_panics() {
    check_mutations("oslat");
}

#[test]
fn fuzz_jitterdebugger_never_panics() {
    check_mutations("jitterdebugger");
}

#[test]
fn fuzz_rtscope_run_import_never_panics() {
    check_mutations("rtscope-run");
}

/// The run-record reader of `report`, `plot` and `compare`: a mutated
/// record is a record it checked, or a typed refusal.
#[test]
fn fuzz_run_record_reader_never_panics() {
    let files: Vec<String> = corpus()
        .into_iter()
        .filter(|(f, _)| *f == "rtscope-run")
        .map(|(_, t)| t)
        .collect();
    let n = files.len();
    runner()
        .run(
            &(0..n, prop::collection::vec(edit(), 1..5)),
            |(k, edits)| {
                let text = apply(&files[k], &edits);
                match record::from_json(&text) {
                    Ok(rec) => show(&rec),
                    Err(ReadError::Json { .. } | ReadError::Invalid(_)) => {}
                }
                Ok(())
            },
        )
        .unwrap();
}

/// Any text at all, to every reader and to detection.
#[test]
fn fuzz_arbitrary_text_never_panics() {
    let formats: Vec<&'static str> = IMPORTERS.iter().map(|i| i.name).collect();
    runner()
        .run(&"\\PC{0,400}", |text| {
            for f in &formats {
                import(&text, Some(f));
            }
            import(&text, None);
            let _ = record::from_json(&text);
            Ok(())
        })
        .unwrap();
}
