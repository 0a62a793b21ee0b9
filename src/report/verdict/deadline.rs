//! Whether a run met its deadline: the user's (`--deadline`, recorded in
//! `limits.deadline_ns`), else the period, past which a wake-up has
//! missed its next deadline. The periods beyond it are counted from the
//! threads' lossless histograms: a bucket wholly above the deadline counts
//! for certain, a bucket that straddles it (or a source's resolution that
//! does) may count, so the count is "N" or "N to M", never a guess. A run
//! whose deadline is unknown (an import without its interval) says so.
//! Pure functions of the record.

use crate::record::{RunRecord, ThreadRecord, Unknowable};
use crate::text::num;

/// The deadline a run is judged against, and where it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deadline {
    /// No `--deadline`: the period.
    Period(u64),
    /// The user's `--deadline`.
    Yours(u64),
    /// Neither: the source did not record its period.
    Unknown,
}

impl Deadline {
    pub fn of(run: &RunRecord) -> Deadline {
        match (run.limits.deadline_ns, run.deadline_ns()) {
            (Some(d), _) => Deadline::Yours(d),
            (None, Some(p)) => Deadline::Period(p),
            (None, None) => Deadline::Unknown,
        }
    }

    pub fn ns(self) -> Option<u64> {
        match self {
            Deadline::Period(d) | Deadline::Yours(d) => Some(d),
            Deadline::Unknown => None,
        }
    }

    /// "the period, 1 ms", "yours, 500 µs" or "unknown".
    pub fn describe(self) -> String {
        match self {
            Deadline::Period(d) => format!("the period, {}", num::period(d)),
            Deadline::Yours(d) => format!("yours, {}", num::period(d)),
            Deadline::Unknown => "unknown".into(),
        }
    }

    /// "this 1 ms period", "your 500 µs deadline".
    fn this(self) -> String {
        match self {
            Deadline::Period(d) => format!("this {} period", num::period(d)),
            Deadline::Yours(d) => format!("your {} deadline", num::period(d)),
            Deadline::Unknown => "an unknown deadline".into(),
        }
    }
}

/// Periods later than a deadline, from the histograms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Beyond {
    /// Periods certainly later than the deadline.
    pub certain: u64,
    /// Periods that may be (the certain ones included): their bucket, or
    /// the source's resolution, straddles the deadline.
    pub at_most: u64,
    /// Periods in the histograms.
    pub samples: u64,
}

/// The periods of `run` later than `deadline_ns`; `None` when a histogram
/// cannot be read.
pub fn beyond(run: &RunRecord, deadline_ns: u64) -> Option<Beyond> {
    let mut b = Beyond {
        certain: 0,
        at_most: 0,
        samples: 0,
    };
    for t in &run.threads {
        let (certain, at_most, samples) = beyond_thread(t, deadline_ns)?;
        b.certain += certain;
        b.at_most += at_most;
        b.samples += samples;
    }
    Some(b)
}

/// One thread's `(certain, at_most, samples)` beyond `d`. Its exact
/// maximum settles what the buckets cannot: none beyond when the maximum
/// is not, at least one when it is.
fn beyond_thread(t: &ThreadRecord, d: u64) -> Option<(u64, u64, u64)> {
    let h = t.histogram.to_histogram().ok()?;
    // A value v of the source stands for a latency in [v, v + resolution).
    let slack = t.histogram.resolution_ns.max(1) - 1;
    let (mut certain, mut at_most, mut samples) = (0u64, 0u64, 0u64);
    for (lower, upper, count) in h.iter_buckets() {
        samples += count;
        if lower > d {
            certain += count;
            at_most += count;
        } else if upper.saturating_add(slack) > d {
            at_most += count;
        }
    }
    match t.stats.max_ns {
        Some(m) if m.saturating_add(slack) <= d => Some((0, 0, samples)),
        Some(m) if m > d && at_most > 0 => Some((certain.max(1), at_most, samples)),
        _ => Some((certain, at_most, samples)),
    }
}

/// What the run says of its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every period woke within the deadline.
    Met,
    /// Some period certainly woke later.
    Missed,
    /// None certainly did, some may have (a bucket straddles it).
    PossiblyMissed,
    /// The deadline, or the histograms, are unknown; or no samples.
    Unknown,
}

/// A run judged against its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    pub deadline: Deadline,
    /// `None` when the deadline or a histogram is unknown.
    pub beyond: Option<Beyond>,
    /// Missed periods, when the source counts them.
    pub missed_periods: Option<u64>,
}

impl Check {
    pub fn of(run: &RunRecord) -> Check {
        let deadline = Deadline::of(run);
        Check {
            deadline,
            beyond: deadline.ns().and_then(|d| beyond(run, d)),
            missed_periods: run
                .knows(Unknowable::MissedPeriods)
                .then_some(run.overall.missed_periods),
        }
    }

    pub fn outcome(&self) -> Outcome {
        match self.beyond {
            None => Outcome::Unknown,
            Some(b) if b.samples == 0 => Outcome::Unknown,
            Some(b) if b.certain > 0 => Outcome::Missed,
            Some(b) if b.at_most > 0 => Outcome::PossiblyMissed,
            Some(_) => Outcome::Met,
        }
    }

