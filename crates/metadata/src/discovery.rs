//! Forming the group (ScyllaDB's group-0 discovery): a node with an empty log asks every seed
//! whether it is in a group and who leads it. If a group exists, the node asks its leader to
//! add it as a learner. If none does, the seed with the smallest host id founds one once every
//! seed has answered: all seeds then see the same set of host ids and agree on the founder. (A
//! majority is not enough: two majorities of three seeds that overlap in one seed can each
//! have a different smallest member, and both would found a group.) A new cluster therefore
//! forms once all of its seeds run; a node joining an existing group needs only one seed that
//! knows the group.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use openraft::error::{InitializeError, RaftError};
use tokio::time::Instant;

use crate::codec::{decode, encode};
use crate::core::Core;
use crate::error::MetadataError;
use crate::raft_types::PeerNode;
use crate::rpc::{DiscoverReply, DiscoverRequest, ForwardReply, ForwardRequest, Peer};
use crate::transform::Command;
use crate::transport::RpcKind;

/// How long a seed has to answer a discovery request.
const ASK_TIMEOUT: Duration = Duration::from_secs(1);
const FIRST_PAUSE: Duration = Duration::from_millis(100);
const LONGEST_PAUSE: Duration = Duration::from_secs(2);

/// Founds a one-voter group led by this node and commits its founding state.
pub(crate) async fn found(core: &Core) -> Result<(), MetadataError> {
    let members = BTreeMap::from([(
        core.me,
        PeerNode {
            addr: core.config.addr,
        },
    )]);
    match core.raft.initialize(members).await {
        Ok(()) => tracing::info!(
            "metadata group founded by {} at {}",
            core.me,
            core.config.addr
        ),
        Err(RaftError::APIError(InitializeError::NotAllowed(_))) => {}
        Err(e) => return Err(MetadataError::Storage(e.to_string())),
    }
    seed_if_pristine(core).await
}

