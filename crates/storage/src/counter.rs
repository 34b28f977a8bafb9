//! Counters: a counter cell holds a counter context (see `mutation::counter_context`), one shard per
//! replica that led increments. An increment runs on a leader replica: under a per-partition
//! striped lock it reads the leader's own shard, and writes a cell holding just that shard with
//! its clock advanced and the delta added — so the commit log records shard states and replay
//! is idempotent, and replicas merging the cell in any order converge. Reconciling two live
//! counter cells merges their shards; a counter cell tombstone wins over every counter cell.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::ops::Bound;

use bytes::Bytes;
use tokio::sync::{Mutex, MutexGuard};

use crate::error::{Result, StorageError};
use crate::filter::ReadFilter;
use mutation::counter_context::{self, CounterContext, Shard};
use mutation::partition::PartitionData;
use mutation::{Cell, ColumnData, ColumnValue, PartitionKey, PartitionUpdate, Row, TableId};

pub(crate) use mutation::CounterUpdate;

const STRIPES: usize = 1024;

/// Striped locks serializing counter updates per partition.
pub struct CounterLocks {
    stripes: Vec<Mutex<()>>,
}

impl Default for CounterLocks {
    fn default() -> Self {
        CounterLocks {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        }
    }
}

impl CounterLocks {
    /// Locks the stripe of partition `key` of `table`.
    pub async fn lock(&self, table: TableId, key: &PartitionKey) -> MutexGuard<'_, ()> {
        let mut hasher = DefaultHasher::new();
        (table, key).hash(&mut hasher);
        let stripe = (hasher.finish() % STRIPES as u64) as usize;
        self.stripes[stripe].lock().await
    }
}

/// A filter reading just the rows `updates` touch.
pub fn read_filter(updates: &[CounterUpdate]) -> ReadFilter {
    let mut clusterings: Vec<&Bytes> = updates
        .iter()
        .filter_map(|u| u.clustering.as_ref())
        .collect();
    clusterings.sort();
    clusterings.dedup();
    ReadFilter {
        slices: clusterings
            .into_iter()
            .map(|c| (Bound::Included(c.clone()), Bound::Included(c.clone())))
            .collect(),
        reversed: false,
        row_limit: None,
        total_row_limit: None,
        include_static: updates.iter().any(|u| u.clustering.is_none()),
        columns: None,
    }
}

/// The update writing the leader's new shards, given every version of the partition merged
/// with its tombstones (`current`) and the leader's counter id `id`.
///
/// As in Cassandra, a counter cell tombstone (`DELETE n FROM …`) wins over every counter
/// update whatever its timestamp, so increments of a deleted counter are dropped; a row or
/// partition deletion only shadows what is older than it, and a later increment adds to the
/// shards written before (Cassandra 5.0 keeps its shard in its counter cache: `UPDATE n = n -
/// 15`, `DELETE`, `UPDATE n = n + 3` reads back -12). Each new cell's timestamp is `timestamp`,
/// raised above the current cell's if needed, so timestamps grow with each shard's clock and
/// replicas holding the same shards hold the same cell.
pub fn new_shards(
    current: Option<&PartitionData>,
    updates: &[CounterUpdate],
    timestamp: i64,
    id: [u8; 16],
) -> Result<PartitionUpdate> {
    let mut rows: BTreeMap<Option<Bytes>, BTreeMap<Bytes, (i64, Shard)>> = BTreeMap::new();
    for update in updates {
        let columns = rows.entry(update.clustering.clone()).or_default();
        let (ts, mut shard) = match columns.get(&update.column) {
            Some(pending) => *pending,
            None => match own_shard(current, update, timestamp, id)? {
                Some(start) => start,
                None => continue,
            },
        };
        shard.count = shard.count.wrapping_add(update.delta);
        columns.insert(update.column.clone(), (ts, shard));
    }
    let mut result = PartitionUpdate::default();
    for (clustering, columns) in rows.into_iter().filter(|(_, c)| !c.is_empty()) {
        let mut row = Row::new(clustering.clone().unwrap_or_default());
        row.columns = columns
            .into_iter()
            .map(|(name, (ts, shard))| {
                ColumnData::simple(name, Cell::counter(ts, &CounterContext::single(shard)))
            })
            .collect();
        match clustering {
            Some(_) => result.rows.push(row),
            None => result.static_row = Some(row),
        }
    }
    Ok(result)
}

