//! Conflict resolution between two versions of the same data, exactly as Cassandra's
//! `Cells.reconcile` / `Conflicts.resolveRegular` / `resolveCounter`, `LivenessInfo.supersedes`
//! and `DeletionTime.supersedes`.

use std::cmp::Ordering;

use crate::{Cell, ColumnData, ColumnValue, ComplexColumn, Row, NO_DELETION_TIME};

/// Whether `left` wins over `right` (ties on everything keep `left`).
fn cell_wins(left: &Cell, right: &Cell) -> bool {
    if left.timestamp != right.timestamp {
        return left.timestamp > right.timestamp;
    }
    let left_dt = left.local_deletion_time != NO_DELETION_TIME || left.is_tombstone();
    let right_dt = right.local_deletion_time != NO_DELETION_TIME || right.is_tombstone();
    if left_dt || right_dt {
        // Tombstones and expiring cells beat plain live cells of the same timestamp.
        if left_dt != right_dt {
            return left_dt;
        }
        // A tombstone beats an expiring cell.
        if left.is_expiring() != right.is_expiring() {
            return !left.is_expiring();
        }
        if left.local_deletion_time != right.local_deletion_time {
            return left.local_deletion_time > right.local_deletion_time;
        }
    }
    // Equal value too: the greater TTL wins (as for row markers), so merges of two expiring
    // cells with the same expiry do not depend on their order.
    (value_bytes(left), left.ttl) >= (value_bytes(right), right.ttl)
}

fn value_bytes(cell: &Cell) -> &[u8] {
    cell.value.as_deref().unwrap_or(&[])
}

/// The winner of two versions of a cell; two live counter cells merge their shards.
pub fn reconcile(left: Cell, right: Cell) -> Cell {
    if left.is_counter() || right.is_counter() {
        if let Some(cell) = crate::counter_context::reconcile(&left, &right) {
            return cell;
        }
    }
    if cell_wins(&left, &right) {
        left
    } else {
        right
    }
}

/// Whether `newer` makes `cell` obsolete: reconciling them gives `newer` (and they differ).
pub fn supersedes(newer: &Cell, cell: &Cell) -> bool {
    newer != cell && reconcile(newer.clone(), cell.clone()) == *newer
}

/// Merges `other` into `row` (same clustering).
pub fn merge_row(row: &mut Row, other: Row) {
    row.liveness = match (row.liveness, other.liveness) {
        (Some(a), Some(b)) => Some(if b.supersedes(&a) { b } else { a }),
        (a, b) => a.or(b),
    };
    row.deletion = row.deletion.merge(other.deletion);
    let mine = std::mem::take(&mut row.columns);
    row.columns = merge_sorted(mine, other.columns, |c| &c.name, merge_column);
}

fn merge_column(left: ColumnData, right: ColumnData) -> ColumnData {
    let value = match (left.value, right.value) {
        (ColumnValue::Simple(a), ColumnValue::Simple(b)) => ColumnValue::Simple(reconcile(a, b)),
        (ColumnValue::Complex(a), ColumnValue::Complex(b)) => {
            ColumnValue::Complex(merge_complex(a, b))
        }
        // A column cannot change between simple and complex; keep the newer write.
        (_, newer) => newer,
    };
    ColumnData {
        name: left.name,
        value,
    }
}

fn merge_complex(left: ComplexColumn, right: ComplexColumn) -> ComplexColumn {
    let cells = merge_sorted(left.cells, right.cells, |c| &c.path, reconcile);
    ComplexColumn {
        deletion: left.deletion.merge(right.deletion),
        cells,
    }
}

/// Merges two vectors sorted by `key`, combining equal-keyed items with `combine`.
fn merge_sorted<T, K: Ord + ?Sized>(
    left: Vec<T>,
    right: Vec<T>,
    key: impl for<'a> Fn(&'a T) -> &'a K,
    combine: impl Fn(T, T) -> T,
) -> Vec<T> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        let order = match (left.peek(), right.peek()) {
            (Some(l), Some(r)) => key(l).cmp(key(r)),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => return out,
        };
        let item = match order {
            Ordering::Less => left.next(),
            Ordering::Greater => right.next(),
            Ordering::Equal => match (left.next(), right.next()) {
                (Some(l), Some(r)) => Some(combine(l, r)),
                (l, r) => l.or(r),
            },
        };
        out.extend(item);
    }
}

/// Sorts columns by name and complex cells by path, merging duplicates, so rows built by
/// callers in any order are canonical.
pub fn normalize_row(row: Row) -> Row {
    if is_canonical(&row) {
        return row; // the common case: nothing to sort, no allocation
    }
    let mut columns = row.columns;
    columns.sort_by(|a, b| a.name.cmp(&b.name));
    let mut normalized = Row {
        columns: Vec::with_capacity(columns.len()),
        ..row
    };
    for column in columns {
        let column = normalize_column(column);
        match normalized.columns.pop() {
            Some(prev) if prev.name == column.name => {
                normalized.columns.push(merge_column(prev, column))
            }
            Some(prev) => {
                normalized.columns.push(prev);
                normalized.columns.push(column);
            }
            None => normalized.columns.push(column),
        }
    }
    normalized
}

/// Whether `row`'s columns are strictly ascending by name and each complex column's cells
/// strictly ascending by path: what [`normalize_row`] would leave as it is.
fn is_canonical(row: &Row) -> bool {
    let complex_sorted = |column: &ColumnData| match &column.value {
        ColumnValue::Simple(_) => true,
        ColumnValue::Complex(complex) => complex.cells.windows(2).all(|w| w[0].path < w[1].path),
    };
    row.columns.windows(2).all(|w| w[0].name < w[1].name) && row.columns.iter().all(complex_sorted)
}

