use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;

use super::*;
use crate::model::{ClusterMetadata, HostId, NodeRecord, NodeState, Transformation};

fn host(n: u64) -> HostId {
    HostId::from_u64_pair(0, n)
}

fn node(n: u64, tokens: &[i64]) -> NodeRecord {
    let addr: SocketAddr = format!("127.0.8.{n}:7000").parse().unwrap();
    NodeRecord {
        host_id: host(n),
        addr,
        native: SocketAddr::new(addr.ip(), 9042),
        dc: "dc1".to_string(),
        rack: "rack1".to_string(),
        tokens: tokens.to_vec(),
        state: NodeState::Joining,
        release_version: "5.0.4".to_string(),
    }
}

fn founded() -> Arc<ClusterMetadata> {
    let (state, outcome) = apply(
        &Arc::new(ClusterMetadata::default()),
        &Command::Seed(ClusterMetadata::empty("Test Cluster")),
    );
    assert_eq!(outcome, Outcome::Applied { epoch: 1 });
    state
}

fn save(name: &str, definition: &str, expect: Option<u64>) -> Command {
    Command::Apply(Transformation::SaveKeyspace {
        name: name.to_string(),
        definition: Bytes::from(definition.to_string()),
        expect,
    })
}

fn register(node: NodeRecord, expect_topology: u64) -> Command {
    Command::Apply(Transformation::RegisterNode {
        node,
        expect_topology,
    })
}

/// Applies `command`, asserting the state is untouched unless it applied.
fn step(state: &Arc<ClusterMetadata>, command: Command) -> (Arc<ClusterMetadata>, Outcome) {
    let (next, outcome) = apply(state, &command);
    if !matches!(outcome, Outcome::Applied { .. }) {
        assert!(
            Arc::ptr_eq(state, &next),
            "a refused command changed the state"
        );
    }
    (next, outcome)
}

#[test]
fn seed_founds_epoch_one_once() {
    let state = founded();
    assert_eq!(state.cluster_name, "Test Cluster");
    let (_, outcome) = step(&state, Command::Seed(ClusterMetadata::empty("Other")));
    assert_eq!(outcome, Outcome::Conflict { current_epoch: 1 });
}

#[test]
fn seed_with_a_local_schema_keeps_it_at_an_epoch_past_its_versions() {
    let mut local = ClusterMetadata::empty("Test Cluster");
    local.schema.insert(
        "ks".to_string(),
        KeyspaceEntry {
            version: 7,
            definition: Bytes::from_static(b"ks definition"),
        },
    );
    let (state, outcome) = step(&Arc::new(ClusterMetadata::default()), Command::Seed(local));
    assert_eq!(outcome, Outcome::Applied { epoch: 7 });
    let (_, outcome) = step(&state, save("ks", "changed", Some(7)));
    assert_eq!(outcome, Outcome::Applied { epoch: 8 });
}

#[test]
fn save_keyspace_creates_then_replaces_with_compare_and_set() {
    let state = founded();
    let (state, outcome) = step(&state, save("ks", "v1", None));
    assert_eq!(outcome, Outcome::Applied { epoch: 2 });
    assert_eq!(state.schema["ks"].version, 2);
    assert_eq!(state.schema["ks"].definition, Bytes::from_static(b"v1"));

    // A second create of the same keyspace: the loser of a race.
    let (state, outcome) = step(&state, save("ks", "other", None));
    assert_eq!(outcome, Outcome::Conflict { current_epoch: 2 });

    let (state, outcome) = step(&state, save("ks", "v2", Some(2)));
    assert_eq!(outcome, Outcome::Applied { epoch: 3 });
    assert_eq!(state.schema["ks"].version, 3);

    // Planned against the old version: refused, nothing changes.
    let (state, outcome) = step(&state, save("ks", "stale", Some(2)));
    assert_eq!(outcome, Outcome::Conflict { current_epoch: 3 });
    assert_eq!(state.schema["ks"].definition, Bytes::from_static(b"v2"));
    // Replacing a keyspace that does not exist is a conflict too.
    let (_, outcome) = step(&state, save("missing", "x", Some(1)));
    assert_eq!(outcome, Outcome::Conflict { current_epoch: 3 });
}

#[test]
fn drop_keyspace_needs_the_current_version() {
    let (state, _) = step(&founded(), save("ks", "v1", None));
    let drop = |expect| {
        Command::Apply(Transformation::DropKeyspace {
            name: "ks".to_string(),
            expect,
        })
    };
    let (state, outcome) = step(&state, drop(1));
    assert_eq!(outcome, Outcome::Conflict { current_epoch: 2 });
    let (state, outcome) = step(&state, drop(2));
    assert_eq!(outcome, Outcome::Applied { epoch: 3 });
    assert!(state.schema.is_empty());
    let (_, outcome) = step(&state, drop(2));
    assert_eq!(outcome, Outcome::Conflict { current_epoch: 3 });
}

