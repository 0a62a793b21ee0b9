//! The gate every run record passes on the way in ([`RunRecord::admit`]:
//! each importer through `import::read`, and `record::from_json`): what
//! the histogram can tell is repaired with a note, and what the engine
//! could never have written is refused, naming the field and its value
//! (an id that is no run id, texts past their cap or with control
//! characters, tag keys no `--tag` gives, samples without threads,
//! summary counts the threads contradict, percentiles outside the
//! extremes). [`RunRecord::validate`], what every stored run must hold,
//! checks the percentiles; the texts and counts are checked here, on the
//! way in, so that a run stored by an older version (a label with a
//! control character, shown escaped by `text::for_terminal`) stays
//! readable.

use super::{InvalidRecord, LatencyStats, RunRecord, StatsError};
use crate::histogram::Histogram;

/// The most bytes a label, a tag value, a host name or a kernel release
/// may hold (the engine never writes more).
pub const TEXT_MAX_BYTES: usize = 4096;
/// The most bytes a tag key may hold.
pub const TAG_KEY_MAX_BYTES: usize = 255;

impl RunRecord {
    /// Repair what the histograms can tell (each repair noted in
    /// `warnings`), then [`RunRecord::validate`]: the one check a record
    /// passes before any reader sees it. Returns the notes.
    pub fn admit(&mut self) -> Result<Vec<String>, InvalidRecord> {
        let notes = self.repair();
        self.check_texts()?;
        self.check_counts()?;
        self.validate()?;
        self.warnings.extend(notes.iter().cloned());
        Ok(notes)
    }

    /// Extremes no sample of the histogram can have: a min above every
    /// bucket (without overflows) or a max below every bucket, where the
    /// min and max do not contradict each other (a min above the max is
    /// refused: the source contradicts itself). The histogram counts every
    /// sample, a stated extreme is one number: the histogram is taken as
    /// truth, and the quantiles are drawn again.
    fn repair(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        for t in &mut self.threads {
            let Ok(h) = t.histogram.to_histogram() else {
                continue; // refused by validate
            };
            let part = format!("thread {}", t.index);
            repair_stats(&part, &mut t.stats, &h, &mut notes);
        }
        if let Ok(h) = self.overall_histogram() {
            repair_stats("the all-threads summary", &mut self.overall, &h, &mut notes);
        }
        notes
    }

    /// The texts a record carries from outside: ids, label, tags, host.
    pub(super) fn check_texts(&self) -> Result<(), InvalidRecord> {
        if !is_run_id(&self.run_uuid) {
            return Err(InvalidRecord::Field {
                field: "run_uuid".into(),
                why: format!(
                    "{} is not a run id (32 hex digits, or a UUID's 8-4-4-4-12)",
                    shown(&self.run_uuid)
                ),
            });
        }
        if let Some(label) = &self.label {
            check_text("label", label)?;
        }
        for (k, v) in &self.tags {
            let bad_key = k.is_empty()
                || k.len() > TAG_KEY_MAX_BYTES
                || k.chars().any(|c| c.is_whitespace() || c.is_control());
            if bad_key {
                return Err(InvalidRecord::Field {
                    field: "tags".into(),
                    why: format!(
                        "key {} is not a tag key (1 to {TAG_KEY_MAX_BYTES} bytes, no spaces or control characters)",
                        shown(k)
                    ),
                });
            }
            check_text(&format!("tags.{k}"), v)?;
        }
        check_text("fingerprint.hostname", &self.fingerprint.hostname)?;
        check_text(
            "fingerprint.kernel_release",
            &self.fingerprint.kernel_release,
        )
    }

    /// The all-threads summary against its threads: no samples without a
    /// thread, and the counts it adds up are the threads' sums.
    pub(super) fn check_counts(&self) -> Result<(), InvalidRecord> {
        if self.threads.is_empty() && self.overall.samples > 0 {
            return Err(InvalidRecord::Field {
                field: "overall.samples".into(),
                why: format!(
                    "{} samples but the record has no threads",
                    self.overall.samples
                ),
            });
        }
        let fields: [(&str, fn(&LatencyStats) -> u64); 3] = [
            ("samples", |s| s.samples),
            ("wakeups", |s| s.wakeups),
            ("missed_periods", |s| s.missed_periods),
        ];
        for (name, of) in fields {
            let sum = self
                .threads
                .iter()
                .try_fold(0u64, |a, t| a.checked_add(of(&t.stats)));
            let overall = of(&self.overall);
            if sum != Some(overall) {
                let threads =
                    sum.map_or_else(|| format!("more than {}", u64::MAX), |s| s.to_string());
                return Err(InvalidRecord::Field {
                    field: format!("overall.{name}"),
                    why: format!("{overall}, but the threads' {name} add up to {threads}"),
                });
            }
        }
        Ok(())
    }
}

