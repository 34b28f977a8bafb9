//! Blocking read repair keeps QUORUM reads monotonic: a read that found a replica stale
//! answers only once the repair is applied, and times out when it is not, as Cassandra's
//! BlockingReadRepair.awaitWrites does (ReadTimeout with data_present). Answering without the
//! repair would let a later QUORUM read, from the replicas that lack the value, return older
//! data than this one did.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::ops::*;
use common::*;
use coordinator::{ReadPolicy, ReplicaPlan};
use mutation::{KeyRange, ReadFilter, ReadStats};
use net::{handler_fn, Verb};
use tokio::time::Instant;
use types::{Consistency, CqlError};

#[test]
fn a_read_whose_repair_is_not_applied_times_out_instead_of_answering() {
    simulate(11, async {
        let (cluster, holder) = one_replica_holds(KEY).await;
        // The replica the holder asks for a digest never applies a mutation.
        let topology = cluster.node(holder).coordinator.topology();
        let plan = ReplicaPlan::new(topology, &STRATEGY, key_bytes(KEY).token, true);
        never_apply_mutations(&cluster, cluster.node_of(plan.live[1].addr));

        let coordinator = &cluster.node(holder).coordinator;
        let started = Instant::now();
        let read = read(
            coordinator,
            KEY,
            Consistency::Quorum,
            &ReadPolicy::default(),
        )
        .await;
        assert_repair_timed_out(read.map(|_| ()));
        assert!(started.elapsed() <= TIMEOUTS.read + TIMEOUTS.write + Duration::from_millis(100));
    });
}

#[test]
fn a_scan_whose_repair_is_not_applied_times_out_instead_of_answering() {
    simulate(11, async {
        let (cluster, holder) = one_replica_holds(KEY).await;
        for node in (0..cluster.len()).filter(|n| *n != holder) {
            never_apply_mutations(&cluster, node);
        }
        let coordinator = &cluster.node(holder).coordinator;
        let mut stats = ReadStats::default();
        let filter = ReadFilter::all();
        let range = KeyRange::all();
        let policy = ReadPolicy::default();
        let scope = scope(KEYSPACE, Consistency::Quorum, &policy);
        let scan = coordinator.scan(&scope, &range, &filter, 100, &mut stats);
        assert_repair_timed_out(scan.await.map(|_| ()));
    });
}

const KEY: u64 = 1;

/// Three nodes where the value of `key` is on one replica only (a write that reached no
/// other); that replica's index.
async fn one_replica_holds(key: u64) -> (Cluster, usize) {
    let cluster = Cluster::start(3, 11).await;
    let token = ring::Token(key_bytes(key).token);
    let holder = cluster.node_of(STRATEGY.replicas(token, &cluster.ring)[0].addr);
    let storage = &cluster.node(holder).storage;
    storage.apply(mutation(key, 5)).await.unwrap();
    (cluster, holder)
}

fn never_apply_mutations(cluster: &Cluster, node: usize) {
    cluster.node(node).messaging.register(
        Verb::Mutation,
        handler_fn(|_, _| std::future::pending::<Result<Bytes, net::RemoteError>>()),
    );
}

/// Cassandra's answer when a blocking read repair is not acknowledged in time.
fn assert_repair_timed_out(read: Result<(), CqlError>) {
    assert_eq!(read_timeout(read), (Consistency::Quorum, 1, 2, true));
}