/// The timestamp of the cell an increment writes and the leader's shard with its clock
/// advanced (count not yet changed); `None` when the counter was deleted by a cell tombstone.
fn own_shard(
    current: Option<&PartitionData>,
    update: &CounterUpdate,
    timestamp: i64,
    id: [u8; 16],
) -> Result<Option<(i64, Shard)>> {
    let (ts, previous) = match current_cell(current, update)? {
        Some(cell) if cell.is_tombstone() => return Ok(None),
        Some(cell) => {
            let ts = timestamp.max(cell.timestamp.saturating_add(1));
            (ts, context_of(&cell)?.shard(id))
        }
        None => (timestamp, None),
    };
    let (clock, count) = previous.map_or((0, 0), |s| (s.clock, s.count));
    let shard = Shard {
        id,
        clock: clock.saturating_add(1),
        count,
    };
    Ok(Some((ts, shard)))
}

fn current_cell(current: Option<&PartitionData>, update: &CounterUpdate) -> Result<Option<Cell>> {
    let Some(partition) = current else {
        return Ok(None);
    };
    let row = match &update.clustering {
        None => partition.static_row.as_ref(),
        Some(c) => partition.rows.get(c),
    };
    match row.and_then(|r| r.column(&update.column)).map(|c| &c.value) {
        None => Ok(None),
        Some(ColumnValue::Simple(cell)) => Ok(Some(cell.clone())),
        Some(ColumnValue::Complex(_)) => Err(StorageError::Invalid(
            "counter column holds a collection".to_string(),
        )),
    }
}

