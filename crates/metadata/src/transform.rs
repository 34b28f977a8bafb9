//! Applying the log: a pure function from (state, command) to the next state, the same on
//! every node. A command that does not fit the state it meets changes nothing.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::{ClusterMetadata, HostId, KeyspaceEntry, NodeRecord, NodeState, Transformation};

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
            check_new_node(&state.nodes, node)?;
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
            next.topology_version = epoch;
        }
    }
    next.epoch = epoch;
    Ok(next)
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
/// left the ring.
fn check_new_node(nodes: &BTreeMap<HostId, NodeRecord>, node: &NodeRecord) -> Result<(), Refusal> {
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
        .filter(|other| other.host_id != node.host_id && other.state != NodeState::Left);
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
