//! A small seeded generator for simulations and fuzzing.

/// The seeded generator simulations draw their schedules from (SplitMix64): the same seed gives
/// the same draws on every platform. Outside the `sim` feature, so that the fuzzers draw from it
/// too.
#[derive(Clone, Debug)]
pub struct SimRng(u64);

impl SimRng {
    pub fn new(seed: u64) -> SimRng {
        SimRng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (0 when `bound` is 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound.max(1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_reproducible_and_spread() {
        let mut a = SimRng::new(7);
        let mut b = SimRng::new(7);
        let draws: Vec<u64> = (0..100).map(|_| a.below(10)).collect();
        assert_eq!(draws, (0..100).map(|_| b.below(10)).collect::<Vec<_>>());
        assert!((0..10).all(|digit| draws.contains(&digit)));
        let hits = (0..10_000).filter(|_| a.chance(0.25)).count();
        assert!((2_200..2_800).contains(&hits), "{hits}");
        assert_eq!(a.below(0), 0);
    }
}
