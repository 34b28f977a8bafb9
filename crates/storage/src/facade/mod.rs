//! [`Storage`]: the node's storage facade — table registry, durable writes through the commit
//! log into per-table LSM engines, counter increments, reads, flushes, compactions and
//! commit-log replay. Background threads (see `background`) flush under memory or commit-log
//! pressure and run compactions; [`Storage::shutdown`] drains everything to SSTables.

mod background;
mod cleanup;
mod config;
mod core;
mod estimates;
mod failures;
mod garbage;
mod pressure;
mod reads;
mod repair_state;
mod replay;
mod scrub;
mod snapshots;
mod streams;
mod usage;
mod validation;

pub(crate) use cleanup::in_ranges;
pub use cleanup::CleanupReport;
pub use config::{default_commitlog_total_space, MemtableAllocation, StorageConfig};
pub use estimates::SizeEstimates;
pub use pressure::PoolUsage;
pub use reads::TombstoneThresholds;
pub use repair_state::{PendingReport, RepairScope};
pub use replay::ReplayStats;
pub use scrub::{CorruptSstable, ScrubReport, VerifyOptions, VerifyReport};
pub use snapshots::SnapshotTable;
pub use usage::TableUsage;

use std::collections::{HashMap, HashSet};
use std::fs;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use self::core::Core;
use crate::commitlog::CommitLog;
use crate::compaction::exec::{CompactionProgress, CompactionRecord};
use crate::counter::{new_shards, read_filter, CounterUpdate};
use crate::engine::{table_dir, FlushReport, LsmEngine, TableEngine};
use crate::error::{Result, StorageError};
use crate::filter::{KeyRange, ReadFilter};
use crate::health::Health;
use crate::log_entry::{encode, LogEntry};
use crate::params::TableParams;
use mutation::{Mutation, Partition, PartitionKey, TableId};
use replay::ReplayState;

/// Sizes of one table's data, as `nodetool tablestats` reports them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableStats {
    pub sstables: usize,
    /// Bytes on disk of all SSTables.
    pub disk_bytes: u64,
    /// Memory of the memtables (active and being flushed).
    pub memtable_bytes: usize,
    /// Tombstones of every kind stored in the SSTables.
    pub tombstones: u64,
    /// SSTables per LCS level (index = level).
    pub levels: Vec<usize>,
}

