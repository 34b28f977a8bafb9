//! Three nodes on loopback, each with its storage, messaging, streaming and repair: validation
//! gives equal trees for equal data in different layouts, and a repair coordinated by one node
//! makes replicas that missed writes and deletions equal to the others.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use mutation::{
    Cell, ColumnData, DeletionTime, KeyRange, Mutation, PartitionKey, PartitionUpdate, ReadFilter,
    Row, TableId,
};
use net::{HostId, Messaging, NetConfig, TokioNetwork};
use parking_lot::Mutex;
use repair::messages::ValidationRequest;
use repair::validation;
use repair::{
    Notice, PreviewKind, Repair, RepairConfig, RepairPlan, RepairState, SessionPlan, SessionState,
};
use storage::{RepairScope, Storage, StorageConfig, TableParams};
use streaming::{StreamConfig, Streaming};

const TABLE: TableId = TableId(uuid::Uuid::from_u128(0x30));

/// Wall-clock seconds, as validation reads the data.
fn now() -> i32 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.unwrap().as_secs() as i32
}

struct Node {
    storage: Arc<Storage>,
    messaging: Arc<Messaging>,
    repair: Repair,
}

async fn node(dir: &Path, n: u128) -> Node {
    let storage = Storage::open(StorageConfig::new(dir.join("data"), dir.join("log"))).unwrap();
    storage
        .create_table(TABLE, TableParams::new("ks", "t"))
        .unwrap();
    storage.replay().unwrap();
    storage.finish_replay();
    let storage = Arc::new(storage);
    let net = NetConfig::new("Test", HostId::from_u128(n), "127.0.0.1:0".parse().unwrap());
    let messaging = Messaging::start(net, Arc::new(TokioNetwork)).await.unwrap();
    let stream_config = StreamConfig {
        throughput: 0,
        entire_sstable_throughput: 0,
        ..StreamConfig::default()
    };
    let streaming = Arc::new(Streaming::start(
        storage.clone(),
        messaging.clone(),
        stream_config,
    ));
    let repair = Repair::start(
        storage.clone(),
        messaging.clone(),
        streaming,
        RepairConfig::default(),
    );
    Node {
        storage,
        messaging,
        repair,
    }
}

/// The tree of all of `storage`'s data of the table over `range`.
fn build(storage: &Storage, range: mutation::TokenRange, depth: u8) -> repair::merkle::MerkleTree {
    let request = ValidationRequest {
        session: uuid::Uuid::from_u128(1),
        table: TABLE,
        range,
        depth,
        now: now(),
        scope: RepairScope::All,
    };
    validation::build(storage, &request).unwrap()
}

fn key(n: u64) -> PartitionKey {
    PartitionKey {
        token: n.wrapping_mul(0x9E37_79B9_7F4A_7C15) as i64,
        key: Bytes::from(n.to_be_bytes().to_vec()),
    }
}

fn row(value: u64, timestamp: i64) -> Row {
    let mut row = Row::new(Bytes::from_static(b"c"));
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(timestamp, Bytes::from(value.to_be_bytes().to_vec())),
    )];
    row
}

async fn write(storage: &Storage, n: u64, value: u64, timestamp: i64) {
    let update = PartitionUpdate {
        rows: vec![row(value, timestamp)],
        ..Default::default()
    };
    let mutation = Mutation {
        table: TABLE,
        key: key(n),
        update,
    };
    storage.apply(mutation).await.unwrap();
}

async fn delete(storage: &Storage, n: u64, timestamp: i64) {
    let update = PartitionUpdate {
        partition_deletion: DeletionTime::new(timestamp, now()),
        ..Default::default()
    };
    let mutation = Mutation {
        table: TABLE,
        key: key(n),
        update,
    };
    storage.apply(mutation).await.unwrap();
}

