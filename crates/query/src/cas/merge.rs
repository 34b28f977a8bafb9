//! The updates of a conditional batch's statements folded into one partition update, cells
//! of one column reconciled as storage reconciles them (the newer, then a tombstone, then the
//! greater value: the statements write at one timestamp).
use std::cmp::Ordering;

use mutation::{Cell, ColumnData, ColumnValue, DeletionTime, PartitionUpdate, Row};

/// Adds `other` to `into`.
pub fn merge_update(into: &mut PartitionUpdate, other: PartitionUpdate) {
    into.partition_deletion = into.partition_deletion.merge(other.partition_deletion);
    into.range_tombstones.extend(other.range_tombstones);
    if let Some(row) = other.static_row {
        match &mut into.static_row {
            Some(existing) => merge_row(existing, row),
            None => into.static_row = Some(row),
        }
    }
    for row in other.rows {
        match into
            .rows
            .iter_mut()
            .find(|r| r.clustering == row.clustering)
        {
            Some(existing) => merge_row(existing, row),
            None => into.rows.push(row),
        }
    }
    into.rows.sort_by(|a, b| a.clustering.cmp(&b.clustering));
}

fn merge_row(into: &mut Row, other: Row) {
    into.deletion = into.deletion.merge(other.deletion);
    into.liveness = match (into.liveness, other.liveness) {
        (Some(a), Some(b)) if b.supersedes(&a) => Some(b),
        (a, b) => a.or(b),
    };
    for column in other.columns {
        match into.columns.iter_mut().find(|c| c.name == column.name) {
            Some(existing) => merge_column(existing, column),
            None => into.columns.push(column),
        }
    }
    into.columns.sort_by(|a, b| a.name.cmp(&b.name));
}

fn merge_column(into: &mut ColumnData, other: ColumnData) {
    match (&mut into.value, other.value) {
        (ColumnValue::Simple(a), ColumnValue::Simple(b)) => {
            if wins(&b, a) {
                *a = b;
            }
        }
        (ColumnValue::Complex(a), ColumnValue::Complex(b)) => {
            a.deletion = a.deletion.merge(b.deletion);
            for cell in b.cells {
                match a.cells.iter_mut().find(|c| c.path == cell.path) {
                    Some(existing) if wins(&cell, existing) => *existing = cell,
                    Some(_) => {}
                    None => a.cells.push(cell),
                }
            }
            a.cells.sort_by(|x, y| x.path.cmp(&y.path));
        }
        (slot, value) => *slot = value,
    }
}

/// Whether `new` replaces `old`: the newer, then a tombstone, then the greater value.
fn wins(new: &Cell, old: &Cell) -> bool {
    match new.timestamp.cmp(&old.timestamp) {
        Ordering::Greater => true,
        Ordering::Less => false,
        Ordering::Equal => match (&new.value, &old.value) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) => a > b,
        },
    }
}

/// Puts the update's deletions (partition, range, row and collection ones) just before `ts`,
/// as Cassandra's `PartitionUpdate.updateAllTimestamp` does for a Paxos proposal: what a
/// conditional batch deletes and writes at once stays written.
pub fn deletions_before(update: &mut PartitionUpdate, ts: i64) {
    let before = |d: &mut DeletionTime| {
        if !d.is_live() && d.marked_for_delete_at >= ts {
            d.marked_for_delete_at = ts - 1;
        }
    };
    before(&mut update.partition_deletion);
    update
        .range_tombstones
        .iter_mut()
        .for_each(|rt| before(&mut rt.deletion));
    for row in update.static_row.iter_mut().chain(update.rows.iter_mut()) {
        before(&mut row.deletion);
        for column in &mut row.columns {
            if let ColumnValue::Complex(complex) = &mut column.value {
                before(&mut complex.deletion);
            }
        }
    }
}
