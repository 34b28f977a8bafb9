//! A query processor of one node that runs alone, on storage in a directory and with nothing
//! else: for the tests of this crate and the fuzz targets that execute statements.

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::sync::Arc;

use coordinator::{Coordinator, Timeouts};
use query::{NodeInfo, QueryProcessor, RELEASE_VERSION};
use storage::{Storage, StorageConfig};
use types::request::QueryOptions;
use types::{CqlError, CqlResult};

/// Opens storage under `dir` (`data/`, `commitlog/`, `metadata/`) and starts a processor on
/// it ([`start_alone`](crate::start_alone)), for a node at 127.0.0.1 owning token 0; also
/// returns the storage.
pub async fn local_node(dir: &Path) -> CqlResult<(Arc<QueryProcessor>, Arc<Storage>)> {
    local_node_as(dir, uuid::Uuid::from_u128(1)).await
}

/// A [`local_node`] whose first start takes `host_id` (nil: a random one).
pub async fn local_node_as(
    dir: &Path,
    host_id: uuid::Uuid,
) -> CqlResult<(Arc<QueryProcessor>, Arc<Storage>)> {
    let config = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    let storage = Storage::open(config)
        .map_err(|e| CqlError::Server(format!("storage does not open: {e}")))?;
    let storage = Arc::new(storage);
    let local = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let endpoint = ring::Endpoint {
        addr: local,
        datacenter: "datacenter1".into(),
        rack: "rack1".into(),
        host_id: *host_id.as_bytes(),
    };
    let coordinator = Coordinator::new(storage.clone(), endpoint, Timeouts::default());
    let info = NodeInfo {
        cluster_name: "Test Cluster".into(),
        listen_address: local,
        rpc_address: local,
        native_port: 9042,
        storage_port: 7000,
        data_center: "datacenter1".into(),
        rack: "rack1".into(),
        release_version: RELEASE_VERSION.into(),
        tokens: vec![0],
        host_id,
    };
    let metadata = dir.join("metadata");
    let qp = crate::start_alone(Arc::new(coordinator), storage.clone(), info, metadata).await?;
    Ok((qp, storage))
}

/// The processor of a [`local_node`].
pub async fn local_processor(dir: &Path) -> CqlResult<Arc<QueryProcessor>> {
    Ok(local_node(dir).await?.0)
}

/// A [`local_processor`] with keyspace `ks` (SimpleStrategy, replication factor 1).
pub async fn processor_with_ks(dir: &Path) -> CqlResult<Arc<QueryProcessor>> {
    let qp = local_processor(dir).await?;
    let keyspace = "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}";
    run_in_ks(&qp, keyspace).await?;
    Ok(qp)
}

/// Runs `text` with `ks` as the session's keyspace; the result is dropped.
pub async fn run_in_ks(qp: &QueryProcessor, text: &str) -> CqlResult<()> {
    qp.query(Some("ks"), text, QueryOptions::default())
        .await
        .map(drop)
}
