//! Where a SELECT reads partitions from: the replicas through the coordinator, or a
//! [`Snapshot`] of a virtual table's rows held in an in-memory engine, so virtual tables get
//! the same restrictions, filtering, limits and paging as stored ones.
use std::cmp::Ordering;
use std::ops::Bound;

use bytes::Bytes;
use coordinator::Coordinator;
pub use coordinator::ReadScope;
use mutation::{KeyRange, Partition, PartitionKey, PartitionPosition, ReadFilter, ReadStats};
use schema::{Row as ValueRow, TableMetadata};
use storage::{MemtableEngine, TableEngine};
use types::comparable::compare;
use types::{CqlError, CqlResult, CqlType};

use schema::value_rows;

/// The two reads a SELECT makes.
#[async_trait::async_trait]
pub trait PartitionReader: Sync {
    /// The live content of partition `key`.
    async fn read(
        &self,
        scope: &ReadScope,
        key: &PartitionKey,
        filter: &ReadFilter,
        stats: &mut ReadStats,
    ) -> CqlResult<Option<Partition>>;

    /// Up to `limit` live partitions of `range`, in token order.
    async fn scan(
        &self,
        scope: &ReadScope,
        range: &KeyRange,
        filter: &ReadFilter,
        limit: usize,
        stats: &mut ReadStats,
    ) -> CqlResult<Vec<Partition>>;
}

#[async_trait::async_trait]
impl PartitionReader for Coordinator {
    async fn read(
        &self,
        s: &ReadScope,
        key: &PartitionKey,
        filter: &ReadFilter,
        stats: &mut ReadStats,
    ) -> CqlResult<Option<Partition>> {
        Coordinator::read(self, s, key, filter, stats).await
    }

    async fn scan(
        &self,
        s: &ReadScope,
        range: &KeyRange,
        filter: &ReadFilter,
        limit: usize,
        stats: &mut ReadStats,
    ) -> CqlResult<Vec<Partition>> {
        Coordinator::scan(self, s, range, filter, limit, stats).await
    }
}

/// A virtual table's rows at one moment, in an in-memory engine. Scans return partitions in
/// the order of their key values (Cassandra keeps virtual tables in a local, key-ordered
/// partitioner), not in token order. Consistency levels do not apply (the data is this
/// node's own), as in Cassandra.
pub struct Snapshot {
    engine: MemtableEngine,
    /// Every partition key, in key-value order.
    keys: Vec<PartitionKey>,
}

impl Snapshot {
    /// Holds `rows` of `table`; each row needs its full primary key.
    pub fn new(table: &TableMetadata, rows: &[ValueRow]) -> CqlResult<Snapshot> {
        let engine = MemtableEngine::new();
        let mut keys: Vec<(Vec<Bytes>, PartitionKey)> = Vec::new();
        for row in rows {
            let mutation = value_rows::insert(table, row, 0)?;
            engine
                .apply(&mutation.key, &mutation.update)
                .map_err(snapshot_error)?;
            let values = table
                .partition_key_columns()
                .map(|c| row.get(&c.name).cloned().flatten().map(|v| v.to_bytes()))
                .collect::<Option<Vec<Bytes>>>()
                .unwrap_or_default();
            keys.push((values, mutation.key));
        }
        let types: Vec<&CqlType> = table.partition_key_columns().map(|c| &c.ty).collect();
        keys.sort_by(|a, b| key_order(&types, &a.0, &b.0));
        keys.dedup_by(|a, b| a.1 == b.1);
        Ok(Snapshot {
            engine,
            keys: keys.into_iter().map(|(_, key)| key).collect(),
        })
    }

    /// The keys a scan of `range` visits, in key order. A start at a key (a resumed page)
    /// starts after that key in this order; token bounds select by token.
    fn keys_in<'a>(
        &'a self,
        range: &'a KeyRange,
    ) -> Box<dyn Iterator<Item = &'a PartitionKey> + 'a> {
        match &range.start {
            Bound::Included(PartitionPosition::Key(k))
            | Bound::Excluded(PartitionPosition::Key(k)) => {
                let inclusive = matches!(range.start, Bound::Included(_));
                let at = self.keys.iter().position(|key| key == k);
                let first = at.map_or(self.keys.len(), |i| if inclusive { i } else { i + 1 });
                Box::new(
                    self.keys[first..]
                        .iter()
                        .filter(|key| range.before_end(key)),
                )
            }
            _ => Box::new(self.keys.iter().filter(|key| range.contains(key))),
        }
    }
}

/// Compares partition keys component by component, each by its type.
fn key_order(types: &[&CqlType], a: &[Bytes], b: &[Bytes]) -> Ordering {
    types
        .iter()
        .zip(a.iter().zip(b))
        .map(|(ty, (x, y))| compare(ty, x, y))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

fn snapshot_error(e: storage::StorageError) -> CqlError {
    CqlError::Server(format!("virtual table: {e}"))
}

#[async_trait::async_trait]
impl PartitionReader for Snapshot {
    async fn read(
        &self,
        scope: &ReadScope,
        key: &PartitionKey,
        filter: &ReadFilter,
        _stats: &mut ReadStats,
    ) -> CqlResult<Option<Partition>> {
        self.engine
            .read(key, filter, scope.now)
            .map_err(snapshot_error)
    }

    async fn scan(
        &self,
        scope: &ReadScope,
        range: &KeyRange,
        filter: &ReadFilter,
        limit: usize,
        _stats: &mut ReadStats,
    ) -> CqlResult<Vec<Partition>> {
        let mut found = Vec::new();
        for key in self.keys_in(range) {
            if found.len() >= limit {
                break;
            }
            let read = self.engine.read(key, filter, scope.now);
            if let Some(p) = read.map_err(snapshot_error)? {
                found.push(p);
            }
        }
        Ok(found)
    }
}
