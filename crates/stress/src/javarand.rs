//! Bit-exact ports of the two random generators cassandra-stress seeds its data from:
//! `java.util.Random` (a 48-bit LCG) and Cassandra's `FasterRandom` (xorshift, reseeded
//! from `java.util.Random` every 32 draws). Keys and column values must come out byte for
//! byte as cassandra-stress makes them, so that a Helenus `write` and a Cassandra `read`
//! (or the other way round) agree.

const MULTIPLIER: i64 = 0x5DEE_CE66D;
const ADDEND: i64 = 0xB;
const MASK: i64 = (1 << 48) - 1;

/// `java.util.Random`.
#[derive(Debug, Clone)]
pub struct JavaRandom {
    seed: i64,
    next_gaussian: Option<f64>,
}

impl JavaRandom {
    pub fn new(seed: i64) -> JavaRandom {
        let mut r = JavaRandom {
            seed: 0,
            next_gaussian: None,
        };
        r.set_seed(seed);
        r
    }

    pub fn set_seed(&mut self, seed: i64) {
        self.seed = (seed ^ MULTIPLIER) & MASK;
        self.next_gaussian = None;
    }

    fn next(&mut self, bits: u32) -> i32 {
        self.seed = (self.seed.wrapping_mul(MULTIPLIER).wrapping_add(ADDEND)) & MASK;
        (self.seed >> (48 - bits)) as i32
    }

    pub fn next_long(&mut self) -> i64 {
        let hi = i64::from(self.next(32)) << 32;
        hi.wrapping_add(i64::from(self.next(32)))
    }

    pub fn next_double(&mut self) -> f64 {
        let hi = i64::from(self.next(26)) << 27;
        (hi + i64::from(self.next(27))) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// The polar method, as `java.util.Random.nextGaussian` (Java 8-16) computes it.
    pub fn next_gaussian(&mut self) -> f64 {
        if let Some(g) = self.next_gaussian.take() {
            return g;
        }
        loop {
            let v1 = 2.0 * self.next_double() - 1.0;
            let v2 = 2.0 * self.next_double() - 1.0;
            let s = v1 * v1 + v2 * v2;
            if s < 1.0 && s != 0.0 {
                let multiplier = (-2.0 * s.ln() / s).sqrt();
                self.next_gaussian = Some(v2 * multiplier);
                return v1 * multiplier;
            }
        }
    }
}

/// Cassandra's `org.apache.cassandra.utils.FasterRandom`.
#[derive(Debug, Clone)]
pub struct FasterRandom {
    random: JavaRandom,
    seed: i64,
    reseed: u32,
}

impl FasterRandom {
    pub fn new() -> FasterRandom {
        FasterRandom {
            random: JavaRandom::new(0),
            seed: 0,
            reseed: 0,
        }
    }

    pub fn set_seed(&mut self, seed: i64) {
        self.seed = seed;
        self.rollover();
    }

    fn rollover(&mut self) {
        self.reseed = 0;
        self.random.set_seed(self.seed);
        self.seed = self.random.next_long();
    }

    pub fn next_long(&mut self) -> i64 {
        self.reseed += 1;
        if self.reseed == 32 {
            self.rollover();
        }
        let mut s = self.seed;
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        self.seed = s;
        s.wrapping_mul(2_685_821_657_736_338_717)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Golden values printed by a JDK: `new Random(42)`, `new Random(-7)`.
    #[test]
    fn java_random_matches_the_jdk() {
        let mut r = JavaRandom::new(42);
        assert_eq!(r.next_long(), JDK_42_LONG);
        assert_eq!(r.next_double(), JDK_42_DOUBLE);
        let mut g = JavaRandom::new(-7);
        assert_eq!(g.next_gaussian(), JDK_M7_GAUSS_1);
        assert_eq!(g.next_gaussian(), JDK_M7_GAUSS_2);
    }

    #[test]
    fn faster_random_is_deterministic_and_rolls_over() {
        let mut a = FasterRandom::new();
        let mut b = FasterRandom::new();
        a.set_seed(99);
        b.set_seed(99);
        let xs: Vec<i64> = (0..40).map(|_| a.next_long()).collect();
        let ys: Vec<i64> = (0..40).map(|_| b.next_long()).collect();
        assert_eq!(xs, ys);
        assert_eq!(xs[0], FASTER_99_FIRST);
    }

    const JDK_42_LONG: i64 = -5_025_562_857_975_149_833;
    const JDK_42_DOUBLE: f64 = 0.683_223_471_759_845_4;
    const JDK_M7_GAUSS_1: f64 = -1.186_026_259_327_453_5;
    const JDK_M7_GAUSS_2: f64 = 0.889_635_520_331_673_9;
    const FASTER_99_FIRST: i64 = -7_961_612_512_240_789_922;
}
