//! Behavioural tests every [`TableEngine`] must pass. Call [`run_all`] from a unit test of each
//! implementation with a constructor for empty engines.

use std::ops::Bound;

use bytes::Bytes;

use super::TableEngine;
use crate::filter::{KeyRange, PartitionPosition, ReadFilter};
use mutation::{
    Cell, ColumnData, ColumnValue, DeletionTime, LivenessInfo, Partition, PartitionKey,
    PartitionUpdate, RangeTombstone, Row,
};

/// Runs every conformance check, each on a fresh engine from `make`.
pub fn run_all<E: TableEngine>(make: impl Fn() -> E) {
    let checks: [fn(&dyn TableEngine); 15] = [
        last_write_wins,
        timestamp_ties,
        cell_tombstones,
        row_and_partition_deletions,
        range_tombstone_bounds,
        complex_column_deletion,
        ttl_expiry,
        row_marker_keeps_row_alive,
        static_rows,
        slices_reversed_and_limits,
        scan_order_bounds_and_limit,
        truncate_removes_everything,
        memory_grows_with_writes,
        counter_totals_reconcile,
        counter_contexts_merge,
    ];
    for check in checks {
        check(&make());
    }
}

fn key(token: i64) -> PartitionKey {
    PartitionKey {
        token,
        key: Bytes::from(format!("key{token}")),
    }
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn row_with(clustering: &str, column: &str, cell: Cell) -> Row {
    let mut row = Row::new(b(clustering));
    row.columns = vec![ColumnData::simple(b(column), cell)];
    row
}

fn write_rows(engine: &dyn TableEngine, token: i64, rows: Vec<Row>) {
    let update = PartitionUpdate {
        rows,
        ..Default::default()
    };
    assert!(engine.apply(&key(token), &update).is_ok());
}

fn write_cell(engine: &dyn TableEngine, clustering: &str, cell: Cell) {
    write_rows(engine, 1, vec![row_with(clustering, "v", cell)]);
}

fn read_with(engine: &dyn TableEngine, filter: &ReadFilter, now: i32) -> Option<Partition> {
    match engine.read(&key(1), filter, now) {
        Ok(partition) => partition,
        Err(e) => panic!("read failed: {e}"),
    }
}

/// The single simple cell `v` of row `clustering` as read at `now`.
fn cell_at(engine: &dyn TableEngine, clustering: &str, now: i32) -> Option<Cell> {
    let partition = read_with(engine, &ReadFilter::all(), now)?;
    let row = partition
        .rows
        .iter()
        .find(|r| r.clustering == b(clustering))?;
    match &row.column(b"v")?.value {
        ColumnValue::Simple(cell) => Some(cell.clone()),
        ColumnValue::Complex(_) => None,
    }
}

fn clusterings(partition: Option<Partition>) -> Vec<Bytes> {
    partition.map_or_else(Vec::new, |p| {
        p.rows.into_iter().map(|r| r.clustering).collect()
    })
}

fn last_write_wins(engine: &dyn TableEngine) {
    write_cell(engine, "a", Cell::live(2, b("new")));
    write_cell(engine, "a", Cell::live(1, b("old")));
    assert_eq!(cell_at(engine, "a", 0), Some(Cell::live(2, b("new"))));
    write_cell(engine, "a", Cell::live(3, b("newer")));
    assert_eq!(cell_at(engine, "a", 0), Some(Cell::live(3, b("newer"))));
}

fn timestamp_ties(engine: &dyn TableEngine) {
    write_cell(engine, "value", Cell::live(5, b("b")));
    write_cell(engine, "value", Cell::live(5, b("a")));
    assert_eq!(cell_at(engine, "value", 0), Some(Cell::live(5, b("b"))));

    let expiring = Cell::expiring(5, 100, 0, b("a"));
    write_cell(engine, "ttl", Cell::live(5, b("z")));
    write_cell(engine, "ttl", expiring.clone());
    assert_eq!(cell_at(engine, "ttl", 0), Some(expiring.clone()));

    write_cell(engine, "tomb", Cell::live(5, b("z")));
    write_cell(engine, "tomb", Cell::tombstone(5, 0));
    write_cell(engine, "tomb", expiring);
    assert_eq!(cell_at(engine, "tomb", 0), None);
}

fn cell_tombstones(engine: &dyn TableEngine) {
    write_cell(engine, "a", Cell::live(1, b("x")));
    write_cell(engine, "a", Cell::tombstone(2, 0));
    assert_eq!(read_with(engine, &ReadFilter::all(), 0), None);
    write_cell(engine, "a", Cell::live(3, b("y")));
    assert_eq!(cell_at(engine, "a", 0), Some(Cell::live(3, b("y"))));
}

fn row_and_partition_deletions(engine: &dyn TableEngine) {
    write_cell(engine, "a", Cell::live(1, b("x")));
    write_cell(engine, "b", Cell::live(1, b("x")));
    let mut deleted = Row::new(b("a"));
    deleted.deletion = DeletionTime::new(1, 0);
    write_rows(engine, 1, vec![deleted]);
    assert_eq!(
        clusterings(read_with(engine, &ReadFilter::all(), 0)),
        vec![b("b")]
    );
    write_cell(engine, "a", Cell::live(2, b("y")));
    assert_eq!(cell_at(engine, "a", 0), Some(Cell::live(2, b("y"))));

    let update = PartitionUpdate {
        partition_deletion: DeletionTime::new(2, 0),
        ..Default::default()
    };
    assert!(engine.apply(&key(1), &update).is_ok());
    assert_eq!(read_with(engine, &ReadFilter::all(), 0), None);
    write_cell(engine, "c", Cell::live(3, b("z")));
    assert_eq!(
        clusterings(read_with(engine, &ReadFilter::all(), 0)),
        vec![b("c")]
    );
}

fn range_tombstone_bounds(engine: &dyn TableEngine) {
    for c in ["a", "b", "c", "d", "e"] {
        write_cell(engine, c, Cell::live(1, b("x")));
    }
    let tombstones = vec![
        RangeTombstone {
            start: Bound::Excluded(b("a")),
            end: Bound::Included(b("b")),
            deletion: DeletionTime::new(1, 0),
        },
        RangeTombstone {
            start: Bound::Included(b("d")),
            end: Bound::Unbounded,
            deletion: DeletionTime::new(1, 0),
        },
    ];
    let update = PartitionUpdate {
        range_tombstones: tombstones,
        ..Default::default()
    };
    assert!(engine.apply(&key(1), &update).is_ok());
    let live = clusterings(read_with(engine, &ReadFilter::all(), 0));
    assert_eq!(live, vec![b("a"), b("c")]);
    write_cell(engine, "e", Cell::live(2, b("y")));
    let live = clusterings(read_with(engine, &ReadFilter::all(), 0));
    assert_eq!(live, vec![b("a"), b("c"), b("e")]);
}

fn complex_column_deletion(engine: &dyn TableEngine) {
    let element = |ts, k: &str| Cell::live(ts, b("v")).with_path(b(k));
    let mut row = Row::new(b("a"));
    row.columns = vec![ColumnData::complex(
        b("m"),
        DeletionTime::LIVE,
        vec![element(1, "k1"), element(1, "k2")],
    )];
    write_rows(engine, 1, vec![row]);
    let mut overwrite = Row::new(b("a"));
    overwrite.columns = vec![ColumnData::complex(
        b("m"),
        DeletionTime::new(1, 0),
        vec![element(2, "k3")],
    )];
    write_rows(engine, 1, vec![overwrite]);
    let partition = read_with(engine, &ReadFilter::all(), 0);
    let columns = partition.map(|p| p.rows[0].columns.clone());
    let expected = ColumnData::complex(b("m"), DeletionTime::LIVE, vec![element(2, "k3")]);
    assert_eq!(columns, Some(vec![expected]));
}

fn ttl_expiry(engine: &dyn TableEngine) {
    write_cell(engine, "a", Cell::expiring(1, 10, 100, b("x")));
    assert!(cell_at(engine, "a", 109).is_some());
    assert_eq!(cell_at(engine, "a", 110), None);
    // An expired cell still wins reconciliation against older live data.
    write_cell(engine, "a", Cell::live(0, b("older")));
    assert_eq!(cell_at(engine, "a", 110), None);

    let mut row = Row::new(b("m"));
    row.liveness = Some(LivenessInfo::expiring(1, 10, 100));
    write_rows(engine, 1, vec![row]);
    assert_eq!(
        clusterings(read_with(engine, &ReadFilter::all(), 105)),
        vec![b("a"), b("m")]
    );
    assert_eq!(read_with(engine, &ReadFilter::all(), 110), None);
}

fn row_marker_keeps_row_alive(engine: &dyn TableEngine) {
    let mut inserted = row_with("a", "v", Cell::live(1, b("x")));
    inserted.liveness = Some(LivenessInfo::new(1));
    write_rows(
        engine,
        1,
        vec![inserted, row_with("b", "v", Cell::live(1, b("x")))],
    );
    write_cell(engine, "a", Cell::tombstone(2, 0));
    write_cell(engine, "b", Cell::tombstone(2, 0));
    let partition = read_with(engine, &ReadFilter::all(), 0);
    let rows = partition.map(|p| p.rows).unwrap_or_default();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].clustering, b("a"));
    assert_eq!(rows[0].liveness, Some(LivenessInfo::new(1)));
    assert!(rows[0].columns.is_empty());
}

