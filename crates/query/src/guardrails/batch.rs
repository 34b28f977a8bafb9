//! Cassandra's batch checks (`BatchStatement.verifyBatchSize` and `verifyBatchType`): a batch
//! writing more than one partition is warned about past `batch_size_warn_threshold` and refused
//! past `batch_size_fail_threshold`, its size being the sum of its partition updates' data
//! sizes (`IMutation.dataSize`); an unlogged batch over more partitions than
//! `unlogged_batch_across_partitions_warn_threshold` is warned about.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use coordinator::trace::trace;
use cql::ast::BatchKind;
use mutation::{
    Cell, ColumnValue, CounterUpdate, DeletionTime, Mutation, PartitionKey, Row, TableId,
};
use types::comparable::encode_clustering;
pub(crate) use types::units::pretty_memory;
use types::{CqlError, CqlResult};

use super::Limits;
use crate::exec::ExecContext;
use crate::keys::KeyLayout;

/// A row's deletion (`Row.Deletion.dataSize`: a deletion time and a flag).
const ROW_DELETION: u64 = 13;
/// Row liveness: a timestamp, plus TTL and expiry when it expires.
const LIVENESS: u64 = 8;
const EXPIRING_LIVENESS: u64 = 20;
/// The partition deletion's timestamp (`MutableDeletionInfo.dataSize`).
const PARTITION_DELETION: u64 = 8;
/// The range tombstone list's count.
const RANGE_COUNT: u64 = 4;
/// A counter update's value (`CounterContext.createUpdate`: header, shard id, clock, count).
const COUNTER_UPDATE: u64 = 36;

/// One column of a row: a cell, or a collection's deletion and cells by path.
enum ColumnSize {
    Simple(u64),
    Complex(BTreeMap<Bytes, u64>),
}

struct RowSize {
    clustering: u64,
    liveness: u64,
    columns: BTreeMap<Bytes, ColumnSize>,
}

impl RowSize {
    fn new(clustering: u64) -> RowSize {
        RowSize {
            clustering,
            liveness: LIVENESS,
            columns: BTreeMap::new(),
        }
    }

    /// Merges a row of the same clustering in, as the batch's partition update does.
    fn add(&mut self, row: &Row) {
        if let Some(liveness) = &row.liveness {
            self.liveness = if liveness.is_expiring() {
                EXPIRING_LIVENESS
            } else {
                LIVENESS
            };
        }
        for column in &row.columns {
            match &column.value {
                ColumnValue::Simple(cell) => {
                    let size = ColumnSize::Simple(cell.data_size());
                    self.columns.insert(column.name.clone(), size);
                }
                ColumnValue::Complex(complex) => {
                    let entry = self.columns.entry(column.name.clone());
                    let cells = entry.or_insert_with(|| ColumnSize::Complex(BTreeMap::new()));
                    if let ColumnSize::Complex(cells) = cells {
                        for cell in &complex.cells {
                            let path = cell.path.clone().unwrap_or_default();
                            cells.insert(path, cell.data_size());
                        }
                    }
                }
            }
        }
    }

    fn total(&self) -> u64 {
        let columns: u64 = self
            .columns
            .values()
            .map(|c| match c {
                ColumnSize::Simple(size) => *size,
                ColumnSize::Complex(cells) => DeletionTime::DATA_SIZE + cells.values().sum::<u64>(),
            })
            .sum();
        self.clustering + self.liveness + ROW_DELETION + columns
    }
}

/// One partition's update in the batch (all its statements merged), sized as Cassandra's
/// `PartitionUpdate.dataSize`: rows, the static row (present or not) and the deletion info.
#[derive(Default)]
struct PartitionSize {
    static_row: Option<RowSize>,
    rows: BTreeMap<Bytes, RowSize>,
    ranges: Vec<u64>,
}

impl PartitionSize {
    fn total(&self) -> u64 {
        let ranges = match self.ranges.len() {
            0 => 0,
            _ => RANGE_COUNT + self.ranges.iter().sum::<u64>(),
        };
        let static_row = self
            .static_row
            .as_ref()
            .map_or_else(|| RowSize::new(0).total(), RowSize::total);
        let rows: u64 = self.rows.values().map(RowSize::total).sum();
        PARTITION_DELETION + ranges + static_row + rows
    }
}

/// The writes of one batch, gathered for its checks.
#[derive(Default)]
pub(crate) struct BatchWrites {
    partitions: BTreeMap<(TableId, PartitionKey), PartitionSize>,
    /// `ks.table` of each table written, first write first.
    tables: Vec<String>,
    /// Cassandra's mutations: one per keyspace and partition key.
    mutations: BTreeSet<(String, PartitionKey)>,
    /// Partition keys written, whatever the table.
    keys: BTreeSet<PartitionKey>,
}

impl BatchWrites {
    fn partition(&mut self, layout: &KeyLayout, key: &PartitionKey) -> &mut PartitionSize {
        let table = &layout.table;
        let name = format!("{}.{}", table.keyspace, table.name);
        if !self.tables.contains(&name) {
            self.tables.push(name);
        }
        self.mutations.insert((table.keyspace.clone(), key.clone()));
        self.keys.insert(key.clone());
        let id = TableId(table.id);
        self.partitions.entry((id, key.clone())).or_default()
    }

    /// Adds one statement's mutations.
    pub fn add(&mut self, layout: &KeyLayout, mutations: &[Mutation]) {
        for m in mutations {
            let partition = self.partition(layout, &m.key);
            if let Some(row) = &m.update.static_row {
                partition
                    .static_row
                    .get_or_insert_with(|| RowSize::new(0))
                    .add(row);
            }
            for row in &m.update.rows {
                let clustering = clustering_size(layout, &row.clustering);
                let merged = partition.rows.entry(row.clustering.clone());
                merged.or_insert_with(|| RowSize::new(clustering)).add(row);
            }
            for range in &m.update.range_tombstones {
                let bounds = bound_size(layout, &range.start) + bound_size(layout, &range.end);
                partition.ranges.push(bounds + DeletionTime::DATA_SIZE);
            }
        }
    }

