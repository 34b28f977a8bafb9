//! Memtable accounting for the node's memtable pools: a [`PooledMemtable`] is a memtable that
//! also counts the bytes of cell values written into it, so the storage can charge those to the
//! offheap pool (`memtable_offheap_space`) and the rest of the memtable's estimate to the heap
//! pool (`memtable_heap_space`) when an offheap `memtable_allocation_type` is configured.

use crate::commitlog::Position;
use crate::memtable::Memtable;
use crate::stripes::StripedCounter;
use mutation::{ColumnValue, PartitionKey, PartitionUpdate, Row};

/// Bytes held by memtables: the whole estimate, and the part of it that is cell values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemtableUsage {
    /// The memtables' allocation estimate ([`Memtable::allocated_bytes`]).
    pub total: u64,
    /// Bytes of cell values and collection cell paths (included in `total`).
    pub values: u64,
}

impl MemtableUsage {
    /// The bytes outside cell values: structure, names and per-object overhead.
    pub fn structure(&self) -> u64 {
        self.total.saturating_sub(self.values)
    }
}

impl std::ops::Add for MemtableUsage {
    type Output = MemtableUsage;

    fn add(self, other: MemtableUsage) -> MemtableUsage {
        MemtableUsage {
            total: self.total + other.total,
            values: self.values + other.values,
        }
    }
}

impl std::iter::Sum for MemtableUsage {
    fn sum<I: Iterator<Item = MemtableUsage>>(iter: I) -> MemtableUsage {
        iter.fold(MemtableUsage::default(), |a, b| a + b)
    }
}

/// A memtable with its cell-value byte count.
#[derive(Default)]
pub struct PooledMemtable {
    memtable: Memtable,
    values: StripedCounter,
}

impl PooledMemtable {
    pub fn new() -> PooledMemtable {
        PooledMemtable::default()
    }

    /// A memtable expected to receive about `partitions` partitions.
    pub fn for_partitions(partitions: usize) -> PooledMemtable {
        PooledMemtable {
            memtable: Memtable::for_partitions(partitions),
            values: StripedCounter::default(),
        }
    }

    pub fn memtable(&self) -> &Memtable {
        &self.memtable
    }

    /// Applies a write, logged at `position` when it went through the commit log. Returns how
    /// much it grew the memtable's estimate.
    pub fn apply(
        &self,
        key: &PartitionKey,
        update: PartitionUpdate,
        position: Option<Position>,
    ) -> u64 {
        self.values.add(value_bytes(&update));
        let grown = match position {
            Some(position) => self.memtable.apply_logged(key, update, position),
            None => self.memtable.apply(key, update),
        };
        grown as u64
    }

    pub fn usage(&self) -> MemtableUsage {
        MemtableUsage {
            total: self.memtable.allocated_bytes() as u64,
            values: self.values.sum() as u64,
        }
    }
}

/// Bytes of cell values and cell paths in `update`.
fn value_bytes(update: &PartitionUpdate) -> usize {
    update
        .rows
        .iter()
        .chain(&update.static_row)
        .map(row_value_bytes)
        .sum()
}

fn row_value_bytes(row: &Row) -> usize {
    let cells = row.columns.iter().flat_map(|column| match &column.value {
        ColumnValue::Simple(cell) => std::slice::from_ref(cell),
        ColumnValue::Complex(complex) => complex.cells.as_slice(),
    });
    cells
        .map(|cell| {
            cell.value.as_ref().map_or(0, |v| v.len()) + cell.path.as_ref().map_or(0, |p| p.len())
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use mutation::{Cell, ColumnData};

    #[test]
    fn values_are_counted_inside_the_total() {
        let memtable = PooledMemtable::new();
        let mut row = Row::new(Bytes::from_static(b"c"));
        row.columns.push(ColumnData {
            name: Bytes::from_static(b"v"),
            value: ColumnValue::Simple(Cell {
                timestamp: 1,
                ttl: 0,
                local_deletion_time: i32::MAX,
                value: Some(Bytes::from(vec![7; 1000])),
                path: None,
                counter: false,
            }),
        });
        let update = PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        };
        let key = PartitionKey {
            token: 1,
            key: Bytes::from_static(b"k"),
        };
        let grown = memtable.apply(&key, update, None);
        let usage = memtable.usage();
        assert_eq!(usage.values, 1000);
        assert_eq!(grown, usage.total);
        assert!(usage.total > usage.values, "{usage:?}");
        assert_eq!(usage.structure(), usage.total - 1000);
        let doubled: MemtableUsage = [usage, usage].into_iter().sum();
        assert_eq!(doubled.values, 2000);
    }
}
