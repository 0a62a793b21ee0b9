//! The closed sets that records, plans and reports name: scheduling
//! policy, timer method, where a run came from. Each is an enum whose
//! JSON is its lower-case name; [`Named`] holds a value of such a set as a
//! record keeps it: known to this version, or a name it does not know
//! (written by a newer rtscope, or by another tool) kept as text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A closed set of names.
pub trait ClosedSet: Sized + Copy {
    /// The name in records and on the command line.
    fn name(self) -> &'static str;
    /// The value of a name (or of one of its aliases).
    fn parse(s: &str) -> Option<Self>;
}

/// Scheduling policy of the measuring threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

impl ClosedSet for Policy {
    fn name(self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
            Policy::Deadline => "deadline",
        }
    }

    fn parse(s: &str) -> Option<Policy> {
        Some(match s.to_ascii_lowercase().as_str() {
            "other" | "normal" => Policy::Other,
            "batch" => Policy::Batch,
            "idle" => Policy::Idle,
            "fifo" => Policy::Fifo,
            "rr" => Policy::Rr,
            "deadline" => Policy::Deadline,
            _ => return None,
        })
    }
}

impl Policy {
    pub fn name(self) -> &'static str {
        ClosedSet::name(self)
    }

    pub fn parse(s: &str) -> Option<Policy> {
        <Policy as ClosedSet>::parse(s)
    }

    /// Real-time policies need root, CAP_SYS_NICE or RLIMIT_RTPRIO.
    pub fn is_realtime(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr | Policy::Deadline)
    }

    pub fn has_priority(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }
}

/// How a thread waits for its next period.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TimerMethod {
    /// `clock_nanosleep(TIMER_ABSTIME)` until the deadline.
    Abs,
    /// `clock_nanosleep` relative, for the time left until the deadline.
    Rel,
    /// `nanosleep` for the time left until the deadline.
    Nanosleep,
    /// `setitimer(ITIMER_REAL)`, SIGALRM taken with `sigwaitinfo`.
    Itimer,
    /// `timer_create` + `timer_settime(TIMER_ABSTIME)`, a signal per thread.
    Posix,
    /// `timerfd_create` + `timerfd_settime(TFD_TIMER_ABSTIME)` + `read`.
    Timerfd,
}

impl ClosedSet for TimerMethod {
    fn name(self) -> &'static str {
        match self {
            TimerMethod::Abs => "abs",
            TimerMethod::Rel => "rel",
            TimerMethod::Nanosleep => "nanosleep",
            TimerMethod::Itimer => "itimer",
            TimerMethod::Posix => "posix",
            TimerMethod::Timerfd => "timerfd",
        }
    }

    fn parse(s: &str) -> Option<TimerMethod> {
        TimerMethod::ALL.into_iter().find(|m| m.name() == s)
    }
}

impl TimerMethod {
    pub const ALL: [TimerMethod; 6] = [
        TimerMethod::Abs,
        TimerMethod::Rel,
        TimerMethod::Nanosleep,
        TimerMethod::Itimer,
        TimerMethod::Posix,
        TimerMethod::Timerfd,
    ];

    pub fn name(self) -> &'static str {
        ClosedSet::name(self)
    }

    pub fn parse(s: &str) -> Option<TimerMethod> {
        <TimerMethod as ClosedSet>::parse(s)
    }
}

impl ClosedSet for crate::sys::clock::Clock {
    fn name(self) -> &'static str {
        crate::sys::clock::Clock::name(self)
    }

    fn parse(s: &str) -> Option<Self> {
        use crate::sys::clock::Clock;
        [Clock::Monotonic, Clock::Realtime]
            .into_iter()
            .find(|c| c.name() == s)
    }
}

/// Where a run's numbers come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// Measured by rtscope.
    Measured,
    /// Read from another tool's output (or a record file).
    Imported,
}

impl ClosedSet for SourceKind {
    fn name(self) -> &'static str {
        match self {
            SourceKind::Measured => "measured",
            SourceKind::Imported => "imported",
        }
    }

    fn parse(s: &str) -> Option<SourceKind> {
        [SourceKind::Measured, SourceKind::Imported]
            .into_iter()
            .find(|k| k.name() == s)
    }
}

/// The kernel's preemption model, as the fingerprint names it (`dynamic`:
/// PREEMPT_DYNAMIC with its mode unreadable; `unknown`: nothing said).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PreemptionModel {
    None,
    Voluntary,
    Full,
    Lazy,
    Rt,
    Dynamic,
    Unknown,
}

