//! The purge horizon against SSTables outside the task (a tombstone whose shadowed data lives
//! in an older SSTable that is not compacted must stay), and what a running compaction keeps
//! in memory.

use std::sync::atomic::AtomicBool;

use bytes::Bytes;

use super::*;
use crate::compaction::{CompactionTask, TaskKind};
use crate::engine::{LsmEngine, TableEngine};
use crate::facade::now_seconds;
use crate::filter::ReadFilter;
use crate::params::TableParams;
use mutation::{Cell, ColumnData, DeletionTime, PartitionUpdate, Row};

fn key(n: i64) -> PartitionKey {
    PartitionKey {
        token: n,
        key: Bytes::from(n.to_be_bytes().to_vec()),
    }
}

fn flush(engine: &LsmEngine, writes: impl Fn(&LsmEngine)) {
    writes(engine);
    let lock = engine.lock_flush();
    engine.switch_memtable();
    engine
        .flush_switched(&lock, crate::commitlog::Position::ZERO)
        .expect("flush");
}

fn task(inputs: Vec<u64>) -> CompactionTask {
    CompactionTask {
        inputs,
        fully_expired: Vec::new(),
        output_level: 0,
        max_output_bytes: None,
        kind: TaskKind::Major,
    }
}

/// What a compaction's context borrows, unthrottled.
struct Services {
    stop: AtomicBool,
    throttle: Throttle,
    registry: Registry,
}

impl Services {
    fn new() -> Self {
        Services {
            stop: AtomicBool::new(false),
            throttle: Throttle::new(0),
            registry: Registry::default(),
        }
    }

    fn context(&self) -> Context<'_> {
        Context {
            throttle: &self.throttle,
            registry: &self.registry,
            stop: &self.stop,
            now: now_seconds(),
        }
    }
}

/// Claims, compacts and releases the SSTables of `generations`.
fn compact(engine: &LsmEngine, generations: &[u64], context: &Context<'_>) {
    assert!(engine.claim(generations));
    run(engine, &task(generations.to_vec()), context).expect("compaction");
    engine.release(generations);
}

fn tombstones(engine: &LsmEngine) -> u64 {
    engine
        .view()
        .sstables
        .iter()
        .map(|s| s.sstable.stats().tombstones())
        .sum()
}

/// Marks every live SSTable repaired at `at_ms`.
fn mark_repaired(engine: &LsmEngine, at_ms: u64) {
    for live in &engine.view().sstables {
        live.sstable
            .set_repair(RepairMark::repaired(at_ms))
            .expect("mark repaired");
    }
}

fn generations(engine: &LsmEngine) -> Vec<u64> {
    engine
        .view()
        .sstables
        .iter()
        .map(|s| s.generation())
        .collect()
}

#[test]
fn tombstones_past_gc_grace_are_purged_from_repaired_data_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let params = TableParams {
        gc_grace_seconds: 0,
        ..TableParams::new("ks", "t")
    };
    let engine =
        LsmEngine::open(dir.path(), params.settings().expect("settings"), false).expect("open");
    let deletion = PartitionUpdate {
        partition_deletion: DeletionTime::new(2, now_seconds() - 3600),
        ..Default::default()
    };
    flush(&engine, |e| e.apply(&key(1), &deletion).expect("tombstone"));
    flush(&engine, |e| e.apply(&key(2), &deletion).expect("tombstone"));
    let services = Services::new();
    compact(&engine, &generations(&engine), &services.context());
    assert_eq!(tombstones(&engine), 2, "unrepaired: both kept");
    let merged = &engine.view().sstables[0];
    assert_eq!(merged.sstable.repair(), RepairMark::UNREPAIRED);

    flush(&engine, |e| e.apply(&key(3), &deletion).expect("tombstone"));
    for (live, at) in engine.view().sstables.iter().zip([700, 500]) {
        live.sstable
            .set_repair(RepairMark::repaired(at))
            .expect("mark");
    }
    compact(&engine, &generations(&engine), &services.context());
    assert_eq!(tombstones(&engine), 0, "repaired: purged");
    assert!(engine.view().sstables.is_empty(), "nothing left to write");

    let kept = TableParams {
        gc_grace_seconds: 0,
        ..TableParams::new("ks", "t").with_compaction([
            ("class", "SizeTieredCompactionStrategy"),
            ("only_purge_repaired_tombstones", "false"),
        ])
    };
    engine.set_settings(kept.settings().expect("settings"));
    flush(&engine, |e| e.apply(&key(4), &deletion).expect("tombstone"));
    flush(&engine, |e| e.apply(&key(5), &data_row()).expect("data"));
    compact(&engine, &generations(&engine), &services.context());
    assert_eq!(tombstones(&engine), 0, "the option off: purged unrepaired");
}

