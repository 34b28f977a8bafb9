//! YCSB's key choosers: uniform, zipfian (scrambled: popular keys spread over the key
//! space), latest (zipfian over the most recently inserted) and hotspot, with YCSB's
//! constants, and its FNV-64 key hash.

use crate::javarand::JavaRandom;

const ZIPFIAN_CONSTANT: f64 = 0.99;
/// YCSB's `ScrambledZipfianGenerator.ITEM_COUNT` and its precomputed zeta.
const SCRAMBLED_ITEMS: u64 = 10_000_000_000;
const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// YCSB's `Utils.fnvhash64`.
pub fn fnv_hash64(mut val: u64) -> u64 {
    let mut hash: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        hash ^= val & 0xff;
        val >>= 8;
        hash = hash.wrapping_mul(1_099_511_628_211);
    }
    (hash as i64).unsigned_abs()
}

/// Gray et al.'s zipfian generator over `0..items`, as YCSB's `ZipfianGenerator`,
/// extending zeta incrementally when the item count grows (for `latest`).
#[derive(Debug, Clone)]
pub struct Zipfian {
    items: u64,
    zetan: f64,
    zeta2: f64,
    alpha: f64,
    eta: f64,
}

impl Zipfian {
    pub fn new(items: u64) -> Zipfian {
        Zipfian::with_zeta(items, zeta(0, items, 0.0))
    }

    fn with_zeta(items: u64, zetan: f64) -> Zipfian {
        let theta = ZIPFIAN_CONSTANT;
        let zeta2 = zeta(0, 2, 0.0);
        let mut z = Zipfian {
            items,
            zetan,
            zeta2,
            alpha: 1.0 / (1.0 - theta),
            eta: 0.0,
        };
        z.eta = z.eta_for(items);
        z
    }

    fn eta_for(&self, items: u64) -> f64 {
        let theta = ZIPFIAN_CONSTANT;
        (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - self.zeta2 / self.zetan)
    }

    fn grow(&mut self, items: u64) {
        if items > self.items {
            self.zetan = zeta(self.items, items, self.zetan);
            self.items = items;
            self.eta = self.eta_for(items);
        }
    }

    pub fn next(&mut self, rng: &mut JavaRandom) -> u64 {
        let u = rng.next_double();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(ZIPFIAN_CONSTANT) {
            return 1;
        }
        let v = (self.items as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        v.min(self.items - 1)
    }
}

/// `sum(1/i^theta)` for `i` in `from+1..=to`, added to `initial`.
fn zeta(from: u64, to: u64, initial: f64) -> f64 {
    (from..to).fold(initial, |s, i| {
        s + 1.0 / ((i + 1) as f64).powf(ZIPFIAN_CONSTANT)
    })
}

/// A request distribution over the records inserted so far.
#[derive(Debug, Clone)]
pub enum KeyChooser {
    Uniform,
    Zipfian(Zipfian),
    Latest(Zipfian),
    Hotspot { hot_set: f64, hot_ops: f64 },
}

impl KeyChooser {
    pub fn new(name: &str, records: u64) -> Result<KeyChooser, String> {
        match name {
            "uniform" => Ok(KeyChooser::Uniform),
            "zipfian" => Ok(KeyChooser::Zipfian(Zipfian::with_zeta(
                SCRAMBLED_ITEMS,
                SCRAMBLED_ZETAN,
            ))),
            "latest" => Ok(KeyChooser::Latest(Zipfian::new(records.max(2)))),
            "hotspot" => Ok(KeyChooser::Hotspot {
                hot_set: 0.2,
                hot_ops: 0.8,
            }),
            other => Err(format!("Unknown request distribution \"{other}\"")),
        }
    }

    /// A record number in `0..records` (`records` > 0).
    pub fn next(&mut self, records: u64, rng: &mut JavaRandom) -> u64 {
        match self {
            KeyChooser::Uniform => (rng.next_double() * records as f64) as u64 % records,
            KeyChooser::Zipfian(z) => fnv_hash64(z.next(rng)) % records,
            KeyChooser::Latest(z) => {
                z.grow(records.max(2));
                (records - 1).saturating_sub(z.next(rng)).min(records - 1)
            }
            KeyChooser::Hotspot { hot_set, hot_ops } => {
                let hot = ((records as f64 * *hot_set) as u64).max(1);
                if rng.next_double() < *hot_ops {
                    (rng.next_double() * hot as f64) as u64 % hot
                } else {
                    hot + (rng.next_double() * (records - hot).max(1) as f64) as u64
                        % (records - hot).max(1)
                }
                .min(records - 1)
            }
        }
    }
}

/// YCSB's key for record `n` (hashed insert order): `user` + FNV hash.
pub fn key(n: u64) -> String {
    format!("user{}", fnv_hash64(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(chooser: &str, records: u64, draws: usize) -> Vec<u64> {
        let mut c = KeyChooser::new(chooser, records).expect("chooser");
        let mut rng = JavaRandom::new(3);
        let mut h = vec![0u64; records as usize];
        for _ in 0..draws {
            h[c.next(records, &mut rng) as usize] += 1;
        }
        h
    }

    #[test]
    fn fnv_matches_ycsb() {
        // Printed by a JDK running YCSB's Utils.fnvhash64.
        assert_eq!(fnv_hash64(0), 6_284_781_860_667_377_211);
        assert_eq!(fnv_hash64(1), 8_517_097_267_634_966_620);
        assert_eq!(key(0), "user6284781860667377211");
        assert_ne!(fnv_hash64(1), fnv_hash64(2));
    }

    #[test]
    fn uniform_is_flat_and_zipfian_is_skewed() {
        let u = histogram("uniform", 100, 100_000);
        assert!(u.iter().all(|&c| (700..1300).contains(&c)), "{u:?}");
        let mut z = histogram("zipfian", 1000, 100_000);
        z.sort_unstable_by(|a, b| b.cmp(a));
        let top10: u64 = z[..10].iter().sum();
        // The 10 hottest of 10B zipfian items hold ~11% of draws (uniform: 1%).
        assert!(top10 > 10_000, "top 10 of 1000 keys got {top10}");
    }

    #[test]
    fn latest_prefers_recent_records_and_hotspot_the_hot_set() {
        let l = histogram("latest", 1000, 50_000);
        assert!(l[999] > l[0] * 10 && l[999] > 1000, "{} {}", l[999], l[0]);
        let h = histogram("hotspot", 1000, 50_000);
        let hot: u64 = h[..200].iter().sum();
        assert!((38_000..42_000).contains(&hot), "{hot}");
        assert!(KeyChooser::new("pareto", 10).is_err());
    }
}
