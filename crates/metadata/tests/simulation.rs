//! Randomized faults on turmoil's network, over the production messaging, in simulated time:
//! nodes crash and return, partitions come and go, messages are delayed and lost, while changes are committed from
//! every node. Afterwards every node holds the same state, and it contains every change that
//! was acknowledged, at the epoch it was acknowledged with.
//!
//! The default suite runs two fixed seeds; `HELENUS_SIM_SEEDS=N` runs seeds 1..=N (and
//! `HELENUS_SIM_STEPS` sets the steps per seed, default 60).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use metadata::MetadataError;
use net::SimRng;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

#[test]
fn randomized_faults_keep_one_history() {
    let seeds = env_number("HELENUS_SIM_SEEDS", 2);
    let steps = env_number("HELENUS_SIM_STEPS", 60);
    for seed in 1..=seeds {
        simulate(seed, run(seed, steps));
    }
}

async fn run(seed: u64, steps: u64) {
    let mut rng = SimRng::new(seed);
    let n = if rng.below(2) == 0 { 3 } else { 5 };
    let mut cluster = Cluster::new(n);
    cluster.snapshot_every = 8;
    let order: Vec<usize> = (0..n).collect();
    cluster.form(&order).await;
    cluster.set_max_latency(Duration::from_millis(4)).await;
    // Of TCP segments: each loss stalls a connection until messaging redials it.
    cluster.set_loss(0.002).await;

    let mut acknowledged: BTreeMap<String, u64> = BTreeMap::new();
    let mut down: Vec<usize> = Vec::new();
    for step in 0..steps {
        match rng.below(10) {
            0..=4 => {
                let running = cluster.running();
                let a = running[rng.below(running.len() as u64) as usize];
                let b = running[rng.below(running.len() as u64) as usize];
                // Two nodes race to create the same keyspace: at most one may win.
                let name = format!("ks_{seed}_{step}");
                let (first, second) = tokio::join!(
                    cluster.node(a).commit(create(&name)),
                    cluster.node(b).commit(create(&name))
                );
                let wins: Vec<u64> = [first, second]
                    .into_iter()
                    .filter_map(|result| match result {
                        Ok(epoch) => Some(epoch),
                        Err(MetadataError::Conflict { .. } | MetadataError::NoQuorum(_)) => None,
                        Err(MetadataError::Timeout) => None,
                        Err(e) => panic!("seed {seed}: unexpected error {e}"),
                    })
                    .collect();
                assert!(
                    wins.len() <= 1,
                    "seed {seed}: two creates of {name} won: {wins:?}"
                );
                if let Some(epoch) = wins.first() {
                    acknowledged.insert(name, *epoch);
                }
            }
            5 if down.len() < (n - 1) / 2 => {
                let running = cluster.running();
                let victim = running[rng.below(running.len() as u64) as usize];
                cluster.crash(victim).await;
                down.push(victim);
            }
            6 if !down.is_empty() => {
                let back = down.remove(rng.below(down.len() as u64) as usize);
                cluster.start(back).await;
            }
            7 => {
                let side = (n - 1) / 2;
                let cut: Vec<usize> = (0..side).map(|_| rng.below(n as u64) as usize).collect();
                cluster.partition(&cut);
            }
            8 => cluster.heal(),
            _ => tokio::time::sleep(Duration::from_millis(rng.below(2000))).await,
        }
    }

    cluster.heal();
    cluster.set_loss(0.0).await;
    for back in down {
        cluster.start(back).await;
    }
    let state = cluster.converged(0).await;
    let epochs: Vec<u64> = acknowledged.values().copied().collect();
    let mut unique = epochs.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        unique.len(),
        epochs.len(),
        "seed {seed}: an epoch acknowledged twice"
    );
    for (name, epoch) in &acknowledged {
        let entry = state
            .schema
            .get(name)
            .unwrap_or_else(|| panic!("seed {seed}: acknowledged {name} is missing"));
        assert_eq!(entry.version, *epoch, "seed {seed}: {name}");
    }
    eprintln!(
        "seed {seed}: {n} nodes, {} changes acknowledged, final epoch {}",
        acknowledged.len(),
        state.epoch
    );
    for i in cluster.running() {
        cluster.node(i).shutdown().await;
    }
}
