//! Gossip over real internode messaging (`net` on loopback TCP, real time): three nodes on
//! ephemeral ports of 127.0.0.1 find each other through a seed, a node stopping cleanly is seen
//! down at once, and a node whose messaging dies is convicted by the failure detector.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
#![cfg(feature = "net")]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use gossip::net_wire::start_over_net;
use gossip::{keys, GossipConfig, Gossiper, HostId, Membership};
use net::{Messaging, NetConfig, TokioNetwork};
use tokio::time::Instant;

const CLUSTER: &str = "Test Cluster";

struct Node {
    messaging: Arc<Messaging>,
    gossiper: Arc<Gossiper>,
}

async fn start_node(number: u128, seed: Option<SocketAddr>) -> Node {
    let host_id = HostId::from_u128(number);
    let listen = SocketAddr::from(([127, 0, 0, 1], 0));
    let messaging = Messaging::start(
        NetConfig::new(CLUSTER, host_id, listen),
        Arc::new(TokioNetwork),
    )
    .await
    .unwrap();
    let mut config = GossipConfig::new(CLUSTER, host_id, messaging.local());
    config.seeds = seed.into_iter().collect();
    config.initial_state = BTreeMap::from([(keys::DC.to_string(), "dc1".to_string())]);
    let gossiper = start_over_net(config, messaging.clone()).await.unwrap();
    Node {
        messaging,
        gossiper,
    }
}

fn sees(observer: &Node, peer: &Node, alive: bool) -> bool {
    let peer = peer.messaging.local();
    let endpoints = observer.gossiper.endpoints();
    endpoints
        .iter()
        .any(|e| e.addr == peer && e.alive == alive && e.get(keys::DC) == Some("dc1"))
}

async fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gossip_over_net_converges_and_sees_nodes_leave() {
    let one = start_node(1, None).await;
    let seed = Some(one.messaging.local());
    let two = start_node(2, seed).await;
    let three = start_node(3, seed).await;
    let nodes = [&one, &two, &three];
    wait_until(Duration::from_secs(10), "convergence", || {
        nodes.iter().all(|a| {
            nodes
                .iter()
                .all(|b| a.messaging.local() == b.messaging.local() || sees(a, b, true))
        })
    })
    .await;

    three.gossiper.shutdown().await;
    let announced = wait_until(Duration::from_secs(3), "the shutdown to be seen", || {
        sees(&one, &three, false) && sees(&two, &three, false)
    })
    .await;

    two.messaging.shutdown().await;
    let convicted = wait_until(
        Duration::from_secs(12),
        "a silent node to be convicted",
        || sees(&one, &two, false),
    )
    .await;
    eprintln!("shutdown seen in {announced:?}, silent node convicted in {convicted:?}");
    assert!(one.gossiper.stats().received > 0);
}
