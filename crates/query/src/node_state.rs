//! What the query layer asks of the node it runs on, beside the cluster's reads and writes
//! (which go through the coordinator): the node's own system tables, the tables it holds as
//! the schema changes, truncation, read thresholds and in-memory tables for virtual-table
//! reads. The `system` crate implements it over the node's storage; the processor only sees
//! this trait.
use std::sync::Arc;

use schema::{KeyspaceMetadata, Row as ValueRow, Schema, TableMetadata};
use types::CqlResult;

use crate::guardrails::PartitionGuardrails;
use crate::reads::PartitionReader;
use crate::tombstones::TombstoneThresholds;

#[async_trait::async_trait]
pub trait NodeState: Send + Sync {
    /// Records this node's tokens in `system.local`.
    async fn save_tokens(&self, schema: &Schema, tokens: &[i64]) -> CqlResult<()>;

    /// Records `schema`'s version in `system.local` after a schema change.
    async fn save_schema_version(&self, schema: &Schema) -> CqlResult<()>;

    /// Records a prepared statement so a restarted node still knows its id.
    async fn save_prepared(
        &self,
        schema: &Schema,
        id: &[u8],
        keyspace: Option<&str>,
        query: &str,
    ) -> CqlResult<()>;

    /// The (keyspace, query) pairs saved by [`NodeState::save_prepared`].
    fn saved_prepared(&self, schema: &Schema) -> CqlResult<Vec<(Option<String>, String)>>;

    /// Makes this node hold keyspace `ks` in place of what `schema` has: its new tables
    /// registered, changed ones altered, its `system_schema` rows written, tables it no longer
    /// has dropped (snapshotted first with `auto_snapshot`).
    async fn save_keyspace(&self, schema: &Schema, ks: &KeyspaceMetadata) -> CqlResult<()>;

    /// Removes keyspace `ks` of `schema`: its `system_schema` rows and its tables.
    async fn drop_keyspace(&self, schema: &Schema, ks: &KeyspaceMetadata) -> CqlResult<()>;

    /// Why this node could not hold `table` with its options (a compaction sub-option, a
    /// compression setting), when it could not.
    fn check_table(&self, table: &TableMetadata) -> Result<(), String>;

    /// Removes every row of `table` from this node (snapshotted first with `auto_snapshot`).
    async fn truncate(&self, table: &TableMetadata) -> CqlResult<()>;

    /// The tombstone counts at which reads warn and fail.
    fn tombstone_thresholds(&self) -> TombstoneThresholds;

    /// Has flushes and compactions report the partitions and collections they write past the
    /// guardrails' thresholds.
    fn watch_partitions(&self, guardrails: Arc<PartitionGuardrails>);

    /// `rows` of `table` held in memory, read as a stored table is (a virtual table's rows).
    fn in_memory(
        &self,
        table: &TableMetadata,
        rows: &[ValueRow],
    ) -> CqlResult<Box<dyn PartitionReader + Send>>;
}
