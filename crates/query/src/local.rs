//! This node's own records: start-up (register the system tables, replay the commit log,
//! load the schema) and the `system.local` row drivers read to learn about the node.
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::sync::Arc;

use coordinator::Coordinator;
use mutation::{KeyRange, ReadFilter, TableId};
use schema::{system_keyspaces, KeyspaceMetadata, Row as ValueRow, Schema, TableMetadata};
use storage::{Storage, TableParams};
use types::{CqlError, CqlResult, Value};
use uuid::Uuid;

use crate::exec::unique_micros;
use crate::schema_store;
use schema::value_rows;

/// What this node is, as `system.local` reports it.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    pub cluster_name: String,
    pub listen_address: IpAddr,
    pub rpc_address: IpAddr,
    pub native_port: u16,
    pub storage_port: u16,
    pub data_center: String,
    pub rack: String,
    pub release_version: String,
    /// This node's tokens: `initial_token`, else the ones saved in `system.local` by an
    /// earlier start; empty until the node takes its place in the ring.
    pub tokens: Vec<i64>,
    /// Set from `system.local` (or generated on first start).
    pub host_id: Uuid,
}

/// The Cassandra release whose behaviour Helenus reproduces (drivers read it).
pub const RELEASE_VERSION: &str = "5.0.4";
pub const CQL_VERSION: &str = "3.4.7";

fn storage_error(e: storage::StorageError) -> CqlError {
    CqlError::Server(format!("storage error: {e}"))
}

/// Every live row of `table` in this node's storage, as column-name maps.
pub(crate) fn read_all(
    storage: &Storage,
    table: &TableMetadata,
    now: i32,
) -> CqlResult<Vec<ValueRow>> {
    let partitions = storage
        .scan(
            TableId(table.id),
            &KeyRange::all(),
            &ReadFilter::all(),
            now,
            usize::MAX,
        )
        .map_err(|e| CqlError::Server(format!("reading {}.{}: {e}", table.keyspace, table.name)))?;
    value_rows::rows_of(table, &partitions, now)
}

/// The storage parameters of a table (compaction, compression, filters, grace periods, the
/// dropped columns compaction purges).
pub(crate) fn table_params(t: &TableMetadata) -> TableParams {
    TableParams {
        keyspace: t.keyspace.clone(),
        name: t.name.clone(),
        compaction: t.options.compaction.clone(),
        compression: t.options.compression.clone(),
        bloom_filter_fp_chance: t.options.bloom_filter_fp_chance,
        gc_grace_seconds: t.options.gc_grace_seconds,
        default_time_to_live: t.options.default_time_to_live,
        dropped_columns: t
            .dropped_columns
            .iter()
            .map(|(name, dropped)| (name.clone(), dropped.dropped_time_micros))
            .collect(),
    }
}

fn register(storage: &Storage, tables: impl Iterator<Item = Arc<TableMetadata>>) -> CqlResult<()> {
    for t in tables {
        storage
            .create_table(TableId(t.id), table_params(&t))
            .map_err(storage_error)?;
    }
    Ok(())
}

fn all_tables(
    keyspaces: &[Arc<KeyspaceMetadata>],
) -> impl Iterator<Item = Arc<TableMetadata>> + '_ {
    keyspaces.iter().flat_map(|k| k.tables.values().cloned())
}

