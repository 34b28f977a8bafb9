//! The leader makes registered learners voters once they have caught up with the log, until
//! the group has `MAX_VOTERS` voters; the other nodes stay learners. Voters are added so that
//! their number stays odd (1, 3, 5, 7): a group of two voters stops at the loss of either,
//! while one of three survives the loss of any one — so a third node's arrival turns one voter
//! into three in a single change, and a lone second learner waits for a partner.

use std::collections::BTreeSet;
use std::sync::Weak;

use openraft::{ChangeMembers, ServerState};

use crate::config::{settled_voters, MAX_VOTERS};
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
    let ready: Vec<NodeId> = membership
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
        .collect();
    let count = odd_total(voters, ready.len());
    let learners: BTreeSet<NodeId> = ready.into_iter().take(count).collect();
    (!learners.is_empty()).then_some(learners)
}

/// How many of `ready` learners to add to `voters` voters to reach the settled number.
fn odd_total(voters: usize, ready: usize) -> usize {
    settled_voters(voters + ready).saturating_sub(voters)
}

#[cfg(test)]
mod tests {
    use super::odd_total;

    #[test]
    fn voters_grow_from_one_to_three_never_to_two() {
        assert_eq!(
            odd_total(1, 1),
            0,
            "a second voter would make the group fragile"
        );
        assert_eq!(odd_total(1, 2), 2);
        assert_eq!(odd_total(1, 3), 2);
        assert_eq!(odd_total(3, 1), 0);
        assert_eq!(odd_total(3, 4), 4);
        assert_eq!(odd_total(7, 3), 0, "no room past MAX_VOTERS");
        assert_eq!(
            odd_total(2, 1),
            1,
            "an even group left by a removal is made odd again"
        );
    }
}
