//! Stream sessions on turmoil's simulated network, with the production messaging, storage and
//! streaming code: a link cut in the middle of a session (the lost chunk requests are asked
//! again and the session completes), and a crash of the receiver or of the source (the other
//! side ends the session and removes its staging, the restarted receiver removes what the
//! crash left, and the retried session completes). The same sessions run pulled by the
//! source (`Streaming::pull`, as a decommission sends): a receiver crash fails the pull on the
//! source, which asks again once the receiver is back.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mutation::{
    Cell, ColumnData, KeyRange, Mutation, PartitionKey, PartitionUpdate, ReadFilter, Row, TableId,
};
use net::{HostId, Messaging, NetConfig, Tuning, TurmoilNetwork};
use parking_lot::Mutex;
use storage::{Storage, StorageConfig, TableParams};
use streaming::{Direction, SessionInfo, State, StreamConfig, StreamRequest, Streaming};

const TABLE: TableId = TableId(uuid::Uuid::from_u128(0x51));
const PORT: u16 = 7000;
const PARTITIONS: u64 = 300;
/// The source sends whole SSTables at this rate, so a session lasts a few simulated seconds.
const RATE: u64 = 256 * 1024;

/// Who starts the session: the receiver fetches (rebuild, bootstrap), or the source asks the
/// receiver to pull from it (decommission).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Driver {
    Receiver,
    Source,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    /// The link between the two is cut for 3 s.
    CutLink,
    CrashReceiver,
    CrashSource,
}

/// What the hosts saw, shared with the test.
#[derive(Default)]
struct Record {
    receiving: Vec<SessionInfo>,
    sending: Vec<SessionInfo>,
    /// The failed attempts of the side that drives.
    failures: Vec<String>,
    /// Tokens the receiver holds once an attempt succeeded.
    received: Option<Vec<i64>>,
    /// Whether a receiver found stream staging left in its table directory when it started
    /// (after opening storage, which removes it).
    staging_at_start: Vec<bool>,
}

type Shared = Arc<Mutex<Record>>;

fn key(n: u64) -> PartitionKey {
    PartitionKey {
        token: n.wrapping_mul(0x9E37_79B9_7F4A_7C15) as i64,
        key: Bytes::from(n.to_be_bytes().to_vec()),
    }
}

fn staging(dir: &Path) -> PathBuf {
    dir.join("data/ks")
        .join(format!("t-{}", TABLE.0.simple()))
        .join("streaming")
}

fn stream_config() -> StreamConfig {
    StreamConfig {
        chunk_bytes: 8 * 1024,
        request_timeout: Duration::from_secs(2),
        prepare_timeout: Duration::from_secs(30),
        retries: 5,
        retry_delay: Duration::from_millis(300),
        idle_timeout: Duration::from_secs(5),
        throughput: 0,
        entire_sstable_throughput: RATE,
        ..StreamConfig::default()
    }
}

async fn start(
    dir: &Path,
    name: &str,
    id: u128,
) -> turmoil::Result<(Arc<Storage>, Arc<Messaging>, Streaming)> {
    let storage = Storage::open(StorageConfig::new(dir.join("data"), dir.join("log")))?;
    storage.create_table(TABLE, TableParams::new("ks", "t"))?;
    storage.replay()?;
    storage.finish_replay();
    let storage = Arc::new(storage);
    let listen = std::net::SocketAddr::new(turmoil::lookup(name), PORT);
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
    let streaming = Streaming::start(storage.clone(), messaging.clone(), stream_config());
    Ok((storage, messaging, streaming))
}