/// The context of a live counter cell, or why its value is none.
fn context_of(cell: &Cell) -> Result<CounterContext> {
    counter_context::context_of(cell).map_err(StorageError::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutation::counter_context::{readable, reconcile};

    const ME: [u8; 16] = [5; 16];

    fn total(n: i64) -> Bytes {
        Bytes::copy_from_slice(&n.to_be_bytes())
    }

    fn shard(id: [u8; 16], clock: i64, count: i64) -> Shard {
        Shard { id, clock, count }
    }

    fn counter(ts: i64, shards: &[Shard]) -> Cell {
        let context = shards.iter().fold(CounterContext::default(), |c, s| {
            c.merge(&CounterContext::single(*s))
        });
        Cell::counter(ts, &context)
    }

    fn update(clustering: Option<&'static str>, delta: i64) -> CounterUpdate {
        CounterUpdate {
            clustering: clustering.map(|c| Bytes::from_static(c.as_bytes())),
            column: Bytes::from_static(b"n"),
            delta,
        }
    }

    fn partition(rows: Vec<Row>) -> PartitionData {
        let mut data = PartitionData::default();
        data.apply(PartitionUpdate {
            rows,
            ..Default::default()
        });
        data
    }

    fn counter_row(clustering: &'static str, cell: Cell) -> Row {
        let mut row = Row::new(Bytes::from_static(clustering.as_bytes()));
        row.columns = vec![ColumnData::simple("n", cell)];
        row
    }

    fn written(update: &PartitionUpdate) -> &ColumnValue {
        &update.rows[0].columns[0].value
    }

    #[test]
    fn the_leader_advances_only_its_own_shard_and_outranks_the_current_timestamp() {
        let other = shard([9; 16], 4, 100);
        let current = counter(50, &[shard(ME, 2, 10), other]);
        let partition = partition(vec![counter_row("a", current)]);
        let updates = [update(Some("a"), 5), update(Some("a"), 1), update(None, -2)];
        let result = new_shards(Some(&partition), &updates, 7, ME).expect("valid counters");
        assert_eq!(
            written(&result),
            &ColumnValue::Simple(counter(51, &[shard(ME, 3, 16)]))
        );
        let static_row = result.static_row.expect("static update");
        assert_eq!(
            static_row.columns[0].value,
            ColumnValue::Simple(counter(7, &[shard(ME, 1, -2)]))
        );
        let filter = read_filter(&updates);
        assert_eq!(filter.slices.len(), 1);
        assert!(filter.include_static);
    }

    #[test]
    fn a_legacy_total_stays_its_own_shard_under_new_increments() {
        let partition = partition(vec![counter_row("a", Cell::live(40, total(30)))]);
        let result = new_shards(Some(&partition), &[update(Some("a"), 2)], 7, ME).expect("ok");
        let ColumnValue::Simple(new) = written(&result) else {
            panic!("simple cell expected");
        };
        assert_eq!(new, &counter(41, &[shard(ME, 1, 2)]));
        let merged = reconcile(&Cell::live(40, total(30)), new).expect("counters merge");
        assert_eq!(readable(&merged), Cell::live(41, total(32)));
    }

    #[test]
    fn a_deleted_counter_cell_stays_deleted_whatever_the_increment_timestamp() {
        let partition = partition(vec![counter_row("a", Cell::tombstone(5, 0))]);
        let result = new_shards(Some(&partition), &[update(Some("a"), 3)], 100, ME);
        assert_eq!(result.expect("valid"), PartitionUpdate::default());
        let live = counter(100, &[shard(ME, 1, 3)]);
        let tombstone = Cell::tombstone(5, 0);
        assert_eq!(reconcile(&live, &tombstone), Some(tombstone.clone()));
        assert_eq!(reconcile(&tombstone, &live), Some(tombstone));
    }

    #[test]
    fn an_increment_after_a_row_deletion_adds_to_the_last_total() {
        let mut row = counter_row("a", counter(10, &[shard(ME, 1, -15)]));
        row.deletion = mutation::DeletionTime::new(20, 0);
        let result = new_shards(Some(&partition(vec![row])), &[update(Some("a"), 3)], 30, ME);
        assert_eq!(
            written(&result.expect("valid")),
            &ColumnValue::Simple(counter(30, &[shard(ME, 2, -12)]))
        );
    }

    #[test]
    fn live_counter_cells_merge_shards_at_the_greater_timestamp() {
        let a = counter(3, &[shard(ME, 2, 10), shard([1; 16], 1, 1)]);
        let b = counter(9, &[shard(ME, 1, 4), shard([2; 16], 1, 5)]);
        let merged = reconcile(&a, &b).expect("counters");
        assert_eq!(
            merged,
            counter(
                9,
                &[shard([1; 16], 1, 1), shard([2; 16], 1, 5), shard(ME, 2, 10)]
            )
        );
        assert_eq!(reconcile(&b, &a), Some(merged.clone()));
        assert_eq!(readable(&merged), Cell::live(9, total(16)));
    }

    #[test]
    fn replicas_holding_the_same_shards_hold_the_same_cell_and_digest() {
        // Each leader's cells, in clock order: their timestamps grow with the clock.
        let a1 = counter(10, &[shard([1; 16], 1, 1)]);
        let a2 = counter(11, &[shard([1; 16], 2, 3)]);
        let b1 = counter(5, &[shard([2; 16], 1, 7)]);
        let all = partition(vec![
            counter_row("a", a1),
            counter_row("a", b1.clone()),
            counter_row("a", a2.clone()),
        ]);
        let latest = partition(vec![counter_row("a", a2), counter_row("a", b1)]);
        assert_eq!(all, latest);
        let digest = |data: &PartitionData| {
            mutation::partition::SourceRows {
                data: data.clone(),
                stopped_at: None,
            }
            .digest()
        };
        assert_eq!(digest(&all), digest(&latest));
    }

    #[test]
    fn malformed_counter_cells_are_errors() {
        let partition = partition(vec![counter_row(
            "a",
            Cell::live(1, Bytes::from_static(b"xyz")),
        )]);
        let result = new_shards(Some(&partition), &[update(Some("a"), 1)], 2, ME);
        assert!(matches!(result, Err(StorageError::Invalid(_))));
    }
}
