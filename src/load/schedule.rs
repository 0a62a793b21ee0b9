//! When each part of a load is on: steady (always), or in bursts. Each
//! part has its own period (the profile's period spread by ±spread,
//! drawn from the seed) so parts never fall into step, its own starting
//! phase, and a burst length drawn afresh for every burst from the active
//! range. Everything is drawn from the recorded seed: the same seed and
//! profile give the same schedule.
//!
//! Pure: no clock is read here; times are offsets from the load's start.

use super::part::ValueError;
use serde::{Deserialize, Serialize};

pub use crate::rng::Rng;

/// A stable 64-bit hash of a name (FNV-1a), to give each part its own
/// stream of draws whatever the order of parts.
pub fn name_hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Schedule parameters as written in a profile.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rhythm {
    pub steady: bool,
    pub period_ns: u64,
    /// Each part's period is `period × (1 ± spread)`.
    pub spread: f64,
    pub active_min_ns: u64,
    pub active_max_ns: u64,
}

impl Rhythm {
    /// The seeds' rhythm: bursts of 15-25 s every ~30 s (each part's
    /// period in 27-33 s).
    pub const SEEDS: Rhythm = Rhythm {
        steady: false,
        period_ns: 30_000_000_000,
        spread: 0.1,
        active_min_ns: 15_000_000_000,
        active_max_ns: 25_000_000_000,
    };

    /// Refuse rhythms that cannot be kept.
    pub fn check(&self) -> Result<(), ValueError> {
        if self.steady {
            return Ok(());
        }
        if !(0.0..=0.5).contains(&self.spread) {
            return Err(ValueError(format!(
                "spread {} is outside 0-0.5",
                self.spread
            )));
        }
        if self.period_ns < 100_000_000 {
            return Err("period must be at least 100ms".into());
        }
        if self.active_min_ns == 0 || self.active_min_ns > self.active_max_ns {
            return Err("active must be a time or a range lo-hi with 0 < lo <= hi".into());
        }
        let shortest = (self.period_ns as f64 * (1.0 - self.spread)) as u64;
        if self.active_max_ns >= shortest {
            return Err(ValueError(format!(
                "active up to {} does not leave a rest in a period as short as {} (period {} with spread {}): shorten active, lengthen period, or use steady",
                crate::units::fmt_duration(self.active_max_ns),
                crate::units::fmt_duration(shortest),
                crate::units::fmt_duration(self.period_ns),
                self.spread
            )));
        }
        Ok(())
    }
}

/// The resolved schedule of one part (sent to the load supervisor).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartSchedule {
    pub steady: bool,
    /// This part's own period.
    pub period_ns: u64,
    /// Start of the first burst, from the load's start.
    pub offset_ns: u64,
    pub active_min_ns: u64,
    pub active_max_ns: u64,
    /// Seed of this part's burst lengths.
    pub seed: u64,
}

impl PartSchedule {
    /// Always on.
    pub fn steady() -> PartSchedule {
        PartSchedule {
            steady: true,
            period_ns: 0,
            offset_ns: 0,
            active_min_ns: 0,
            active_max_ns: 0,
            seed: 0,
        }
    }

    /// Bursts `[start, end)` from the load's start, in order, forever
    /// (steady: one burst that never ends).
    pub fn bursts(&self) -> Bursts {
        Bursts {
            s: self.clone(),
            k: 0,
            rng: Rng::new(self.seed),
        }
    }
}

pub struct Bursts {
    s: PartSchedule,
    k: u64,
    rng: Rng,
}

impl Iterator for Bursts {
    type Item = (u64, u64);
    fn next(&mut self) -> Option<(u64, u64)> {
        if self.s.steady {
            if self.k > 0 {
                return None;
            }
            self.k = 1;
            return Some((0, u64::MAX));
        }
        let start = self.s.offset_ns + self.k * self.s.period_ns;
        let len = self
            .rng
            .between(self.s.active_min_ns, self.s.active_max_ns)
            .min(self.s.period_ns);
        self.k += 1;
        Some((start, start + len))
    }
}

