//! Two nodes as replicas of one table, read as a coordinator reads them: each answers rounds
//! with its unresolved data (`read_source`) or its partitions of a range (`scan_source`); the
//! answers reconcile to what a single node holding every write returns, and the repair diff
//! brings a stale replica's digest in line.

use super::common::*;
use mutation::rounds::{Round, Rounds};
use mutation::scan::ScanRound;
use mutation::{KeyRange, Mutation, Partition, PartitionData, ReadFilter, ReadStats, TableId};
use storage::{Storage, StorageError};

fn node() -> (Storage, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    (open_quiet(&config(dir.path())), dir)
}

async fn write(storage: &Storage, mutations: Vec<Mutation>) {
    for mutation in mutations {
        storage.apply(mutation).await.expect("apply");
    }
}

/// Partitions 1 to 3 with rows 0 to 9, half flushed; `stale` misses the deletion of partition 2
/// and of rows 0 to 5 of partition 1.
async fn replicas() -> [(Storage, tempfile::TempDir); 3] {
    let nodes = [node(), node(), node()];
    let deletions: Vec<Mutation> = (0..6)
        .map(|c| delete_row(1, c, 5, now()))
        .chain([Mutation {
            update: mutation::PartitionUpdate {
                partition_deletion: mutation::DeletionTime::new(5, now()),
                ..Default::default()
            },
            ..upsert(2, 0, 0, "")
        }])
        .collect();
    for (i, (storage, _)) in nodes.iter().enumerate() {
        let rows = |range: std::ops::Range<u8>| {
            (1..4).flat_map(move |n| range.clone().map(move |c| upsert(n, c, 1, "v")))
        };
        write(storage, rows(0..5).collect()).await;
        storage.flush(TABLE).expect("flush");
        write(storage, rows(5..10).collect()).await;
        if i != 0 {
            write(storage, deletions.clone()).await;
        }
    }
    nodes
}

/// A coordinator's read of partition `n` over `nodes`.
fn coordinated(
    nodes: &[(Storage, tempfile::TempDir)],
    n: u64,
    filter: &ReadFilter,
) -> Option<Partition> {
    let mut rounds = Rounds::new(&key(n), filter);
    let mut stats = ReadStats::default();
    while let Some((round_filter, cap)) = rounds.next() {
        let mut round = Round::new(&round_filter);
        for (storage, _) in nodes {
            round.add(
                storage
                    .read_source(TABLE, &key(n), &round_filter, cap)
                    .expect("read"),
            );
        }
        rounds.add(round, now(), &mut stats);
    }
    rounds.finish()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_reconcile_to_what_one_node_holding_every_write_reads() {
    let nodes = replicas().await;
    let up_to_date = &nodes[1].0;
    for limit in [None, Some(2)] {
        let filter = ReadFilter {
            row_limit: limit,
            ..ReadFilter::all()
        };
        for n in 1..4 {
            let local = up_to_date
                .read(TABLE, &key(n), &filter, now())
                .expect("read");
            assert_eq!(
                coordinated(&nodes, n, &filter),
                local,
                "partition {n}, limit {limit:?}"
            );
        }
    }
    let (complete, horizon) = scanned(&nodes, 2);
    assert_eq!(complete.len(), 2);
    assert_eq!(horizon.as_ref(), complete.last().map(|(k, _)| k));
    let (complete, horizon) = scanned(&nodes, 10);
    assert_eq!((complete.len(), horizon), (3, None));
    let (_, deleted) = complete
        .iter()
        .find(|(k, _)| *k == key(2))
        .expect("partition 2");
    assert!(
        !deleted.partition_deletion.is_live(),
        "the deletion comes with what it shadows"
    );
}

/// A coordinator's scan round over `nodes`, each returning at most `limit` partitions.
fn scanned(
    nodes: &[(Storage, tempfile::TempDir)],
    limit: usize,
) -> (
    Vec<(mutation::PartitionKey, PartitionData)>,
    Option<mutation::PartitionKey>,
) {
    let mut scan = ScanRound::new();
    for (storage, _) in nodes {
        let filter = ReadFilter::all();
        scan.add(
            storage
                .scan_source(TABLE, &KeyRange::all(), &filter, limit)
                .expect("scan"),
        );
    }
    scan.complete()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repair_diff_brings_a_stale_replica_in_line() {
    let nodes = replicas().await;
    let filter = ReadFilter::all();
    let answer = |storage: &Storage| {
        storage
            .read_source(TABLE, &key(1), &filter, usize::MAX)
            .expect("read")
            .expect("present")
    };
    let (stale, fresh) = (answer(&nodes[0].0), answer(&nodes[1].0));
    assert_ne!(stale.digest(), fresh.digest());
    let mut reconciled = PartitionData::default();
    reconciled.merge(stale.data.clone());
    reconciled.merge(fresh.data.clone());
    let diff = reconciled.missing_in(&stale.data).expect("the deletions");
    assert_eq!(diff.rows.len(), 6);
    assert_eq!(reconciled.missing_in(&fresh.data), None);
    let repair = Mutation {
        table: TABLE,
        key: key(1),
        update: diff,
    };
    nodes[0].0.apply(repair).await.expect("repair");
    assert_eq!(answer(&nodes[0].0).digest(), fresh.digest());
}

#[test]
fn replica_reads_of_an_unknown_table_fail() {
    let (storage, _dir) = node();
    let unknown = TableId(uuid::Uuid::from_u128(1));
    let read = storage.read_source(unknown, &key(1), &ReadFilter::all(), 10);
    assert!(matches!(read, Err(StorageError::UnknownTable(_))));
    let scan = storage.scan_source(unknown, &KeyRange::all(), &ReadFilter::all(), 10);
    assert!(matches!(scan, Err(StorageError::UnknownTable(_))));
}
