//! [`LsmEngine`]: the log-structured table engine. Writes go to the active memtable; a flush
//! switches in a fresh one and writes the old one (still readable meanwhile) to a new SSTable;
//! compactions replace SSTables by merged ones. Readers take a snapshot of the [`View`] — the
//! memtables and the immutable list of open SSTables, swapped atomically — and merge its sources.
//!
//! A table has one directory per data directory (`data_file_directories`); the first holds the
//! replay floor and the compaction transaction logs, and each new SSTable goes to the directory
//! [`placement`](super::placement) picks. Generations are unique across the directories.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Mutex, MutexGuard, RwLock};

use super::placement;
use super::point_read::{self, CachedSstable};
use super::pool::{MemtableUsage, PooledMemtable};
use super::replica_scan::scan_source;
use super::table_dir::{open_table_dirs, read_floor, write_floor, LiveSstable};
use super::work::{Cancel, Pause, Task, Work};
use super::{read_round, scan_sources, PartitionSource, TableEngine};
use crate::commitlog::Position;
use crate::compaction::{repair_groups, CompactionTask, SstableInfo};
use crate::error::{Result, StorageError};
use crate::facade::now_seconds;
use crate::filter::{KeyRange, ReadFilter};
use crate::health::Health;
use crate::memtable::Memtable;
use crate::metrics::{MetricsRecorder, ReadStats};
use crate::params::TableSettings;
use crate::sstable::{
    Caches, Descriptor, ReadCaches, Sstable, SstableWriter, WatchSlot, Watcher, WriteOptions,
};
use mutation::partition::{PartitionData, SourceRows};
use mutation::rounds::Round;
use mutation::scan::ScanSource;
use mutation::{Partition, PartitionKey, PartitionUpdate};

/// How often [`LsmEngine::claim_waiting`] tries again while a compaction holds an SSTable.
const CLAIM_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// What a read sees: the memtables and the open SSTables at one instant.
#[derive(Clone)]
pub struct View {
    pub active: Arc<PooledMemtable>,
    /// Memtables being flushed, oldest first.
    pub flushing: Vec<Arc<PooledMemtable>>,
    /// Open SSTables, newest generation first.
    pub sstables: Vec<Arc<LiveSstable>>,
}

impl View {
    fn empty() -> View {
        View {
            active: Arc::new(PooledMemtable::new()),
            flushing: Vec::new(),
            sstables: Vec::new(),
        }
    }

    /// Every memtable, newest first.
    pub fn memtables(&self) -> impl Iterator<Item = &Memtable> {
        self.pooled().map(|m| m.memtable())
    }

    /// Every memtable with its pool accounting, newest first.
    fn pooled(&self) -> impl Iterator<Item = &Arc<PooledMemtable>> {
        std::iter::once(&self.active).chain(self.flushing.iter().rev())
    }
}

/// What one flush wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlushReport {
    pub sstables: usize,
    pub partitions: u64,
    /// Uncompressed partition bytes written.
    pub bytes: u64,
    /// Bytes on disk of the new SSTables.
    pub disk_bytes: u64,
}

/// The LSM engine of one table.
pub struct LsmEngine {
    /// The table's directories, one per data directory; the first is the primary one.
    dirs: Vec<PathBuf>,
    view: RwLock<Arc<View>>,
    settings: RwLock<Arc<TableSettings>>,
    /// Serializes flushes and truncations, so floors only move forward.
    flush_lock: Mutex<()>,
    next_generation: AtomicU64,
    /// Generations owned by a running compaction.
    compacting: Mutex<HashSet<u64>>,
    /// The compactions and other tasks on the table's files, and their cancellation.
    work: Work,
    floor: Mutex<Position>,
    autocompaction: AtomicBool,
    /// Memtables flushed to an SSTable since the table was opened.
    flushes: AtomicU64,
    /// The node's key and chunk caches.
    caches: Caches,
    /// Which data directories new SSTables may go to.
    health: Arc<Health>,
    /// The node's watch on large partitions written.
    watch: WatchSlot,
    metrics: MetricsRecorder,
}

