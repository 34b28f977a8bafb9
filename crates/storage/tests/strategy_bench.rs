//! Hand-run figures per compaction strategy (STCS, LCS, TWCS, UCS):
//! `STRATEGY_BENCH_MB=64 cargo test --release -p storage --test strategy_bench -- --ignored --nocapture`.
//!
//! For each strategy, in a fresh node: writes `STRATEGY_BENCH_MB` MiB of 200-byte values (half
//! of them overwrites of earlier keys) with a flush every 4 MiB, lets background compaction
//! (unthrottled, two compactors) run to quiescence, then reads 2,000 random written keys. Prints:
//! - flush MB/s: uncompressed bytes flushed per second of flushing;
//! - compaction MB/s: input bytes on disk per second of compaction;
//! - write amplification: (flushed bytes on disk + compaction output bytes) / flushed bytes on
//!   disk (1.0 = nothing rewritten; the commit log is not counted);
//! - read amplification: mean SSTables touched per point read (the read metrics).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use mutation::{
    Cell, ColumnData, Mutation, PartitionKey, PartitionUpdate, ReadFilter, Row, TableId,
};
use storage::{CommitlogSync, Storage, StorageConfig, TableParams};
use uuid::Uuid;

const TABLE: TableId = TableId(Uuid::from_u128(0x5747));
const VALUE: usize = 200;
const FLUSH_EVERY: u64 = 4 << 20;
const READS: u64 = 2_000;
const STRATEGIES: [(&str, &[(&str, &str)]); 4] = [
    ("SizeTieredCompactionStrategy", &[]),
    ("LeveledCompactionStrategy", &[("sstable_size_in_mb", "16")]),
    ("TimeWindowCompactionStrategy", &[]),
    ("UnifiedCompactionStrategy", &[]),
];

/// A deterministic pseudo-random sequence (xorshift), so values do not compress away.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn bytes(&mut self, len: usize) -> Bytes {
        let words = (0..len.div_ceil(8)).flat_map(|_| self.next().to_le_bytes());
        Bytes::from(words.take(len).collect::<Vec<u8>>())
    }
}

fn key(n: u64) -> PartitionKey {
    PartitionKey {
        token: n.wrapping_mul(0x9E37_79B9_7F4A_7C15) as i64,
        key: Bytes::from(n.to_be_bytes().to_vec()),
    }
}

fn mutation(n: u64, random: &mut Random) -> Mutation {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    let mut row = Row::new(Bytes::from_static(b"c"));
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(micros, random.bytes(VALUE)),
    )];
    Mutation {
        table: TABLE,
        key: key(n),
        update: PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        },
    }
}

#[derive(Default)]
struct Figures {
    flushed: u64,
    flushed_disk: u64,
    flush_time: Duration,
    compacted_in: u64,
    compacted_out: u64,
    compaction_time: Duration,
    sstables: usize,
    sstables_per_read: f64,
}

fn mb_per_s(bytes: u64, time: Duration) -> f64 {
    bytes as f64 / (1 << 20) as f64 / time.as_secs_f64().max(1e-9)
}

async fn measure(class: &str, options: &[(&str, &str)], megabytes: u64) -> Figures {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = StorageConfig {
        sync: CommitlogSync::Periodic {
            period: Duration::from_secs(10),
        },
        memtable_space: 1 << 30,
        compaction_throughput: 0,
        ..StorageConfig::new(dir.path().join("data"), dir.path().join("commitlog"))
    };
    let storage = Storage::open(config).expect("open");
    let compaction = [("class", class)]
        .into_iter()
        .chain(options.iter().copied());
    let params = TableParams::new("ks", "t").with_compaction(compaction);
    storage.create_table(TABLE, params).expect("create");
    storage.finish_replay();
    let mut figures = Figures::default();
    let keys = (megabytes << 20) / VALUE as u64;
    let mut random = Random(0x2545_F491_4F6C_DD1D);
    let mut pending = 0;
    for i in 0..keys {
        let n = if i % 2 == 1 { random.next() % i } else { i };
        storage
            .apply(mutation(n, &mut random))
            .await
            .expect("apply");
        pending += VALUE as u64;
        if pending >= FLUSH_EVERY || i + 1 == keys {
            flush(&storage, &mut figures);
            pending = 0;
        }
    }
    quiesce(&storage).await;
    for record in storage.compaction_history() {
        figures.compacted_in += record.bytes_in;
        figures.compacted_out += record.bytes_out;
        figures.compaction_time += Duration::from_millis(record.duration_ms);
    }
    for _ in 0..READS {
        // Even keys were all written (odd steps overwrite earlier keys).
        let n = (random.next() % keys) & !1;
        storage
            .read(TABLE, &key(n), &ReadFilter::all(), 0)
            .expect("read");
    }
    figures.sstables = storage.table_stats(TABLE).expect("stats").sstables;
    figures.sstables_per_read = storage
        .table_metrics(TABLE)
        .expect("metrics")
        .sstables_per_read
        .mean;
    storage.shutdown().await.expect("shutdown");
    figures
}

fn flush(storage: &Storage, figures: &mut Figures) {
    let started = Instant::now();
    let report = storage.flush(TABLE).expect("flush");
    figures.flush_time += started.elapsed();
    figures.flushed += report.bytes;
    figures.flushed_disk += report.disk_bytes;
}

/// Waits until no compaction runs and the strategy has nothing due.
async fn quiesce(storage: &Storage) {
    let mut idle = 0;
    while idle < 3 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let usage = storage.table_usage(TABLE).expect("usage");
        let quiet = storage.compactions().is_empty() && usage.pending_compactions == 0;
        idle = if quiet { idle + 1 } else { 0 };
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn compaction_strategy_figures() {
    let megabytes = std::env::var("STRATEGY_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    println!(
        "{megabytes} MiB of {VALUE}-byte values, flush every {} MiB",
        FLUSH_EVERY >> 20
    );
    println!("strategy  flush MB/s  compaction MB/s  write amp  read amp  sstables");
    for (class, options) in STRATEGIES {
        let f = measure(class, options, megabytes).await;
        let write_amp = (f.flushed_disk + f.compacted_out) as f64 / f.flushed_disk.max(1) as f64;
        let short: String = class.chars().filter(|c| c.is_uppercase()).collect();
        println!(
            "{short:<8}  {:>10.1}  {:>15.1}  {:>9.2}  {:>8.2}  {:>8}",
            mb_per_s(f.flushed, f.flush_time),
            mb_per_s(f.compacted_in, f.compaction_time),
            write_amp,
            f.sstables_per_read,
            f.sstables
        );
        assert!(f.flushed > 0 && f.sstables > 0, "{class}");
    }
}
