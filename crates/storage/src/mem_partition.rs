//! A memtable's partition. Its rows are kept in the compact row encoding SSTables store, in
//! the memtable's arena: about a sixth of a decoded row's memory (a `standard1` row: 206
//! bytes against some 1,250 in structures and in the request buffer its values pointed into),
//! and a flush copies them as they are instead of encoding them and then freeing each
//! structure from another thread. The rest of the partition (its deletion,
//! static row and range tombstones) is rare and stays decoded, allocated only when present.

use std::mem::size_of;

use mutation::codec::put_row;
use mutation::{Cell, ColumnData, ColumnValue, PartitionUpdate, Row};

use crate::arena::Arena;
use crate::error::Result;
use crate::filter::ReadFilter;
use crate::sstable::records::{EncodedRow, PartitionRecords, RowRecord};
use mutation::partition::{select_rows, PartitionData, SourceRows};
use mutation::reconcile::{merge_row, normalize_row};
use mutation::row_map::RowMap;

/// The memory of a row besides its encoding: its slot in the row map (clustering and row
/// pointer), sized to one row for the first, then doubling, so half again on average.
pub(crate) const ROW_OVERHEAD: usize =
    (std::mem::size_of::<bytes::Bytes>() + std::mem::size_of::<EncodedRow>()) * 3 / 2;

static NO_HEAD: PartitionData = PartitionData {
    partition_deletion: mutation::DeletionTime::LIVE,
    static_row: None,
    rows: RowMap::new(),
    range_tombstones: Vec::new(),
};

#[derive(Default)]
pub(crate) struct MemPartition {
    rows: RowMap<EncodedRow>,
    /// The partition deletion, static row and range tombstones (no rows), if any was written.
    head: Option<Box<PartitionData>>,
}

impl MemPartition {
    /// Reconciles `update` into the partition, its rows encoded into `arena`; returns the
    /// bytes it grew by (an estimate, which counts the whole of an overwritten row again: its
    /// old encoding stays in the arena).
    pub fn apply(&mut self, mut update: PartitionUpdate, arena: &Arena) -> usize {
        let rows = std::mem::take(&mut update.rows);
        let mut grown = 0;
        if has_head(&update) {
            grown += head_size(&update);
            self.head.get_or_insert_default().apply(update);
        }
        for row in rows {
            grown += self.add_row(normalize_row(row), arena);
        }
        grown
    }

    #[expect(
        clippy::expect_used,
        reason = "memtable rows were encoded by this memtable; decoding them cannot fail"
    )]
    fn add_row(&mut self, row: Row, arena: &Arena) -> usize {
        let Some(existing) = self.rows.get_mut(&row.clustering) else {
            let encoded = encode(&row, arena);
            let grown = ROW_OVERHEAD + row.clustering.len() + encoded.len();
            // A copy: the clustering would otherwise keep the request buffer it points into.
            let clustering = bytes::Bytes::copy_from_slice(&row.clustering);
            self.rows.insert(clustering, encoded);
            return grown;
        };
        let mut merged = existing
            .to_row()
            .expect("a memtable row decodes: the memtable encoded it");
        merge_row(&mut merged, row);
        *existing = encode(&merged, arena);
        existing.len()
    }

    /// A copy restricted to what `filter` can return (all tombstones are kept), holding at
    /// most `cap` rows: the first ones in read order.
    pub fn select(&self, filter: &ReadFilter, cap: usize) -> Result<SourceRows> {
        let (rows, stopped_at) = select_rows(&self.rows, filter, cap, RowRecord::to_row)?;
        let head = self.head().head_for(filter.include_static);
        Ok(SourceRows {
            data: PartitionData { rows, ..head },
            stopped_at,
        })
    }
}

impl PartitionRecords for MemPartition {
    type Row = EncodedRow;

    fn head(&self) -> &PartitionData {
        self.head.as_deref().unwrap_or(&NO_HEAD)
    }

    fn rows(&self) -> &RowMap<EncodedRow> {
        &self.rows
    }
}

