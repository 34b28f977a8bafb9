//! Paxos state purged once committed and repaired (Cassandra 5.0's `paxos_state_purging:
//! repaired`). After a repair session of a table's ranges succeeded, its coordinator runs two
//! steps over the session's replicas:
//!
//! 1. Each raises its low bound to the repair's ballot (its start less the purge grace) and
//!    says which of its partitions in the ranges could be purged: nothing accepted and not yet
//!    committed, no ballot newer than the bound. From then on no replica accepts a ballot at
//!    or below the bound, so what a replica holds below it can only gain commits.
//! 2. The partitions every replica found purgeable (a replica with no state for one counts),
//!    and whose replicas all took part in the repair, are purged on each: their rows deleted,
//!    the low bound standing in for their ballots.
//!
//! Purging a partition on some replicas only would be unsafe: a replica that missed a commit
//! may still hold an older accepted proposal, which a prepare would re-propose once the
//! commit that supersedes it is forgotten everywhere else (CASSANDRA-12126's stale replay).
//! Step 1 sees such a proposal on that replica and keeps the partition everywhere.
use std::collections::HashSet;
use std::future::Future;

use futures::future::join_all;
use mutation::{PartitionKey, TableId, TokenRange};
use paxos::{Answer, Ballot, Replicas};

use super::{Lwt, LwtKey};
use crate::messages::paxos::CleanupRequest;

/// The replicas a purge reaches: their electorates, and a step of it on one of them.
pub(crate) trait CleanupReplicas: Replicas<Lwt> {
    fn cleanup(
        &self,
        to: &Self::Node,
        request: &CleanupRequest,
    ) -> impl Future<Output = Answer<Vec<(PartitionKey, bool)>>> + Send;
}

/// Runs both steps for `table`'s partitions in `ranges` over `participants` (the repair's
/// replicas, this node among them); how many replica states were purged.
pub(crate) async fn after_repair<R: CleanupReplicas>(
    replicas: &R,
    table: TableId,
    ranges: &[TokenRange],
    participants: &[R::Node],
    repaired: Ballot,
) -> Result<usize, String> {
    let gather = CleanupRequest {
        table,
        ranges: ranges.to_vec(),
        repaired,
        keys: None,
    };
    let mut purgeable = HashSet::new();
    let mut kept = HashSet::new();
    for (key, ok) in on_all(replicas, participants, &gather).await? {
        match ok {
            true => purgeable.insert(key),
            false => kept.insert(key),
        };
    }
    let keys: Vec<PartitionKey> = purgeable
        .difference(&kept)
        .filter(|key| all_took_part(replicas, table, key, participants))
        .cloned()
        .collect();
    if keys.is_empty() {
        return Ok(0);
    }
    let purge = CleanupRequest {
        keys: Some(keys),
        ..gather
    };
    let purged = on_all(replicas, participants, &purge).await?;
    Ok(purged.iter().filter(|(_, done)| *done).count())
}

/// Whether every replica of the partition, pending ones included, is among `participants`.
fn all_took_part<R: CleanupReplicas>(
    replicas: &R,
    table: TableId,
    key: &PartitionKey,
    participants: &[R::Node],
) -> bool {
    let electorate = replicas.electorate(&LwtKey {
        table,
        key: key.clone(),
    });
    electorate
        .natural
        .iter()
        .chain(&electorate.pending)
        .all(|node| participants.contains(node))
}

/// `request` on every participant at once, their answers together; fails unless all answer.
async fn on_all<R: CleanupReplicas>(
    replicas: &R,
    participants: &[R::Node],
    request: &CleanupRequest,
) -> Result<Vec<(PartitionKey, bool)>, String> {
    let answers = join_all(participants.iter().map(|to| replicas.cleanup(to, request))).await;
    let mut all = Vec::new();
    for (to, answer) in participants.iter().zip(answers) {
        match answer {
            Ok(keys) => all.extend(keys),
            Err(e) => return Err(format!("Paxos cleanup on {to:?}: {e:?}")),
        }
    }
    Ok(all)
}
