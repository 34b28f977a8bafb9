//! [`Storage`]: the node's storage facade — table registry, durable writes through the commit
//! log into per-table engines, counter increments, reads and commit-log replay.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::{Mutex, RwLock};

use crate::codec::{decode, encode, encode_mutations, LogEntry};
use crate::commitlog::{
    last_written, read_segment, CommitLog, CommitlogSync, SegmentFile, DEFAULT_SEGMENT_SIZE,
};
use crate::counter::{new_totals, read_filter, CounterLocks, CounterUpdate};
use crate::engine::{MemtableEngine, TableEngine};
use crate::error::{Result, StorageError};
use crate::filter::{KeyRange, ReadFilter};
use crate::model::{Mutation, Partition, PartitionKey, TableId};

/// Where and how to store data.
#[derive(Clone, Debug)]
pub struct StorageConfig {
    pub data_dirs: Vec<PathBuf>,
    pub commitlog_dir: PathBuf,
    pub sync: CommitlogSync,
    /// `commitlog_segment_size` in bytes; a record may use at most half of it.
    pub segment_size: u64,
    /// On mid-segment corruption, skip the rest of the segment instead of failing replay.
    pub ignore_corruption: bool,
}

impl StorageConfig {
    /// Defaults (periodic sync every 10 s, 32 MiB segments, fail on corruption).
    pub fn new(data_dir: impl Into<PathBuf>, commitlog_dir: impl Into<PathBuf>) -> Self {
        StorageConfig {
            data_dirs: vec![data_dir.into()],
            commitlog_dir: commitlog_dir.into(),
            sync: CommitlogSync::default(),
            segment_size: DEFAULT_SEGMENT_SIZE,
            ignore_corruption: false,
        }
    }
}

/// What one [`Storage::replay`] call did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayStats {
    pub segments: usize,
    pub records: usize,
    pub mutations_applied: usize,
    /// Mutations for tables not (yet) registered or already replayed.
    pub mutations_skipped: usize,
    pub truncations: usize,
    pub torn_bytes: u64,
    pub corrupt_segments_skipped: usize,
}

/// Segments written before this process started, and the tables already restored from them.
struct ReplayState {
    segments: Vec<SegmentFile>,
    replayed: HashSet<TableId>,
}

/// The storage of one node.
pub struct Storage {
    config: StorageConfig,
    log: CommitLog,
    tables: RwLock<HashMap<TableId, Arc<dyn TableEngine>>>,
    replay: Mutex<ReplayState>,
    counter_locks: CounterLocks,
}

impl Storage {
    /// Opens (creating if needed) the directories and starts the commit log. Does not replay.
    pub fn open(config: StorageConfig) -> Result<Storage> {
        for dir in config.data_dirs.iter().chain([&config.commitlog_dir]) {
            fs::create_dir_all(dir).map_err(|e| StorageError::io(dir, e))?;
        }
        let (log, segments) =
            CommitLog::open(&config.commitlog_dir, config.sync, config.segment_size)?;
        Ok(Storage {
            config,
            log,
            tables: RwLock::new(HashMap::new()),
            replay: Mutex::new(ReplayState {
                segments,
                replayed: HashSet::new(),
            }),
            counter_locks: CounterLocks::default(),
        })
    }

    /// Registers a table; registering it again is a no-op.
    pub fn create_table(&self, id: TableId, keyspace: &str, name: &str) -> Result<()> {
        if let Entry::Vacant(slot) = self.tables.write().entry(id) {
            tracing::debug!("registering table {keyspace}.{name} ({id})");
            slot.insert(Arc::new(MemtableEngine::new()));
        }
        Ok(())
    }

    /// Forgets a table and its data; a drop record keeps replay from restoring it.
    pub fn drop_table(&self, id: TableId) -> Result<()> {
        if self.tables.write().remove(&id).is_none() {
            return Err(StorageError::UnknownTable(id));
        }
        // Durable with the next sync; no need to wait, the table is already gone in memory.
        let _ = self.log.append(&encode(&LogEntry::Drop(id)))?;
        Ok(())
    }

    /// Removes all data of a table, durably.
    pub async fn truncate(&self, id: TableId) -> Result<()> {
        let engine = self.engine(id)?;
        self.log
            .append(&encode(&LogEntry::Truncate(id)))?
            .wait()
            .await?;
        engine.truncate()
    }

