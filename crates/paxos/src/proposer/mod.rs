//! The proposer (Cassandra's `Paxos.cas`, `Paxos.read` and `Paxos.begin`): a leaderless round
//! per operation over the partition's replicas.
//!
//! An operation *begins* with a prepare that also reads (read with prepare). The answers of a
//! quorum may show a proposal accepted and not committed, newer than the latest commit: it is
//! re-proposed under the new ballot first (an older one was superseded by that commit and is
//! never replayed — the CASSANDRA-12126 rule). They may show replicas that missed the latest
//! commit: it is sent to them again, or folded into the next prepare. Then a compare-and-set
//! evaluates its condition on the resolved read and proposes its update, or an empty one when
//! the condition fails — unless every replica of the quorum was *stable* (no write promised
//! since its latest commit), when the read alone is linearizable and nothing is proposed; a
//! SERIAL read proposes an empty update only when not stable. A round lost to a newer ballot
//! backs off for a random time and starts again above it; a proposal that some replica may
//! have accepted ends the operation as a timeout whose write is unknown.
mod prepare;
mod rounds;

use std::marker::PhantomData;
use std::time::Duration;

use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::ballot::{Ballot, BallotGenerator, Clock};
use crate::error::{Outcome, PaxosError};
use crate::messages::Prepare;
use crate::metrics::Metrics;
use crate::replicas::{Participants, Replicas};
use crate::types::{Proposal, Types};
use prepare::Prepared;
use rounds::Proposed;

/// A proposer's settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// How long an operation may contend before it times out (Cassandra's
    /// `cas_contention_timeout`, 1 s).
    pub timeout: Duration,
    /// The ceiling of the first back-off; each further one multiplies it by 1.8, up to
    /// `max_backoff` (Cassandra 5.0's default bounds: 10 ms, ×1.8 per attempt, 100 ms).
    pub first_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            timeout: Duration::from_millis(1000),
            first_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(100),
        }
    }
}

/// Runs compare-and-sets and SERIAL reads over the replicas `R`.
pub struct Proposer<T: Types, R, C> {
    replicas: R,
    ballots: BallotGenerator<C>,
    config: Config,
    rng: Mutex<SmallRng>,
    metrics: Metrics,
    /// Test-only: a protocol rule broken on purpose, to show the checker catches it.
    #[cfg(test)]
    pub(crate) broken: Option<Broken>,
    types: PhantomData<fn() -> T>,
}

/// Test-only ways to break the protocol.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Broken {
    /// Go on past an in-progress proposal instead of completing it.
    SkipRepair,
}

/// What a successful begin leaves for the operation.
struct Begun<T: Types, N> {
    ballot: Ballot,
    participants: Participants<N>,
    reads: Vec<T::Read>,
    /// A promise, which may propose; else a read-only permission.
    promised: bool,
    /// The reads alone are linearizable: no empty proposal is needed to order them.
    linearizable: bool,
    superseded_by: Option<Ballot>,
}

/// One operation's deadline and lost rounds.
struct Attempts {
    deadline: u64,
    contentions: u32,
}

