//! The proposer against replicas in the same process whose answers are ready at once, with
//! requests lost on purpose and competitors stepping in before a proposal.
use std::collections::{HashMap, HashSet};
use std::future::{ready, Future, Ready};
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use parking_lot::Mutex;

use super::*;
use crate::messages::{Answer, NoReply, PrepareAnswer, ProposeAnswer};
use crate::replica::Replica;
use crate::replicas::Electorate;
use crate::store::{MemoryStore, PaxosStore};
use crate::testing::{ballot, set, MemoryData, Reg, Write};

type TestReplica = Replica<Reg, Arc<MemoryStore<Reg>>, Arc<MemoryData>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Verb {
    Prepare,
    Propose,
    Commit,
}

type Hook = Box<dyn FnMut(&[TestReplica]) + Send>;

/// Replicas 0.. of one key, answering at once.
struct Local {
    replicas: Vec<TestReplica>,
    natural: Vec<usize>,
    pending: Vec<usize>,
    down: Mutex<HashSet<usize>>,
    /// Requests that never arrive (their sender times out) or that fail.
    lost: Mutex<HashMap<(usize, Verb), NoReply>>,
    /// Runs before each proposal reaches a replica (a competitor stepping in).
    before_propose: Mutex<Option<Hook>>,
    sent: Mutex<Vec<(usize, Verb, bool)>>,
    sleeps: Mutex<Vec<Duration>>,
    clock: TestClock,
}

impl Local {
    fn new(natural: usize, pending: usize) -> Self {
        Local {
            replicas: (0..natural + pending)
                .map(|_| Replica::new(Arc::default(), Arc::default()))
                .collect(),
            natural: (0..natural).collect(),
            pending: (natural..natural + pending).collect(),
            down: Mutex::default(),
            lost: Mutex::default(),
            before_propose: Mutex::default(),
            sent: Mutex::default(),
            sleeps: Mutex::default(),
            clock: TestClock::default(),
        }
    }

    fn lose(&self, node: usize, verb: Verb) {
        self.lost.lock().insert((node, verb), NoReply::Timeout);
    }

    fn fail(&self, node: usize, verb: Verb) {
        self.lost.lock().insert((node, verb), NoReply::Failed);
    }

    fn deliver<A>(
        &self,
        to: usize,
        verb: Verb,
        carries_commit: bool,
        handle: impl FnOnce(&TestReplica) -> Result<A, crate::StoreError>,
    ) -> Ready<Answer<A>> {
        self.sent.lock().push((to, verb, carries_commit));
        if let Some(reason) = self.lost.lock().get(&(to, verb)) {
            return ready(Err(*reason));
        }
        ready(handle(&self.replicas[to]).map_err(|_| NoReply::Failed))
    }

    fn data(&self, node: usize) -> Option<Write> {
        self.replicas[node].data().get(KEY)
    }

    fn state(&self, node: usize) -> crate::PaxosState<Reg> {
        self.replicas[node]
            .store()
            .get(&KEY)
            .unwrap()
            .unwrap_or_default()
    }

    fn count(&self, verb: Verb) -> usize {
        self.sent
            .lock()
            .iter()
            .filter(|(_, v, _)| *v == verb)
            .count()
    }
}

impl Replicas<Reg> for Local {
    type Node = usize;

    fn electorate(&self, _key: &u8) -> Electorate<usize> {
        Electorate {
            natural: self.natural.clone(),
            pending: self.pending.clone(),
        }
    }

    fn is_alive(&self, node: &usize) -> bool {
        !self.down.lock().contains(node)
    }

    fn prepare(
        &self,
        to: &usize,
        request: &Prepare<Reg>,
    ) -> impl Future<Output = Answer<PrepareAnswer<Reg>>> + Send {
        self.deliver(*to, Verb::Prepare, request.commit.is_some(), |r| {
            r.prepare(request)
        })
    }

