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
use mutation::{
    Cell, ColumnData, ColumnValue, Partition, PartitionKey, PartitionUpdate, Row, TableId,
};

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

/// The update writing the new totals, given the partition's current live content.
///
/// Each new cell's timestamp is `timestamp`, raised above the current cell's if needed so the
/// new total always wins reconciliation.
pub fn new_totals(
    current: Option<&Partition>,
    updates: &[CounterUpdate],
    timestamp: i64,
) -> Result<PartitionUpdate> {
    let mut rows: BTreeMap<Option<Bytes>, BTreeMap<Bytes, Cell>> = BTreeMap::new();
    for update in updates {
        let columns = rows.entry(update.clustering.clone()).or_default();
        let cell = match columns.get(&update.column) {
            Some(pending) => pending.clone(),
            None => starting_cell(current, update, timestamp)?,
        };
        let total = decode_total(&cell)?.wrapping_add(update.delta);
        let value = Bytes::copy_from_slice(&total.to_be_bytes());
        columns.insert(update.column.clone(), Cell::live(cell.timestamp, value));
    }
    let mut result = PartitionUpdate::default();
    for (clustering, columns) in rows {
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
/// beat, or zero.
fn starting_cell(
    current: Option<&Partition>,
    update: &CounterUpdate,
    timestamp: i64,
) -> Result<Cell> {
    let zero = || Bytes::copy_from_slice(&0i64.to_be_bytes());
    Ok(match current_cell(current, update)? {
        Some(cell) => {
            let ts = timestamp.max(cell.timestamp.saturating_add(1));
            Cell::live(ts, cell.value.unwrap_or_else(zero))
        }
        None => Cell::live(timestamp, zero()),
    })
}

fn current_cell(current: Option<&Partition>, update: &CounterUpdate) -> Result<Option<Cell>> {
    let Some(partition) = current else {
        return Ok(None);
    };
    let row = match &update.clustering {
        None => partition.static_row.as_ref(),
        Some(c) => partition.rows.iter().find(|r| r.clustering == c),
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

    #[test]
    fn adds_to_current_totals_and_outranks_their_timestamps() {
        let mut row = Row::new(Bytes::from_static(b"a"));
        row.columns = vec![ColumnData::simple("n", Cell::live(50, total(10)))];
        let partition = Partition {
            key: PartitionKey {
                token: 0,
                key: Bytes::new(),
            },
            static_row: None,
            rows: vec![row],
        };
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
    fn malformed_counter_cells_are_errors() {
        let mut row = Row::new(Bytes::from_static(b"a"));
        row.columns = vec![ColumnData::simple(
            "n",
            Cell::live(1, Bytes::from_static(b"xyz")),
        )];
        let partition = Partition {
            key: PartitionKey {
                token: 0,
                key: Bytes::new(),
            },
            static_row: None,
            rows: vec![row],
        };
        let result = new_totals(Some(&partition), &[update(Some("a"), 1)], 2);
        assert!(matches!(result, Err(StorageError::Invalid(_))));
    }
}