fn static_rows(engine: &dyn TableEngine) {
    let update = PartitionUpdate {
        static_row: Some(row_with("", "s", Cell::live(1, b("st")))),
        ..Default::default()
    };
    assert!(engine.apply(&key(1), &update).is_ok());
    let partition = read_with(engine, &ReadFilter::all(), 0);
    assert!(partition.as_ref().is_some_and(|p| p.rows.is_empty()));
    assert!(partition.is_some_and(|p| p.static_row.is_some()));
    let no_static = ReadFilter {
        include_static: false,
        ..ReadFilter::all()
    };
    assert_eq!(read_with(engine, &no_static, 0), None);
    let only_static = ReadFilter {
        slices: Vec::new(),
        ..ReadFilter::all()
    };
    write_cell(engine, "a", Cell::live(1, b("x")));
    let partition = read_with(engine, &only_static, 0);
    assert!(partition.is_some_and(|p| p.rows.is_empty() && p.static_row.is_some()));
    // Range tombstones do not touch the static row; partition deletions do.
    let update = PartitionUpdate {
        range_tombstones: vec![RangeTombstone {
            start: Bound::Unbounded,
            end: Bound::Unbounded,
            deletion: DeletionTime::new(5, 0),
        }],
        ..Default::default()
    };
    assert!(engine.apply(&key(1), &update).is_ok());
    assert!(read_with(engine, &ReadFilter::all(), 0).is_some_and(|p| p.rows.is_empty()));
    let update = PartitionUpdate {
        partition_deletion: DeletionTime::new(5, 0),
        ..Default::default()
    };
    assert!(engine.apply(&key(1), &update).is_ok());
    assert_eq!(read_with(engine, &ReadFilter::all(), 0), None);
}

