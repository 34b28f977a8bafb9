//! Two nodes on loopback, each with its storage, messaging and streaming: a stream of some
//! ranges of a table, whole and rewritten SSTables, at a throttled rate.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mutation::{
    Cell, ColumnData, ColumnValue, KeyRange, Mutation, PartitionKey, PartitionUpdate, ReadFilter,
    Row, TableId,
};
use net::{HostId, Messaging, NetConfig, TokioNetwork};
use storage::{Storage, StorageConfig, TableParams};
use streaming::{Direction, State, StreamConfig, StreamRequest, Streaming};

const TABLE: TableId = TableId(uuid::Uuid::from_u128(0x10));

struct Node {
    storage: Arc<Storage>,
    messaging: Arc<Messaging>,
    streaming: Streaming,
}

async fn node(dir: &Path, n: u128, config: StreamConfig) -> Node {
    let storage = Storage::open(StorageConfig::new(dir.join("data"), dir.join("log"))).unwrap();
    storage
        .create_table(TABLE, TableParams::new("ks", "t"))
        .unwrap();
    storage.replay().unwrap();
    storage.finish_replay();
    let storage = Arc::new(storage);
    let net = NetConfig::new("Test", HostId::from_u128(n), "127.0.0.1:0".parse().unwrap());
    let messaging = Messaging::start(net, Arc::new(TokioNetwork)).await.unwrap();
    let streaming = Streaming::start(storage.clone(), messaging.clone(), config);
    Node {
        storage,
        messaging,
        streaming,
    }
}

fn key(n: u64) -> PartitionKey {
    PartitionKey {
        token: n.wrapping_mul(0x9E37_79B9_7F4A_7C15) as i64,
        key: Bytes::from(n.to_be_bytes().to_vec()),
    }
}

async fn write(storage: &Storage, n: u64, value_len: usize) {
    let mut row = Row::new(Bytes::from_static(b"c"));
    let value = Bytes::from(vec![(n % 251) as u8; value_len]);
    row.columns = vec![ColumnData::simple("v", Cell::live(1, value))];
    let update = PartitionUpdate {
        rows: vec![row],
        ..Default::default()
    };
    let mutation = Mutation {
        table: TABLE,
        key: key(n),
        update,
    };
    storage.apply(mutation).await.unwrap();
}

fn tokens(storage: &Storage) -> Vec<i64> {
    let all = storage
        .scan(TABLE, &KeyRange::all(), &ReadFilter::all(), 1, usize::MAX)
        .unwrap();
    all.iter().map(|p| p.key.token).collect()
}

fn value_len(storage: &Storage, n: u64) -> Option<usize> {
    let partition = storage
        .read(TABLE, &key(n), &ReadFilter::all(), 1)
        .unwrap()?;
    match &partition.rows.first()?.columns.first()?.value {
        ColumnValue::Simple(cell) => cell.value.as_ref().map(|v| v.len()),
        ColumnValue::Complex(_) => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_pulls_the_ranges_it_asks_for() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = StreamConfig {
        chunk_bytes: 4096,
        ..StreamConfig::default()
    };
    let (source, receiver) = (
        node(a.path(), 1, config.clone()).await,
        node(b.path(), 2, config).await,
    );
    for n in 0..1000 {
        write(&source.storage, n, 100).await;
    }
    source.storage.flush(TABLE).unwrap();
    for n in 1000..1500 {
        write(&source.storage, n, 100).await;
    }
    // Half the ring, in two pieces, one of them wrapping.
    let ranges = vec![(i64::MAX / 2, i64::MIN / 2), (0, i64::MAX / 4)];
    let request = StreamRequest {
        peer: source.messaging.local(),
        tables: vec![(TABLE, ranges.clone())],
    };
    let plan = receiver.streaming.fetch("Rebuild", vec![request]);
    plan.finish().await.unwrap();

    let wanted = storage::stream::TokenRanges::new(&ranges);
    let expected: Vec<i64> = tokens(&source.storage)
        .into_iter()
        .filter(|t| wanted.contains(*t))
        .collect();
    assert!(expected.len() > 400, "{}", expected.len());
    assert_eq!(tokens(&receiver.storage), expected);
    let n = (0..1500).find(|n| wanted.contains(key(*n).token)).unwrap();
    assert_eq!(value_len(&receiver.storage, n), Some(100));

    let received = receiver.streaming.sessions();
    assert_eq!(received.len(), 1);
    let session = &received[0];
    assert_eq!(
        (session.direction, &session.state, &session.description[..]),
        (Direction::Receiving, &State::Complete, "Rebuild")
    );
    assert_eq!(session.files_done, session.files_total);
    assert_eq!(session.bytes_done, session.bytes_total);
    assert!(session.files_total >= 2, "{session:?}");
    let sent = source.streaming.sessions();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].direction, Direction::Sending);
    assert_eq!(sent[0].id, session.id);
    assert_eq!(sent[0].bytes_done, session.bytes_total);
    // The source's staging went with the session.
    let staging = a.path().join("data/ks");
    let leftovers = walk(&staging)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("/streaming/"))
        .count();
    assert_eq!(leftovers, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_sstables_go_at_the_entire_sstable_rate() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = StreamConfig {
        chunk_bytes: 64 * 1024,
        ..StreamConfig::default()
    };
    let (source, receiver) = (
        node(a.path(), 1, config.clone()).await,
        node(b.path(), 2, config).await,
    );
    // Incompressible values, so the SSTable is about as large as the data.
    for n in 0..400u64 {
        let mut row = Row::new(Bytes::from_static(b"c"));
        let mut state = n + 1;
        let value: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        row.columns = vec![ColumnData::simple("v", Cell::live(1, Bytes::from(value)))];
        let update = PartitionUpdate {
            rows: vec![row],
            ..Default::default()
        };
        let mutation = Mutation {
            table: TABLE,
            key: key(n),
            update,
        };
        source.storage.apply(mutation).await.unwrap();
    }
    const RATE: u64 = 1024 * 1024;
    source.streaming.entire_sstable_throttle().set_rate(RATE);
    let request = StreamRequest {
        peer: source.messaging.local(),
        tables: vec![(TABLE, vec![(i64::MIN, i64::MIN)])],
    };
    let started = Instant::now();
    receiver
        .streaming
        .fetch("Rebuild", vec![request])
        .finish()
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let bytes = receiver.streaming.sessions()[0].bytes_total;
    assert!(bytes > 1024 * 1024, "{bytes}");
    let expected = Duration::from_secs_f64(bytes as f64 / RATE as f64);
    assert!(
        elapsed >= expected.mul_f64(0.9) && elapsed <= expected.mul_f64(1.5),
        "{bytes} bytes in {elapsed:?}, expected about {expected:?}"
    );
    assert_eq!(tokens(&receiver.storage).len(), 400);
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            }
            out.push(path);
        }
    }
    out
}
