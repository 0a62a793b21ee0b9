//! The project's one deterministic generator (SplitMix64): small, well
//! mixed, and the same stream for a seed on every machine and every
//! version, which load schedules, study orders and the fixed-seed
//! statistics of reports rely on. Not for anything secret.

/// SplitMix64 from a seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `(0, 1)`: never 0, for logarithms.
    pub fn open_unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi]` (rounded from [`Rng::unit`]).
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + ((hi - lo) as f64 * self.unit()).round() as u64
    }

    /// Uniform in `0..n` (n > 0) by one multiply-shift (a bias below
    /// n / 2⁶⁴, nothing for resampling).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Uniform in `0..n` (n > 0) without any bias, by rejection.
    pub fn below_exact(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    /// The stream is part of the project's reproducibility: a study's
    /// order and a load's schedule for a seed must not change.
    #[test]
    fn the_stream_of_a_seed_is_splitmix64s() {
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        let mut r = Rng::new(7);
        let x = r.unit();
        assert!((0.0..1.0).contains(&x));
        assert!(r.below(3) < 3 && r.below_exact(3) < 3);
    }
}
