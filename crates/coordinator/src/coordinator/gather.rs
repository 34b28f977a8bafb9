//! Asking several replicas the same question and collecting every answer: a replica that
//! fails or cannot be reached is replaced by a spare live replica when one is left (the reply
//! keeps its slot, so a replacement is asked what the replica it replaces was asked).
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use net::{Messaging, NetError, Verb};
use ring::Endpoint;
use tokio::time::Instant;

use crate::failures::reason;
use crate::proxy_metrics::ReplicaStats;

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

/// When to ask one more replica than needed, and what counts it.
#[derive(Clone, Copy, Default)]
pub(crate) struct Speculation<'a> {
    /// How long to wait for every answer before asking a spare (`None`: never).
    pub after: Option<Duration>,
    pub counter: Option<&'a AtomicU64>,
}

/// Asks every contact with `ask(slot, endpoint)` and waits for all their answers (until
/// `deadline`), replacing one that fails by the first of `spares`, and asking a spare for a
/// slot still unanswered when `speculation` says so (the first answer for a slot counts).
/// A failure no spare can replace ends the wait at once, as Cassandra's ReadCallback signals
/// on a failure that leaves too few replicas; a silent replica (unreachable: its connection
/// refused or reset) does not answer, so the others' answers are still awaited and counted.
pub(crate) async fn gather<R>(
    contacts: &mut [Endpoint],
    spares: &mut Vec<Endpoint>,
    ask: impl Fn(usize, Endpoint) -> BoxFuture<'static, Answer<R>>,
    speculation: Speculation<'_>,
    deadline: Instant,
) -> Result<Vec<(Endpoint, R)>, Shortfall<R>> {
    let mut pending: FuturesUnordered<_> = contacts
        .iter()
        .enumerate()
        .map(|(slot, e)| ask(slot, e.clone()))
        .collect();
    let mut in_flight = vec![1_u32; contacts.len()];
    let mut replies: Vec<Option<(Endpoint, R)>> = contacts.iter().map(|_| None).collect();
    let mut failures = Vec::new();
    let mut speculate_at = speculation.after.map(|after| Instant::now() + after);
    while replies.iter().any(Option::is_none) {
        // Biased: a reply that is in when the deadline passes counts, the same in every run.
        let next = tokio::select! {
            biased;
            next = pending.next() => next,
            _ = tokio::time::sleep_until(speculate_at.unwrap_or(deadline)), if speculate_at.is_some() => {
                speculate_at = None;
                let slot = replies.iter().position(Option::is_none);
                if let Some(slot) = slot.filter(|_| !spares.is_empty()) {
                    pending.push(ask(slot, spares.remove(0)));
                    in_flight[slot] += 1;
                    if let Some(counter) = speculation.counter {
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                }
                continue;
            }
            _ = tokio::time::sleep_until(deadline) => None,
        };
        let Some((slot, endpoint, answer)) = next else {
            return Err(Shortfall { replies, failures });
        };
        in_flight[slot] -= 1;
        if replies[slot].is_some() {
            continue;
        }
        match answer {
            Ok(reply) => replies[slot] = Some((endpoint, reply)),
            Err(failure) => {
                let failed = if let Failure::Failed(code) = failure {
                    failures.push((endpoint.addr, code));
                    true
                } else {
                    false
                };
                if !spares.is_empty() {
                    let spare = spares.remove(0);
                    contacts[slot] = spare.clone();
                    pending.push(ask(slot, spare));
                    in_flight[slot] += 1;
                } else if failed && in_flight[slot] == 0 {
                    return Err(Shortfall { replies, failures });
                }
            }
        }
    }
    Ok(replies.into_iter().flatten().collect())
}

/// One request to a remote replica, its latency recorded.
pub(crate) struct Remote {
    messaging: Option<Arc<Messaging>>,
    to: SocketAddr,
    timeout: Duration,
}

impl Remote {
    pub fn new(messaging: Option<Arc<Messaging>>, to: SocketAddr, timeout: Duration) -> Remote {
        Remote {
            messaging,
            to,
            timeout,
        }
    }

    /// Sends the request; what its answer (or its absence) means.
    pub async fn request(
        self,
        verb: Verb,
        payload: Bytes,
        replica: &ReplicaStats,
    ) -> Result<Bytes, Failure> {
        let Some(messaging) = self.messaging else {
            return Err(Failure::Silent);
        };
        let started = Instant::now();
        let answer = messaging
            .request(self.to, verb, payload, self.timeout)
            .await;
        replica.record(started.elapsed());
        match answer {
            Ok(bytes) => Ok(bytes),
            Err(NetError::Remote(e)) if e.code == reason::TIMEOUT => Err(Failure::Silent),
            Err(NetError::Remote(e)) => {
                tracing::debug!("a replica failed a read: {}", e.message);
                Err(Failure::Failed(e.code))
            }
            Err(_) => Err(Failure::Silent),
        }
    }
}

/// A reply decoded; a malformed one counts as a failure.
pub(crate) fn decoded<R>(
    bytes: Bytes,
    decode: impl FnOnce(&[u8]) -> Result<R, mutation::codec::DecodeError>,
) -> Result<R, Failure> {
    decode(&bytes).map_err(|e| {
        tracing::warn!("malformed reply from a replica: {}", e.0);
        Failure::Failed(reason::UNKNOWN)
    })
}
