//! Applying the log: a pure function from (state, command) to the next state, the same on
//! every node. A command that does not fit the state it meets changes nothing.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::{
    ClusterMetadata, HostId, KeyspaceEntry, NodeRecord, NodeState, ReplicationCheck, Transformation,
};

/// What a log entry asks of the state machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Command {
    /// Found the group's state (the first entry its founder commits): applied only to the
    /// pristine state (epoch 0), so a second one is a conflict.
    Seed(ClusterMetadata),
    Apply(Transformation),
}

/// What applying one entry did; the leader hands it back to the committer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Outcome {
    /// A Raft entry with no command (blank, membership).
    #[default]
    Nothing,
    Applied {
        epoch: u64,
    },
    Conflict {
        current_epoch: u64,
    },
    Rejected(String),
}

/// Why a command was not applied.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    Conflict,
    Rejected(String),
}

/// Applies `command` to `state`: the new state and the outcome (the old state when refused).
pub(crate) fn apply(
    state: &Arc<ClusterMetadata>,
    command: &Command,
) -> (Arc<ClusterMetadata>, Outcome) {
    let next = match command {
        Command::Seed(seed) => seeded(state, seed),
        Command::Apply(transformation) => transform(state, transformation),
    };
    match next {
        Ok(next) => {
            let epoch = next.epoch;
            (Arc::new(next), Outcome::Applied { epoch })
        }
        Err(Refusal::Conflict) => (
            state.clone(),
            Outcome::Conflict {
                current_epoch: state.epoch,
            },
        ),
        Err(Refusal::Rejected(reason)) => (state.clone(), Outcome::Rejected(reason)),
    }
}

/// The founding state: `seed` with an epoch past every version it names (at least 1).
fn seeded(state: &ClusterMetadata, seed: &ClusterMetadata) -> Result<ClusterMetadata, Refusal> {
    if state.epoch != 0 {
        return Err(Refusal::Conflict);
    }
    let newest_keyspace = seed.schema.values().map(|k| k.version).max().unwrap_or(0);
    let mut next = seed.clone();
    next.epoch = 1
        .max(seed.epoch)
        .max(newest_keyspace)
        .max(seed.topology_version);
    Ok(next)
}

