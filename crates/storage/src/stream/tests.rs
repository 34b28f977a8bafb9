use std::fs;
use std::path::Path;

use bytes::Bytes;

use super::*;
use crate::{Storage, StorageConfig, StorageError, TableParams};
use mutation::{
    Cell, ColumnData, ColumnValue, Mutation, PartitionKey, PartitionUpdate, ReadFilter, Row,
    TableId,
};

const TABLE: TableId = TableId(uuid::Uuid::from_u128(0x57ea));
/// Seconds since the epoch the tests write at (TTLs count from it).
const NOW: i32 = 1_000_000;

fn open(dir: &Path) -> Storage {
    let config = StorageConfig::new(dir.join("data"), dir.join("log"));
    let storage = Storage::open(config).expect("open");
    let params = TableParams::new("ks", "t").with_compaction([
        ("class", "SizeTieredCompactionStrategy"),
        ("enabled", "false"),
    ]);
    storage.create_table(TABLE, params).expect("table");
    storage.replay().expect("replay");
    storage.finish_replay();
    storage
}

fn key(token: i64) -> PartitionKey {
    PartitionKey {
        token,
        key: Bytes::from(token.to_be_bytes().to_vec()),
    }
}

fn mutation(token: i64, row: Row) -> Mutation {
    Mutation {
        table: TABLE,
        key: key(token),
        update: PartitionUpdate {
            rows: vec![row],
            ..Default::default()
        },
    }
}

fn cell_row(cell: Cell) -> Row {
    let mut row = Row::new(Bytes::from_static(b"c"));
    row.columns = vec![ColumnData::simple("v", cell)];
    row
}

fn value(token: i64) -> Bytes {
    Bytes::from(format!("value-{token}"))
}

async fn write(storage: &Storage, token: i64, cell: Cell) {
    storage
        .apply(mutation(token, cell_row(cell)))
        .await
        .expect("write");
}

/// The live value of partition `token` at second `now`.
fn read(storage: &Storage, token: i64, now: i32) -> Option<Bytes> {
    let partition = storage
        .read(TABLE, &key(token), &ReadFilter::all(), now)
        .expect("read")?;
    let row = partition.rows.into_iter().next()?;
    match &row.columns.first()?.value {
        ColumnValue::Simple(cell) => cell.value.clone(),
        ColumnValue::Complex(_) => None,
    }
}

/// Sends `outgoing` into `incoming` in chunks of `chunk` bytes, each with its CRC32.
fn transfer(outgoing: &Outgoing, incoming: &Incoming, chunk: usize) {
    for sstable in &outgoing.sstables {
        let names = sstable.manifest();
        let mut received = incoming.sstable(&names).expect("start");
        for (index, component) in sstable.components.iter().enumerate() {
            let bytes = fs::read(&component.path).expect("read component");
            for (n, piece) in bytes.chunks(chunk).enumerate() {
                let offset = (n * chunk) as u64;
                let crc = crc32fast::hash(piece);
                received.write(index, offset, piece, crc).expect("chunk");
            }
        }
        incoming.add(received).expect("add");
    }
}

fn staging_entries(storage: &Storage) -> usize {
    let engine = storage.engine(TABLE).expect("engine");
    fs::read_dir(engine.dir().join(STREAMING_DIR)).map_or(0, |d| d.count())
}

