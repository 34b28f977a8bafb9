//! Connecting with the `scylla` driver: its default load balancing is token-aware, requests
//! are multiplexed over a small pool of connections per host (`-mode connectionsPerHost=`),
//! with LZ4/Snappy compression and credentials from `-mode`.

use std::num::NonZeroUsize;

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::frame::Compression;
use scylla::statement::Consistency;

use crate::settings::Mode;

/// `host` or `host:port` words into driver contact points.
pub fn contact_points(nodes: &[String], port: u16) -> Vec<String> {
    nodes
        .iter()
        .map(|n| {
            if n.contains(':') {
                n.clone()
            } else {
                format!("{n}:{port}")
            }
        })
        .collect()
}

pub async fn connect(nodes: &[String], port: u16, mode: &Mode) -> Result<Session, String> {
    let mut b = SessionBuilder::new().known_nodes(contact_points(nodes, port));
    b = b.compression(match mode.compression.as_deref() {
        Some("lz4") => Some(Compression::Lz4),
        Some("snappy") => Some(Compression::Snappy),
        _ => None,
    });
    if let (Some(u), Some(p)) = (&mode.user, &mode.password) {
        b = b.user(u, p);
    }
    let per_host =
        NonZeroUsize::new(mode.connections_per_host as usize).unwrap_or(NonZeroUsize::MIN);
    b = b.pool_size(PoolSize::PerHost(per_host));
    b.build()
        .await
        .map_err(|e| format!("Failed to connect to {nodes:?}: {e}"))
}

/// The lines cassandra-stress prints once connected.
pub async fn describe(session: &Session, mode: &Mode) -> Vec<String> {
    let name = cluster_name(session)
        .await
        .unwrap_or_else(|| "unknown".into());
    let mut out = vec![format!(
        "Connected to cluster: {name}, max pending requests per connection {}, max connections per host {}",
        mode.max_pending, mode.connections_per_host
    )];
    for node in session.get_cluster_state().get_nodes_info() {
        let addr = node.address;
        out.push(format!(
            "Datacenter: {}; Host: {}/{}; Rack: {}",
            node.datacenter.as_deref().unwrap_or("null"),
            addr.ip(),
            addr,
            node.rack.as_deref().unwrap_or("null")
        ));
    }
    out
}

async fn cluster_name(session: &Session) -> Option<String> {
    let result = session
        .query_unpaged("SELECT cluster_name FROM system.local", ())
        .await
        .ok()?;
    let rows = result.into_rows_result().ok()?;
    let (name,): (String,) = rows.first_row().ok()?;
    Some(name)
}

/// A cassandra-stress consistency level name as the driver's.
pub fn consistency(name: &str) -> Consistency {
    level(name).unwrap_or(Consistency::LocalOne)
}

/// A consistency level name (upper case) as the driver's; `None` for an unknown name.
pub fn level(name: &str) -> Option<Consistency> {
    Some(match name {
        "ANY" => Consistency::Any,
        "ONE" => Consistency::One,
        "TWO" => Consistency::Two,
        "THREE" => Consistency::Three,
        "QUORUM" => Consistency::Quorum,
        "ALL" => Consistency::All,
        "LOCAL_QUORUM" => Consistency::LocalQuorum,
        "EACH_QUORUM" => Consistency::EachQuorum,
        "SERIAL" => Consistency::Serial,
        "LOCAL_SERIAL" => Consistency::LocalSerial,
        "LOCAL_ONE" => Consistency::LocalOne,
        _ => return None,
    })
}
