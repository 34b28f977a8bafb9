//! Start-up: registers the system tables, replays the commit log, loads the schema from
//! `system_schema`, registers the user tables and replays again (replay is idempotent), then
//! identifies the node from `system.local` (or records it there on first start) and starts the
//! query processor over this node's state.
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use coordinator::Coordinator;
use metadata::{MetadataConfig, MetadataService};
use mutation::clock::unique_micros;
use query::virtual_tables::VirtualTables;
use query::{NodeInfo, QueryProcessor};
use schema::{system_keyspaces, KeyspaceMetadata, Schema};
use storage::Storage;
use types::{CqlError, CqlResult};
use uuid::Uuid;

use crate::node_state::LocalState;
use crate::storage_error;
use crate::system_local::{restore_identity, write_local};
use crate::tables::{all_tables, now_seconds, read_all, register};
use crate::{schema_store, virtual_tables};

/// Opens the node's data and starts the query processor on it.
pub async fn start(
    coordinator: Arc<Coordinator>,
    storage: Arc<Storage>,
    node: NodeInfo,
) -> CqlResult<Arc<QueryProcessor>> {
    let (schema, node) = open(&coordinator, &storage, node).await?;
    let tables = VirtualTables::new().with(virtual_tables::tables(&storage));
    let state = Arc::new(LocalState::new(storage));
    Ok(QueryProcessor::start(coordinator, state, schema, node, tables).await)
}

/// A processor for a node that runs alone, with a one-member metadata group of its own kept
/// in `metadata_dir` (the server's path without seeds; tests and tools use it directly).
pub async fn start_alone(
    coordinator: Arc<Coordinator>,
    storage: Arc<Storage>,
    node: NodeInfo,
    metadata_dir: PathBuf,
) -> CqlResult<Arc<QueryProcessor>> {
    let addr = SocketAddr::new(node.listen_address, node.storage_port);
    let cluster = node.cluster_name.clone();
    let qp = start(coordinator, storage, node).await?;
    let host_id = match qp.node().host_id {
        id if id.is_nil() => Uuid::from_u128(1),
        id => id,
    };
    let config = MetadataConfig::new(metadata_dir, host_id, addr, &cluster);
    let metadata = MetadataService::start(config, None, None)
        .await
        .map_err(|e| CqlError::Server(format!("cannot start the metadata group: {e}")))?;
    qp.attach_metadata(metadata);
    Ok(qp)
}

/// Brings the node's data up and returns the full schema and the node's identity: the host id
/// saved in `system.local`, or on a first start `node.host_id` when it is not nil (a
/// simulation's seeded id), else a random one.
async fn open(
    coord: &Coordinator,
    storage: &Storage,
    mut node: NodeInfo,
) -> CqlResult<(Schema, NodeInfo)> {
    let system: Vec<Arc<KeyspaceMetadata>> = system_keyspaces().into_iter().map(Arc::new).collect();
    register(storage, all_tables(&system))?;
    let first = storage.replay().map_err(storage_error)?;
    let now = now_seconds(unique_micros());
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
    write_local(storage, &local, &node, &schema).await?;
    Ok((schema, node))
}

/// Records the system keyspaces in `system_schema` on first start, as Cassandra lists them
/// there too.
async fn save_system_keyspaces(storage: &Storage, schema: &Schema) -> CqlResult<()> {
    let system_schema = schema_store::system_schema(schema)?;
    let ts = unique_micros();
    let now = now_seconds(ts);
    let mut mutations = Vec::new();
    for ks in schema
        .keyspaces()
        .values()
        .filter(|k| schema::is_system_keyspace(&k.name))
    {
        mutations.extend(schema_store::save_keyspace(&system_schema, ks, ts, now)?);
    }
    storage.apply_batch(mutations).await.map_err(storage_error)
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use crate::testing::local_node_as;

    #[tokio::test]
    async fn a_first_start_takes_the_given_host_id_and_a_restart_keeps_it() {
        let dir = tempfile::tempdir().expect("a directory");
        let given = Uuid::from_u128(0x5eed);
        let (qp, storage) = local_node_as(dir.path(), given).await.expect("it starts");
        assert_eq!(qp.node().host_id, given);
        drop((qp, storage));
        let (again, _) = local_node_as(dir.path(), Uuid::from_u128(7))
            .await
            .expect("it restarts");
        assert_eq!(again.node().host_id, given);
    }

    #[tokio::test]
    async fn a_first_start_without_one_draws_a_random_host_id() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (first, _) = local_node_as(a.path(), Uuid::nil())
            .await
            .expect("it starts");
        let (second, _) = local_node_as(b.path(), Uuid::nil())
            .await
            .expect("it starts");
        assert!(!first.node().host_id.is_nil());
        assert_ne!(first.node().host_id, second.node().host_id);
    }
}