impl LsmEngine {
    /// Opens the table in `dir`: its SSTables (see [`open_table_dirs`]) and its replay floor.
    pub fn open(dir: &Path, settings: TableSettings, quarantine: bool) -> Result<LsmEngine> {
        LsmEngine::open_in(&[dir.to_path_buf()], settings, quarantine)
    }

    /// Opens the table spread over `dirs` (at least one; the first is the primary directory):
    /// completes or rolls back interrupted compactions, then opens the SSTables of every
    /// directory and the replay floor.
    pub fn open_in(
        dirs: &[PathBuf],
        settings: TableSettings,
        quarantine: bool,
    ) -> Result<LsmEngine> {
        let sstables = open_table_dirs(dirs, quarantine)?;
        let primary = &dirs[0];
        let next = sstables.first().map_or(1, |s| s.generation() + 1);
        let floor = read_floor(primary)?;
        Ok(LsmEngine {
            dirs: dirs.to_vec(),
            view: RwLock::new(Arc::new(View {
                sstables,
                ..View::empty()
            })),
            autocompaction: AtomicBool::new(settings.autocompaction),
            settings: RwLock::new(Arc::new(settings)),
            flush_lock: Mutex::new(()),
            next_generation: AtomicU64::new(next),
            compacting: Mutex::new(HashSet::new()),
            work: Work::default(),
            floor: Mutex::new(floor),
            flushes: AtomicU64::new(0),
            caches: Caches::default(),
            health: Arc::new(Health::default()),
            watch: WatchSlot::default(),
            metrics: MetricsRecorder::default(),
        })
    }

    /// The engine with Index lookups and Data chunk reads going through `caches`.
    pub fn with_caches(mut self, caches: Caches) -> LsmEngine {
        self.caches = caches;
        self
    }

    /// The engine writing new SSTables only to the directories `health` leaves in use.
    pub fn with_health(mut self, health: Arc<Health>) -> LsmEngine {
        self.health = health;
        self
    }

    /// The engine reporting the partitions its flushes and compactions write to `watch`.
    pub fn with_watch(mut self, watch: WatchSlot) -> LsmEngine {
        self.watch = watch;
        self
    }

    /// This table's read and write metrics.
    pub(crate) fn metrics(&self) -> &MetricsRecorder {
        &self.metrics
    }

    /// The live content of partition `key` at `now`, with what the read did; recorded in the
    /// table's metrics.
    pub fn read_counted(
        &self,
        key: &PartitionKey,
        filter: &ReadFilter,
        now: i32,
    ) -> Result<(Option<Partition>, ReadStats)> {
        let view = self.view();
        let mut stats = ReadStats::default();
        let caches = self.caches.point_read();
        let found = point_read::read(&view, key, filter, now, caches, &mut stats)?;
        self.metrics.point_read(&stats);
        Ok((found, stats))
    }

    /// Every version of partition `key` restricted to `filter`, merged with its tombstones and
    /// shadowed cells (what counter updates start from).
    pub fn read_merged(
        &self,
        key: &PartitionKey,
        filter: &ReadFilter,
    ) -> Result<Option<PartitionData>> {
        let (round, _) = self.source_round(key, filter, usize::MAX)?;
        Ok(round.data().cloned())
    }

    /// This node's answer, as one replica, to a round of a read of `key`: every source read up
    /// to `cap` rows and merged, unresolved, restricted to what is complete (see
    /// [`Round::into_source_rows`]). Every SSTable that may hold the key is read: no timestamp
    /// early exit, so replicas holding the same data answer the same. Records the SSTables
    /// read in the table's metrics.
    pub fn read_source(
        &self,
        key: &PartitionKey,
        filter: &ReadFilter,
        cap: usize,
    ) -> Result<Option<SourceRows>> {
        let (round, sstables) = self.source_round(key, filter, cap)?;
        self.metrics.source_read(sstables);
        Ok(round.into_source_rows(filter, cap))
    }

    /// Every source's answer to one round of `key`, merged, with the number of SSTables read.
    fn source_round(
        &self,
        key: &PartitionKey,
        filter: &ReadFilter,
        cap: usize,
    ) -> Result<(Round, usize)> {
        let view = self.view();
        let sstables = cached(&view, self.caches.point_read(), |s| s.may_contain(key));
        let round = read_round(&sources(&view, &sstables), key, filter, cap)?;
        Ok((round, sstables.len()))
    }