fn slices_reversed_and_limits(engine: &dyn TableEngine) {
    for c in ["a", "b", "c", "d", "e", "f"] {
        write_cell(engine, c, Cell::live(1, b("x")));
    }
    write_cell(engine, "b", Cell::tombstone(2, 0));
    let filter = ReadFilter {
        slices: vec![
            (Bound::Unbounded, Bound::Excluded(b("c"))),
            (Bound::Excluded(b("c")), Bound::Included(b("e"))),
        ],
        reversed: false,
        row_limit: None,
        total_row_limit: None,
        include_static: true,
        columns: None,
    };
    let all = clusterings(read_with(engine, &filter, 0));
    assert_eq!(all, vec![b("a"), b("d"), b("e")]);
    let reversed = ReadFilter {
        reversed: true,
        ..filter.clone()
    };
    assert_eq!(
        clusterings(read_with(engine, &reversed, 0)),
        vec![b("e"), b("d"), b("a")]
    );
    let limited = ReadFilter {
        row_limit: Some(2),
        ..reversed
    };
    assert_eq!(
        clusterings(read_with(engine, &limited, 0)),
        vec![b("e"), b("d")]
    );
    let forward_limited = ReadFilter {
        row_limit: Some(2),
        ..filter
    };
    // The deleted row "b" does not count against the limit.
    assert_eq!(
        clusterings(read_with(engine, &forward_limited, 0)),
        vec![b("a"), b("d")]
    );
    let empty = ReadFilter {
        slices: vec![(Bound::Included(b("z")), Bound::Included(b("a")))],
        ..ReadFilter::all()
    };
    assert_eq!(read_with(engine, &empty, 0), None);
}