/// Brings the node's data up and returns the full schema and the node's identity.
pub async fn bootstrap(coord: &Coordinator, mut node: NodeInfo) -> CqlResult<(Schema, NodeInfo)> {
    let storage = coord.storage();
    let system: Vec<Arc<KeyspaceMetadata>> = system_keyspaces().into_iter().map(Arc::new).collect();
    register(storage, all_tables(&system))?;
    let first = storage.replay().map_err(storage_error)?;
    let now = (unique_micros() / 1_000_000) as i32;
    let system_schema = system
        .iter()
        .find(|k| k.name == "system_schema")
        .ok_or_else(|| CqlError::Server("system_schema keyspace missing".into()))?;
    let user = schema_store::load(storage, system_schema, now)?;
    let user_keyspaces: Vec<Arc<KeyspaceMetadata>> = user.keyspaces().values().cloned().collect();
    register(storage, all_tables(&user_keyspaces))?;
    let second = storage.replay().map_err(storage_error)?;
    storage.finish_replay();
    tracing::info!(
        "commit log replayed: {} mutations applied, {} for dropped tables skipped",
        first.mutations_applied + second.mutations_applied,
        second.mutations_skipped
    );
    let schema = Schema::new(system.into_iter().chain(user_keyspaces));
    let local = schema
        .table("system", "local")
        .cloned()
        .ok_or_else(|| CqlError::Server("system.local missing".into()))?;
    match read_all(storage, &local, now)?.into_iter().next() {
        Some(saved) => restore_identity(&mut node, &saved),
        None => save_system_keyspaces(storage, &schema).await?,
    }
    if node.host_id.is_nil() {
        node.host_id = Uuid::new_v4();
    }
    coord.set_local_tokens(node.tokens.clone());
    write_local(coord, &local, &node, &schema, unique_micros()).await?;
    Ok((schema, node))
}

/// Records the system keyspaces in `system_schema` on first start, as Cassandra lists them
/// there too.
async fn save_system_keyspaces(storage: &Storage, schema: &Schema) -> CqlResult<()> {
    let system_schema = schema
        .keyspace("system_schema")
        .ok_or_else(|| CqlError::Server("system_schema keyspace missing".into()))?;
    let ts = unique_micros();
    let now = (ts / 1_000_000) as i32;
    let mut mutations = Vec::new();
    for ks in schema
        .keyspaces()
        .values()
        .filter(|k| schema::is_system_keyspace(&k.name))
    {
        mutations.extend(schema_store::save_keyspace(system_schema, ks, ts, now)?);
    }
    storage.apply_batch(mutations).await.map_err(storage_error)
}

fn restore_identity(node: &mut NodeInfo, saved: &ValueRow) {
    if let Some(Some(Value::Uuid(id))) = saved.get("host_id") {
        node.host_id = *id;
    }
    if let Some(Some(Value::Set(tokens))) = saved.get("tokens") {
        let parsed: Vec<i64> = tokens
            .iter()
            .filter_map(|t| match t {
                Value::Text(s) => s.parse().ok(),
                _ => None,
            })
            .collect();
        if !parsed.is_empty() {
            node.tokens = parsed;
        }
    }
}

fn text(s: &str) -> Option<Value> {
    Some(Value::Text(s.to_string()))
}

/// Tokens as the `tokens set<text>` columns of `system.local` and the peers tables hold them.
pub(crate) fn tokens_value(tokens: &[i64]) -> Option<Value> {
    let tokens: BTreeSet<String> = tokens.iter().map(i64::to_string).collect();
    Some(Value::Set(tokens.into_iter().map(Value::Text).collect()))
}

