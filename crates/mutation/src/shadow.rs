//! What `nodetool garbagecollect` removes from one SSTable's version of a partition: the data
//! other sources (the table's other SSTables and its memtables) make obsolete, as Cassandra's
//! garbage collection compaction does with its tombstone option:
//! - `ROW`: data covered by another source's partition deletion, range tombstone or row
//!   deletion (its row marker, cells and its own deletions when older);
//! - `CELL`: also cells, row markers and collection elements another source holds a newer
//!   version of (a newer value or a cell tombstone).
//!
//! The SSTable's own tombstones stay unless a newer deletion elsewhere covers them; the
//! compaction's purger then drops those past `gc_grace_seconds` as in any compaction.

use crate::partition::PartitionData;
use crate::reconcile::supersedes;
use crate::{Cell, ColumnData, ColumnValue, DeletionTime, Row};

/// How finely other sources' data is compared (`nodetool garbagecollect -g`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    Row,
    Cell,
}

impl Granularity {
    /// `ROW` or `CELL`, in any case.
    pub fn from_name(name: &str) -> Option<Granularity> {
        match name.to_ascii_uppercase().as_str() {
            "ROW" => Some(Granularity::Row),
            "CELL" => Some(Granularity::Cell),
            _ => None,
        }
    }
}

/// `data` without what `others` (every other source's version, merged) makes obsolete;
/// `None` when nothing is left.
pub fn remove_shadowed(
    mut data: PartitionData,
    others: &PartitionData,
    granularity: Granularity,
) -> Option<PartitionData> {
    let outside = others.partition_deletion;
    if outside.supersedes(&data.partition_deletion) {
        data.partition_deletion = DeletionTime::LIVE;
    }
    data.static_row = data
        .static_row
        .take()
        .and_then(|row| row_without(row, outside, others.static_row.as_ref(), granularity));
    data.range_tombstones
        .retain(|t| !outside.supersedes(&t.deletion));
    let rows = std::mem::take(&mut data.rows);
    data.rows = rows
        .into_iter()
        .filter_map(|(clustering, row)| {
            let covering = others.deletion_covering(&clustering);
            let newer = others.rows.get(&clustering);
            row_without(row, covering, newer, granularity).map(|row| (clustering, row))
        })
        .collect();
    (!data.is_empty()).then_some(data)
}

/// `row` without what `covering` (the deletions over it elsewhere), the deletion of `newer`
/// (the same row elsewhere) and, at cell granularity, `newer`'s data make obsolete.
fn row_without(
    mut row: Row,
    covering: DeletionTime,
    newer: Option<&Row>,
    granularity: Granularity,
) -> Option<Row> {
    let covering = newer.map_or(covering, |n| covering.merge(n.deletion));
    if covering.supersedes(&row.deletion) {
        row.deletion = DeletionTime::LIVE;
    }
    let cells = granularity == Granularity::Cell;
    row.liveness = row.liveness.filter(|l| {
        let replaced = cells
            && newer
                .and_then(|n| n.liveness)
                .is_some_and(|n| n.supersedes(l));
        !covering.deletes(l.timestamp) && !replaced
    });
    let newer_columns = newer.filter(|_| cells).map(|n| n.columns.as_slice());
    row.columns = std::mem::take(&mut row.columns)
        .into_iter()
        .filter_map(|column| {
            let elsewhere =
                newer_columns.and_then(|columns| columns.iter().find(|c| c.name == column.name));
            column_without(column, covering, elsewhere)
        })
        .collect();
    let empty = row.liveness.is_none() && row.deletion.is_live() && row.columns.is_empty();
    (!empty).then_some(row)
}

/// A column without its cells `covering` deletes or `elsewhere` holds newer versions of.
fn column_without(
    column: ColumnData,
    covering: DeletionTime,
    elsewhere: Option<&ColumnData>,
) -> Option<ColumnData> {
    let value = match column.value {
        ColumnValue::Simple(cell) => {
            let newer = elsewhere.and_then(|c| match &c.value {
                ColumnValue::Simple(other) => Some(other),
                ColumnValue::Complex(_) => None,
            });
            ColumnValue::Simple(cell_without(cell, covering, newer.into_iter())?)
        }
        ColumnValue::Complex(mut complex) => {
            let other = elsewhere.and_then(|c| match &c.value {
                ColumnValue::Complex(other) => Some(other),
                ColumnValue::Simple(_) => None,
            });
            let covering = other.map_or(covering, |o| covering.merge(o.deletion));
            if covering.supersedes(&complex.deletion) {
                complex.deletion = DeletionTime::LIVE;
            }
            complex.cells = std::mem::take(&mut complex.cells)
                .into_iter()
                .filter_map(|cell| {
                    let same_path = other
                        .into_iter()
                        .flat_map(|o| o.cells.iter())
                        .filter(|o| o.path == cell.path)
                        .collect::<Vec<_>>();
                    cell_without(cell, covering, same_path.into_iter())
                })
                .collect();
            if complex.cells.is_empty() && complex.deletion.is_live() {
                return None;
            }
            ColumnValue::Complex(complex)
        }
    };
    Some(ColumnData {
        name: column.name,
        value,
    })
}

