//! What the scenarios of streaming, repair and LWT share: one seeded simulation around a test
//! body, a load of QUORUM writes and reads checked as the main workload's, the final QUORUM
//! reads through every node, a node read alone, and message loss on links.
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use net::{with_sim, SimRng};
use types::Consistency;

use crate::cluster::{addr, Cluster};
use crate::history::History;
use crate::workload::{final_reads, on, read, simulation, write, KEYS};

/// Attempts of a read through a node cut off from the others (its coordinator may first ask
/// a replica it still thinks up, and time out).
const ALONE_ATTEMPTS: u32 = 20;

/// Runs `body` as the client of `seed`'s simulation; what it returns, or why it failed.
pub fn simulate(
    seed: u64,
    body: impl Future<Output = Result<String, String>> + 'static,
) -> Result<String, String> {
    let outcome: Rc<RefCell<Option<Result<String, String>>>> = Rc::default();
    let out = outcome.clone();
    net::drive_client(simulation(seed), "clients", async move {
        let result = body.await;
        *out.borrow_mut() = Some(result);
    });
    let result = outcome.borrow_mut().take();
    result.unwrap_or_else(|| Err(format!("seed {seed}: the run did not finish")))
}

/// The seeds of a scenario's test: `HELENUS_SIM_SEED` or the suite's.
pub fn seeds(suite: &[u64]) -> Vec<u64> {
    match crate::env_number("HELENUS_SIM_SEED") {
        Some(seed) => vec![seed],
        None => suite.to_vec(),
    }
}

/// What one seed of a scenario runs: a summary, or why a check failed.
pub type ScenarioRun = fn(u64) -> Result<String, String>;

/// The scenario `HELENUS_SIM_SCENARIO` names (`streaming`, `repair`, `lwt`) for the random
/// seeds: its test's name and its run; `None` when unset (the main workload).
pub fn chosen() -> Option<(&'static str, ScenarioRun)> {
    let name = std::env::var("HELENUS_SIM_SCENARIO").ok()?;
    let chosen: (&str, ScenarioRun) = match name.as_str() {
        "streaming" => ("streaming_under_message_loss", crate::streaming::run),
        "repair" => ("repair_under_faults", crate::repair::run),
        "lwt" => ("lwt_linearizable_under_faults", crate::lwt::run),
        other => panic!("HELENUS_SIM_SCENARIO={other}: streaming, repair or lwt"),
    };
    Some(chosen)
}

/// Runs each seed of `seeds` with `run`, failing the test with the first failure.
pub fn run_seeds(name: &str, seeds: &[u64], run: ScenarioRun) {
    for &seed in seeds {
        let started = std::time::Instant::now();
        match run(seed) {
            Ok(summary) => eprintln!(
                "{name} seed {seed}: {:.1} s: {summary}",
                started.elapsed().as_secs_f64()
            ),
            Err(failure) => panic!(
                "{name} seed {seed}: {failure}\nreplay: HELENUS_SIM_SEED={seed} \
                 cargo test -p helenus --test cluster_sim {name}"
            ),
        }
    }
}

/// One row per write, at QUORUM, on the partitions of `sim.cells`; QUORUM reads checked as
/// the main workload checks them ([`History`]).
pub struct Load {
    pub history: History,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    pub fn new() -> Load {
        Load {
            history: History::default(),
            tasks: Vec::new(),
        }
    }

    /// Sends a write of a new row to partition `key` at `cl` through node `node`; its id.
    pub fn write(&mut self, cluster: &Cluster, node: usize, key: u32, cl: Consistency) -> u32 {
        let id = self.history.issue(key, cl, node, true);
        let history = self.history.clone();
        let task = cluster.spawn_on(node, move |processor| async move {
            let written = write(&processor, key, id, cl).await;
            history.finish(id, written.map(|()| Vec::new()));
        });
        self.tasks.extend(task);
        id
    }

    /// Sends a QUORUM read of partition `key` through node `node`.
    pub fn read(&mut self, cluster: &Cluster, node: usize, key: u32) {
        let id = self.history.issue(key, Consistency::Quorum, node, false);
        let history = self.history.clone();
        let task = cluster.spawn_on(node, move |processor| async move {
            let rows = read(&processor, key, Consistency::Quorum).await;
            history.finish(id, rows);
        });
        self.tasks.extend(task);
    }

    /// A write (two in three) or a read of a random partition through a random node of `among`.
    pub fn step(&mut self, rng: &mut SimRng, cluster: &Cluster, among: &[usize]) {
        if among.is_empty() {
            return;
        }
        let node = among[rng.below(among.len() as u64) as usize];
        let key = rng.below(KEYS) as u32;
        match rng.below(3) {
            0 => self.read(cluster, node, key),
            _ => {
                self.write(cluster, node, key, Consistency::Quorum);
            }
        }
    }

    /// Waits for every request sent.
    pub async fn finish(&mut self) {
        for task in std::mem::take(&mut self.tasks) {
            let _ = task.await;
        }
    }

    /// The per-read check, then a QUORUM read of every partition through every member.
    pub async fn check(&self, cluster: &Cluster) -> Result<(), String> {
        self.history.check_reads()?;
        final_reads(cluster, &self.history, String::new).await
    }
}

/// The rows of partition `key` as node `node` alone holds them: the node is cut off from
/// every other member, and a ONE read through it (which can only be answered by itself) is
/// tried until it answers; the links are repaired after.
pub async fn read_alone(cluster: &Cluster, node: usize, key: u32) -> Result<Vec<u32>, String> {
    let others: Vec<usize> = cluster
        .members()
        .into_iter()
        .filter(|o| *o != node)
        .collect();
    for other in &others {
        turmoil::partition(addr(node), addr(*other));
    }
    let mut last = String::new();
    let mut rows = None;
    for _ in 0..ALONE_ATTEMPTS {
        let answer = on(cluster, node, move |qp| async move {
            read(&qp, key, Consistency::One).await
        });
        match answer.await {
            Ok(found) => {
                rows = Some(found);
                break;
            }
            Err(e) => last = e,
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for other in &others {
        turmoil::repair(addr(node), addr(*other));
    }
    rows.ok_or_else(|| format!("node {node} alone never answered a read of k{key}: {last}"))
}

/// Whether node `node` is a replica of partition `key` of `sim.cells`, as it sees the ring.
pub fn replicates(cluster: &Cluster, node: usize, key: u32) -> bool {
    let Some(serving) = cluster.node(node) else {
        return false;
    };
    let replicas = serving
        .processor
        .endpoints("sim", "cells", &key.to_string())
        .unwrap_or_default();
    replicas.contains(&addr(node))
}

/// Loses messages on the link between `a` and `b` (both ways): each millisecond the link
/// breaks with probability `rate` (what is in flight is lost; turmoil's TCP never resends,
/// so the connection stalls until messaging finds it dead and dials again).
pub async fn set_loss(a: usize, b: usize, rate: f64) {
    with_sim(move |sim| sim.set_link_fail_rate(addr(a), addr(b), rate)).await;
}