    /// Replays the commit log into tables registered since the last replay.
    pub fn replay(&self) -> Result<ReplayStats> {
        let mut state = self.replay.lock();
        let targets: HashMap<TableId, Arc<dyn TableEngine>> = self
            .tables
            .read()
            .iter()
            .filter(|(id, _)| !state.replayed.contains(id))
            .map(|(id, engine)| (*id, engine.clone()))
            .collect();
        let mut stats = ReplayStats::default();
        if targets.is_empty() {
            return Ok(stats);
        }
        let last = last_written(&state.segments)?;
        for (index, segment) in state.segments.iter().enumerate() {
            self.replay_segment(segment, Some(index) == last, &targets, &mut stats)?;
        }
        state.replayed.extend(targets.keys());
        tracing::debug!("commit log replay: {stats:?}");
        Ok(stats)
    }

    fn replay_segment(
        &self,
        segment: &SegmentFile,
        is_last: bool,
        targets: &HashMap<TableId, Arc<dyn TableEngine>>,
        stats: &mut ReplayStats,
    ) -> Result<()> {
        let contents = read_segment(&segment.path, is_last, self.config.ignore_corruption)?;
        stats.segments += 1;
        stats.torn_bytes += contents.torn_bytes;
        stats.corrupt_segments_skipped += usize::from(contents.skipped_corruption);
        for record in contents.records {
            let entry = decode(&record.payload).map_err(|e| StorageError::Corrupt {
                file: segment.path.clone(),
                offset: record.offset,
                reason: format!("undecodable record: {}", e.0),
            })?;
            stats.records += 1;
            replay_entry(entry, targets, stats)?;
        }
        Ok(())
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
        let engines = mutations
            .iter()
            .map(|m| self.engine(m.table))
            .collect::<Result<Vec<_>>>()?;
        self.log
            .append(&encode_mutations(&mutations))?
            .wait()
            .await?;
        for (mutation, engine) in mutations.iter().zip(engines) {
            engine.apply(&mutation.key, &mutation.update)?;
        }
        Ok(())
    }

    /// Adds deltas to counter columns of one partition atomically with respect to other
    /// counter updates of the same partition.
    pub async fn apply_counter(
        &self,
        table: TableId,
        key: PartitionKey,
        updates: Vec<CounterUpdate>,
        timestamp: i64,
    ) -> Result<()> {
        let engine = self.engine(table)?;
        let _guard = self.counter_locks.lock(table, &key).await;
        let current = engine.read(&key, &read_filter(&updates), now_seconds())?;
        let update = new_totals(current.as_ref(), &updates, timestamp)?;
        self.apply(Mutation { table, key, update }).await
    }

    /// The live content of one partition at `now` (seconds).
    pub fn read(
        &self,
        table: TableId,
        key: &PartitionKey,
        filter: &ReadFilter,
        now: i32,
    ) -> Result<Option<Partition>> {
        self.engine(table)?.read(key, filter, now)
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
        self.engine(table)?.scan(range, filter, now, limit)
    }

    /// Memory used by a table's in-memory structures.
    pub fn memory_bytes(&self, table: TableId) -> Result<usize> {
        Ok(self.engine(table)?.memory_bytes())
    }

    /// Number of commit-log fsyncs so far.
    pub fn commitlog_syncs(&self) -> u64 {
        self.log.sync_count()
    }

    /// Syncs the commit log and stops its thread; later writes fail with [`StorageError::Closed`].
    pub async fn shutdown(&self) -> Result<()> {
        self.log.shutdown().await
    }

    fn engine(&self, table: TableId) -> Result<Arc<dyn TableEngine>> {
        self.tables
            .read()
            .get(&table)
            .cloned()
            .ok_or(StorageError::UnknownTable(table))
    }
}

fn replay_entry(
    entry: LogEntry,
    targets: &HashMap<TableId, Arc<dyn TableEngine>>,
    stats: &mut ReplayStats,
) -> Result<()> {
    match entry {
        LogEntry::Mutations(mutations) => {
            for mutation in mutations {
                match targets.get(&mutation.table) {
                    Some(engine) => {
                        engine.apply(&mutation.key, &mutation.update)?;
                        stats.mutations_applied += 1;
                    }
                    None => stats.mutations_skipped += 1,
                }
            }
        }
        LogEntry::Truncate(table) | LogEntry::Drop(table) => {
            if let Some(engine) = targets.get(&table) {
                engine.truncate()?;
                stats.truncations += 1;
            }
        }
    }
    Ok(())
}

/// The current wall-clock time in seconds, as Cassandra's `nowInSec`.
pub fn now_seconds() -> i32 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    i32::try_from(secs).unwrap_or(i32::MAX)
}