    fn propose(
        &self,
        to: &usize,
        key: &u8,
        proposal: &Proposal<Option<Write>>,
    ) -> impl Future<Output = Answer<ProposeAnswer>> + Send {
        if let Some(hook) = self.before_propose.lock().as_mut() {
            hook(&self.replicas);
        }
        self.deliver(*to, Verb::Propose, false, |r| r.propose(key, proposal))
    }

    fn commit(
        &self,
        to: &usize,
        key: &u8,
        commit: &Proposal<Option<Write>>,
    ) -> impl Future<Output = Answer<()>> + Send {
        self.deliver(*to, Verb::Commit, false, |r| r.commit(key, commit))
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        self.sleeps.lock().push(duration);
        self.clock
            .0
            .fetch_add(duration.as_micros() as u64, Ordering::SeqCst);
        ready(())
    }
}

#[derive(Clone)]
struct TestClock(Arc<AtomicU64>);

impl Default for TestClock {
    fn default() -> Self {
        TestClock(Arc::new(AtomicU64::new(1_000_000)))
    }
}

impl Clock for TestClock {
    fn now_micros(&self) -> i64 {
        self.0.load(Ordering::SeqCst) as i64
    }
}

const KEY: u8 = 1;

fn proposer(local: Local) -> Proposer<Reg, Local, TestClock> {
    let ballots = BallotGenerator::new(local.clock.clone(), 1, 0, None);
    Proposer::new(local, ballots, Config::default(), 7)
}

/// Polls a future whose every wait is ready at once.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("a local answer was not ready"),
    }
}

fn cas(
    p: &Proposer<Reg, Local, TestClock>,
    expect: i64,
    new: i64,
) -> Result<Outcome<i64>, PaxosError> {
    block_on(p.cas(&KEY, &(), |current, ballot| {
        (*current == expect).then_some(set(new, ballot.micros))
    }))
}

fn read(p: &Proposer<Reg, Local, TestClock>) -> Result<i64, PaxosError> {
    block_on(p.read(&KEY, &()))
}

/// What a proposer that died mid-round leaves: `ballot` promised on `promised`, `value`
/// accepted on `accepted`.
fn leave_in_progress(
    local: &Local,
    micros: u64,
    value: i64,
    promised: &[usize],
    accepted: &[usize],
) {
    let request = Prepare {
        key: KEY,
        ballot: ballot(micros),
        is_write: true,
        read: None,
        commit: None,
    };
    for node in promised {
        local.replicas[*node].prepare(&request).unwrap();
    }
    for node in accepted {
        let proposal = Proposal::new(ballot(micros), set(value, micros));
        assert_eq!(
            local.replicas[*node].propose(&KEY, &proposal).unwrap(),
            ProposeAnswer::Accepted
        );
    }
}

#[test]
fn a_compare_and_set_applies_and_commits_then_a_failed_condition_proposes_nothing() {
    let p = proposer(Local::new(3, 0));
    assert_eq!(cas(&p, 0, 5), Ok(Outcome::Applied));
    for node in 0..3 {
        assert_eq!(p.replicas().data(node).map(|w| w.value), Some(5));
        assert_eq!(p.replicas().state(node).accepted, None);
    }
    let proposals = p.replicas().count(Verb::Propose);
    // Every replica is stable after the commit: the failed condition is answered from the
    // reads alone.
    assert_eq!(cas(&p, 0, 6), Ok(Outcome::NotApplied(5)));
    assert_eq!(p.replicas().count(Verb::Propose), proposals);
    assert_eq!(Metrics::get(&p.metrics().applied), 1);
    assert_eq!(Metrics::get(&p.metrics().not_applied), 1);
}