    /// This node's answer, as one replica, to a range scan: see [`ScanSource`].
    pub fn scan_source(
        &self,
        range: &KeyRange,
        filter: &ReadFilter,
        partition_limit: usize,
    ) -> Result<ScanSource> {
        let view = self.view();
        let sstables = cached(&view, self.caches.scan(), |s| overlaps(s, range));
        scan_source(&sources(&view, &sstables), range, filter, partition_limit)
    }

    /// [`scan_source`](Self::scan_source) over the memtables (when `memtables`) and the
    /// SSTables `keep` accepts only: what a repair of some of the data validates.
    pub fn scan_source_of(
        &self,
        range: &KeyRange,
        partition_limit: usize,
        memtables: bool,
        keep: impl Fn(&Sstable) -> bool,
    ) -> Result<ScanSource> {
        let view = self.view();
        let sstables = cached(&view, self.caches.scan(), |s| overlaps(s, range) && keep(s));
        let mut sources = sources(&view, &sstables);
        if !memtables {
            sources.drain(..view.memtables().count());
        }
        scan_source(&sources, range, &ReadFilter::all(), partition_limit)
    }

    /// Up to `limit` live partitions of `range` at `now`, with what the scan did (every SSTable
    /// overlapping the range counts as touched); recorded in the table's metrics.
    pub fn scan_counted(
        &self,
        range: &KeyRange,
        filter: &ReadFilter,
        now: i32,
        limit: usize,
    ) -> Result<(Vec<Partition>, ReadStats)> {
        let view = self.view();
        let sstables = cached(&view, self.caches.scan(), |s| overlaps(s, range));
        let sources = sources(&view, &sstables);
        let mut stats = ReadStats {
            sstables: u32::try_from(sstables.len()).unwrap_or(u32::MAX),
            ..ReadStats::default()
        };
        let found = scan_sources(&sources, range, filter, now, limit, &mut stats)?;
        self.metrics.range_read(&stats);
        Ok((found, stats))
    }

    /// The primary directory (replay floor, compaction transaction logs).
    pub fn dir(&self) -> &Path {
        &self.dirs[0]
    }

    /// Every directory of the table, the primary one first.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// A consistent snapshot of the table's sources.
    pub fn view(&self) -> Arc<View> {
        self.view.read().clone()
    }

    pub fn settings(&self) -> Arc<TableSettings> {
        self.settings.read().clone()
    }

    /// Switches to new settings (an `ALTER TABLE`); running compactions finish as planned.
    pub fn set_settings(&self, settings: TableSettings) {
        self.autocompaction
            .store(settings.autocompaction, Ordering::Relaxed);
        *self.settings.write() = Arc::new(settings);
    }

    pub fn autocompaction(&self) -> bool {
        self.autocompaction.load(Ordering::Relaxed)
    }

    pub fn set_autocompaction(&self, enabled: bool) {
        self.autocompaction.store(enabled, Ordering::Relaxed);
    }

