//! Who votes on a partition: its natural replicas and, during a topology change, the pending
//! ones (which raise the quorum); LOCAL_SERIAL keeps the local datacenter's.
use std::sync::Arc;

use bytes::Bytes;
use mutation::{PartitionKey, TableId};
use paxos::Replicas;
use ring::{Token, TokenMetadata};
use storage::{StorageConfig, TableParams};
use uuid::Uuid;

use super::*;
use crate::Timeouts;

const USER: TableId = TableId(Uuid::from_u128(0xe1));

fn endpoint(last: u8, dc: &str) -> Endpoint {
    Endpoint {
        addr: IpAddr::from([127, 0, 2, last]),
        datacenter: dc.into(),
        rack: "r1".into(),
        host_id: [last; 16],
    }
}

/// A replica set of node .1 on a ring of `nodes` (tokens 100, 200, …), RF 2.
fn cell(dir: &std::path::Path, nodes: &[Endpoint]) -> PaxosCell {
    let config = StorageConfig::new(dir.join("data"), dir.join("log"));
    let storage = Arc::new(Storage::open(config).unwrap());
    let paxos = TableParams::new("system", "paxos");
    storage
        .create_table(super::super::store::table_id(), paxos)
        .unwrap();
    let topology = Arc::new(Topology::new(nodes[0].clone()));
    let mut ring = TokenMetadata::new();
    for (i, node) in nodes.iter().enumerate() {
        ring.add_endpoint(node.clone(), vec![Token(100 * (i as i64 + 1))]);
    }
    topology.set_ring(ring);
    let strategies = Arc::new(Strategies::default());
    strategies.install(crate::coordinator::strategies::simple_keyspaces(&[(
        "ks",
        2,
        &[USER],
    )]));
    PaxosCell {
        storage,
        local_endpoint: nodes[0].clone(),
        topology,
        strategies,
        attached: Arc::default(),
        timeouts: Arc::new(LiveTimeouts::new(Timeouts::default())),
        service: Default::default(),
    }
}

fn key(token: i64) -> LwtKey {
    LwtKey {
        table: USER,
        key: PartitionKey {
            token,
            key: Bytes::from_static(b"k"),
        },
    }
}

fn lasts(addrs: &[IpAddr]) -> Vec<u8> {
    let mut lasts: Vec<u8> = addrs
        .iter()
        .map(|a| match a {
            IpAddr::V4(v4) => v4.octets()[3],
            IpAddr::V6(_) => 0,
        })
        .collect();
    lasts.sort();
    lasts
}

#[test]
fn a_joining_node_votes_as_a_pending_replica_and_raises_the_quorum() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = [endpoint(1, "dc1"), endpoint(2, "dc1"), endpoint(3, "dc1")];
    let cell = cell(dir.path(), &nodes[..2]);
    let service = cell.get().unwrap();
    let replicas = service.serial.replicas();
    // Token 150: owned by .2 (token 200) and then .1; .3 joins at token 160.
    let before = replicas.electorate(&key(150));
    assert_eq!((lasts(&before.natural), before.quorum()), (vec![1, 2], 2));
    let mut future = TokenMetadata::clone(&cell.topology.ring());
    future.add_endpoint(nodes[2].clone(), vec![Token(160)]);
    cell.topology.set_future_ring(Some(future));
    let during = replicas.electorate(&key(150));
    assert_eq!(lasts(&during.natural), vec![1, 2]);
    assert_eq!(lasts(&during.pending), vec![3]);
    assert_eq!(during.quorum(), 3);
}

#[test]
fn local_serial_keeps_the_local_datacenter() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = [endpoint(1, "dc1"), endpoint(2, "dc2")];
    let cell = cell(dir.path(), &nodes);
    let service = cell.get().unwrap();
    let serial = service.serial.replicas().electorate(&key(150));
    assert_eq!(lasts(&serial.natural), vec![1, 2]);
    let local = service.local_serial.replicas().electorate(&key(150));
    assert_eq!(lasts(&local.natural), vec![1]);
    // Without messaging only this node is alive.
    assert!(service.serial.replicas().is_alive(&nodes[0].addr));
    assert!(!service.serial.replicas().is_alive(&nodes[1].addr));
}