fn scan_tokens(
    engine: &dyn TableEngine,
    start: Bound<PartitionPosition>,
    end: Bound<PartitionPosition>,
    limit: usize,
) -> Vec<i64> {
    let range = KeyRange { start, end };
    match engine.scan(&range, &ReadFilter::all(), 0, limit) {
        Ok(partitions) => partitions.into_iter().map(|p| p.key.token).collect(),
        Err(e) => panic!("scan failed: {e}"),
    }
}

fn scan_order_bounds_and_limit(engine: &dyn TableEngine) {
    for token in [30, -10, 20, 0, 10] {
        write_rows(
            engine,
            token,
            vec![row_with("a", "v", Cell::live(1, b("x")))],
        );
    }
    write_rows(engine, 20, vec![row_with("a", "v", Cell::tombstone(2, 0))]);
    let token = PartitionPosition::Token;
    let all = scan_tokens(engine, Bound::Unbounded, Bound::Unbounded, usize::MAX);
    assert_eq!(all, vec![-10, 0, 10, 30]);
    let tokens = scan_tokens(
        engine,
        Bound::Excluded(token(0)),
        Bound::Included(token(30)),
        9,
    );
    assert_eq!(tokens, vec![10, 30]);
    let tokens = scan_tokens(
        engine,
        Bound::Included(token(0)),
        Bound::Excluded(token(30)),
        9,
    );
    assert_eq!(tokens, vec![0, 10]);
    let by_key = scan_tokens(
        engine,
        Bound::Excluded(PartitionPosition::Key(key(-10))),
        Bound::Included(PartitionPosition::Key(key(10))),
        9,
    );
    assert_eq!(by_key, vec![0, 10]);
    assert_eq!(
        scan_tokens(engine, Bound::Unbounded, Bound::Unbounded, 2),
        vec![-10, 0]
    );
}

fn truncate_removes_everything(engine: &dyn TableEngine) {
    write_cell(engine, "a", Cell::live(1, b("x")));
    assert!(engine.truncate().is_ok());
    assert_eq!(read_with(engine, &ReadFilter::all(), 0), None);
    write_cell(engine, "a", Cell::live(1, b("x")));
    assert!(read_with(engine, &ReadFilter::all(), 0).is_some());
}

fn memory_grows_with_writes(engine: &dyn TableEngine) {
    let before = engine.memory_bytes();
    write_cell(engine, "a", Cell::live(1, Bytes::from(vec![0u8; 1000])));
    assert!(engine.memory_bytes() >= before + 1000);
}

/// Counter columns hold totals; the newest total wins.
fn counter_totals_reconcile(engine: &dyn TableEngine) {
    let total = |n: i64| Bytes::copy_from_slice(&n.to_be_bytes());
    write_cell(engine, "a", Cell::live(2, total(7)));
    write_cell(engine, "a", Cell::live(1, total(3)));
    assert_eq!(cell_at(engine, "a", 0), Some(Cell::live(2, total(7))));
    write_cell(engine, "a", Cell::live(3, total(-1)));
    assert_eq!(cell_at(engine, "a", 0), Some(Cell::live(3, total(-1))));
}

/// Counter cells merge their shards whatever their timestamps and order, a legacy total
/// counting as one more shard; reads give the sum; a cell tombstone deletes the counter
/// whatever the counter cells' timestamps (newer than the legacy total: against an unflagged
/// total alone a tombstone still reconciles by timestamp, as storage cannot tell it from a
/// bigint).
fn counter_contexts_merge(engine: &dyn TableEngine) {
    use mutation::counter_context::{CounterContext, Shard};
    let total = |n: i64| Bytes::copy_from_slice(&n.to_be_bytes());
    let shard = |id: u8, clock: i64, count: i64| {
        CounterContext::single(Shard {
            id: [id; 16],
            clock,
            count,
        })
    };
    write_cell(engine, "b", Cell::live(5, total(100)));
    write_cell(engine, "b", Cell::counter(9, &shard(1, 2, 10)));
    write_cell(engine, "b", Cell::counter(3, &shard(2, 1, 4)));
    write_cell(engine, "b", Cell::counter(8, &shard(1, 1, 7)));
    assert_eq!(cell_at(engine, "b", 0), Some(Cell::live(9, total(114))));
    write_cell(engine, "b", Cell::tombstone(6, 0));
    assert_eq!(cell_at(engine, "b", 0), None);
}