#[test]
fn ranges_merge_wrap_and_answer_containment() {
    let ranges = TokenRanges::new(&[(0, 10), (10, 20), (100, -100)]);
    assert_eq!(
        ranges.to_ranges(),
        vec![(i64::MIN, -100), (0, 20), (100, i64::MIN)]
    );
    assert!(!ranges.contains(0));
    assert!(ranges.contains(1) && ranges.contains(20) && !ranges.contains(21));
    assert!(ranges.contains(i64::MAX) && ranges.contains(i64::MIN + 1));
    assert!(ranges.covers(1, 20) && !ranges.covers(1, 21) && !ranges.covers(-100, 5));
    assert!(ranges.overlaps(-5, 1) && !ranges.overlaps(21, 100) && ranges.overlaps(21, 101));
    assert!(TokenRanges::all().covers(i64::MIN + 1, i64::MAX));
    assert!(TokenRanges::new(&[(5, 5)]).covers(6, i64::MAX));
    assert!(TokenRanges::new(&[]).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_and_partial_sstables_carry_tombstones_and_ttls() {
    let (a, b) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let (sender, receiver) = (open(a.path()), open(b.path()));
    // One SSTable wholly in (0, 1000], one straddling its edge.
    for token in [10, 20, 30] {
        write(&sender, token, Cell::live(1, value(token))).await;
    }
    sender.flush(TABLE).expect("flush");
    for token in [-50, 40, 2000] {
        write(&sender, token, Cell::live(1, value(token))).await;
    }
    // A deletion of what the receiver holds, and a cell that expires.
    write(&sender, 50, Cell::tombstone(5, NOW)).await;
    write(&sender, 60, Cell::expiring(1, 100, NOW, value(60))).await;
    write(&receiver, 50, Cell::live(2, value(50))).await;

    let ranges = TokenRanges::new(&[(0, 1000)]);
    let outgoing = sender
        .outgoing(TABLE, ranges, "s1".into())
        .await
        .expect("outgoing");
    let whole: Vec<bool> = outgoing.sstables.iter().map(|s| s.whole).collect();
    assert_eq!(whole.iter().filter(|w| **w).count(), 1, "{whole:?}");
    assert_eq!(outgoing.sstables.len(), 2);
    let partial = outgoing
        .sstables
        .iter()
        .find(|s| !s.whole)
        .expect("partial");
    assert_eq!(partial.partitions, 3, "40, 50 and 60 of the straddling one");

    let incoming = receiver.incoming(TABLE, "s1").expect("incoming");
    transfer(&outgoing, &incoming, 100);
    drop(outgoing);
    assert_eq!(staging_entries(&sender), 0, "outgoing staging removed");

    for token in [10, 20, 30, 40] {
        assert_eq!(read(&receiver, token, NOW), Some(value(token)));
    }
    for token in [-50, 2000] {
        assert_eq!(read(&receiver, token, NOW), None, "outside the ranges");
    }
    assert_eq!(read(&receiver, 50, NOW), None, "the tombstone streamed");
    assert_eq!(read(&receiver, 60, NOW + 99), Some(value(60)));
    assert_eq!(read(&receiver, 60, NOW + 100), None, "the TTL streamed");
    drop(incoming);
    assert_eq!(staging_entries(&receiver), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_chunk_is_refused_and_an_abort_leaves_nothing() {
    let (a, b) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let (sender, receiver) = (open(a.path()), open(b.path()));
    write(&sender, 10, Cell::live(1, value(10))).await;
    let outgoing = sender
        .outgoing(TABLE, TokenRanges::all(), "s2".into())
        .await
        .expect("outgoing");
    let sstable = &outgoing.sstables[0];
    let names = sstable.manifest();
    let incoming = receiver.incoming(TABLE, "s2").expect("incoming");
    let mut received = incoming.sstable(&names).expect("start");
    let data = fs::read(&sstable.components[0].path).expect("read");
    let error = received
        .write(0, 0, &data, crc32fast::hash(&data) ^ 1)
        .expect_err("bad checksum");
    assert!(
        matches!(&error, StorageError::Corrupt { reason, .. } if reason.contains("checksum")),
        "{error}"
    );
    let error = received
        .write(0, 1, &data[1..], crc32fast::hash(&data[1..]))
        .expect_err("out of order");
    assert!(error.to_string().contains("expected at 0"), "{error}");
    assert!(staging_entries(&receiver) > 0);
    drop(received);
    drop(incoming);
    assert_eq!(staging_entries(&receiver), 0, "staging removed on abort");
    assert_eq!(read(&receiver, 10, NOW), None);
    assert_eq!(receiver.table_stats(TABLE).expect("stats").sstables, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_corrupt_at_the_source_is_not_added() {
    let (a, b) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let (sender, receiver) = (open(a.path()), open(b.path()));
    for token in 0..200 {
        write(&sender, token, Cell::live(1, value(token))).await;
    }
    let outgoing = sender
        .outgoing(TABLE, TokenRanges::all(), "s3".into())
        .await
        .expect("outgoing");
    let sstable = &outgoing.sstables[0];
    let names = sstable.manifest();
    let incoming = receiver.incoming(TABLE, "s3").expect("incoming");
    let mut received = incoming.sstable(&names).expect("start");
    for (index, component) in sstable.components.iter().enumerate() {
        let mut bytes = fs::read(&component.path).expect("read");
        if index == 0 {
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0x40;
        }
        let crc = crc32fast::hash(&bytes);
        received.write(index, 0, &bytes, crc).expect("chunk");
    }
    let error = incoming.add(received).expect_err("corrupt");
    assert!(matches!(error, StorageError::Corrupt { .. }), "{error}");
    assert_eq!(receiver.table_stats(TABLE).expect("stats").sstables, 0);
    let unknown = incoming.sstable(&[("zz-Data.db".into(), 1)]).err();
    assert!(unknown.is_some_and(|e| e.to_string().contains("unknown SSTable component")));
}

#[test]
fn leftovers_of_a_crashed_stream_are_removed_at_start() {
    let dir = tempfile::tempdir().expect("dir");
    let staging = {
        let storage = open(dir.path());
        let incoming = storage.incoming(TABLE, "s4").expect("incoming");
        let staging = incoming.dir.clone();
        std::mem::forget(incoming);
        staging
    };
    assert!(staging.exists());
    let _storage = open(dir.path());
    assert!(!staging.exists());
}