    /// Starts a task on the table's files (a compaction, a scrub, a snapshot…); it checks
    /// [`check`](Self::check) as it goes. Waits while a truncation runs; fails once the table
    /// is dropped.
    pub fn start_task(&self) -> Result<Task<'_>> {
        self.work.start().map_err(|cause| self.cancelled(cause))
    }

    /// Fails with [`StorageError::Cancelled`] once `task` must stop.
    pub fn check(&self, task: &Task<'_>) -> Result<()> {
        task.cancelled()
            .map_or(Ok(()), |cause| Err(self.cancelled(cause)))
    }

    /// Fails with [`StorageError::Cancelled`] once the table is dropped.
    pub fn check_live(&self) -> Result<()> {
        match self.work.closed() {
            true => Err(self.cancelled(Cancel::Dropped)),
            false => Ok(()),
        }
    }

    /// Cancels the table's tasks for good and waits until they have stopped (a drop); later
    /// flushes fail.
    pub fn close(&self) {
        self.work.close();
    }

    /// Cancels the table's running tasks and waits until they have stopped; none starts
    /// until the pause is dropped (a truncation).
    pub fn pause_tasks(&self) -> Pause<'_> {
        self.work.pause()
    }

    fn cancelled(&self, cause: Cancel) -> StorageError {
        let settings = self.settings();
        StorageError::Cancelled(format!(
            "{}.{} was {}",
            settings.keyspace,
            settings.name,
            cause.verb()
        ))
    }

    /// Commit-log records before this position are already in SSTables.
    pub fn floor(&self) -> Position {
        *self.floor.lock()
    }

    /// Applies a write logged at `position`; returns how much the memtable grew (see
    /// [`PooledMemtable::apply`]).
    pub fn apply_logged(
        &self,
        key: &PartitionKey,
        update: PartitionUpdate,
        position: Position,
    ) -> u64 {
        self.view.read().active.apply(key, update, Some(position))
    }

    /// Bytes held by the active memtable (what a flush would free).
    pub fn active_usage(&self) -> MemtableUsage {
        self.view.read().active.usage()
    }

    /// Bytes held by the active and the flushing memtables.
    pub fn memtable_usage(&self) -> MemtableUsage {
        self.view().pooled().map(|m| m.usage()).sum()
    }

    /// The oldest commit-log position any memtable still needs.
    pub fn min_position(&self) -> Option<Position> {
        self.view()
            .memtables()
            .filter_map(|m| m.min_position())
            .min()
    }

    /// The next unused SSTable generation.
    pub fn next_generation(&self) -> u64 {
        self.next_generation.fetch_add(1, Ordering::Relaxed)
    }

    /// Takes the flush lock; [`switch_memtable`](Self::switch_memtable) and the flush or
    /// truncation that follows must run under it.
    pub fn lock_flush(&self) -> MutexGuard<'_, ()> {
        self.flush_lock.lock()
    }

    /// Moves the active memtable to the flushing list and starts an empty one, unless it is
    /// empty (flushes retried after a failure do not pile up empty memtables). The caller makes
    /// sure no write is between logging and applying (the storage write barrier).
    pub fn switch_memtable(&self) {
        let mut view = self.view.write();
        if view.active.memtable().is_empty() {
            return;
        }
        let mut next = View::clone(&view);
        // The next memtable will likely see as many partitions as this one did.
        let partitions = next.active.memtable().partition_count();
        next.flushing.push(std::mem::replace(
            &mut next.active,
            Arc::new(PooledMemtable::for_partitions(partitions)),
        ));
        *view = Arc::new(next);
    }

    /// Writes every flushing memtable to a new SSTable, oldest first, then records `floor`.
    /// A memtable stays readable until its SSTable is in the view. Fails with
    /// [`StorageError::Cancelled`] once the table is dropped.
    pub fn flush_switched(
        &self,
        _lock: &MutexGuard<'_, ()>,
        floor: Position,
    ) -> Result<FlushReport> {
        self.check_live()?;
        let started = Instant::now();
        let mut report = FlushReport::default();
        for memtable in self.view().flushing.clone() {
            if let Some(live) = self.write_memtable(memtable.memtable(), &mut report)? {
                report.disk_bytes += live.sstable.size_on_disk();
                self.install_flushed(&memtable, Some(live));
            } else {
                self.install_flushed(&memtable, None);
            }
        }
        self.record_floor(floor)?;
        if report.sstables > 0 {
            self.flushes.fetch_add(1, Ordering::Relaxed);
            let settings = self.settings();
            tracing::info!(
                "flushed {}.{}: {} partitions, {} bytes ({} on disk) in {:?}",
                settings.keyspace,
                settings.name,
                report.partitions,
                report.bytes,
                report.disk_bytes,
                started.elapsed()
            );
        }
        Ok(report)
    }

    fn write_memtable(
        &self,
        memtable: &Memtable,
        report: &mut FlushReport,
    ) -> Result<Option<Arc<LiveSstable>>> {
        if memtable.is_empty() {
            return Ok(None);
        }
        let expected = memtable.allocated_bytes() as u64;
        let generation = self.next_generation();
        let mut writer = self.create_writer(generation, self.settings().write.clone(), expected)?;
        memtable.try_for_each(|key, data| writer.append_records(key, data))?;
        report.partitions += writer.partitions();
        report.bytes += writer.uncompressed_bytes();
        report.sstables += 1;
        let desc = writer.finish()?;
        Ok(Some(Arc::new(LiveSstable::open(&desc)?)))
    }

    /// Starts a writer of SSTable `generation` expected to hold about `expected_bytes`, in the
    /// directory [`placement::choose`] picks among those in use. A table directory removed
    /// under a data directory that still exists is created again.
    pub fn create_writer(
        &self,
        generation: u64,
        options: WriteOptions,
        expected_bytes: u64,
    ) -> Result<SstableWriter> {
        let writable: Vec<PathBuf> = self
            .dirs
            .iter()
            .filter(|dir| self.health.writable(dir))
            .cloned()
            .collect();
        let dir = placement::choose(&writable, &self.view().sstables, expected_bytes)?;
        self.health.recreate_table_dir(dir)?;
        let settings = self.settings();
        let watcher = self.watch.current().and_then(|watch| {
            Watcher::new(watch, &settings.keyspace, &settings.name, now_seconds())
        });
        SstableWriter::create(dir, generation, options).map(|w| w.watched(watcher))
    }

    /// The live SSTable owning `file`.
    pub fn sstable_owning(&self, file: &Path) -> Option<Arc<LiveSstable>> {
        self.view().sstables.iter().find(|s| s.owns(file)).cloned()
    }

    /// Adds a finished SSTable written outside flushes and compactions (received by a stream)
    /// to the reads.
    pub fn add_sstable(&self, sstable: Arc<LiveSstable>) {
        let mut view = self.view.write();
        let mut next = View::clone(&view);
        next.sstables.push(sstable);
        next.sstables
            .sort_by_key(|s| std::cmp::Reverse(s.generation()));
        *view = Arc::new(next);
    }

    /// Stops reading the SSTables under `root` (a data directory `best_effort` made
    /// unreadable); their files stay where they are.
    pub fn forget_sstables_under(&self, root: &Path) {
        let mut view = self.view.write();
        let under = |s: &Arc<LiveSstable>| s.sstable.descriptor().dir.starts_with(root);
        if view.sstables.iter().any(under) {
            let mut next = View::clone(&view);
            next.sstables.retain(|s| !under(s));
            *view = Arc::new(next);
        }
    }

    fn install_flushed(&self, memtable: &Arc<PooledMemtable>, sstable: Option<Arc<LiveSstable>>) {
        let mut view = self.view.write();
        let mut next = View::clone(&view);
        next.flushing.retain(|m| !Arc::ptr_eq(m, memtable));
        if let Some(sstable) = sstable {
            next.sstables.insert(0, sstable);
        }
        *view = Arc::new(next);
    }

    /// Records `floor` in the primary directory. While `best_effort` keeps that directory out
    /// of use the floor is only kept in memory: a restart replays what is left of the commit
    /// log from the last floor on disk (replay is idempotent).
    fn record_floor(&self, floor: Position) -> Result<()> {
        let mut current = self.floor.lock();
        if floor > *current {
            if self.health.writable(self.dir()) {
                self.health.recreate_table_dir(self.dir())?;
                write_floor(self.dir(), floor)?;
            }
            *current = floor;
        }
        Ok(())
    }

    /// Empties the view; the caller holds the storage write barrier so that writes logged
    /// before the truncation land in the discarded memtable.
    pub fn reset_view(&self, _lock: &MutexGuard<'_, ()>) -> Arc<View> {
        std::mem::replace(&mut *self.view.write(), Arc::new(View::empty()))
    }

    /// Deletes the SSTables of a view emptied by [`reset_view`](Self::reset_view), then
    /// records `floor` so replay skips what was logged before the truncation. The caller
    /// holds a [`pause_tasks`](Self::pause_tasks): no task reads the deleted files.
    pub fn finish_truncate(
        &self,
        _lock: &MutexGuard<'_, ()>,
        old: &View,
        floor: Position,
    ) -> Result<()> {
        for sstable in &old.sstables {
            sstable.sstable.descriptor().delete()?;
        }
        self.record_floor(floor)
    }

    /// Marks `generations` as owned by a compaction; `false` (and nothing marked) when one is
    /// already owned or no longer live.
    pub fn claim(&self, generations: &[u64]) -> bool {
        let live: HashSet<u64> = self
            .view()
            .sstables
            .iter()
            .map(|s| s.generation())
            .collect();
        let mut compacting = self.compacting.lock();
        if generations
            .iter()
            .any(|g| compacting.contains(g) || !live.contains(g))
        {
            return false;
        }
        compacting.extend(generations);
        true
    }

    /// Claims `generations` as [`claim`](Self::claim) does, first waiting for the compaction
    /// holding one of them to end; `false` once one is no longer live (compacted away or
    /// truncated). Fails when `task` is cancelled meanwhile.
    pub fn claim_waiting(&self, generations: &[u64], task: &Task<'_>) -> Result<bool> {
        loop {
            if self.claim(generations) {
                return Ok(true);
            }
            let view = self.view();
            let live = |g: &u64| view.sstables.iter().any(|s| s.generation() == *g);
            if !generations.iter().all(live) {
                return Ok(false);
            }
            self.check(task)?;
            std::thread::sleep(CLAIM_POLL);
        }
    }

    /// Releases generations claimed by [`claim`](Self::claim).
    pub fn release(&self, generations: &[u64]) {
        let mut compacting = self.compacting.lock();
        for generation in generations {
            compacting.remove(generation);
        }
    }

    /// Whether a compaction owns `generation`.
    pub fn is_compacting(&self, generation: u64) -> bool {
        self.compacting.lock().contains(&generation)
    }

    /// Replaces `inputs` by `outputs` in one step and deletes the inputs' files. If an input
    /// vanished meanwhile (a truncation), the outputs are deleted instead.
    pub fn replace(&self, inputs: &[u64], outputs: Vec<Arc<LiveSstable>>) -> Result<bool> {
        let removed = {
            let mut view = self.view.write();
            let present = inputs
                .iter()
                .all(|g| view.sstables.iter().any(|s| s.generation() == *g));
            if !present {
                None
            } else {
                let mut next = View::clone(&view);
                let (gone, kept) = next
                    .sstables
                    .drain(..)
                    .partition(|s| inputs.contains(&s.generation()));
                next.sstables = kept;
                next.sstables.extend(outputs.iter().cloned());
                next.sstables
                    .sort_by_key(|s| std::cmp::Reverse(s.generation()));
                *view = Arc::new(next);
                Some(gone)
            }
        };
        let (doomed, installed): (Vec<Arc<LiveSstable>>, bool) = match removed {
            Some(gone) => (gone, true),
            None => (outputs, false),
        };
        for sstable in doomed {
            sstable.sstable.descriptor().delete()?;
        }
        Ok(installed)
    }

    /// The strategy's next background task, its inputs claimed; `None` when nothing is due.
    /// Each repair group is compacted apart ([`repair_groups`]), the one with the most tasks
    /// due first.
    pub fn next_task(&self, now_ms: i64, now: i32) -> Option<CompactionTask> {
        let settings = self.settings();
        let gc_before = settings.gc_before(now);
        let mut groups = repair_groups(&self.infos(gc_before));
        groups.sort_by_key(|g| std::cmp::Reverse(settings.strategy.pending_tasks(g)));
        let task = groups.iter().find_map(|group| {
            settings
                .strategy
                .next_task(group, now_ms, i64::from(gc_before))
        })?;
        self.claim(&task.inputs).then_some(task)
    }

    /// The tasks of a major compaction over the SSTables not being compacted (unclaimed),
    /// each repair group apart.
    pub fn major_tasks(&self, now: i32) -> Vec<CompactionTask> {
        let settings = self.settings();
        let infos = self.infos(settings.gc_before(now));
        repair_groups(&infos)
            .iter()
            .flat_map(|group| settings.strategy.major_tasks(group))
            .collect()
    }

    /// The strategy's estimate of the background tasks due (`nodetool compactionstats`).
    pub fn pending_tasks(&self, now: i32) -> usize {
        let settings = self.settings();
        repair_groups(&self.infos(settings.gc_before(now)))
            .iter()
            .map(|group| settings.strategy.pending_tasks(group))
            .sum()
    }

    /// Memtables flushed to an SSTable since the table was opened (memtable switch count).
    pub fn flush_count(&self) -> u64 {
        self.flushes.load(Ordering::Relaxed)
    }

    fn infos(&self, gc_before: i32) -> Vec<SstableInfo> {
        let view = self.view();
        let compacting = self.compacting.lock();
        view.sstables
            .iter()
            .map(|s| s.info(gc_before, compacting.contains(&s.generation())))
            .collect()
    }

    /// Descriptor of every live SSTable, newest first.
    pub fn descriptors(&self) -> Vec<Descriptor> {
        self.view()
            .sstables
            .iter()
            .map(|s| s.sstable.descriptor().clone())
            .collect()
    }
}

