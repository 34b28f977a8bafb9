//! Asking several replicas the same question and collecting every answer: a replica that
//! fails or cannot be reached is replaced by a spare live replica when one is left (the reply
//! keeps its slot, so a replacement is asked what the replica it replaces was asked).
use std::net::IpAddr;

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use net::NetError;
use ring::Endpoint;
use tokio::time::Instant;

use crate::verbs::reason;

/// Why a replica gave no answer.
#[derive(Debug)]
pub(crate) enum Failure {
    /// It answered with an error (counted by ReadFailure, with Cassandra's reason code).
    Failed(u16),
    /// No answer in time, or not reachable.
    Silent,
}

/// One replica's answer to the question asked of `slot`.
pub(crate) type Answer<R> = (usize, Endpoint, Result<R, Failure>);

/// The answers when not all came: those that did (by slot), the failures, and whether the
/// deadline passed.
pub(crate) struct Shortfall<R> {
    pub replies: Vec<Option<(Endpoint, R)>>,
    pub failures: Vec<(IpAddr, u16)>,
}

impl<R> Shortfall<R> {
    pub fn received(&self) -> i32 {
        self.replies.iter().flatten().count() as i32
    }
}

/// Asks every contact with `ask(slot, endpoint)` and waits for all their answers (until
/// `deadline`), replacing one that fails by the first of `spares`.
pub(crate) async fn gather<R>(
    contacts: &mut [Endpoint],
    spares: &mut Vec<Endpoint>,
    ask: impl Fn(usize, Endpoint) -> BoxFuture<'static, Answer<R>>,
    deadline: Instant,
) -> Result<Vec<(Endpoint, R)>, Shortfall<R>> {
    let mut pending: FuturesUnordered<_> = contacts
        .iter()
        .enumerate()
        .map(|(slot, e)| ask(slot, e.clone()))
        .collect();
    let mut replies: Vec<Option<(Endpoint, R)>> = contacts.iter().map(|_| None).collect();
    let mut failures = Vec::new();
    while replies.iter().any(Option::is_none) {
        let next = tokio::select! {
            next = pending.next() => next,
            _ = tokio::time::sleep_until(deadline) => None,
        };
        let Some((slot, endpoint, answer)) = next else {
            return Err(Shortfall { replies, failures });
        };
        match answer {
            Ok(reply) => replies[slot] = Some((endpoint, reply)),
            Err(failure) => {
                if let Failure::Failed(code) = failure {
                    failures.push((endpoint.addr, code));
                }
                if spares.is_empty() {
                    return Err(Shortfall { replies, failures });
                }
                let spare = spares.remove(0);
                contacts[slot] = spare.clone();
                pending.push(ask(slot, spare));
            }
        }
    }
    Ok(replies.into_iter().flatten().collect())
}

/// What a remote replica's answer (or its absence) means, its payload decoded by `decode`.
pub(crate) fn remote<R>(
    answer: Result<bytes::Bytes, NetError>,
    decode: impl FnOnce(&[u8]) -> Result<R, mutation::codec::DecodeError>,
) -> Result<R, Failure> {
    match answer {
        Ok(bytes) => decode(&bytes).map_err(|e| {
            tracing::warn!("malformed reply from a replica: {}", e.0);
            Failure::Failed(reason::UNKNOWN)
        }),
        Err(NetError::Remote(e)) if e.code == reason::TIMEOUT => Err(Failure::Silent),
        Err(NetError::Remote(e)) => {
            tracing::debug!("a replica failed a read: {}", e.message);
            Err(Failure::Failed(e.code))
        }
        Err(_) => Err(Failure::Silent),
    }
}
