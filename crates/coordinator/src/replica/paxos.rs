//! `Verb::PaxosPrepare`, `Verb::PaxosPropose`, `Verb::PaxosCommit` and `Verb::PaxosCleanup`
//! on a replica: this node's Paxos participant answers once what it promised, accepted,
//! applied or purged is durable.
//! A replica that does not know the table yet waits for the sender's schema first.
use std::sync::Arc;

use bytes::Bytes;
use net::{Peer, RemoteError, Verb};
use paxos::{Prepare, PrepareAnswer, Proposal, ProposeAnswer, StoreError};

use super::context::Replica;
use crate::failures::{malformed, reason};
use crate::messages::paxos::{
    encode_cleanup_answer, encode_prepare_answer, encode_propose_answer, CleanupRequest,
    PaxosRequest,
};
use crate::paxos::remote::{key_of, Local, PaxosCell};
use crate::paxos::store::ballot_uuid;
use crate::paxos::Lwt;
use crate::trace;

/// Registers the four verbs, each answered by the node's participant.
pub(super) fn register(messaging: &net::Messaging, replica: Replica, cell: Arc<PaxosCell>) {
    let (r1, c1) = (replica.clone(), cell.clone());
    messaging.register(
        Verb::PaxosPrepare,
        net::handler_fn(move |from, payload| prepare(r1.clone(), c1.clone(), from, payload)),
    );
    let (r2, c2) = (replica.clone(), cell.clone());
    messaging.register(
        Verb::PaxosPropose,
        net::handler_fn(move |from, payload| propose(r2.clone(), c2.clone(), from, payload)),
    );
    let (r3, c3) = (replica.clone(), cell.clone());
    messaging.register(
        Verb::PaxosCleanup,
        net::handler_fn(move |from, payload| cleanup(r3.clone(), c3.clone(), from, payload)),
    );
    messaging.register(
        Verb::PaxosCommit,
        net::handler_fn(move |from, payload| commit(replica.clone(), cell.clone(), from, payload)),
    );
}

/// The participant, once the table the request names is known here.
async fn participant(
    replica: &Replica,
    cell: &PaxosCell,
    epoch: u64,
    table: mutation::TableId,
) -> Result<Arc<Local>, RemoteError> {
    replica
        .known_tables(epoch, std::iter::once(table))
        .await
        .map_err(crate::failures::write_failure)?;
    cell.get().map(|s| s.local.clone()).map_err(store_failure)
}

/// A proposal or a commit (`verb`) decoded, its trace begun and the participant that answers it.
async fn proposal(
    replica: &Replica,
    cell: &PaxosCell,
    from: &Peer,
    payload: &Bytes,
    verb: Verb,
) -> Result<
    (
        PaxosRequest<Proposal<mutation::Mutation>>,
        Option<trace::Trace>,
        Arc<Local>,
    ),
    RemoteError,
> {
    let what = match verb {
        Verb::PaxosCommit => "Paxos commit",
        _ => "Paxos proposal",
    };
    let request: PaxosRequest<Proposal<mutation::Mutation>> =
        PaxosRequest::decode_proposal(payload).map_err(|e| malformed(what, from, e))?;
    let trace = trace::received(request.session, verb, from.addr);
    let table = key_of(&request.body).table;
    let local = participant(replica, cell, request.epoch, table).await?;
    Ok((request, trace, local))
}

/// A step of a purge after repair (see `paxos::cleanup`).
async fn cleanup(
    replica: Replica,
    cell: Arc<PaxosCell>,
    from: Peer,
    payload: Bytes,
) -> Result<Bytes, RemoteError> {
    let request: PaxosRequest<CleanupRequest> =
        PaxosRequest::decode_cleanup(&payload).map_err(|e| malformed("Paxos cleanup", &from, e))?;
    let local = participant(&replica, &cell, request.epoch, request.body.table).await?;
    let answer = local.cleanup(&request.body).await.map_err(store_failure)?;
    Ok(encode_cleanup_answer(&answer))
}

fn store_failure(e: StoreError) -> RemoteError {
    tracing::error!("Paxos state: {e}");
    RemoteError::new(reason::UNKNOWN, e.to_string())
}

async fn prepare(
    replica: Replica,
    cell: Arc<PaxosCell>,
    from: Peer,
    payload: Bytes,
) -> Result<Bytes, RemoteError> {
    let request: PaxosRequest<Prepare<Lwt>> =
        PaxosRequest::decode_prepare(&payload).map_err(|e| malformed("Paxos prepare", &from, e))?;
    let trace = trace::received(request.session, Verb::PaxosPrepare, from.addr);
    let local = participant(&replica, &cell, request.epoch, request.body.key.table).await?;
    let answer = local.prepare(&request.body).await.map_err(store_failure);
    trace::trace(trace.as_ref(), || match &answer {
        Ok(PrepareAnswer::Permitted(p)) if p.promised => {
            format!("Promising ballot {}", ballot_uuid(request.body.ballot))
        }
        Ok(PrepareAnswer::Permitted(_)) => "Permitting a read under a newer read promise".into(),
        Ok(PrepareAnswer::Rejected { by }) => format!(
            "Promise rejected; {} is not sufficiently newer than {}",
            ballot_uuid(request.body.ballot),
            ballot_uuid(*by)
        ),
        Err(e) => format!("Paxos prepare failed: {}", e.message),
    });
    replica.respond(trace, &from);
    Ok(encode_prepare_answer(&answer?))
}

async fn propose(
    replica: Replica,
    cell: Arc<PaxosCell>,
    from: Peer,
    payload: Bytes,
) -> Result<Bytes, RemoteError> {
    let (request, trace, local) =
        proposal(&replica, &cell, &from, &payload, Verb::PaxosPropose).await?;
    let answer = local.propose(&request.body).await.map_err(store_failure);
    trace::trace(trace.as_ref(), || match &answer {
        Ok(ProposeAnswer::Accepted) => {
            format!("Accepting proposal {}", ballot_uuid(request.body.ballot))
        }
        Ok(ProposeAnswer::Rejected { by }) => format!(
            "Rejecting proposal for {} because in_progress is now {}",
            ballot_uuid(request.body.ballot),
            ballot_uuid(*by)
        ),
        Err(e) => format!("Paxos proposal failed: {}", e.message),
    });
    replica.respond(trace, &from);
    Ok(encode_propose_answer(&answer?))
}

async fn commit(
    replica: Replica,
    cell: Arc<PaxosCell>,
    from: Peer,
    payload: Bytes,
) -> Result<Bytes, RemoteError> {
    let (request, trace, local) =
        proposal(&replica, &cell, &from, &payload, Verb::PaxosCommit).await?;
    trace::trace(trace.as_ref(), || {
        format!("Committing proposal {}", ballot_uuid(request.body.ballot))
    });
    let done = local.commit(&request.body).await.map_err(store_failure);
    replica.respond(trace, &from);
    done.map(|()| Bytes::new())
}
