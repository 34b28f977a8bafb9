//! `system.local`, the row drivers read to learn about the node (its identity, tokens and
//! schema version), and `system.prepared_statements`, the statements a restarted node
//! prepares again.
use std::collections::BTreeSet;

use mutation::clock::unique_micros;
use query::{NodeInfo, CQL_VERSION};
use schema::{Row as ValueRow, Schema, TableMetadata};
use storage::Storage;
use types::{CqlResult, Value};

use crate::storage_error;
use crate::tables::{now_seconds, read_all};
use schema::value_rows;

fn text(s: &str) -> Option<Value> {
    Some(Value::Text(s.to_string()))
}

/// Tokens as the `tokens set<text>` columns of `system.local` and the peers tables hold them.
pub(crate) fn tokens_value(tokens: &[i64]) -> Option<Value> {
    let tokens: BTreeSet<String> = tokens.iter().map(i64::to_string).collect();
    Some(Value::Set(tokens.into_iter().map(Value::Text).collect()))
}

/// Takes the host id and tokens an earlier start saved in `system.local`.
pub(crate) fn restore_identity(node: &mut NodeInfo, saved: &ValueRow) {
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
        Some(Value::Int(now_seconds(unique_micros()))),
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

/// Writes this node's whole `system.local` row.
pub(crate) async fn write_local(
    storage: &Storage,
    local: &TableMetadata,
    node: &NodeInfo,
    schema: &Schema,
) -> CqlResult<()> {
    let m = value_rows::insert(local, &local_row(node, schema), unique_micros())?;
    storage.apply(m).await.map_err(storage_error)
}

/// Writes some columns of the `system.local` row (when the table is defined).
async fn update_local(
    storage: &Storage,
    schema: &Schema,
    column: &str,
    value: Option<Value>,
) -> CqlResult<()> {
    let Some(local) = schema.table("system", "local") else {
        return Ok(());
    };
    let mut row = ValueRow::new();
    row.insert("key".into(), text("local"));
    row.insert(column.into(), value);
    let m = value_rows::insert(local, &row, unique_micros())?;
    storage.apply(m).await.map_err(storage_error)
}

/// Records this node's tokens in `system.local`.
pub async fn save_tokens(storage: &Storage, schema: &Schema, tokens: &[i64]) -> CqlResult<()> {
    update_local(storage, schema, "tokens", tokens_value(tokens)).await
}

/// Records a new schema version in `system.local` after a schema change.
pub async fn save_schema_version(storage: &Storage, schema: &Schema) -> CqlResult<()> {
    let version = Some(Value::Uuid(schema.version()));
    update_local(storage, schema, "schema_version", version).await
}

/// Records a prepared statement so a restarted node still knows its id.
pub async fn save_prepared(
    storage: &Storage,
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
    storage.apply(m).await.map_err(storage_error)
}

/// The (keyspace, query) pairs saved by [`save_prepared`].
pub fn saved_prepared(
    storage: &Storage,
    schema: &Schema,
) -> CqlResult<Vec<(Option<String>, String)>> {
    let Some(table) = schema.table("system", "prepared_statements") else {
        return Ok(Vec::new());
    };
    let rows = read_all(storage, table, now_seconds(unique_micros()))?;
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
