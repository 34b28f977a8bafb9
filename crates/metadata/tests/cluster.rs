//! Metadata groups over the production messaging on turmoil's network, in simulated time: group
//! formation, concurrent changes, leader loss, partitions, catching up, restarts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use common::*;
use metadata::{
    ClusterMetadata, KeyspaceEntry, MetadataConfig, MetadataError, MetadataService, RaftRole,
    RpcKind, Transformation, Transport, TransportError,
};
use net::SimRng;
use tokio::time::Instant;

/// The chance that a TCP segment is lost on lossy links.
const LOSS: f64 = 0.05;

async fn shutdown_all(cluster: &Cluster) {
    for i in cluster.running() {
        cluster.node(i).shutdown().await;
    }
}

#[test]
fn three_nodes_started_in_any_order_form_one_group() {
    for (seed, order) in [[0, 1, 2], [2, 1, 0], [1, 2, 0]].iter().enumerate() {
        simulate(seed as u64, async move {
            let mut cluster = Cluster::new(3);
            cluster.form(order).await;
            let voters: Vec<_> = (0..3).map(|i| cluster.node(i).status().voters).collect();
            assert!(voters.iter().all(|v| *v == voters[0]), "{voters:?}");
            let mut last = 0;
            for i in 0..3 {
                last = cluster
                    .node(i)
                    .commit(create(&format!("ks{i}")))
                    .await
                    .unwrap();
            }
            let state = cluster.converged(last).await;
            assert_eq!(state.nodes.len(), 3, "order {order:?}");
            assert_eq!(state.schema.len(), 3);
            assert_eq!(state.cluster_name, CLUSTER);
            shutdown_all(&cluster).await;
        });
    }
}

#[test]
fn two_nodes_creating_the_same_keyspace_at_once_give_one_success_and_one_conflict() {
    simulate(7, async {
        let mut cluster = Cluster::new(3);
        cluster.form(&[0, 1, 2]).await;
        let (first, second) = tokio::join!(
            cluster.node(1).commit(create("shared")),
            cluster.node(2).commit(create("shared"))
        );
        let (winner, loser, loser_node) = match (first, second) {
            (Ok(epoch), Err(e)) => (epoch, e, 2),
            (Err(e), Ok(epoch)) => (epoch, e, 1),
            other => panic!("expected one success and one conflict, got {other:?}"),
        };
        match loser {
            MetadataError::Conflict { current_epoch } => assert!(current_epoch >= winner),
            other => panic!("expected a conflict, got {other}"),
        }
        // The loser's node has already applied the winner's change: re-planning sees it.
        let seen = cluster.node(loser_node).current();
        assert_eq!(seen.schema["shared"].version, winner);
        shutdown_all(&cluster).await;
    });
}

#[test]
fn after_the_leader_dies_a_new_one_is_elected_and_commits_go_on() {
    simulate(11, async {
        let mut cluster = Cluster::new(3);
        cluster.form(&[0, 1, 2]).await;
        cluster.node(0).commit(create("before")).await.unwrap();
        let old = cluster.agreed_leader().unwrap();
        cluster.crash(old).await;
        cluster
            .wait_until("a new leader", Duration::from_secs(10), |c| {
                c.agreed_leader().is_some_and(|l| l != old)
            })
            .await;
        let survivors: Vec<usize> = cluster.running();
        for i in &survivors {
            cluster
                .node(*i)
                .commit(create(&format!("after{i}")))
                .await
                .unwrap();
        }
        cluster.start(old).await;
        let state = cluster.converged(0).await;
        assert_eq!(state.schema.len(), 3, "{:?}", state.schema.keys());
        shutdown_all(&cluster).await;
    });
}

