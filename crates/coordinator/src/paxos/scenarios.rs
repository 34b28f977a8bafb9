//! Proposers over three real participants (each with its own storage and `system.paxos`)
//! whose messages a script drops: a proposal accepted by every replica whose commit is lost
//! (the proposer killed between accept and commit) is completed by the next operation, and a
//! proposal accepted by one replica only is never replayed once a later round passed it
//! (CASSANDRA-12126), nor after a purge following a repair.
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use clock::SharedClock;
use mutation::{Cell, ColumnData, ColumnValue, PartitionKey, PartitionUpdate, Row};
use parking_lot::Mutex;
use paxos::{BallotGenerator, Outcome, PaxosError};
use storage::{StorageConfig, TableParams};
use uuid::Uuid;

use super::cleanup::{after_repair, CleanupReplicas};
use super::remote::Local;
use super::store::{self, LocalData, SystemPaxos};
use super::*;
use crate::messages::paxos::CleanupRequest;

const USER: TableId = TableId(Uuid::from_u128(0xf00d));

/// Which messages are lost.
#[derive(Default)]
struct Script {
    down: HashSet<usize>,
    /// Replicas a proposal does not reach.
    no_proposals: HashSet<usize>,
    no_commits: bool,
}

#[derive(Clone)]
struct Three {
    locals: Arc<Vec<Arc<Local>>>,
    script: Arc<Mutex<Script>>,
}

impl Three {
    fn open(dir: &std::path::Path) -> Three {
        let locals = (0..3)
            .map(|i| {
                let path = dir.join(format!("n{i}"));
                let config = StorageConfig::new(path.join("data"), path.join("log"));
                let storage = Arc::new(storage::Storage::open(config).unwrap());
                let paxos = TableParams::new("system", "paxos");
                storage.create_table(store::table_id(), paxos).unwrap();
                storage
                    .create_table(USER, TableParams::new("ks", "t"))
                    .unwrap();
                let (store, _) =
                    SystemPaxos::open(storage.clone(), SharedClock::default()).unwrap();
                let data = LocalData {
                    storage: storage.clone(),
                };
                Arc::new(Local {
                    replica: paxos::Replica::new(store, data),
                    storage,
                })
            })
            .collect();
        Three {
            locals: Arc::new(locals),
            script: Arc::default(),
        }
    }

    /// A proposer of its own (a coordinator that starts), ballots from node `node`.
    fn proposer(&self, node: u64) -> paxos::Proposer<Lwt, Three, SharedClock> {
        let ballots = BallotGenerator::new(SharedClock::default(), node, 0, None);
        paxos::Proposer::new(self.clone(), ballots, paxos::Config::default(), node)
    }

    /// What replica `i` holds of the key in its table.
    fn stored(&self, i: usize) -> i64 {
        let storage = &self.locals[i].storage;
        let read = storage
            .read(USER, &key().key, &ReadFilter::all(), 0)
            .unwrap();
        value(read.as_ref())
    }
}

impl paxos::Replicas<Lwt> for Three {
    type Node = usize;

    fn electorate(&self, _key: &LwtKey) -> paxos::Electorate<usize> {
        paxos::Electorate {
            natural: vec![0, 1, 2],
            pending: vec![],
        }
    }

    fn is_alive(&self, node: &usize) -> bool {
        !self.script.lock().down.contains(node)
    }

    async fn prepare(
        &self,
        to: &usize,
        request: &paxos::Prepare<Lwt>,
    ) -> paxos::Answer<paxos::PrepareAnswer<Lwt>> {
        if self.script.lock().down.contains(to) {
            return Err(paxos::NoReply::Timeout);
        }
        self.locals[*to]
            .prepare(request)
            .await
            .map_err(|_| paxos::NoReply::Failed)
    }

    async fn propose(
        &self,
        to: &usize,
        _key: &LwtKey,
        proposal: &paxos::Proposal<Mutation>,
    ) -> paxos::Answer<paxos::ProposeAnswer> {
        let lost = {
            let script = self.script.lock();
            script.down.contains(to) || script.no_proposals.contains(to)
        };
        if lost {
            return Err(paxos::NoReply::Timeout);
        }
        self.locals[*to]
            .propose(proposal)
            .await
            .map_err(|_| paxos::NoReply::Failed)
    }