/// The storage of one node.
pub struct Storage {
    core: Arc<Core>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Storage {
    /// Opens (creating if needed) the directories, starts the commit log and the background
    /// threads (none with [`StorageConfig::in_memory`]). Does not replay.
    pub fn open(config: StorageConfig) -> Result<Storage> {
        for dir in config.data_dirs.iter().chain([&config.commitlog_dir]) {
            fs::create_dir_all(dir).map_err(|e| StorageError::io(dir, e))?;
        }
        let health = Arc::new(Health::new(
            config.disk_failure_policy,
            config.commit_failure_policy,
            &config.data_dirs,
        ));
        let (log, segments) = CommitLog::open_with_health(
            &config.commitlog_dir,
            config.sync,
            config.segment_size,
            health.clone(),
        )?;
        let replay = ReplayState {
            segments,
            replayed: HashSet::new(),
        };
        let in_memory = config.in_memory;
        let core = Arc::new(Core::new(config, log, replay, health));
        let threads = match in_memory {
            true => Vec::new(),
            false => background::start(&core)?,
        };
        Ok(Storage {
            core,
            threads: Mutex::new(threads),
        })
    }

    /// Reports the partitions flushes and compactions write past `watch`'s thresholds.
    pub fn watch_partitions(&self, watch: Arc<dyn crate::PartitionWatch>) {
        self.core.partition_watch.install(watch);
    }

    /// Registers a table and opens its SSTables; registering it again is a no-op.
    pub fn create_table(&self, id: TableId, params: TableParams) -> Result<()> {
        if self.core.tables.load().contains_key(&id) {
            return Ok(());
        }
        let dirs: Vec<_> = self
            .core
            .config
            .data_dirs
            .iter()
            .map(|data| table_dir(data, &params.keyspace, &params.name, id.0))
            .collect();
        let quarantine = self.core.config.ignore_corruption;
        let engine = LsmEngine::open_in(&dirs, params.settings()?, quarantine)?
            .with_caches(self.core.caches())
            .with_health(self.core.health.clone())
            .with_watch(self.core.partition_watch.clone());
        tracing::debug!(
            "registering table {}.{} ({id})",
            params.keyspace,
            params.name
        );
        let engine = Arc::new(engine);
        self.core.tables.rcu(|tables| {
            let mut tables = HashMap::clone(tables);
            tables.entry(id).or_insert_with(|| engine.clone());
            tables
        });
        self.core.wake_all();
        Ok(())
    }

    /// Applies changed table parameters (an `ALTER TABLE`): the compaction strategy switches
    /// live; new SSTables use the new compression and Bloom filter settings.
    pub fn alter_table(&self, id: TableId, params: TableParams) -> Result<()> {
        self.engine(id)?.set_settings(params.settings()?);
        self.core.wake_all();
        Ok(())
    }

    /// Forgets a table and deletes its files except its snapshots, once its compactions and
    /// other tasks are cancelled and stopped and a flush under way is over; a drop record keeps
    /// replay from restoring it. Dropping a table that is not registered does nothing (a
    /// schema change applied again after a failure).
    pub async fn drop_table(&self, id: TableId) -> Result<()> {
        let mut removed = None;
        self.core.tables.rcu(|tables| {
            let mut tables = HashMap::clone(tables);
            removed = tables.remove(&id);
            tables
        });
        let Some(engine) = removed else {
            return Ok(());
        };
        // Durable with the next sync; no need to wait, the table is already gone in memory.
        let _ = self.core.log.append(&encode(&LogEntry::Drop(id)))?;
        let core = self.core.clone();
        blocking(move || core.drop_files(&engine)).await
    }

    /// Removes all data of a table, durably: memtables are discarded and SSTables deleted,
    /// once its compactions and other tasks are cancelled and stopped.
    pub async fn truncate(&self, id: TableId) -> Result<()> {
        let engine = self.engine(id)?;
        self.core
            .log
            .append(&encode(&LogEntry::Truncate(id)))?
            .wait()
            .await?;
        let core = self.core.clone();
        blocking(move || core.truncate(&engine)).await
    }

    /// Replays the commit log into tables registered since the last replay, skipping what
    /// their SSTables already hold.
    pub fn replay(&self) -> Result<ReplayStats> {
        replay::replay(&self.core)
    }

    /// Declares every table registered and replayed: segments of earlier runs may now be
    /// deleted once their data is flushed.
    pub fn finish_replay(&self) {
        self.core.replay_finished.store(true, Ordering::Relaxed);
        self.core.recycle();
    }

    /// Applies one mutation, durable per the sync mode before returning.
    pub async fn apply(&self, mutation: Mutation) -> Result<()> {
        self.apply_batch(vec![mutation]).await
    }

    /// Applies mutations as one commit-log record: replay restores all of them or none.
    pub async fn apply_batch(&self, mutations: Vec<Mutation>) -> Result<()> {
        if mutations.is_empty() {
            return Ok(());
        }
        if !self.core.config.in_memory {
            self.core.wait_for_memtable_space().await?;
        }
        self.core.log_and_apply(mutations)?.wait().await
    }

    /// Applies mutations as one commit-log record without waiting for the log's sync: the
    /// caller makes them durable with [`Storage::sync_log`] before it acknowledges them. Paxos
    /// applies a replica's state and decisions this way, under a partition lock that cannot
    /// be held across an await.
    pub fn apply_unsynced(&self, mutations: Vec<Mutation>) -> Result<()> {
        if mutations.is_empty() {
            return Ok(());
        }
        self.core.log_and_apply(mutations).map(drop)
    }

    /// Returns once every record written so far is durable per the sync mode.
    pub async fn sync_log(&self) -> Result<()> {
        self.core.log.sync_written()?.wait().await
    }

    /// Adds deltas to counter columns of one partition as their leader replica, atomically
    /// with respect to other counter updates of the same partition: each counter's shard of
    /// counter id `id` (this node's host id) gets its clock advanced and the delta added, and
    /// is written alone in a counter cell. Returns the mutation written, for the other replicas
    /// (`None` when every counter updated was deleted and nothing was written).
    pub async fn apply_counter(
        &self,
        table: TableId,
        key: PartitionKey,
        updates: Vec<CounterUpdate>,
        timestamp: i64,
        id: [u8; 16],
    ) -> Result<Option<Mutation>> {
        let engine = self.engine(table)?;
        let _guard = self.core.counter_locks.lock(table, &key).await;
        let current = engine.read_merged(&key, &read_filter(&updates))?;
        let update = new_shards(current.as_ref(), &updates, timestamp, id)?;
        if update.rows.is_empty() && update.static_row.is_none() {
            return Ok(None); // every counter written was deleted
        }
        let mutation = Mutation { table, key, update };
        self.apply(mutation.clone()).await?;
        Ok(Some(mutation))
    }

    /// The live content of one partition at `now` (seconds).
    pub fn read(
        &self,
        table: TableId,
        key: &PartitionKey,
        filter: &ReadFilter,
        now: i32,
    ) -> Result<Option<Partition>> {
        let engine = self.engine(table)?;
        self.checked_read(&engine, engine.read(key, filter, now))
    }

    /// Up to `limit` live partitions of `range`, in token order.
    pub fn scan(
        &self,
        table: TableId,
        range: &KeyRange,
        filter: &ReadFilter,
        now: i32,
        limit: usize,
    ) -> Result<Vec<Partition>> {
        let engine = self.engine(table)?;
        self.checked_read(&engine, engine.scan(range, filter, now, limit))
    }

    /// Memory used by a table's memtables.
    pub fn memory_bytes(&self, table: TableId) -> Result<usize> {
        Ok(self.engine(table)?.memory_bytes())
    }

    /// What all memtables (live and flushing) charge to the heap and offheap pools.
    pub fn memtable_pools(&self) -> PoolUsage {
        self.core.pool_usage()
    }

    /// SSTable count, sizes and tombstones of a table.
    pub fn table_stats(&self, table: TableId) -> Result<TableStats> {
        let engine = self.engine(table)?;
        let view = engine.view();
        let mut stats = TableStats {
            sstables: view.sstables.len(),
            memtable_bytes: engine.memory_bytes(),
            ..TableStats::default()
        };
        for live in &view.sstables {
            stats.disk_bytes += live.sstable.size_on_disk();
            stats.tombstones += live.sstable.stats().tombstones();
            let level = live.sstable.level() as usize;
            if stats.levels.len() <= level {
                stats.levels.resize(level + 1, 0);
            }
            stats.levels[level] += 1;
        }
        Ok(stats)
    }

    /// Flushes a table's memtable to a new SSTable (`nodetool flush`); blocks until written.
    pub fn flush(&self, table: TableId) -> Result<FlushReport> {
        let engine = self.engine(table)?;
        self.core.flush(&engine)
    }

    /// Flushes every table; blocks until written.
    pub fn flush_all(&self) -> Result<()> {
        self.core.flush_all()
    }

    /// Runs a major compaction of a table (`nodetool compact`) in the calling thread; returns
    /// the number of tasks run.
    pub fn compact(&self, table: TableId) -> Result<usize> {
        let engine = self.engine(table)?;
        background::major(&self.core, &engine)
    }

    /// Resumes background compactions of a table.
    pub fn enable_autocompaction(&self, table: TableId) -> Result<()> {
        self.engine(table)?.set_autocompaction(true);
        self.core.wake_all();
        Ok(())
    }

    /// Stops starting background compactions of a table (running ones finish).
    pub fn disable_autocompaction(&self, table: TableId) -> Result<()> {
        self.engine(table)?.set_autocompaction(false);
        Ok(())
    }

    /// Running compactions.
    pub fn compactions(&self) -> Vec<CompactionProgress> {
        self.core.registry.running()
    }

    /// Finished compactions (the most recent ones), oldest first.
    pub fn compaction_history(&self) -> Vec<CompactionRecord> {
        self.core.registry.history()
    }

    /// Sets `compaction_throughput` in bytes per second (0 = unthrottled).
    pub fn set_compaction_throughput(&self, bytes_per_second: u64) {
        self.core.throttle.set_rate(bytes_per_second);
    }

    pub fn compaction_throughput(&self) -> u64 {
        self.core.throttle.rate()
    }

    /// Sets `concurrent_compactors` (at least 1).
    pub fn set_concurrent_compactors(&self, count: usize) {
        self.core
            .concurrent_compactors
            .store(count.max(1), Ordering::Relaxed);
        self.core.wake_all();
    }

    /// Number of commit-log fsyncs so far.
    pub fn commitlog_syncs(&self) -> u64 {
        self.core.log.sync_count()
    }

    /// Drains the node: stops compactions, flushes every table, deletes the commit-log segments
    /// that leaves unneeded, syncs the log and stops its thread. Nothing is left to replay
    /// unless a flush failed (the log is synced and closed all the same); later writes fail
    /// with [`StorageError::Closed`].
    pub async fn shutdown(&self) -> Result<()> {
        let core = self.core.clone();
        let threads = std::mem::take(&mut *self.threads.lock());
        let flushed = blocking(move || {
            stop(&core, threads);
            let flushed = core.flush_all();
            core.recycle();
            flushed
        })
        .await;
        // Synced even when a flush failed: what was not flushed is replayed from it.
        let synced = self.core.log.shutdown().await;
        flushed.and(synced)
    }

    pub(crate) fn engine(&self, table: TableId) -> Result<Arc<LsmEngine>> {
        self.core.engine(table)
    }

    /// Whether the table is registered (cheap: one map lookup).
    pub fn has_table(&self, table: TableId) -> bool {
        self.core.engine(table).is_ok()
    }
}

impl Drop for Storage {
    /// Stops the background threads without flushing (as a crash would, minus the threads).
    fn drop(&mut self) {
        stop(&self.core, std::mem::take(&mut *self.threads.lock()));
    }
}

/// Stops and joins the background threads and running compactions.
fn stop(core: &Core, threads: Vec<JoinHandle<()>>) {
    core.stop.store(true, Ordering::Relaxed);
    core.wake_all();
    let workers = std::mem::take(&mut *core.compaction_workers.lock());
    for handle in threads.into_iter().chain(workers) {
        if handle.join().is_err() {
            tracing::error!("a storage background thread panicked");
        }
    }
}

/// Runs blocking storage work off the async runtime's worker threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StorageError::Invalid(format!("storage task failed: {e}")))?
}

/// The current wall-clock time in seconds, as Cassandra's `nowInSec`.
pub fn now_seconds() -> i32 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    i32::try_from(secs).unwrap_or(i32::MAX)
}
