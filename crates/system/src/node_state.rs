//! The query layer's view of this node ([`query::NodeState`]) over its storage: the system
//! tables it writes, the tables a schema change registers, alters and drops (snapshotted first
//! with `auto_snapshot`), truncation, read thresholds, the partition guardrails storage
//! reports to, and the in-memory tables virtual-table reads use.
use std::sync::Arc;

use mutation::clock::unique_micros;
use mutation::TableId;
use query::guardrails::PartitionGuardrails;
use query::reads::PartitionReader;
use query::{NodeState, TombstoneThresholds};
use schema::{KeyspaceMetadata, Row as ValueRow, Schema, TableMetadata};
use storage::{SnapshotTable, Storage};
use types::{CqlError, CqlResult};

use crate::partition_watch::PartitionWatch;
use crate::tables::{now_seconds, table_params};
use crate::virtual_tables::Snapshot;
use crate::{schema_store, storage_error, system_local};

/// This node's state, held in its storage.
pub struct LocalState {
    storage: Arc<Storage>,
}

impl LocalState {
    pub fn new(storage: Arc<Storage>) -> LocalState {
        LocalState { storage }
    }

    /// With `auto_snapshot`, flushes `table` and snapshots it as `<kind>-<millis>-<table>`
    /// (with its schema) before DROP or TRUNCATE removes its data, as Cassandra does.
    async fn auto_snapshot(&self, kind: &str, table: &TableMetadata) -> CqlResult<()> {
        let storage = self.storage.clone();
        if !storage.auto_snapshot() {
            return Ok(());
        }
        let tag = format!("{kind}-{}-{}", unique_micros() / 1000, table.name);
        let tables = [SnapshotTable {
            id: TableId(table.id),
            schema: Some(schema::describe_table(table, true)),
        }];
        tokio::task::spawn_blocking(move || storage.snapshot(&tag, &tables))
            .await
            .map_err(|e| CqlError::Server(format!("snapshot task failed: {e}")))?
            .map_err(storage_error)
    }

    /// Snapshots (with `auto_snapshot`) and drops tables from storage; a table storage no
    /// longer has (an earlier attempt dropped it) is skipped.
    async fn drop_tables(
        &self,
        tables: impl Iterator<Item = &Arc<TableMetadata>>,
    ) -> CqlResult<()> {
        for table in tables {
            let id = TableId(table.id);
            if !self.storage.has_table(id) {
                continue;
            }
            self.auto_snapshot("dropped", table).await?;
            self.storage.drop_table(id).await.map_err(storage_error)?;
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl NodeState for LocalState {
    async fn save_tokens(&self, schema: &Schema, tokens: &[i64]) -> CqlResult<()> {
        system_local::save_tokens(&self.storage, schema, tokens).await
    }

    async fn save_schema_version(&self, schema: &Schema) -> CqlResult<()> {
        system_local::save_schema_version(&self.storage, schema).await
    }

    async fn save_prepared(
        &self,
        schema: &Schema,
        id: &[u8],
        keyspace: Option<&str>,
        query: &str,
    ) -> CqlResult<()> {
        system_local::save_prepared(&self.storage, schema, id, keyspace, query).await
    }

    fn saved_prepared(&self, schema: &Schema) -> CqlResult<Vec<(Option<String>, String)>> {
        system_local::saved_prepared(&self.storage, schema)
    }

    async fn save_keyspace(&self, schema: &Schema, ks: &KeyspaceMetadata) -> CqlResult<()> {
        for (t, new) in query::changed_tables(schema, ks) {
            let (id, params) = (TableId(t.id), table_params(t));
            match new {
                true => self.storage.create_table(id, params),
                false => self.storage.alter_table(id, params),
            }
            .map_err(storage_error)?;
        }
        let ts = unique_micros();
        let system_schema = schema_store::system_schema(schema)?;
        let rows = schema_store::save_keyspace(&system_schema, ks, ts, now_seconds(ts))?;
        self.storage
            .apply_batch(rows)
            .await
            .map_err(storage_error)?;
        if let Some(before) = schema.keyspace(&ks.name) {
            let gone = before
                .tables
                .values()
                .filter(|b| ks.tables.get(&b.name).is_none_or(|t| t.id != b.id));
            self.drop_tables(gone).await?;
        }
        Ok(())
    }

    async fn drop_keyspace(&self, schema: &Schema, ks: &KeyspaceMetadata) -> CqlResult<()> {
        let ts = unique_micros();
        let system_schema = schema_store::system_schema(schema)?;
        let rows = schema_store::drop_keyspace(&system_schema, &ks.name, ts, now_seconds(ts));
        self.storage
            .apply_batch(rows)
            .await
            .map_err(storage_error)?;
        self.drop_tables(ks.tables.values()).await
    }

    fn check_table(&self, table: &TableMetadata) -> Result<(), String> {
        table_params(table).check()
    }

    async fn truncate(&self, table: &TableMetadata) -> CqlResult<()> {
        self.auto_snapshot("truncated", table).await?;
        self.storage
            .truncate(TableId(table.id))
            .await
            .map_err(|e| CqlError::Truncate(format!("Error during truncate: {e}")))
    }

    fn tombstone_thresholds(&self) -> TombstoneThresholds {
        let t = self.storage.tombstone_thresholds();
        TombstoneThresholds {
            warn: t.warn,
            failure: t.failure,
        }
    }

    fn watch_partitions(&self, guardrails: Arc<PartitionGuardrails>) {
        self.storage
            .watch_partitions(Arc::new(PartitionWatch(guardrails)));
    }

    fn in_memory(
        &self,
        table: &TableMetadata,
        rows: &[ValueRow],
    ) -> CqlResult<Box<dyn PartitionReader + Send>> {
        Ok(Box::new(Snapshot::new(table, rows)?))
    }
}
