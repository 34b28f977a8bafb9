//! The node's memtable pools and write back-pressure, as Cassandra's `MemtablePool`: every
//! table's live and flushing memtables are charged to a heap pool (`memtable_heap_space`) and,
//! with an offheap `memtable_allocation_type`, their cell values to an offheap pool
//! (`memtable_offheap_space`; see [`MemtableAllocation`]). The flush thread flushes the largest
//! memtable when either pool passes `memtable_cleanup_threshold` of its size; writers wait,
//! without blocking a runtime thread, while either pool is over its size, until a flush (or a
//! truncation or drop) frees memory. The coordinator bounds the wait with the write timeout.
//!
//! Summing every table's memtables costs a walk of the table registry, so writers keep a
//! headroom instead: each sum (by the flush thread every few milliseconds, or by a writer)
//! records how many bytes may still be written before a pool passes its size, and each write
//! takes its memtable growth off it. Writers sum exactly only once the headroom is spent, so a
//! pool never passes its size unnoticed between two sums, and writes far from the limits cost a
//! few atomic operations.

use std::pin::pin;
use std::sync::atomic::{AtomicI64, Ordering};

use tokio::sync::Notify;

use super::config::{MemtableAllocation, StorageConfig};
use super::core::Core;
use crate::engine::MemtableUsage;
use crate::error::{Result, StorageError};

/// Bytes charged to each pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolUsage {
    pub heap: u64,
    pub offheap: u64,
}

/// The pools' sizes and the writers waiting for room.
pub struct MemtablePools {
    allocation: MemtableAllocation,
    limits: PoolUsage,
    thresholds: PoolUsage,
    /// Bytes that may be written before the next exact sum (see the module documentation).
    headroom: AtomicI64,
    freed: Notify,
}

impl MemtablePools {
    pub fn new(config: &StorageConfig) -> MemtablePools {
        MemtablePools {
            allocation: config.memtable_allocation,
            limits: PoolUsage {
                heap: config.memtable_space,
                offheap: config.memtable_offheap_space,
            },
            thresholds: PoolUsage {
                heap: config.flush_threshold(),
                offheap: config.offheap_flush_threshold(),
            },
            headroom: AtomicI64::new(0),
            freed: Notify::new(),
        }
    }

    /// What `usage` charges to each pool.
    pub fn charge(&self, usage: MemtableUsage) -> PoolUsage {
        match self.allocation {
            MemtableAllocation::Heap => PoolUsage {
                heap: usage.total,
                offheap: 0,
            },
            MemtableAllocation::Offheap => PoolUsage {
                heap: usage.structure(),
                offheap: usage.values,
            },
        }
    }

    /// Whether either pool is over its cleanup threshold; records the headroom left.
    pub fn needs_flush(&self, usage: PoolUsage) -> bool {
        let heap = self.limits.heap.saturating_sub(usage.heap);
        let offheap = match self.allocation {
            MemtableAllocation::Heap => u64::MAX,
            MemtableAllocation::Offheap => self.limits.offheap.saturating_sub(usage.offheap),
        };
        let headroom = i64::try_from(heap.min(offheap)).unwrap_or(i64::MAX);
        self.headroom.store(headroom, Ordering::Relaxed);
        exceeds(usage, self.thresholds)
    }

    /// Takes a write's memtable growth off the headroom.
    pub fn charge_write(&self, grown: u64) {
        let grown = i64::try_from(grown).unwrap_or(i64::MAX);
        self.headroom.fetch_sub(grown, Ordering::Relaxed);
    }

    /// Whether either pool is over its size: writers must wait.
    pub fn is_full(&self, usage: PoolUsage) -> bool {
        exceeds(usage, self.limits)
    }

    /// Wakes the waiting writers to look again.
    pub fn notify(&self) {
        self.freed.notify_waiters();
    }
}

fn exceeds(usage: PoolUsage, bounds: PoolUsage) -> bool {
    usage.heap > bounds.heap || usage.offheap > bounds.offheap
}

impl Core {
    /// What every table's live and flushing memtables charge to the pools.
    pub fn pool_usage(&self) -> PoolUsage {
        let usage: MemtableUsage = self
            .tables
            .load()
            .values()
            .map(|e| e.memtable_usage())
            .sum();
        self.pools.charge(usage)
    }

