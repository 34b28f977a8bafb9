//! Turns reconciled partition data into what a read returns at `now`: live data only, with
//! tombstones, shadowed and expired cells removed, rows ordered and limited per the filter.
//! Tombstones and live rows met on the way are counted into [`ReadStats`]. The data is
//! consumed: the live cells move into the rows returned instead of being copied (a cell
//! decoded from an SSTable owns its buffers, which a copy would first have to share).

use crate::filter::ranges_overlap;
use crate::filter::ReadFilter;
use crate::partition::PartitionData;
use crate::{Cell, ColumnData, ColumnValue, DeletionTime, RangeTombstone, ReadStats, Row};

/// The live part of the static row, if any (taken out of `data`).
pub(crate) fn live_static_row(
    data: &mut PartitionData,
    now: i32,
    stats: &mut ReadStats,
) -> Option<Row> {
    let row = data.static_row.take()?;
    counted_live_row(row, data.partition_deletion, now, stats)
}

/// The first `limit` live rows `filter` selects, in its order.
/// The rows are taken out of `data`.
pub(crate) fn live_rows(
    data: &mut PartitionData,
    filter: &ReadFilter,
    limit: usize,
    now: i32,
    stats: &mut ReadStats,
) -> Vec<Row> {
    let rows = std::mem::take(&mut data.rows);
    let selected = rows
        .into_values()
        .filter(|row| filter.selects(&row.clustering));
    let data = &*data;
    let live = |row: Row| {
        let covering = data.deletion_covering(&row.clustering);
        counted_live_row(row, covering, now, stats)
    };
    if filter.reversed {
        selected.rev().filter_map(live).take(limit).collect()
    } else {
        selected.filter_map(live).take(limit).collect()
    }
}

/// Range tombstones that meet the read slices and are not shadowed by the partition deletion
/// (each is two tombstones read: its start and end markers).
pub(crate) fn counted_range_tombstones<'a>(
    data: &'a PartitionData,
    filter: &'a ReadFilter,
) -> impl Iterator<Item = &'a RangeTombstone> {
    data.range_tombstones.iter().filter(|t| {
        t.deletion.supersedes(&data.partition_deletion)
            && filter
                .non_empty_slices()
                .any(|(s, e)| ranges_overlap((&t.start, &t.end), (s, e)))
    })
}

/// [`live_row`], counting the row's tombstones and whether it is live into `stats`.
fn counted_live_row(
    row: Row,
    covering: DeletionTime,
    now: i32,
    stats: &mut ReadStats,
) -> Option<Row> {
    let dead_cells = dead_cells(&row, covering.merge(row.deletion), now);
    let row_deleted = row_level_deletion(&row, covering, now);
    let live = live_row(row, covering, now);
    stats.tombstones += dead_cells;
    if live.is_some() {
        stats.live_rows += 1;
    } else if dead_cells == 0 && row_deleted {
        stats.tombstones += 1;
    }
    live
}

/// Cells of `row` not shadowed by `deletion` that are tombstones or expired at `now`.
fn dead_cells(row: &Row, deletion: DeletionTime, now: i32) -> u64 {
    row.columns
        .iter()
        .map(|column| match &column.value {
            ColumnValue::Simple(cell) => dead(std::iter::once(cell), deletion, now),
            ColumnValue::Complex(c) => dead(c.cells.iter(), deletion.merge(c.deletion), now),
        })
        .sum()
}

fn dead<'a>(cells: impl Iterator<Item = &'a Cell>, deletion: DeletionTime, now: i32) -> u64 {
    cells
        .filter(|c| !deletion.deletes(c.timestamp) && !c.is_live(now))
        .count() as u64
}

/// Whether the row itself is deleted (a row deletion above `covering`) or its primary-key
/// liveness has expired.
fn row_level_deletion(row: &Row, covering: DeletionTime, now: i32) -> bool {
    let deleted = !row.deletion.is_live() && row.deletion.supersedes(&covering);
    let expired = row
        .liveness
        .is_some_and(|l| !l.is_live(now) && !covering.deletes(l.timestamp));
    deleted || expired
}