/// Every live partition: its token and its row's value.
fn contents(storage: &Storage) -> Vec<(i64, Vec<Row>)> {
    let all = storage
        .scan(
            TABLE,
            &KeyRange::all(),
            &ReadFilter::all(),
            now(),
            usize::MAX,
        )
        .unwrap();
    all.into_iter().map(|p| (p.key.token, p.rows)).collect()
}

#[tokio::test]
async fn equal_data_in_other_layouts_gives_equal_trees_and_one_changed_cell_one_leaf() {
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let a = node(dirs[0].path(), 1).await;
    let b = node(dirs[1].path(), 2).await;
    // a: everything in one memtable; b: three SSTables and a memtable, with an older value
    // overwritten and a row written then deleted.
    for n in 0..400 {
        write(&a.storage, n, n, 10).await;
    }
    for n in 0..400 {
        write(&b.storage, n, n + 1000, 5).await;
    }
    b.storage.flush(TABLE).unwrap();
    for n in (0..400).rev() {
        write(&b.storage, n, n, 10).await;
        if n % 100 == 0 {
            b.storage.flush(TABLE).unwrap();
        }
    }
    write(&b.storage, 999, 1, 1).await;
    b.storage.flush(TABLE).unwrap();
    delete(&b.storage, 999, 2).await;
    delete(&a.storage, 999, 2).await;
    let range = (i64::MIN, i64::MIN);
    let tree_a = build(&a.storage, range, 8);
    let tree_b = build(&b.storage, range, 8);
    assert_eq!(tree_a.partitions(), 401);
    assert_eq!(tree_a.root(), tree_b.root());
    assert_eq!(tree_a.difference(&tree_b), Ok(vec![]));

    write(&b.storage, 7, 7, 11).await;
    let changed = build(&b.storage, range, 8);
    let differing = tree_a.difference(&changed).unwrap();
    assert_eq!(differing.len(), 1, "{differing:?}");
    let (left, right) = differing[0];
    let token = key(7).token;
    assert!(
        left < token && token <= right,
        "{differing:?} misses {token}"
    );

    // A wrapping range covers the partitions on both sides of the ring's end.
    let wrapping = (i64::MAX / 2, i64::MIN / 2);
    let tree = build(&a.storage, wrapping, 4);
    let inside = (0..400)
        .chain([999])
        .filter(|n| {
            let t = key(*n).token;
            t > i64::MAX / 2 || t <= i64::MIN / 2
        })
        .count();
    assert_eq!(tree.partitions(), inside as u64);
}

/// Three nodes whose data differs: node 3 missed 30 writes, 10 updates and 5 deletions,
/// node 2 one other write.
async fn diverged(dirs: &[tempfile::TempDir]) -> Vec<Node> {
    let mut nodes = Vec::new();
    for (n, dir) in dirs.iter().enumerate() {
        nodes.push(node(dir.path(), n as u128 + 1).await);
    }
    for n in 0..300 {
        for node in &nodes {
            write(&node.storage, n, n, 10).await;
        }
    }
    for node in &nodes {
        node.storage.flush(TABLE).unwrap();
    }
    // Node 3 misses 30 writes, 10 updates and 5 deletions; node 2 misses one other write.
    for n in 300..330 {
        write(&nodes[0].storage, n, n, 10).await;
        write(&nodes[1].storage, n, n, 10).await;
    }
    for n in 0..10 {
        write(&nodes[0].storage, n, n + 500, 20).await;
        write(&nodes[1].storage, n, n + 500, 20).await;
    }
    for n in 100..105 {
        delete(&nodes[0].storage, n, 30).await;
        delete(&nodes[1].storage, n, 30).await;
    }
    write(&nodes[0].storage, 400, 400, 10).await;
    write(&nodes[2].storage, 400, 400, 10).await;
    assert_ne!(contents(&nodes[0].storage), contents(&nodes[2].storage));

    nodes
}