    /// Adds one counter statement's updates (each a counter cell holding an update context).
    pub fn add_counters(
        &mut self,
        layout: &KeyLayout,
        updates: &[(PartitionKey, Vec<CounterUpdate>)],
    ) {
        for (key, cells) in updates {
            let partition = self.partition(layout, key);
            for update in cells {
                let row = match &update.clustering {
                    None => partition.static_row.get_or_insert_with(|| RowSize::new(0)),
                    Some(c) => {
                        let clustering = clustering_size(layout, c);
                        let entry = partition.rows.entry(c.clone());
                        entry.or_insert_with(|| RowSize::new(clustering))
                    }
                };
                let size = ColumnSize::Simple(Cell::DATA_OVERHEAD + COUNTER_UPDATE);
                row.columns.insert(update.column.clone(), size);
            }
        }
    }

    /// The batch's data size (Cassandra's `IMutation.dataSize` of its mutations).
    pub fn size(&self) -> u64 {
        self.partitions.values().map(PartitionSize::total).sum()
    }

    /// Cassandra's checks, run once the batch's mutations are built and before they are written.
    pub fn check(&self, limits: &Limits, kind: BatchKind, ctx: &ExecContext) -> CqlResult<()> {
        if self.mutations.len() <= 1 {
            return Ok(());
        }
        self.check_size(limits, ctx)?;
        if kind != BatchKind::Logged {
            self.check_partitions(limits, ctx);
        }
        Ok(())
    }

    fn check_size(&self, limits: &Limits, ctx: &ExecContext) -> CqlResult<()> {
        let size = self.size();
        let warn = limits.batch_size_warn;
        if size <= warn {
            return Ok(());
        }
        let tables = java_hash_set_order(&self.tables).join(", ");
        let fail = limits.batch_size_fail;
        let text = |threshold: u64, pretty: fn(u64) -> String| {
            format!(
                "Batch for [{tables}] is of size {}, exceeding specified threshold of {} by {}.",
                pretty(size),
                pretty(threshold),
                pretty(size - threshold)
            )
        };
        if size > fail {
            let line = format!(
                "{} (see batch_size_fail_threshold)",
                text(fail, pretty_memory)
            );
            trace(ctx.trace(), || line.clone());
            tracing::error!("{line}");
            return Err(CqlError::invalid("Batch too large"));
        }
        tracing::warn!("{}", text(warn, pretty_memory));
        ctx.warnings.add(text(warn, |n| n.to_string()));
        Ok(())
    }

    fn check_partitions(&self, limits: &Limits, ctx: &ExecContext) {
        let keys = self.keys.len() as u64;
        if keys <= limits.unlogged_batch_partitions {
            return;
        }
        let suffix = if self.tables.len() == 1 { "" } else { "s" };
        let tables = java_hash_set_order(&self.tables).join(", ");
        let message = format!(
            "Unlogged batch covering {keys} partitions detected against table{suffix} [{tables}]. \
             You should use a logged batch for atomicity, or asynchronous writes for performance."
        );
        if once_a_minute() {
            tracing::warn!("{message}");
        }
        ctx.warnings.add(message);
    }
}

/// Cassandra logs the unlogged-batch warning at most once a minute (`NoSpamLogger`).
fn once_a_minute() -> bool {
    static LAST: OnceLock<Mutex<Option<Instant>>> = OnceLock::new();
    let mut last = LAST
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let now = Instant::now();
    if last.is_some_and(|at| now.duration_since(at) < Duration::from_secs(60)) {
        return false;
    }
    *last = Some(now);
    true
}

/// The clustering's values' sizes (`ClusteringPrefix.dataSize`).
fn clustering_size(layout: &KeyLayout, encoded: &[u8]) -> u64 {
    match layout.decode_clustering(encoded) {
        Ok(values) => values.iter().flatten().map(|v| v.len() as u64).sum(),
        Err(_) => encoded.len() as u64,
    }
}

/// A range tombstone bound's values' sizes: the bound is a clustering prefix whose last byte
/// says which side of it the bound lies; with a clustering's end it decodes as one.
fn bound_size(layout: &KeyLayout, bound: &std::ops::Bound<Bytes>) -> u64 {
    let (std::ops::Bound::Included(b) | std::ops::Bound::Excluded(b)) = bound else {
        return 0;
    };
    let Some((_, prefix)) = b.split_last() else {
        return 0;
    };
    let mut clustering = prefix.to_vec();
    encode_clustering(&[], &[], &mut clustering);
    clustering_size(layout, &clustering)
}

/// The order in which a Java `HashSet<String>` holding `names` (added in this order) iterates:
/// by bucket of `String.hashCode` spread as `HashMap.hash` does, insertion order within a
/// bucket; Cassandra prints its table sets this way.
pub(crate) fn java_hash_set_order(names: &[String]) -> Vec<&str> {
    let mut capacity = 16usize;
    while names.len() > capacity / 4 * 3 {
        capacity *= 2;
    }
    let mut ordered: Vec<&str> = names.iter().map(String::as_str).collect();
    ordered.sort_by_key(|name| java_hash(name) as usize & (capacity - 1));
    ordered
}

fn java_hash(s: &str) -> u32 {
    let h = s.encode_utf16().fold(0u32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(u32::from(unit))
    });
    h ^ (h >> 16)
}
