//! One cyclictest run written twice — `--json FILE` and `-h`/`--histfile`
//! — read as one record: the JSON gives the facts (command line, times,
//! kernel, host, precise averages), the histogram file the histogram.
//! Two records are one run when they are of these two formats and every
//! thread has the same count, minimum and maximum (the histogram file
//! holds no command line or time to compare). Pure: no files, no store.

use super::build::content_uuid;
use crate::record::{LatencyStats, RunRecord};

const JSON: &str = "cyclictest-json";
const HISTFILE: &str = "cyclictest-histfile";

fn format(rec: &RunRecord) -> &str {
    rec.source.format.as_deref().unwrap_or("")
}

/// Whether `a` and `b` are the JSON and the histogram file of one
/// cyclictest run (in either order).
pub fn same_run(a: &RunRecord, b: &RunRecord) -> bool {
    let pair = (format(a), format(b));
    if pair != (JSON, HISTFILE) && pair != (HISTFILE, JSON) {
        return false;
    }
    !a.threads.is_empty()
        && a.threads.len() == b.threads.len()
        && a.threads.iter().zip(&b.threads).all(|(x, y)| {
            let (x, y) = (&x.stats, &y.stats);
            x.samples == y.samples
                && x.samples > 0
                && x.min_ns == y.min_ns
                && x.max_ns == y.max_ns
                && x.min_ns.is_some()
        })
}

/// The one record of `a` and `b` (see [`same_run`]): the JSON's, with
/// the histogram file's histograms where the JSON has none.
pub fn join(a: RunRecord, b: RunRecord) -> RunRecord {
    let (mut json, hist) = if format(&a) == JSON { (a, b) } else { (b, a) };
    let mut took = false;
    let mut parts = Vec::with_capacity(json.threads.len());
    for (t, h) in json.threads.iter_mut().zip(&hist.threads) {
        if t.histogram.buckets.is_empty() && !h.histogram.buckets.is_empty() {
            t.histogram = h.histogram.clone();
            took = true;
        }
        let histogram = t
            .histogram
            .to_histogram()
            .unwrap_or_else(|_| crate::histogram::Histogram::latency());
        t.stats.fill_quantiles(&histogram);
        parts.push(histogram);
    }
    if took {
        json.warnings.retain(|w| !w.contains("has no histogram"));
        let stats: Vec<(&LatencyStats, &_)> = json
            .threads
            .iter()
            .map(|t| &t.stats)
            .zip(parts.iter())
            .collect();
        let missed = json.overall.missed_periods;
        json.overall = LatencyStats::combine(&stats).0;
        json.overall.missed_periods = missed;
    }
    // What the histogram file could not say (when, how long) the JSON
    // says.
    for w in &hist.warnings {
        if !w.starts_with("the source does not say") && !json.warnings.contains(w) {
            json.warnings.push(w.clone());
        }
    }
    let files = [&json.source.file, &hist.source.file]
        .iter()
        .filter_map(|f| f.as_deref())
        .collect::<Vec<_>>()
        .join(" + ");
    json.warnings.push(format!(
        "one cyclictest run read from its JSON and its histogram file ({files}): same threads, counts, minima and maxima"
    ));
    json.run_uuid = content_uuid("join", &format!("{}+{}", json.run_uuid, hist.run_uuid));
    json.source.file = Some(files);
    json
}

/// `records` with every unambiguous pair of one run joined (a record
/// with exactly one partner, which has exactly one partner too); the
/// notes say which were joined.
pub fn join_all<P: AsRef<std::path::Path> + From<String>>(
    records: Vec<(P, RunRecord)>,
) -> (Vec<(P, RunRecord)>, Vec<String>) {
    let partners = |i: usize| -> Vec<usize> {
        (0..records.len())
            .filter(|&j| j != i && same_run(&records[i].1, &records[j].1))
            .collect()
    };
    let mut pair_of = vec![None; records.len()];
    for i in 0..records.len() {
        if let [j] = partners(i)[..]
            && partners(j) == [i]
        {
            pair_of[i] = Some(j);
        }
    }
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut slots: Vec<Option<(P, RunRecord)>> = records.into_iter().map(Some).collect();
    for i in 0..slots.len() {
        let Some((path, rec)) = slots[i].take() else {
            continue;
        };
        match pair_of[i].and_then(|j| slots[j].take().map(|p| (j, p))) {
            Some((_, (other_path, other))) => {
                let (a, b) = (path.as_ref().display(), other_path.as_ref().display());
                notes.push(format!(
                    "{a} and {b} are one cyclictest run (its JSON and its histogram file: same threads, counts, minima and maxima): joined into one record"
                ));
                out.push((P::from(format!("{a} + {b}")), join(rec, other)));
            }
            None => out.push((path, rec)),
        }
    }
    (out, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{ImportOptions, Source};
    use std::path::{Path, PathBuf};

    const HIST: &str = "# Histogram\n000005 000002\n000007 000001\n# Min Latencies: 00005\n# Avg Latencies: 00029\n# Max Latencies: 00120\n# Histogram Overflows: 00003\n";
    const JSON: &str = r#"{"file_version": 1, "cmdline": "cyclictest -m -p 90 -i 1000 -l 6 -t 1 -h 8", "start_time": "Tue, 05 Mar 2024 10:15:02 +0100", "end_time": "Tue, 05 Mar 2024 10:15:03 +0100", "num_threads": 1, "thread": {"0": {"cycles": 6, "min": 5, "max": 120, "avg": 29.33, "cpu": 0}}}"#;

    fn read(path: &str, text: &str) -> RunRecord {
        let o = ImportOptions::default();
        crate::import::read(
            &Source {
                path: Path::new(path),
                text,
                modified_unix_ns: Some(1_700_000_000_000_000_000),
                options: &o,
            },
            None,
        )
        .unwrap()
    }

    #[test]
    fn the_json_and_the_histogram_of_one_run_become_one_record() {
        let (j, h) = (read("run.json", JSON), read("run.hist", HIST));
        assert!(same_run(&j, &h) && same_run(&h, &j));
        assert!(!same_run(&h, &h), "two histogram files are not a pair");
        let one = join(h.clone(), j.clone());
        one.validate().unwrap();
        assert_eq!(one.source.command_line, j.source.command_line);
        assert_eq!(one.started_at_unix_ns, j.started_at_unix_ns);
        assert_eq!(one.threads[0].histogram, h.threads[0].histogram);
        assert_eq!(one.threads[0].stats.avg_ns, Some(29_330.0));
        assert!(one.overall.p99_ns.is_some(), "quantiles from the histogram");
        assert!(!one.warnings.iter().any(|w| w.contains("does not say")));
        assert_ne!(one.run_uuid, j.run_uuid);
        // Another maximum: another run.
        let other = read("b.hist", &HIST.replace("00120", "00121"));
        assert!(!same_run(&j, &other));
    }

    #[test]
    fn only_unambiguous_pairs_are_joined() {
        let r = |p: &str, t: &str| (PathBuf::from(p), read(p, t));
        let (out, notes) = join_all(vec![r("a.json", JSON), r("a.hist", HIST)]);
        assert_eq!((out.len(), notes.len()), (1, 1));
        assert_eq!(out[0].0, PathBuf::from("a.json + a.hist"));
        let copy = HIST.replace("# Histogram\n", "# Histogram\n\n");
        let (out, notes) = join_all(vec![
            r("a.json", JSON),
            r("a.hist", HIST),
            r("b.hist", &copy),
        ]);
        assert_eq!(
            (out.len(), notes.len()),
            (3, 0),
            "two candidates: none joined"
        );
    }
}
