//! `system.peers` and `system.peers_v2`: the other nodes of the cluster as drivers read them to
//! discover the ring. The node rewrites them from the cluster metadata log (identity, location,
//! tokens) and gossip (versions) whenever either changes.
use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

use mutation::clock::unique_micros;
use schema::{Row as ValueRow, Schema};
use storage::Storage;
use types::{CqlError, CqlResult, Value};
use uuid::Uuid;

use crate::storage_error;
use crate::system_local::tokens_value;
use crate::tables::{now_seconds, read_all};
use schema::value_rows;

/// One other node of the cluster, as the peers tables describe it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerInfo {
    /// Its internode address (listen_address:storage_port).
    pub peer: SocketAddr,
    pub host_id: Uuid,
    pub data_center: String,
    pub rack: String,
    /// Where drivers reach it (rpc_address:native_transport_port).
    pub native: SocketAddr,
    pub tokens: Vec<i64>,
    /// From gossip; `None` until the node has been heard from.
    pub release_version: Option<String>,
    pub schema_version: Option<Uuid>,
}

/// Makes the peers tables of `schema` list exactly `peers`: rows of nodes no longer among them
/// are deleted, the others written.
pub async fn record(storage: &Storage, schema: &Schema, peers: &[PeerInfo]) -> CqlResult<()> {
    let table = |name: &str| {
        schema
            .table("system", name)
            .cloned()
            .ok_or_else(|| CqlError::Server(format!("system.{name} is not defined")))
    };
    let (v1, v2) = (table("peers")?, table("peers_v2")?);
    let ts = unique_micros();
    let now = now_seconds(ts);
    let keep: BTreeSet<IpAddr> = peers.iter().map(|p| p.peer.ip()).collect();
    let mut mutations = Vec::new();
    for row in read_all(storage, &v1, now)? {
        if let Some(Some(Value::Inet(addr))) = row.get("peer") {
            if !keep.contains(addr) {
                let key = [Value::Inet(*addr).to_bytes()];
                mutations.push(value_rows::delete_partition(&v1, &key, ts, now));
                mutations.push(value_rows::delete_partition(&v2, &key, ts, now));
            }
        }
    }
    for peer in peers {
        mutations.push(value_rows::insert(&v1, &peers_row(peer), ts)?);
        mutations.push(value_rows::insert(&v2, &peers_v2_row(peer), ts)?);
    }
    storage.apply_batch(mutations).await.map_err(storage_error)
}

fn common_columns(peer: &PeerInfo) -> ValueRow {
    let mut row = ValueRow::new();
    row.insert("peer".into(), Some(Value::Inet(peer.peer.ip())));
    row.insert(
        "data_center".into(),
        Some(Value::Text(peer.data_center.clone())),
    );
    row.insert("host_id".into(), Some(Value::Uuid(peer.host_id)));
    row.insert("preferred_ip".into(), None);
    row.insert("rack".into(), Some(Value::Text(peer.rack.clone())));
    row.insert(
        "release_version".into(),
        peer.release_version.clone().map(Value::Text),
    );
    row.insert(
        "schema_version".into(),
        peer.schema_version.map(Value::Uuid),
    );
    row.insert("tokens".into(), tokens_value(&peer.tokens));
    row
}

fn peers_row(peer: &PeerInfo) -> ValueRow {
    let mut row = common_columns(peer);
    row.insert("rpc_address".into(), Some(Value::Inet(peer.native.ip())));
    row
}

fn peers_v2_row(peer: &PeerInfo) -> ValueRow {
    let mut row = common_columns(peer);
    row.insert(
        "peer_port".into(),
        Some(Value::Int(i32::from(peer.peer.port()))),
    );
    row.insert("native_address".into(), Some(Value::Inet(peer.native.ip())));
    row.insert(
        "native_port".into(),
        Some(Value::Int(i32::from(peer.native.port()))),
    );
    row.insert("preferred_port".into(), None);
    row
}
