//! A figure or only a lower bound: what a quantile among samples counted
//! without their values can be said to be. A leaf: the record, the text
//! helpers and every view use it; it uses nothing.

/// A figure as a run's samples allow it to be stated: exactly (within the
/// histogram's precision), or only as a lower bound, when it lies among
/// the samples a source counted beyond its histogram without their values
/// (a record's `Overflow`). Every view states a bound as one ("≥ 40.0 µs", `null`
/// plus `…_at_least_ns` in JSON) and never compares two bounds as values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stated<T> {
    Exact(T),
    /// At least this much; the true figure is unknown.
    AtLeast(T),
}

impl<T: Copy> Stated<T> {
    /// The figure, or the bound.
    pub fn value(self) -> T {
        match self {
            Stated::Exact(v) | Stated::AtLeast(v) => v,
        }
    }

    /// Whether only a lower bound is known.
    pub fn is_bound(self) -> bool {
        matches!(self, Stated::AtLeast(_))
    }

    /// The exact figure, `None` for a bound.
    pub fn exact(self) -> Option<T> {
        match self {
            Stated::Exact(v) => Some(v),
            Stated::AtLeast(_) => None,
        }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Stated<U> {
        match self {
            Stated::Exact(v) => Stated::Exact(f(v)),
            Stated::AtLeast(v) => Stated::AtLeast(f(v)),
        }
    }
}
