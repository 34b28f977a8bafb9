//! Unresolved partition state — rows, tombstones and deletions still present — which every
//! data source (memtable now, sorted runs later) produces and which merges across sources.

use bytes::Bytes;

use crate::filter::ranges_overlap;
use crate::filter::ReadFilter;
use crate::reconcile::{merge_row, normalize_row};
use crate::row_map::RowMap;
use crate::{DeletionTime, PartitionUpdate, RangeTombstone, Row};

/// One source's answer to a read capped at a number of rows: its data and, when it stopped at
/// the cap with rows left to read, the clustering of the last row it returned (rows after it
/// in read order were not read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceRows {
    pub data: PartitionData,
    pub stopped_at: Option<Bytes>,
}

/// The clustering of the last row read into `rows` (the greatest, or the smallest when
/// reading in reverse).
pub fn last_read(rows: &RowMap, reversed: bool) -> Option<Bytes> {
    let last = if reversed {
        rows.keys().next()
    } else {
        rows.keys().next_back()
    };
    last.cloned()
}

/// The rows of `rows` that `filter` selects, made rows by `to_row`, at most `cap` of them (the
/// first in read order), and where the read stopped when rows were left.
pub fn select_rows<V, E>(
    rows: &RowMap<V>,
    filter: &ReadFilter,
    cap: usize,
    to_row: impl Fn(&V) -> Result<Row, E>,
) -> Result<(RowMap, Option<Bytes>), E> {
    let mut selected = RowMap::new();
    for (start, end) in filter.slices_in_read_order() {
        let range = rows.range((start.clone(), end.clone()));
        let in_order: Box<dyn Iterator<Item = (&Bytes, &V)>> = if filter.reversed {
            Box::new(range.rev())
        } else {
            Box::new(range)
        };
        for (clustering, row) in in_order {
            if selected.len() >= cap {
                let stopped_at = last_read(&selected, filter.reversed);
                return Ok((selected, stopped_at));
            }
            selected.insert(clustering.clone(), to_row(row)?);
        }
    }
    Ok((selected, None))
}

/// All the versions of a partition's data known to one source, reconciled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionData {
    pub partition_deletion: DeletionTime,
    pub static_row: Option<Row>,
    pub rows: RowMap,
    pub range_tombstones: Vec<RangeTombstone>,
}

impl Default for PartitionData {
    fn default() -> Self {
        PartitionData {
            partition_deletion: DeletionTime::LIVE,
            static_row: None,
            rows: RowMap::new(),
            range_tombstones: Vec::new(),
        }
    }
}

impl PartitionData {
    /// Reconciles an update into this partition.
    pub fn apply(&mut self, update: PartitionUpdate) {
        self.partition_deletion = self.partition_deletion.merge(update.partition_deletion);
        if let Some(row) = update.static_row {
            self.add_static_row(normalize_row(row));
        }
        for row in update.rows {
            self.add_row(normalize_row(row));
        }
        for tombstone in update.range_tombstones {
            self.add_range_tombstone(tombstone);
        }
    }

    /// Reconciles another source's version of this partition into this one.
    pub fn merge(&mut self, other: PartitionData) {
        self.partition_deletion = self.partition_deletion.merge(other.partition_deletion);
        if let Some(row) = other.static_row {
            self.add_static_row(row);
        }
        for row in other.rows.into_values() {
            self.add_row(row);
        }
        for tombstone in other.range_tombstones {
            self.add_range_tombstone(tombstone);
        }
    }

    /// A copy restricted to what `filter` can return (all tombstones are kept), holding at
    /// most `cap` rows: the first ones in read order.
    pub fn select(&self, filter: &ReadFilter, cap: usize) -> SourceRows {
        let (rows, stopped_at) = select_rows(&self.rows, filter, cap, |row| Ok(row.clone()))
            .unwrap_or_else(|never: std::convert::Infallible| match never {});
        SourceRows {
            data: PartitionData {
                rows,
                ..self.head_for(filter.include_static)
            },
            stopped_at,
        }
    }

    /// A copy of the partition deletion, the static row if `include_static`, and the range
    /// tombstones, without rows.
    pub fn head_for(&self, include_static: bool) -> PartitionData {
        PartitionData {
            partition_deletion: self.partition_deletion,
            static_row: self.static_row.clone().filter(|_| include_static),
            rows: RowMap::new(),
            range_tombstones: self.range_tombstones.clone(),
        }
    }

    /// Only what `filter` selects: its rows, the static row if asked, and the range tombstones
    /// meeting its slices (the partition deletion stays). Sources disagree on the rest — a
    /// memtable returns every range tombstone, an SSTable those it met — so answers compared
    /// across replicas are restricted first.
    pub fn restricted(self, filter: &ReadFilter) -> PartitionData {
        let overlaps = |t: &RangeTombstone| {
            filter
                .non_empty_slices()
                .any(|(s, e)| ranges_overlap((&t.start, &t.end), (s, e)))
        };
        PartitionData {
            partition_deletion: self.partition_deletion,
            static_row: self.static_row.filter(|_| filter.include_static),
            rows: self
                .rows
                .into_iter()
                .filter(|(clustering, _)| filter.selects(clustering))
                .collect(),
            range_tombstones: self.range_tombstones.into_iter().filter(overlaps).collect(),
        }
    }

