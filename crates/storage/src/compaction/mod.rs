//! Compaction: strategies that choose what to merge (size-tiered, leveled, time-window, unified).
//!
//! [`exec`] runs the chosen tasks (merge, purge, write, swap). The rest of this module is the
//! *selection* logic: pure functions of a description of the live
//! SSTables ([`SstableInfo`]) that return [`CompactionTask`]s naming generations. It reads no
//! files and keeps no state between calls, so the same input always yields the same task. The
//! engine builds the strategy from the table's `compaction` map with [`from_options`] (again on
//! every `ALTER TABLE`, which switches strategy live), marks the inputs of a returned task
//! `being_compacted` while it runs, and calls [`CompactionStrategy::next_task`] again after each
//! flush or finished compaction.
//!
//! Options, defaults and validation messages follow Cassandra 5.0 (`CompactionParams`,
//! `AbstractCompactionStrategy`, `SizeTieredCompactionStrategyOptions`,
//! `LeveledCompactionStrategy`, `TimeWindowCompactionStrategyOptions`, UCS `Controller`).
//!
//! # One huge SSTable full of tombstones (the `002` failure)
//!
//! Size-tiered buckets only merge SSTables of similar size, so one SSTable far larger than the
//! rest never finds `min_threshold` partners and its tombstones would stay forever. Every strategy
//! therefore falls back, when no regular task is due, to a **single-SSTable tombstone
//! compaction** ([`TaskKind::Tombstone`]) of an SSTable whose droppable-tombstone ratio exceeds
//! `tombstone_threshold` (default 0.2) and which is older than `tombstone_compaction_interval`
//! (default one day), subject to the overlap estimate described in `tombstones.rs` (skipped with
//! `unchecked_tombstone_compaction`):
//! - **STCS** picks the largest such SSTable (Cassandra's choice), so the huge one goes first;
//! - **LCS** scans levels from the highest down and picks, per level, the SSTable with the highest
//!   droppable ratio; the output stays on its level, split at `sstable_size_in_mb`;
//! - **TWCS** picks the smallest such SSTable (Cassandra's choice) and also drops whole SSTables
//!   that are fully expired ([`fully_expired`]);
//! - **UCS** in Cassandra 5.0 has no tombstone compactions; Helenus adds the STCS rule (largest
//!   worthy SSTable) so that the 5.0 default strategy cannot reproduce the failure either, and
//!   drops fully expired SSTables as UCS does.
//!
//! With the defaults, a 100 GiB SSTable with 50% droppable tombstones, a day old, gets a
//! tombstone task under every strategy (see the tests).

pub mod exec;
mod lcs;
mod options;
mod overlap;
mod stcs;
mod syntax;
mod tombstones;
mod twcs;
mod ucs;
mod ucs_options;

#[cfg(test)]
mod tests;

pub use lcs::Leveled;
pub(crate) use options::only_purge_repaired_tombstones;
pub use options::Options;
pub use stcs::SizeTiered;
pub use tombstones::fully_expired;
pub use twcs::TimeWindow;
pub use ucs::Unified;

use uuid::Uuid;

/// What a strategy knows about one live SSTable.
#[derive(Debug, Clone, PartialEq)]
pub struct SstableInfo {
    /// The SSTable's generation (unique per table).
    pub generation: u64,
    /// Bytes on disk.
    pub size_bytes: u64,
    /// Oldest cell/tombstone timestamp (the table's timestamp unit, microseconds by default).
    pub min_timestamp: i64,
    /// Newest cell/tombstone timestamp.
    pub max_timestamp: i64,
    /// Newest local deletion time in seconds (`i64::MAX` when it holds live data without TTL).
    pub max_local_deletion_time: i64,
    /// Token of the first partition.
    pub min_token: i64,
    /// Token of the last partition.
    pub max_token: i64,
    /// LCS level; for UCS, 0 marks an SSTable written by a flush.
    pub level: u32,
    /// Estimated droppable-tombstone ratio at the current `gc_before`.
    pub droppable_tombstones: f64,
    /// Creation time of the data file (ms since the epoch).
    pub created_at_ms: i64,
    /// Estimated number of partitions.
    pub key_count: u64,
    /// Whether the SSTable was repaired (for `only_purge_repaired_tombstones`).
    pub repaired: bool,
    /// The incremental repair session it belongs to until the session ends.
    pub pending_repair: Option<Uuid>,
    /// Whether a running compaction already owns it; such SSTables are never selected.
    pub being_compacted: bool,
}

impl SstableInfo {
    /// The set of SSTables it may be compacted with.
    pub fn repair_group(&self) -> RepairGroup {
        match (self.pending_repair, self.repaired) {
            (Some(session), _) => RepairGroup::Pending(session),
            (None, true) => RepairGroup::Repaired,
            (None, false) => RepairGroup::Unrepaired,
        }
    }
}