/// The source: writes its partitions once (incompressible values, about 900 KiB), then
/// serves streams and publishes its sessions; driving, it asks the receiver to pull until a
/// pull succeeds.
async fn source(dir: PathBuf, record: Shared, driver: Driver) -> turmoil::Result {
    let (storage, _messaging, streaming) = start(&dir, "source", 1).await?;
    if storage.table_stats(TABLE)?.sstables == 0 {
        for n in 0..PARTITIONS {
            let mut state = n + 1;
            let value: Vec<u8> = (0..3000)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            let mut row = Row::new(Bytes::from_static(b"c"));
            row.columns = vec![ColumnData::simple("v", Cell::live(1, Bytes::from(value)))];
            let update = PartitionUpdate {
                rows: vec![row],
                ..Default::default()
            };
            storage
                .apply(Mutation {
                    table: TABLE,
                    key: key(n),
                    update,
                })
                .await?;
        }
        storage.flush(TABLE)?;
    }
    let streaming = Arc::new(streaming);
    if driver == Driver::Source {
        tokio::spawn(pull_until_done(streaming.clone(), record.clone()));
    }
    loop {
        record.lock().sending = streaming.sessions();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn pull_until_done(streaming: Arc<Streaming>, record: Shared) {
    let receiver = std::net::SocketAddr::new(turmoil::lookup("receiver"), PORT);
    let source = std::net::SocketAddr::new(turmoil::lookup("source"), PORT);
    loop {
        let request = StreamRequest {
            peer: source,
            tables: vec![(TABLE, vec![(i64::MIN, i64::MIN)])],
        };
        match streaming.pull(receiver, "Unbootstrap", request).await {
            Ok(()) => return,
            Err(e) => {
                record.lock().failures.push(e.to_string());
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// The receiver: pulls the whole ring from the source until an attempt succeeds (driving),
/// or until a session the source asked for completes.
async fn receiver(dir: PathBuf, record: Shared, driver: Driver) -> turmoil::Result {
    let (storage, _messaging, streaming) = start(&dir, "receiver", 2).await?;
    record.lock().staging_at_start.push(staging(&dir).exists());
    let streaming = Arc::new(streaming);
    let published = streaming.clone();
    let shared = record.clone();
    tokio::spawn(async move {
        loop {
            shared.lock().receiving = published.sessions();
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    match driver {
        Driver::Source => until_a_session_completes(&streaming).await,
        Driver::Receiver => fetch_until_done(&streaming, &record).await,
    }
    let scanned = storage.scan(TABLE, &KeyRange::all(), &ReadFilter::all(), 1, usize::MAX)?;
    {
        let mut record = record.lock();
        record.receiving = streaming.sessions();
        record.received = Some(scanned.iter().map(|p| p.key.token).collect());
    }
    std::future::pending::<()>().await;
    Ok(())
}

/// Waits for a session the source asked for (a pull) to complete here.
async fn until_a_session_completes(streaming: &Streaming) {
    let complete = |s: &SessionInfo| s.state == State::Complete;
    while !streaming.sessions().iter().any(complete) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Fetches the whole ring from the source until an attempt succeeds.
async fn fetch_until_done(streaming: &Streaming, record: &Shared) {
    let peer = std::net::SocketAddr::new(turmoil::lookup("source"), PORT);
    loop {
        let request = StreamRequest {
            peer,
            tables: vec![(TABLE, vec![(i64::MIN, i64::MIN)])],
        };
        match streaming.fetch("Rebuild", vec![request]).finish().await {
            Ok(()) => return,
            Err(failures) => {
                let why = failures.iter().map(|(_, e)| e.to_string()).collect();
                record.lock().failures.push(why);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// Bytes received so far by the receiver's running session.
fn receiving_progress(record: &Record) -> Option<(u64, u64)> {
    let running = record
        .receiving
        .iter()
        .rev()
        .find(|s| s.state == State::Streaming)?;
    Some((running.bytes_done, running.bytes_total))
}

fn simulate(
    driver: Driver,
    fault: Fault,
    seed: u64,
) -> (Record, PathBuf, PathBuf, tempfile::TempDir) {
    let root = tempfile::tempdir().expect("tempdir");
    let (source_dir, receiver_dir) = (root.path().join("source"), root.path().join("receiver"));
    let record = Shared::default();
    let mut sim = turmoil::Builder::new()
        .rng_seed(seed)
        .simulation_duration(Duration::from_secs(300))
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(3))
        .build();
    let (dir, shared) = (source_dir.clone(), record.clone());
    sim.host("source", move || {
        source(dir.clone(), shared.clone(), driver)
    });
    let (dir, shared) = (receiver_dir.clone(), record.clone());
    sim.host("receiver", move || {
        receiver(dir.clone(), shared.clone(), driver)
    });
    let watched = record.clone();
    sim.client("observer", async move {
        let done = |r: &Record| {
            r.received.is_some() && r.sending.last().is_some_and(|s| s.state.is_finished())
        };
        while !done(&watched.lock()) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(())
    });
    let (mut struck, mut healed_at) = (false, None);
    loop {
        if sim.step().expect("simulation") {
            break;
        }
        let halfway =
            receiving_progress(&record.lock()).is_some_and(|(done, total)| done * 3 > total);
        if !struck && halfway {
            struck = true;
            match fault {
                Fault::CutLink => sim.partition("source", "receiver"),
                // Turmoil drops the crashed host's tasks, so its staging goes with them: the
                // removal at start-up of what a real crash leaves is a storage unit test.
                Fault::CrashReceiver => sim.crash("receiver"),
                Fault::CrashSource => sim.crash("source"),
            }
            healed_at = Some(sim.elapsed() + Duration::from_secs(3));
        }
        if healed_at.is_some_and(|at| sim.elapsed() >= at) {
            healed_at = None;
            match fault {
                Fault::CutLink => sim.repair("source", "receiver"),
                Fault::CrashReceiver => {
                    // The source gives the silent receiver's session up on its own.
                    wait_until(
                        &mut sim,
                        || !staging(&source_dir).exists(),
                        "source staging removed",
                    );
                    sim.bounce("receiver");
                }
                Fault::CrashSource => {
                    let failed = |r: &Record| r.failures.len() == 1;
                    wait_until(&mut sim, || failed(&record.lock()), "receiver gave up");
                    assert!(!staging(&receiver_dir).exists(), "receiver staging removed");
                    sim.bounce("source");
                }
            }
        }
    }
    assert!(
        struck,
        "the fault never struck: {:?} at {:?}",
        record.lock().receiving,
        sim.elapsed()
    );
    let record = std::mem::take(&mut *record.lock());
    (record, source_dir, receiver_dir, root)
}

fn wait_until(sim: &mut turmoil::Sim<'_>, done: impl Fn() -> bool, what: &str) {
    let deadline = sim.elapsed() + Duration::from_secs(60);
    while !done() {
        assert!(sim.elapsed() < deadline, "{what}: not within 60 s");
        sim.step().expect("simulation");
    }
}

fn expected_tokens() -> Vec<i64> {
    let mut tokens: Vec<i64> = (0..PARTITIONS).map(|n| key(n).token).collect();
    tokens.sort_unstable();
    tokens
}

#[test]
fn a_session_survives_a_cut_link() {
    let (record, source_dir, receiver_dir, _root) = simulate(Driver::Receiver, Fault::CutLink, 7);
    assert_eq!(record.received, Some(expected_tokens()));
    assert!(record.failures.is_empty(), "{:?}", record.failures);
    let received = &record.receiving[0];
    assert_eq!(received.state, State::Complete);
    assert_eq!(received.bytes_done, received.bytes_total);
    assert!(!staging(&source_dir).exists() && !staging(&receiver_dir).exists());
}

#[test]
fn a_crashed_receiver_retries_from_a_clean_table() {
    let (record, source_dir, receiver_dir, _root) =
        simulate(Driver::Receiver, Fault::CrashReceiver, 11);
    assert_eq!(record.received, Some(expected_tokens()));
    assert_eq!(
        record.staging_at_start,
        vec![false, false],
        "removed at start-up"
    );
    let sent: Vec<&State> = record
        .sending
        .iter()
        .filter(|s| s.direction == Direction::Sending)
        .map(|s| &s.state)
        .collect();
    assert!(
        matches!(sent[..], [State::Failed(ref why), State::Complete] if why.contains("asked nothing")),
        "{sent:?}"
    );
    assert!(!staging(&source_dir).exists() && !staging(&receiver_dir).exists());
}

#[test]
fn a_crashed_source_fails_the_session_and_a_retry_completes() {
    let (record, source_dir, receiver_dir, _root) =
        simulate(Driver::Receiver, Fault::CrashSource, 13);
    assert_eq!(record.received, Some(expected_tokens()));
    assert_eq!(record.failures.len(), 1, "{:?}", record.failures);
    let states: Vec<&State> = record.receiving.iter().map(|s| &s.state).collect();
    assert!(
        matches!(states[..], [State::Failed(_), State::Complete]),
        "{states:?}"
    );
    assert!(!staging(&source_dir).exists() && !staging(&receiver_dir).exists());
}

#[test]
fn a_pull_whose_receiver_crashes_fails_on_the_source_and_a_new_pull_completes() {
    let (record, source_dir, receiver_dir, _root) =
        simulate(Driver::Source, Fault::CrashReceiver, 17);
    assert_eq!(record.received, Some(expected_tokens()));
    assert!(!record.failures.is_empty(), "the first pull failed");
    let sent: Vec<&State> = record
        .sending
        .iter()
        .filter(|s| s.direction == Direction::Sending)
        .map(|s| &s.state)
        .collect();
    // the crashed receiver's session ends on the source's idle timeout; the next completes
    assert!(
        matches!(sent[..], [State::Failed(ref why), State::Complete] if why.contains("asked nothing")),
        "{sent:?}"
    );
    assert!(
        record.failures[0].contains("lost before the answer"),
        "{:?}",
        record.failures
    );
    assert!(!staging(&source_dir).exists() && !staging(&receiver_dir).exists());
}
