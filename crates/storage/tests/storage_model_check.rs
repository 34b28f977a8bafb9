//! Property test of the whole storage engine against the naive model of `model/`: random
//! writes and deletions (cells, row markers, rows, ranges, partitions, TTLs) of one partition,
//! interleaved with flushes, major compactions under the table's strategy (each strategy in
//! turn) and restarts that replay the commit log, checked against the model after every step.
//!
//! Timestamps are made unique (a tie between an expired and a live expiring cell is the one case
//! where a compaction's expired-cell-to-tombstone conversion may legitimately change the
//! winner) and local times are real seconds, so compactions see the same clock as reads;
//! `gc_grace_seconds` keeps its default, so no tombstone is purged behind the model's back.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod model;

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use model::*;
use mutation::{Mutation, PartitionKey, ReadFilter, TableId};
use proptest::prelude::*;
use storage::{CommitlogSync, Storage, StorageConfig, TableParams};

const TABLE: TableId = TableId(uuid::Uuid::from_u128(0x30de1));
const STRATEGIES: [&str; 4] = [
    "SizeTieredCompactionStrategy",
    "LeveledCompactionStrategy",
    "TimeWindowCompactionStrategy",
    "UnifiedCompactionStrategy",
];

#[derive(Clone, Debug)]
enum Step {
    Write(Op),
    Flush,
    Compact,
    Restart,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => op().prop_map(Step::Write),
        2 => Just(Step::Flush),
        1 => Just(Step::Compact),
        1 => Just(Step::Restart),
    ]
}

/// The op with its timestamp made unique (`ts * 64 + index`, order kept).
fn unique(op: Op, index: usize) -> Op {
    let tie = index as i64;
    match op {
        Op::Cell {
            row,
            column,
            ts,
            value,
            ttl,
            at,
        } => Op::Cell {
            row,
            column,
            ts: ts * 64 + tie,
            value,
            ttl,
            at,
        },
        Op::Marker { row, ts, ttl, at } => Op::Marker {
            row,
            ts: ts * 64 + tie,
            ttl,
            at,
        },
        Op::DeleteRow { row, ts } => Op::DeleteRow {
            row,
            ts: ts * 64 + tie,
        },
        Op::DeletePartition { ts } => Op::DeletePartition { ts: ts * 64 + tie },
        Op::DeleteRange { start, end, ts } => Op::DeleteRange {
            start,
            end,
            ts: ts * 64 + tie,
        },
    }
}

fn now_seconds() -> i32 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    i32::try_from(secs).expect("seconds fit")
}

fn key() -> PartitionKey {
    PartitionKey {
        token: 42,
        key: Bytes::from_static(b"k"),
    }
}

/// One case: a node in a temporary directory, the ops applied so far, and the base second.
struct Case {
    dir: tempfile::TempDir,
    params: TableParams,
    storage: Option<Storage>,
    applied: Vec<Op>,
    base: i32,
    runtime: tokio::runtime::Runtime,
}

impl Case {
    fn new(strategy: &str) -> Case {
        let params = TableParams::new("ks", "t")
            .with_compaction([("class", strategy), ("enabled", "false")]);
        let mut case = Case {
            dir: tempfile::tempdir().expect("tempdir"),
            params,
            storage: None,
            applied: Vec::new(),
            base: now_seconds() - 4,
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
        };
        case.open();
        case
    }

    fn open(&mut self) {
        let config = StorageConfig {
            sync: CommitlogSync::Batch,
            segment_size: 64 * 1024,
            ..StorageConfig::new(self.dir.path().join("data"), self.dir.path().join("log"))
        };
        let storage = Storage::open(config).expect("open");
        storage
            .create_table(TABLE, self.params.clone())
            .expect("table");
        storage.replay().expect("replay");
        storage.finish_replay();
        self.storage = Some(storage);
    }

    fn storage(&self) -> &Storage {
        self.storage.as_ref().expect("open")
    }

    fn run(&mut self, step: Step) {
        match step {
            Step::Write(op) => {
                let op = unique(op, self.applied.len());
                let mutation = Mutation {
                    table: TABLE,
                    key: key(),
                    update: to_update(&op, self.base),
                };
                let storage = self.storage.as_ref().expect("open");
                self.runtime
                    .block_on(storage.apply(mutation))
                    .expect("apply");
                self.applied.push(op);
            }
            Step::Flush => {
                self.storage().flush(TABLE).expect("flush");
            }
            Step::Compact => {
                self.storage().compact(TABLE).expect("compact");
            }
            Step::Restart => {
                // Dropped without a flush: the reopened node replays the commit log.
                self.storage = None;
                self.open();
            }
        }
    }

    fn check(&self, context: &str) {
        let now = now_seconds();
        let read = self
            .storage()
            .read(TABLE, &key(), &ReadFilter::all(), now)
            .expect("read");
        let expected = model_rows(&self.applied, now - self.base);
        let actual = rebase(rows_of(read), self.base);
        assert_eq!(actual, expected, "{context}: ops {:?}", self.applied);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn storage_matches_model_through_flushes_compactions_and_restarts(
        steps in proptest::collection::vec(step(), 1..30),
        strategy in 0..STRATEGIES.len(),
    ) {
        let mut case = Case::new(STRATEGIES[strategy]);
        for (index, step) in steps.into_iter().enumerate() {
            let context = format!("{} step {index} {step:?}", STRATEGIES[strategy]);
            case.run(step);
            case.check(&context);
        }
    }
}