#[test]
fn the_minority_side_of_a_partition_gets_no_quorum_while_the_majority_commits() {
    simulate(13, async {
        let mut cluster = Cluster::new(3);
        cluster.form(&[0, 1, 2]).await;
        let leader = cluster.agreed_leader().unwrap();
        let follower = (0..3).find(|i| *i != leader).unwrap();

        // A follower cut off from the others.
        cluster.partition(&[follower]);
        let started = Instant::now();
        let error = cluster
            .node(follower)
            .commit(create("lost"))
            .await
            .unwrap_err();
        assert!(matches!(error, MetadataError::NoQuorum(_)), "{error}");
        assert!(started.elapsed() <= cluster.commit_timeout + Duration::from_millis(200));
        assert!(error.to_string().contains("majority"), "{error}");
        cluster.node(leader).commit(create("kept")).await.unwrap();
        cluster.heal();
        cluster.converged(0).await;

        // The leader cut off: its change is never committed; the others elect a new leader.
        let leader = cluster.agreed_leader().unwrap();
        cluster.partition(&[leader]);
        let error = cluster
            .node(leader)
            .commit(create("stranded"))
            .await
            .unwrap_err();
        assert!(matches!(error, MetadataError::NoQuorum(_)), "{error}");
        let other = (0..3).find(|i| *i != leader).unwrap();
        cluster
            .node(other)
            .commit(create("majority"))
            .await
            .unwrap();
        cluster.heal();
        let state = cluster.converged(0).await;
        let names: Vec<&String> = state.schema.keys().collect();
        assert_eq!(names, vec!["kept", "majority"]);
        shutdown_all(&cluster).await;
    });
}

#[test]
fn a_commit_without_any_group_fails_with_no_quorum_in_time() {
    simulate(17, async {
        let mut cluster = Cluster::new(3);
        // One seed of three: a new group forms only once a majority of the seeds runs.
        let alone = cluster.start(0).await;
        let started = Instant::now();
        let error = alone.commit(create("nowhere")).await.unwrap_err();
        assert!(matches!(error, MetadataError::NoQuorum(_)), "{error}");
        assert!(started.elapsed() <= cluster.commit_timeout + Duration::from_millis(200));
        assert_eq!(alone.current().epoch, 0);
        // A second seed makes a majority of the three: the group forms without the third.
        cluster.start(1).await;
        alone.await_epoch(1, Duration::from_secs(20)).await.unwrap();
        alone.commit(create("somewhere")).await.unwrap();
        // The third seed, started later, joins that group.
        cluster.start(2).await;
        cluster
            .node(2)
            .await_epoch(1, Duration::from_secs(20))
            .await
            .unwrap();
        cluster.converged(2).await;
        assert!(cluster.node(2).current().schema.contains_key("somewhere"));
        shutdown_all(&cluster).await;
    });
}

/// Starts every node at once, lets formation run for `time`, heals the network, and checks
/// that all of them end up in one group (two groups would never agree on a leader).
async fn form_at_once_then_heal(cluster: &mut Cluster, time: Duration) {
    for i in 0..3 {
        cluster.start(i).await;
    }
    tokio::time::sleep(time).await;
    cluster.heal();
    cluster.set_loss(0.0).await;
    for i in 0..3 {
        cluster
            .node(i)
            .await_epoch(1, Duration::from_secs(30))
            .await
            .unwrap_or_else(|e| panic!("node {i} joined no group: {e}"));
        register(cluster.node(i), i).await;
    }
    cluster
        .wait_until("one group of three voters", Duration::from_secs(30), |c| {
            c.agreed_leader()
                .is_some_and(|l| c.node(l).status().voters.len() == 3)
        })
        .await;
    let state = cluster.converged(4).await;
    assert_eq!(state.nodes.len(), 3);
}

#[test]
fn seeds_that_each_see_another_majority_found_one_group() {
    simulate(23, async {
        // 0 and 2 cannot reach each other; each sees a majority with 1.
        let mut cluster = Cluster::new(3);
        cluster.cut_one_way(0, 2).await;
        cluster.cut_one_way(2, 0).await;
        form_at_once_then_heal(&mut cluster, Duration::from_secs(20)).await;
        shutdown_all(&cluster).await;
    });
}

#[test]
fn seeds_found_one_group_while_messages_are_lost() {
    for seed in [29, 31, 37] {
        simulate(seed, async {
            let mut cluster = Cluster::new(3);
            // Of TCP segments: each loss stalls a connection until messaging redials it.
            cluster.set_loss(LOSS).await;
            form_at_once_then_heal(&mut cluster, Duration::from_secs(10)).await;
            shutdown_all(&cluster).await;
        });
    }
}