fn local_row(node: &NodeInfo, schema: &Schema) -> ValueRow {
    let mut row = ValueRow::new();
    row.insert("key".into(), text("local"));
    row.insert("bootstrapped".into(), text("COMPLETED"));
    row.insert(
        "broadcast_address".into(),
        Some(Value::Inet(node.listen_address)),
    );
    row.insert(
        "broadcast_port".into(),
        Some(Value::Int(node.storage_port as i32)),
    );
    row.insert("cluster_name".into(), text(&node.cluster_name));
    row.insert("cql_version".into(), text(CQL_VERSION));
    row.insert("data_center".into(), text(&node.data_center));
    row.insert(
        "gossip_generation".into(),
        Some(Value::Int((unique_micros() / 1_000_000) as i32)),
    );
    row.insert("host_id".into(), Some(Value::Uuid(node.host_id)));
    row.insert(
        "listen_address".into(),
        Some(Value::Inet(node.listen_address)),
    );
    row.insert(
        "listen_port".into(),
        Some(Value::Int(node.storage_port as i32)),
    );
    row.insert("native_protocol_version".into(), text("5"));
    row.insert(
        "partitioner".into(),
        text("org.apache.cassandra.dht.Murmur3Partitioner"),
    );
    row.insert("rack".into(), text(&node.rack));
    row.insert("release_version".into(), text(&node.release_version));
    row.insert("rpc_address".into(), Some(Value::Inet(node.rpc_address)));
    row.insert("rpc_port".into(), Some(Value::Int(node.native_port as i32)));
    row.insert("schema_version".into(), Some(Value::Uuid(schema.version())));
    row.insert("tokens".into(), tokens_value(&node.tokens));
    row
}

async fn write_local(
    coord: &Coordinator,
    local: &TableMetadata,
    node: &NodeInfo,
    schema: &Schema,
    ts: i64,
) -> CqlResult<()> {
    let m = value_rows::insert(local, &local_row(node, schema), ts)?;
    coord.storage().apply(m).await.map_err(storage_error)
}

/// Records this node's tokens in `system.local`.
pub async fn save_tokens(coord: &Coordinator, schema: &Schema, tokens: &[i64]) -> CqlResult<()> {
    let Some(local) = schema.table("system", "local") else {
        return Ok(());
    };
    let mut row = ValueRow::new();
    row.insert("key".into(), text("local"));
    row.insert("tokens".into(), tokens_value(tokens));
    let m = value_rows::insert(local, &row, unique_micros())?;
    coord.storage().apply(m).await.map_err(storage_error)
}

/// Records a new schema version in `system.local` after a schema change.
pub async fn save_schema_version(coord: &Coordinator, schema: &Schema, ts: i64) -> CqlResult<()> {
    let Some(local) = schema.table("system", "local") else {
        return Ok(());
    };
    let mut row = ValueRow::new();
    row.insert("key".into(), text("local"));
    row.insert("schema_version".into(), Some(Value::Uuid(schema.version())));
    let m = value_rows::insert(local, &row, ts)?;
    coord.storage().apply(m).await.map_err(storage_error)
}

/// Records a prepared statement so a restarted node still knows its id.
pub async fn save_prepared(
    coord: &Coordinator,
    schema: &Schema,
    id: &[u8],
    keyspace: Option<&str>,
    query: &str,
) -> CqlResult<()> {
    let Some(table) = schema.table("system", "prepared_statements") else {
        return Ok(());
    };
    let mut row = ValueRow::new();
    row.insert(
        "prepared_id".into(),
        Some(Value::Blob(bytes::Bytes::copy_from_slice(id))),
    );
    row.insert(
        "logged_keyspace".into(),
        keyspace.map(|k| Value::Text(k.to_string())),
    );
    row.insert("query_string".into(), text(query));
    let m = value_rows::insert(table, &row, unique_micros())?;
    coord.storage().apply(m).await.map_err(storage_error)
}

/// The (keyspace, query) pairs saved by [`save_prepared`].
pub fn saved_prepared(
    coord: &Coordinator,
    schema: &Schema,
) -> CqlResult<Vec<(Option<String>, String)>> {
    let Some(table) = schema.table("system", "prepared_statements") else {
        return Ok(Vec::new());
    };
    let now = (unique_micros() / 1_000_000) as i32;
    let rows = read_all(coord.storage(), table, now)?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            let query = match r.get("query_string") {
                Some(Some(Value::Text(q))) => q.clone(),
                _ => return None,
            };
            let keyspace = match r.get("logged_keyspace") {
                Some(Some(Value::Text(k))) => Some(k.clone()),
                _ => None,
            };
            Some((keyspace, query))
        })
        .collect())
}