#[test]
fn cassandra_12126_a_failed_condition_under_an_unsettled_write_proposes_an_empty_update() {
    let local = Local::new(3, 0);
    // A write promised on 0 and 1, accepted on 0 only; its proposer died.
    leave_in_progress(&local, 100, 1, &[0, 1], &[0]);
    local.down.lock().insert(0);
    let p = proposer(local);
    // Through 1 and 2: the value is 0, the condition fails; 1 promised a write not settled,
    // so the failure must be ordered by an empty proposal.
    assert_eq!(cas(&p, 7, 9), Ok(Outcome::NotApplied(0)));
    let invalidated = p
        .replicas()
        .state(1)
        .accepted
        .expect("an empty proposal accepted");
    assert_eq!(invalidated.update, None);
    // With 0 back and 2 unreachable, the minority's value never surfaces.
    p.replicas().down.lock().clear();
    p.replicas().lose(2, Verb::Prepare);
    assert_eq!(read(&p), Ok(0));
    assert_eq!(Metrics::get(&p.metrics().repairs), 0);
}

#[test]
fn cassandra_12126_an_accepted_proposal_older_than_the_latest_commit_is_never_replayed() {
    let local = Local::new(3, 0);
    // A compare-and-set 0 -> 1 promised everywhere, accepted on 0 only.
    leave_in_progress(&local, 100, 1, &[0, 1, 2], &[0]);
    local.down.lock().insert(0);
    let p = proposer(local);
    // 0 -> 2 through 1 and 2 supersedes it.
    assert_eq!(cas(&p, 0, 2), Ok(Outcome::Applied));
    // 0 still holds the stale accepted 1 (it missed everything since); a quorum of 0 and 1
    // sees it, older than 1's commit: it must not be re-proposed.
    p.replicas().down.lock().clear();
    p.replicas().lose(2, Verb::Prepare);
    assert_eq!(
        p.replicas().state(0).accepted.map(|a| a.ballot),
        Some(ballot(100))
    );
    assert_eq!(read(&p), Ok(2));
    assert_eq!(Metrics::get(&p.metrics().repairs), 0);
    // 0 was sent the latest commit, which clears its stale proposal.
    assert_eq!(p.replicas().data(0).map(|w| w.value), Some(2));
    let stale = p
        .replicas()
        .state(0)
        .accepted
        .filter(|a| a.ballot == ballot(100));
    assert_eq!(stale, None);
}

#[test]
fn an_in_progress_proposal_is_completed_first_and_its_commit_rides_the_next_prepare() {
    let local = Local::new(3, 0);
    // 7 accepted by a quorum (decided), never committed.
    leave_in_progress(&local, 100, 7, &[0, 1, 2], &[0, 1]);
    let p = proposer(local);
    assert_eq!(cas(&p, 7, 8), Ok(Outcome::Applied));
    assert_eq!(Metrics::get(&p.metrics().repairs), 1);
    // The repair's commit went with a prepare, not a commit round of its own.
    let sent = p.replicas().sent.lock().clone();
    assert!(sent
        .iter()
        .any(|(_, verb, carries)| *verb == Verb::Prepare && *carries));
    assert_eq!(
        p.replicas().count(Verb::Commit),
        3,
        "only the operation's own commit"
    );
    for node in 0..3 {
        assert_eq!(p.replicas().data(node).map(|w| w.value), Some(8));
    }
}

#[test]
fn a_repaired_update_keeps_its_original_write_timestamp() {
    let local = Local::new(3, 0);
    leave_in_progress(&local, 100, 7, &[0, 1, 2], &[0, 1]);
    let p = proposer(local);
    assert_eq!(read(&p), Ok(7));
    assert_eq!(p.replicas().data(2), set(7, 100));
}

#[test]
fn a_replica_of_the_quorum_that_missed_the_latest_commit_is_sent_it() {
    let local = Local::new(3, 0);
    // Committed on 1 and 2; 0 missed it. 0 and 1 answer first.
    for node in [1, 2] {
        local.replicas[node]
            .commit(&KEY, &Proposal::new(ballot(50), set(3, 50)))
            .unwrap();
    }
    let p = proposer(local);
    assert_eq!(read(&p), Ok(3));
    assert_eq!(Metrics::get(&p.metrics().commit_refreshes), 1);
    assert_eq!(p.replicas().data(0), set(3, 50));
}

