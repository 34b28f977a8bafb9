//! What compaction removes from a merged partition, as Cassandra's compaction iterator and
//! `PurgeFunction` do:
//! - data shadowed by a partition, range, row or collection deletion is dropped;
//! - expired TTL cells become tombstones dated at their write (`local_deletion_time - ttl`);
//! - a tombstone (of any kind, or an expired row marker) is purged when it was deleted before
//!   `gc_before` **and** its timestamp is older than `horizon`, the oldest timestamp any source
//!   outside the compaction (other SSTables whose filter may hold the key, memtables holding
//!   it) may contain — otherwise it may still shadow data there and must stay;
//! - cells of a dropped column written at or before its drop go (Cassandra's
//!   `dropped_columns`), also when a column of that name was added again since;
//! - rows and partitions left empty disappear.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use mutation::partition::PartitionData;
use mutation::{Cell, ColumnData, ColumnValue, DeletionTime, Row};

/// The purge parameters of one partition.
pub struct Purger<'a> {
    pub now: i32,
    pub gc_before: i32,
    /// Finds the horizon: tombstones at or above it are kept. Asked at most once, and only when
    /// a tombstone deleted before `gc_before` turns up (it checks other sources' filters).
    find_horizon: Box<dyn Fn() -> i64 + 'a>,
    horizon: OnceCell<i64>,
    /// Dropped column names and their drop times (microseconds).
    dropped: Option<&'a BTreeMap<String, i64>>,
}

impl<'a> Purger<'a> {
    pub fn new(now: i32, gc_before: i32, find_horizon: impl Fn() -> i64 + 'a) -> Self {
        Purger {
            now,
            gc_before,
            find_horizon: Box::new(find_horizon),
            horizon: OnceCell::new(),
            dropped: None,
        }
    }

    /// The same purger, also removing the cells of the `dropped` columns (name to drop time)
    /// written at or before their drop.
    pub fn with_dropped(self, dropped: &'a BTreeMap<String, i64>) -> Self {
        Purger {
            dropped: (!dropped.is_empty()).then_some(dropped),
            ..self
        }
    }

    /// When `name` is a dropped column, the time (microseconds) at or before which its cells
    /// were dropped.
    fn dropped_at(&self, name: &[u8]) -> Option<i64> {
        let dropped = self.dropped?;
        dropped.get(std::str::from_utf8(name).ok()?).copied()
    }

    fn purgeable(&self, timestamp: i64, local_deletion_time: i32) -> bool {
        local_deletion_time < self.gc_before
            && timestamp < *self.horizon.get_or_init(|| (self.find_horizon)())
    }

    fn purgeable_deletion(&self, deletion: DeletionTime) -> bool {
        !deletion.is_live()
            && self.purgeable(deletion.marked_for_delete_at, deletion.local_deletion_time)
    }

    /// Purges `data`; `None` when nothing is left to write.
    pub fn partition(&self, mut data: PartitionData) -> Option<PartitionData> {
        // Only the deletions of the partition as read decide what its rows lose.
        let original = PartitionData {
            partition_deletion: data.partition_deletion,
            range_tombstones: data.range_tombstones.clone(),
            ..PartitionData::default()
        };
        let partition_deletion = data.partition_deletion;
        data.range_tombstones.retain(|t| {
            t.deletion.supersedes(&partition_deletion) && !self.purgeable_deletion(t.deletion)
        });
        if self.purgeable_deletion(data.partition_deletion) {
            data.partition_deletion = DeletionTime::LIVE;
        }
        data.static_row = data
            .static_row
            .take()
            .and_then(|row| self.row(row, original.partition_deletion));
        let rows = std::mem::take(&mut data.rows);
        data.rows = rows
            .into_iter()
            .filter_map(|(clustering, row)| {
                let covering = original.deletion_covering(&clustering);
                self.row(row, covering).map(|row| (clustering, row))
            })
            .collect();
        let empty = data.partition_deletion.is_live()
            && data.static_row.is_none()
            && data.rows.is_empty()
            && data.range_tombstones.is_empty();
        (!empty).then_some(data)
    }

