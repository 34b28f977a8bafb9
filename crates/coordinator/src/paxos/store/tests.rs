//! `system.paxos` keeps a partition's registers whole, and what it holds seeds ballots and
//! write timestamps after a restart; ballots are valid timeuuids of their time.
use std::sync::Arc;

use bytes::Bytes;
use clock::SharedClock;
use mutation::{Cell, ColumnData, PartitionUpdate};
use storage::{StorageConfig, TableParams};

use super::*;

const USER: TableId = TableId(Uuid::from_u128(0xbeef));

fn open(dir: &std::path::Path) -> Arc<Storage> {
    let storage = Storage::open(StorageConfig::new(dir.join("data"), dir.join("log"))).unwrap();
    storage
        .create_table(table_id(), TableParams::new("system", "paxos"))
        .unwrap();
    storage.replay().unwrap();
    storage.finish_replay();
    Arc::new(storage)
}

/// The system clock set an hour back.
struct HourBehind;

impl Clock for HourBehind {
    fn now_micros(&self) -> i64 {
        clock::SystemClock.now_micros() - 3_600_000_000
    }
}

fn key(name: &'static str) -> LwtKey {
    let key = Bytes::from_static(name.as_bytes());
    LwtKey {
        table: USER,
        key: PartitionKey {
            token: ring::murmur3_token(&key),
            key,
        },
    }
}

fn ballot(micros: u64) -> Ballot {
    Ballot {
        micros,
        counter: 0x2a5,
        node: 0x1234_5678_9abe,
    }
}

fn update(key: &LwtKey, value: &'static [u8]) -> Mutation {
    let mut row = Row::new(Bytes::from_static(b"\x00"));
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(1, Bytes::from_static(value)),
    )];
    Mutation {
        table: key.table,
        key: key.key.clone(),
        update: PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        },
    }
}

#[test]
fn a_ballot_is_a_timeuuid_of_its_microseconds_and_decodes_back() {
    let micros = 1_700_000_000_123_456;
    let uuid = ballot_uuid(ballot(micros));
    assert_eq!(uuid.get_version_num(), 1);
    let (seconds, nanos) = uuid.get_timestamp().unwrap().to_unix();
    assert_eq!(seconds * 1_000_000 + u64::from(nanos) / 1_000, micros);
    assert_eq!(uuid_ballot(uuid.as_bytes()).unwrap(), ballot(micros));
    assert!(uuid_ballot(&[0; 15]).is_err());
}

#[test]
fn states_replace_each_other_whole_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (lease, other) = (key("lease"), key("other"));
    let accepted = PaxosState::<Lwt> {
        promised: ballot(30),
        promised_write: ballot(20),
        accepted: Some(Proposal::new(ballot(20), update(&lease, b"new"))),
        committed: Some(Proposal::new(ballot(10), update(&lease, b"old"))),
    };
    let committed = PaxosState::<Lwt> {
        accepted: None,
        committed: Some(Proposal::new(ballot(20), update(&lease, b"new"))),
        ..accepted.clone()
    };
    let written_before = {
        let storage = open(dir.path());
        let (store, seed) = SystemPaxos::open(storage.clone(), SharedClock::default()).unwrap();
        assert_eq!(seed, Seed::default());
        assert_eq!(store.get(&lease).unwrap(), None);
        store.put(&lease, &accepted).unwrap();
        assert_eq!(store.get(&lease).unwrap().as_ref(), Some(&accepted));
        // The accepted proposal is gone from the row once a commit replaces it.
        store.put(&lease, &committed).unwrap();
        assert_eq!(store.get(&lease).unwrap().as_ref(), Some(&committed));
        assert_eq!(store.get(&other).unwrap(), None, "another partition");
        store.last_write.load(Ordering::Relaxed)
    };
    // Reopened (the commit log replayed) with a clock an hour behind.
    let storage = open(dir.path());
    let (store, seed) = SystemPaxos::open(storage, SharedClock::new(HourBehind)).unwrap();
    assert_eq!(seed.ballot, ballot(30));
    assert_eq!(seed.write_micros, written_before);
    assert_eq!(store.get(&lease).unwrap(), Some(committed.clone()));
    store.remove(&lease).unwrap();
    assert_eq!(
        store.get(&lease).unwrap(),
        None,
        "the late clock's removal still wins"
    );
}

#[test]
fn the_low_bound_only_rises_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (store, _) = SystemPaxos::open(open(dir.path()), SharedClock::default()).unwrap();
        assert_eq!(store.low_bound().unwrap(), Ballot::ZERO);
        store.raise_low_bound(ballot(50)).unwrap();
        store.raise_low_bound(ballot(40)).unwrap();
        assert_eq!(store.low_bound().unwrap(), ballot(50));
    }
    let (store, seed) = SystemPaxos::open(open(dir.path()), SharedClock::default()).unwrap();
    assert_eq!(store.low_bound().unwrap(), ballot(50));
    assert_eq!(seed.ballot, ballot(50), "new ballots start above it");
}

#[test]
fn the_keys_of_a_table_in_ranges_are_those_with_registers() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = SystemPaxos::open(open(dir.path()), SharedClock::default()).unwrap();
    let (a, b) = (key("a"), key("b"));
    let state = PaxosState::<Lwt> {
        promised: ballot(5),
        ..PaxosState::default()
    };
    store.put(&a, &state).unwrap();
    store.put(&b, &state).unwrap();
    store.raise_low_bound(ballot(9)).unwrap();
    let other_table = LwtKey {
        table: TableId(Uuid::from_u128(0xfeed)),
        ..a.clone()
    };
    store.put(&other_table, &state).unwrap();
    let sorted = |mut keys: Vec<PartitionKey>| {
        keys.sort_by_key(|k| k.token);
        keys
    };
    let mut both = vec![a.key.clone(), b.key.clone()];
    both.sort_by_key(|k| k.token);
    let whole = [(i64::MIN, i64::MIN)];
    assert_eq!(sorted(store.keys_in(USER, &whole).unwrap()), both);
    // Only a's token, as a range and as a wrapping one that leaves b's out.
    let just_a = [(a.key.token - 1, a.key.token)];
    assert_eq!(store.keys_in(USER, &just_a).unwrap(), vec![a.key.clone()]);
    let around_b = [(b.key.token, b.key.token - 1)];
    assert_eq!(store.keys_in(USER, &around_b).unwrap(), vec![a.key.clone()]);
    store.remove(&a).unwrap();
    assert_eq!(store.keys_in(USER, &whole).unwrap(), vec![b.key.clone()]);
}