/// SSTables compacted together: compaction never merges repaired, unrepaired and
/// pending-repair data (Cassandra keeps a strategy instance for each), so that what a repair
/// compared stays apart from what it did not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RepairGroup {
    Pending(Uuid),
    Repaired,
    Unrepaired,
}

/// `sstables` split by [`RepairGroup`], each group in the input order.
pub fn repair_groups(sstables: &[SstableInfo]) -> Vec<Vec<SstableInfo>> {
    let mut groups: std::collections::BTreeMap<RepairGroup, Vec<SstableInfo>> =
        std::collections::BTreeMap::new();
    for info in sstables {
        groups
            .entry(info.repair_group())
            .or_default()
            .push(info.clone());
    }
    groups.into_values().collect()
}

/// Why a task was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// A regular background compaction.
    Normal,
    /// A single-SSTable compaction to purge droppable tombstones.
    Tombstone,
    /// Part of a major (`nodetool compact`) compaction.
    Major,
    /// LCS `single_sstable_uplevel`: move one SSTable to `output_level` without rewriting it.
    Uplevel,
    /// `nodetool garbagecollect`: one SSTable rewritten without what other sources shadow.
    GarbageCollect,
    /// `nodetool scrub`: one SSTable rewritten without the partitions that cannot be read.
    Scrub,
    /// `nodetool verify`: one SSTable's checksums checked (nothing written).
    Verify,
    /// `nodetool cleanup`: one SSTable rewritten without the partitions the node does not own.
    Cleanup,
    /// Incremental repair: one SSTable split into the part an incremental repair session
    /// covers (pending) and the rest (unrepaired).
    Anticompaction,
}

/// A compaction chosen by a strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionTask {
    /// Generations to merge, ascending, without duplicates.
    pub inputs: Vec<u64>,
    /// Inputs found fully expired: the executor may drop them without reading them, after
    /// checking that no memtable holds older data they shadow.
    pub fully_expired: Vec<u64>,
    /// The level (LCS) or level hint (UCS) of the outputs.
    pub output_level: u32,
    /// Split outputs at this size (LCS, UCS); `None` writes one SSTable.
    pub max_output_bytes: Option<u64>,
    /// Why the task was chosen.
    pub kind: TaskKind,
}

impl CompactionTask {
    fn new(
        mut inputs: Vec<u64>,
        output_level: u32,
        max_output_bytes: Option<u64>,
        kind: TaskKind,
    ) -> Self {
        inputs.sort_unstable();
        inputs.dedup();
        Self {
            inputs,
            fully_expired: Vec::new(),
            output_level,
            max_output_bytes,
            kind,
        }
    }
}

/// A compaction strategy: pure selection over the live SSTables of one table.
pub trait CompactionStrategy: Send + Sync + std::fmt::Debug {
    /// The next background task, or `None` when nothing is due (or `enabled` is false).
    /// `now_ms` is wall-clock time in ms; `gc_before` is `now - gc_grace_seconds` in seconds, the
    /// instant before which tombstones may be purged (Cassandra's `gcBefore`).
    fn next_task(
        &self,
        sstables: &[SstableInfo],
        now_ms: i64,
        gc_before: i64,
    ) -> Option<CompactionTask>;
    /// The tasks of a major compaction over every SSTable not being compacted.
    fn major_tasks(&self, sstables: &[SstableInfo]) -> Vec<CompactionTask>;
    /// Cassandra's estimate of the background tasks still needed.
    fn pending_tasks(&self, sstables: &[SstableInfo]) -> usize;
    /// The strategy's simple class name.
    fn name(&self) -> &'static str;
}

const PACKAGE: &str = "org.apache.cassandra.db.compaction.";

/// Builds the strategy named by `options["class"]` (short or fully qualified name), validating
/// every option with Cassandra's messages.
pub fn from_options(options: &Options) -> Result<Box<dyn CompactionStrategy>, String> {
    let class = options
        .get("class")
        .ok_or_else(|| "Missing sub-option 'class' for the 'compaction' option".to_string())?;
    let full = if class.contains('.') {
        class.clone()
    } else {
        format!("{PACKAGE}{class}")
    };
    match full.strip_prefix(PACKAGE).unwrap_or("") {
        "SizeTieredCompactionStrategy" => Ok(Box::new(SizeTiered::from_options(options)?)),
        "LeveledCompactionStrategy" => Ok(Box::new(Leveled::from_options(options)?)),
        "TimeWindowCompactionStrategy" => Ok(Box::new(TimeWindow::from_options(options)?)),
        "UnifiedCompactionStrategy" => Ok(Box::new(Unified::from_options(options)?)),
        _ => Err(format!("Unable to find compaction strategy class '{full}'")),
    }
}

/// The generations of `set`.
fn generations(set: &[&SstableInfo]) -> Vec<u64> {
    set.iter().map(|s| s.generation).collect()
}