/// The SSTables of `view` that `keep` accepts, read through `caches`.
fn cached<'a>(
    view: &'a View,
    caches: ReadCaches<'a>,
    keep: impl Fn(&Sstable) -> bool,
) -> Vec<CachedSstable<'a>> {
    view.sstables
        .iter()
        .map(|s| &s.sstable)
        .filter(|s| keep(s))
        .map(|sstable| CachedSstable { sstable, caches })
        .collect()
}

/// The memtables of `view`, newest first, then `sstables`.
fn sources<'a>(view: &'a View, sstables: &'a [CachedSstable<'a>]) -> Vec<&'a dyn PartitionSource> {
    let memtables = view.memtables().map(|m| m as &dyn PartitionSource);
    memtables
        .chain(sstables.iter().map(|s| s as &dyn PartitionSource))
        .collect()
}

/// Whether the SSTable's key span meets `range`.
fn overlaps(sstable: &Sstable, range: &KeyRange) -> bool {
    let stats = sstable.stats();
    match (&stats.first_key, &stats.last_key) {
        (Some(first), Some(last)) => range.before_end(first) && range.after_start(last),
        _ => false,
    }
}

impl TableEngine for LsmEngine {
    fn apply(&self, key: &PartitionKey, update: &PartitionUpdate) -> Result<()> {
        self.view.read().active.apply(key, update.clone(), None);
        Ok(())
    }

