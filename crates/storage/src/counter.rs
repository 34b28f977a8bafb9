//! Counter increments: counter cells hold an 8-byte big-endian total; an increment reads the
//! current totals under a per-partition striped lock and writes the new totals, so the commit
//! log records totals and replay is idempotent.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::ops::Bound;

use bytes::Bytes;
use tokio::sync::{Mutex, MutexGuard};

use crate::error::{Result, StorageError};
use crate::filter::ReadFilter;
use crate::partition::PartitionData;
use mutation::{Cell, ColumnData, ColumnValue, PartitionKey, PartitionUpdate, Row, TableId};

/// Adds `delta` to counter `column` of a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterUpdate {
    /// The row's clustering, or `None` for the static row.
    pub clustering: Option<Bytes>,
    pub column: Bytes,
    pub delta: i64,
}

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

/// The update writing the new totals, given every version of the partition merged with its
/// tombstones (`current`).
///
/// As in Cassandra, a counter cell tombstone (`DELETE n FROM …`) wins over every counter
/// update whatever its timestamp, so increments of a deleted counter are dropped; a row or
/// partition deletion only shadows what is older than it, and a later increment adds to the
/// last total written (Cassandra 5.0 keeps that total in its counter cache: `UPDATE n = n - 15`,
/// `DELETE`, `UPDATE n = n + 3` reads back -12). Each new cell's timestamp is `timestamp`,
/// raised above the current cell's if needed so the new total always wins reconciliation.
pub fn new_totals(
    current: Option<&PartitionData>,
    updates: &[CounterUpdate],
    timestamp: i64,
) -> Result<PartitionUpdate> {
    let mut rows: BTreeMap<Option<Bytes>, BTreeMap<Bytes, Cell>> = BTreeMap::new();
    for update in updates {
        let columns = rows.entry(update.clustering.clone()).or_default();
        let cell = match columns.get(&update.column) {
            Some(pending) => pending.clone(),
            None => match starting_cell(current, update, timestamp)? {
                Some(cell) => cell,
                None => continue,
            },
        };
        let total = decode_total(&cell)?.wrapping_add(update.delta);
        let value = Bytes::copy_from_slice(&total.to_be_bytes());
        columns.insert(update.column.clone(), Cell::live(cell.timestamp, value));
    }
    let mut result = PartitionUpdate::default();
    for (clustering, columns) in rows.into_iter().filter(|(_, c)| !c.is_empty()) {
        let mut row = Row::new(clustering.clone().unwrap_or_default());
        row.columns = columns
            .into_iter()
            .map(|(name, cell)| ColumnData::simple(name, cell))
            .collect();
        match clustering {
            Some(_) => result.rows.push(row),
            None => result.static_row = Some(row),
        }
    }
    Ok(result)
}

/// The cell an increment starts from: the current total with a timestamp the new write will
/// beat, or zero; `None` when the counter was deleted by a cell tombstone.
fn starting_cell(
    current: Option<&PartitionData>,
    update: &CounterUpdate,
    timestamp: i64,
) -> Result<Option<Cell>> {
    let zero = || Bytes::copy_from_slice(&0i64.to_be_bytes());
    Ok(match current_cell(current, update)? {
        Some(cell) if cell.value.is_none() => None,
        Some(cell) => {
            let ts = timestamp.max(cell.timestamp.saturating_add(1));
            Some(Cell::live(ts, cell.value.unwrap_or_else(zero)))
        }
        None => Some(Cell::live(timestamp, zero())),
    })
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

fn decode_total(cell: &Cell) -> Result<i64> {
    let bytes = cell.value.as_deref().unwrap_or(&[]);
    let total: [u8; 8] = bytes.try_into().map_err(|_| {
        StorageError::Invalid(format!("counter cell holds {} bytes, not 8", bytes.len()))
    })?;
    Ok(i64::from_be_bytes(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(n: i64) -> Bytes {
        Bytes::copy_from_slice(&n.to_be_bytes())
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
        data.apply(&PartitionUpdate {
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

    #[test]
    fn adds_to_current_totals_and_outranks_their_timestamps() {
        let partition = partition(vec![counter_row("a", Cell::live(50, total(10)))]);
        let updates = [update(Some("a"), 5), update(Some("a"), 1), update(None, -2)];
        let result = new_totals(Some(&partition), &updates, 7).expect("valid counters");
        assert_eq!(
            result.rows[0].columns[0].value,
            ColumnValue::Simple(Cell::live(51, total(16)))
        );
        let static_row = result.static_row.expect("static update");
        assert_eq!(
            static_row.columns[0].value,
            ColumnValue::Simple(Cell::live(7, total(-2)))
        );
        let filter = read_filter(&updates);
        assert_eq!(filter.slices.len(), 1);
        assert!(filter.include_static);
    }

    #[test]
    fn a_deleted_counter_cell_stays_deleted_whatever_the_increment_timestamp() {
        let partition = partition(vec![counter_row("a", Cell::tombstone(5, 0))]);
        let result = new_totals(Some(&partition), &[update(Some("a"), 3)], 100);
        assert_eq!(result.expect("valid"), PartitionUpdate::default());
    }

    #[test]
    fn an_increment_after_a_row_deletion_adds_to_the_last_total() {
        let mut row = counter_row("a", Cell::live(10, total(-15)));
        row.deletion = mutation::DeletionTime::new(20, 0);
        let result = new_totals(Some(&partition(vec![row])), &[update(Some("a"), 3)], 30);
        assert_eq!(
            result.expect("valid").rows[0].columns[0].value,
            ColumnValue::Simple(Cell::live(30, total(-12)))
        );
    }

    #[test]
    fn malformed_counter_cells_are_errors() {
        let partition = partition(vec![counter_row(
            "a",
            Cell::live(1, Bytes::from_static(b"xyz")),
        )]);
        let result = new_totals(Some(&partition), &[update(Some("a"), 1)], 2);
        assert!(matches!(result, Err(StorageError::Invalid(_))));
    }
}
