//! The leader's side: commit a command, add a joining node as a learner, take a removed node
//! out of the group.

use std::collections::BTreeSet;
use std::time::Duration;

use openraft::error::{ClientWriteError, RaftError};
use openraft::ChangeMembers;
use tokio::time::Instant;

use crate::core::Core;
use crate::model::Transformation;
use crate::raft_types::{NodeId, PeerNode};
use crate::rpc::{ForwardReply, Peer};
use crate::transform::{Command, Outcome};

type WriteError = RaftError<NodeId, ClientWriteError<NodeId, PeerNode>>;

/// Commits `command` if this node leads a group that hears from a majority.
pub(crate) async fn execute(core: &Core, command: Command, timeout: Duration) -> ForwardReply {
    if let Some(reply) = lost_quorum(core) {
        return reply;
    }
    let deadline = Instant::now() + timeout;
    if let Command::Apply(Transformation::RemoveNode { host_id }) = &command {
        if let Err(reply) = leave_group(core, NodeId(*host_id), timeout).await {
            return reply;
        }
    }
    match tokio::time::timeout_at(deadline, core.raft.client_write(command)).await {
        Ok(Ok(response)) => ForwardReply::Done(response.data),
        Ok(Err(e)) => write_failed(&e),
        Err(_) => not_acknowledged(timeout),
    }
}

/// Adds `peer` to the group as a learner (the promotion task makes it a voter later).
pub(crate) async fn join(
    core: &Core,
    peer: Peer,
    cluster_name: &str,
    timeout: Duration,
) -> ForwardReply {
    if cluster_name != core.config.cluster_name {
        return ForwardReply::Failed(format!(
            "the node at {} belongs to cluster '{cluster_name}', this one is '{}'",
            peer.addr, core.config.cluster_name
        ));
    }
    if let Some(member) = Core::peer(&core.metrics(), NodeId(peer.host_id)) {
        return if member.addr == peer.addr {
            ForwardReply::Done(Outcome::Nothing)
        } else {
            ForwardReply::Failed(format!(
                "host id {} is already a member at {}",
                peer.host_id, member.addr
            ))
        };
    }
    tracing::info!(
        "metadata group: adding {} at {} as a learner",
        peer.host_id,
        peer.addr
    );
    let node = PeerNode { addr: peer.addr };
    let add = core.raft.add_learner(NodeId(peer.host_id), node, false);
    match tokio::time::timeout(timeout, add).await {
        Ok(Ok(_)) => ForwardReply::Done(Outcome::Nothing),
        Ok(Err(e)) => write_failed(&e),
        Err(_) => not_acknowledged(timeout),
    }
}

/// A leader that has heard from no majority for two election timeouts answers at once
/// rather than appending an entry it cannot commit.
fn lost_quorum(core: &Core) -> Option<ForwardReply> {
    let metrics = core.metrics();
    let voters = metrics.membership_config.membership().voter_ids().count();
    let limit = 2 * core.config.election_timeout.as_millis() as u64;
    match metrics.millis_since_quorum_ack {
        Some(silent) if voters > 1 && silent > limit => Some(ForwardReply::NoQuorum(format!(
            "the leader has heard from no majority of the {voters} voters for {silent} ms"
        ))),
        _ => None,
    }
}

/// Takes the node `id` out of the group's membership before it is removed from the ring.
async fn leave_group(core: &Core, id: NodeId, timeout: Duration) -> Result<(), ForwardReply> {
    let metrics = core.metrics();
    let membership = metrics.membership_config.membership();
    let ids = BTreeSet::from([id]);
    let change = if membership.voter_ids().any(|voter| voter == id) {
        ChangeMembers::RemoveVoters(ids)
    } else if membership.get_node(&id).is_some() {
        ChangeMembers::RemoveNodes(ids)
    } else {
        return Ok(());
    };
    tracing::info!("metadata group: removing member {id}");
    match tokio::time::timeout(timeout, core.raft.change_membership(change, false)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(RaftError::APIError(ClientWriteError::ChangeMembershipError(
            openraft::error::ChangeMembershipError::EmptyMembership(_),
        )))) => Err(ForwardReply::Done(Outcome::Rejected(
            "cannot remove the last voter of the metadata group".to_string(),
        ))),
        Ok(Err(e)) => Err(write_failed(&e)),
        Err(_) => Err(not_acknowledged(timeout)),
    }
}

fn write_failed(e: &WriteError) -> ForwardReply {
    match e.forward_to_leader::<PeerNode>() {
        Some(forward) => {
            let leader = forward
                .leader_id
                .zip(forward.leader_node.as_ref())
                .map(|(id, node)| Peer {
                    host_id: id.0,
                    addr: node.addr,
                });
            ForwardReply::NotLeader(leader)
        }
        None => ForwardReply::Failed(e.to_string()),
    }
}

fn not_acknowledged(timeout: Duration) -> ForwardReply {
    ForwardReply::NoQuorum(format!(
        "the leader could not commit within {timeout:?}: a majority of the voters did not acknowledge"
    ))
}
