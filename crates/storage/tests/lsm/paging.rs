//! Row-limited reads through `Storage` as the query layer pages them: each page resumes after
//! the last row of the previous one, over a memtable and several SSTables holding overwrites,
//! row deletions, a range tombstone and a static row, forward and reverse; and scans cut at a
//! total number of rows.

use std::collections::BTreeMap;
use std::ops::Bound;

use bytes::Bytes;

use super::common::*;
use mutation::{
    Cell, ColumnData, DeletionTime, KeyRange, Mutation, Partition, PartitionUpdate, RangeTombstone,
    ReadFilter, Row,
};
use storage::Storage;

const ROWS: u16 = 4000;
const ROUNDS: u16 = 5;

fn clustering(c: u16) -> Bytes {
    Bytes::copy_from_slice(&c.to_be_bytes())
}

fn row(c: u16, ts: i64) -> Row {
    let mut row = Row::new(clustering(c));
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(ts, Bytes::from(format!("{c:05}-{ts}-{}", "x".repeat(300)))),
    )];
    row
}

fn mutation(update: PartitionUpdate) -> Mutation {
    Mutation {
        table: TABLE,
        key: key(1),
        update,
    }
}

/// Writes the partition in `ROUNDS` rounds, flushing after each but the last: round `r` writes
/// rows `c` with `c % ROUNDS == r`, overwrites every 7th row of the previous round and deletes
/// every 11th; round 2 adds a range tombstone over [1000, 1200) and the static row. Returns the
/// rows left live, ascending.
async fn write_partition(storage: &Storage) -> Vec<u16> {
    // Per row: the newest write and the newest deletion covering it.
    let mut model: BTreeMap<u16, (i64, i64)> = BTreeMap::new();
    for round in 0..ROUNDS {
        let ts = i64::from(round) + 1;
        let mut update = PartitionUpdate::default();
        for c in (0..ROWS).filter(|c| c % ROUNDS == round) {
            update.rows.push(row(c, ts));
            model.entry(c).or_default().0 = ts;
        }
        for c in (0..ROWS).filter(|c| round > 0 && c % ROUNDS == round - 1) {
            if c % 7 == 0 {
                update.rows.push(row(c, ts));
                model.entry(c).or_default().0 = ts;
            } else if c % 11 == 0 {
                let mut deleted = Row::new(clustering(c));
                deleted.deletion = DeletionTime::new(ts, 0);
                update.rows.push(deleted);
                model.entry(c).or_default().1 = ts;
            }
        }
        if round == 2 {
            update.range_tombstones.push(RangeTombstone {
                start: Bound::Included(clustering(1000)),
                end: Bound::Excluded(clustering(1200)),
                deletion: DeletionTime::new(ts, 0),
            });
            for (_, (_, deleted)) in model.range_mut(1000..1200) {
                *deleted = (*deleted).max(ts);
            }
            let mut static_row = Row::new(Bytes::new());
            static_row.columns = vec![ColumnData::simple("s", Cell::live(ts, b("static")))];
            update.static_row = Some(static_row);
        }
        // One mutation per row: the commit log takes mutations up to half a segment.
        let rows = std::mem::take(&mut update.rows);
        let mut pieces: Vec<PartitionUpdate> = rows
            .into_iter()
            .map(|row| PartitionUpdate {
                rows: vec![row],
                ..Default::default()
            })
            .collect();
        pieces.push(update);
        for piece in pieces {
            storage.apply(mutation(piece)).await.expect("apply");
        }
        if round + 1 < ROUNDS {
            storage.flush(TABLE).expect("flush");
        }
    }
    let live = model
        .into_iter()
        .filter(|(_, (written, deleted))| written > deleted);
    live.map(|(c, _)| c).collect()
}

fn b(s: &'static str) -> Bytes {
    Bytes::from_static(s.as_bytes())
}

fn numbers(p: &Partition) -> Vec<u16> {
    p.rows
        .iter()
        .map(|r| u16::from_be_bytes([r.clustering[0], r.clustering[1]]))
        .collect()
}

/// Reads the whole partition in pages of `page` rows; every page must carry the static row.
fn paged(storage: &Storage, reversed: bool, page: usize) -> Vec<u16> {
    let mut filter = ReadFilter {
        reversed,
        row_limit: Some(page),
        ..ReadFilter::all()
    };
    let mut out = Vec::new();
    loop {
        let found = storage
            .read(TABLE, &key(1), &filter, 1)
            .expect("read")
            .expect("the static row is always live");
        assert!(found.static_row.is_some(), "page after {:?}", out.last());
        out.extend(numbers(&found));
        match found.rows.last() {
            Some(last) if found.rows.len() == page => filter = filter.after(&last.clustering),
            _ => return out,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_resume_after_the_last_row_over_memtable_and_sstables() {
    let dir = tempfile::tempdir().expect("tempdir");
    let storage = open_quiet(&config(dir.path()));
    let live = write_partition(&storage).await;
    let whole = storage
        .read(TABLE, &key(1), &ReadFilter::all(), 1)
        .expect("read")
        .expect("live");
    assert_eq!(numbers(&whole), live);
    for page in [13, 250, 5000] {
        assert_eq!(
            paged(&storage, false, page),
            live,
            "forward, pages of {page}"
        );
        let mut backward = live.clone();
        backward.reverse();
        assert_eq!(
            paged(&storage, true, page),
            backward,
            "reverse, pages of {page}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scans_stop_at_the_total_row_limit_cutting_the_last_partition() {
    let dir = tempfile::tempdir().expect("tempdir");
    let storage = open_quiet(&config(dir.path()));
    for n in 0..20 {
        for c in 0..5u8 {
            storage.apply(upsert(n, c, 1, "v")).await.expect("apply");
        }
        if n == 10 {
            storage.flush(TABLE).expect("flush");
        }
    }
    let filter = ReadFilter {
        row_limit: Some(4),
        total_row_limit: Some(11),
        ..ReadFilter::all()
    };
    let found = storage
        .scan(TABLE, &KeyRange::all(), &filter, 1, 100)
        .expect("scan");
    let counts: Vec<usize> = found.iter().map(|p| p.rows.len()).collect();
    assert_eq!(counts, vec![4, 4, 3]);
}
