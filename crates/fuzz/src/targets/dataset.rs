//! The data the storage targets write through a real `Storage` before corrupting its files:
//! narrow and wide partitions, static rows, range tombstones, collections and TTLs, each
//! partition holding a row whose value names its key, so what is read back can be checked.

use std::ops::Bound;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use mutation::{
    Cell, ColumnData, DeletionTime, Mutation, PartitionKey, PartitionUpdate, RangeTombstone, Row,
    TableId,
};
use storage::{Storage, StorageConfig, TableParams};
use uuid::Uuid;

pub const TABLE: TableId = TableId(Uuid::from_u128(0xf022));

pub fn key(n: usize) -> PartitionKey {
    PartitionKey {
        token: n as i64 * 1_000 - 50_000,
        key: Bytes::from(format!("key-{n:05}")),
    }
}

/// The value of partition `n`'s first row.
pub fn value(n: usize) -> Bytes {
    Bytes::from(format!("value-{n:05}-{}", "v".repeat(n % 7 * 40)))
}

pub fn clustering(i: usize) -> Bytes {
    Bytes::from(format!("c{i:05}"))
}

/// Partition `n`: `rows` rows, the first holding [`value`]; every fifth partition has a
/// static row, a range tombstone, a collection and an expiring cell.
pub fn mutation(n: usize, rows: usize) -> Mutation {
    let mut update = PartitionUpdate::default();
    for i in 0..rows.max(1) {
        let mut row = Row::new(clustering(i));
        let v = if i == 0 {
            value(n)
        } else {
            Bytes::from(format!("{n}-{i}-{}", "r".repeat(60)))
        };
        row.columns
            .push(ColumnData::simple("v", Cell::live(1_000 + i as i64, v)));
        update.rows.push(row);
    }
    if n.is_multiple_of(5) {
        let mut fixed = Row::new(Bytes::new());
        fixed.columns.push(ColumnData::simple(
            "s",
            Cell::live(5, Bytes::from_static(b"static")),
        ));
        update.static_row = Some(fixed);
        update.range_tombstones.push(RangeTombstone {
            start: Bound::Included(clustering(rows + 1)),
            end: Bound::Excluded(clustering(rows + 3)),
            deletion: DeletionTime::new(7, 1_700_000_000),
        });
        let cells = (0..3)
            .map(|i| Cell::live(9, Bytes::from(vec![i; 3])).with_path(Bytes::from(vec![i])))
            .collect();
        let row = &mut update.rows[0];
        row.columns
            .insert(0, ColumnData::complex("m", DeletionTime::LIVE, cells));
        row.columns.push(ColumnData::simple(
            "t",
            Cell::expiring(11, 3_600, 1_700_000_000, Bytes::from_static(b"ttl")),
        ));
    }
    Mutation {
        table: TABLE,
        key: key(n),
        update,
    }
}

/// Opens a `Storage` under `dir` (data in `dir/data`, the commit log in `dir/commitlog`)
/// with the fuzz table, compressed as `compression` says.
pub fn open(
    dir: &Path,
    configure: impl FnOnce(&mut StorageConfig),
    compression: &[(&str, &str)],
) -> storage::Result<Storage> {
    let mut config = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    configure(&mut config);
    let storage = Storage::open(config)?;
    let mut params = TableParams::new("fuzz", "t");
    params.compression = compression
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    storage.create_table(TABLE, params)?;
    Ok(storage)
}

/// Applies `mutations` one at a time, each acknowledged before the next.
pub fn write(
    storage: &Storage,
    mutations: impl IntoIterator<Item = Mutation>,
) -> storage::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| storage::StorageError::io(Path::new("runtime"), e))?;
    mutations
        .into_iter()
        .try_for_each(|m| runtime.block_on(storage.apply(m)))
}

/// Every file under `dir` whose name ends with `suffix`, recursively.
pub fn find(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(find(&path, suffix));
        } else if path.to_string_lossy().ends_with(suffix) {
            found.push(path);
        }
    }
    found.sort();
    found
}
