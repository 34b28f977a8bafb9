//! Property test: the memtable engine against the naive model of `model/` (every write kept,
//! Cassandra's reconciliation and shadowing rules evaluated directly at read time).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod model;

use bytes::Bytes;
use model::*;
use mutation::{LivenessInfo, PartitionKey, ReadFilter};
use proptest::prelude::*;
use storage::{MemtableEngine, TableEngine};

fn check(ops: &[Op], now: i32, reversed: bool, limit: Option<usize>) {
    let engine = MemtableEngine::new();
    let key = PartitionKey {
        token: 0,
        key: Bytes::from_static(b"k"),
    };
    for op in ops {
        engine.apply(&key, &to_update(op, 0)).expect("apply");
    }
    let filter = ReadFilter {
        reversed,
        row_limit: limit,
        ..ReadFilter::all()
    };
    let mut expected = model_rows(ops, now);
    if reversed {
        expected.reverse();
    }
    expected.truncate(limit.unwrap_or(usize::MAX));
    let actual = rows_of(engine.read(&key, &filter, now).expect("read"));
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

/// Found by the model check (CI): two expiring cells with the same timestamp, value and expiry
/// but different TTLs must reconcile the same way whatever order they arrive in.
#[test]
fn regression_equal_expiry_cells_prefer_greater_ttl() {
    let cell = |ttl, at| Op::Cell {
        row: 1,
        column: 0,
        ts: 3,
        value: Some(2),
        ttl,
        at,
    };
    check(&[cell(2, 2), cell(3, 1)], 0, false, None);
    check(&[cell(3, 1), cell(2, 2)], 0, false, None);
}
