//! The leader makes registered learners voters once they have caught up with the log, until
//! the group has `MAX_VOTERS` voters; the other nodes stay learners.

use std::collections::BTreeSet;
use std::sync::Weak;

use openraft::{ChangeMembers, ServerState};

use crate::config::MAX_VOTERS;
use crate::core::Core;
use crate::model::NodeState;
use crate::raft_types::NodeId;

/// A learner this close to the leader's last log index counts as caught up.
const CAUGHT_UP_LAG: u64 = 8;

/// Checks every other heartbeat until the service is gone.
pub(crate) async fn promote_learners(core: Weak<Core>) {
    loop {
        let Some(core) = core.upgrade() else { return };
        if core.is_shut_down() {
            return;
        }
        let pause = core.config.heartbeat_interval * 2;
        if let Some(learners) = promotable(&core) {
            tracing::info!("metadata group: making {learners:?} voters");
            let change = ChangeMembers::AddVoterIds(learners);
            let promote = core.raft.change_membership(change, false);
            match tokio::time::timeout(core.config.commit_timeout, promote).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::warn!("metadata group: promotion failed: {e}"),
                Err(_) => tracing::warn!("metadata group: promotion not committed in time"),
            }
        }
        drop(core);
        tokio::time::sleep(pause).await;
    }
}

/// The learners to promote now, if this node leads and there is room.
fn promotable(core: &Core) -> Option<BTreeSet<NodeId>> {
    let metrics = core.metrics();
    if metrics.state != ServerState::Leader {
        return None;
    }
    let membership = metrics.membership_config.membership();
    let voters = membership.voter_ids().count();
    if membership.get_joint_config().len() > 1 || voters >= MAX_VOTERS {
        return None;
    }
    let last = metrics.last_log_index?;
    let replication = metrics.replication.as_ref()?;
    let state = core.state.borrow().clone();
    let learners: BTreeSet<NodeId> = membership
        .learner_ids()
        .filter(|id| {
            state
                .nodes
                .get(&id.0)
                .is_some_and(|node| node.state != NodeState::Left)
        })
        .filter(|id| {
            replication
                .get(id)
                .copied()
                .flatten()
                .is_some_and(|matched| matched.index + CAUGHT_UP_LAG >= last)
        })
        .take(MAX_VOTERS - voters)
        .collect();
    (!learners.is_empty()).then_some(learners)
}
