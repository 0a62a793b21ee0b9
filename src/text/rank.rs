//! Views that scale to many threads: which rows a per-thread view shows
//! when there are too many for one screen (the worst first, the rest
//! summarised), and the ranking itself. Pure; it knows no record, only
//! the keys a caller ranks by.

use crate::stated::Stated;

/// A per-thread view with more threads than this prints the worst
/// [`WORST_ROWS`] and summarises the rest: 16 rows and the summary's
/// other lines still fit a 24-line terminal, 17 and more need not.
pub const MANY_THREADS: usize = 16;

/// Rows a view with many threads shows: the worst eight.
pub const WORST_ROWS: usize = 8;

/// Which thread rows a view prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rows {
    /// Every thread, in thread order up to [`MANY_THREADS`]; above, the
    /// [`WORST_ROWS`] worst and a line for the others.
    #[default]
    Fit,
    /// Every thread, in thread order (`--all`).
    All,
}

impl Rows {
    /// `--all` or not.
    pub fn from_all(all: bool) -> Rows {
        if all { Rows::All } else { Rows::Fit }
    }

    /// Whether `threads` threads are shown as the worst and the rest.
    pub fn summarises(self, threads: usize) -> bool {
        self == Rows::Fit && threads > MANY_THREADS
    }
}

/// Indices of `keys` worst first: the highest key first (compare the
/// maximum, then the next quantile, as a tuple), ties in index order;
/// `None` ranks below every value (a thread that measured nothing).
pub fn worst_first<K: Ord>(keys: &[K]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    // Stable: equal keys keep their index order.
    order.sort_by(|a, b| keys[*b].cmp(&keys[*a]));
    order
}

/// The lowest and highest of `values` (those known), if any.
pub fn range<T: Ord + Copy>(values: impl IntoIterator<Item = Option<T>>) -> Option<(T, T)> {
    values.into_iter().flatten().fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// [`range`] of figures of which some may be lower bounds
/// ([`Stated::AtLeast`]): the lowest is a bound when no figure is as low,
/// the highest whenever any value is a bound (its figure may lie above
/// every other).
pub fn stated_range(
    values: impl IntoIterator<Item = Option<Stated<u64>>>,
) -> Option<(Stated<u64>, Stated<u64>)> {
    let v: Vec<Stated<u64>> = values.into_iter().flatten().collect();
    let lo = v.iter().map(|s| s.value()).min()?;
    let hi = v.iter().map(|s| s.value()).max()?;
    let lo = if v.contains(&Stated::Exact(lo)) {
        Stated::Exact(lo)
    } else {
        Stated::AtLeast(lo)
    };
    let hi = if v.iter().any(|s| s.is_bound()) {
        Stated::AtLeast(hi)
    } else {
        Stated::Exact(hi)
    };
    Some((lo, hi))
}

/// A [`stated_range`] in µs with 0.1 µs, `sep` between its ends:
/// `12.0 to ≥50.0`; one end when both are the same (`≥50.0`).
pub fn us_stated_range(r: Option<(Stated<u64>, Stated<u64>)>, sep: &str) -> Option<String> {
    let end = |s: Stated<u64>| {
        let at_least = if s.is_bound() {
            crate::units::AT_LEAST
        } else {
            ""
        };
        format!("{at_least}{}", crate::units::us1(s.value()))
    };
    r.map(|(lo, hi)| {
        if lo.value() == hi.value() {
            end(hi)
        } else {
            format!("{}{sep}{}", end(lo), end(hi))
        }
    })
}

/// The CPUs of the rows a summary line stands for, as ` (CPU 0-3,6)`
/// (any order, repeats allowed); empty when none is known.
pub fn on_cpus(cpus: impl IntoIterator<Item = usize>) -> String {
    let cpus: Vec<usize> = cpus.into_iter().collect();
    if cpus.is_empty() {
        String::new()
    } else {
        format!(" (CPU {})", crate::units::format_cpu_list(&cpus))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_with_a_lower_bound_says_which_end_is_one() {
        use Stated::{AtLeast, Exact};
        let r =
            |v: &[Stated<u64>]| us_stated_range(stated_range(v.iter().map(|s| Some(*s))), " to ");
        assert_eq!(r(&[Exact(12_000), Exact(30_000)]).unwrap(), "12.0 to 30.0");
        // A bound may lie above every figure: the top is a bound.
        assert_eq!(
            r(&[Exact(12_000), AtLeast(20_000), Exact(30_000)]).unwrap(),
            "12.0 to ≥30.0"
        );
        // The lowest is a bound only when no figure is as low.
        assert_eq!(
            r(&[AtLeast(10_000), Exact(30_000)]).unwrap(),
            "≥10.0 to ≥30.0"
        );
        assert_eq!(r(&[AtLeast(50_000), AtLeast(50_000)]).unwrap(), "≥50.0");
        assert_eq!(stated_range(Vec::<Option<Stated<u64>>>::new()), None);
    }

    #[test]
    fn the_worst_come_first_ties_in_index_order_unknown_last() {
        let keys = [
            (Some(5), Some(1)),
            (None, None),
            (Some(9), Some(2)),
            (Some(5), Some(3)),
            (Some(5), Some(1)),
        ];
        assert_eq!(worst_first(&keys), vec![2, 3, 0, 4, 1]);
    }

    #[test]
    fn only_fit_above_the_threshold_summarises() {
        assert!(!Rows::Fit.summarises(MANY_THREADS));
        assert!(Rows::Fit.summarises(MANY_THREADS + 1));
        assert!(!Rows::All.summarises(1024));
        assert_eq!(Rows::from_all(true), Rows::All);
        assert_eq!(range([Some(3), None, Some(1), Some(7)]), Some((1, 7)));
        assert_eq!(range::<u64>([None]), None);
        assert_eq!(on_cpus([3, 0, 1, 2, 6, 1]), " (CPU 0-3,6)");
        assert_eq!(on_cpus([]), "");
    }
}