#[test]
fn merged_outputs_keep_the_oldest_repair_time_or_the_shared_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = LsmEngine::open(
        dir.path(),
        TableParams::new("ks", "t").settings().expect("settings"),
        false,
    )
    .expect("open");
    flush(&engine, |e| e.apply(&key(1), &data_row()).expect("data"));
    flush(&engine, |e| e.apply(&key(2), &data_row()).expect("data"));
    for (live, at) in engine.view().sstables.iter().zip([700, 500]) {
        live.sstable
            .set_repair(RepairMark::repaired(at))
            .expect("mark");
    }
    let services = Services::new();
    compact(&engine, &generations(&engine), &services.context());
    assert_eq!(
        engine.view().sstables[0].sstable.repair(),
        RepairMark::repaired(500)
    );
    let session = uuid::Uuid::from_u128(7);
    flush(&engine, |e| e.apply(&key(3), &data_row()).expect("data"));
    for live in &engine.view().sstables {
        live.sstable
            .set_repair(RepairMark::pending(session))
            .expect("mark");
    }
    compact(&engine, &generations(&engine), &services.context());
    let view = engine.view();
    assert_eq!(view.sstables.len(), 1);
    assert_eq!(
        view.sstables[0].sstable.repair(),
        RepairMark::pending(session)
    );
    assert_eq!(view.sstables[0].sstable.stats().partitions, 3);
}

fn data_row() -> PartitionUpdate {
    let mut row = Row::new(Bytes::from_static(b"c"));
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(1, Bytes::from_static(b"v")),
    )];
    PartitionUpdate {
        rows: vec![row],
        ..Default::default()
    }
}

#[test]
fn tombstones_shadowing_data_outside_the_task_are_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let params = TableParams {
        gc_grace_seconds: 0,
        ..TableParams::new("ks", "t")
    };
    let engine =
        LsmEngine::open(dir.path(), params.settings().expect("settings"), false).expect("open");
    let long_ago = now_seconds() - 3600;
    let mut row = Row::new(Bytes::from_static(b"c"));
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(1, Bytes::from_static(b"old")),
    )];
    let data = PartitionUpdate {
        rows: vec![row],
        ..Default::default()
    };
    let deletion = PartitionUpdate {
        partition_deletion: DeletionTime::new(2, long_ago),
        ..Default::default()
    };
    flush(&engine, |e| e.apply(&key(1), &data).expect("data"));
    flush(&engine, |e| e.apply(&key(1), &deletion).expect("tombstone"));
    flush(&engine, |e| e.apply(&key(2), &data).expect("other"));
    mark_repaired(&engine, 1_000);
    let services = Services::new();
    compact(&engine, &[2, 3], &services.context());
    assert_eq!(
        tombstones(&engine),
        1,
        "generation 1 still holds the shadowed row"
    );
    assert_eq!(
        engine
            .read(&key(1), &ReadFilter::all(), now_seconds())
            .expect("read"),
        None
    );

    let all: Vec<u64> = engine
        .view()
        .sstables
        .iter()
        .map(|s| s.generation())
        .collect();
    compact(&engine, &all, &services.context());
    assert_eq!(
        tombstones(&engine),
        0,
        "nothing left for the tombstone to shadow"
    );
    assert_eq!(
        engine
            .read(&key(1), &ReadFilter::all(), now_seconds())
            .expect("read"),
        None
    );
    assert!(engine
        .read(&key(2), &ReadFilter::all(), now_seconds())
        .expect("read")
        .is_some());
    assert_eq!(services.registry.history().len(), 2);
}