/// The live part of `row` under the deletion `covering` it, or `None` if nothing is live.
pub fn live_row(mut row: Row, covering: DeletionTime, now: i32) -> Option<Row> {
    let deletion = covering.merge(row.deletion);
    let liveness = row
        .liveness
        .filter(|l| !deletion.deletes(l.timestamp) && l.is_live(now));
    row.columns
        .retain_mut(|column| keep_live(column, deletion, now));
    if liveness.is_none() && row.columns.is_empty() {
        return None;
    }
    row.liveness = liveness;
    row.deletion = DeletionTime::LIVE;
    Some(row)
}

/// Leaves only the live part of `column` (a counter cell as its total); false when nothing
/// of it is live.
fn keep_live(column: &mut ColumnData, deletion: DeletionTime, now: i32) -> bool {
    let live = |cell: &Cell, deletion: DeletionTime| {
        cell.is_live(now) && !deletion.deletes(cell.timestamp)
    };
    match &mut column.value {
        ColumnValue::Simple(cell) if cell.is_counter() && live(cell, deletion) => {
            *cell = crate::counter_context::readable(cell);
            true
        }
        ColumnValue::Simple(cell) => live(cell, deletion),
        ColumnValue::Complex(complex) => {
            let deletion = deletion.merge(complex.deletion);
            complex.cells.retain(|c| live(c, deletion));
            complex.deletion = DeletionTime::LIVE;
            !complex.cells.is_empty()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cell, LivenessInfo, PartitionUpdate};
    use bytes::Bytes;
    use std::ops::Bound;

    use crate::testing::one_cell_row as row;

    #[test]
    fn row_deletion_shadows_marker_and_older_cells() {
        let mut r = row("a", 5);
        r.liveness = Some(LivenessInfo::new(5));
        r.columns.push(ColumnData::simple(
            "w",
            Cell::live(7, Bytes::from_static(b"y")),
        ));
        r.deletion = DeletionTime::new(6, 0);
        let live = live_row(r, DeletionTime::LIVE, 0).expect("w is newer than the deletion");
        assert!(live.liveness.is_none());
        assert_eq!(live.columns.len(), 1);
        assert_eq!(live.columns[0].name, Bytes::from_static(b"w"));
    }

    #[test]
    fn range_tombstone_and_limit_apply_in_reverse() {
        let mut data = PartitionData::default();
        data.apply(PartitionUpdate {
            rows: vec![row("a", 1), row("b", 1), row("c", 1), row("d", 1)],
            range_tombstones: vec![RangeTombstone {
                start: Bound::Excluded(Bytes::from_static(b"b")),
                end: Bound::Included(Bytes::from_static(b"c")),
                deletion: DeletionTime::new(1, 0),
            }],
            ..Default::default()
        });
        let filter = ReadFilter {
            reversed: true,
            row_limit: Some(2),
            ..ReadFilter::all()
        };
        let mut stats = ReadStats::default();
        let rows = live_rows(&mut data, &filter, 2, 0, &mut stats);
        let order: Vec<_> = rows.iter().map(|r| r.clustering.clone()).collect();
        assert_eq!(
            order,
            vec![Bytes::from_static(b"d"), Bytes::from_static(b"b")]
        );
    }

    #[test]
    fn complex_deletion_hides_older_elements_and_empty_partition_is_none() {
        let mut r = Row::new(Bytes::from_static(b"a"));
        r.columns = vec![ColumnData::complex(
            "m",
            DeletionTime::new(5, 0),
            vec![Cell::live(5, Bytes::from_static(b"x")).with_path(Bytes::from_static(b"k"))],
        )];
        let mut data = PartitionData::default();
        data.apply(PartitionUpdate {
            rows: vec![r],
            ..Default::default()
        });
        let mut stats = ReadStats::default();
        assert_eq!(
            live_rows(&mut data, &ReadFilter::all(), usize::MAX, 0, &mut stats),
            vec![]
        );
        assert_eq!(
            stats.tombstones, 0,
            "the element is shadowed, not a tombstone"
        );
    }
}