#[test]
fn a_node_that_was_down_catches_up_from_the_log_then_from_a_snapshot() {
    simulate(19, async {
        let mut cluster = Cluster::new(3);
        cluster.snapshot_every = 4;
        cluster.form(&[0, 1, 2]).await;
        let leader = cluster.agreed_leader().unwrap();
        let lagger = (0..3).find(|i| *i != leader).unwrap();

        cluster.crash(lagger).await;
        create_many(cluster.node(leader), "log", 2).await;
        cluster.start(lagger).await;
        let state = cluster.converged(0).await;
        assert!(state.schema.contains_key("log1"));

        let behind = cluster.node(lagger).status().last_log_index.unwrap();
        cluster.crash(lagger).await;
        let last = create_many(cluster.node(leader), "snap", 20).await;
        cluster
            .wait_until("the leader purging its log", Duration::from_secs(10), |c| {
                c.node(leader)
                    .status()
                    .purged_index
                    .is_some_and(|p| p > behind)
            })
            .await;
        cluster.start(lagger).await;
        let state = cluster.converged(last).await;
        assert_eq!(state.schema.len(), 22);
        let status = cluster.node(lagger).status();
        assert!(
            status.snapshot_index.is_some_and(|s| s > behind),
            "{status:?}"
        );
        shutdown_all(&cluster).await;
    });
}

#[test]
fn a_restarted_node_keeps_its_state() {
    simulate(23, async {
        let mut cluster = Cluster::new(3);
        cluster.form(&[0, 1, 2]).await;
        let last = create_many(cluster.node(0), "ks", 3).await;
        let before = cluster.converged(last).await;
        cluster.crash(2).await;
        let restarted = cluster.start(2).await;
        assert_eq!(*restarted.current(), *before);
        restarted.commit(create("after")).await.unwrap();
        shutdown_all(&cluster).await;
    });
}

#[test]
fn a_removed_node_leaves_the_group() {
    simulate(29, async {
        let mut cluster = Cluster::new(3);
        cluster.form(&[0, 1, 2]).await;
        let removed = common::host(2);
        cluster
            .node(0)
            .commit(Transformation::RemoveNode { host_id: removed })
            .await
            .unwrap();
        cluster
            .wait_until("two voters", Duration::from_secs(10), |c| {
                c.agreed_leader().is_some_and(|l| {
                    let status = c.node(l).status();
                    status.voters.len() == 2 && !status.members.contains_key(&removed)
                })
            })
            .await;
        cluster.crash(2).await;
        let epoch = cluster.node(1).commit(create("two")).await.unwrap();
        let state = cluster.converged(epoch).await;
        assert!(!state.nodes.contains_key(&removed));
        shutdown_all(&cluster).await;
    });
}

#[test]
fn nodes_past_the_seventh_stay_learners() {
    simulate(31, async {
        let mut cluster = Cluster::new(8);
        cluster.seeds = vec![common::addr(0)];
        let order: Vec<usize> = (0..8).collect();
        for i in &order {
            cluster.start(*i).await;
        }
        for i in &order {
            cluster
                .node(*i)
                .await_epoch(1, Duration::from_secs(30))
                .await
                .unwrap();
            register(cluster.node(*i), *i).await;
        }
        cluster
            .wait_until("seven voters", Duration::from_secs(30), |c| {
                c.agreed_leader()
                    .is_some_and(|l| c.node(l).status().voters.len() == 7)
            })
            .await;
        let leader = cluster.agreed_leader().unwrap();
        let status = cluster.node(leader).status();
        assert_eq!(status.learners.len(), 1, "{status:?}");
        assert_eq!(status.members.len(), 8);
        shutdown_all(&cluster).await;
    });
}

fn single_config(dir: &std::path::Path) -> MetadataConfig {
    MetadataConfig::new(dir.to_path_buf(), common::host(0), common::addr(0), CLUSTER)
}

