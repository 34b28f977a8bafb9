//! Property test: the memtable engine against a deliberately naive model that keeps every write
//! and evaluates Cassandra's reconciliation and shadowing rules directly at read time.

use std::ops::Bound;

use bytes::Bytes;
use proptest::prelude::*;
use storage::{
    Cell, ColumnData, ColumnValue, DeletionTime, LivenessInfo, MemtableEngine, PartitionKey,
    PartitionUpdate, RangeTombstone, ReadFilter, Row, TableEngine,
};

const ROWS: [&str; 4] = ["a", "b", "c", "d"];
const COLUMNS: [&str; 2] = ["x", "y"];

#[derive(Clone, Debug)]
enum Op {
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

fn op() -> impl Strategy<Value = Op> {
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

fn name(row: usize) -> Bytes {
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

/// The op as a partition update for the engine.
fn to_update(op: &Op) -> PartitionUpdate {
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
                make_cell(*ts, *value, *ttl, *at),
            )];
            update.rows.push(r);
        }
        Op::Marker { row, ts, ttl, at } => {
            let mut r = Row::new(name(*row));
            r.liveness = Some(make_marker(*ts, *ttl, *at));
            update.rows.push(r);
        }
        Op::DeleteRow { row, ts } => {
            let mut r = Row::new(name(*row));
            r.deletion = DeletionTime::new(*ts, 0);
            update.rows.push(r);
        }
        Op::DeletePartition { ts } => update.partition_deletion = DeletionTime::new(*ts, 0),
        Op::DeleteRange { start, end, ts } => update.range_tombstones.push(RangeTombstone {
            start: to_bytes(start),
            end: to_bytes(end),
            deletion: DeletionTime::new(*ts, 0),
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
/// then deletion/expiry time (for non-plain cells), then value bytes.
fn cell_rank(cell: &Cell) -> (i64, u8, i32, Vec<u8>) {
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
    )
}

type ModelRow = (Bytes, Option<LivenessInfo>, Vec<(Bytes, Cell)>);

fn model_row(ops: &[Op], row: usize, now: i32) -> Option<ModelRow> {
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

fn engine_rows(engine: &MemtableEngine, filter: &ReadFilter, now: i32) -> Vec<ModelRow> {
    let key = PartitionKey {
        token: 0,
        key: Bytes::from_static(b"k"),
    };
    let partition = engine.read(&key, filter, now).expect("read");
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

fn check(ops: &[Op], now: i32, reversed: bool, limit: Option<usize>) {
    let engine = MemtableEngine::new();
    let key = PartitionKey {
        token: 0,
        key: Bytes::from_static(b"k"),
    };
    for op in ops {
        engine.apply(&key, &to_update(op)).expect("apply");
    }
    let filter = ReadFilter {
        reversed,
        row_limit: limit,
        ..ReadFilter::all()
    };
    let mut expected: Vec<ModelRow> = (0..ROWS.len())
        .filter_map(|r| model_row(ops, r, now))
        .collect();
    if reversed {
        expected.reverse();
    }
    expected.truncate(limit.unwrap_or(usize::MAX));
    let actual = engine_rows(&engine, &filter, now);
    assert_eq!(actual, expected, "ops {ops:?} now {now}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn engine_matches_model(
        ops in proptest::collection::vec(op(), 1..25),
        now in 0..8i32,
        reversed in any::<bool>(),
        limit in proptest::option::of(1..4usize),
    ) {
        check(&ops, now, reversed, limit);
    }
}

#[test]
fn regression_equal_timestamp_tombstone_beats_expired_cell() {
    let ops = [
        Op::Cell {
            row: 0,
            column: 0,
            ts: 3,
            value: Some(2),
            ttl: 2,
            at: 0,
        },
        Op::Cell {
            row: 0,
            column: 0,
            ts: 3,
            value: None,
            ttl: 0,
            at: 1,
        },
        Op::Cell {
            row: 0,
            column: 0,
            ts: 2,
            value: Some(1),
            ttl: 0,
            at: 0,
        },
    ];
    check(&ops, 5, false, None);
}

/// Found by the model check: two row markers with the same timestamp and expiry but different
/// TTLs must reconcile the same way whatever order they arrive in.
#[test]
fn regression_equal_expiry_markers_prefer_greater_ttl() {
    let a = LivenessInfo::expiring(3, 3, 2);
    let b = LivenessInfo::expiring(3, 2, 3);
    assert!(a.supersedes(&b));
    assert!(!b.supersedes(&a));
}
