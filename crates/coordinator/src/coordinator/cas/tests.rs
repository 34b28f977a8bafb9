//! Compare-and-set and SERIAL reads on one node: the condition sees the partition, the write
//! carries the ballot's timestamp, state and ballots survive a restart, bad levels are refused.
use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use clock::Clock;
use mutation::{Cell, ColumnData, ColumnValue, PartitionUpdate, Row};
use ring::Endpoint;
use storage::{Storage, StorageConfig, TableParams};
use uuid::Uuid;

use super::*;
use crate::paxos::store;
use crate::Timeouts;

const USER: TableId = TableId(Uuid::from_u128(0xcafe));

async fn node(dir: &std::path::Path) -> Coordinator {
    let config = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    let storage = Storage::open(config).unwrap();
    storage
        .create_table(store::table_id(), TableParams::new("system", "paxos"))
        .unwrap();
    storage
        .create_table(USER, TableParams::new("ks", "t"))
        .unwrap();
    storage.replay().unwrap();
    storage.finish_replay();
    let local = Endpoint {
        addr: IpAddr::from([127, 0, 2, 1]),
        datacenter: "dc1".into(),
        rack: "r1".into(),
        host_id: [1; 16],
    };
    let coordinator = Coordinator::new(Arc::new(storage), local, Timeouts::default());
    coordinator.set_local_tokens(vec![0]);
    let keyspaces = [("ks", 1, &[USER][..])];
    coordinator.install_schema(crate::coordinator::strategies::simple_keyspaces(&keyspaces));
    coordinator
}

fn key(name: &str) -> PartitionKey {
    let key = Bytes::copy_from_slice(name.as_bytes());
    PartitionKey {
        token: ring::murmur3_token(&key),
        key,
    }
}

fn set(key: &PartitionKey, value: &str, ts: i64) -> Mutation {
    let mut row = Row::new(Bytes::from_static(b"\x00"));
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(ts, Bytes::copy_from_slice(value.as_bytes())),
    )];
    Mutation {
        table: USER,
        key: key.clone(),
        update: PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        },
    }
}

fn scope(serial: Consistency) -> CasScope<'static> {
    CasScope {
        keyspace: "ks",
        table: USER,
        serial,
        commit: Consistency::Quorum,
        now: (clock::SystemClock.now_micros() / 1_000_000) as i32,
        trace: None,
    }
}

/// The value and write timestamp of column `v` of the partition's first row.
fn cell(partition: Option<&Partition>) -> Option<(String, i64)> {
    let row = partition?.rows.first()?;
    match &row.column(b"v")?.value {
        ColumnValue::Simple(c) => Some((
            String::from_utf8_lossy(c.value.as_deref()?).into_owned(),
            c.timestamp,
        )),
        ColumnValue::Complex(_) => None,
    }
}

/// `INSERT … IF NOT EXISTS` of `value`: the timestamp written when applied.
async fn insert_if_absent(
    coordinator: &Coordinator,
    k: &PartitionKey,
    value: &str,
) -> (CasOutcome, Option<i64>) {
    let mut written = None;
    let outcome = coordinator
        .cas(
            &scope(Consistency::Serial),
            k,
            &ReadFilter::all(),
            |current, ts| {
                written = Some(ts);
                current.is_none().then(|| set(k, value, ts))
            },
        )
        .await
        .unwrap();
    (outcome, written)
}

#[tokio::test]
async fn a_condition_sees_the_partition_and_applies_at_the_ballots_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = node(dir.path()).await;
    let k = key("user1");
    let (outcome, ts) = insert_if_absent(&coordinator, &k, "alice").await;
    assert_eq!(outcome, CasOutcome::Applied);
    let read = coordinator
        .serial_read(&scope(Consistency::Serial), &k, &ReadFilter::all())
        .await
        .unwrap();
    assert_eq!(cell(read.as_ref()), Some(("alice".into(), ts.unwrap())));
    // The same insert again: not applied, with the row as it stands.
    let (outcome, _) = insert_if_absent(&coordinator, &k, "bob").await;
    let CasOutcome::NotApplied(current) = outcome else {
        panic!("applied twice: {outcome:?}");
    };
    assert_eq!(cell(current.as_ref()).map(|c| c.0), Some("alice".into()));
    // LOCAL_SERIAL reads the same.
    let local = coordinator
        .serial_read(&scope(Consistency::LocalSerial), &k, &ReadFilter::all())
        .await
        .unwrap();
    assert_eq!(cell(local.as_ref()).map(|c| c.0), Some("alice".into()));
    let writes = coordinator.metrics().requests(RequestKind::CasWrite);
    assert_eq!(writes.iter().map(|(_, s)| s.count).sum::<u64>(), 2);
    let reads = coordinator.metrics().requests(RequestKind::CasRead);
    assert_eq!(reads.iter().map(|(_, s)| s.count).sum::<u64>(), 2);
    let counters: std::collections::HashMap<_, _> =
        coordinator.paxos_counters().into_iter().collect();
    let counted =
        ["applied", "condition_not_met", "serial_reads", "contention"].map(|e| counters[e]);
    assert_eq!(counted, [1, 1, 2, 0]);
}

#[tokio::test]
async fn state_and_ballots_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let k = key("lease");
    let first = {
        let coordinator = node(dir.path()).await;
        let (outcome, ts) = insert_if_absent(&coordinator, &k, "holder-1").await;
        assert_eq!(outcome, CasOutcome::Applied);
        coordinator.storage.shutdown().await.unwrap();
        ts.unwrap()
    };
    let coordinator = node(dir.path()).await;
    let state = coordinator.paxos.get().unwrap();
    let stored = paxos::PaxosStore::get(
        state.local.replica.store(),
        &LwtKey {
            table: USER,
            key: k.clone(),
        },
    )
    .unwrap()
    .expect("the state was replayed from the commit log");
    assert_eq!(
        stored.committed.map(|c| c.ballot.micros as i64),
        Some(first)
    );
    let (outcome, ts) = insert_if_absent(&coordinator, &k, "holder-2").await;
    assert!(matches!(outcome, CasOutcome::NotApplied(Some(_))));
    assert!(ts.unwrap() > first, "ballots go on above the stored ones");
}

#[tokio::test]
async fn only_serial_levels_run_paxos() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = node(dir.path()).await;
    let error = coordinator
        .serial_read(&scope(Consistency::Quorum), &key("k"), &ReadFilter::all())
        .await
        .unwrap_err();
    assert!(matches!(error, CqlError::Invalid(_)), "{error:?}");
}

#[test]
fn a_timed_out_compare_and_set_reports_its_contentions_and_one_of_unknown_result_says_so() {
    let timeout = |contentions, write_unknown| PaxosError::Timeout {
        received: 1,
        required: 2,
        contentions,
        write_unknown,
    };
    assert_eq!(
        write_error(timeout(12, false), Consistency::Serial),
        CqlError::CasWriteTimeout {
            message: "CAS operation timed out - encountered contentions: 12".into(),
            consistency: Consistency::Serial,
            received: 1,
            block_for: 2,
            contentions: 12,
        }
    );
    assert!(matches!(
        write_error(timeout(100_000, false), Consistency::LocalSerial),
        CqlError::CasWriteTimeout {
            contentions: u16::MAX,
            consistency: Consistency::LocalSerial,
            ..
        }
    ));
    assert!(matches!(
        write_error(timeout(3, true), Consistency::Serial),
        CqlError::CasWriteUnknown { .. }
    ));
}
