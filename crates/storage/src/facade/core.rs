//! [`Core`]: the state shared by the [`Storage`](super::Storage) facade and its background
//! threads — the table registry, the commit log and the write barrier that keeps memtable
//! switches consistent with commit-log positions — and the flush and recycling logic.
//!
//! The write barrier: a write logs its record and applies it to the active memtable under a
//! read lock; a memtable switch takes the write lock and notes the log position. So every write
//! logged before that position is in the switched-out memtable and every later one in the new
//! memtable, and the position becomes the table's replay floor once the flush is on disk.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex, RwLock};

use super::config::StorageConfig;
use super::pressure::MemtablePools;
use super::replay::ReplayState;
use crate::backoff::Backoff;
use crate::commitlog::{CommitLog, Durable, Position};
use crate::compaction::exec::{Context, Registry, Throttle};
use crate::counter::CounterLocks;
use crate::engine::{FlushReport, LsmEngine};
use crate::error::{Result, StorageError};
use crate::health::{Health, Operation};
use crate::log_entry::encode_mutations;
use crate::sstable::{Caches, ChunkCache, KeyCache, WatchSlot};
use crate::waited::take_timed;
use mutation::{Mutation, TableId};

/// The pause after the first failed background compaction; it doubles with each failure in a
/// row up to [`MAX_COMPACTION_RETRY`].
const FIRST_COMPACTION_RETRY: Duration = Duration::from_secs(1);
const MAX_COMPACTION_RETRY: Duration = Duration::from_secs(60);

/// State shared between the facade and the background threads.
pub struct Core {
    pub config: StorageConfig,
    pub log: CommitLog,
    /// Read by every request; replaced whole when a table is created or dropped.
    pub tables: ArcSwap<HashMap<TableId, Arc<LsmEngine>>>,
    /// See the module documentation.
    barrier: RwLock<()>,
    pub replay: Mutex<ReplayState>,
    /// Packed position of the next record replay will apply (`u64::MAX` outside replay).
    pub replay_cursor: AtomicU64,
    /// Segments of earlier runs stay until every table is registered and replayed.
    pub replay_finished: AtomicBool,
    /// Smallest segment id of earlier runs (`u64::MAX` when there were none).
    pub first_old_segment: u64,
    pub counter_locks: CounterLocks,
    pub stop: AtomicBool,
    pub throttle: Throttle,
    pub registry: Registry,
    pub concurrent_compactors: AtomicUsize,
    pub running_compactions: AtomicUsize,
    pub compaction_workers: Mutex<Vec<JoinHandle<()>>>,
    /// Wakes the background threads (new flushes, finished compactions, stop).
    pub wake: (Mutex<()>, Condvar),
    /// The key cache every table's SSTables share.
    pub key_cache: Arc<KeyCache>,
    /// The chunk cache every table's SSTables share.
    pub chunk_cache: Arc<ChunkCache>,
    /// Memtable pool sizes and the writers waiting for room.
    pub pools: MemtablePools,
    /// The failure policies and the data directories in use.
    pub health: Arc<Health>,
    /// Paces background compactions while they keep failing.
    pub compaction_backoff: Mutex<Backoff>,
    /// Flushes that failed since the node started.
    pub flush_failures: AtomicU64,
    /// The watch told about large partitions written (see [`crate::PartitionWatch`]).
    pub partition_watch: WatchSlot,
}