fn normalize_column(column: ColumnData) -> ColumnData {
    let ColumnValue::Complex(complex) = column.value else {
        return column;
    };
    let mut cells: Vec<Cell> = Vec::with_capacity(complex.cells.len());
    let mut sorted = complex.cells;
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    for cell in sorted {
        match cells.pop() {
            Some(prev) if prev.path == cell.path => cells.push(reconcile(prev, cell)),
            Some(prev) => {
                cells.push(prev);
                cells.push(cell);
            }
            None => cells.push(cell),
        }
    }
    ColumnData {
        name: column.name,
        value: ColumnValue::Complex(ComplexColumn {
            deletion: complex.deletion,
            cells,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DeletionTime, LivenessInfo};
    use bytes::Bytes;

    fn v(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    #[test]
    fn higher_timestamp_wins() {
        let old = Cell::live(1, v("z"));
        let new = Cell::live(2, v("a"));
        assert_eq!(reconcile(old.clone(), new.clone()), new);
        assert_eq!(reconcile(new.clone(), old), new);
    }

    #[test]
    fn tie_tombstone_beats_live_and_expiring() {
        let live = Cell::live(5, v("z"));
        let ttl = Cell::expiring(5, 100, 10, v("z"));
        let dead = Cell::tombstone(5, 0);
        assert_eq!(reconcile(live.clone(), dead.clone()), dead);
        assert_eq!(reconcile(dead.clone(), live.clone()), dead);
        assert_eq!(reconcile(ttl.clone(), dead.clone()), dead);
        assert_eq!(reconcile(dead.clone(), ttl.clone()), dead);
        assert_eq!(reconcile(live.clone(), ttl.clone()), ttl);
    }

    #[test]
    fn tie_between_expiring_prefers_later_expiry_then_value() {
        let early = Cell::expiring(5, 10, 10, v("z"));
        let late = Cell::expiring(5, 10, 20, v("a"));
        assert_eq!(reconcile(early.clone(), late.clone()), late);
        assert_eq!(reconcile(late.clone(), early), late);
        let a = Cell::live(5, v("a"));
        let b = Cell::live(5, v("b"));
        assert_eq!(reconcile(a.clone(), b.clone()), b);
        assert_eq!(reconcile(b.clone(), a), b);
    }

    #[test]
    fn merge_row_merges_columns_marker_and_deletion() {
        let mut left = Row::new("c");
        left.liveness = Some(LivenessInfo::new(1));
        left.columns = vec![
            ColumnData::simple("a", Cell::live(1, v("1"))),
            ColumnData::simple("c", Cell::live(1, v("1"))),
        ];
        let mut right = Row::new("c");
        right.liveness = Some(LivenessInfo::new(2));
        right.deletion = DeletionTime::new(0, 0);
        right.columns = vec![
            ColumnData::simple("b", Cell::live(1, v("2"))),
            ColumnData::simple("c", Cell::live(2, v("2"))),
        ];
        merge_row(&mut left, right);
        assert_eq!(left.liveness, Some(LivenessInfo::new(2)));
        assert_eq!(left.deletion, DeletionTime::new(0, 0));
        let names: Vec<_> = left.columns.iter().map(|c| c.name.clone()).collect();
        assert_eq!(names, vec![v("a"), v("b"), v("c")]);
        assert_eq!(
            left.columns[2].value,
            ColumnValue::Simple(Cell::live(2, v("2")))
        );
    }

    #[test]
    fn complex_columns_merge_by_path() {
        let left = ColumnData::complex(
            "m",
            DeletionTime::LIVE,
            vec![Cell::live(1, v("x")).with_path(v("k1"))],
        );
        let right = ColumnData::complex(
            "m",
            DeletionTime::new(0, 0),
            vec![
                Cell::live(2, v("y")).with_path(v("k1")),
                Cell::live(2, v("z")).with_path(v("k2")),
            ],
        );
        let ColumnValue::Complex(merged) = merge_column(left, right).value else {
            panic!("expected complex column");
        };
        assert_eq!(merged.deletion, DeletionTime::new(0, 0));
        assert_eq!(merged.cells.len(), 2);
        assert_eq!(merged.cells[0].value, Some(v("y")));
    }

    #[test]
    fn normalize_sorts_and_dedups() {
        let mut row = Row::new("c");
        row.columns = vec![
            ColumnData::simple("b", Cell::live(1, v("1"))),
            ColumnData::simple("a", Cell::live(1, v("1"))),
            ColumnData::simple("b", Cell::live(3, v("3"))),
        ];
        let row = normalize_row(row);
        assert_eq!(row.columns.len(), 2);
        assert_eq!(
            row.columns[1].value,
            ColumnValue::Simple(Cell::live(3, v("3")))
        );
    }

    #[test]
    fn normalize_keeps_a_canonical_row_as_it_is() {
        let mut row = Row::new("c");
        let cells = vec![
            Cell::live(1, v("x")).with_path(v("1")),
            Cell::live(1, v("y")).with_path(v("2")),
        ];
        row.columns = vec![
            ColumnData::simple("a", Cell::live(1, v("1"))),
            ColumnData::complex("b", DeletionTime::LIVE, cells),
        ];
        let (expected, columns) = (row.clone(), row.columns.as_ptr());
        let row = normalize_row(row);
        assert_eq!(row, expected);
        assert_eq!(row.columns.as_ptr(), columns, "no new vector");
        let mut unsorted = expected.clone();
        let ColumnValue::Complex(complex) = &mut unsorted.columns[1].value else {
            unreachable!()
        };
        complex.cells.reverse();
        assert_eq!(normalize_row(unsorted), expected);
    }
}