impl<T: Types, R: Replicas<T>, C: Clock> Proposer<T, R, C> {
    /// A proposer issuing ballots from `ballots`; `seed` seeds the back-off's randomness.
    pub fn new(replicas: R, ballots: BallotGenerator<C>, config: Config, seed: u64) -> Self {
        Proposer {
            replicas,
            ballots,
            config,
            rng: Mutex::new(SmallRng::seed_from_u64(seed)),
            metrics: Metrics::default(),
            #[cfg(test)]
            broken: None,
            types: PhantomData,
        }
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    pub fn replicas(&self) -> &R {
        &self.replicas
    }

    /// Compare-and-set on `key`: `condition` sees the current value (read with `query`) and
    /// the ballot whose microseconds are the update's write timestamp, and returns the update
    /// to apply, or `None` when the condition does not hold.
    pub async fn cas<F>(
        &self,
        key: &T::Key,
        query: &T::Query,
        condition: F,
    ) -> Result<Outcome<T::Value>, PaxosError>
    where
        F: FnMut(&T::Value, Ballot) -> Option<T::Update> + Send,
    {
        let result = self.cas_rounds(key, query, condition).await;
        self.metrics.outcome(&result);
        result
    }

    /// A linearizable (SERIAL) read of `key`.
    pub async fn read(&self, key: &T::Key, query: &T::Query) -> Result<T::Value, PaxosError> {
        let result = self.read_rounds(key, query).await;
        match &result {
            Ok(_) => Metrics::count(&self.metrics.reads),
            Err(error) => self.metrics.error(error),
        }
        result
    }

    async fn cas_rounds<F>(
        &self,
        key: &T::Key,
        query: &T::Query,
        mut condition: F,
    ) -> Result<Outcome<T::Value>, PaxosError>
    where
        F: FnMut(&T::Value, Ballot) -> Option<T::Update> + Send,
    {
        let mut attempts = self.attempts();
        let mut at_least = None;
        loop {
            let begun = self
                .begin(key, query, true, at_least, &mut attempts)
                .await?;
            let current = T::resolve(query, begun.reads);
            let (update, applies) = match condition(&current, begun.ballot) {
                None if begun.linearizable => return Ok(Outcome::NotApplied(current)),
                None => (T::empty_update(key), false),
                Some(_) if !begun.promised => {
                    at_least = begun.superseded_by;
                    continue;
                }
                Some(update) => (update, true),
            };
            let proposal = Proposal::new(begun.ballot, update);
            let participants = &begun.participants;
            match self.propose(participants, key, &proposal, applies).await {
                Proposed::Accepted if !applies => return Ok(Outcome::NotApplied(current)),
                Proposed::Accepted => {
                    return self
                        .commit(participants, key, &proposal)
                        .await
                        .map(|()| Outcome::Applied)
                        .map_err(|shortfall| shortfall.error(attempts.contentions, true));
                }
                Proposed::Superseded { maybe_accepted, .. } if applies && maybe_accepted => {
                    return Err(PaxosError::Timeout {
                        received: 0,
                        required: participants.required,
                        contentions: attempts.contentions,
                        write_unknown: true,
                    });
                }
                Proposed::Superseded { by, .. } => {
                    at_least = Some(by);
                    self.back_off(&mut attempts, participants.required).await?;
                }
                Proposed::Failed(shortfall) => {
                    let unknown = applies && shortfall.maybe_taken();
                    return Err(shortfall.error(attempts.contentions, unknown));
                }
            }
        }
    }

    async fn read_rounds(&self, key: &T::Key, query: &T::Query) -> Result<T::Value, PaxosError> {
        let mut attempts = self.attempts();
        let mut at_least = None;
        loop {
            let begun = self
                .begin(key, query, false, at_least, &mut attempts)
                .await?;
            if begun.linearizable {
                return Ok(T::resolve(query, begun.reads));
            }
            // Order the read after any write in flight: an empty proposal under its ballot.
            let proposal = Proposal::new(begun.ballot, T::empty_update(key));
            match self
                .propose(&begun.participants, key, &proposal, false)
                .await
            {
                Proposed::Accepted => return Ok(T::resolve(query, begun.reads)),
                Proposed::Superseded { by, .. } => {
                    at_least = Some(by);
                    self.back_off(&mut attempts, begun.participants.required)
                        .await?;
                }
                Proposed::Failed(shortfall) => {
                    return Err(shortfall.error(attempts.contentions, false))
                }
            }
        }
    }

    /// Prepares (with a read) until a quorum promises, or permits a read, with no round of
    /// another proposer left incomplete; completes such rounds on the way.
    async fn begin(
        &self,
        key: &T::Key,
        query: &T::Query,
        is_write: bool,
        mut at_least: Option<Ballot>,
        attempts: &mut Attempts,
    ) -> Result<Begun<T, R::Node>, PaxosError> {
        let electorate = self.replicas.electorate(key);
        let participants = Participants::live(electorate, |node| self.replicas.is_alive(node))?;
        let mut carried = None;
        loop {
            self.check_deadline(attempts, participants.required)?;
            let ballot = self.ballots.next(at_least.take());
            let request = Prepare {
                key: key.clone(),
                ballot,
                is_write,
                read: Some(query.clone()),
                commit: carried.take(),
            };
            match self.prepare(&participants, &request).await {
                Prepared::Permitted(success) => {
                    return Ok(Begun {
                        ballot,
                        participants,
                        reads: success.reads,
                        promised: success.promised,
                        linearizable: success.stable,
                        superseded_by: success.superseded_by,
                    })
                }
                Prepared::IncompleteCommitted(commit) => carried = Some(commit),
                Prepared::IncompleteAccepted(accepted) => {
                    Metrics::count(&self.metrics.repairs);
                    // Re-proposed as it was (its write timestamps unchanged) under our ballot;
                    // its commit rides on our next prepare.
                    let repair = Proposal::new(ballot, accepted.update);
                    match self.propose(&participants, key, &repair, false).await {
                        Proposed::Accepted => carried = Some(repair),
                        Proposed::Superseded { by, .. } => {
                            at_least = Some(by);
                            self.back_off(attempts, participants.required).await?;
                        }
                        Proposed::Failed(shortfall) => {
                            return Err(shortfall.error(attempts.contentions, false))
                        }
                    }
                }
                Prepared::Superseded(by) => {
                    at_least = Some(by);
                    self.back_off(attempts, participants.required).await?;
                }
                Prepared::Failed(shortfall) => {
                    return Err(shortfall.error(attempts.contentions, false))
                }
            }
        }
    }

    fn attempts(&self) -> Attempts {
        Attempts {
            deadline: self.now() + self.config.timeout.as_micros() as u64,
            contentions: 0,
        }
    }

    fn now(&self) -> u64 {
        crate::ballot::wall_micros(self.ballots.clock())
    }

    fn check_deadline(&self, attempts: &Attempts, required: usize) -> Result<(), PaxosError> {
        if self.now() >= attempts.deadline {
            return Err(contended(attempts, required));
        }
        Ok(())
    }

    /// Counts a lost round and sleeps a random time before the next: uniform up to a ceiling
    /// that grows with each attempt. Times out instead if the sleep would pass the deadline.
    async fn back_off(&self, attempts: &mut Attempts, required: usize) -> Result<(), PaxosError> {
        attempts.contentions += 1;
        Metrics::count(&self.metrics.contentions);
        let growth = 1.8f64.powi(attempts.contentions.saturating_sub(1).min(64) as i32);
        let first = self.config.first_backoff.as_micros() as f64;
        let ceiling = (first * growth).min(self.config.max_backoff.as_micros() as f64);
        let wait = self.rng.lock().random_range(0..=ceiling as u64);
        if self.now() + wait >= attempts.deadline {
            return Err(contended(attempts, required));
        }
        self.replicas.sleep(Duration::from_micros(wait)).await;
        Ok(())
    }
}

/// The timeout of an operation that contended until its deadline: its own update was never
/// accepted (else it would have ended already).
fn contended(attempts: &Attempts, required: usize) -> PaxosError {
    PaxosError::Timeout {
        received: 0,
        required,
        contentions: attempts.contentions,
        write_unknown: false,
    }
}

#[cfg(test)]
mod tests;