    /// Purges one row under the deletion `covering` it from outside.
    fn row(&self, mut row: Row, covering: DeletionTime) -> Option<Row> {
        let deletion = covering.merge(row.deletion);
        if !row.deletion.supersedes(&covering) || self.purgeable_deletion(row.deletion) {
            row.deletion = DeletionTime::LIVE;
        }
        row.liveness = row.liveness.filter(|l| {
            let expired_purgeable =
                !l.is_live(self.now) && self.purgeable(l.timestamp, l.local_expiration_time);
            !deletion.deletes(l.timestamp) && !expired_purgeable
        });
        row.columns = std::mem::take(&mut row.columns)
            .into_iter()
            .filter_map(|column| self.column(column, deletion))
            .collect();
        let empty = row.liveness.is_none() && row.deletion.is_live() && row.columns.is_empty();
        (!empty).then_some(row)
    }

    fn column(&self, column: ColumnData, deletion: DeletionTime) -> Option<ColumnData> {
        // A drop deletes the column's cells written up to its time, as a deletion would.
        let deletion = match self.dropped_at(&column.name) {
            Some(at) => deletion.merge(DeletionTime::new(at, i32::MAX)),
            None => deletion,
        };
        let value = match column.value {
            ColumnValue::Simple(cell) => ColumnValue::Simple(self.cell(cell, deletion)?),
            ColumnValue::Complex(mut complex) => {
                let covering = deletion.merge(complex.deletion);
                if !complex.deletion.supersedes(&deletion)
                    || self.purgeable_deletion(complex.deletion)
                {
                    complex.deletion = DeletionTime::LIVE;
                }
                complex.cells = std::mem::take(&mut complex.cells)
                    .into_iter()
                    .filter_map(|cell| self.cell(cell, covering))
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

    fn cell(&self, cell: Cell, deletion: DeletionTime) -> Option<Cell> {
        if deletion.deletes(cell.timestamp) {
            return None;
        }
        let cell = if cell.is_expiring() && !cell.is_live(self.now) {
            Cell {
                ttl: 0,
                local_deletion_time: cell.local_deletion_time.saturating_sub(cell.ttl),
                value: None,
                ..cell
            }
        } else {
            cell
        };
        let purge = cell.is_tombstone() && self.purgeable(cell.timestamp, cell.local_deletion_time);
        (!purge).then_some(cell)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use mutation::{LivenessInfo, PartitionUpdate, RangeTombstone};
    use std::ops::Bound;

    const NOW: i32 = 1_000;

    fn purger(horizon: i64) -> Purger<'static> {
        Purger::new(NOW, 500, move || horizon)
    }

    fn row(c: &'static str, cells: Vec<Cell>) -> Row {
        let mut row = Row::new(Bytes::from_static(c.as_bytes()));
        row.columns = cells
            .into_iter()
            .enumerate()
            .map(|(i, cell)| ColumnData::simple(format!("c{i}"), cell))
            .collect();
        row
    }

    fn data(update: PartitionUpdate) -> PartitionData {
        let mut data = PartitionData::default();
        data.apply(update);
        data
    }

    #[test]
    fn old_tombstones_go_unless_older_data_may_survive_elsewhere() {
        let update = PartitionUpdate {
            rows: vec![row(
                "a",
                vec![
                    Cell::tombstone(10, 100),
                    Cell::live(5, Bytes::from_static(b"v")),
                ],
            )],
            ..Default::default()
        };
        let purged = purger(i64::MAX)
            .partition(data(update.clone()))
            .expect("live cell stays");
        assert_eq!(purged.rows[&Bytes::from_static(b"a")].columns.len(), 1);
        let kept = purger(3).partition(data(update)).expect("kept");
        assert_eq!(
            kept.rows[&Bytes::from_static(b"a")].columns.len(),
            2,
            "horizon 3 < ts 10"
        );
    }

    #[test]
    fn the_horizon_is_sought_only_for_tombstones_old_enough_to_purge() {
        let asked = std::cell::Cell::new(0);
        let live = PartitionUpdate {
            rows: vec![row("a", vec![Cell::live(5, Bytes::from_static(b"v"))])],
            ..Default::default()
        };
        let young = PartitionUpdate {
            rows: vec![row("a", vec![Cell::tombstone(10, 900)])],
            ..Default::default()
        };
        let count = || {
            asked.set(asked.get() + 1);
            i64::MAX
        };
        assert!(Purger::new(NOW, 500, count).partition(data(live)).is_some());
        assert!(Purger::new(NOW, 500, count)
            .partition(data(young))
            .is_some());
        assert_eq!(asked.get(), 0);
        let old = PartitionUpdate {
            rows: vec![row(
                "a",
                vec![Cell::tombstone(10, 100), Cell::tombstone(11, 100)],
            )],
            ..Default::default()
        };
        assert!(Purger::new(NOW, 500, count).partition(data(old)).is_none());
        assert_eq!(asked.get(), 1, "asked once per partition");
    }

    #[test]
    fn young_tombstones_stay_and_shadowed_data_goes() {
        let mut r = row("a", vec![Cell::live(5, Bytes::from_static(b"old"))]);
        r.liveness = Some(LivenessInfo::new(5));
        let update = PartitionUpdate {
            rows: vec![r, row("b", vec![Cell::live(9, Bytes::from_static(b"new"))])],
            range_tombstones: vec![RangeTombstone {
                start: Bound::Unbounded,
                end: Bound::Unbounded,
                deletion: DeletionTime::new(7, 900),
            }],
            ..Default::default()
        };
        let purged = purger(i64::MAX)
            .partition(data(update))
            .expect("b and the tombstone");
        assert_eq!(purged.rows.len(), 1);
        assert_eq!(
            purged.range_tombstones.len(),
            1,
            "deleted at 900 >= gc_before 500"
        );
    }

    #[test]
    fn expired_cells_become_tombstones_then_vanish() {
        let young = Cell::expiring(1, 100, 850, Bytes::from_static(b"x"));
        let old = Cell::expiring(2, 100, 300, Bytes::from_static(b"y"));
        let update = PartitionUpdate {
            rows: vec![row("a", vec![young, old])],
            ..Default::default()
        };
        let purged = purger(i64::MAX)
            .partition(data(update))
            .expect("young tombstone");
        let columns = &purged.rows[&Bytes::from_static(b"a")].columns;
        assert_eq!(columns.len(), 1);
        assert_eq!(
            columns[0].value,
            ColumnValue::Simple(Cell::tombstone(1, 850))
        );
        let deleted = PartitionUpdate {
            partition_deletion: DeletionTime::new(3, 10),
            ..Default::default()
        };
        assert_eq!(purger(i64::MAX).partition(data(deleted)), None);
    }

    /// A collection of a column dropped at 10: its deletion at 8 and its cells up to 10 go,
    /// a cell written at 11 (after the column was added again) stays.
    #[test]
    fn dropped_collections_lose_what_was_written_before_the_drop() {
        let cell = |ts: i64, path: &'static [u8]| Cell {
            path: Some(Bytes::from_static(path)),
            ..Cell::live(ts, Bytes::from_static(b"v"))
        };
        let mut r = Row::new(Bytes::from_static(b"a"));
        r.columns = vec![ColumnData::complex(
            "s",
            DeletionTime::new(8, 900),
            vec![cell(10, b"1"), cell(11, b"2")],
        )];
        let update = PartitionUpdate {
            rows: vec![r],
            ..Default::default()
        };
        let dropped = BTreeMap::from([("s".to_string(), 10)]);
        let purged = purger(i64::MAX)
            .with_dropped(&dropped)
            .partition(data(update))
            .expect("the cell written after the drop");
        let columns = &purged.rows[&Bytes::from_static(b"a")].columns;
        assert_eq!(
            columns,
            &vec![ColumnData::complex(
                "s",
                DeletionTime::LIVE,
                vec![cell(11, b"2")]
            )]
        );
    }
}