impl Core {
    pub fn new(
        config: StorageConfig,
        log: CommitLog,
        replay: ReplayState,
        health: Arc<Health>,
    ) -> Core {
        let first_old_segment = replay.segments.first().map_or(u64::MAX, |s| s.id);
        Core {
            throttle: Throttle::new(config.compaction_throughput),
            key_cache: Arc::new(KeyCache::new(config.key_cache_size)),
            chunk_cache: Arc::new(ChunkCache::new(config.file_cache_size)),
            pools: MemtablePools::new(&config),
            concurrent_compactors: AtomicUsize::new(config.concurrent_compactors.max(1)),
            config,
            log,
            tables: ArcSwap::default(),
            barrier: RwLock::new(()),
            replay: Mutex::new(replay),
            replay_cursor: AtomicU64::new(u64::MAX),
            replay_finished: AtomicBool::new(false),
            first_old_segment,
            counter_locks: CounterLocks::default(),
            stop: AtomicBool::new(false),
            registry: Registry::default(),
            running_compactions: AtomicUsize::new(0),
            compaction_workers: Mutex::new(Vec::new()),
            wake: (Mutex::new(()), Condvar::new()),
            health,
            compaction_backoff: Mutex::new(Backoff::new(
                FIRST_COMPACTION_RETRY,
                MAX_COMPACTION_RETRY,
            )),
            flush_failures: AtomicU64::new(0),
            partition_watch: WatchSlot::default(),
        }
    }

    /// The node's caches, as every table's engine uses them.
    pub fn caches(&self) -> Caches {
        Caches {
            keys: Some(self.key_cache.clone()),
            chunks: Some(self.chunk_cache.clone()),
        }
    }

    pub fn engine(&self, table: TableId) -> Result<Arc<LsmEngine>> {
        self.tables
            .load()
            .get(&table)
            .cloned()
            .ok_or(StorageError::UnknownTable(table))
    }

    pub fn engines(&self) -> Vec<Arc<LsmEngine>> {
        self.tables.load().values().cloned().collect()
    }

    /// Logs `mutations` as one record and applies them; await the result for durability.
    pub fn log_and_apply(&self, mutations: Vec<Mutation>) -> Result<Durable> {
        let engines = mutations
            .iter()
            .map(|m| self.engine(m.table))
            .collect::<Result<Vec<_>>>()?;
        let payload = encode_mutations(&mutations);
        let barrier = &self.barrier;
        let (_barrier, waited) = take_timed(|| barrier.try_read(), || barrier.read());
        if waited > std::time::Duration::from_millis(5) {
            tracing::debug!(
                "a write waited {waited:?} for a memtable switch or recycling (the barrier)"
            );
        }
        let durable = self.log.append(&payload)?;
        for (mutation, engine) in mutations.into_iter().zip(engines) {
            let grown = engine.apply_logged(&mutation.key, mutation.update, durable.position());
            self.pools.charge_write(grown);
        }
        Ok(durable)
    }

    /// Runs `apply` for a replayed record under the barrier, then advances the replay cursor.
    pub fn replay_record(&self, next: Position, apply: impl FnOnce()) {
        let _barrier = self.barrier.read();
        apply();
        self.replay_cursor.store(next.pack(), Ordering::Relaxed);
    }

    /// The position every later write (and replayed record) will be at or after.
    fn switch_position(&self) -> Position {
        let cursor = Position::unpack(self.replay_cursor.load(Ordering::Relaxed));
        self.log.current_position().min(cursor)
    }

