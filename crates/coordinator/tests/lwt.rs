//! Lightweight transactions across simulated nodes (turmoil hosts with real storage and
//! messaging, RF 3): compare-and-sets and SERIAL reads from different coordinators, with
//! replicas down, a coordinator cut off, and a concurrent history of registers from several
//! clients under crashes, checked for linearizability (`paxos::linearizability`).
//!
//! The default suite runs fixed seeds; `HELENUS_SIM_SEEDS=N` runs seeds 1..=N.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod common;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::ops::key_bytes;
use common::*;
use coordinator::{CasOutcome, CasScope, Coordinator};
use mutation::{
    Cell, ColumnData, ColumnValue, Mutation, Partition, PartitionUpdate, ReadFilter, Row,
};
use net::SimRng;
use parking_lot::Mutex;
use paxos::linearizability::{check_registers, Operation, RegisterInput, RegisterOutput};
use tokio::time::Instant;
use types::{Consistency, CqlError};

const NOW: i32 = 1_700_000_000;

fn seeds() -> Vec<u64> {
    match std::env::var("HELENUS_SIM_SEEDS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        Some(n) => (1..=n).collect(),
        None => vec![1, 2],
    }
}

fn scope(serial: Consistency) -> CasScope<'static> {
    CasScope {
        keyspace: KEYSPACE,
        table: TABLE,
        serial,
        commit: Consistency::Quorum,
        now: NOW,
        trace: None,
    }
}

/// Register `key` set to `value`, written at `ts`.
fn set(key: u64, value: i64, ts: i64) -> Mutation {
    let mut row = Row::new(Bytes::new());
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(ts, Bytes::copy_from_slice(&value.to_be_bytes())),
    )];
    Mutation {
        table: TABLE,
        key: key_bytes(key),
        update: PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        },
    }
}

/// A register's value (0 when unwritten).
fn value(partition: Option<&Partition>) -> i64 {
    let Some(row) = partition.and_then(|p| p.rows.first()) else {
        return 0;
    };
    match row.column(b"v").map(|c| &c.value) {
        Some(ColumnValue::Simple(cell)) => {
            let bytes = cell.value.as_deref().unwrap_or_default();
            i64::from_be_bytes(bytes.try_into().expect("an 8-byte value"))
        }
        _ => 0,
    }
}

/// Compare-and-set of register `key` from `expect` to `new` (`expect` None: unconditional).
async fn cas(
    coordinator: &Coordinator,
    key: u64,
    expect: Option<i64>,
    new: i64,
) -> Result<CasOutcome, CqlError> {
    let scope = scope(Consistency::Serial);
    coordinator
        .cas(
            &scope,
            &key_bytes(key),
            &ReadFilter::all(),
            |current, ts| {
                let holds = expect.is_none_or(|e| value(current) == e);
                holds.then(|| set(key, new, ts))
            },
        )
        .await
}

async fn serial_read(coordinator: &Coordinator, key: u64) -> Result<i64, CqlError> {
    let scope = scope(Consistency::Serial);
    let (key, filter) = (key_bytes(key), ReadFilter::all());
    let read = coordinator.serial_read(&scope, &key, &filter).await;
    read.map(|p| value(p.as_ref()))
}

/// The replicas of `key` and a node that is none (it coordinates with no local replica).
fn replicas_of(cluster: &Cluster, key: u64) -> (Vec<usize>, usize) {
    let strategy = common::ops::STRATEGY;
    let endpoints = strategy.replicas(ring::Token(key_bytes(key).token), &cluster.ring);
    let replicas: Vec<usize> = endpoints.iter().map(|e| cluster.node_of(e.addr)).collect();
    let other = (0..cluster.len()).find(|n| !replicas.contains(n));
    (replicas, other.expect("a node that is no replica"))
}

