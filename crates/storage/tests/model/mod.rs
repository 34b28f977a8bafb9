//! A deliberately naive model of one partition, shared by the model checks: it keeps every
//! write and evaluates Cassandra's reconciliation and shadowing rules directly at read time.
//! Local times (write and deletion seconds, TTL expiry) are offsets from a base second the
//! caller picks; the model reads at an offset from the same base.

#![allow(dead_code)]

use std::ops::Bound;

use bytes::Bytes;
use mutation::{
    Cell, ColumnData, ColumnValue, DeletionTime, LivenessInfo, Partition, PartitionUpdate,
    RangeTombstone, Row,
};
use proptest::prelude::*;

pub const ROWS: [&str; 4] = ["a", "b", "c", "d"];
pub const COLUMNS: [&str; 2] = ["x", "y"];

#[derive(Clone, Debug)]
pub enum Op {
    Cell {
        row: usize,
        column: usize,
        ts: i64,
        value: Option<u8>,
        ttl: i32,
        at: i32,
    },
    Marker {
        row: usize,
        ts: i64,
        ttl: i32,
        at: i32,
    },
    DeleteRow {
        row: usize,
        ts: i64,
    },
    DeletePartition {
        ts: i64,
    },
    DeleteRange {
        start: Bound<usize>,
        end: Bound<usize>,
        ts: i64,
    },
}

fn bound() -> impl Strategy<Value = Bound<usize>> {
    prop_oneof![
        Just(Bound::Unbounded),
        (0..ROWS.len()).prop_map(Bound::Included),
        (0..ROWS.len()).prop_map(Bound::Excluded),
    ]
}

pub fn op() -> impl Strategy<Value = Op> {
    let ts = 1..6i64;
    let ttl = prop_oneof![Just(0), 1..4i32];
    prop_oneof![
        6 => (0..ROWS.len(), 0..COLUMNS.len(), ts.clone(), proptest::option::of(0..3u8), ttl.clone(), 0..4i32)
            .prop_map(|(row, column, ts, value, ttl, at)| Op::Cell { row, column, ts, value, ttl, at }),
        2 => (0..ROWS.len(), ts.clone(), ttl, 0..4i32).prop_map(|(row, ts, ttl, at)| Op::Marker { row, ts, ttl, at }),
        1 => (0..ROWS.len(), ts.clone()).prop_map(|(row, ts)| Op::DeleteRow { row, ts }),
        1 => ts.clone().prop_map(|ts| Op::DeletePartition { ts }),
        1 => (bound(), bound(), ts).prop_map(|(start, end, ts)| Op::DeleteRange { start, end, ts }),
    ]
}

pub fn name(row: usize) -> Bytes {
    Bytes::from_static(ROWS[row].as_bytes())
}

fn to_bytes(bound: &Bound<usize>) -> Bound<Bytes> {
    match bound {
        Bound::Included(r) => Bound::Included(name(*r)),
        Bound::Excluded(r) => Bound::Excluded(name(*r)),
        Bound::Unbounded => Bound::Unbounded,
    }
}

fn make_cell(ts: i64, value: Option<u8>, ttl: i32, at: i32) -> Cell {
    match value {
        None => Cell::tombstone(ts, at),
        Some(v) if ttl > 0 => Cell::expiring(ts, ttl, at, Bytes::from(vec![v])),
        Some(v) => Cell::live(ts, Bytes::from(vec![v])),
    }
}

fn make_marker(ts: i64, ttl: i32, at: i32) -> LivenessInfo {
    if ttl > 0 {
        LivenessInfo::expiring(ts, ttl, at)
    } else {
        LivenessInfo::new(ts)
    }
}

/// The op as a partition update for the engine; local times are seconds after `base`.
pub fn to_update(op: &Op, base: i32) -> PartitionUpdate {
    let mut update = PartitionUpdate::default();
    match op {
        Op::Cell {
            row,
            column,
            ts,
            value,
            ttl,
            at,
        } => {
            let mut r = Row::new(name(*row));
            r.columns = vec![ColumnData::simple(
                COLUMNS[*column],
                make_cell(*ts, *value, *ttl, base + *at),
            )];
            update.rows.push(r);
        }
        Op::Marker { row, ts, ttl, at } => {
            let mut r = Row::new(name(*row));
            r.liveness = Some(make_marker(*ts, *ttl, base + *at));
            update.rows.push(r);
        }
        Op::DeleteRow { row, ts } => {
            let mut r = Row::new(name(*row));
            r.deletion = DeletionTime::new(*ts, base);
            update.rows.push(r);
        }
        Op::DeletePartition { ts } => update.partition_deletion = DeletionTime::new(*ts, base),
        Op::DeleteRange { start, end, ts } => update.range_tombstones.push(RangeTombstone {
            start: to_bytes(start),
            end: to_bytes(end),
            deletion: DeletionTime::new(*ts, base),
        }),
    }
    update
}