/// The percentiles of `s` within its extremes (`part` names it).
pub(super) fn check_quantiles(s: &LatencyStats) -> Result<(), StatsError> {
    let named = [
        ("p50_ns", s.p50_ns),
        ("p90_ns", s.p90_ns),
        ("p99_ns", s.p99_ns),
        ("p999_ns", s.p999_ns),
        ("p9999_ns", s.p9999_ns),
    ];
    for (name, v) in named {
        let Some(value_ns) = v else { continue };
        if let Some(max_ns) = s.max_ns
            && value_ns > max_ns
        {
            return Err(StatsError::QuantileAboveMax {
                name,
                value_ns,
                max_ns,
            });
        }
        if let Some(min_ns) = s.min_ns
            && value_ns < min_ns
        {
            return Err(StatsError::QuantileBelowMin {
                name,
                value_ns,
                min_ns,
            });
        }
    }
    Ok(())
}

/// One stats' extremes against its histogram `h` (see
/// [`RunRecord::repair`]).
fn repair_stats(part: &str, s: &mut LatencyStats, h: &Histogram, notes: &mut Vec<String>) {
    let buckets: Vec<(u64, u64, u64)> = h.iter_buckets().collect();
    let (Some(first), Some(last)) = (buckets.first(), buckets.last()) else {
        return;
    };
    let (lo, hi) = (first.0, last.1);
    let overflows = s.overflow.is_some_and(|o| o.count > 0);
    if let (Some(min), Some(max)) = (s.min_ns, s.max_ns)
        && min > max
    {
        return;
    }
    let mut repaired = false;
    if let Some(min) = s.min_ns
        && min > hi
        && !overflows
    {
        notes.push(format!(
            "{part}: its min ({min} ns) is above every sample of its histogram (the highest up to {hi} ns): the histogram's lowest ({lo} ns) is taken as the min"
        ));
        s.min_ns = Some(lo);
        s.min_at = None;
        repaired = true;
    }
    if let Some(max) = s.max_ns
        && max < lo
    {
        notes.push(format!(
            "{part}: its max ({max} ns) is below every sample of its histogram (the lowest from {lo} ns): the histogram's highest (up to {hi} ns) is taken as the max"
        ));
        s.max_ns = Some(hi);
        s.max_at = None;
        repaired = true;
    }
    if repaired {
        s.fill_quantiles(h);
    }
}

/// 32 hex digits (what rtscope writes), or a UUID's hyphenated form.
fn is_run_id(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    if hex(s, 32) {
        return true;
    }
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5 && parts.iter().zip([8, 4, 4, 4, 12]).all(|(p, n)| hex(p, n))
}

/// Whether a record keeps `text` (a label, a tag value, a host, a
/// kernel): at most [`TEXT_MAX_BYTES`], no control character. The one
/// rule: [`check_text`] says why not, `measure --label` refuses before
/// measuring.
pub fn is_kept_text(text: &str) -> bool {
    text.len() <= TEXT_MAX_BYTES && !text.chars().any(char::is_control)
}

/// A text a person gave or a system said: bounded, no control characters.
fn check_text(field: &str, text: &str) -> Result<(), InvalidRecord> {
    let why = if is_kept_text(text) {
        return Ok(());
    } else if text.len() > TEXT_MAX_BYTES {
        format!(
            "{} is {} bytes long (at most {TEXT_MAX_BYTES})",
            shown(text),
            text.len()
        )
    } else {
        format!("{} holds a control character", shown(text))
    };
    Err(InvalidRecord::Field {
        field: field.into(),
        why,
    })
}

