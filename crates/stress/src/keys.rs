//! Keys and column values of cassandra-stress's predefined `standard1`/`counter1` workloads,
//! generated exactly as cassandra-stress generates them: a population seed becomes a 10-byte
//! hex key (`HexBytes`), the key's bytes fold into a row seed, and each column's bytes come from
//! `FasterRandom` seeded from that row seed and the column's salt (`Bytes`). A `write` here
//! and a `read` by cassandra-stress (or the reverse) therefore see the same rows.

use crate::dist::{DistSpec, Sampler};
use crate::javarand::FasterRandom;

/// cassandra-stress's default (and only predefined) key size.
pub const KEY_SIZE: usize = 10;

/// Every generator's identity distribution: `uniform(1..100B)`.
const IDENTITY_MAX: i64 = 100_000_000_000;

/// A generator's salt: the first half of MurmurHash3 of its config name.
fn salt(name: &str) -> i64 {
    ring::murmur3_token(name.as_bytes())
}

/// Generates keys and values for one worker; it holds reusable sampler state only.
#[derive(Debug, Clone)]
pub struct RowGen {
    key_salt: i64,
    column_salts: Vec<i64>,
    identity: Sampler,
    size: Sampler,
    bytes: FasterRandom,
}

impl RowGen {
    pub fn new(columns: &[String], size: DistSpec) -> RowGen {
        RowGen {
            key_salt: salt("randomstrkey"),
            column_salts: columns
                .iter()
                .map(|c| salt(&format!("randomstr{c}")))
                .collect(),
            identity: Sampler::new(DistSpec::uniform(1, IDENTITY_MAX), 0),
            size: Sampler::new(size, 0),
            bytes: FasterRandom::new(),
        }
    }

    /// The partition key of population seed `seed` (`HexBytes` with `fixed(10)` size).
    pub fn key(&mut self, seed: i64) -> [u8; KEY_SIZE] {
        self.identity.set_seed(seed ^ self.key_salt);
        self.identity.next(); // the size seed, unused by a fixed size
        let mut value = self.identity.next();
        let mut key = [0u8; KEY_SIZE];
        for b in key.iter_mut() {
            let v = (value & 15) as u8;
            *b = if v < 10 { b'0' + v } else { b'A' + v }; // sic: 'A' + v, as cassandra-stress
            value = ((value as u64) >> 4) as i64;
        }
        key
    }

    /// Writes the value of column `column` of the row keyed `key` into `out`.
    pub fn value(&mut self, key: &[u8], column: usize, out: &mut Vec<u8>) {
        self.identity
            .set_seed(row_seed(key) ^ self.column_salts[column]);
        let seed = self.identity.next();
        self.size.set_seed(seed);
        self.bytes.set_seed(!seed);
        let size = usize::try_from(self.size.next()).unwrap_or(0);
        out.clear();
        out.reserve(size);
        while out.len() < size {
            // Each long gives up to 8 bytes, least significant first.
            let v = self.bytes.next_long().to_le_bytes();
            let n = (size - out.len()).min(8);
            out.extend_from_slice(&v[..n]);
        }
    }
}

/// `Partition.seed`: the key's bytes folded as `31 * seed + byte` (signed bytes).
fn row_seed(key: &[u8]) -> i64 {
    key.iter().fold(0i64, |s, &b| {
        s.wrapping_mul(31).wrapping_add(i64::from(b as i8))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen() -> RowGen {
        let cols: Vec<String> = (0..5).map(|i| format!("C{i}")).collect();
        RowGen::new(&cols, DistSpec::fixed(34))
    }

    #[test]
    fn keys_are_ten_hex_like_bytes_and_stable() {
        let mut g = gen();
        let k1 = g.key(1);
        assert_eq!(k1, g.key(1));
        assert_ne!(k1, g.key(2));
        assert!(k1
            .iter()
            .all(|b| b.is_ascii_digit() || (b'K'..=b'P').contains(b)));
        let distinct: std::collections::HashSet<_> = (1..=10_000).map(|s| g.key(s)).collect();
        assert_eq!(distinct.len(), 10_000);
    }

    #[test]
    fn key_matches_cassandra_stress_golden() {
        // Computed with the JDK's java.util.Random and the same HexBytes steps.
        assert_eq!(&gen().key(1), GOLDEN_KEY_1);
        assert_eq!(&gen().key(2), b"O8LK79LO61");
        assert_eq!(&gen().key(12345), b"MK5NL23561");
    }

    #[test]
    fn values_depend_on_key_and_column() {
        let mut g = gen();
        let k = g.key(7);
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        g.value(&k, 0, &mut a);
        g.value(&k, 1, &mut b);
        g.value(&k, 0, &mut c);
        assert_eq!(a.len(), 34);
        assert_eq!(a, c);
        assert_ne!(a, b);
    }

    #[test]
    fn value_size_follows_the_size_distribution() {
        let cols = vec!["C0".to_string()];
        let mut g = RowGen::new(&cols, DistSpec::uniform(1, 100));
        let mut out = Vec::new();
        let sizes: std::collections::HashSet<usize> = (0..200)
            .map(|s| {
                let k = g.key(s);
                g.value(&k, 0, &mut out);
                out.len()
            })
            .collect();
        assert!(sizes.len() > 20 && sizes.iter().all(|&s| (1..=100).contains(&s)));
    }

    const GOLDEN_KEY_1: &[u8; 10] = b"0P37709P21";
}
