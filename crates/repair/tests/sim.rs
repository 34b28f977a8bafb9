//! A repair on turmoil's simulated network, with the production messaging, storage, streaming
//! and repair: with the link to the other replica cut, the repair fails as Cassandra's does
//! when a participant dies (`Endpoint /b:7000 died`) and leaves nothing claimed; once the link
//! is back, the same repair runs again and the replica that missed writes holds them all.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mutation::{Cell, ColumnData, KeyRange, Mutation, PartitionKey, PartitionUpdate, ReadFilter};
use mutation::{Row, TableId};
use net::{HostId, Messaging, NetConfig, Tuning, TurmoilNetwork};
use parking_lot::Mutex;
use repair::{Repair, RepairConfig, RepairPlan, RepairState, RepairStatus, SessionPlan};
use storage::{Storage, StorageConfig, TableParams};
use streaming::{StreamConfig, Streaming};

const TABLE: TableId = TableId(uuid::Uuid::from_u128(0x31));
const PORT: u16 = 7000;
const PARTITIONS: u64 = 200;

#[derive(Default)]
struct Record {
    /// The coordinator's two attempts.
    attempts: Vec<RepairStatus>,
    /// The partitions the other replica holds, as it last looked.
    held_by_b: usize,
}

type Shared = Arc<Mutex<Record>>;

fn key(n: u64) -> PartitionKey {
    PartitionKey {
        token: n.wrapping_mul(0x9E37_79B9_7F4A_7C15) as i64,
        key: Bytes::from(n.to_be_bytes().to_vec()),
    }
}

async fn start(dir: &Path, name: &str, id: u128) -> turmoil::Result<(Arc<Storage>, Repair)> {
    let storage = Storage::open(StorageConfig::new(dir.join("data"), dir.join("log")))?;
    storage.create_table(TABLE, TableParams::new("ks", "t"))?;
    storage.replay()?;
    storage.finish_replay();
    let storage = Arc::new(storage);
    let listen = SocketAddr::new(turmoil::lookup(name), PORT);
    let mut config = NetConfig::new("Sim", HostId::from_u128(id), listen);
    config.connect_timeout = Duration::from_millis(500);
    let tuning = Tuning {
        keepalive: Duration::from_millis(200),
        dead_after: Duration::from_secs(1),
        reconnect_min: Duration::from_millis(50),
        reconnect_max: Duration::from_millis(400),
        ..Tuning::default()
    };
    let messaging = Messaging::start_tuned(config, tuning, Arc::new(TurmoilNetwork)).await?;
    let streaming = Arc::new(Streaming::start(
        storage.clone(),
        messaging.clone(),
        StreamConfig {
            request_timeout: Duration::from_secs(2),
            ..StreamConfig::default()
        },
    ));
    let config = RepairConfig {
        validation_timeout: Duration::from_secs(2),
        sync_timeout: Duration::from_secs(30),
        ..RepairConfig::default()
    };
    let repair = Repair::start(storage.clone(), messaging, streaming, config);
    Ok((storage, repair))
}

/// Writes partition `n` (skipping every tenth when `gaps`).
async fn write(storage: &Storage, gaps: bool) -> turmoil::Result {
    for n in (0..PARTITIONS).filter(|n| !gaps || n % 10 != 0) {
        let mut row = Row::new(Bytes::from_static(b"c"));
        let value = Bytes::from(n.to_be_bytes().to_vec());
        row.columns = vec![ColumnData::simple("v", Cell::live(1, value))];
        let update = PartitionUpdate {
            rows: vec![row],
            ..Default::default()
        };
        let mutation = Mutation {
            table: TABLE,
            key: key(n),
            update,
        };
        storage.apply(mutation).await?;
    }
    Ok(())
}

fn held(storage: &Storage) -> storage::Result<usize> {
    let all = storage.scan(TABLE, &KeyRange::all(), &ReadFilter::all(), 1, usize::MAX)?;
    Ok(all.len())
}

/// The replica that missed every tenth write: serves, and publishes what it holds.
async fn replica(dir: PathBuf, record: Shared) -> turmoil::Result {
    let (storage, _repair) = start(&dir, "b", 2).await?;
    write(&storage, true).await?;
    loop {
        record.lock().held_by_b = held(&storage)?;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The coordinator: repairs the whole ring with the link cut, then with it back.
async fn coordinator(dir: PathBuf, record: Shared) -> turmoil::Result {
    let (storage, repair) = start(&dir, "a", 1).await?;
    write(&storage, false).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let plan = RepairPlan {
        keyspace: "ks".into(),
        tables: vec![("t".into(), TABLE)],
        sessions: vec![SessionPlan {
            ranges: vec![(i64::MIN, i64::MIN)],
            replicas: vec![
                SocketAddr::new(turmoil::lookup("a"), PORT),
                SocketAddr::new(turmoil::lookup("b"), PORT),
            ],
        }],
        sequential: false,
        job_threads: 1,
        incremental: false,
        preview: None,
        options: "repair options (...)".into(),
        refused: None,
    };
    turmoil::partition("a", "b");
    let cut = repair
        .run(repair.next_command(), plan.clone(), &|_| {})
        .await;
    record.lock().attempts.push(cut);
    turmoil::repair("a", "b");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let healed = repair.run(repair.next_command(), plan, &|_| {}).await;
    record.lock().attempts.push(healed);
    std::future::pending::<()>().await;
    Ok(())
}

#[test]
fn a_repair_cut_off_from_a_replica_fails_and_succeeds_once_the_link_is_back() {
    let root = tempfile::tempdir().unwrap();
    let record = Shared::default();
    let mut sim = turmoil::Builder::new()
        .rng_seed(7)
        .simulation_duration(Duration::from_secs(120))
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(3))
        .build();
    let (dir, shared) = (root.path().join("a"), record.clone());
    sim.host("a", move || coordinator(dir.clone(), shared.clone()));
    let (dir, shared) = (root.path().join("b"), record.clone());
    sim.host("b", move || replica(dir.clone(), shared.clone()));
    let watched = record.clone();
    sim.client("observer", async move {
        let done = |r: &Record| r.attempts.len() == 2 && r.held_by_b == PARTITIONS as usize;
        while !done(&watched.lock()) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    });
    let outcome = sim.run();
    let record = record.lock();
    assert!(outcome.is_ok(), "{outcome:?}: {:?}", record.attempts);
    match &record.attempts[0].state {
        RepairState::Failed(why) => {
            let died = why.contains("failed with error Endpoint /") && why.ends_with(":7000 died");
            assert!(died, "{why}")
        }
        other => panic!("the cut-off repair ended {other:?}"),
    }
    let healed = &record.attempts[1];
    assert_eq!(healed.state, RepairState::Success);
    assert_eq!(
        healed.partitions_validated,
        2 * PARTITIONS - PARTITIONS / 10
    );
    assert!(healed.ranges_out_of_sync > 0 && healed.bytes_streamed > 0);
}