/// A group still at epoch 0 gets its founding state: the initial metadata handed to `start`
/// (a node upgraded from before the cluster) or an empty cluster. Committing it is a
/// compare-and-set on epoch 0, so it happens once whoever tries.
pub(crate) async fn seed_if_pristine(core: &Core) -> Result<(), MetadataError> {
    if core.state.borrow().epoch != 0 {
        return Ok(());
    }
    let initial = core.initial.lock().take();
    let mut seed = initial.unwrap_or_default();
    seed.cluster_name = core.config.cluster_name.clone();
    let deadline = Instant::now() + core.config.commit_timeout;
    let outcome = core.propose(Command::Seed(seed), deadline).await?;
    match core.settle(outcome, deadline).await {
        Ok(_) | Err(MetadataError::Conflict { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Runs discovery rounds until this node is in a group (or the service stops).
pub(crate) async fn join_group(core: Arc<Core>) {
    let mut pause = FIRST_PAUSE;
    let mut rounds = 0u64;
    while !core.in_group() && !core.is_shut_down() {
        if let Err(reason) = round(&core).await {
            if rounds.is_multiple_of(20) {
                tracing::info!("metadata group: not joined yet: {reason}");
            }
            rounds += 1;
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(LONGEST_PAUSE);
        }
    }
    if core.initial.lock().take().is_some() {
        tracing::warn!(
            "metadata group: joined an existing group; the local schema given at start-up is not used"
        );
    }
}

/// One round: ask the seeds, then join, found, or say why not yet.
async fn round(core: &Core) -> Result<(), String> {
    let answers = ask_seeds(core).await;
    if let Some(leader) = answers.iter().find_map(|answer| answer.leader) {
        return ask_to_join(core, leader).await;
    }
    if answers.iter().any(|answer| answer.in_group) {
        return Err("the seeds' group has no leader at the moment".to_string());
    }
    if let Some(reason) = cannot_found(core, &answers) {
        return Err(reason);
    }
    found(core).await.map_err(|e| e.to_string())
}

/// The answers of the seeds that answered, of this cluster.
async fn ask_seeds(core: &Core) -> Vec<DiscoverReply> {
    let Some(transport) = &core.transport else {
        return Vec::new();
    };
    let request = DiscoverRequest {
        from: core.me_peer(),
        cluster_name: core.config.cluster_name.clone(),
    };
    let Ok(payload) = encode(&request) else {
        return Vec::new();
    };
    let payload = Bytes::from(payload);
    let calls = core
        .config
        .other_seeds()
        .into_iter()
        .map(|seed| transport.call(seed, RpcKind::Discover, payload.clone(), ASK_TIMEOUT));
    let mut answers = Vec::new();
    for result in futures::future::join_all(calls).await {
        let Ok(answer) = result
            .map_err(|e| e.to_string())
            .and_then(|bytes| decode::<DiscoverReply>(&bytes).map_err(|e| e.to_string()))
        else {
            continue;
        };
        if answer.cluster_name == core.config.cluster_name {
            answers.push(answer);
        } else {
            tracing::warn!(
                "metadata discovery: seed {} belongs to cluster '{}', this node to '{}'; ignoring it",
                answer.me.addr,
                answer.cluster_name,
                core.config.cluster_name
            );
        }
    }
    answers
}

/// Why this node may not found the group now (None: it may).
fn cannot_found(core: &Core, answers: &[DiscoverReply]) -> Option<String> {
    if !core.config.is_seed() {
        return Some("no seed is in a group yet (only a seed founds one)".to_string());
    }
    let seeds = core.config.other_seeds().len() + 1;
    let answered = 1 + answers
        .iter()
        .filter(|answer| core.config.seeds.contains(&answer.me.addr))
        .count();
    if answered < seeds {
        return Some(format!(
            "{answered} of {seeds} seeds answered; a new cluster forms once every seed runs"
        ));
    }
    let smaller = answers
        .iter()
        .map(|answer| answer.me)
        .filter(|peer| peer.host_id < core.me.0)
        .min_by_key(|peer| peer.host_id)?;
    Some(format!(
        "seed {} at {} has a smaller host id and founds the group",
        smaller.host_id, smaller.addr
    ))
}

/// Asks the leader to add this node; done once the group's membership reached this node.
async fn ask_to_join(core: &Core, leader: Peer) -> Result<(), String> {
    let Some(transport) = &core.transport else {
        return Err("no internode messaging".to_string());
    };
    let timeout = core.config.commit_timeout;
    let request = ForwardRequest::Join {
        peer: core.me_peer(),
        cluster_name: core.config.cluster_name.clone(),
        timeout_ms: timeout.as_millis() as u64,
    };
    let payload = encode(&request).map_err(|e| e.to_string())?;
    let answer = transport
        .call(leader.addr, RpcKind::Forward, Bytes::from(payload), timeout)
        .await
        .map_err(|e| format!("leader {} at {}: {e}", leader.host_id, leader.addr))?;
    match decode::<ForwardReply>(&answer).map_err(|e| e.to_string())? {
        ForwardReply::Done(_) => await_membership(core).await,
        ForwardReply::NotLeader(_) => Err(format!("{} is no longer the leader", leader.addr)),
        ForwardReply::NoQuorum(message) | ForwardReply::Failed(message) => Err(message),
    }
}

/// Waits for the leader's replication to bring this node its membership.
async fn await_membership(core: &Core) -> Result<(), String> {
    let mut metrics = core.raft.metrics();
    let me = core.me;
    let reached = metrics.wait_for(|m| m.membership_config.membership().get_node(&me).is_some());
    let joined = tokio::time::timeout(core.config.election_timeout * 4, reached)
        .await
        .is_ok_and(|waited| waited.is_ok());
    if joined {
        tracing::info!("metadata group: joined as a learner");
        Ok(())
    } else {
        Err("added to the group but not replicated to yet".to_string())
    }
}