/// A repair of the whole ring in two ranges by every node.
fn plan(nodes: &[Node], incremental: bool) -> RepairPlan {
    let replicas: Vec<_> = nodes.iter().map(|n| n.messaging.local()).collect();
    RepairPlan {
        keyspace: "ks".into(),
        tables: vec![("t".into(), TABLE)],
        sessions: vec![SessionPlan {
            ranges: vec![(i64::MIN / 3, i64::MAX / 3), (i64::MAX / 3, i64::MIN / 3)],
            replicas,
        }],
        sequential: false,
        job_threads: 1,
        incremental,
        preview: None,
        options: "repair options (...)".into(),
        refused: None,
    }
}

#[tokio::test]
async fn incremental_repair_compares_only_unrepaired_data_and_marks_it_repaired() {
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let nodes = diverged(&dirs).await;
    let plan = plan(&nodes, true);
    let first = nodes[0].repair.run(1, plan.clone(), &|_| {}).await;
    assert_eq!(first.state, RepairState::Success);
    assert!(first.bytes_streamed > 0 && first.ranges_out_of_sync > 0);
    let expected = contents(&nodes[0].storage);
    assert_eq!(expected.len(), 331 - 5);
    for node in &nodes {
        assert_eq!(contents(&node.storage), expected);
        let usage = node.storage.table_usage(TABLE).unwrap();
        assert_eq!(usage.percent_repaired(), 100.0, "{usage:?}");
        assert!(node.storage.pending_sessions(TABLE).unwrap().is_empty());
        assert!(node.repair.local_sessions(false).is_empty());
        let ended = node.repair.local_sessions(true);
        assert_eq!(ended.len(), 1, "{ended:?}");
        assert_eq!(ended[0].state, SessionState::Finalized);
        assert_eq!(ended[0].coordinator, nodes[0].messaging.local());
        assert_eq!(ended[0].participants.len(), 3);
    }
    let unknown = uuid::Uuid::from_u128(77);
    assert_eq!(
        nodes[1].repair.cancel(unknown).await,
        Err(format!("Session {unknown} does not exist"))
    );

    // nothing changed: nothing old is validated, nothing is sent
    let second = nodes[1].repair.run(2, plan.clone(), &|_| {}).await;
    assert_eq!(second.state, RepairState::Success);
    assert_eq!(
        (second.partitions_validated, second.bytes_streamed),
        (0, 0),
        "{second:?}"
    );

    // a write only node 1 took: only it is validated and sent
    write(&nodes[0].storage, 2000, 1, 40).await;
    let third = nodes[2].repair.run(3, plan.clone(), &|_| {}).await;
    assert_eq!(third.state, RepairState::Success);
    assert_eq!(third.partitions_validated, 1, "{third:?}");
    assert!(third.bytes_streamed > 0);
    for node in &nodes {
        assert_eq!(contents(&node.storage).len(), 331 - 5 + 1);
        let usage = node.storage.table_usage(TABLE).unwrap();
        assert_eq!(usage.percent_repaired(), 100.0, "{usage:?}");
    }
}

#[tokio::test]
async fn repair_makes_replicas_that_missed_writes_and_deletions_equal() {
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let nodes = diverged(&dirs).await;
    let plan = plan(&nodes, false);
    let lines = Mutex::new(Vec::new());
    let notify = |notice: Notice| lines.lock().push(notice.message);
    let command = nodes[0].repair.next_command();
    let overlapping = RepairPlan {
        sessions: vec![SessionPlan {
            ranges: vec![(0, 10)],
            ..plan.sessions[0].clone()
        }],
        ..plan.clone()
    };
    let second = nodes[0].repair.next_command();
    let (status, refused) = tokio::join!(
        nodes[0].repair.run(command, plan.clone(), &notify),
        nodes[0].repair.run(second, overlapping, &|_| {})
    );
    assert_eq!(status.state, RepairState::Success, "{:?}", lines.lock());
    let overlap = "Cannot start multiple repair sessions over the same sstables";
    assert_eq!(refused.state, RepairState::Failed(overlap.into()));
    assert!(status.ranges_out_of_sync > 0);
    assert!(status.bytes_streamed > 0);
    let expected = contents(&nodes[0].storage);
    assert_eq!(expected.len(), 331 - 5);
    for node in &nodes[1..] {
        assert_eq!(contents(&node.storage), expected);
    }
    let lines = lines.lock().clone();
    assert!(
        lines[0].starts_with("Starting repair command #1 ("),
        "{lines:?}"
    );
    assert!(lines[1].contains("finished"), "{lines:?}");
    assert_eq!(lines[2], "Repair completed successfully");
    assert!(
        lines[3].starts_with("Repair command #1 finished in "),
        "{lines:?}"
    );

    let command = nodes[0].repair.next_command();
    let after = nodes[0].repair.run(command, plan.clone(), &|_| {}).await;
    assert_eq!(after.state, RepairState::Success, "the claims are released");
    let command = nodes[1].repair.next_command();
    let again = nodes[1].repair.run(command, plan, &|_| {}).await;
    assert_eq!(again.state, RepairState::Success);
    assert_eq!((again.ranges_out_of_sync, again.bytes_streamed), (0, 0));
    assert_eq!(again.partitions_validated, 3 * 331);
}

