//! Read repair's diff: what a replica lacks compared with the data reconciled from every
//! replica's answer. The reconciled data wins over each answer it was merged from, so wherever
//! it differs from the replica's version (a partition deletion, a row marker or deletion, a cell,
//! a complex column's deletion, a range tombstone) the replica needs the reconciled version.

use crate::partition::PartitionData;
use crate::{Cell, ColumnData, ColumnValue, ComplexColumn, DeletionTime, PartitionUpdate, Row};

impl PartitionData {
    /// What a replica that answered `replica` lacks compared with `self`, the data reconciled
    /// from every answer (`replica` included): applied to the replica, its data reconciles to
    /// `self`. `None` when nothing is missing.
    pub fn missing_in(&self, replica: &PartitionData) -> Option<PartitionUpdate> {
        let partition_deletion = differing(self.partition_deletion, replica.partition_deletion);
        let static_row = self
            .static_row
            .as_ref()
            .and_then(|row| row_missing(row, replica.static_row.as_ref()));
        let rows = self
            .rows
            .values()
            .filter_map(|row| row_missing(row, replica.rows.get(&row.clustering)))
            .collect();
        let range_tombstones = self
            .range_tombstones
            .iter()
            .filter(|mine| !replica.range_tombstones.contains(mine))
            .cloned()
            .collect();
        let update = PartitionUpdate {
            partition_deletion,
            static_row,
            rows,
            range_tombstones,
        };
        let empty = update.partition_deletion.is_live()
            && update.static_row.is_none()
            && update.rows.is_empty()
            && update.range_tombstones.is_empty();
        (!empty).then_some(update)
    }
}

/// `mine` where the replica holds another deletion, else no deletion.
fn differing(mine: DeletionTime, theirs: DeletionTime) -> DeletionTime {
    if mine == theirs {
        DeletionTime::LIVE
    } else {
        mine
    }
}

/// The parts of `mine` the replica's version `theirs` of the row lacks.
fn row_missing(mine: &Row, theirs: Option<&Row>) -> Option<Row> {
    let Some(theirs) = theirs else {
        return Some(mine.clone());
    };
    let columns: Vec<ColumnData> = mine
        .columns
        .iter()
        .filter_map(|column| column_missing(column, theirs.column(&column.name)))
        .collect();
    let row = Row {
        clustering: mine.clustering.clone(),
        liveness: mine.liveness.filter(|l| theirs.liveness != Some(*l)),
        deletion: differing(mine.deletion, theirs.deletion),
        columns,
    };
    let empty = row.liveness.is_none() && row.deletion.is_live() && row.columns.is_empty();
    (!empty).then_some(row)
}

fn column_missing(mine: &ColumnData, theirs: Option<&ColumnData>) -> Option<ColumnData> {
    let value = match (&mine.value, theirs.map(|c| &c.value)) {
        (ColumnValue::Simple(cell), Some(ColumnValue::Simple(other))) if cell == other => None,
        (ColumnValue::Complex(complex), Some(ColumnValue::Complex(other))) => {
            complex_missing(complex, other).map(ColumnValue::Complex)
        }
        (value, _) => Some(value.clone()),
    }?;
    Some(ColumnData {
        name: mine.name.clone(),
        value,
    })
}

fn complex_missing(mine: &ComplexColumn, theirs: &ComplexColumn) -> Option<ComplexColumn> {
    let cells: Vec<Cell> = mine
        .cells
        .iter()
        .filter(|cell| !theirs.cells.contains(cell))
        .cloned()
        .collect();
    let deletion = differing(mine.deletion, theirs.deletion);
    (!cells.is_empty() || !deletion.is_live()).then_some(ComplexColumn { deletion, cells })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::arb_partition_data;
    use proptest::prelude::*;

    /// Range tombstones sorted, so data equal up to their order compares equal.
    fn canonical(mut data: PartitionData) -> PartitionData {
        data.range_tombstones.sort_by_key(|t| format!("{t:?}"));
        data
    }

    proptest! {
        #[test]
        fn applying_the_diff_makes_the_replica_reconcile_to_the_merge(
            replica in arb_partition_data(),
            other in arb_partition_data(),
        ) {
            let mut reconciled = replica.clone();
            reconciled.merge(other);
            let mut repaired = replica.clone();
            if let Some(diff) = reconciled.missing_in(&replica) {
                repaired.apply(diff);
            }
            prop_assert_eq!(canonical(repaired), canonical(reconciled.clone()));
            prop_assert_eq!(reconciled.missing_in(&reconciled), None);
        }
    }

    #[test]
    fn a_replica_missing_a_newer_cell_gets_only_that_cell() {
        let cell = |ts| ColumnData::simple("v", Cell::live(ts, bytes::Bytes::from_static(b"x")));
        let mut row = Row::new("c");
        row.columns = vec![cell(1), ColumnData::simple("w", Cell::tombstone(1, 0))];
        let mut replica = PartitionData::default();
        replica.apply(PartitionUpdate {
            rows: vec![row.clone()],
            ..Default::default()
        });
        let mut newer = row;
        newer.columns[0] = cell(2);
        let mut reconciled = replica.clone();
        reconciled.apply(PartitionUpdate {
            rows: vec![newer],
            ..Default::default()
        });
        let diff = reconciled.missing_in(&replica).expect("v is newer");
        assert!(diff.partition_deletion.is_live());
        assert_eq!(diff.rows.len(), 1);
        assert_eq!(diff.rows[0].columns, vec![cell(2)]);
    }
}
