//! [`ShardedLru`]: the node-wide caches' map — a map bounded by the summed byte weight of its
//! entries that evicts about the least recently used (CLOCK: a lookup marks its entry
//! referenced, and eviction sweeps the slots in turn, sparing a referenced entry once), split
//! into shards each behind its own lock so that readers rarely contend, counting hits and
//! misses. A lookup touches only its hash bucket and its entry's slot: the linked LRU list this
//! replaced also rewrote both neighbours and the head, each a cache miss (the caches' bookkeeping
//! was a tenth of a mixed workload's CPU). Lookups may use a borrowed form of the key
//! ([`Equivalent`]), so a caller need not build (and clone into) an owned key to ask.
//! [`IntHasher`] is a cheap hasher for keys made of integers (SipHash would cost more than the
//! chunk-cache lookup itself).

use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher, RandomState};
use std::mem::size_of;
use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) use hashbrown::Equivalent;
use hashbrown::HashTable;
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

/// A sharded, size-bounded map evicting about the least recently used; `S` hashes keys both to
/// pick a shard and within it.
pub(crate) struct ShardedLru<K, V, S = RandomState> {
    shards: Box<[Mutex<Shard<K, V>>]>,
    hasher: S,
    capacity: u64,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<K: Hash + Eq, V: Clone, S: BuildHasher + Default> ShardedLru<K, V, S> {
    /// The memory an entry takes in the map itself: its slot (in a vector grown by doubling: a
    /// third more than its slots on average) and its hash table bucket, an index and a control
    /// byte (kept at most 7/8 full, doubling: twice as many buckets as entries at worst).
    pub(crate) const ENTRY_COST: u64 =
        (size_of::<Option<Entry<K, V>>>() * 4 / 3 + (size_of::<u32>() + 1) * 2) as u64;

    /// A map holding at most about `capacity_bytes`; 0 disables it.
    pub fn new(capacity_bytes: u64) -> Self {
        let per_shard = capacity_bytes / SHARDS as u64;
        ShardedLru {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(Shard::new(per_shard)))
                .collect(),
            hasher: S::default(),
            capacity: capacity_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// `false` when the capacity is too small to hold anything.
    pub fn is_enabled(&self) -> bool {
        self.capacity >= SHARDS as u64
    }

    /// The value of `key` (or of the key it stands for: equivalent keys hash alike), marked
    /// recently used; counts a hit or a miss.
    pub fn get<Q: Hash + Equivalent<K> + ?Sized>(&self, key: &Q) -> Option<V> {
        let hash = self.hasher.hash_one(key);
        let found = self.shard(hash).lock().get(hash, key);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Adds or replaces `key` weighing `weight` bytes (what its key and value hold elsewhere:
    /// the map adds what it takes itself, `ENTRY_COST`), evicting entries of its shard beyond
    /// the capacity. An entry heavier than a shard is not kept.
    pub fn insert(&self, key: K, value: V, weight: u64) {
        let hash = self.hasher.hash_one(&key);
        let weight = weight + Self::ENTRY_COST;
        self.shard(hash).lock().insert(hash, key, value, weight);
    }

    pub fn stats(&self) -> CacheStats {
        let (mut size_bytes, mut entries) = (0, 0);
        for shard in self.shards.iter() {
            let shard = shard.lock();
            size_bytes += shard.size;
            entries += shard.table.len() as u64;
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

    /// The shard of a key hashing to `hash`, chosen by middle bits: the shard's table indexes
    /// buckets by the low bits and tags them with the high ones.
    fn shard(&self, hash: u64) -> &Mutex<Shard<K, V>> {
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

/// One cached entry.
struct Entry<K, V> {
    hash: u64,
    key: K,
    value: V,
    weight: u64,
    /// Looked up since the clock hand last passed.
    referenced: bool,
}

/// One shard: a hash table of indexes into a slab of slots (`None`: free), and the clock hand
/// sweeping the slab for an entry to evict.
struct Shard<K, V> {
    table: HashTable<u32>,
    slots: Vec<Option<Entry<K, V>>>,
    free: Vec<u32>,
    hand: usize,
    size: u64,
    capacity: u64,
}

impl<K: Eq, V: Clone> Shard<K, V> {
    fn new(capacity: u64) -> Self {
        Shard {
            table: HashTable::new(),
            slots: Vec::new(),
            free: Vec::new(),
            hand: 0,
            size: 0,
            capacity,
        }
    }

    fn get<Q: Equivalent<K> + ?Sized>(&mut self, hash: u64, key: &Q) -> Option<V> {
        let index = self.find(hash, key)?;
        let entry = self.slots[index as usize].as_mut()?;
        if !entry.referenced {
            entry.referenced = true;
        }
        Some(entry.value.clone())
    }

    fn insert(&mut self, hash: u64, key: K, value: V, weight: u64) {
        if let Some(index) = self.find(hash, &key) {
            self.remove(index);
        }
        if weight > self.capacity {
            return;
        }
        let index = match self.free.pop() {
            Some(index) => index,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        self.slots[index as usize] = Some(Entry {
            hash,
            key,
            value,
            weight,
            referenced: false,
        });
        let slots = &self.slots;
        self.table.insert_unique(hash, index, |&i| {
            slots[i as usize].as_ref().map_or(0, |e| e.hash)
        });
        self.size += weight;
        self.evict_beyond_capacity(index);
    }

    fn find<Q: Equivalent<K> + ?Sized>(&self, hash: u64, key: &Q) -> Option<u32> {
        let slots = &self.slots;
        let matches = |&i: &u32| {
            slots[i as usize]
                .as_ref()
                .is_some_and(|e| key.equivalent(&e.key))
        };
        self.table.find(hash, matches).copied()
    }

    /// Sweeps the clock hand over the slots, unmarking referenced entries and evicting the
    /// first unmarked one, until the shard is within its capacity; never evicts `keep` (the
    /// entry just inserted, which alone fits).
    fn evict_beyond_capacity(&mut self, keep: u32) {
        while self.size > self.capacity {
            let index = self.hand;
            self.hand = (self.hand + 1) % self.slots.len();
            if index == keep as usize {
                continue;
            }
            match &mut self.slots[index] {
                Some(entry) if entry.referenced => entry.referenced = false,
                Some(_) => self.remove(index as u32),
                None => {}
            }
        }
    }

    fn remove(&mut self, index: u32) {
        let Some(entry) = self.slots[index as usize].take() else {
            return;
        };
        if let Ok(found) = self.table.find_entry(entry.hash, |&i| i == index) {
            found.remove();
        }
        self.size -= entry.weight;
        self.free.push(index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestShard = Shard<u64, u64>;

    impl TestShard {
        fn put(&mut self, key: u64, value: u64, weight: u64) {
            self.insert(IntHashBuilder::default().hash_one(key), key, value, weight);
        }

        fn look(&mut self, key: u64) -> Option<u64> {
            self.get(IntHashBuilder::default().hash_one(key), &key)
        }
    }

    #[test]
    fn lru_evicts_the_least_recently_used() {
        let mut shard = TestShard::new(30);
        for k in 0..3 {
            shard.put(k, k * 10, 10);
        }
        assert_eq!(shard.look(0), Some(0));
        shard.put(3, 30, 10);
        assert_eq!(shard.look(1), None, "1 was the least recently used");
        for k in [0, 2, 3] {
            assert_eq!(shard.look(k), Some(k * 10));
        }
        assert_eq!((shard.table.len(), shard.size), (3, 30));
        shard.put(3, 31, 10);
        assert_eq!((shard.table.len(), shard.size), (3, 30));
        assert_eq!(shard.look(3), Some(31), "replaced");
    }

    #[test]
    fn the_clock_spares_entries_looked_up_since_it_passed_and_keeps_the_newest() {
        let mut shard = TestShard::new(40);
        for k in 0..4 {
            shard.put(k, k, 10);
        }
        for k in [0, 2] {
            shard.look(k);
        }
        shard.put(4, 4, 10);
        shard.put(5, 5, 10);
        let kept: Vec<u64> = (0..6).filter(|&k| shard.look(k).is_some()).collect();
        assert_eq!(kept, [0, 2, 4, 5]);
        // An entry as heavy as the whole shard evicts everything else, but stays itself.
        shard.put(6, 6, 40);
        assert_eq!((shard.table.len(), shard.look(6)), (1, Some(6)));
    }

    #[test]
    fn lru_skips_an_entry_heavier_than_its_capacity() {
        let mut shard = TestShard::new(30);
        shard.put(1, 1, 10);
        shard.put(2, 2, 31);
        assert_eq!((shard.look(1), shard.look(2)), (Some(1), None));
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
        assert!(stats.entries > 16 * 1024 / entry / 2, "{stats:?}");
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
