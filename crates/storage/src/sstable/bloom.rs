//! The Filter component: a standard Bloom filter over the partition-key bytes, sized from the
//! key count and `bloom_filter_fp_chance`. Bit positions come from MurmurHash3 x64/128 (seed 0)
//! by double hashing, so filters are deterministic across runs and machines. A chance of 1.0 or
//! more disables the filter (every key "may" be present), as in Cassandra.

use std::path::Path;

use bytes::BufMut;

use crate::error::Result;
use crate::sstable::format::{seal, unseal, Decoder, FILTER_MAGIC};

/// Cassandra's default `bloom_filter_fp_chance`.
pub const DEFAULT_FP_CHANCE: f64 = 0.01;
const MAX_HASHES: u32 = 20;

/// A Bloom filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloomFilter {
    words: Vec<u64>,
    num_bits: u64,
    hashes: u32,
}

impl BloomFilter {
    /// An empty filter for `keys` keys at false-positive chance `fp_chance`.
    pub fn new(keys: usize, fp_chance: f64) -> BloomFilter {
        if fp_chance.is_nan() || fp_chance >= 1.0 {
            return BloomFilter {
                words: Vec::new(),
                num_bits: 0,
                hashes: 0,
            };
        }
        let p = fp_chance.max(1e-9);
        let n = keys.max(1) as f64;
        let ln2 = std::f64::consts::LN_2;
        let bits = (-(n * p.ln()) / (ln2 * ln2)).ceil().max(64.0);
        let num_bits = (bits as u64).div_ceil(64) * 64;
        let hashes = ((num_bits as f64 / n) * ln2)
            .round()
            .clamp(1.0, MAX_HASHES as f64) as u32;
        BloomFilter {
            words: vec![0; (num_bits / 64) as usize],
            num_bits,
            hashes,
        }
    }

    /// Builds a filter over keys already hashed with [`hash_key`].
    pub(crate) fn from_hashes(hashes: &[(u64, u64)], fp_chance: f64) -> BloomFilter {
        let mut filter = BloomFilter::new(hashes.len(), fp_chance);
        for hash in hashes {
            filter.insert_hash(*hash);
        }
        filter
    }

    pub fn insert(&mut self, key: &[u8]) {
        self.insert_hash(hash_key(key));
    }

    fn insert_hash(&mut self, hash: (u64, u64)) {
        for bit in self.positions(hash) {
            self.words[(bit / 64) as usize] |= 1 << (bit % 64);
        }
    }

    /// `false` only if `key` was certainly never inserted.
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.positions(hash_key(key))
            .all(|bit| self.words[(bit / 64) as usize] & (1 << (bit % 64)) != 0)
    }

    fn positions(&self, (h1, h2): (u64, u64)) -> impl Iterator<Item = u64> {
        let num_bits = self.num_bits;
        (0..u64::from(self.hashes)).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % num_bits)
    }

    /// Memory used by the bit array.
    pub fn size_bytes(&self) -> usize {
        self.words.len() * 8
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(12 + self.words.len() * 8);
        body.put_u32(self.hashes);
        body.put_u64(self.num_bits);
        for word in &self.words {
            body.put_u64(*word);
        }
        seal(FILTER_MAGIC, &body)
    }

    pub(crate) fn decode(bytes: &[u8], file: &Path) -> Result<BloomFilter> {
        let body = unseal(bytes, FILTER_MAGIC, file)?;
        let mut d = Decoder::new(body, file, 6);
        let hashes = d.u32()?;
        let num_bits = d.u64()?;
        if num_bits % 64 != 0 || hashes > MAX_HASHES || (num_bits == 0) != (hashes == 0) {
            return Err(d.corrupt("invalid filter parameters"));
        }
        let words_len =
            usize::try_from(num_bits / 64).map_err(|_| d.corrupt("filter too large"))?;
        if words_len.saturating_mul(8) != body.len() - 12 {
            return Err(d.corrupt("filter length does not match its bit count"));
        }
        let words = (0..words_len)
            .map(|_| d.u64())
            .collect::<Result<Vec<_>>>()?;
        d.finish()?;
        Ok(BloomFilter {
            words,
            num_bits,
            hashes,
        })
    }
}

/// The key's 128-bit hash: Cassandra's MurmurHash3 x64/128, as its Bloom filters use.
pub(crate) fn hash_key(key: &[u8]) -> (u64, u64) {
    ring::hash3_x64_128(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured_fp_rate(keys: u32, fp: f64) -> f64 {
        let mut filter = BloomFilter::new(keys as usize, fp);
        for i in 0..keys {
            filter.insert(format!("key-{i}").as_bytes());
        }
        for i in 0..keys {
            assert!(filter.may_contain(format!("key-{i}").as_bytes()));
        }
        let false_positives = (keys..2 * keys)
            .filter(|i| filter.may_contain(format!("key-{i}").as_bytes()))
            .count();
        false_positives as f64 / f64::from(keys)
    }

    #[test]
    fn false_positive_rate_is_within_twice_the_configured_chance() {
        for fp in [0.01, 0.1] {
            let rate = measured_fp_rate(100_000, fp);
            assert!(rate <= 2.0 * fp, "fp chance {fp}: measured {rate}");
            assert!(rate > 0.0, "a real filter has some false positives");
        }
    }

    #[test]
    fn disabled_filter_admits_everything_and_encoding_round_trips() {
        let off = BloomFilter::new(10, 1.0);
        assert!(off.may_contain(b"anything"));
        let mut on = BloomFilter::new(10, 0.01);
        on.insert(b"a");
        let file = Path::new("f");
        for f in [off, on] {
            assert_eq!(BloomFilter::decode(&f.encode(), file).expect("decode"), f);
        }
    }
}
