//! Helpers shared by the LSM tests: a node in a temporary directory, rows and reads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use mutation::{
    Cell, ColumnData, ColumnValue, DeletionTime, KeyRange, Mutation, PartitionKey, PartitionUpdate,
    ReadFilter, Row, TableId,
};
use storage::{CommitlogSync, NodeAction, Storage, StorageConfig, TableParams};
use uuid::Uuid;

pub const TABLE: TableId = TableId(Uuid::from_u128(0x7ab1e));

pub fn config(dir: &Path) -> StorageConfig {
    StorageConfig {
        sync: CommitlogSync::Batch,
        segment_size: 64 * 1024,
        ..StorageConfig::new(dir.join("data"), dir.join("commitlog"))
    }
}

/// Opens a node with `TABLE` registered under `params` and replays.
pub fn open_with(config: &StorageConfig, params: TableParams) -> Storage {
    let storage = Storage::open(config.clone()).expect("open");
    storage.create_table(TABLE, params).expect("create");
    storage.replay().expect("replay");
    storage.finish_replay();
    storage
}

pub fn open(config: &StorageConfig) -> Storage {
    open_with(config, TableParams::new("ks", "t"))
}

/// Opens with background compaction disabled from the start (`'enabled': 'false'`).
pub fn open_quiet(config: &StorageConfig) -> Storage {
    let params = TableParams::new("ks", "t").with_compaction([
        ("class", "SizeTieredCompactionStrategy"),
        ("enabled", "false"),
    ]);
    open_with(config, params)
}

pub fn key(n: u64) -> PartitionKey {
    // Spread tokens over the ring as Murmur3 would.
    let token = (n.wrapping_mul(0x9E37_79B9_7F4A_7C15)) as i64;
    PartitionKey {
        token,
        key: Bytes::from(n.to_be_bytes().to_vec()),
    }
}

/// Row `c` of partition `n` with value `value` at `ts`.
pub fn upsert(n: u64, c: u8, ts: i64, value: &str) -> Mutation {
    let mut row = Row::new(Bytes::from(vec![c]));
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(ts, Bytes::from(value.to_string())),
    )];
    Mutation {
        table: TABLE,
        key: key(n),
        update: PartitionUpdate {
            rows: vec![row],
            ..Default::default()
        },
    }
}

/// Deletes row `c` of partition `n` at `ts`, as if at second `now`.
pub fn delete_row(n: u64, c: u8, ts: i64, now: i32) -> Mutation {
    let mut row = Row::new(Bytes::from(vec![c]));
    row.deletion = DeletionTime::new(ts, now);
    Mutation {
        table: TABLE,
        key: key(n),
        update: PartitionUpdate {
            rows: vec![row],
            ..Default::default()
        },
    }
}

/// Everything live in `TABLE` as `(partition, row) -> value`.
pub fn contents(storage: &Storage) -> BTreeMap<(u64, u8), String> {
    let partitions = storage
        .scan(TABLE, &KeyRange::all(), &ReadFilter::all(), 1, usize::MAX)
        .expect("scan");
    let mut out = BTreeMap::new();
    for p in partitions {
        let n = u64::from_be_bytes(p.key.key.as_ref().try_into().expect("8-byte key"));
        for row in p.rows {
            if let Some(ColumnValue::Simple(cell)) = row.columns.first().map(|c| &c.value) {
                let value = String::from_utf8_lossy(cell.value.as_deref().unwrap_or_default());
                out.insert((n, row.clustering[0]), value.into_owned());
            }
        }
    }
    out
}

/// The live value of one row, by a point read.
pub fn value(storage: &Storage, n: u64, c: u8) -> Option<String> {
    let p = storage
        .read(TABLE, &key(n), &ReadFilter::all(), 1)
        .expect("read")?;
    let row = p.rows.into_iter().find(|r| r.clustering[0] == c)?;
    match &row.columns.first()?.value {
        ColumnValue::Simple(cell) => cell
            .value
            .as_ref()
            .map(|v| String::from_utf8_lossy(v).into_owned()),
        ColumnValue::Complex(_) => None,
    }
}

pub fn segments(config: &StorageConfig) -> Vec<PathBuf> {
    std::fs::read_dir(&config.commitlog_dir)
        .expect("list")
        .map(|e| e.expect("entry").path())
        .collect()
}

/// Files directly in the table directory (SSTable components and bookkeeping).
pub fn table_files(config: &StorageConfig) -> Vec<PathBuf> {
    let ks = config.data_dirs[0].join("ks");
    let dir = std::fs::read_dir(&ks)
        .expect("keyspace dir")
        .map(|e| e.expect("entry").path())
        .next()
        .expect("table dir");
    std::fs::read_dir(dir)
        .expect("table dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file())
        .collect()
}

/// The current time in seconds.
pub fn now() -> i32 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    i32::try_from(secs).unwrap_or(i32::MAX)
}

/// The actions the failure policies asked of the node, as a listener records them.
pub type Actions = Arc<Mutex<Vec<NodeAction>>>;

/// Records the actions the failure policies ask of the node.
pub fn listen(storage: &Storage) -> Actions {
    let actions = Actions::default();
    let sink = actions.clone();
    storage.on_failure(Arc::new(move |action, _| {
        sink.lock().expect("actions").push(action)
    }));
    actions
}

pub fn taken(actions: &Actions) -> Vec<NodeAction> {
    actions.lock().expect("actions").clone()
}
