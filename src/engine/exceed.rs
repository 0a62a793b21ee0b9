//! Exceedance times: every wake-up above a threshold, with its cycle, for
//! the extremal index (how late wake-ups cluster: one stall delays several
//! periods) that a histogram cannot give. Kept by the control thread from
//! the queue of late wake-ups, never in the measuring loop, and bounded:
//! at most [`EXCEEDANCE_CAP`] per thread. The threshold starts at 0 and is
//! raised whenever the table fills (to the median of what it holds, the
//! lower half dropped), so at the end the table holds *every* wake-up of
//! the run above its final threshold: a raise only drops values below the
//! new threshold, and everything above it was above every earlier one.
//!
//! A wake-up the queue could not take (the control thread fell behind)
//! is lost; the largest lost latency is kept by the thread, and the table
//! is complete only above it ([`Exceedances::complete_above`]).

/// Most exceedances kept per thread (16 bytes each): after the first
/// raise the table holds between half of this and all of it.
pub const EXCEEDANCE_CAP: usize = 1024;

/// One thread's exceedances, in cycle order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exceedances {
    /// Every kept wake-up is strictly later than this.
    pub threshold_ns: u64,
    /// `(cycle, latency_ns)`, cycles ascending.
    pub items: Vec<(u64, u64)>,
}

impl Exceedances {
    pub fn new() -> Exceedances {
        Exceedances {
            threshold_ns: 0,
            items: Vec::with_capacity(EXCEEDANCE_CAP),
        }
    }

    /// Keep a wake-up if it is above the threshold; when the table is
    /// full, raise the threshold and return it (the measuring thread then
    /// sends only wake-ups above it).
    pub fn push(&mut self, cycle: u64, latency_ns: u64) -> Option<u64> {
        if latency_ns <= self.threshold_ns {
            return None;
        }
        self.items.push((cycle, latency_ns));
        if self.items.len() < EXCEEDANCE_CAP {
            return None;
        }
        let mut lat: Vec<u64> = self.items.iter().map(|&(_, l)| l).collect();
        let mid = lat.len() / 2;
        let (_, median, _) = lat.select_nth_unstable_by(mid, Ord::cmp);
        let median = *median;
        // Ties at the median all go: the table may drop below half, never
        // keep a value at the threshold.
        self.raise(median);
        Some(self.threshold_ns)
    }

    /// Drop everything at or below `threshold_ns` (never lowers it).
    pub fn raise(&mut self, threshold_ns: u64) {
        if threshold_ns > self.threshold_ns {
            self.threshold_ns = threshold_ns;
            self.items.retain(|&(_, l)| l > threshold_ns);
        }
    }

    /// The table as it is complete: above the threshold and above the
    /// largest wake-up the queue lost (`lost_max_ns`, None when none).
    pub fn complete_above(&self, lost_max_ns: Option<u64>) -> Exceedances {
        let mut e = self.clone();
        if let Some(m) = lost_max_ns {
            e.raise(m);
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Whatever the order of values, the table ends holding exactly the
    /// wake-ups above its threshold, in cycle order, within the cap.
    #[test]
    fn the_table_holds_every_wakeup_above_its_final_threshold() {
        let mut rng = Rng::new(7);
        let values: Vec<u64> = (0..200_000u64)
            .map(|_| {
                let u = rng.unit();
                // A heavy tail: 5 µs body, a Pareto tail.
                5_000 + (1_000.0 / (1.0 - u).powf(0.5)) as u64
            })
            .collect();
        let mut e = Exceedances::new();
        let mut raises = 0;
        for (cycle, &v) in values.iter().enumerate() {
            if e.push(cycle as u64, v).is_some() {
                raises += 1;
            }
            assert!(e.items.len() < EXCEEDANCE_CAP);
        }
        assert!(raises > 5, "{raises}");
        let want: Vec<(u64, u64)> = values
            .iter()
            .enumerate()
            .filter(|&(_, &v)| v > e.threshold_ns)
            .map(|(c, &v)| (c as u64, v))
            .collect();
        assert_eq!(e.items, want);
        assert!(e.items.len() >= EXCEEDANCE_CAP / 4, "{}", e.items.len());
        assert!(
            e.items.windows(2).all(|w| w[0].0 < w[1].0),
            "cycles ascending"
        );
    }

    #[test]
    fn a_lost_wakeup_raises_the_complete_part() {
        let mut e = Exceedances::new();
        for (c, v) in [(1, 10), (2, 50), (3, 30), (4, 70)] {
            e.push(c, v);
        }
        let c = e.complete_above(Some(40));
        assert_eq!(c.threshold_ns, 40);
        assert_eq!(c.items, vec![(2, 50), (4, 70)]);
        assert_eq!(e.complete_above(None), e);
        // Never lowered.
        let mut d = c.clone();
        d.raise(5);
        assert_eq!(d, c);
    }
}