fn in_range(row: usize, start: &Bound<usize>, end: &Bound<usize>) -> bool {
    let after = match start {
        Bound::Included(s) => row >= *s,
        Bound::Excluded(s) => row > *s,
        Bound::Unbounded => true,
    };
    let before = match end {
        Bound::Included(e) => row <= *e,
        Bound::Excluded(e) => row < *e,
        Bound::Unbounded => true,
    };
    after && before
}

/// Highest deletion timestamp covering `row`.
fn deleted_up_to(ops: &[Op], row: usize) -> i64 {
    ops.iter()
        .filter_map(|op| match op {
            Op::DeletePartition { ts } => Some(*ts),
            Op::DeleteRow { row: r, ts } if *r == row => Some(*ts),
            Op::DeleteRange { start, end, ts } if in_range(row, start, end) => Some(*ts),
            _ => None,
        })
        .max()
        .unwrap_or(i64::MIN)
}

/// Cassandra's ordering written as one sort key: timestamp, then tombstone > expiring > live,
/// then deletion/expiry time (for non-plain cells), then value bytes, then TTL.
fn cell_rank(cell: &Cell) -> (i64, u8, i32, Vec<u8>, i32) {
    let kind = match (&cell.value, cell.ttl > 0) {
        (None, _) => 2,
        (Some(_), true) => 1,
        (Some(_), false) => 0,
    };
    let time = if kind == 0 {
        0
    } else {
        cell.local_deletion_time
    };
    (
        cell.timestamp,
        kind,
        time,
        cell.value.clone().map(|v| v.to_vec()).unwrap_or_default(),
        cell.ttl,
    )
}

pub type ModelRow = (Bytes, Option<LivenessInfo>, Vec<(Bytes, Cell)>);

/// Row `row` as the ops leave it, read at `now` seconds after `base`.
pub fn model_row(ops: &[Op], row: usize, now: i32) -> Option<ModelRow> {
    let shadow = deleted_up_to(ops, row);
    let marker = ops
        .iter()
        .filter_map(|op| match op {
            Op::Marker {
                row: r,
                ts,
                ttl,
                at,
            } if *r == row => Some(make_marker(*ts, *ttl, *at)),
            _ => None,
        })
        .max_by_key(|m| (m.timestamp, m.ttl > 0, m.local_expiration_time, m.ttl))
        .filter(|m| m.timestamp > shadow && (m.ttl == 0 || now < m.local_expiration_time));
    let mut cells = Vec::new();
    for (index, column) in COLUMNS.iter().enumerate() {
        let winner = ops
            .iter()
            .filter_map(|op| match op {
                Op::Cell {
                    row: r,
                    column: c,
                    ts,
                    value,
                    ttl,
                    at,
                } if *r == row && *c == index => Some(make_cell(*ts, *value, *ttl, *at)),
                _ => None,
            })
            .max_by_key(cell_rank);
        if let Some(cell) = winner {
            let live = cell.value.is_some() && (cell.ttl == 0 || now < cell.local_deletion_time);
            if live && cell.timestamp > shadow {
                cells.push((Bytes::from_static(column.as_bytes()), cell));
            }
        }
    }
    (marker.is_some() || !cells.is_empty()).then(|| (name(row), marker, cells))
}

/// The rows of a read partition in the model's shape.
pub fn rows_of(partition: Option<Partition>) -> Vec<ModelRow> {
    let rows = partition.map(|p| p.rows).unwrap_or_default();
    rows.into_iter()
        .map(|row| {
            let cells = row
                .columns
                .into_iter()
                .map(|c| match c.value {
                    ColumnValue::Simple(cell) => (c.name, cell),
                    ColumnValue::Complex(_) => panic!("no complex columns written"),
                })
                .collect();
            (row.clustering, row.liveness, cells)
        })
        .collect()
}

/// Every row the model holds live at `now`, in clustering order.
pub fn model_rows(ops: &[Op], now: i32) -> Vec<ModelRow> {
    (0..ROWS.len())
        .filter_map(|r| model_row(ops, r, now))
        .collect()
}

/// `rows` with their local times (expiry of TTL cells and markers) made offsets from `base`,
/// as the model states them.
pub fn rebase(rows: Vec<ModelRow>, base: i32) -> Vec<ModelRow> {
    rows.into_iter()
        .map(|(clustering, marker, cells)| {
            let marker = marker.map(|mut m| {
                if m.ttl > 0 {
                    m.local_expiration_time -= base;
                }
                m
            });
            let cells = cells
                .into_iter()
                .map(|(name, mut cell)| {
                    if cell.ttl > 0 {
                        cell.local_deletion_time -= base;
                    }
                    (name, cell)
                })
                .collect();
            (clustering, marker, cells)
        })
        .collect()
}
