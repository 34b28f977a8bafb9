//! [`TokenFilter`]: a concurrent blocked Bloom filter of the partition tokens a memtable holds,
//! so that a point read of a partition the memtable lacks skips the skiplist search (most
//! reads of a table with more data on disk than in memory). Tokens are Murmur3 hashes already,
//! so their bits are used directly; two keys sharing a token only make a false positive.

use std::sync::atomic::{AtomicU64, Ordering};

/// Filter bits per expected partition: with three bits set in one 64-bit word, about 1% false
/// positives at the expected count.
const BITS_PER_KEY: usize = 16;
const MIN_WORDS: usize = 64;
/// 1 MiB: a memtable of far more partitions than this serves makes its filter say "maybe"
/// more often, never wrongly "no".
const MAX_WORDS: usize = 1 << 17;

pub(crate) struct TokenFilter {
    words: Box<[AtomicU64]>,
}

impl TokenFilter {
    /// A filter sized for about `partitions` tokens.
    pub fn for_partitions(partitions: usize) -> TokenFilter {
        let words = (partitions.saturating_mul(BITS_PER_KEY) / 64)
            .next_power_of_two()
            .clamp(MIN_WORDS, MAX_WORDS);
        TokenFilter {
            words: (0..words).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    pub fn insert(&self, token: i64) {
        let (word, bits) = self.probe(token);
        if word.load(Ordering::Relaxed) & bits != bits {
            word.fetch_or(bits, Ordering::Relaxed);
        }
    }

    /// False only if `token` was never inserted.
    pub fn may_contain(&self, token: i64) -> bool {
        let (word, bits) = self.probe(token);
        word.load(Ordering::Relaxed) & bits == bits
    }

    /// The word of `token` (chosen by its high bits) and the three bits it sets there.
    fn probe(&self, token: i64) -> (&AtomicU64, u64) {
        let h = token as u64;
        let index = (h >> 32) as usize & (self.words.len() - 1);
        let bits = (1 << (h & 63)) | (1 << ((h >> 6) & 63)) | (1 << ((h >> 12) & 63));
        (&self.words[index], bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(seed: u64, n: usize) -> impl Iterator<Item = i64> {
        (0..n as u64).map(move |i| {
            let mut z = (seed ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            (z ^ (z >> 29)) as i64
        })
    }

    #[test]
    fn inserted_tokens_are_always_found() {
        let filter = TokenFilter::for_partitions(1000);
        for token in tokens(1, 5000).chain([i64::MIN, -1, 0, i64::MAX]) {
            filter.insert(token);
            assert!(filter.may_contain(token));
        }
        assert!(tokens(1, 5000).all(|t| filter.may_contain(t)));
    }

    #[test]
    fn false_positives_stay_rare_at_the_expected_count() {
        let filter = TokenFilter::for_partitions(50_000);
        tokens(2, 50_000).for_each(|t| filter.insert(t));
        let false_positives = tokens(1 << 40, 100_000)
            .filter(|&t| filter.may_contain(t))
            .count();
        assert!(false_positives < 2_000, "{false_positives} of 100000");
    }

    #[test]
    fn sizes_are_bounded() {
        let words = |partitions| TokenFilter::for_partitions(partitions).words.len();
        assert_eq!(words(0), MIN_WORDS);
        assert_eq!(words(usize::MAX), MAX_WORDS);
        assert_eq!(words(50_000) * 8, 128 * 1024);
    }
}
