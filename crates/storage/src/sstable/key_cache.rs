//! [`KeyCache`]: Cassandra's key cache — a bounded map of where partitions are (their
//! [`Location`]: position and row index) shared by every SSTable of a node, so that a hot
//! partition's lookup skips the Summary search and the Index block scan. Entries are keyed by
//! the SSTable's unique id and the partition key; those of deleted SSTables are never asked
//! for again and age out. The map is a [`ShardedLru`], so readers rarely contend.
//!
//! An entry is held in its slot of the map: its key (bytes inline up to [`INLINE_KEY`]) and
//! its location (the row index, if any, shared). A hit then reads the hash bucket and the slot
//! and nothing else: each pointer followed was a cache miss (the key's bytes, the entry behind
//! its `Arc`), and with them a lookup cost more than the Index scan it saves.

use std::hash::{Hash, Hasher};
use std::mem::size_of;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

use crate::sstable::index::{Location, RowIndexBlock};
use crate::sstable::lru::{CacheStats, Equivalent, ShardedLru};
use mutation::PartitionKey;

/// Partition keys up to this many bytes are held inline in the cache's slots.
const INLINE_KEY: usize = 22;

/// Size and effectiveness of the key cache.
pub type KeyCacheStats = CacheStats;

/// The node's key cache. Keys hash with foldhash (seeded per process, so clients cannot
/// choose colliding keys): SipHash, the standard map's, cost more than the rest of a hit.
pub struct KeyCache {
    lru: ShardedLru<CachedKey, Location, foldhash::fast::RandomState>,
}

impl KeyCache {
    /// A cache holding at most about `capacity_bytes`; 0 disables it.
    pub fn new(capacity_bytes: u64) -> KeyCache {
        KeyCache {
            lru: ShardedLru::new(capacity_bytes),
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.lru.is_enabled()
    }

    /// Where partition `key` is in SSTable `sstable`, if cached; counts a hit or a miss.
    pub(crate) fn get(&self, sstable: u64, key: &PartitionKey) -> Option<Location> {
        self.lru.get(&KeyRef { sstable, key })
    }

    /// Caches where partition `key` is in SSTable `sstable`.
    pub(crate) fn insert(&self, sstable: u64, key: &PartitionKey, location: Location) {
        let cached = CachedKey {
            sstable,
            token: key.token,
            bytes: KeyBytes::of(&key.key),
        };
        let weight = cached.bytes.outside() + row_index_size(&location.row_index);
        self.lru.insert(cached, location, weight as u64);
    }

    pub fn stats(&self) -> KeyCacheStats {
        self.lru.stats()
    }
}

/// A cached entry's key.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CachedKey {
    sstable: u64,
    token: i64,
    bytes: KeyBytes,
}

/// A partition key's bytes: inline when short, else a copy of their own (never a slice of a
/// larger buffer, which the cache would keep alive).
#[derive(Clone, Debug, PartialEq, Eq)]
enum KeyBytes {
    Inline { len: u8, bytes: [u8; INLINE_KEY] },
    Owned(Bytes),
}

impl KeyBytes {
    fn of(key: &[u8]) -> KeyBytes {
        let mut bytes = [0; INLINE_KEY];
        match bytes.get_mut(..key.len()) {
            Some(inline) => {
                inline.copy_from_slice(key);
                KeyBytes::Inline {
                    len: key.len() as u8,
                    bytes,
                }
            }
            None => KeyBytes::Owned(Bytes::copy_from_slice(key)),
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            KeyBytes::Inline { len, bytes } => &bytes[..*len as usize],
            KeyBytes::Owned(bytes) => bytes,
        }
    }

    /// The bytes held outside the slot: an owned key's buffer and the header it shares it by.
    fn outside(&self) -> usize {
        match self {
            KeyBytes::Inline { .. } => 0,
            KeyBytes::Owned(bytes) => bytes.len() + 4 * size_of::<usize>(),
        }
    }
}

/// Hashes a key's parts; [`CachedKey`] and [`KeyRef`] hash alike through it.
fn hash_key<H: Hasher>(sstable: u64, token: i64, bytes: &[u8], state: &mut H) {
    state.write_u64(sstable);
    state.write_i64(token);
    state.write(bytes);
}

impl Hash for CachedKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_key(self.sstable, self.token, self.bytes.as_slice(), state);
    }
}

/// A key-cache key borrowed from the caller.
struct KeyRef<'a> {
    sstable: u64,
    key: &'a PartitionKey,
}

impl Hash for KeyRef<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_key(self.sstable, self.key.token, &self.key.key, state);
    }
}

impl Equivalent<CachedKey> for KeyRef<'_> {
    fn equivalent(&self, cached: &CachedKey) -> bool {
        self.sstable == cached.sstable
            && self.key.token == cached.token
            && *self.key.key == *cached.bytes.as_slice()
    }
}

/// The memory behind a row index (the map counts the slot holding it): its shared block list
/// and the bounds' buffers.
fn row_index_size(row_index: &[RowIndexBlock]) -> usize {
    if row_index.is_empty() {
        return 0;
    }
    let blocks: usize = row_index
        .iter()
        .map(|b| b.first.len() + b.last.len() + size_of::<RowIndexBlock>())
        .sum();
    2 * size_of::<usize>() + blocks
}

/// Unique ids for open SSTables, the first half of key-cache and chunk-cache keys; never reused,
/// so the entries of deleted SSTables simply age out.
pub(crate) fn next_sstable_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(token: i64, len: usize) -> PartitionKey {
        PartitionKey {
            token,
            key: Bytes::from(vec![token as u8; len]),
        }
    }

    fn at(position: u64) -> Location {
        Location {
            position,
            ..Default::default()
        }
    }

    #[test]
    fn cache_counts_hits_and_misses_and_stays_bounded() {
        let cache = KeyCache::new(64 * 1024);
        let (short, long) = (key(7, 8), key(7, INLINE_KEY + 1));
        assert!(cache.get(1, &short).is_none());
        cache.insert(1, &short, at(7));
        cache.insert(1, &long, at(8));
        assert_eq!(cache.get(1, &short), Some(at(7)));
        assert_eq!(cache.get(1, &long), Some(at(8)));
        assert!(cache.get(2, &short).is_none(), "another SSTable");
        for t in 0..100_000 {
            cache.insert(1, &key(t, 8), at(t as u64));
        }
        let stats = cache.stats();
        assert_eq!((stats.hits, stats.misses), (2, 2));
        assert!(stats.size_bytes <= 64 * 1024, "{stats:?}");
        assert!(stats.entries > 100, "{stats:?}");
    }

    #[test]
    fn a_zero_capacity_cache_is_disabled() {
        let cache = KeyCache::new(0);
        assert!(!cache.is_enabled());
        cache.insert(1, &key(1, 8), at(1));
        assert_eq!(cache.stats().entries, 0);
    }
}