impl ClosedSet for PreemptionModel {
    fn name(self) -> &'static str {
        match self {
            PreemptionModel::None => "none",
            PreemptionModel::Voluntary => "voluntary",
            PreemptionModel::Full => "full",
            PreemptionModel::Lazy => "lazy",
            PreemptionModel::Rt => "rt",
            PreemptionModel::Dynamic => "dynamic",
            PreemptionModel::Unknown => "unknown",
        }
    }

    fn parse(s: &str) -> Option<PreemptionModel> {
        PreemptionModel::ALL.into_iter().find(|m| m.name() == s)
    }
}

impl PreemptionModel {
    pub const ALL: [PreemptionModel; 7] = [
        PreemptionModel::None,
        PreemptionModel::Voluntary,
        PreemptionModel::Full,
        PreemptionModel::Lazy,
        PreemptionModel::Rt,
        PreemptionModel::Dynamic,
        PreemptionModel::Unknown,
    ];

    pub fn name(self) -> &'static str {
        ClosedSet::name(self)
    }
}

/// A value of a closed set as a record keeps it: known, or a name this
/// version does not know (kept as written). Its JSON is the name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "{T}Name")]
pub enum Named<T> {
    Known(T),
    Other(String),
}

impl<T: ClosedSet> Named<T> {
    /// The value of `s`: known when this version knows the name.
    pub fn parse(s: &str) -> Named<T> {
        match T::parse(s) {
            Some(v) if v.name() == s => Named::Known(v),
            _ => Named::Other(s.to_string()),
        }
    }

    /// The known value, if it is one.
    pub fn known(&self) -> Option<T> {
        match self {
            Named::Known(v) => Some(*v),
            Named::Other(_) => None,
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Named::Known(v) => v.name(),
            Named::Other(s) => s,
        }
    }

    /// Is it this known value?
    pub fn is(&self, v: T) -> bool
    where
        T: PartialEq,
    {
        self.known() == Some(v)
    }
}

impl<T: ClosedSet> From<T> for Named<T> {
    fn from(v: T) -> Self {
        Named::Known(v)
    }
}

impl<T: ClosedSet> From<&str> for Named<T> {
    fn from(s: &str) -> Self {
        Named::parse(s)
    }
}

impl<T: ClosedSet> From<String> for Named<T> {
    fn from(s: String) -> Self {
        Named::parse(&s)
    }
}

impl<T: ClosedSet> fmt::Display for Named<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl<T: ClosedSet> PartialEq<&str> for Named<T> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl<T: ClosedSet> Default for Named<T> {
    fn default() -> Self {
        Named::Other(String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_kept() {
        let p: Named<Policy> = serde_json::from_str("\"fifo\"").unwrap();
        assert_eq!(p, Named::Known(Policy::Fifo));
        assert_eq!(serde_json::to_string(&p).unwrap(), "\"fifo\"");
        let q: Named<Policy> = serde_json::from_str("\"sched_ext\"").unwrap();
        assert_eq!(q, Named::Other("sched_ext".into()));
        assert_eq!(serde_json::to_string(&q).unwrap(), "\"sched_ext\"");
        // An alias is not the record's name: kept as written.
        assert_eq!(
            Named::<Policy>::parse("normal"),
            Named::Other("normal".into())
        );
        assert_eq!(
            Named::<TimerMethod>::parse("abs"),
            Named::Known(TimerMethod::Abs)
        );
        let k: Named<SourceKind> = serde_json::from_str("\"imported\"").unwrap();
        assert!(k.is(SourceKind::Imported));
        assert_eq!(format!("{k:>10}"), "  imported");
        assert!(k == "imported");
    }

    #[test]
    fn preemption_models_keep_their_names_and_unknown_ones_as_text() {
        for m in PreemptionModel::ALL {
            let json = serde_json::to_string(&Named::Known(m)).unwrap();
            assert_eq!(json, format!("\"{}\"", m.name()));
            let back: Named<PreemptionModel> = serde_json::from_str(&json).unwrap();
            assert!(back.is(m));
        }
        let other: Named<PreemptionModel> = serde_json::from_str("\"preempt_lazy+\"").unwrap();
        assert_eq!(other, Named::Other("preempt_lazy+".into()));
        assert_eq!(serde_json::to_string(&other).unwrap(), "\"preempt_lazy+\"");
        assert!(Named::<PreemptionModel>::parse("rt") == "rt");
    }
}