#[test]
fn compare_and_set_and_serial_reads_from_any_coordinator() {
    simulate(1, async {
        let cluster = Cluster::start(4, 1).await;
        let (replicas, other) = replicas_of(&cluster, 1);
        let first = &cluster.node(other).coordinator;
        assert_eq!(
            cas(first, 1, Some(0), 10).await.unwrap(),
            CasOutcome::Applied
        );
        // Another coordinator's condition sees the first's write.
        let second = &cluster.node(replicas[0]).coordinator;
        match cas(second, 1, Some(0), 20).await.unwrap() {
            CasOutcome::NotApplied(current) => assert_eq!(value(current.as_ref()), 10),
            CasOutcome::Applied => panic!("applied over a value it did not expect"),
        }
        assert_eq!(
            cas(second, 1, Some(10), 20).await.unwrap(),
            CasOutcome::Applied
        );
        for node in 0..cluster.len() {
            let read = serial_read(&cluster.node(node).coordinator, 1).await;
            assert_eq!(read.unwrap(), 20, "node {node}");
        }
        // The commit reached every replica's table: a local read of each holds it.
        for replica in replicas {
            let storage = &cluster.node(replica).storage;
            let partition = storage
                .read(TABLE, &key_bytes(1), &ReadFilter::all(), NOW)
                .unwrap();
            assert_eq!(value(partition.as_ref()), 20, "replica {replica}");
        }
    });
}

/// The events replicas wrote for traced sessions.
#[derive(Default)]
struct Sink(Mutex<Vec<String>>);

impl coordinator::TraceSink for Sink {
    fn write(&self, _session: uuid::Uuid, events: Vec<coordinator::TraceEvent>) {
        self.0.lock().extend(events.into_iter().map(|e| e.activity));
    }
}

#[test]
fn a_traced_compare_and_set_traces_each_phase_on_the_replicas() {
    simulate(4, async {
        let cluster = Cluster::start(4, 4).await;
        let sink = Arc::new(Sink::default());
        for node in 0..cluster.len() {
            cluster
                .node(node)
                .coordinator
                .attach_trace_sink(sink.clone());
        }
        let (_, other) = replicas_of(&cluster, 4);
        let trace = coordinator::Trace::new(uuid::Uuid::from_u128(44));
        let scope = CasScope {
            trace: Some(&trace),
            ..scope(Consistency::Serial)
        };
        let coordinator = &cluster.node(other).coordinator;
        let (key, filter) = (key_bytes(4), ReadFilter::all());
        let outcome = coordinator
            .cas(&scope, &key, &filter, |_, ts| Some(set(4, 1, ts)))
            .await;
        assert_eq!(outcome.unwrap(), CasOutcome::Applied);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mine: Vec<String> = trace
            .take_events()
            .into_iter()
            .map(|e| e.activity)
            .collect();
        for expected in [
            "Reading existing values for CAS precondition",
            "CAS precondition is met; proposing client-requested updates",
            "CAS applied successfully",
        ] {
            assert!(
                mine.iter().any(|a| a == expected),
                "{expected:?} not in {mine:?}"
            );
        }
        let theirs = sink.0.lock().clone();
        for phase in [
            "Promising ballot",
            "Accepting proposal",
            "Committing proposal",
        ] {
            let count = theirs.iter().filter(|a| a.starts_with(phase)).count();
            assert!(
                count >= 2,
                "{phase:?} traced by {count} replicas: {theirs:?}"
            );
        }
    });
}

