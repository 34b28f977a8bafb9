//! When a point read may stop consulting SSTables (Cassandra's timestamp-ordered read of
//! single-partition queries, "reduce SSTables touched"). SSTables are read in decreasing order
//! of their maximum timestamp; before each one, the data merged so far is checked: if it already
//! wins over anything written at or before that SSTable's maximum timestamp, neither that
//! SSTable nor any later one can change the result.

use bytes::Bytes;
use std::ops::Bound;

use crate::filter::ReadFilter;
use mutation::partition::PartitionData;
use mutation::{ColumnValue, Row};

/// Whether nothing written at or before `max_timestamp` can change what `filter` reads from
/// `merged`: a partition deletion covers it, or — for reads of named rows with known columns
/// (see [`ReadFilter::columns`]) — every requested row is complete. Never while `merged` holds
/// counter cells: older shards merge into them whatever their timestamps (Cassandra does not
/// read counters in timestamp order either).
pub(super) fn complete(merged: &PartitionData, filter: &ReadFilter, max_timestamp: i64) -> bool {
    covered(merged, filter, max_timestamp) && !has_counter_cells(merged)
}

fn covered(merged: &PartitionData, filter: &ReadFilter, max_timestamp: i64) -> bool {
    if merged.partition_deletion.deletes(max_timestamp) {
        return true;
    }
    let Some(columns) = filter.columns.as_deref() else {
        return false;
    };
    if filter.include_static {
        return false;
    }
    let mut rows = filter.non_empty_slices().map(|slice| match slice {
        (Bound::Included(start), Bound::Included(end)) if start == end => Some(start),
        _ => None,
    });
    rows.all(|row| row.is_some_and(|c| row_complete(merged, c, columns, max_timestamp)))
}

fn has_counter_cells(merged: &PartitionData) -> bool {
    let rows = merged.static_row.iter().chain(merged.rows.values());
    rows.flat_map(|r| &r.columns)
        .any(|c| matches!(&c.value, ColumnValue::Simple(cell) if cell.is_counter()))
}

/// Cassandra's `canRemoveRow`, plus deletions: the row is deleted above `max_timestamp`, or its
/// row marker and every requested column were written after it.
fn row_complete(
    merged: &PartitionData,
    clustering: &Bytes,
    columns: &[Bytes],
    max_timestamp: i64,
) -> bool {
    let covering = merged.deletion_covering(clustering);
    let Some(row) = merged.rows.get(clustering) else {
        return covering.deletes(max_timestamp);
    };
    if covering.merge(row.deletion).deletes(max_timestamp) {
        return true;
    }
    let marker_newer = row.liveness.is_some_and(|l| l.timestamp > max_timestamp);
    marker_newer && columns.iter().all(|c| column_newer(row, c, max_timestamp))
}

/// Whether the row's version of `column` supersedes anything older than `max_timestamp`.
fn column_newer(row: &Row, column: &[u8], max_timestamp: i64) -> bool {
    match row.column(column).map(|c| &c.value) {
        Some(ColumnValue::Simple(cell)) => cell.timestamp > max_timestamp,
        Some(ColumnValue::Complex(complex)) => complex.deletion.deletes(max_timestamp),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutation::{Cell, ColumnData, DeletionTime, LivenessInfo, PartitionUpdate};

    fn b(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    fn data(marker: i64, v: i64) -> PartitionData {
        let mut row = Row::new(b("c"));
        row.liveness = Some(LivenessInfo::new(marker));
        row.columns = vec![ColumnData::simple("v", Cell::live(v, b("x")))];
        let mut data = PartitionData::default();
        data.apply(PartitionUpdate {
            rows: vec![row],
            ..Default::default()
        });
        data
    }

    fn named(columns: Option<Vec<Bytes>>) -> ReadFilter {
        ReadFilter {
            include_static: false,
            columns: columns.map(Into::into),
            ..ReadFilter::row(b("c"))
        }
    }

    #[test]
    fn named_rows_stop_when_marker_and_columns_are_newer() {
        let filter = named(Some(vec![b("v")]));
        assert!(complete(&data(10, 10), &filter, 9));
        assert!(!complete(&data(10, 10), &filter, 10), "equal may tie");
        assert!(!complete(&data(10, 5), &filter, 9), "v is older");
        assert!(!complete(&data(10, 10), &named(Some(vec![b("w")])), 9));
        assert!(!complete(&data(10, 10), &named(None), 9), "columns unknown");
        let slice = ReadFilter {
            slices: vec![(Bound::Included(b("a")), Bound::Included(b("c")))],
            ..filter
        };
        assert!(!complete(&data(10, 10), &slice, 9), "not a named row");
    }

    #[test]
    fn deletions_above_the_sstable_end_any_read() {
        let mut deleted = data(1, 1);
        deleted.partition_deletion = DeletionTime::new(20, 0);
        assert!(complete(&deleted, &ReadFilter::all(), 20));
        assert!(!complete(&deleted, &ReadFilter::all(), 21));
        let mut row_deleted = PartitionData::default();
        let mut row = Row::new(b("c"));
        row.deletion = DeletionTime::new(30, 0);
        row_deleted.rows.insert(b("c"), row);
        assert!(complete(&row_deleted, &named(Some(vec![b("v")])), 25));
        assert!(!complete(
            &PartitionData::default(),
            &named(Some(vec![])),
            25
        ));
    }
}
