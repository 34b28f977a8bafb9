//! The batchlog on one node's storage: replay applies old batches and deletes them, young ones
//! wait, unreadable ones go; where batchlogs go when the other nodes are down; the errors.
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use mutation::{Cell, ColumnData, PartitionKey, PartitionUpdate, Row};
use mutation::{KeyRange, ReadFilter, TableId};
use ring::{Token, TokenMetadata};
use storage::{Storage, StorageConfig, TableParams};
use uuid::timestamp::{context::NoContext, Timestamp};

use super::*;
use crate::Timeouts;

const USER: TableId = TableId(Uuid::from_u128(0xabc));

fn endpoint(last: u8) -> Endpoint {
    Endpoint {
        addr: IpAddr::from([127, 0, 0, last]),
        datacenter: "dc1".into(),
        rack: format!("r{last}").into(),
        host_id: [last; 16],
    }
}

async fn node(dir: &std::path::Path) -> Arc<Coordinator> {
    let config = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    let storage = Storage::open(config).unwrap();
    storage
        .create_table(batches::table_id(), TableParams::new("system", "batches"))
        .unwrap();
    storage
        .create_table(USER, TableParams::new("ks", "t"))
        .unwrap();
    storage.replay().unwrap();
    storage.finish_replay();
    let coordinator = Coordinator::new(Arc::new(storage), endpoint(1), Timeouts::default());
    coordinator.set_local_tokens(vec![0]);
    let keyspaces = [("ks", 1, &[USER][..]), ("rf3", 3, &[])];
    coordinator.install_schema(crate::coordinator::strategies::simple_keyspaces(&keyspaces));
    Arc::new(coordinator)
}

/// An insert of one row into partition `key` of the test table.
pub(crate) fn insert(key: &str) -> Mutation {
    let mut row = Row::new(Bytes::from_static(b"\x00"));
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(1, Bytes::from_static(b"x")),
    )];
    let key = Bytes::copy_from_slice(key.as_bytes());
    Mutation {
        table: USER,
        key: PartitionKey {
            token: ring::murmur3_token(&key),
            key,
        },
        update: PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        },
    }
}

/// A batch id written `age` ago.
fn id_aged(age: Duration) -> Uuid {
    let at = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() - age;
    let ts = Timestamp::from_unix(NoContext, at.as_secs(), at.subsec_nanos());
    Uuid::new_v1(ts, &[1, 2, 3, 4, 5, 6])
}

fn keys(coordinator: &Coordinator, table: TableId) -> Vec<Bytes> {
    let all = coordinator
        .storage
        .scan(
            table,
            &KeyRange::all(),
            &ReadFilter::all(),
            i32::MAX / 2,
            100,
        )
        .unwrap();
    all.into_iter().map(|p| p.key.key).collect()
}

async fn store(coordinator: &Coordinator, batch: &Batch) {
    coordinator
        .storage
        .apply(batches::store(batch))
        .await
        .unwrap();
}

#[tokio::test]
async fn replay_applies_an_old_batch_and_deletes_it_but_leaves_a_young_one() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = node(dir.path()).await;
    let old = Batch::new(
        id_aged(Duration::from_secs(60)),
        [insert("a"), insert("b")].iter(),
    );
    let young = Batch::new(id_aged(Duration::ZERO), [insert("c")].iter());
    store(&coordinator, &old).await;
    store(&coordinator, &young).await;
    assert_eq!(keys(&coordinator, batches::table_id()).len(), 2);

    assert_eq!(coordinator.replay_batchlog().await.unwrap(), 1);
    let mut applied = keys(&coordinator, USER);
    applied.sort();
    assert_eq!(
        applied,
        vec![Bytes::from_static(b"a"), Bytes::from_static(b"b")]
    );
    let left = keys(&coordinator, batches::table_id());
    assert_eq!(left, vec![Bytes::copy_from_slice(young.id.as_bytes())]);
    assert_eq!(coordinator.batchlog_stats().replayed, 1);
}

#[tokio::test]
async fn replay_drops_unreadable_batches_and_mutations_of_unknown_tables() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = node(dir.path()).await;
    let aged = || id_aged(Duration::from_secs(60));
    let mut corrupt = Batch::new(aged(), [insert("x")].iter());
    corrupt.mutations[0] = corrupt.mutations[0].slice(..3);
    let mut dropped_table = insert("y");
    dropped_table.table = TableId(Uuid::from_u128(0xdead));
    let mixed = Batch::new(aged(), [dropped_table, insert("z")].iter());
    store(&coordinator, &corrupt).await;
    store(&coordinator, &mixed).await;

    assert_eq!(coordinator.replay_batchlog().await.unwrap(), 1);
    assert_eq!(keys(&coordinator, USER), vec![Bytes::from_static(b"z")]);
    assert!(keys(&coordinator, batches::table_id()).is_empty());
}

#[tokio::test]
async fn a_batch_on_this_node_alone_is_written_without_the_batchlog() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = node(dir.path()).await;
    let groups = vec![("ks".to_string(), vec![insert("p"), insert("q")])];
    coordinator
        .write_atomically(groups, Consistency::One, None)
        .await
        .unwrap();
    assert_eq!(keys(&coordinator, USER).len(), 2);
    assert!(keys(&coordinator, batches::table_id()).is_empty());
}

#[tokio::test]
async fn without_another_live_node_the_batchlog_is_unavailable_except_at_any() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = node(dir.path()).await;
    let mut ring = TokenMetadata::new();
    for (i, last) in [1u8, 2, 3].into_iter().enumerate() {
        ring.add_endpoint(endpoint(last), vec![Token(i as i64 * 1000)]);
    }
    coordinator.topology.set_ring(ring);
    match coordinator.batchlog_holders(Consistency::Quorum) {
        Err(CqlError::Unavailable {
            consistency,
            required,
            alive,
            ..
        }) => assert_eq!((consistency, required, alive), (Consistency::Two, 2, 0)),
        other => panic!("unexpected {other:?}"),
    }
    let here = coordinator.batchlog_holders(Consistency::Any).unwrap();
    assert_eq!(here, vec![endpoint(1)]);
    // A logged batch over two partitions of an RF=3 keyspace fails before anything is written.
    let groups = vec![("rf3".to_string(), vec![insert("a"), insert("b")])];
    let err = coordinator
        .write_atomically(groups, Consistency::One, None)
        .await
        .unwrap_err();
    assert!(matches!(err, CqlError::Unavailable { .. }), "{err:?}");
    assert!(keys(&coordinator, USER).is_empty());
}

#[test]
fn batchlog_writes_fail_with_write_type_batch_log() {
    let two = Needed {
        consistency: Consistency::Two,
        block_for: 2,
    };
    assert!(batchlog_verdict(two, 2, vec![]).is_ok());
    match batchlog_verdict(two, 1, vec![]) {
        Err(CqlError::WriteTimeout {
            consistency,
            received,
            block_for,
            write_type,
            ..
        }) => assert_eq!(
            (consistency, received, block_for, write_type.as_str()),
            (Consistency::Two, 1, 2, "BATCH_LOG")
        ),
        other => panic!("unexpected {other:?}"),
    }
    let holder: std::net::IpAddr = [127, 0, 0, 3].into();
    match batchlog_verdict(two, 1, vec![(holder, 0x0003)]) {
        Err(CqlError::WriteFailure {
            failures,
            write_type,
            reasons,
            ..
        }) => {
            assert_eq!((failures, write_type.as_str()), (1, "BATCH_LOG"));
            assert_eq!(reasons, vec![(holder, 0x0003)]);
        }
        other => panic!("unexpected {other:?}"),
    }
}