#[test]
fn register_node_checks_the_topology_version() {
    let state = founded();
    assert_eq!(state.topology_version, 0);
    let (state, outcome) = step(&state, register(node(1, &[10, 20]), 0));
    assert_eq!(outcome, Outcome::Applied { epoch: 2 });
    assert_eq!(state.topology_version, 2);
    // Planned before node 1 registered.
    let (state, outcome) = step(&state, register(node(2, &[30]), 0));
    assert_eq!(outcome, Outcome::Conflict { current_epoch: 2 });
    let (state, outcome) = step(&state, register(node(2, &[30]), 2));
    assert_eq!(outcome, Outcome::Applied { epoch: 3 });
    let owners: Vec<(i64, u64)> = state
        .token_owners()
        .into_iter()
        .map(|(token, owner)| (token, owner.as_u64_pair().1))
        .collect();
    assert_eq!(owners, vec![(10, 1), (20, 1), (30, 2)]);
}

#[test]
fn register_node_rejects_token_and_address_clashes() {
    let (state, _) = step(&founded(), register(node(1, &[10, 20]), 0));
    let (state, outcome) = step(&state, register(node(2, &[5, 20]), 2));
    match outcome {
        Outcome::Rejected(reason) => assert!(reason.contains("token 20"), "{reason}"),
        other => panic!("expected a rejection, got {other:?}"),
    }
    let mut same_addr = node(2, &[30]);
    same_addr.addr = node(1, &[]).addr;
    let (state, outcome) = step(&state, register(same_addr, 2));
    assert!(matches!(outcome, Outcome::Rejected(reason) if reason.contains("already exists")));
    let (state, outcome) = step(&state, register(node(2, &[30, 30]), 2));
    assert!(matches!(outcome, Outcome::Rejected(reason) if reason.contains("twice")));
    // A node re-registering with new tokens of its own is fine.
    let (_, outcome) = step(&state, register(node(1, &[10, 20, 25]), 2));
    assert_eq!(outcome, Outcome::Applied { epoch: 3 });
}

#[test]
fn a_node_that_left_releases_its_tokens() {
    let (state, _) = step(&founded(), register(node(1, &[10]), 0));
    let left = Command::Apply(Transformation::SetNodeState {
        host_id: host(1),
        state: NodeState::Left,
    });
    let (state, outcome) = step(&state, left);
    assert_eq!(outcome, Outcome::Applied { epoch: 3 });
    assert_eq!(state.topology_version, 3);
    assert!(state.token_owners().is_empty());
    let (_, outcome) = step(&state, register(node(2, &[10]), 3));
    assert_eq!(outcome, Outcome::Applied { epoch: 4 });
}

#[test]
fn set_state_and_remove_need_a_known_node() {
    let (state, _) = step(&founded(), register(node(1, &[10]), 0));
    let set = |n| {
        Command::Apply(Transformation::SetNodeState {
            host_id: host(n),
            state: NodeState::Normal,
        })
    };
    let remove = |n| Command::Apply(Transformation::RemoveNode { host_id: host(n) });
    let (state, outcome) = step(&state, set(9));
    assert!(matches!(outcome, Outcome::Rejected(reason) if reason.contains("no node")));
    let (state, outcome) = step(&state, set(1));
    assert_eq!(outcome, Outcome::Applied { epoch: 3 });
    assert_eq!(state.nodes[&host(1)].state, NodeState::Normal);
    let (state, outcome) = step(&state, remove(9));
    assert!(matches!(outcome, Outcome::Rejected(_)));
    let (state, outcome) = step(&state, remove(1));
    assert_eq!(outcome, Outcome::Applied { epoch: 4 });
    assert!(state.nodes.is_empty());
    assert_eq!(state.topology_version, 4);
}

#[test]
fn applying_the_same_log_twice_gives_identical_states() {
    let log = vec![
        Command::Seed(ClusterMetadata::empty("Test Cluster")),
        register(node(1, &[1, 2]), 0),
        save("a", "a1", None),
        save("a", "a-dup", None),
        register(node(2, &[2]), 2),
        register(node(2, &[3]), 2),
        save("b", "b1", None),
        save("a", "a2", Some(3)),
        Command::Apply(Transformation::DropKeyspace {
            name: "b".to_string(),
            expect: 5,
        }),
        Command::Apply(Transformation::RemoveNode { host_id: host(1) }),
    ];
    let run = || {
        let mut state = Arc::new(ClusterMetadata::default());
        let mut outcomes = Vec::new();
        for command in &log {
            let (next, outcome) = apply(&state, command);
            state = next;
            outcomes.push(outcome);
        }
        (state, outcomes)
    };
    let (first, first_outcomes) = run();
    let (second, second_outcomes) = run();
    assert_eq!(first, second);
    assert_eq!(first_outcomes, second_outcomes);
    assert_eq!(first.epoch, 8);
    assert_eq!(first.schema.keys().collect::<Vec<_>>(), vec!["a"]);
    assert_eq!(
        first.nodes.keys().copied().collect::<Vec<_>>(),
        vec![host(2)]
    );
}