#[test]
fn a_commit_only_a_pending_replica_holds_is_folded_into_the_next_prepare() {
    let local = Local::new(3, 1);
    // The pending replica 3 holds a commit the natural replicas 0 and 1 missed; 2 is not
    // reached. No read came from a replica with it (pending replicas are not read).
    local.replicas[3]
        .commit(&KEY, &Proposal::new(ballot(50), set(4, 50)))
        .unwrap();
    local.lose(2, Verb::Prepare);
    let p = proposer(local);
    assert_eq!(read(&p), Ok(4));
    assert_eq!(p.replicas().data(0), set(4, 50));
    let sent = p.replicas().sent.lock().clone();
    assert!(sent
        .iter()
        .any(|(_, verb, carries)| *verb == Verb::Prepare && *carries));
}

#[test]
fn pending_replicas_vote_without_reading_and_raise_the_quorum() {
    let p = proposer(Local::new(3, 1));
    assert_eq!(cas(&p, 0, 5), Ok(Outcome::Applied));
    assert_eq!(
        p.replicas().data(3).map(|w| w.value),
        Some(5),
        "committed to it"
    );
    // Two of four down: three are needed.
    p.replicas().down.lock().extend([0, 3]);
    assert_eq!(
        cas(&p, 5, 6),
        Err(PaxosError::Unavailable {
            required: 3,
            alive: 2
        })
    );
    assert_eq!(Metrics::get(&p.metrics().unavailables), 1);
    // Every replica up but two natural ones silent: the pending one and one natural replica
    // make two answers, a natural majority's worth, and the round still fails.
    p.replicas().down.lock().clear();
    p.replicas().lose(0, Verb::Prepare);
    p.replicas().lose(1, Verb::Prepare);
    let error = cas(&p, 5, 6);
    assert!(
        matches!(
            error,
            Err(PaxosError::Timeout {
                required: 3,
                write_unknown: false,
                ..
            })
        ),
        "{error:?}"
    );
}

#[test]
fn a_proposal_accepted_by_a_minority_times_out_as_unknown() {
    let local = Local::new(3, 0);
    local.lose(1, Verb::Propose);
    local.lose(2, Verb::Propose);
    let p = proposer(local);
    let error = cas(&p, 0, 5).unwrap_err();
    assert!(error.write_unknown(), "{error:?}");
    assert!(matches!(
        error,
        PaxosError::Timeout {
            received: 1,
            required: 2,
            ..
        }
    ));
    assert_eq!(Metrics::get(&p.metrics().write_unknown), 1);
}

#[test]
fn a_prepare_without_a_quorum_times_out_as_not_applied() {
    let local = Local::new(3, 0);
    local.lose(1, Verb::Prepare);
    local.lose(2, Verb::Prepare);
    let p = proposer(local);
    let error = cas(&p, 0, 5).unwrap_err();
    assert!(!error.write_unknown());
    assert_eq!(p.replicas().count(Verb::Propose), 0);
}

/// A competitor whose prepare reaches `nodes` before the first proposal does.
fn competitor(nodes: Vec<usize>, times: usize) -> Hook {
    let mut left = times;
    let mut micros = 10_000_000;
    Box::new(move |replicas: &[TestReplica]| {
        if left == 0 {
            return;
        }
        left -= 1;
        micros += 10_000_000;
        let request = Prepare {
            key: KEY,
            ballot: Ballot {
                micros,
                counter: 0,
                node: 9,
            },
            is_write: true,
            read: None,
            commit: None,
        };
        for node in &nodes {
            replicas[*node].prepare(&request).unwrap();
        }
    })
}