/// Real time: this measures the start-up of a one-voter group (see the test's output).
#[tokio::test]
async fn a_single_node_founds_its_group_at_once_and_keeps_it() {
    init_logs();
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let service = MetadataService::start(single_config(dir.path()), None, None)
        .await
        .unwrap();
    eprintln!("one-voter group founded in {:?}", started.elapsed());
    assert_eq!(service.current().epoch, 1);
    assert_eq!(service.current().cluster_name, CLUSTER);
    assert_eq!(service.status().role, RaftRole::Leader);
    assert_eq!(service.commit(create("a")).await.unwrap(), 2);
    assert_eq!(register(&service, 0).await, 3);
    let before = service.current();
    service.shutdown().await;

    let started = std::time::Instant::now();
    let service = MetadataService::start(single_config(dir.path()), None, None)
        .await
        .unwrap();
    eprintln!("one-voter group resumed in {:?}", started.elapsed());
    assert_eq!(service.current(), before);
    assert_eq!(service.commit(create("b")).await.unwrap(), 4);
    service.shutdown().await;
    let late = service.commit(create("late")).await;
    assert_eq!(late, Err(MetadataError::Shutdown));
}

#[tokio::test]
async fn a_single_node_upgraded_from_before_the_cluster_seeds_the_group_with_its_schema() {
    init_logs();
    let dir = tempfile::tempdir().unwrap();
    let mut local = ClusterMetadata::empty(CLUSTER);
    let entry = KeyspaceEntry {
        version: 5,
        definition: Bytes::from_static(b"CREATE KEYSPACE old"),
    };
    local.schema = BTreeMap::from([("old".to_string(), entry)]);
    let service = MetadataService::start(single_config(dir.path()), None, Some(local.clone()))
        .await
        .unwrap();
    let state = service.current();
    assert_eq!(state.schema, local.schema);
    assert_eq!(state.epoch, 5);
    service.shutdown().await;

    // The directory holds a log now: a second initial state is not used.
    let mut other = local.clone();
    other.schema.clear();
    let service = MetadataService::start(single_config(dir.path()), None, Some(other))
        .await
        .unwrap();
    assert_eq!(service.current(), state);
    let conflict = service
        .commit(create("old"))
        .await
        .expect_err("the keyspace exists");
    assert_eq!(conflict, MetadataError::Conflict { current_epoch: 5 });
    service.shutdown().await;
}

#[tokio::test]
async fn start_refuses_a_corrupt_log_with_a_clear_error() {
    init_logs();
    let dir = tempfile::tempdir().unwrap();
    let service = MetadataService::start(single_config(dir.path()), None, None)
        .await
        .unwrap();
    create_many(&service, "ks", 3).await;
    service.shutdown().await;
    drop(service);
    let path = dir.path().join("raft-log");
    let mut data = std::fs::read(&path).unwrap();
    let middle = data.len() / 2;
    data[middle] ^= 0x10;
    std::fs::write(&path, &data).unwrap();
    let error = MetadataService::start(single_config(dir.path()), None, None)
        .await
        .err()
        .expect("a corrupt log must be refused");
    assert!(
        matches!(&error, MetadataError::Storage(m) if m.contains("corrupt")),
        "{error}"
    );
}

#[test]
fn malformed_calls_are_refused_and_the_node_goes_on() {
    simulate(37, async {
        let mut cluster = Cluster::new(1);
        let node = cluster.start(0).await;
        node.await_epoch(1, Duration::from_secs(5)).await.unwrap();
        let stranger = cluster.stranger().await;
        let mut rng = SimRng::new(37);
        for kind in RpcKind::ALL {
            for len in [0usize, 1, 7, 64, 1000] {
                let garbage: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                let answer = stranger
                    .call(
                        common::addr(0),
                        kind,
                        Bytes::from(garbage),
                        Duration::from_secs(1),
                    )
                    .await;
                assert!(
                    matches!(answer, Err(TransportError::Remote(_))),
                    "{kind:?} with {len} bytes: {answer:?}"
                );
            }
        }
        node.commit(create("still")).await.unwrap();
        node.shutdown().await;
    });
}
