//! Forming the group (ScyllaDB's group-0 discovery): a node with an empty log asks every seed
//! whether it is in a group and who leads it. If a group exists, the node asks its leader to
//! add it as a learner. If none does, the seeds choose a founder by single-decree Paxos
//! (`founding`): a seed that hears a majority of the seeds proposes itself (deferring a few
//! rounds to a seed with a smaller host id, so that normally one seed proposes), and the
//! founder chosen by a majority founds the group; the others then join it. A new cluster
//! therefore forms once a majority of its seeds run, and never twice: two majorities share a
//! seed. A seed chosen as founder that dies before founding holds the cluster up until it
//! returns (the others cannot tell whether it founded). A node joining an existing group needs
//! only one seed that knows the group.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use openraft::error::{InitializeError, RaftError};
use tokio::time::Instant;

use crate::codec::{decode, encode};
use crate::core::Core;
use crate::error::MetadataError;
use crate::founding::{value_to_propose, AcceptorState, Ballot, FoundingStep};
use crate::raft_types::PeerNode;
use crate::rpc::{DiscoverReply, DiscoverRequest, ForwardReply, ForwardRequest, Peer};
use crate::transform::Command;
use crate::transport::RpcKind;

/// How long a seed has to answer a discovery request.
const ASK_TIMEOUT: Duration = Duration::from_secs(1);
const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// Rounds a seed leaves to a seed with a smaller host id before proposing itself.
const DEFERRALS: u32 = 3;
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
    let mut deferrals = 0u32;
    while !core.in_group() && !core.is_shut_down() {
        if let Err(reason) = round(&core, &mut deferrals).await {
            if rounds.is_multiple_of(20) {
                tracing::info!("metadata group: not joined yet: {reason}");
            }
            rounds += 1;
            tokio::time::sleep(jittered(&core, pause, rounds)).await;
            pause = (pause * 2).min(LONGEST_PAUSE);
        }
    }
    if core.initial.lock().take().is_some() {
        tracing::warn!(
            "metadata group: joined an existing group; the local schema given at start-up is not used"
        );
    }
}

/// `pause` stretched by up to half, differently on every node, so that two seeds proposing
/// at once do not keep colliding.
fn jittered(core: &Core, pause: Duration, rounds: u64) -> Duration {
    let (high, low) = core.me.0.as_u64_pair();
    let spread = (high ^ low ^ rounds.wrapping_mul(0x9e37_79b9_7f4a_7c15)) % 50;
    pause + pause * spread as u32 / 100
}

/// One round: ask the seeds, then join, found, choose a founder, or say why not yet.
async fn round(core: &Core, deferrals: &mut u32) -> Result<(), String> {
    let answers = ask_seeds(core, FoundingStep::Ask).await;
    if let Some(leader) = answers.iter().find_map(|answer| answer.leader) {
        return ask_to_join(core, leader).await;
    }
    if answers.iter().any(|answer| answer.in_group) {
        return Err("the seeds' group has no leader at the moment".to_string());
    }
    let known = core.founding.state().chosen;
    let founder = match known.or_else(|| answers.iter().find_map(|a| a.founding.state.chosen)) {
        Some(founder) => founder,
        None => {
            if let Some(reason) = cannot_propose(core, &answers, deferrals) {
                return Err(reason);
            }
            propose(core, &answers).await?
        }
    };
    if known.is_none() {
        announce(core, founder).await;
    }
    if founder.host_id == core.me.0 {
        return found(core).await.map_err(|e| e.to_string());
    }
    Err(format!(
        "seed {} at {} was chosen to found the group; waiting for it",
        founder.host_id, founder.addr
    ))
}

/// Takes `step` at every other seed; the answers of those of this cluster that answered.
async fn ask_seeds(core: &Core, step: FoundingStep) -> Vec<DiscoverReply> {
    let Some(transport) = &core.transport else {
        return Vec::new();
    };
    let request = DiscoverRequest {
        from: core.me_peer(),
        cluster_name: core.config.cluster_name.clone(),
        step,
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
        if answer.cluster_name != core.config.cluster_name {
            tracing::warn!(
                "metadata discovery: seed {} belongs to cluster '{}', this node to '{}'; ignoring it",
                answer.me.addr,
                answer.cluster_name,
                core.config.cluster_name
            );
        } else if core.config.seeds.contains(&answer.me.addr) {
            answers.push(answer);
        }
    }
    answers
}

/// How many seeds there are, this one included.
fn seed_count(core: &Core) -> usize {
    core.config.other_seeds().len() + 1
}

/// How many seeds make a majority of them.
fn majority(core: &Core) -> usize {
    seed_count(core) / 2 + 1
}

/// Why this node may not propose itself as founder now (None: it may).
fn cannot_propose(core: &Core, answers: &[DiscoverReply], deferrals: &mut u32) -> Option<String> {
    if !core.config.is_seed() {
        return Some("no seed is in a group yet (only a seed founds one)".to_string());
    }
    let seeds = seed_count(core);
    let answered = answers.len() + 1;
    if answered < majority(core) {
        return Some(format!(
            "{answered} of {seeds} seeds answered; a new cluster forms once a majority of its seeds run"
        ));
    }
    let smaller = answers
        .iter()
        .map(|answer| answer.me)
        .filter(|peer| peer.host_id < core.me.0)
        .min_by_key(|peer| peer.host_id)?;
    if *deferrals >= DEFERRALS {
        return None;
    }
    *deferrals += 1;
    Some(format!(
        "seed {} at {} has a smaller host id and proposes to found the group",
        smaller.host_id, smaller.addr
    ))
}

/// Runs one Paxos ballot for the founder; the founder chosen.
async fn propose(core: &Core, answers: &[DiscoverReply]) -> Result<Peer, String> {
    let highest = answers
        .iter()
        .map(|answer| answer.founding.state.promised.round)
        .fold(core.founding.state().promised.round, u64::max);
    let ballot = Ballot {
        round: highest + 1,
        host_id: core.me.0,
    };
    let promises = poll(core, FoundingStep::Prepare(ballot)).await?;
    let founder = value_to_propose(&promises, core.me_peer());
    poll(core, FoundingStep::Accept(ballot, founder)).await?;
    tracing::info!(
        "metadata group: seed {} at {} chosen to found the group (ballot {})",
        founder.host_id,
        founder.addr,
        ballot.round
    );
    Ok(founder)
}

/// Takes `step` here and at the other seeds; the states of those that granted it, if a
/// majority of the seeds did.
async fn poll(core: &Core, step: FoundingStep) -> Result<Vec<AcceptorState>, String> {
    let local = core.founding.step(step)?;
    let remote = ask_seeds(core, step).await;
    let granted: Vec<AcceptorState> = std::iter::once(local)
        .chain(remote.iter().map(|answer| answer.founding))
        .filter(|reply| reply.granted)
        .map(|reply| reply.state)
        .collect();
    if granted.len() < majority(core) {
        return Err(format!(
            "{} of {} seeds granted the founding ballot; a majority must",
            granted.len(),
            seed_count(core)
        ));
    }
    Ok(granted)
}

/// Records the chosen founder here and tells the other seeds (best effort: a seed that misses
/// it learns it from the others' answers, or from the founder's group).
async fn announce(core: &Core, founder: Peer) {
    if let Err(e) = core.founding.step(FoundingStep::Chosen(founder)) {
        tracing::warn!("metadata group: {e}");
    }
    ask_seeds(core, FoundingStep::Chosen(founder)).await;
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