/// The state after `transformation`, as the next epoch.
pub(crate) fn transform(
    state: &ClusterMetadata,
    transformation: &Transformation,
) -> Result<ClusterMetadata, Refusal> {
    let epoch = state.epoch + 1;
    let mut next = state.clone();
    match transformation {
        Transformation::SaveKeyspace {
            name,
            definition,
            expect,
        } => {
            check_version(state.schema.get(name), *expect)?;
            let entry = KeyspaceEntry {
                version: epoch,
                definition: definition.clone(),
            };
            next.schema.insert(name.clone(), entry);
        }
        Transformation::DropKeyspace { name, expect } => {
            check_version(state.schema.get(name), Some(*expect))?;
            next.schema.remove(name);
        }
        Transformation::RegisterNode {
            node,
            expect_topology,
        } => {
            if *expect_topology != state.topology_version {
                return Err(Refusal::Conflict);
            }
            check_new_node(&state.nodes, node, None)?;
            next.nodes.insert(node.host_id, node.clone());
            next.topology_version = epoch;
        }
        Transformation::SetNodeState { host_id, state } => {
            known_node(&mut next.nodes, host_id)?.state = *state;
            next.topology_version = epoch;
        }
        Transformation::RemoveNode { host_id } => {
            known_node(&mut next.nodes, host_id)?;
            next.nodes.remove(host_id);
            next.repair.drop_holder(*host_id);
            next.topology_version = epoch;
        }
        Transformation::StartJoin { node } => {
            start_join(state, node)?;
            let joining = NodeRecord {
                state: NodeState::Joining,
                ..NodeRecord::clone(node)
            };
            next.nodes.insert(node.host_id, joining);
            next.topology_version = epoch;
        }
        Transformation::FinishJoin { host_id } => {
            let joined = known_node(&mut next.nodes, host_id)?;
            let replaced = match joined.state {
                NodeState::Joining => None,
                NodeState::Replacing(old) => Some(old),
                other => return Err(wrong_state(host_id, other, "finish joining")),
            };
            joined.state = NodeState::Normal;
            if let Some(old) = replaced {
                next.nodes.remove(&old);
                next.repair.drop_holder(old);
            }
            next.topology_version = epoch;
        }
        Transformation::StartLeave { host_id, checks } => {
            start_leave(state, host_id, checks)?;
            known_node(&mut next.nodes, host_id)?.state = NodeState::Leaving;
            next.topology_version = epoch;
        }
        Transformation::FinishLeave { host_id } => {
            let leaving = known_node(&mut next.nodes, host_id)?;
            if leaving.state != NodeState::Leaving {
                return Err(wrong_state(host_id, leaving.state, "finish leaving"));
            }
            leaving.state = NodeState::Left;
            next.topology_version = epoch;
        }
        Transformation::StartReplace { node, replaces } => {
            start_replace(state, node, replaces)?;
            let replacing = NodeRecord {
                state: NodeState::Replacing(*replaces),
                ..NodeRecord::clone(node)
            };
            next.nodes.insert(node.host_id, replacing);
            next.topology_version = epoch;
        }
        Transformation::TakeRepairLease { lease, now_ms } => next.repair.take(lease, *now_ms)?,
        Transformation::RenewRepairLease { id, expires_ms } => {
            next.repair.renew(*id, *expires_ms)?
        }
        Transformation::EndRepairLease { lease, repaired_ms } => {
            next.repair.end(lease, *repaired_ms)
        }
        Transformation::DropRepairLeases { holder } => next.repair.drop_holder(*holder),
    }
    next.epoch = epoch;
    Ok(next)
}

/// Refuses a change while another node's topology change runs: one at a time, as Cassandra
/// without consistent range movement overrides, since two could overlap their ranges.
fn one_change_at_a_time(state: &ClusterMetadata, host_id: &HostId) -> Result<(), Refusal> {
    match state.moving_node() {
        Some(other) if other.host_id != *host_id => Err(Refusal::Rejected(format!(
            "another topology change is in progress: node {} ({}) is {}; wait until it \
             finishes (or remove that node)",
            other.addr.ip(),
            other.host_id,
            state_name(other.state)
        ))),
        _ => Ok(()),
    }
}

fn start_join(state: &ClusterMetadata, node: &NodeRecord) -> Result<(), Refusal> {
    one_change_at_a_time(state, &node.host_id)?;
    if let Some(known) = state.nodes.get(&node.host_id) {
        return Err(wrong_state(&node.host_id, known.state, "join"));
    }
    check_new_node(&state.nodes, node, None)
}

fn start_leave(
    state: &ClusterMetadata,
    host_id: &HostId,
    checks: &[ReplicationCheck],
) -> Result<(), Refusal> {
    one_change_at_a_time(state, host_id)?;
    let node = state
        .nodes
        .get(host_id)
        .ok_or_else(|| Refusal::Rejected(format!("no node with host id {host_id}")))?;
    if node.state != NodeState::Normal {
        return Err(wrong_state(host_id, node.state, "leave"));
    }
    let in_ring = |n: &&NodeRecord| matches!(n.state, NodeState::Normal | NodeState::Leaving);
    let others = state.nodes.values().filter(in_ring).count() - 1;
    if others == 0 {
        return Err(Refusal::Rejected(
            "no other normal nodes in the ring; decommission would be pointless".to_string(),
        ));
    }
    for check in checks {
        // Cassandra counts the leaving node too: N nodes keep RF replicas only if N > RF
        let nodes = state
            .nodes
            .values()
            .filter(in_ring)
            .filter(|n| !check.per_dc || n.dc == node.dc)
            .count();
        if nodes <= check.rf as usize {
            return Err(Refusal::Rejected(format!(
                "Not enough live nodes to maintain replication factor in keyspace {} \
                 (RF = {}, N = {nodes}). Perform a forceful decommission to ignore.",
                check.keyspace, check.rf
            )));
        }
    }
    Ok(())
}

