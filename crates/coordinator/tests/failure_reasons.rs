//! ReadFailure and WriteFailure name the replicas that failed and the reason each answered
//! (the v5 reason map), as Cassandra's failureReasonByEndpoint does. QUORUM of three with two
//! replicas failing: the level is lost only at the second failure, so both are named (the
//! read's failed contact is replaced by the other, which fails too).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod common;

use std::net::IpAddr;

use bytes::Bytes;
use common::ops::*;
use common::*;
use coordinator::{ReadPolicy, ReplicaPlan};
use net::{handler_fn, RemoteError, Verb};
use types::{Consistency, CqlError};

const KEY: u64 = 3;
/// `RequestFailureReason.INCOMPATIBLE_SCHEMA`.
const INCOMPATIBLE_SCHEMA: u16 = 0x0003;

#[test]
fn a_write_failure_names_the_replicas_that_failed() {
    simulate(5, async {
        let cluster = Cluster::start(3, 5).await;
        let (coordinator, others) = coordinator_and_others(&cluster);
        for &node in &others {
            fail(&cluster, node, Verb::Mutation);
        }
        let written = cluster
            .node(coordinator)
            .coordinator
            .write(KEYSPACE, vec![mutation(KEY, 7)], Consistency::Quorum, None)
            .await;
        match written {
            Err(CqlError::WriteFailure {
                received,
                block_for,
                failures,
                reasons,
                write_type,
                ..
            }) => {
                assert_eq!((received, block_for, write_type.as_str()), (1, 2, "SIMPLE"));
                assert_eq!(failures as usize, reasons.len());
                assert_eq!(sorted(reasons), expected(&others));
            }
            other => panic!("a write two replicas failed answered {other:?}"),
        }
    });
}

#[test]
fn a_read_failure_names_the_replicas_that_failed() {
    simulate(5, async {
        let cluster = Cluster::start(3, 5).await;
        let (coordinator, others) = coordinator_and_others(&cluster);
        for &node in &others {
            fail(&cluster, node, Verb::Read);
        }
        let policy = ReadPolicy::default();
        let coordinator = &cluster.node(coordinator).coordinator;
        match read(coordinator, KEY, Consistency::Quorum, &policy).await {
            Err(CqlError::ReadFailure {
                failures, reasons, ..
            }) => {
                assert_eq!(failures as usize, reasons.len());
                assert_eq!(sorted(reasons), expected(&others));
            }
            other => panic!("a read two replicas failed answered {other:?}"),
        }
    });
}

/// A replica of `KEY` that coordinates, and the other two.
fn coordinator_and_others(cluster: &Cluster) -> (usize, Vec<usize>) {
    let plan = ReplicaPlan::new(
        cluster.node(0).coordinator.topology(),
        &STRATEGY,
        key_bytes(KEY).token,
        true,
    );
    let mut replicas: Vec<usize> = plan.live.iter().map(|e| cluster.node_of(e.addr)).collect();
    let coordinator = replicas.remove(0);
    (coordinator, replicas)
}

/// Node `node` answers every `verb` with INCOMPATIBLE_SCHEMA.
fn fail(cluster: &Cluster, node: usize, verb: Verb) {
    cluster.node(node).messaging.register(
        verb,
        handler_fn(|_, _| async {
            Err::<Bytes, _>(RemoteError::new(INCOMPATIBLE_SCHEMA, "unknown table"))
        }),
    );
}

fn expected(nodes: &[usize]) -> Vec<(IpAddr, u16)> {
    sorted(
        nodes
            .iter()
            .map(|&n| (addr(n), INCOMPATIBLE_SCHEMA))
            .collect(),
    )
}

fn sorted(mut reasons: Vec<(IpAddr, u16)>) -> Vec<(IpAddr, u16)> {
    reasons.sort();
    reasons
}