#[tokio::test]
async fn previews_report_differences_and_change_nothing() {
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let nodes = diverged(&dirs).await;
    let before: Vec<_> = nodes.iter().map(|n| contents(&n.storage)).collect();
    let lines = Mutex::new(Vec::new());
    let notify = |notice: Notice| lines.lock().push(notice.message);
    let preview = |kind| RepairPlan {
        preview: Some(kind),
        ..plan(&nodes, true)
    };

    let unrepaired = nodes[0]
        .repair
        .run(1, preview(PreviewKind::Unrepaired), &notify)
        .await;
    assert_eq!(unrepaired.state, RepairState::Success);
    assert!(unrepaired.ranges_out_of_sync > 0);
    assert_eq!(
        (unrepaired.bytes_streamed, unrepaired.files_streamed),
        (0, 0)
    );
    assert!(unrepaired.previewed.iter().any(|s| s.partitions > 0));
    let summary = lines
        .lock()
        .iter()
        .find(|l| l.starts_with("Preview complete\n"))
        .cloned();
    let summary = summary.expect("a preview summary");
    assert!(
        summary.contains("Total estimated streaming: ") && summary.contains("ks.t - "),
        "{summary}"
    );
    assert!(lines
        .lock()
        .iter()
        .any(|l| l.starts_with("Repair preview completed successfully; Preview complete")));
    for (node, held) in nodes.iter().zip(&before) {
        assert_eq!(&contents(&node.storage), held);
        let usage = node.storage.table_usage(TABLE).unwrap();
        assert_eq!(usage.percent_repaired(), 0.0, "{usage:?}");
        assert!(node.repair.local_sessions(true).is_empty());
    }

    // nothing is repaired yet, so the repaired data agrees
    lines.lock().clear();
    let validated = nodes[1]
        .repair
        .run(2, preview(PreviewKind::Repaired), &notify)
        .await;
    assert_eq!(validated.state, RepairState::Success);
    assert_eq!(validated.partitions_validated, 0);
    assert!(lines
        .lock()
        .contains(&"Repaired data is in sync".to_string()));

    // after an incremental repair the unrepaired data is gone and the repaired agrees
    let repaired = nodes[0].repair.run(3, plan(&nodes, true), &|_| {}).await;
    assert_eq!(repaired.state, RepairState::Success);
    for (kind, message) in [
        (PreviewKind::Unrepaired, "Previewed data was in sync"),
        (PreviewKind::Repaired, "Repaired data is in sync"),
        (PreviewKind::All, "Previewed data was in sync"),
    ] {
        lines.lock().clear();
        let status = nodes[2].repair.run(4, preview(kind), &notify).await;
        assert_eq!(status.state, RepairState::Success);
        assert!(
            lines.lock().contains(&message.to_string()),
            "{kind:?}: {:?}",
            lines.lock()
        );
    }
}
