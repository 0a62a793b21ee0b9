//! Whether a run met its deadline: the user's (`--deadline`, recorded in
//! `limits.deadline_ns`), else the period, past which a wake-up has
//! missed its next deadline. The periods beyond it are counted from the
//! threads' lossless histograms: a bucket wholly above the deadline counts
//! for certain, a bucket that straddles it (or a source's resolution that
//! does) may count, so the count is "N" or "N to M", never a guess. So do
//! an import's overflows (samples its source counted beyond its histogram
//! without their values, recorded at the histogram's end): each lies
//! between that end and the thread's maximum, so against a deadline in
//! that range it may or may not be late. A thread whose source counted
//! its samples and kept their extremes but no histogram (cyclictest's
//! status lines, Xenomai's or EVL's latency without `-h`) is judged by
//! its extremes: met when its max is within the deadline, else a range.
//! A run whose deadline is unknown (an import without its interval) says
//! so.
//!
//! The deadline count is not the missed-period count: a missed period
//! (the engine's `extra`) is a period whose start had already passed when
//! the thread woke for an earlier one, so it had no wake-up of its own (a
//! wake-up k whole periods late misses k); the deadline counts wake-ups
//! later than the deadline. When the two differ, one sentence says both.
//! Rates are written one way: "N of M (R per million)".
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
    /// Of `at_most`, the overflows whose lateness is unknown against the
    /// deadline (values the source did not keep).
    pub unknown: u64,
}

/// The periods of `run` later than `deadline_ns`; `None` when a histogram
/// cannot be read.
pub fn beyond(run: &RunRecord, deadline_ns: u64) -> Option<Beyond> {
    let mut b = Beyond {
        certain: 0,
        at_most: 0,
        samples: 0,
        unknown: 0,
    };
    let counted = run.knows(Unknowable::Count);
    for t in &run.threads {
        let t = beyond_thread(t, deadline_ns, counted)?;
        b.certain += t.certain;
        b.at_most += t.at_most;
        b.samples += t.samples;
        b.unknown += t.unknown;
    }
    Some(b)
}

/// One thread's periods beyond `d`. Its exact maximum settles what the
/// buckets cannot: none beyond when the maximum is not, at least one when
/// it is. Its overflows but the largest (which is the maximum) are taken
/// out of the bucket they were recorded in and counted apart: certain
/// when the histogram's end is beyond `d`, else possible when the maximum
/// is. A thread whose source counted its samples but kept no histogram
/// is judged by its extremes ([`beyond_by_extremes`]); `counted`: the
/// record knows its sample counts.
fn beyond_thread(t: &ThreadRecord, d: u64, counted: bool) -> Option<Beyond> {
    let buckets = t.histogram.nonzero_buckets().ok()?;
    // A value v of the source stands for a latency in [v, v + resolution).
    let slack = t.histogram.resolution_ns.max(1) - 1;
    if buckets.is_empty() && t.stats.samples > 0 {
        return counted.then(|| beyond_by_extremes(t, d, slack)).flatten();
    }
    let (mut over_left, over_from) = match t.stats.overflow {
        Some(o) if o.count > 1 => (o.count - 1, o.from_ns),
        _ => (0, 0),
    };
    let over = over_left;
    let mut b = Beyond {
        certain: 0,
        at_most: 0,
        samples: 0,
        unknown: 0,
    };
    for (lower, upper, count) in buckets {
        b.samples += count;
        let mut count = count;
        // They were recorded at the source's value for `from_ns` (its
        // unit's middle): the first bucket that reaches `from_ns`.
        if over_left > 0 && upper >= over_from {
            let taken = over_left.min(count);
            count -= taken;
            over_left -= taken;
        }
        if lower > d {
            b.certain += count;
            b.at_most += count;
        } else if upper.saturating_add(slack) > d {
            b.at_most += count;
        }
    }
    // The overflows found in their bucket (all of them, unless the
    // record was edited).
    let over = over - over_left;
    let max_beyond = t.stats.max_ns.is_none_or(|m| m.saturating_add(slack) > d);
    if over > 0 && max_beyond {
        if over_from > d {
            b.certain += over;
        } else {
            b.unknown = over;
        }
        b.at_most += over;
    }
    match t.stats.max_ns {
        Some(m) if m.saturating_add(slack) <= d => {
            b.certain = 0;
            b.at_most = 0;
            b.unknown = 0;
        }
        Some(m) if m > d && b.at_most > 0 => b.certain = b.certain.max(1),
        _ => {}
    }
    Some(b)
}