#[test]
fn a_quorum_of_live_replicas_is_needed() {
    simulate(2, async {
        let mut cluster = Cluster::start(4, 2).await;
        let (replicas, other) = replicas_of(&cluster, 2);
        cluster.crash(replicas[0]).await;
        cluster.detect_everywhere(replicas[0], false);
        let coordinator = cluster.node(other).coordinator.clone();
        assert_eq!(
            cas(&coordinator, 2, Some(0), 1).await.unwrap(),
            CasOutcome::Applied
        );
        assert_eq!(serial_read(&coordinator, 2).await.unwrap(), 1);
        cluster.crash(replicas[1]).await;
        cluster.detect_everywhere(replicas[1], false);
        match cas(&coordinator, 2, Some(1), 2).await {
            Err(CqlError::Unavailable {
                consistency,
                required,
                alive,
                ..
            }) => assert_eq!((consistency, required, alive), (Consistency::Serial, 2, 1)),
            other => panic!("expected Unavailable, got {other:?}"),
        }
        match serial_read(&coordinator, 2).await {
            Err(CqlError::Unavailable {
                required, alive, ..
            }) => assert_eq!((required, alive), (2, 1)),
            other => panic!("expected Unavailable, got {other:?}"),
        }
    });
}

#[test]
fn a_coordinator_cut_off_times_out_with_write_type_cas_and_changes_nothing() {
    simulate(3, async {
        let mut cluster = Cluster::start(4, 3).await;
        let (_, other) = replicas_of(&cluster, 3);
        let coordinator = cluster.node(other).coordinator.clone();
        assert_eq!(
            cas(&coordinator, 3, Some(0), 5).await.unwrap(),
            CasOutcome::Applied
        );
        // Cut off, and the failure detector has not noticed: the prepare is never answered.
        cluster.isolate(other);
        match cas(&coordinator, 3, Some(5), 6).await {
            Err(CqlError::CasWriteTimeout {
                consistency,
                received,
                block_for,
                contentions,
                ..
            }) => {
                assert_eq!((consistency, contentions), (Consistency::Serial, 0));
                assert!(received < block_for);
            }
            other => panic!("expected a WriteTimeout, got {other:?}"),
        }
        match serial_read(&coordinator, 3).await {
            Err(CqlError::ReadTimeout { consistency, .. }) => {
                assert_eq!(consistency, Consistency::Serial)
            }
            other => panic!("expected a ReadTimeout, got {other:?}"),
        }
        cluster.heal().await;
        let elsewhere = &cluster.node((other + 1) % cluster.len()).coordinator;
        assert_eq!(serial_read(elsewhere, 3).await.unwrap(), 5);
    });
}

/// One operation of the history, from `call` to `ret` (µs of simulated time).
type Recorded = Operation<(u64, RegisterInput), RegisterOutput>;

/// What each client does: `ops` operations on `keys` registers, pausing up to `max_pause_ms`
/// after each.
#[derive(Clone, Copy)]
struct Workload {
    ops: usize,
    keys: u64,
    max_pause_ms: u64,
}

/// The coordinator of each node while it runs (a crash takes it away, a boot puts it back).
type Coordinators = Arc<Mutex<Vec<Option<Arc<Coordinator>>>>>;