    /// The first sentence of the headline.
    pub fn sentence(&self, max: &str) -> String {
        let d = self.deadline.describe();
        let Some(b) = self.beyond.filter(|b| b.samples > 0) else {
            return self.unknown_sentence();
        };
        match self.outcome() {
            Outcome::Met => format!(
                "Deadline met: none of the {} periods woke later than the deadline ({d}); the \
                 worst case was {max}.",
                num::count(b.samples)
            ),
            Outcome::Missed => format!(
                "Deadline missed: {} of the {} periods ({}) woke later than the deadline ({d}); \
                 {}.",
                count_text(&b),
                num::count(b.samples),
                rate_text(&b),
                self.missed_text()
            ),
            _ => format!(
                "Deadline possibly missed: {} of the {} periods ({}) may have woken later than \
                 the deadline ({d}), in a histogram bucket that straddles it; {}.",
                count_text(&b),
                num::count(b.samples),
                rate_text(&b),
                self.missed_text()
            ),
        }
    }

    fn unknown_sentence(&self) -> String {
        match self.deadline {
            Deadline::Unknown => {
                "Deadline unknown (the source did not record its period); pass --deadline.".into()
            }
            d => format!(
                "Deadline ({}) not judged: the run's histograms hold no readable samples.",
                d.describe()
            ),
        }
    }

    fn missed_text(&self) -> String {
        match self.missed_periods {
            Some(1) => "1 period was missed".into(),
            Some(n) => format!("{} periods were missed", num::count(n)),
            None => "missed periods unknown (the source does not count them)".into(),
        }
    }

    /// One line for summaries, tables and `compare`: "met (the period,
    /// 1 ms)", "MISSED (yours, 500 µs): 3 of 2 000 periods (0.15 %)
    /// later, 0 periods missed".
    pub fn status(&self) -> String {
        let d = self.deadline.describe();
        let b = self.beyond.unwrap_or(Beyond {
            certain: 0,
            at_most: 0,
            samples: 0,
        });
        let missed = match self.missed_periods {
            Some(n) => format!("{} periods missed", num::count(n)),
            None => "missed periods unknown".into(),
        };
        match self.outcome() {
            Outcome::Met => format!("met ({d}): no period later"),
            Outcome::Missed => format!(
                "MISSED ({d}): {} of {} periods ({}) later, {missed}",
                count_text(&b),
                num::count(b.samples),
                rate_text(&b)
            ),
            Outcome::PossiblyMissed => format!(
                "possibly missed ({d}): {} of {} periods ({}) may be later, {missed}",
                count_text(&b),
                num::count(b.samples),
                rate_text(&b)
            ),
            Outcome::Unknown if self.deadline == Deadline::Unknown => {
                "unknown (the source did not record its period); pass --deadline".into()
            }
            Outcome::Unknown => format!("not judged ({d}): no samples"),
        }
    }

    /// The sentence on the class after a miss: where the worst case lies,
    /// that it is too slow for this deadline, and the class that meeting
    /// it takes (never "fit for", never "suffices").
    pub fn class_after_miss(&self, worst: super::Class, max: &str) -> String {
        let edge = match self.outcome() {
            Outcome::PossiblyMissed => "at the edge of",
            _ => "too slow for",
        };
        let mut s = format!(
            "The worst case, {max}, is in the {} class, {edge} {}.",
            worst.name(),
            self.deadline.this()
        );
        if let Some(d) = self.deadline.ns().filter(|d| *d > 0) {
            let needed = super::Class::of_max_ns(Some(d - 1));
            s.push_str(&format!(
                " Meeting it takes a worst case under {}: {}.",
                num::period(d),
                needed_words(needed)
            ));
        }
        s
    }
}

/// What a deadline in `class` asks for, by the rule of thumb.
fn needed_words(class: super::Class) -> &'static str {
    use super::Class;
    match class {
        Class::NoData | Class::UnderTenMicros => {
            "under 10 µs, where the rule of thumb no longer trusts Linux"
        }
        Class::Milliseconds => "tolerances of milliseconds, a vanilla kernel's class",
        Class::HundredsOfMicros => {
            "tolerances of hundreds of microseconds, the class PREEMPT_RT is meant for"
        }
        Class::TensOfMicros => {
            "tolerances of tens of microseconds, where the rule of thumb turns to a co-kernel \
             such as Xenomai"
        }
    }
}

/// "N" or "N to M".
fn count_text(b: &Beyond) -> String {
    if b.certain == b.at_most {
        num::count(b.certain)
    } else {
        format!("{} to {}", num::count(b.certain), num::count(b.at_most))
    }
}

/// The share of periods beyond: "0.56 %", "12 per million", or a range
/// in one unit where it can ("225 to 250 per million").
fn rate_text(b: &Beyond) -> String {
    if b.certain == b.at_most {
        return share(b.certain, b.samples);
    }
    let (lo, lo_unit) = share_parts(b.certain, b.samples);
    let (hi, unit) = share_parts(b.at_most, b.samples);
    if lo == hi && lo_unit == unit {
        // The straddling bucket changes the count, not the share shown.
        return format!("{hi}{unit}");
    }
    if b.certain == 0 || lo_unit == unit {
        format!("{lo} to {hi}{unit}")
    } else {
        format!("{lo}{lo_unit} to {hi}{unit}")
    }
}

/// `n` out of `of` as a percentage from 0.1 % up, per million below.
pub fn share(n: u64, of: u64) -> String {
    if of == 0 {
        return "-".into();
    }
    let (v, unit) = share_parts(n, of);
    format!("{v}{unit}")
}

fn share_parts(n: u64, of: u64) -> (String, &'static str) {
    let p = n as f64 / of.max(1) as f64;
    if n == 0 {
        ("0".into(), " %")
    } else if p >= 1e-3 {
        (significant(p * 100.0), " %")
    } else {
        (significant(p * 1e6), " per million")
    }
}

/// Three significant digits at most, trailing zeros trimmed.
fn significant(v: f64) -> String {
    let decimals = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else if v >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}