    async fn commit(
        &self,
        to: &usize,
        _key: &LwtKey,
        commit: &paxos::Proposal<Mutation>,
    ) -> paxos::Answer<()> {
        let lost = {
            let script = self.script.lock();
            script.down.contains(to) || script.no_commits
        };
        if lost {
            return Err(paxos::NoReply::Timeout);
        }
        self.locals[*to]
            .commit(commit)
            .await
            .map_err(|_| paxos::NoReply::Failed)
    }

    async fn sleep(&self, duration: Duration) {
        tokio::time::sleep(duration).await
    }
}

impl CleanupReplicas for Three {
    async fn cleanup(
        &self,
        to: &usize,
        request: &CleanupRequest,
    ) -> paxos::Answer<Vec<(PartitionKey, bool)>> {
        if self.script.lock().down.contains(to) {
            return Err(paxos::NoReply::Timeout);
        }
        self.locals[*to]
            .cleanup(request)
            .await
            .map_err(|_| paxos::NoReply::Failed)
    }
}

impl Three {
    /// Purges after a repair of the whole ring over the three that began now; how many
    /// replica states went.
    async fn purge_repaired(&self) -> usize {
        use clock::Clock;
        let repaired = paxos::Ballot {
            micros: clock::SystemClock.now_micros() as u64,
            counter: 0,
            node: 0,
        };
        let ring = [(i64::MIN, i64::MIN)];
        let purged = after_repair(self, USER, &ring, &[0, 1, 2], repaired).await;
        for local in self.locals.iter() {
            let low = paxos::PaxosStore::low_bound(local.replica.store()).unwrap();
            assert_eq!(low, repaired, "every replica raised its low bound");
        }
        purged.unwrap()
    }

    /// Whether replica `i` holds Paxos state for the key.
    fn has_state(&self, i: usize) -> bool {
        let store = self.locals[i].replica.store();
        paxos::PaxosStore::get(store, &key()).unwrap().is_some()
    }
}

fn key() -> LwtKey {
    let key = Bytes::from_static(b"register");
    LwtKey {
        table: USER,
        key: PartitionKey {
            token: ring::murmur3_token(&key),
            key,
        },
    }
}

fn query() -> LwtQuery {
    LwtQuery {
        key: key().key,
        filter: ReadFilter::all(),
        now: 0,
    }
}

fn set(value: i64, ts: i64) -> Mutation {
    let mut row = Row::new(Bytes::from_static(b"\x00"));
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(ts, Bytes::copy_from_slice(&value.to_be_bytes())),
    )];
    Mutation {
        table: USER,
        key: key().key,
        update: PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        },
    }
}

fn value(partition: Option<&Partition>) -> i64 {
    let Some(row) = partition.and_then(|p| p.rows.first()) else {
        return 0;
    };
    match row.column(b"v").map(|c| &c.value) {
        Some(ColumnValue::Simple(cell)) => {
            let bytes = cell.value.as_deref().unwrap_or_default();
            i64::from_be_bytes(bytes.try_into().unwrap_or_default())
        }
        _ => 0,
    }
}

/// Sets the register to `new` if it holds `expect`.
async fn cas(
    proposer: &paxos::Proposer<Lwt, Three, SharedClock>,
    expect: i64,
    new: i64,
) -> Result<Outcome<Option<Partition>>, PaxosError> {
    proposer
        .cas(&key(), &query(), |current, ballot| {
            (value(current.as_ref()) == expect).then(|| set(new, ballot.micros as i64))
        })
        .await
}

async fn read(proposer: &paxos::Proposer<Lwt, Three, SharedClock>) -> i64 {
    value(proposer.read(&key(), &query()).await.unwrap().as_ref())
}