/// Runs `ops` operations from a client bound to node `node`, recording each; while the node
/// is down the client waits.
async fn client(
    coordinators: Coordinators,
    node: usize,
    workload: Workload,
    start: Instant,
    history: Arc<Mutex<Vec<Recorded>>>,
) {
    let mut rng = SimRng::new(start.elapsed().as_nanos() as u64 + node as u64 * 7919);
    for _ in 0..workload.ops {
        let Some(coordinator) = coordinators.lock()[node].clone() else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let key = rng.below(workload.keys);
        let input = match rng.below(3) {
            0 => RegisterInput::Read,
            1 => RegisterInput::Write(rng.below(5) as i64 + 1),
            _ => RegisterInput::Cas {
                expect: rng.below(6) as i64,
                new: rng.below(5) as i64 + 1,
            },
        };
        let call = start.elapsed().as_micros() as u64;
        let output = match input {
            RegisterInput::Read => serial_read(&coordinator, key)
                .await
                .map(RegisterOutput::Value),
            RegisterInput::Write(v) => cas(&coordinator, key, None, v)
                .await
                .map(|_| RegisterOutput::Done),
            RegisterInput::Cas { expect, new } => cas(&coordinator, key, Some(expect), new)
                .await
                .map(|outcome| match outcome {
                    CasOutcome::Applied => RegisterOutput::Done,
                    CasOutcome::NotApplied(current) => {
                        RegisterOutput::NotApplied(value(current.as_ref()))
                    }
                }),
        };
        let (output, ret) = match output {
            Ok(output) => (output, Some(start.elapsed().as_micros() as u64)),
            // A failed operation may or may not have taken effect: it returns at infinity.
            Err(_) => (RegisterOutput::Unknown, None),
        };
        history.lock().push(Operation {
            input: (key, input),
            output,
            call,
            ret,
        });
        let pause = rng.below(workload.max_pause_ms + 1);
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
}

#[test]
fn concurrent_registers_stay_linearizable_under_crashes_and_partitions() {
    for seed in seeds() {
        simulate(seed, async move {
            let mut cluster = Cluster::start(3, seed).await;
            let start = Instant::now();
            let history = Arc::new(Mutex::new(Vec::new()));
            let coordinators: Coordinators = Arc::new(Mutex::new(
                (0..3)
                    .map(|i| Some(cluster.node(i).coordinator.clone()))
                    .collect(),
            ));
            let workload = Workload {
                ops: 40,
                keys: 3,
                max_pause_ms: 20,
            };
            let clients = spawn_clients(&coordinators, workload, start, &history);
            let mut rng = SimRng::new(seed);
            for _ in 0..3 {
                tokio::time::sleep(Duration::from_millis(200 + rng.below(300))).await;
                let victim = rng.below(3) as usize;
                if rng.below(2) == 0 {
                    cluster.isolate(victim);
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    cluster.heal().await;
                } else {
                    coordinators.lock()[victim] = None;
                    cluster.crash(victim).await;
                    cluster.detect_everywhere(victim, false);
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    cluster.boot(victim).await;
                    cluster.detect_everywhere(victim, true);
                    coordinators.lock()[victim] = Some(cluster.node(victim).coordinator.clone());
                }
            }
            for client in clients {
                let _ = client.await;
            }
            let history = history.lock().clone();
            let completed = history.iter().filter(|op| op.ret.is_some()).count();
            assert!(
                completed > 40,
                "seed {seed}: only {completed} operations completed"
            );
            assert!(
                check_registers(&history),
                "seed {seed}: the history is not linearizable: {history:#?}"
            );
        });
    }
}

/// Three clients, one per node.
fn spawn_clients(
    coordinators: &Coordinators,
    workload: Workload,
    start: Instant,
    history: &Arc<Mutex<Vec<Recorded>>>,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..3)
        .map(|i| {
            let (coordinators, history) = (coordinators.clone(), history.clone());
            tokio::spawn(client(coordinators, i, workload, start, history))
        })
        .collect()
}

#[test]
fn one_contended_register_stays_linearizable_and_counts_its_contention() {
    for seed in seeds() {
        simulate(seed, async move {
            let cluster = Cluster::start(3, seed).await;
            let start = Instant::now();
            let history = Arc::new(Mutex::new(Vec::new()));
            let coordinators: Coordinators = Arc::new(Mutex::new(
                (0..3)
                    .map(|i| Some(cluster.node(i).coordinator.clone()))
                    .collect(),
            ));
            let workload = Workload {
                ops: 60,
                keys: 1,
                max_pause_ms: 1,
            };
            for client in spawn_clients(&coordinators, workload, start, &history) {
                client.await.unwrap();
            }
            let history = history.lock().clone();
            assert!(
                check_registers(&history),
                "seed {seed}: the history is not linearizable: {history:#?}"
            );
            let contention: u64 = (0..3)
                .flat_map(|i| cluster.node(i).coordinator.paxos_counters())
                .filter(|(event, _)| *event == "contention")
                .map(|(_, n)| n)
                .sum();
            assert!(
                contention > 0,
                "seed {seed}: three clients on one key never contended"
            );
        });
    }
}
