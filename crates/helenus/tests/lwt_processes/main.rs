//! Linearizability of lightweight transactions over real `helenus` processes under faults.
//!
//! A 3-node `helenus cluster` (RF 3) on 127.0.5.1-3; two clients bound to each coordinator
//! run SERIAL reads, `INSERT … IF NOT EXISTS`, `UPDATE … IF v = ?` and `DELETE … IF EXISTS` on
//! a few rows while one node at a time is killed with SIGKILL and restarted, paused with
//! SIGSTOP and resumed, or cut off from the others by nftables (when this machine allows it:
//! root and `nft`). A statement that timed out or lost its connection may or may not have
//! applied: it is recorded as returning at infinity. The history is checked with
//! `paxos::linearizability::check_rows` (Wing–Gong–Lowe).
//!
//! With `HELENUS_LWT_TOPOLOGY=1` the ring changes too: a fourth node joins by bootstrap a fifth
//! into the run, two clients bound to it run until it is decommissioned at three fifths, and
//! the faults go on meanwhile on the three first nodes (never on the one joining or leaving).
//!
//! `HELENUS_LWT_SEED` picks the faults and statements (default 31); `HELENUS_LWT_MINUTES`
//! runs longer than the suite's 25 seconds (3 minutes by default with the topology changes).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod client;
mod cluster;
mod rng;

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use paxos::linearizability::{check_rows, RowOutput};
use tokio::task::JoinHandle;

use client::{Recorder, Statements, Workload};
use cluster::{Fault, ProcessCluster};
use rng::Rng;

const NODES: u8 = 3;
const CLIENTS_PER_NODE: u8 = 2;
const KEYS: i32 = 4;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a decommission may take on a loaded machine (it streams a few rows).
const DECOMMISSION_TIMEOUT: Duration = Duration::from_secs(300);

fn env_number(name: &str) -> Option<f64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_statements_stay_linearizable_under_kills_pauses_and_partitions() {
    let seed = env_number("HELENUS_LWT_SEED").map_or(31, |s| s as u64);
    let topology = env_number("HELENUS_LWT_TOPOLOGY").is_some_and(|t| t != 0.0);
    let default_run = if topology { 180 } else { 25 };
    let run_for = env_number("HELENUS_LWT_MINUTES").map_or(Duration::from_secs(default_run), |m| {
        Duration::from_secs_f64(m * 60.0)
    });
    let cluster = Arc::new(ProcessCluster::start(NODES, Ipv4Addr::new(127, 0, 5, 1)));
    let first = client::connect(cluster.native(1), REQUEST_TIMEOUT).await;
    first.query_unpaged(client::KEYSPACE_CQL, ()).await.unwrap();
    first.query_unpaged(client::TABLE_CQL, ()).await.unwrap();
    let recorder = Arc::new(Recorder::new());
    let start = Instant::now();
    let until = start + run_for;
    let mut clients = Vec::new();
    for node in 1..=NODES {
        clients.extend(spawn_clients(&cluster, node, seed, until, &recorder).await);
    }
    let changes = topology.then(|| {
        tokio::spawn(change_topology(
            cluster.clone(),
            seed,
            (start + run_for / 5, start + run_for * 3 / 5),
            recorder.clone(),
        ))
    });
    let faulty = cluster.clone();
    let faults = tokio::task::spawn_blocking(move || inject_faults(&faulty, seed, until));
    for client in clients {
        client.await.unwrap();
    }
    let faults = faults.await.unwrap();
    let changes = match changes {
        Some(task) => task.await.unwrap(),
        None => Vec::new(),
    };
    let history = recorder.history();
    let count = |f: &dyn Fn(&RowOutput) -> bool| history.iter().filter(|o| f(&o.output)).count();
    let applied = count(&|o| *o == RowOutput::Applied);
    let unknown = count(&|o| *o == RowOutput::Unknown);
    let started = Instant::now();
    let linearizable = check_rows(&history);
    eprintln!(
        "seed {seed}: {} operations ({applied} applied, {unknown} unknown) in {:?}, \
         faults {faults:?}, topology {changes:?}, checked in {:?}",
        history.len(),
        run_for,
        started.elapsed()
    );
    assert!(linearizable, "not linearizable (seed {seed}): {history:#?}");
    assert!(applied >= 20, "too few statements applied: {applied}");
    assert!(!faults.is_empty(), "no fault was injected");
}

/// Starts the clients bound to `node`, each running until `until`.
async fn spawn_clients(
    cluster: &ProcessCluster,
    node: u8,
    seed: u64,
    until: Instant,
    recorder: &Arc<Recorder>,
) -> Vec<JoinHandle<()>> {
    let mut clients = Vec::new();
    for c in 0..CLIENTS_PER_NODE {
        let session = client::connect(cluster.native(node), REQUEST_TIMEOUT).await;
        session.await_schema_agreement().await.unwrap();
        let statements = Statements::prepare(&session).await;
        let workload = Workload {
            id: i32::from(node * CLIENTS_PER_NODE + c),
            keys: KEYS,
            until,
            seed,
        };
        clients.push(tokio::spawn(client::run(
            session,
            statements,
            workload,
            recorder.clone(),
        )));
    }
    clients
}

/// At `join`, adds a node by bootstrap and runs clients on it; at `leave` (or once it has
/// joined, if later), stops them and decommissions it. Returns what was done: the step, the
/// node, the seconds it took and its attempts.
async fn change_topology(
    cluster: Arc<ProcessCluster>,
    seed: u64,
    (join, leave): (Instant, Instant),
    recorder: Arc<Recorder>,
) -> Vec<(&'static str, u8, u64, u32)> {
    tokio::time::sleep_until(join.into()).await;
    let started = Instant::now();
    let adding = cluster.clone();
    let node = tokio::task::spawn_blocking(move || adding.add())
        .await
        .unwrap();
    let mut done = vec![("joined", node, started.elapsed().as_secs(), 1)];
    let clients = spawn_clients(&cluster, node, seed, leave, &recorder).await;
    for client in clients {
        client.await.unwrap();
    }
    let started = Instant::now();
    let leaving = cluster.clone();
    let attempts =
        tokio::task::spawn_blocking(move || leaving.decommission(node, DECOMMISSION_TIMEOUT))
            .await
            .unwrap();
    done.push(("left", node, started.elapsed().as_secs(), attempts));
    done
}

/// Until `until`: a quiet spell, then one fault on one node, held a few seconds and repaired.
/// Returns the faults, in order.
fn inject_faults(cluster: &ProcessCluster, seed: u64, until: Instant) -> Vec<(Fault, u8)> {
    let mut rng = Rng::new(seed);
    let mut kinds = vec![Fault::Kill, Fault::Pause];
    if cluster::partitions_usable() {
        kinds.push(Fault::Isolate);
    }
    let mut done = Vec::new();
    loop {
        std::thread::sleep(Duration::from_millis(1_500 + rng.below(2_000)));
        if Instant::now() + Duration::from_secs(8) > until {
            return done;
        }
        let fault = kinds[rng.below(kinds.len() as u64) as usize];
        // Only the first nodes: the one joining or leaving is never faulted.
        let node = 1 + rng.below(u64::from(NODES)) as u8;
        cluster.inject(fault, node);
        std::thread::sleep(Duration::from_millis(2_000 + rng.below(3_000)));
        cluster.repair(fault, node);
        done.push((fault, node));
    }
}
