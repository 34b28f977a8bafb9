//! Cassandra's `dropped_columns` semantics on reads: cells of a dropped column written at or
//! before the drop never come back, even once a column of that name is added again.
use mutation::{ColumnValue, DeletionTime, Partition, Row};
use schema::TableMetadata;

/// Removes from `p` the cells that a drop of their column hides. Rows left with nothing that
/// keeps them alive (no row marker, no cell) stay, so that the caller still sees how many
/// rows storage read (its row limits and where a page resumes), and are skipped as rows
/// (`is_empty`).
pub fn forget_dropped(table: &TableMetadata, p: &mut Partition) {
    if table.dropped_columns.is_empty() {
        return;
    }
    if let Some(row) = p.static_row.as_mut() {
        forget_in_row(table, row);
    }
    if p.static_row.as_ref().is_some_and(|r| r.columns.is_empty()) {
        p.static_row = None;
    }
    for row in &mut p.rows {
        forget_in_row(table, row);
    }
}

/// Whether everything read of `p` (a partition of a table with dropped columns) was
/// forgotten: no row is left, nor a static row (a DISTINCT read, one row long, then does not
/// list the partition).
pub fn only_forgotten(table: &TableMetadata, p: &Partition) -> bool {
    !table.dropped_columns.is_empty() && !has_rows(p) && p.static_row.is_none()
}

/// Whether `p` has a row to return.
pub fn has_rows(p: &Partition) -> bool {
    p.rows.iter().any(|r| !is_empty(r))
}

/// A row with nothing that keeps it alive once dropped cells are forgotten.
pub fn is_empty(row: &Row) -> bool {
    row.liveness.is_none() && row.columns.is_empty()
}

fn forget_in_row(table: &TableMetadata, row: &mut Row) {
    row.columns.retain_mut(|data| {
        let Some(dropped) = std::str::from_utf8(&data.name)
            .ok()
            .and_then(|name| table.dropped_columns.get(name))
        else {
            return true;
        };
        let at = dropped.dropped_time_micros;
        match &mut data.value {
            ColumnValue::Simple(cell) => cell.timestamp > at,
            ColumnValue::Complex(complex) => {
                complex.cells.retain(|c| c.timestamp > at);
                if complex.deletion.marked_for_delete_at <= at {
                    complex.deletion = DeletionTime::LIVE;
                }
                !complex.cells.is_empty() || complex.deletion != DeletionTime::LIVE
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use mutation::{Cell, ColumnData, PartitionKey};
    use schema::{ColumnKind, ColumnMetadata, DroppedColumn, TableOptions};
    use types::{CqlType, NativeType};
    use uuid::Uuid;

    use super::*;

    fn table() -> TableMetadata {
        let int = CqlType::Native(NativeType::Int);
        let columns = vec![
            ColumnMetadata::partition_key("k", int.clone(), 0),
            ColumnMetadata::clustering("c", int.clone(), 0, schema::ClusteringOrder::Asc),
            ColumnMetadata::regular("v", int.clone()),
            ColumnMetadata::regular("w", int.clone()),
        ];
        let dropped = BTreeMap::from([(
            "v".to_string(),
            DroppedColumn {
                ty: int,
                kind: ColumnKind::Regular,
                dropped_time_micros: 100,
            },
        )]);
        TableMetadata::new("ks", "t", Uuid::nil(), columns, TableOptions::default())
            .expect("a valid table")
            .with_dropped_columns(dropped)
    }

    fn cell(timestamp: i64) -> Cell {
        Cell::live(timestamp, bytes::Bytes::from_static(&[0, 0, 0, 1]))
    }

    fn row(clustering: u8, columns: Vec<ColumnData>) -> Row {
        Row {
            columns,
            ..Row::new(vec![clustering])
        }
    }

    #[test]
    fn cells_written_before_the_drop_are_forgotten_later_ones_kept() {
        let mut p = Partition {
            key: PartitionKey {
                token: 0,
                key: bytes::Bytes::from_static(&[0, 0, 0, 1]),
            },
            static_row: None,
            rows: vec![
                row(1, vec![ColumnData::simple("v", cell(100))]),
                row(2, vec![ColumnData::simple("v", cell(101))]),
                row(
                    3,
                    vec![
                        ColumnData::simple("v", cell(50)),
                        ColumnData::simple("w", cell(50)),
                    ],
                ),
            ],
        };
        forget_dropped(&table(), &mut p);
        assert!(!only_forgotten(&table(), &p));
        let kept: Vec<(u8, Vec<&[u8]>)> = p
            .rows
            .iter()
            .filter(|r| !is_empty(r))
            .map(|r| {
                (
                    r.clustering[0],
                    r.columns.iter().map(|c| c.name.as_ref()).collect(),
                )
            })
            .collect();
        assert_eq!(
            kept,
            vec![(2, vec![b"v".as_ref()]), (3, vec![b"w".as_ref()])]
        );
    }
}
