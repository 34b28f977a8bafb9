//! The rules of the lifecycle transformations: one topology change at a time, a leaving node
//! leaves enough replicas, a replacement takes exactly the dead node's tokens.

use std::net::SocketAddr;
use std::sync::Arc;

use super::*;
use crate::model::{ClusterMetadata, HostId, NodeRecord, NodeState, ReplicationCheck};

fn host(n: u64) -> HostId {
    HostId::from_u64_pair(0, n)
}

fn node(n: u64, dc: &str, tokens: &[i64]) -> NodeRecord {
    let addr: SocketAddr = format!("127.0.6.{n}:7000").parse().unwrap();
    NodeRecord {
        host_id: host(n),
        addr,
        native: SocketAddr::new(addr.ip(), 9042),
        dc: dc.to_string(),
        rack: "rack1".to_string(),
        tokens: tokens.to_vec(),
        state: NodeState::Normal,
        release_version: "5.0.4".to_string(),
    }
}

/// A cluster of Normal nodes 1..=count in dc1, node n owning token n * 100.
fn ring(count: u64) -> Arc<ClusterMetadata> {
    let mut state = ClusterMetadata::empty("Test Cluster");
    state.epoch = 1;
    for n in 1..=count {
        state
            .nodes
            .insert(host(n), node(n, "dc1", &[n as i64 * 100]));
    }
    Arc::new(state)
}

fn run(state: &Arc<ClusterMetadata>, change: Transformation) -> (Arc<ClusterMetadata>, Outcome) {
    let (next, outcome) = apply(state, &Command::Apply(change));
    if !matches!(outcome, Outcome::Applied { .. }) {
        assert!(
            Arc::ptr_eq(state, &next),
            "a refused change changed the state"
        );
    }
    (next, outcome)
}

