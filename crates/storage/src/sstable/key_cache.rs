//! [`KeyCache`]: Cassandra's key cache — a bounded LRU of Index entries (partition position and
//! row index) shared by every SSTable of a node, so that a hot partition's lookup skips the
//! Summary search and the Index block read. Entries are keyed by the SSTable's unique id and
//! the partition key; those of deleted SSTables are never asked for again and age out.
//! The cache is split into shards, each behind its own lock, so readers rarely contend.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::model::PartitionKey;
use crate::sstable::index::IndexEntry;

/// Number of independently locked shards.
const SHARDS: usize = 16;
/// Bytes counted per entry beside its key and row index (map slot, links, `Arc`).
const ENTRY_OVERHEAD: u64 = 96;
/// Bytes counted per row-index block beside its clustering bounds.
const BLOCK_OVERHEAD: u64 = 48;

/// Size and effectiveness of the key cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyCacheStats {
    /// `key_cache_size` in bytes (0: the cache is disabled).
    pub capacity_bytes: u64,
    /// Estimated bytes held.
    pub size_bytes: u64,
    pub entries: u64,
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that had to read the Index.
    pub misses: u64,
}

type Key = (u64, PartitionKey);

/// The node's key cache.
pub struct KeyCache {
    shards: Box<[Mutex<Lru>]>,
    hasher: RandomState,
    capacity: u64,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl KeyCache {
    /// A cache holding at most about `capacity_bytes`; 0 disables it.
    pub fn new(capacity_bytes: u64) -> KeyCache {
        let per_shard = capacity_bytes / SHARDS as u64;
        KeyCache {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(Lru::new(per_shard)))
                .collect(),
            hasher: RandomState::new(),
            capacity: capacity_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.capacity >= SHARDS as u64
    }

    /// The cached entry of `key` in SSTable `sstable`, counting a hit or a miss.
    pub(crate) fn get(&self, sstable: u64, key: &PartitionKey) -> Option<Arc<IndexEntry>> {
        let key = (sstable, key.clone());
        let found = self.shard(&key).lock().get(&key);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Caches the entry of its key in SSTable `sstable`.
    pub(crate) fn insert(&self, sstable: u64, entry: Arc<IndexEntry>) {
        let key = (sstable, entry.key.clone());
        let size = entry_size(&entry);
        self.shard(&key).lock().insert(key, entry, size);
    }

    pub fn stats(&self) -> KeyCacheStats {
        let (mut size_bytes, mut entries) = (0, 0);
        for shard in self.shards.iter() {
            let shard = shard.lock();
            size_bytes += shard.size;
            entries += shard.map.len() as u64;
        }
        KeyCacheStats {
            capacity_bytes: self.capacity,
            size_bytes,
            entries,
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }

    fn shard(&self, key: &Key) -> &Mutex<Lru> {
        let hash = self.hasher.hash_one(key) as usize;
        &self.shards[hash % self.shards.len()]
    }
}

fn entry_size(entry: &IndexEntry) -> u64 {
    let blocks: u64 = entry
        .row_index
        .iter()
        .map(|b| (b.first.len() + b.last.len()) as u64 + BLOCK_OVERHEAD)
        .sum();
    ENTRY_OVERHEAD + entry.key.key.len() as u64 + blocks
}

/// Marks the ends of the recency list.
const NIL: usize = usize::MAX;

/// One slot of the LRU's slab; `entry` is `None` for a free slot.
struct Slot {
    entry: Option<(Key, Arc<IndexEntry>, u64)>,
    prev: usize,
    next: usize,
}

/// A least-recently-used map bounded by the summed size of its entries: a hash map into a slab
/// of slots linked from the most (`head`) to the least (`tail`) recently used.
struct Lru {
    map: HashMap<Key, usize>,
    slots: Vec<Slot>,
    free: Vec<usize>,
    head: usize,
    tail: usize,
    size: u64,
    capacity: u64,
}

impl Lru {
    fn new(capacity: u64) -> Lru {
        Lru {
            map: HashMap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            size: 0,
            capacity,
        }
    }

    fn get(&mut self, key: &Key) -> Option<Arc<IndexEntry>> {
        let index = *self.map.get(key)?;
        self.unlink(index);
        self.push_front(index);
        self.slots[index].entry.as_ref().map(|(_, e, _)| e.clone())
    }

    fn insert(&mut self, key: Key, value: Arc<IndexEntry>, size: u64) {
        if size > self.capacity {
            return;
        }
        if let Some(index) = self.map.get(&key).copied() {
            self.remove(index);
        }
        let slot = Slot {
            entry: Some((key.clone(), value, size)),
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
        self.size += size;
        while self.size > self.capacity && self.tail != NIL {
            self.remove(self.tail);
        }
    }

    fn remove(&mut self, index: usize) {
        self.unlink(index);
        if let Some((key, _, size)) = self.slots[index].entry.take() {
            self.map.remove(&key);
            self.size -= size;
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

/// Unique ids for open SSTables, the first half of key-cache keys.
pub(crate) fn next_sstable_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn entry(token: i64) -> Arc<IndexEntry> {
        Arc::new(IndexEntry {
            key: PartitionKey {
                token,
                key: Bytes::from(token.to_be_bytes().to_vec()),
            },
            position: token as u64,
            row_index: Vec::new(),
        })
    }

    #[test]
    fn lru_evicts_the_least_recently_used() {
        let size = ENTRY_OVERHEAD + 8;
        let mut lru = Lru::new(3 * size);
        for t in 0..3 {
            lru.insert((1, entry(t).key.clone()), entry(t), size);
        }
        assert!(lru.get(&(1, entry(0).key.clone())).is_some());
        lru.insert((1, entry(3).key.clone()), entry(3), size);
        assert!(
            lru.get(&(1, entry(1).key.clone())).is_none(),
            "1 was the LRU"
        );
        for t in [0, 2, 3] {
            assert!(lru.get(&(1, entry(t).key.clone())).is_some());
        }
        assert_eq!((lru.map.len(), lru.size), (3, 3 * size));
        lru.insert((1, entry(3).key.clone()), entry(3), size);
        assert_eq!((lru.map.len(), lru.size), (3, 3 * size));
    }

    #[test]
    fn cache_counts_hits_and_misses_and_stays_bounded() {
        let cache = KeyCache::new(64 * 1024);
        let key = entry(7).key.clone();
        assert!(cache.get(1, &key).is_none());
        cache.insert(1, entry(7));
        assert_eq!(cache.get(1, &key).map(|e| e.position), Some(7));
        assert!(cache.get(2, &key).is_none(), "another SSTable");
        for t in 0..100_000 {
            cache.insert(1, entry(t));
        }
        let stats = cache.stats();
        assert_eq!((stats.hits, stats.misses), (1, 2));
        assert!(stats.size_bytes <= 64 * 1024, "{stats:?}");
        assert!(stats.entries > 100, "{stats:?}");
    }

    #[test]
    fn a_zero_capacity_cache_is_disabled() {
        let cache = KeyCache::new(0);
        assert!(!cache.is_enabled());
        cache.insert(1, entry(1));
        assert_eq!(cache.stats().entries, 0);
    }
}
