//! Views that scale to many threads: which rows a per-thread view shows
//! when there are too many for one screen (the worst first, the rest
//! summarised), and the ranking itself. Pure; it knows no record, only
//! the keys a caller ranks by.

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
