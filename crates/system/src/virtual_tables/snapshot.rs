//! A virtual table's rows at one moment in an in-memory engine, read by a SELECT as a stored
//! table is ([`query::NodeState::in_memory`]).
use std::cmp::Ordering;
use std::ops::Bound;

use bytes::Bytes;
use mutation::{KeyRange, Partition, PartitionKey, PartitionPosition, ReadFilter, ReadStats};
use query::reads::{PartitionReader, ReadScope};
use schema::{Row as ValueRow, TableMetadata};
use storage::{MemtableEngine, TableEngine};
use types::comparable::compare;
use types::{CqlError, CqlResult, CqlType};

use schema::value_rows;

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

#[cfg(test)]
mod tests {
    use super::*;
    use query::virtual_tables::text;

    fn names(partitions: &[mutation::Partition]) -> Vec<String> {
        partitions
            .iter()
            .map(|p| String::from_utf8_lossy(&p.key.key).into_owned())
            .collect()
    }

    #[tokio::test]
    async fn snapshots_scan_in_key_order_and_resume_after_a_key() -> CqlResult<()> {
        use mutation::{KeyRange, PartitionPosition, ReadFilter, ReadStats, TableId};
        use types::Consistency;

        let table = query::virtual_tables::lookup("system_views", "settings")?
            .ok_or(CqlError::invalid("missing"))?;
        let rows: Vec<ValueRow> = ["num_tokens", "auto_snapshot", "cluster_name", "rpc_address"]
            .iter()
            .map(|n| query::virtual_tables::row(vec![("name", text(n)), ("value", text("v"))]))
            .collect();
        let snapshot = Snapshot::new(&table, &rows)?;
        let scope = ReadScope {
            keyspace: "system_views",
            table: TableId(table.id),
            cl: Consistency::One,
            now: 0,
            trace: None,
            policy: &coordinator::ReadPolicy::default(),
        };
        let (snapshot, scope) = (&snapshot, &scope);
        let scan = |range: KeyRange, limit: usize| async move {
            let mut stats = ReadStats::default();
            let filter = ReadFilter::all();
            snapshot
                .scan(scope, &range, &filter, limit, &mut stats)
                .await
        };
        let all = scan(KeyRange::all(), 10).await?;
        assert_eq!(
            names(&all),
            ["auto_snapshot", "cluster_name", "num_tokens", "rpc_address"]
        );
        let resumed = KeyRange {
            start: std::ops::Bound::Excluded(PartitionPosition::Key(all[1].key.clone())),
            end: std::ops::Bound::Unbounded,
        };
        assert_eq!(names(&scan(resumed.clone(), 1).await?), ["num_tokens"]);
        assert_eq!(
            names(&scan(resumed, 10).await?),
            ["num_tokens", "rpc_address"]
        );
        Ok(())
    }
}