    /// Returns once the pools have room for a write; fails with [`StorageError::Closed`] when
    /// the node stops meanwhile. Cancel-safe: dropping the future abandons the wait.
    pub async fn wait_for_memtable_space(&self) -> Result<()> {
        if self.pools.headroom.load(Ordering::Relaxed) > 0 {
            return Ok(());
        }
        let asked = std::time::Instant::now();
        loop {
            let mut freed = pin!(self.pools.freed.notified());
            freed.as_mut().enable();
            if self.stop.load(Ordering::Relaxed) {
                return Err(StorageError::Closed);
            }
            let usage = self.pool_usage();
            self.pools.needs_flush(usage);
            if !self.pools.is_full(usage) {
                let waited = asked.elapsed();
                if waited > std::time::Duration::from_millis(5) {
                    tracing::debug!("a write waited {waited:?} for memtable space");
                }
                return Ok(());
            }
            // Only the flush thread: waking the other writers would have them wake each other
            // in a loop while no flush can free memory (a failed disk).
            self.wake_background();
            freed.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facade::Storage;
    use crate::TableParams;
    use bytes::Bytes;
    use mutation::ReadFilter;
    use mutation::{Cell, ColumnData, Mutation, PartitionKey, PartitionUpdate, Row, TableId};
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    use std::time::Duration;

    const TABLE: TableId = TableId(uuid::Uuid::from_u128(0xb10c));
    const WRITES: usize = 300;
    const LIMIT: u64 = 64 * 1024;

    fn write(n: usize) -> Mutation {
        let mut row = Row::new(Bytes::from_static(b"c"));
        let value = Bytes::from(vec![n as u8; 1024]);
        row.columns = vec![ColumnData::simple("v", Cell::live(1, value))];
        Mutation {
            table: TABLE,
            key: PartitionKey {
                token: n as i64,
                key: Bytes::from(n.to_be_bytes().to_vec()),
            },
            update: PartitionUpdate {
                rows: vec![row],
                ..PartitionUpdate::default()
            },
        }
    }

    /// Acknowledged writes, sampled until they stop advancing.
    async fn settled(acked: &AtomicUsize) -> usize {
        let mut last = usize::MAX;
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let now = acked.load(Ordering::Relaxed);
            if now == last {
                return now;
            }
            last = now;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[allow(
        clippy::await_holding_lock,
        reason = "the test holds the flush lock on purpose while writers wait"
    )]
    async fn writers_wait_for_a_blocked_flush_and_memory_stays_bounded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = StorageConfig::new(dir.path().join("data"), dir.path().join("log"));
        config.memtable_space = LIMIT;
        let storage = Arc::new(Storage::open(config).expect("open"));
        storage
            .create_table(TABLE, TableParams::new("ks", "t"))
            .expect("table");
        storage.finish_replay();
        let engine = storage.core.engine(TABLE).expect("engine");
        let blocked = engine.lock_flush();
        let acked = Arc::new(AtomicUsize::new(0));
        let writer = {
            let (storage, acked) = (storage.clone(), acked.clone());
            tokio::spawn(async move {
                for n in 0..WRITES {
                    storage.apply(write(n)).await.expect("write");
                    acked.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let stalled_at = settled(&acked).await;
        assert!(stalled_at < WRITES, "writes never waited");
        let used = storage.memtable_pools().heap;
        assert!(used > LIMIT / 2, "{used}");
        assert!(
            used <= LIMIT + 2 * 1024,
            "{used} bytes held over a {LIMIT} limit"
        );
        drop(blocked);
        tokio::time::timeout(Duration::from_secs(20), writer)
            .await
            .expect("writes resume after the flush")
            .expect("writer");
        for n in 0..WRITES {
            let found = storage
                .read(TABLE, &write(n).key, &ReadFilter::all(), 0)
                .expect("read");
            assert!(found.is_some(), "write {n} lost");
        }
        assert!(storage.table_stats(TABLE).expect("stats").sstables > 0);
    }

    #[test]
    fn offheap_allocation_charges_cell_values_to_the_offheap_pool() {
        let mut config = StorageConfig::new("/d", "/c");
        config.memtable_space = 1000;
        config.memtable_offheap_space = 400;
        config.memtable_cleanup_threshold = 0.5;
        let usage = MemtableUsage {
            total: 900,
            values: 300,
        };
        let heap = MemtablePools::new(&config);
        assert_eq!(
            heap.charge(usage),
            PoolUsage {
                heap: 900,
                offheap: 0
            }
        );
        assert!(heap.needs_flush(heap.charge(usage)));
        assert!(!heap.is_full(heap.charge(usage)));
        config.memtable_allocation = MemtableAllocation::Offheap;
        let offheap = MemtablePools::new(&config);
        let charged = offheap.charge(usage);
        assert_eq!(
            charged,
            PoolUsage {
                heap: 600,
                offheap: 300
            }
        );
        assert!(offheap.needs_flush(charged), "300 > half of 400");
        assert!(!offheap.is_full(charged));
        assert!(offheap.is_full(PoolUsage {
            heap: 0,
            offheap: 401
        }));
        assert!(!offheap.needs_flush(PoolUsage::default()));
    }
}
