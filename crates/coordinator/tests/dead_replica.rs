//! A replica that died and is not yet held down: its connection is refused at once, and it
//! simply does not answer. Cassandra's figures then count the replicas that did answer: a read
//! at ALL times out with `received` 2 of 3 (`data_present` false when the dead replica was the
//! one asked for data), as does a write (2 acknowledgements) and a scan. Ending the request at
//! the refused connection would count only the answers already in (issue 27).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod common;

use common::ops::*;
use common::*;
use coordinator::{ReadPolicy, ReplicaPlan};
use mutation::{KeyRange, ReadFilter, ReadStats};
use types::{Consistency, CqlError};

const KEY: u64 = 3;

#[test]
fn a_read_at_all_counts_the_live_replicas_answers() {
    for (dead_contact, data_present) in [(0, false), (1, true)] {
        simulate(5, async move {
            let (mut cluster, coordinator, contacts) = four_nodes().await;
            cluster.crash(contacts[dead_contact]).await;
            let coordinator = &cluster.node(coordinator).coordinator;
            let read = read(coordinator, KEY, Consistency::All, &ReadPolicy::default()).await;
            assert_timed_out(read.map(|_| ()), data_present);
        });
    }
}

#[test]
fn a_write_at_all_counts_the_live_replicas_acknowledgements() {
    simulate(5, async {
        let (mut cluster, coordinator, contacts) = four_nodes().await;
        cluster.crash(contacts[0]).await;
        let coordinator = &cluster.node(coordinator).coordinator;
        let written = coordinator
            .write(KEYSPACE, vec![mutation(KEY, 7)], Consistency::All, None)
            .await;
        match written {
            Err(CqlError::WriteTimeout {
                received,
                block_for,
                write_type,
                ..
            }) => assert_eq!((received, block_for, write_type.as_str()), (2, 3, "SIMPLE")),
            other => panic!("a write at ALL with a dead replica answered {other:?}"),
        }
    });
}

#[test]
fn a_scan_at_all_counts_the_live_replicas_answers() {
    simulate(5, async {
        let (mut cluster, coordinator, contacts) = four_nodes().await;
        cluster.crash(contacts[0]).await;
        let coordinator = &cluster.node(coordinator).coordinator;
        let mut stats = ReadStats::default();
        let (range, filter) = (KeyRange::all(), ReadFilter::all());
        let policy = ReadPolicy::default();
        let scope = scope(KEYSPACE, Consistency::All, &policy);
        let scan = coordinator.scan(&scope, &range, &filter, 100, &mut stats);
        // A range read asks every replica for data, so data is present once any answered.
        assert_timed_out(scan.await.map(|_| ()), true);
    });
}

/// Four nodes at RF=3: the node that is no replica of `KEY` (it coordinates, so every replica
/// is remote) and the replicas in the order it asks them (the first for data).
async fn four_nodes() -> (Cluster, usize, Vec<usize>) {
    let cluster = Cluster::start(4, 5).await;
    let replicas = STRATEGY.replicas(ring::Token(key_bytes(KEY).token), &cluster.ring);
    let coordinator = (0..cluster.len())
        .find(|&n| replicas.iter().all(|e| e.addr != addr(n)))
        .expect("one node of four is no replica at RF=3");
    let topology = cluster.node(coordinator).coordinator.topology();
    let plan = ReplicaPlan::new(topology, &STRATEGY, key_bytes(KEY).token, true);
    let contacts = plan.live.iter().map(|e| cluster.node_of(e.addr)).collect();
    (cluster, coordinator, contacts)
}

fn assert_timed_out(read: Result<(), CqlError>, data: bool) {
    assert_eq!(read_timeout(read), (Consistency::All, 2, 3, data));
}