    fn read(&self, key: &PartitionKey, filter: &ReadFilter, now: i32) -> Result<Option<Partition>> {
        Ok(self.read_counted(key, filter, now)?.0)
    }

    fn scan(
        &self,
        range: &KeyRange,
        filter: &ReadFilter,
        now: i32,
        limit: usize,
    ) -> Result<Vec<Partition>> {
        Ok(self.scan_counted(range, filter, now, limit)?.0)
    }

    fn truncate(&self) -> Result<()> {
        let _pause = self.pause_tasks();
        let lock = self.lock_flush();
        let old = self.reset_view(&lock);
        self.finish_truncate(&lock, &old, self.floor())
    }

    fn memory_bytes(&self) -> usize {
        usize::try_from(self.memtable_usage().total).unwrap_or(usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::TableParams;

    /// An engine that flushes before every write, so reads merge a memtable with SSTables.
    struct Flushing {
        engine: LsmEngine,
        _dir: tempfile::TempDir,
    }

    impl Flushing {
        fn new() -> Flushing {
            let dir = tempfile::tempdir().expect("tempdir");
            let settings = TableParams::new("ks", "t").settings().expect("settings");
            let engine = LsmEngine::open(dir.path(), settings, false).expect("open");
            Flushing { engine, _dir: dir }
        }

        fn flush(&self) {
            let lock = self.engine.lock_flush();
            self.engine.switch_memtable();
            self.engine
                .flush_switched(&lock, Position::ZERO)
                .expect("flush");
        }
    }

    impl TableEngine for Flushing {
        fn apply(&self, key: &PartitionKey, update: &PartitionUpdate) -> Result<()> {
            self.flush();
            self.engine.apply(key, update)
        }

        fn read(
            &self,
            key: &PartitionKey,
            filter: &ReadFilter,
            now: i32,
        ) -> Result<Option<Partition>> {
            self.engine.read(key, filter, now)
        }

        fn scan(
            &self,
            range: &KeyRange,
            filter: &ReadFilter,
            now: i32,
            limit: usize,
        ) -> Result<Vec<Partition>> {
            self.engine.scan(range, filter, now, limit)
        }

        fn truncate(&self) -> Result<()> {
            self.engine.truncate()
        }

        fn memory_bytes(&self) -> usize {
            self.engine.memory_bytes()
        }
    }

    #[test]
    fn lsm_engine_passes_conformance_with_every_write_flushed() {
        crate::engine::conformance::run_all(Flushing::new);
    }

    #[test]
    fn reopening_finds_the_flushed_sstables() {
        let flushing = Flushing::new();
        let key = PartitionKey {
            token: 1,
            key: bytes::Bytes::from_static(b"k"),
        };
        flushing
            .apply(&key, &PartitionUpdate::default())
            .expect("apply");
        flushing.flush();
        flushing.flush();
        let settings = TableParams::new("ks", "t").settings().expect("settings");
        let reopened = LsmEngine::open(flushing.engine.dir(), settings, false).expect("reopen");
        assert_eq!(
            reopened.view().sstables.len(),
            flushing.engine.view().sstables.len()
        );
        assert_eq!(
            reopened.next_generation(),
            flushing.engine.next_generation()
        );
    }

    fn update(clustering: &str, ts: i64, deleted: bool) -> PartitionUpdate {
        let mut row = mutation::Row::new(bytes::Bytes::copy_from_slice(clustering.as_bytes()));
        row.columns = vec![mutation::ColumnData::simple(
            "v",
            mutation::Cell::live(ts, bytes::Bytes::from_static(b"x")),
        )];
        if deleted {
            row.deletion = mutation::DeletionTime::new(ts + 1, 0);
        }
        PartitionUpdate {
            rows: vec![row],
            ..Default::default()
        }
    }

    fn source_key() -> PartitionKey {
        PartitionKey {
            token: 7,
            key: bytes::Bytes::from_static(b"k"),
        }
    }

    /// `updates` in one memtable, and in a memtable plus one SSTable per update.
    fn layouts(updates: &[PartitionUpdate]) -> (Flushing, Flushing) {
        let (whole, split) = (Flushing::new(), Flushing::new());
        for update in updates {
            whole.engine.apply(&source_key(), update).expect("apply");
            split.apply(&source_key(), update).expect("apply");
        }
        (whole, split)
    }

    #[test]
    fn replicas_holding_the_same_data_answer_and_digest_the_same() {
        let updates: Vec<PartitionUpdate> = (0..6)
            .map(|i| update(&format!("r{}", i % 4), i, i == 5))
            .collect();
        let (whole, split) = layouts(&updates);
        let answer = |f: &Flushing, cap| {
            f.engine
                .read_source(&source_key(), &ReadFilter::all(), cap)
                .expect("read")
                .expect("present")
        };
        for cap in [usize::MAX, 2] {
            let (a, b) = (answer(&whole, cap), answer(&split, cap));
            assert_eq!(a, b);
            assert_eq!(a.digest(), b.digest());
        }
        let capped = answer(&split, 2);
        assert_eq!(capped.stopped_at, Some(bytes::Bytes::from_static(b"r1")));
        assert_eq!(capped.data.rows.len(), 2, "only the complete rows");
        let mut newer = updates.clone();
        newer.push(update("r2", 10, false));
        let (_, changed) = layouts(&newer);
        assert_ne!(
            answer(&changed, usize::MAX).digest(),
            answer(&split, usize::MAX).digest()
        );
    }

    #[test]
    fn a_full_replica_answer_is_the_merged_data() {
        let updates: Vec<PartitionUpdate> = (0..4).map(|i| update("r", i, i == 3)).collect();
        let (_, split) = layouts(&updates);
        let filter = ReadFilter::all();
        let answer = split
            .engine
            .read_source(&source_key(), &filter, usize::MAX)
            .expect("read")
            .expect("present");
        assert_eq!(answer.stopped_at, None);
        let merged = split
            .engine
            .read_merged(&source_key(), &filter)
            .expect("read");
        assert_eq!(Some(answer.data), merged);
        let scan = split
            .engine
            .scan_source(&KeyRange::all(), &filter, 10)
            .expect("scan");
        assert_eq!(
            scan.partitions.len(),
            1,
            "the row is deleted, the partition is there"
        );
    }
}