/// `None` when `covering` deletes `cell` or one of `newer` wins over it (and differs).
fn cell_without<'a>(
    cell: Cell,
    covering: DeletionTime,
    mut newer: impl Iterator<Item = &'a Cell>,
) -> Option<Cell> {
    let replaced = newer.any(|other| supersedes(other, &cell));
    (!covering.deletes(cell.timestamp) && !replaced).then_some(cell)
}

#[cfg(test)]
mod tests {
    use std::ops::Bound;

    use bytes::Bytes;

    use super::*;
    use crate::{LivenessInfo, RangeTombstone};

    fn deletion(at: i64) -> DeletionTime {
        DeletionTime {
            marked_for_delete_at: at,
            local_deletion_time: 100,
        }
    }

    fn row(c: &'static str, timestamp: i64, value: &'static str) -> Row {
        let mut row = Row::new(Bytes::from_static(c.as_bytes()));
        row.liveness = Some(LivenessInfo::new(timestamp));
        row.columns = vec![ColumnData::simple(
            "v",
            Cell::live(timestamp, Bytes::from_static(value.as_bytes())),
        )];
        row
    }

    fn partition(rows: Vec<Row>) -> PartitionData {
        let mut data = PartitionData::default();
        for r in rows {
            data.rows.insert(r.clustering.clone(), r);
        }
        data
    }

    fn clusterings(data: &Option<PartitionData>) -> Vec<&[u8]> {
        data.iter()
            .flat_map(|d| d.rows.keys().map(|k| k.as_ref()))
            .collect()
    }

    #[test]
    fn rows_under_newer_deletions_elsewhere_go() {
        let mine = partition(vec![row("a", 5, "x"), row("b", 5, "x"), row("c", 20, "x")]);
        let mut others = partition(vec![]);
        others.range_tombstones.push(RangeTombstone {
            start: Bound::Included(Bytes::from_static(b"a")),
            end: Bound::Included(Bytes::from_static(b"a")),
            deletion: deletion(10),
        });
        let mut deleted_row = Row::new(Bytes::from_static(b"b"));
        deleted_row.deletion = deletion(10);
        others
            .rows
            .insert(deleted_row.clustering.clone(), deleted_row);
        let kept = remove_shadowed(mine.clone(), &others, Granularity::Row);
        assert_eq!(
            clusterings(&kept),
            vec![b"c".as_ref()],
            "c is newer than both"
        );
        others.partition_deletion = deletion(30);
        assert_eq!(remove_shadowed(mine, &others, Granularity::Row), None);
    }

    #[test]
    fn newer_cells_elsewhere_count_only_at_cell_granularity() {
        let mine = partition(vec![row("a", 5, "old")]);
        let newer = partition(vec![row("a", 9, "new")]);
        let by_row = remove_shadowed(mine.clone(), &newer, Granularity::Row);
        assert_eq!(by_row, Some(mine.clone()), "ROW ignores newer cells");
        assert_eq!(
            remove_shadowed(mine.clone(), &newer, Granularity::Cell),
            None
        );
        let same = remove_shadowed(mine.clone(), &mine, Granularity::Cell);
        assert_eq!(same, Some(mine), "identical copies are both kept");
    }

    #[test]
    fn own_tombstones_stay_unless_a_newer_deletion_covers_them() {
        let mut mine = partition(vec![]);
        mine.partition_deletion = deletion(5);
        let mut tombstoned = Row::new(Bytes::from_static(b"a"));
        tombstoned.columns = vec![ColumnData::simple("v", Cell::tombstone(6, 100))];
        mine.rows.insert(tombstoned.clustering.clone(), tombstoned);
        let nothing = PartitionData::default();
        let kept = remove_shadowed(mine.clone(), &nothing, Granularity::Cell);
        assert_eq!(kept, Some(mine.clone()));
        let later = PartitionData {
            partition_deletion: deletion(7),
            ..PartitionData::default()
        };
        assert_eq!(remove_shadowed(mine, &later, Granularity::Row), None);
        assert_eq!(Granularity::from_name("cell"), Some(Granularity::Cell));
        assert_eq!(Granularity::from_name("partition"), None);
    }
}