#[test]
fn a_proposal_every_replica_refused_backs_off_and_retries_above_the_winner() {
    let local = Local::new(3, 0);
    *local.before_propose.lock() = Some(competitor(vec![0, 1, 2], 1));
    let p = proposer(local);
    assert_eq!(cas(&p, 0, 5), Ok(Outcome::Applied));
    assert_eq!(Metrics::get(&p.metrics().contentions), 1);
    let sleeps = p.replicas().sleeps.lock().clone();
    assert_eq!(sleeps.len(), 1);
    assert!(sleeps[0] <= Duration::from_millis(10), "{sleeps:?}");
    // The retry's ballot, now the commit's, is above the competitor's.
    let committed = p.replicas().state(0).committed.unwrap();
    assert!(committed.ballot.micros > 20_000_000);
}

#[test]
fn a_proposal_refused_after_one_replica_accepted_it_is_unknown() {
    let local = Local::new(3, 0);
    *local.before_propose.lock() = Some(competitor(vec![1, 2], 1));
    let p = proposer(local);
    let error = cas(&p, 0, 5).unwrap_err();
    assert!(
        matches!(
            error,
            PaxosError::Timeout {
                write_unknown: true,
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn endless_contention_times_out_at_the_deadline_with_growing_back_offs() {
    let local = Local::new(3, 0);
    *local.before_propose.lock() = Some(competitor(vec![0, 1, 2], usize::MAX));
    let p = proposer(local);
    let error = cas(&p, 0, 5).unwrap_err();
    let PaxosError::Timeout {
        contentions,
        write_unknown,
        ..
    } = error
    else {
        panic!("{error:?}")
    };
    assert!(!write_unknown);
    assert!(contentions >= 10, "{contentions}");
    let sleeps = p.replicas().sleeps.lock().clone();
    let slept: Duration = sleeps.iter().sum();
    assert!(slept <= Duration::from_secs(1), "{slept:?}");
    assert!(sleeps.iter().all(|s| *s <= Duration::from_millis(100)));
    assert_eq!(Metrics::get(&p.metrics().contentions), contentions as u64);
}

#[test]
fn a_serial_read_proposes_an_empty_update_only_when_a_write_is_unsettled() {
    let local = Local::new(3, 0);
    let p = proposer(local);
    assert_eq!(cas(&p, 0, 1), Ok(Outcome::Applied));
    assert_eq!(read(&p), Ok(1));
    assert_eq!(
        p.replicas().count(Verb::Propose),
        3,
        "only the write proposed"
    );
    // A write promised everywhere, not yet proposed: the read must order itself after it.
    leave_in_progress(p.replicas(), 10_000_000, 0, &[0, 1, 2], &[]);
    assert_eq!(read(&p), Ok(1));
    assert_eq!(p.replicas().count(Verb::Propose), 6);
    assert_eq!(p.replicas().state(0).accepted.map(|a| a.update), Some(None));
}

#[test]
fn replicas_that_answer_failures_make_the_operation_fail() {
    let local = Local::new(3, 0);
    local.fail(1, Verb::Prepare);
    local.fail(2, Verb::Prepare);
    let p = proposer(local);
    let error = cas(&p, 0, 5).unwrap_err();
    assert_eq!(
        error,
        PaxosError::Failure {
            received: 1,
            required: 2,
            failures: 2,
            write_unknown: false
        }
    );
    assert_eq!(Metrics::get(&p.metrics().failures), 1);
}

#[test]
fn operations_are_futures_a_multi_threaded_runtime_can_run() {
    fn assert_send<F: Future + Send>(future: F) -> F {
        future
    }
    let p = proposer(Local::new(3, 0));
    let write = assert_send(p.cas(&KEY, &(), |_, ballot| Some(set(3, ballot.micros))));
    assert_eq!(block_on(write), Ok(Outcome::Applied));
    assert_eq!(block_on(assert_send(p.read(&KEY, &()))), Ok(3));
}