#[tokio::test]
async fn a_proposal_accepted_but_never_committed_is_completed_by_the_next_operation() {
    let dir = tempfile::tempdir().unwrap();
    let three = Three::open(dir.path());
    three.script.lock().no_commits = true;
    let killed = three.proposer(1);
    let error = cas(&killed, 0, 7).await.unwrap_err();
    assert!(error.write_unknown(), "{error:?}");
    assert_eq!(
        (0..3).map(|i| three.stored(i)).sum::<i64>(),
        0,
        "nothing applied yet"
    );
    drop(killed);
    three.script.lock().no_commits = false;
    let next = three.proposer(2);
    assert_eq!(
        read(&next).await,
        7,
        "the accepted proposal is completed first"
    );
    assert!(
        (0..3).filter(|&i| three.stored(i) == 7).count() >= 2,
        "committed to a quorum"
    );
    assert_eq!(cas(&next, 7, 8).await.unwrap(), Outcome::Applied);
    assert_eq!(read(&three.proposer(3)).await, 8);
}

/// Commits 1, then has replica 0 alone accept 2 (the proposer fails, its outcome unknown),
/// and leaves replica 0 down.
async fn accepted_by_replica_0_alone(three: &Three) {
    assert_eq!(
        cas(&three.proposer(1), 0, 1).await.unwrap(),
        Outcome::Applied
    );
    three.script.lock().no_proposals = [1, 2].into();
    let error = cas(&three.proposer(2), 1, 2).await.unwrap_err();
    assert!(error.write_unknown(), "{error:?}");
    let mut script = three.script.lock();
    script.no_proposals.clear();
    script.down = [0].into();
}

#[tokio::test]
async fn a_proposal_accepted_by_a_minority_is_not_replayed_after_a_later_round() {
    let dir = tempfile::tempdir().unwrap();
    let three = Three::open(dir.path());
    accepted_by_replica_0_alone(&three).await;
    // Replica 0 is down: a SERIAL read among 1 and 2 does not see the proposal, and its
    // round (an empty proposal at a newer ballot) passes it.
    assert_eq!(read(&three.proposer(3)).await, 1);
    // Replica 0 is back with the stale accepted proposal: it must never surface.
    three.script.lock().down.clear();
    for node in 4..7 {
        assert_eq!(read(&three.proposer(node)).await, 1, "proposer {node}");
    }
    assert_eq!(
        cas(&three.proposer(7), 1, 3).await.unwrap(),
        Outcome::Applied
    );
    assert_eq!(read(&three.proposer(8)).await, 3);
    assert_ne!(three.stored(0), 2, "the stale proposal was never committed");
}

#[tokio::test]
async fn a_purge_after_repair_forgets_committed_state_everywhere_and_rounds_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let three = Three::open(dir.path());
    assert_eq!(
        cas(&three.proposer(1), 0, 1).await.unwrap(),
        Outcome::Applied
    );
    assert_eq!(three.purge_repaired().await, 3);
    assert!((0..3).all(|i| !three.has_state(i)));
    assert_eq!(read(&three.proposer(2)).await, 1, "the data stays");
    assert_eq!(
        cas(&three.proposer(3), 1, 2).await.unwrap(),
        Outcome::Applied
    );
    assert_eq!(read(&three.proposer(4)).await, 2);
}

#[tokio::test]
async fn a_stale_accepted_proposal_keeps_its_partition_everywhere_and_is_never_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let three = Three::open(dir.path());
    // Replica 0 alone accepts 2; then, replica 0 down, a later round commits 3 on replicas 1
    // and 2: replica 0 keeps the stale proposal, and only the commit replicas 1 and 2 hold
    // shows it stale.
    accepted_by_replica_0_alone(&three).await;
    assert_eq!(
        cas(&three.proposer(3), 1, 3).await.unwrap(),
        Outcome::Applied
    );
    three.script.lock().down.clear();
    // Replica 0 cannot purge (a proposal accepted), so nobody does.
    assert_eq!(three.purge_repaired().await, 0);
    assert!((0..3).all(|i| three.has_state(i)));
    // Had replica 1 forgotten the commit, a quorum of 0 and 1 would replay the proposal.
    three.script.lock().down = [2].into();
    assert_eq!(read(&three.proposer(4)).await, 3);
    three.script.lock().down.clear();
    assert_eq!(read(&three.proposer(5)).await, 3);
    assert_ne!(three.stored(0), 2, "the stale proposal was never committed");
}