/// Resolve the schedules of parts `(name, rhythm)` from `seed`. Each
/// part's period is drawn in `period × (1 ± spread)`, its phase in
/// `[0, period)`; phases are then shifted so that the earliest part starts
/// at once (the load is on from the start).
pub fn resolve(seed: u64, parts: &[(&str, Rhythm)]) -> Vec<PartSchedule> {
    let mut out: Vec<PartSchedule> = parts
        .iter()
        .map(|(name, r)| {
            if r.steady {
                return PartSchedule::steady();
            }
            let mut rng = Rng::new(seed ^ name_hash(name));
            let f = 1.0 + r.spread * (2.0 * rng.unit() - 1.0);
            let period = ((r.period_ns as f64) * f).round() as u64;
            let offset = rng.between(0, period.saturating_sub(1));
            PartSchedule {
                steady: false,
                period_ns: period,
                offset_ns: offset,
                active_min_ns: r.active_min_ns,
                active_max_ns: r.active_max_ns,
                seed: rng.next_u64(),
            }
        })
        .collect();
    let first = out.iter().filter(|s| !s.steady).map(|s| s.offset_ns).min();
    if let Some(first) = first {
        for s in out.iter_mut().filter(|s| !s.steady) {
            s.offset_ns -= first;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rhythm() -> Rhythm {
        Rhythm::SEEDS
    }

    #[test]
    fn same_seed_same_schedule_and_parts_differ() {
        let parts = [("cpu", rhythm()), ("io", rhythm()), ("net", rhythm())];
        let a = resolve(42, &parts);
        let b = resolve(42, &parts);
        assert_eq!(a, b);
        let c = resolve(43, &parts);
        assert_ne!(a, c);
        // Different periods per part, within ±10 % of 30 s.
        assert_ne!(a[0].period_ns, a[1].period_ns);
        for s in &a {
            assert!((27_000_000_000..=33_000_000_000).contains(&s.period_ns));
        }
        // The earliest part starts at once.
        assert_eq!(a.iter().map(|s| s.offset_ns).min(), Some(0));
        // A part's draws do not depend on the other parts.
        let alone = resolve(42, &[("io", rhythm())]);
        assert_eq!(alone[0].period_ns, a[1].period_ns);
    }

    #[test]
    fn bursts_keep_their_period_and_length_range() {
        let s = &resolve(7, &[("cpu", rhythm())])[0];
        let bursts: Vec<(u64, u64)> = s.bursts().take(50).collect();
        assert_eq!(bursts[0].0, 0);
        for (k, (start, end)) in bursts.iter().enumerate() {
            assert_eq!(*start, s.offset_ns + k as u64 * s.period_ns);
            let len = end - start;
            assert!((15_000_000_000..=25_000_000_000).contains(&len), "{len}");
            assert!(*end < start + s.period_ns, "a rest follows every burst");
        }
        // Lengths vary.
        let mut lens: Vec<u64> = bursts.iter().map(|(a, b)| b - a).collect();
        lens.dedup();
        assert!(lens.len() > 10);
    }

    #[test]
    fn steady_is_one_endless_burst() {
        let s = PartSchedule::steady();
        let b: Vec<_> = s.bursts().collect();
        assert_eq!(b, vec![(0, u64::MAX)]);
    }

    #[test]
    fn rhythms_that_leave_no_rest_are_refused() {
        let mut r = rhythm();
        assert!(r.check().is_ok());
        r.active_max_ns = 25_000_000_000;
        r.period_ns = 30_000_000_000;
        r.spread = 0.2; // shortest period 24 s < 25 s
        assert!(
            r.check()
                .unwrap_err()
                .to_string()
                .contains("does not leave a rest")
        );
        r.active_min_ns = 0;
        assert!(r.check().is_err());
        r = rhythm();
        r.spread = 0.9;
        assert!(r.check().is_err());
    }
}