/// One thread of a source that counted its samples and kept their
/// extremes but no histogram (cyclictest's status lines, Xenomai's or
/// EVL's latency without `-h`): a max within the deadline, none is
/// beyond; a min beyond it, all are; else the max's period is, and every
/// other may be but the min's (when the min is surely within). `None`
/// without a max: nothing to judge by.
fn beyond_by_extremes(t: &ThreadRecord, d: u64, slack: u64) -> Option<Beyond> {
    let n = t.stats.samples;
    let max = t.stats.max_ns?;
    let surely_within = |v: u64| v.saturating_add(slack) <= d;
    let (certain, at_most) = if surely_within(max) {
        (0, 0)
    } else if t.stats.min_ns.is_some_and(|m| m > d) {
        (n, n)
    } else {
        let certain = u64::from(max > d);
        let min_within = t.stats.min_ns.is_some_and(surely_within);
        (certain, (n - u64::from(min_within && n > 1)).max(certain))
    };
    Some(Beyond {
        certain,
        at_most,
        samples: n,
        unknown: 0,
    })
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
    /// The period, when known (what a missed period is missed against).
    pub interval_ns: Option<u64>,
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
            interval_ns: (run.knows(Unknowable::Interval) && run.options.interval_ns > 0)
                .then_some(run.options.interval_ns),
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
                 worst case was {max}{}.",
                num::count(b.samples),
                match self.missed_periods {
                    Some(n) if n > 0 => format!("; {}", self.missed_text(&b)),
                    _ => String::new(),
                }
            ),
            Outcome::Missed => format!(
                "Deadline missed: {} woke later than the deadline ({d}){}; {}.",
                of_periods(&b, true),
                unknown_text(&b),
                self.missed_text(&b)
            ),
            _ => format!(
                "Deadline possibly missed: {} may have woken later than the deadline ({d}), {}; \
                 {}.",
                of_periods(&b, true),
                if b.unknown > 0 {
                    unknown_text(&b).trim_start_matches(", ").to_string()
                } else {
                    "in a histogram bucket that straddles it".into()
                },
                self.missed_text(&b)
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

    /// The missed periods, and what they are when their count differs
    /// from the deadline's.
    fn missed_text(&self, b: &Beyond) -> String {
        let Some(n) = self.missed_periods else {
            return "missed periods unknown (the source does not count them)".into();
        };
        let counted = if n == 1 {
            "1 period was missed".to_string()
        } else {
            format!("{} periods were missed", num::count(n))
        };
        if n == 0 || (b.certain == n && b.at_most == n) {
            return counted;
        }
        format!(
            "besides, {counted}: {} had already begun when the thread woke for an earlier one, \
             so they had no wake-up of their own (a wake-up k whole periods late misses k)",
            self.their_period()
        )
    }

    /// "1 ms", or "it" when the deadline is unknown.
    fn deadline_words(&self) -> String {
        self.deadline
            .ns()
            .map(num::period)
            .unwrap_or_else(|| "it".into())
    }

    /// "their 200 µs period", or "their period" when it is unknown.
    fn their_period(&self) -> String {
        match self.interval_ns {
            Some(i) => format!("their {} period", num::period(i)),
            None => "their period".into(),
        }
    }

    /// One line for summaries, tables and `compare`: "met (the period,
    /// 1 ms): no period later", "MISSED (yours, 500 µs): 3 of 2 000
    /// periods (1 500 per million) later; 0 periods missed".
    pub fn status(&self) -> String {
        let d = self.deadline.describe();
        let b = self.beyond.unwrap_or(Beyond {
            certain: 0,
            at_most: 0,
            samples: 0,
            unknown: 0,
        });
        let missed = match self.missed_periods {
            Some(n) if n > 0 && !(b.certain == n && b.at_most == n) => format!(
                "; besides, {} missed ({} began before the thread woke for an earlier one)",
                periods(n),
                self.their_period()
            ),
            Some(n) => format!("; {} missed", periods(n)),
            None => "; missed periods unknown".into(),
        };
        match self.outcome() {
            Outcome::Met => match self.missed_periods {
                Some(n) if n > 0 => format!("met ({d}): no period later{missed}"),
                _ => format!("met ({d}): no period later"),
            },
            Outcome::Missed => format!(
                "MISSED ({d}): {} later than {}{}{missed}",
                of_periods(&b, false),
                self.deadline_words(),
                unknown_text(&b)
            ),
            Outcome::PossiblyMissed => format!(
                "possibly missed ({d}): {} may be later than {}{}{missed}",
                of_periods(&b, false),
                self.deadline_words(),
                unknown_text(&b)
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
        Class::Stall => "no stall of 10 ms or more, which any kernel that does not stall meets",
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

/// "1 period", "N periods".
fn periods(n: u64) -> String {
    match n {
        1 => "1 period".into(),
        n => format!("{} periods", num::count(n)),
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

/// "3 of the 2 000 periods (1 500 per million)" (`the`: with "the").
fn of_periods(b: &Beyond, the: bool) -> String {
    format!(
        "{} of {}{} periods ({})",
        count_text(b),
        if the { "the " } else { "" },
        num::count(b.samples),
        rate_text(b)
    )
}

/// Why a count is a range because of overflows, or nothing.
fn unknown_text(b: &Beyond) -> String {
    match b.unknown {
        0 => String::new(),
        1 => ", 1 of them an overflow the source counted beyond its histogram without its value"
            .into(),
        n => format!(
            ", {} of them overflows the source counted beyond its histogram without their values",
            num::count(n)
        ),
    }
}

/// The rate of periods beyond, in one unit: "400 per million", or a
/// range ("225 to 250 per million").
fn rate_text(b: &Beyond) -> String {
    if b.certain == b.at_most {
        return share(b.certain, b.samples);
    }
    let (lo, hi) = (
        num::per_million(b.certain, b.samples),
        num::per_million(b.at_most, b.samples),
    );
    if lo == hi {
        // The straddling bucket changes the count, not the rate shown.
        return format!("{hi} per million");
    }
    format!("{lo} to {hi} per million")
}

/// `n` out of `of` per million (the one way rates are written):
/// "400 per million", "0.833 per million"; "-" of nothing.
pub fn share(n: u64, of: u64) -> String {
    if of == 0 {
        return "-".into();
    }
    format!("{} per million", num::per_million(n, of))
}