    /// What a compaction run now needs from the node: throttle, progress registry, stop flag.
    pub fn compaction_context(&self) -> Context<'_> {
        Context {
            throttle: &self.throttle,
            registry: &self.registry,
            stop: &self.stop,
            now: super::now_seconds(),
        }
    }

    /// Flushes the table's memtable to an SSTable, then recycles commit-log segments. A failure
    /// is counted and goes through the disk failure policy; the memtables stay in memory for
    /// the next attempt.
    pub fn flush(&self, engine: &LsmEngine) -> Result<FlushReport> {
        let lock = engine.lock_flush();
        let floor = {
            let _barrier = self.barrier.write();
            engine.switch_memtable();
            self.switch_position()
        };
        let report = engine
            .flush_switched(&lock, floor)
            .inspect_err(|error| self.flush_failed(error))?;
        drop(lock);
        self.recycle();
        self.wake_all();
        Ok(report)
    }

    /// Flushes every table, each even when an earlier one failed (it may be on another
    /// disk); answers the first failure.
    pub fn flush_all(&self) -> Result<()> {
        let mut outcome = Ok(());
        for engine in self.engines() {
            outcome = outcome.and(self.flush_unless_dropped(&engine));
        }
        outcome
    }

    /// Flushes a table the caller found registered; nothing when it was dropped meanwhile.
    fn flush_unless_dropped(&self, engine: &LsmEngine) -> Result<()> {
        match self.flush(engine) {
            Err(StorageError::Cancelled(_)) => Ok(()),
            flushed => flushed.map(drop),
        }
    }

    /// Discards the table's data (its truncation record is already logged), once its running
    /// compactions and other tasks are cancelled and stopped.
    pub fn truncate(&self, engine: &LsmEngine) -> Result<()> {
        let _pause = engine.pause_tasks();
        let lock = engine.lock_flush();
        engine.check_live()?;
        let (old, floor) = {
            let _barrier = self.barrier.write();
            (engine.reset_view(&lock), self.switch_position())
        };
        engine.finish_truncate(&lock, &old, floor)?;
        drop(lock);
        self.recycle();
        self.pools.notify();
        Ok(())
    }

    /// Deletes the files of a table no longer registered, except its snapshots, once its
    /// tasks are cancelled and stopped and a flush under way is over (later ones fail). A
    /// failure to delete goes through the disk failure policy.
    pub fn drop_files(&self, engine: &LsmEngine) -> Result<()> {
        engine.set_autocompaction(false);
        engine.close();
        let _lock = engine.lock_flush();
        self.pools.notify();
        engine
            .dirs()
            .iter()
            .try_for_each(|dir| crate::snapshot::remove_table_data(dir))
            .inspect_err(|error| self.disk_failure(Operation::Write, error))
    }

    /// Deletes the commit-log segments no table needs any more.
    pub fn recycle(&self) {
        let bound = {
            let _barrier = self.barrier.write();
            self.recycle_bound()
        };
        self.log.recycle(bound);
    }

    /// The oldest segment still needed: by unflushed data, or by replay not yet finished.
    fn recycle_bound(&self) -> u64 {
        let mut bound = self.log.current_position().segment;
        if !self.replay_finished.load(Ordering::Relaxed) {
            bound = bound.min(self.first_old_segment);
        }
        let needed = self.engines().iter().filter_map(|e| e.min_position()).min();
        needed.map_or(bound, |p| bound.min(p.segment))
    }

    /// Flushes the largest memtable when a memtable pool is over its cleanup threshold, and
    /// the tables dirty in the oldest segment when the commit log is too large.
    pub fn relieve_pressure(&self) -> Result<()> {
        let engines = self.engines();
        if self.pools.needs_flush(self.pool_usage()) {
            let charged = |e: &Arc<LsmEngine>| {
                let usage = self.pools.charge(e.memtable_usage());
                usage.heap + usage.offheap
            };
            if let Some(largest) = engines.iter().max_by_key(|e| charged(e)) {
                if charged(largest) > 0 {
                    self.flush_unless_dropped(largest)?;
                }
            }
        }
        if self.log.disk_bytes() > self.config.commitlog_total_space {
            let oldest = engines.iter().filter_map(|e| e.min_position()).min();
            for engine in &engines {
                if oldest.is_some_and(|o| {
                    engine
                        .min_position()
                        .is_some_and(|p| p.segment == o.segment)
                }) {
                    self.flush_unless_dropped(engine)?;
                }
            }
        }
        Ok(())
    }

    /// Wakes the background threads and the writers waiting for memtable space.
    pub fn wake_all(&self) {
        self.wake_background();
        self.pools.notify();
    }

    /// Wakes the flush and compaction threads only.
    pub fn wake_background(&self) {
        self.wake.1.notify_all();
    }
}
