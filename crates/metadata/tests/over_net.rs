//! Metadata services over real internode messaging (`net` on loopback TCP, ports chosen by the
//! system): the same group behaviour as on the in-memory network, through `NetTransport`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
#![cfg(feature = "net")]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{create, host, init_logs, CLUSTER};
use metadata::{
    MetadataConfig, MetadataError, MetadataService, NetTransport, NodeRecord, NodeState, RaftRole,
    Transformation,
};
use net::{Messaging, NetConfig, TokioNetwork};

struct Node {
    messaging: Arc<Messaging>,
    service: Arc<MetadataService>,
}

async fn messaging(i: usize) -> Arc<Messaging> {
    let config = NetConfig::new(CLUSTER, host(i), "127.0.0.1:0".parse().unwrap());
    Messaging::start(config, Arc::new(TokioNetwork))
        .await
        .unwrap()
}

fn record(i: usize, messaging: &Messaging) -> NodeRecord {
    let addr = messaging.local();
    NodeRecord {
        host_id: host(i),
        addr,
        native: std::net::SocketAddr::new(addr.ip(), 9042),
        dc: "dc1".to_string(),
        rack: "rack1".to_string(),
        tokens: vec![i as i64 * 100],
        state: NodeState::Normal,
        release_version: "5.0.4".to_string(),
    }
}

async fn register(node: &Node, i: usize) {
    loop {
        let change = Transformation::RegisterNode {
            node: record(i, &node.messaging),
            expect_topology: node.service.current().topology_version,
        };
        match node.service.commit(change).await {
            Ok(_) => return,
            Err(MetadataError::Conflict { .. }) => continue,
            Err(e) => panic!("registering node {i}: {e}"),
        }
    }
}

async fn wait_for(what: &str, check: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !check() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_form_a_group_and_commit_over_tcp() {
    init_logs();
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut nets = Vec::new();
    for i in 0..3 {
        nets.push(messaging(i).await);
    }
    let seeds: Vec<_> = nets.iter().map(|m| m.local()).collect();
    let mut nodes = Vec::new();
    for (i, messaging) in nets.into_iter().enumerate() {
        let mut config =
            MetadataConfig::new(dirs[i].path().to_path_buf(), host(i), seeds[i], CLUSTER);
        config.seeds = seeds.clone();
        let transport = NetTransport::new(messaging.clone());
        let service = MetadataService::start(config, Some(transport), None)
            .await
            .unwrap();
        nodes.push(Node { messaging, service });
    }
    for (i, node) in nodes.iter().enumerate() {
        node.service
            .await_epoch(1, Duration::from_secs(30))
            .await
            .unwrap();
        register(node, i).await;
    }
    wait_for("three voters", || {
        nodes.iter().any(|n| {
            let status = n.service.status();
            status.role == RaftRole::Leader && status.voters.len() == 3
        })
    })
    .await;

    let (first, second) = tokio::join!(
        nodes[1].service.commit(create("shared")),
        nodes[2].service.commit(create("shared"))
    );
    assert!(first.is_ok() != second.is_ok(), "{first:?} {second:?}");

    // The leader goes away; the two others elect one and go on.
    let leader = nodes
        .iter()
        .position(|n| n.service.status().role == RaftRole::Leader)
        .unwrap();
    let gone = nodes.remove(leader);
    gone.service.shutdown().await;
    gone.messaging.shutdown().await;
    let epoch = nodes[0].service.commit(create("after")).await.unwrap();
    for node in &nodes {
        node.service
            .await_epoch(epoch, Duration::from_secs(10))
            .await
            .unwrap();
        assert!(node.service.current().schema.contains_key("shared"));
    }
    for node in nodes {
        node.service.shutdown().await;
        node.messaging.shutdown().await;
    }
}