#[test]
fn a_running_compaction_does_not_keep_flushed_memtables_alive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let params = TableParams::new("ks", "t");
    let engine =
        LsmEngine::open(dir.path(), params.settings().expect("settings"), false).expect("open");
    let mut row = Row::new(Bytes::from_static(b"c"));
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(1, Bytes::from(vec![7u8; 4096])),
    )];
    let data = PartitionUpdate {
        rows: vec![row],
        ..Default::default()
    };
    for generation in 0..2 {
        flush(&engine, |e| {
            for n in 0..64 {
                e.apply(&key(generation * 64 + n), &data).expect("write");
            }
        });
    }
    engine.apply(&key(1000), &data).expect("unflushed write");
    let memtable = Arc::downgrade(&engine.view().active);
    let stop = AtomicBool::new(false);
    // One byte a second: the compaction stalls after its first partition until stopped.
    let (throttle, registry) = (Throttle::new(1), Registry::default());
    let context = Context {
        throttle: &throttle,
        registry: &registry,
        stop: &stop,
        now: now_seconds(),
    };
    assert!(engine.claim(&[1, 2]));
    std::thread::scope(|scope| {
        let compaction = scope.spawn(|| run(&engine, &task(vec![1, 2]), &context));
        while registry.running().is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        flush(&engine, |_| {});
        let freed = memtable.upgrade().is_none();
        stop.store(true, Ordering::Relaxed);
        assert!(compaction.join().expect("compaction thread").is_err());
        assert!(freed, "the flushed memtable outlived its flush");
    });
    engine.release(&[1, 2]);
}

fn row_of(clustering: &'static [u8], columns: &[(&str, i64)]) -> Row {
    let mut row = Row::new(Bytes::from_static(clustering));
    row.columns = columns
        .iter()
        .map(|(name, ts)| {
            let cell = Cell::live(*ts, Bytes::from_static(b"x"));
            ColumnData::simple(name.to_string(), cell)
        })
        .collect();
    row
}

/// The cells of each row read back: (clustering, [(column, timestamp)]).
fn cells(engine: &LsmEngine) -> Vec<(Bytes, Vec<(String, i64)>)> {
    let read = engine.read(&key(1), &ReadFilter::all(), now_seconds());
    let partition = read.expect("read").expect("the partition");
    let timestamp = |value: &mutation::ColumnValue| match value {
        mutation::ColumnValue::Simple(cell) => cell.timestamp,
        mutation::ColumnValue::Complex(_) => panic!("only simple cells are written"),
    };
    let named = |c: &ColumnData| (String::from_utf8_lossy(&c.name).into(), timestamp(&c.value));
    partition
        .rows
        .iter()
        .map(|r| (r.clustering.clone(), r.columns.iter().map(named).collect()))
        .collect()
}

/// Cassandra's compaction drops the cells of a dropped column written at or before the
/// drop (column `v`, dropped at 10): a row left with nothing goes, a cell written after the
/// drop (a column of that name added again) stays, other columns are untouched.
#[test]
fn compaction_purges_cells_of_dropped_columns_written_before_the_drop() {
    let dir = tempfile::tempdir().expect("tempdir");
    let params = TableParams::new("ks", "t");
    let engine =
        LsmEngine::open(dir.path(), params.settings().expect("settings"), false).expect("open");
    let old = PartitionUpdate {
        rows: vec![
            row_of(b"a", &[("v", 5), ("w", 5)]),
            row_of(b"b", &[("v", 10)]),
        ],
        ..Default::default()
    };
    let new = PartitionUpdate {
        rows: vec![row_of(b"c", &[("v", 11)])],
        ..Default::default()
    };
    flush(&engine, |e| e.apply(&key(1), &old).expect("old"));
    flush(&engine, |e| e.apply(&key(1), &new).expect("new"));
    let dropped = TableParams {
        dropped_columns: [("v".to_string(), 10)].into(),
        ..params
    };
    engine.set_settings(dropped.settings().expect("settings"));
    compact(&engine, &[1, 2], &Services::new().context());
    let written = |c: &'static [u8], columns: &[(&str, i64)]| {
        let columns = columns.iter().map(|(n, t)| (n.to_string(), *t)).collect();
        (Bytes::from_static(c), columns)
    };
    assert_eq!(
        cells(&engine),
        vec![written(b"a", &[("w", 5)]), written(b"c", &[("v", 11)])]
    );
}