fn rejected(outcome: Outcome) -> String {
    match outcome {
        Outcome::Rejected(reason) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn join(n: u64, tokens: &[i64]) -> Transformation {
    Transformation::StartJoin {
        node: Box::new(node(n, "dc1", tokens)),
    }
}

fn leave(n: u64, checks: Vec<ReplicationCheck>) -> Transformation {
    Transformation::StartLeave {
        host_id: host(n),
        checks,
    }
}

fn rf(keyspace: &str, rf: u32, per_dc: bool) -> ReplicationCheck {
    ReplicationCheck {
        keyspace: keyspace.to_string(),
        rf,
        per_dc,
    }
}

#[test]
fn a_joining_node_is_pending_until_it_finishes() {
    let state = ring(3);
    let (state, outcome) = run(&state, join(4, &[150]));
    assert_eq!(outcome, Outcome::Applied { epoch: 2 });
    assert_eq!(state.nodes[&host(4)].state, NodeState::Joining);
    assert_eq!(state.topology_version, 2);
    assert_eq!(state.moving_node().map(|n| n.host_id), Some(host(4)));
    let (state, outcome) = run(&state, Transformation::FinishJoin { host_id: host(4) });
    assert_eq!(outcome, Outcome::Applied { epoch: 3 });
    assert_eq!(state.nodes[&host(4)].state, NodeState::Normal);
    assert!(state.moving_node().is_none());
    // finishing again, or finishing a node that never joined, is refused
    let reason = rejected(run(&state, Transformation::FinishJoin { host_id: host(4) }).1);
    assert!(
        reason.contains("is normal and cannot finish joining"),
        "{reason}"
    );
}

#[test]
fn one_topology_change_at_a_time() {
    let (state, _) = run(&ring(4), join(5, &[150]));
    let reason = rejected(run(&state, join(6, &[250])).1);
    assert!(
        reason.contains("another topology change is in progress"),
        "{reason}"
    );
    assert!(
        reason.contains("127.0.6.5") && reason.contains("joining"),
        "{reason}"
    );
    let reason = rejected(run(&state, leave(1, vec![])).1);
    assert!(reason.contains("another topology change"), "{reason}");
    let replace = Transformation::StartReplace {
        node: Box::new(node(7, "dc1", &[200])),
        replaces: host(2),
    };
    assert!(rejected(run(&state, replace).1).contains("another topology change"));
    // once the join is over, the next change may start
    let (state, _) = run(&state, Transformation::FinishJoin { host_id: host(5) });
    let (state, outcome) = run(&state, leave(1, vec![]));
    assert!(matches!(outcome, Outcome::Applied { .. }));
    assert!(rejected(run(&state, join(6, &[250])).1).contains("127.0.6.1"));
}

#[test]
fn a_join_refuses_taken_tokens_and_known_nodes() {
    let state = ring(3);
    assert!(rejected(run(&state, join(4, &[200])).1).contains("token 200"));
    assert!(rejected(run(&state, join(2, &[250])).1).contains("is normal and cannot join"));
}

#[test]
fn a_node_leaves_only_if_enough_replicas_remain() {
    let state = ring(3);
    // N = 3 nodes with RF 3: one leaving would leave two copies
    let reason = rejected(
        run(
            &state,
            leave(3, vec![rf("ks", 2, false), rf("big", 3, false)]),
        )
        .1,
    );
    assert_eq!(
        reason,
        "Not enough live nodes to maintain replication factor in keyspace big (RF = 3, N = 3). \
         Perform a forceful decommission to ignore."
    );
    let (state, outcome) = run(&state, leave(3, vec![rf("ks", 2, false)]));
    assert!(matches!(outcome, Outcome::Applied { .. }));
    assert_eq!(state.nodes[&host(3)].state, NodeState::Leaving);
    let (state, outcome) = run(&state, Transformation::FinishLeave { host_id: host(3) });
    assert!(matches!(outcome, Outcome::Applied { .. }));
    assert_eq!(state.nodes[&host(3)].state, NodeState::Left);
    assert!(!state.token_owners().values().any(|owner| *owner == host(3)));
}

#[test]
fn a_per_dc_check_counts_the_nodes_of_the_leaving_nodes_dc() {
    let mut state = ClusterMetadata::clone(&ring(2));
    for n in 3..=5 {
        state
            .nodes
            .insert(host(n), node(n, "dc2", &[n as i64 * 100]));
    }
    let state = Arc::new(state);
    // dc1 has 2 nodes: RF 2 there cannot lose one; dc2 has 3
    let check = vec![rf("ks", 2, true)];
    assert!(rejected(run(&state, leave(1, check.clone())).1).contains("N = 2"));
    assert!(matches!(
        run(&state, leave(3, check)).1,
        Outcome::Applied { .. }
    ));
}

#[test]
fn the_last_node_cannot_leave_and_only_normal_nodes_start_leaving() {
    let one = ring(1);
    let reason = rejected(run(&one, leave(1, vec![])).1);
    assert!(
        reason.contains("decommission would be pointless"),
        "{reason}"
    );
    let (state, _) = run(&ring(3), join(4, &[150]));
    assert!(rejected(run(&state, leave(4, vec![])).1).contains("is joining and cannot leave"));
    let reason = rejected(run(&ring(3), Transformation::FinishLeave { host_id: host(2) }).1);
    assert!(reason.contains("cannot finish leaving"), "{reason}");
}

#[test]
fn a_replacement_takes_the_dead_nodes_tokens_and_the_dead_node_goes_when_it_finishes() {
    let state = ring(3);
    let replace = |tokens: &[i64]| Transformation::StartReplace {
        node: Box::new(node(9, "dc1", tokens)),
        replaces: host(2),
    };
    assert!(rejected(run(&state, replace(&[250])).1).contains("takes the tokens of node"));
    let (state, outcome) = run(&state, replace(&[200]));
    assert!(matches!(outcome, Outcome::Applied { .. }));
    assert_eq!(state.nodes[&host(9)].state, NodeState::Replacing(host(2)));
    // the dead node keeps its tokens meanwhile
    assert_eq!(state.token_owners()[&200], host(2));
    let (state, _) = run(&state, Transformation::FinishJoin { host_id: host(9) });
    assert_eq!(state.nodes[&host(9)].state, NodeState::Normal);
    assert!(!state.nodes.contains_key(&host(2)));
    assert_eq!(state.token_owners()[&200], host(9));
}

#[test]
fn only_a_normal_node_can_be_replaced() {
    let (state, _) = run(&ring(3), leave(2, vec![]));
    let replace = Transformation::StartReplace {
        node: Box::new(node(9, "dc1", &[200])),
        replaces: host(2),
    };
    // node 2 leaving is itself the change under way
    assert!(rejected(run(&state, replace.clone()).1).contains("another topology change"));
    let missing = Transformation::StartReplace {
        node: Box::new(node(9, "dc1", &[200])),
        replaces: host(8),
    };
    assert!(rejected(run(&ring(3), missing).1).contains("no such node"));
}
