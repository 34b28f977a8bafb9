//! [`ShardedLru`]: the node-wide caches' map — a least-recently-used map bounded by the summed
//! byte weight of its entries, split into shards each behind its own lock so that readers
//! rarely contend, counting hits and misses. [`IntHasher`] is a cheap hasher for keys made of
//! integers (SipHash would cost more than the chunk-cache lookup itself).

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher, RandomState};
use std::mem::size_of;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

/// Number of independently locked shards (a power of two).
const SHARDS: usize = 16;

/// Size and effectiveness of a cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// The configured size in bytes (0: the cache is disabled).
    pub capacity_bytes: u64,
    /// Estimated bytes held.
    pub size_bytes: u64,
    pub entries: u64,
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that had to read from disk.
    pub misses: u64,
    /// Nanoseconds spent reading missed entries from disk, where the cache measures it (the
    /// chunk cache; 0 otherwise).
    pub miss_nanos: u64,
}

/// A sharded, size-bounded LRU map; `S` hashes keys both to pick a shard and within it.
pub(crate) struct ShardedLru<K, V, S = RandomState> {
    shards: Box<[Mutex<Lru<K, V, S>>]>,
    hasher: S,
    capacity: u64,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<K: Hash + Eq + Clone, V: Clone, S: BuildHasher + Clone + Default> ShardedLru<K, V, S> {
    /// The memory an entry takes in the map itself: its slot in the slab (a vector grown by
    /// doubling: a third more than its slots on average) and its hash map bucket (kept at
    /// most 7/8 full, doubling: about half again).
    pub(crate) const ENTRY_COST: u64 =
        (size_of::<Slot<K, V>>() * 4 / 3 + size_of::<(K, usize)>() * 3 / 2) as u64;

    /// A map holding at most about `capacity_bytes`; 0 disables it.
    pub fn new(capacity_bytes: u64) -> Self {
        let per_shard = capacity_bytes / SHARDS as u64;
        let hasher = S::default();
        ShardedLru {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(Lru::new(per_shard, hasher.clone())))
                .collect(),
            hasher,
            capacity: capacity_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// `false` when the capacity is too small to hold anything.
    pub fn is_enabled(&self) -> bool {
        self.capacity >= SHARDS as u64
    }

    /// The value of `key`, made the most recently used; counts a hit or a miss.
    pub fn get(&self, key: &K) -> Option<V> {
        let found = self.shard(key).lock().get(key);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Adds or replaces `key` weighing `weight` bytes (what its key and value hold elsewhere:
    /// the map adds what it takes itself, `ENTRY_COST`), evicting the least recently used
    /// entries of its shard beyond the capacity. An entry heavier than a shard is not kept.
    pub fn insert(&self, key: K, value: V, weight: u64) {
        let weight = weight + Self::ENTRY_COST;
        self.shard(&key).lock().insert(key, value, weight);
    }

    pub fn stats(&self) -> CacheStats {
        let (mut size_bytes, mut entries) = (0, 0);
        for shard in self.shards.iter() {
            let shard = shard.lock();
            size_bytes += shard.size;
            entries += shard.map.len() as u64;
        }
        CacheStats {
            capacity_bytes: self.capacity,
            size_bytes,
            entries,
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            miss_nanos: 0,
        }
    }

    /// The shard of `key`, chosen by middle bits of its hash: the shard's own map indexes
    /// buckets by the low bits and tags slots with the high ones.
    fn shard(&self, key: &K) -> &Mutex<Lru<K, V, S>> {
        let hash = self.hasher.hash_one(key);
        &self.shards[(hash >> 32) as usize % SHARDS]
    }
}

/// Builds [`IntHasher`]s.
pub(crate) type IntHashBuilder = BuildHasherDefault<IntHasher>;

/// A fast, unkeyed hasher for keys of a few integers: multiply-rotate per word, then a final
/// avalanche so that every bit of the result depends on every input bit.
#[derive(Default)]
pub(crate) struct IntHasher(u64);

const MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for IntHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(MULTIPLIER).rotate_left(29);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// Marks the ends of the recency list.
const NIL: usize = usize::MAX;

/// One slot of the LRU's slab; `entry` is `None` for a free slot.
struct Slot<K, V> {
    entry: Option<(K, V, u64)>,
    prev: usize,
    next: usize,
}

/// One shard: a hash map into a slab of slots linked from the most (`head`) to the least
/// (`tail`) recently used.
struct Lru<K, V, S> {
    map: HashMap<K, usize, S>,
    slots: Vec<Slot<K, V>>,
    free: Vec<usize>,
    head: usize,
    tail: usize,
    size: u64,
    capacity: u64,
}

impl<K: Hash + Eq + Clone, V: Clone, S: BuildHasher> Lru<K, V, S> {
    fn new(capacity: u64, hasher: S) -> Self {
        Lru {
            map: HashMap::with_hasher(hasher),
            slots: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            size: 0,
            capacity,
        }
    }

    fn get(&mut self, key: &K) -> Option<V> {
        let index = *self.map.get(key)?;
        self.unlink(index);
        self.push_front(index);
        self.slots[index].entry.as_ref().map(|(_, v, _)| v.clone())
    }

    fn insert(&mut self, key: K, value: V, weight: u64) {
        if weight > self.capacity {
            return;
        }
        if let Some(index) = self.map.get(&key).copied() {
            self.remove(index);
        }
        let slot = Slot {
            entry: Some((key.clone(), value, weight)),
            prev: NIL,
            next: NIL,
        };
        let index = match self.free.pop() {
            Some(index) => {
                self.slots[index] = slot;
                index
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        };
        self.map.insert(key, index);
        self.push_front(index);
        self.size += weight;
        while self.size > self.capacity && self.tail != NIL {
            self.remove(self.tail);
        }
    }

    fn remove(&mut self, index: usize) {
        self.unlink(index);
        if let Some((key, _, weight)) = self.slots[index].entry.take() {
            self.map.remove(&key);
            self.size -= weight;
        }
        self.free.push(index);
    }

    fn unlink(&mut self, index: usize) {
        let (prev, next) = (self.slots[index].prev, self.slots[index].next);
        match prev {
            NIL => self.head = next,
            p => self.slots[p].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.slots[n].prev = prev,
        }
    }

    fn push_front(&mut self, index: usize) {
        self.slots[index].prev = NIL;
        self.slots[index].next = self.head;
        match self.head {
            NIL => self.tail = index,
            h => self.slots[h].prev = index,
        }
        self.head = index;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_the_least_recently_used() {
        let mut lru: Lru<u64, u64, RandomState> = Lru::new(30, RandomState::new());
        for k in 0..3 {
            lru.insert(k, k * 10, 10);
        }
        assert_eq!(lru.get(&0), Some(0));
        lru.insert(3, 30, 10);
        assert_eq!(lru.get(&1), None, "1 was the least recently used");
        for k in [0, 2, 3] {
            assert_eq!(lru.get(&k), Some(k * 10));
        }
        assert_eq!((lru.map.len(), lru.size), (3, 30));
        lru.insert(3, 31, 10);
        assert_eq!((lru.map.len(), lru.size), (3, 30));
        assert_eq!(lru.get(&3), Some(31), "replaced");
    }

    #[test]
    fn lru_skips_an_entry_heavier_than_its_capacity() {
        let mut lru: Lru<u64, u64, RandomState> = Lru::new(30, RandomState::new());
        lru.insert(1, 1, 10);
        lru.insert(2, 2, 31);
        assert_eq!((lru.get(&1), lru.get(&2)), (Some(1), None));
    }

    #[test]
    fn sharded_lru_counts_hits_and_misses_and_stays_bounded() {
        let lru: ShardedLru<(u64, u64), u64, IntHashBuilder> = ShardedLru::new(16 * 1024);
        assert!(lru.is_enabled());
        assert_eq!(lru.get(&(1, 1)), None);
        lru.insert((1, 1), 11, 100);
        assert_eq!(lru.get(&(1, 1)), Some(11));
        for i in 0..10_000 {
            lru.insert((2, i), i, 100);
        }
        let stats = lru.stats();
        assert_eq!((stats.hits, stats.misses), (1, 1));
        assert!(stats.size_bytes <= 16 * 1024, "{stats:?}");
        // Entries weigh 100 bytes and what the map itself takes for them; half a full cache
        // at least (shards fill unevenly).
        let entry = 100 + ShardedLru::<(u64, u64), u64, IntHashBuilder>::ENTRY_COST;
        assert!(stats.entries as u64 > 16 * 1024 / entry / 2, "{stats:?}");
    }

    #[test]
    fn int_hasher_spreads_consecutive_keys_over_shards_and_buckets() {
        let builder = IntHashBuilder::default();
        let mut shards = [0u32; SHARDS];
        let mut low = std::collections::HashSet::new();
        for i in 0..1_600u64 {
            let hash = builder.hash_one((7u64, i));
            shards[(hash >> 32) as usize % SHARDS] += 1;
            low.insert(hash & 0xfff);
        }
        assert!(shards.iter().all(|&n| n > 50), "{shards:?}");
        assert!(low.len() > 1_000, "{}", low.len());
    }
}