fn start_replace(
    state: &ClusterMetadata,
    node: &NodeRecord,
    replaces: &HostId,
) -> Result<(), Refusal> {
    one_change_at_a_time(state, &node.host_id)?;
    let old = state.nodes.get(replaces).ok_or_else(|| {
        Refusal::Rejected(format!(
            "cannot replace {replaces}: no such node in the ring"
        ))
    })?;
    if old.state != NodeState::Normal {
        return Err(wrong_state(replaces, old.state, "be replaced"));
    }
    if let Some(known) = state.nodes.get(&node.host_id) {
        return Err(wrong_state(
            &node.host_id,
            known.state,
            "replace another node",
        ));
    }
    let mut own = node.tokens.clone();
    own.sort_unstable();
    let mut theirs = old.tokens.clone();
    theirs.sort_unstable();
    if own != theirs {
        return Err(Refusal::Rejected(format!(
            "a replacement takes the tokens of node {replaces}, not others"
        )));
    }
    check_new_node(&state.nodes, node, Some(replaces))
}

fn wrong_state(host_id: &HostId, state: NodeState, what: &str) -> Refusal {
    Refusal::Rejected(format!(
        "node {host_id} is {} and cannot {what}",
        state_name(state)
    ))
}

/// A state as `nodetool` words it.
fn state_name(state: NodeState) -> &'static str {
    match state {
        NodeState::Joining => "joining",
        NodeState::Normal => "normal",
        NodeState::Leaving => "leaving",
        NodeState::Left => "gone (left the ring)",
        NodeState::Replacing(_) => "replacing another node",
    }
}

/// Compare-and-set on a keyspace: `expect` None means "must not exist".
fn check_version(current: Option<&KeyspaceEntry>, expect: Option<u64>) -> Result<(), Refusal> {
    if current.map(|entry| entry.version) == expect {
        Ok(())
    } else {
        Err(Refusal::Conflict)
    }
}

fn known_node<'a>(
    nodes: &'a mut BTreeMap<HostId, NodeRecord>,
    host_id: &HostId,
) -> Result<&'a mut NodeRecord, Refusal> {
    nodes
        .get_mut(host_id)
        .ok_or_else(|| Refusal::Rejected(format!("no node with host id {host_id}")))
}

/// A node may not repeat a token, nor take a token or an address of another node that has not
/// left the ring (but those of the node it `replaces`).
fn check_new_node(
    nodes: &BTreeMap<HostId, NodeRecord>,
    node: &NodeRecord,
    replaces: Option<&HostId>,
) -> Result<(), Refusal> {
    let mut own = node.tokens.clone();
    own.sort_unstable();
    if let Some(pair) = own.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(Refusal::Rejected(format!(
            "node {} lists token {} twice",
            node.host_id, pair[0]
        )));
    }
    let others = nodes
        .values()
        .filter(|other| other.host_id != node.host_id && other.state != NodeState::Left)
        .filter(|other| Some(&other.host_id) != replaces);
    for other in others {
        if other.addr == node.addr {
            return Err(Refusal::Rejected(format!(
                "a node with address {} already exists (host id {}); remove it first",
                node.addr, other.host_id
            )));
        }
        if let Some(token) = other.tokens.iter().find(|t| own.binary_search(t).is_ok()) {
            return Err(Refusal::Rejected(format!(
                "token {token} of node {} is already owned by node {} ({})",
                node.host_id, other.host_id, other.addr
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "transform_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod lifecycle_tests;
