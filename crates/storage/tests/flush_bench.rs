//! Hand-run timing of a memtable flush (~300k rows of ~300 bytes):
//! `cargo test --release -p storage --test flush_bench -- --ignored --nocapture`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

use std::time::{Duration, Instant};

use bytes::Bytes;
use mutation::{Cell, ColumnData, Mutation, PartitionKey, PartitionUpdate, Row, TableId};
use storage::{CommitlogSync, Storage, StorageConfig, TableParams};
use uuid::Uuid;

const TABLE: TableId = TableId(Uuid::from_u128(1));
const PARTITIONS: u64 = 30_000;
const ROWS: u64 = 10;

fn mutation(p: u64) -> Mutation {
    let rows = (0..ROWS)
        .map(|r| {
            let mut row = Row::new(Bytes::from(r.to_be_bytes().to_vec()));
            row.columns = vec![ColumnData::simple(
                "v",
                Cell::live(1, Bytes::from(vec![b'x'; 280])),
            )];
            row
        })
        .collect();
    Mutation {
        table: TABLE,
        key: PartitionKey {
            token: (p.wrapping_mul(0x9E37_79B9_7F4A_7C15)) as i64,
            key: Bytes::from(p.to_be_bytes().to_vec()),
        },
        update: PartitionUpdate {
            rows,
            ..Default::default()
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn time_flush() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = StorageConfig {
        sync: CommitlogSync::Periodic {
            period: Duration::from_secs(10),
        },
        memtable_space: 8 << 30,
        ..StorageConfig::new(dir.path().join("data"), dir.path().join("commitlog"))
    };
    let storage = Storage::open(config).expect("open");
    storage
        .create_table(TABLE, TableParams::new("ks", "t"))
        .expect("create");
    for chunk in (0..PARTITIONS).collect::<Vec<_>>().chunks(100) {
        let batch = chunk.iter().map(|p| mutation(*p)).collect();
        storage.apply_batch(batch).await.expect("apply");
    }
    let started = Instant::now();
    let report = storage.flush(TABLE).expect("flush");
    let elapsed = started.elapsed();
    println!(
        "flush: {} partitions, {} bytes in {:?}",
        report.partitions, report.bytes, elapsed
    );
    assert_eq!(report.partitions, PARTITIONS);
}
