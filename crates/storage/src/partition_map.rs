//! A memtable's partitions in (token, key) order: B-trees, each holding a slice of the token
//! range behind a read-write lock. Tokens are hashes spread evenly over the range, so the
//! slices hold about as many partitions each, and a memtable sized for `n` partitions has
//! some `n / 256` of them: each tree stays a few levels deep, its upper levels stay in cache,
//! and a search touches two or three cold lines where a skiplist of the same partitions
//! touched a dozen (its search was the largest cost of a write). Writers lock only their
//! slice while they apply, so two writers rarely meet, and readers of a slice share it. A
//! memtable has at least 16 slices, so a table's first memtable does not make its writers
//! wait for one lock.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::RwLock;

use mutation::PartitionKey;

/// Partitions a slice is sized for.
const PER_SLICE: usize = 256;
/// Slices of a memtable sized for few partitions (a table's first, or a quiet table's), so
/// that writers on two cores still rarely wait for one another: 512 bytes when empty.
const MIN_SLICES: usize = 16;
const MAX_SLICES: usize = 4096;

pub(crate) struct PartitionMap<V> {
    slices: Box<[RwLock<BTreeMap<PartitionKey, V>>]>,
    /// Bits of a token that do not choose its slice.
    shift: u32,
    len: AtomicUsize,
}

impl<V> PartitionMap<V> {
    /// A map sized for about `partitions` partitions.
    pub fn for_partitions(partitions: usize) -> Self {
        let slices = (partitions / PER_SLICE)
            .clamp(MIN_SLICES, MAX_SLICES)
            .next_power_of_two();
        PartitionMap {
            slices: (0..slices).map(|_| RwLock::new(BTreeMap::new())).collect(),
            shift: 64 - slices.trailing_zeros(),
            len: AtomicUsize::new(0),
        }
    }

    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    fn slice(&self, token: i64) -> &RwLock<BTreeMap<PartitionKey, V>> {
        &self.slices[self.index_of(token)]
    }

    /// Runs `apply` on partition `key`, first inserting it (under the key `owned` makes, and
    /// the value `make` makes) when absent. The slice is locked for writing meanwhile.
    pub fn upsert<R>(
        &self,
        key: &PartitionKey,
        owned: impl FnOnce() -> PartitionKey,
        make: impl FnOnce() -> V,
        apply: impl FnOnce(&mut V) -> R,
    ) -> R {
        let mut slice = self.slice(key.token).write();
        if let Some(value) = slice.get_mut(key) {
            return apply(value);
        }
        self.len.fetch_add(1, Ordering::Relaxed);
        apply(slice.entry(owned()).or_insert_with(make))
    }

    /// Runs `read` on partition `key`, if present, with its slice locked for reading.
    pub fn read<R>(&self, key: &PartitionKey, read: impl FnOnce(&V) -> R) -> Option<R> {
        self.slice(key.token).read().get(key).map(read)
    }

    pub fn contains(&self, key: &PartitionKey) -> bool {
        self.slice(key.token).read().contains_key(key)
    }

    /// Visits every partition in order, each slice locked for reading while it is visited;
    /// the first error stops the walk.
    pub fn try_for_each<E>(
        &self,
        mut visit: impl FnMut(&PartitionKey, &V) -> Result<(), E>,
    ) -> Result<(), E> {
        for slice in self.slices.iter() {
            for (key, value) in slice.read().iter() {
                visit(key, value)?;
            }
        }
        Ok(())
    }

    /// The keys from `start` on, in order, read a slice at a time (no lock is held between
    /// two calls of the iterator's `next`).
    pub fn keys_from(&self, start: Bound<PartitionKey>) -> impl Iterator<Item = PartitionKey> + '_ {
        let first = match &start {
            Bound::Included(key) | Bound::Excluded(key) => self.index_of(key.token),
            Bound::Unbounded => 0,
        };
        self.slices[first..]
            .iter()
            .enumerate()
            .flat_map(move |(n, slice)| {
                let from = if n == 0 {
                    start.clone()
                } else {
                    Bound::Unbounded
                };
                let keys: Vec<PartitionKey> = slice
                    .read()
                    .range((from, Bound::Unbounded))
                    .map(|(key, _)| key.clone())
                    .collect();
                keys
            })
    }

    fn index_of(&self, token: i64) -> usize {
        // The sign bit flipped: the unsigned order of the result is the tokens' order.
        let ordered = (token as u64) ^ (1 << 63);
        ordered.checked_shr(self.shift).unwrap_or(0) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use mutation::testing::keyed_by_token as key;

    fn spread(n: i64) -> i64 {
        n.wrapping_mul(0x9e37_79b9_7f4a_7c15_u64 as i64)
    }

    #[test]
    fn keys_come_back_in_token_order_across_slices() {
        for sized_for in [0, 100_000, 1 << 30] {
            let map = PartitionMap::for_partitions(sized_for);
            let mut tokens: Vec<i64> = (0..3_000)
                .map(spread)
                .chain([i64::MIN, i64::MAX, 0])
                .collect();
            for &token in &tokens {
                map.upsert(&key(token), || key(token), || 0, |v| *v += 1);
            }
            tokens.sort_unstable();
            tokens.dedup();
            assert_eq!(map.len(), tokens.len());
            let all: Vec<i64> = map.keys_from(Bound::Unbounded).map(|k| k.token).collect();
            assert_eq!(all, tokens);
            let mut walked = Vec::new();
            map.try_for_each(|k, _| {
                walked.push(k.token);
                Ok::<_, ()>(())
            })
            .expect("walk");
            assert_eq!(walked, tokens);
            let from = tokens[1_000];
            let after: Vec<i64> = map
                .keys_from(Bound::Excluded(key(from)))
                .map(|k| k.token)
                .collect();
            assert_eq!(after, tokens[1_001..]);
        }
    }

    #[test]
    fn upsert_inserts_once_and_reads_find_what_was_written() {
        let map = PartitionMap::for_partitions(1_000);
        for round in 1..=3 {
            for n in 0..500 {
                let k = key(spread(n));
                map.upsert(&k, || k.clone(), || 0, |v| *v += 1);
                assert_eq!(map.read(&k, |v| *v), Some(round));
            }
        }
        assert_eq!(map.len(), 500);
        assert!(map.contains(&key(spread(7))));
        assert!(!map.contains(&key(spread(700))));
        assert_eq!(map.read(&key(spread(700)), |v| *v), None);
    }
}