/// A value quoted in a message: escaped, and cut after 40 characters.
fn shown(text: &str) -> String {
    let n = text.chars().count();
    let head: String = text.chars().take(40).collect();
    if n > 40 {
        format!("{:?}… ({n} characters)", head)
    } else {
        format!("{head:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{from_json, synthetic};

    fn refused(rec: &RunRecord) -> String {
        rec.clone().admit().unwrap_err().to_string()
    }

    #[test]
    fn texts_the_engine_never_writes_are_refused_naming_the_field() {
        let rec = synthetic(&[vec![1000, 2000]]);
        assert!(rec.clone().admit().unwrap().is_empty());
        let cases: Vec<(Box<dyn Fn(&mut RunRecord)>, &str)> = vec![
            (
                Box::new(|r| r.run_uuid = "../../etc/passwd".into()),
                "run_uuid",
            ),
            (
                Box::new(|r| r.run_uuid = "a".repeat(100_000)),
                "100000 characters",
            ),
            (Box::new(|r| r.label = Some("x".repeat(5 << 20))), "label"),
            (Box::new(|r| r.label = Some("a\u{1b}[2J".into())), "control"),
            (
                Box::new(|r| drop(r.tags.insert("".into(), "v".into()))),
                "tags",
            ),
            (
                Box::new(|r| drop(r.tags.insert("a b".into(), "v".into()))),
                "\"a b\"",
            ),
            (
                Box::new(|r| drop(r.tags.insert("k\0".into(), "v".into()))),
                "tags",
            ),
            (
                Box::new(|r| drop(r.tags.insert("k".into(), "v\n".into()))),
                "tags.k",
            ),
            (
                Box::new(|r| r.fingerprint.hostname = "h".repeat(5000)),
                "fingerprint.hostname",
            ),
        ];
        for (edit, field) in cases {
            let mut r = rec.clone();
            edit(&mut r);
            let e = refused(&r);
            assert!(e.contains(field), "{field}: {e}");
            assert!(e.len() < 300, "{e}");
        }
        let mut r = rec.clone();
        r.run_uuid = "0c2a8e6e-3c2e-4b8f-9a51-4f0a1a2b3c4d".into();
        r.tags.insert("a.b-c_d".into(), "x y".into());
        r.admit().unwrap();
    }

    #[test]
    fn counts_and_percentiles_that_contradict_are_refused() {
        let rec = synthetic(&[vec![1000, 2000], vec![3000]]);
        let mut r = rec.clone();
        r.threads.clear();
        assert!(refused(&r).contains("overall.samples"), "{}", refused(&r));
        let mut r = rec.clone();
        r.overall.missed_periods = 4;
        r.threads[0].stats.missed_periods = u64::MAX;
        r.threads[1].stats.missed_periods = 4;
        let e = refused(&r);
        assert!(
            e.contains("overall.missed_periods") && e.contains("more than"),
            "{e}"
        );
        let mut r = rec.clone();
        r.overall.p9999_ns = Some(u64::MAX);
        let e = refused(&r);
        assert!(e.contains("p9999_ns") && e.contains("above its max"), "{e}");
        let mut r = rec.clone();
        r.threads[1].stats.p50_ns = Some(10);
        let e = refused(&r);
        assert!(e.contains("thread 1") && e.contains("below its min"), "{e}");
    }

    #[test]
    fn a_min_above_every_bucket_is_repaired_from_the_histogram() {
        let mut rec = synthetic(&[vec![5_000, 15_000, 35_000]]);
        for s in [&mut rec.threads[0].stats, &mut rec.overall] {
            s.min_ns = Some(37_000);
            s.max_ns = None;
            s.p50_ns = Some(37_000);
        }
        let notes = rec.admit().unwrap();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("min (37000 ns)"), "{notes:?}");
        assert_eq!(rec.threads[0].stats.min_ns, Some(5_000));
        assert_eq!(rec.overall.min_ns, Some(5_000));
        assert!(rec.threads[0].stats.p50_ns < Some(37_000));
        assert!(rec.warnings.iter().any(|w| w.contains("taken as the min")));
        // Once repaired, the record is admitted as it is.
        let text = serde_json::to_string(&rec).unwrap();
        assert_eq!(from_json(&text).unwrap(), rec);
    }
}