/// `row` encoded into `arena` (encoded first in a buffer kept per thread).
fn encode(row: &Row, arena: &Arena) -> EncodedRow {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with_borrow_mut(|scratch| {
        scratch.clear();
        put_row(scratch, row);
        arena.copy(scratch)
    })
}

/// Whether `update` writes more than rows.
fn has_head(update: &PartitionUpdate) -> bool {
    !update.partition_deletion.is_live()
        || update.static_row.is_some()
        || !update.range_tombstones.is_empty()
}

/// About what `update`'s deletion, static row and range tombstones take in memory (they stay
/// decoded: a static row's columns and the bytes its cells point into).
fn head_size(update: &PartitionUpdate) -> usize {
    let column = |c: &ColumnData| {
        let cells = match &c.value {
            ColumnValue::Simple(cell) => cell_bytes(cell),
            ColumnValue::Complex(complex) => complex.cells.iter().map(cell_bytes).sum(),
        };
        size_of::<ColumnData>() + c.name.len() + cells
    };
    let static_row = update.static_row.iter().map(|row| {
        size_of::<Row>() + row.clustering.len() + row.columns.iter().map(column).sum::<usize>()
    });
    let tombstones = update.range_tombstones.len() * size_of::<mutation::RangeTombstone>() * 3 / 2;
    size_of::<PartitionData>() + static_row.sum::<usize>() + tombstones
}

/// A cell's entry in a complex column's list and the bytes its value and path hold.
fn cell_bytes(cell: &Cell) -> usize {
    size_of::<Cell>()
        + cell.value.as_ref().map_or(0, |v| v.len())
        + cell.path.as_ref().map_or(0, |p| p.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use mutation::{Cell, ColumnData, DeletionTime};

    fn row(clustering: &'static str, column: &'static str, ts: i64) -> Row {
        let mut row = Row::new(Bytes::from_static(clustering.as_bytes()));
        row.columns = vec![ColumnData::simple(
            column,
            Cell::live(ts, Bytes::from_static(b"v")),
        )];
        row
    }

    fn update(rows: Vec<Row>) -> PartitionUpdate {
        PartitionUpdate {
            rows,
            ..PartitionUpdate::default()
        }
    }

    #[test]
    fn rows_written_twice_reconcile_and_read_back_decoded() {
        let (mut partition, arena) = (MemPartition::default(), Arena::default());
        assert!(partition.apply(update(vec![row("b", "x", 1), row("a", "x", 1)]), &arena) > 0);
        partition.apply(update(vec![row("b", "y", 2), row("b", "x", 0)]), &arena);
        let read = partition
            .select(&ReadFilter::all(), usize::MAX)
            .expect("select");
        let mut expected = row("b", "x", 1);
        merge_row(&mut expected, row("b", "y", 2));
        assert_eq!(read.data.rows.len(), 2);
        assert_eq!(read.data.rows[&Bytes::from_static(b"b")], expected);
        assert!(partition.head.is_none(), "no head without a deletion");
        let capped = partition.select(&ReadFilter::all(), 1).expect("select");
        assert_eq!(capped.stopped_at, Some(Bytes::from_static(b"a")));
    }

    #[test]
    fn the_head_holds_what_is_not_a_row() {
        let (mut partition, arena) = (MemPartition::default(), Arena::default());
        let mut deletion = update(vec![row("a", "x", 5)]);
        deletion.partition_deletion = DeletionTime::new(3, 9);
        deletion.static_row = Some(row("", "s", 4));
        partition.apply(deletion, &arena);
        let head = partition.head();
        assert_eq!(head.partition_deletion, DeletionTime::new(3, 9));
        assert_eq!(head.static_row, Some(row("", "s", 4)));
        assert!(head.rows.is_empty());
        let mut no_static = ReadFilter::all();
        no_static.include_static = false;
        let read = partition.select(&no_static, usize::MAX).expect("select");
        assert_eq!(read.data.static_row, None);
        assert_eq!(read.data.partition_deletion, DeletionTime::new(3, 9));
        assert_eq!(read.data.rows.len(), 1);
    }
}