    /// Whether there is nothing at all: no deletion, row or tombstone.
    pub fn is_empty(&self) -> bool {
        self.partition_deletion.is_live()
            && self.static_row.is_none()
            && self.rows.is_empty()
            && self.range_tombstones.is_empty()
    }

    /// The strongest deletion applying to the row with this clustering (excluding its own).
    pub fn deletion_covering(&self, clustering: &[u8]) -> DeletionTime {
        self.range_tombstones
            .iter()
            .filter(|t| t.covers(clustering))
            .fold(self.partition_deletion, |acc, t| acc.merge(t.deletion))
    }

    fn add_static_row(&mut self, row: Row) {
        match &mut self.static_row {
            Some(existing) => merge_row(existing, row),
            None => self.static_row = Some(row),
        }
    }

    fn add_row(&mut self, row: Row) {
        match self.rows.get_mut(&row.clustering) {
            Some(existing) => merge_row(existing, row),
            None => {
                self.rows.insert(row.clustering.clone(), row);
            }
        }
    }

    fn add_range_tombstone(&mut self, tombstone: RangeTombstone) {
        let same_range = self
            .range_tombstones
            .iter_mut()
            .find(|t| t.start == tombstone.start && t.end == tombstone.end);
        match same_range {
            Some(existing) => existing.deletion = existing.deletion.merge(tombstone.deletion),
            None => self.range_tombstones.push(tombstone),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use std::ops::Bound;

    use crate::testing::one_cell_row as row;

    #[test]
    fn apply_merges_rows_and_dedups_range_tombstones() {
        let rt = |ts| RangeTombstone {
            start: Bound::Included(Bytes::from_static(b"a")),
            end: Bound::Unbounded,
            deletion: DeletionTime::new(ts, 0),
        };
        let mut data = PartitionData::default();
        data.apply(PartitionUpdate {
            rows: vec![row("a", 1), row("b", 1)],
            range_tombstones: vec![rt(1)],
            ..Default::default()
        });
        data.apply(PartitionUpdate {
            rows: vec![row("a", 2)],
            range_tombstones: vec![rt(3)],
            ..Default::default()
        });
        assert_eq!(data.rows.len(), 2);
        assert_eq!(data.range_tombstones.len(), 1);
        assert_eq!(data.deletion_covering(b"a"), DeletionTime::new(3, 0));
        assert_eq!(
            data.rows[&Bytes::from_static(b"a")].columns[0],
            row("a", 2).columns[0]
        );
    }

    #[test]
    fn select_keeps_only_sliced_rows_and_skips_inverted_slices() {
        let mut data = PartitionData::default();
        data.apply(PartitionUpdate {
            static_row: Some(row("", 1)),
            rows: vec![row("a", 1), row("b", 1), row("c", 1)],
            ..Default::default()
        });
        let filter = ReadFilter {
            slices: vec![
                (Bound::Included(Bytes::from_static(b"b")), Bound::Unbounded),
                (
                    Bound::Excluded(Bytes::from_static(b"z")),
                    Bound::Excluded(Bytes::from_static(b"a")),
                ),
            ],
            include_static: false,
            ..ReadFilter::all()
        };
        let selected = data.select(&filter, usize::MAX);
        assert_eq!(selected.data.rows.len(), 2);
        assert!(selected.data.static_row.is_none());
        assert_eq!(selected.stopped_at, None);
    }

    #[test]
    fn select_stops_at_the_cap_in_read_order() {
        let mut data = PartitionData::default();
        data.apply(PartitionUpdate {
            rows: vec![row("a", 1), row("b", 1), row("c", 1), row("d", 1)],
            ..Default::default()
        });
        let forward = data.select(&ReadFilter::all(), 2);
        let keys: Vec<_> = forward.data.rows.keys().cloned().collect();
        assert_eq!(
            keys,
            vec![Bytes::from_static(b"a"), Bytes::from_static(b"b")]
        );
        assert_eq!(forward.stopped_at, Some(Bytes::from_static(b"b")));
        let reversed = ReadFilter {
            reversed: true,
            ..ReadFilter::all()
        };
        let backward = data.select(&reversed, 3);
        let keys: Vec<_> = backward.data.rows.keys().cloned().collect();
        assert_eq!(keys.len(), 3);
        assert_eq!(backward.stopped_at, Some(Bytes::from_static(b"b")));
        assert_eq!(data.select(&reversed, 4).stopped_at, None);
    }
}
