//! Random fault schedules on a 5-node cluster on turmoil's network: crashes and restarts, isolated
//! (paused) nodes, partitions, lossy links, clean shutdowns and disabled gossip, each for a random
//! time. After every fault the cluster must converge again; during a long one the cut-off nodes
//! must be seen down within the bound; and every node's Alive/Dead events about every peer must
//! alternate (one event per transition).
//!
//! The default suite runs one fixed seed; `HELENUS_SIM_SEEDS=N` runs seeds 0..N and
//! `HELENUS_SIM_SEEDS=3,17` the seeds listed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use gossip::Membership;
use gossip::MembershipEvent::{Alive, Dead};
use net::SimRng;
use support::*;

const NODES: u8 = 5;
const FAULTS: usize = 8;
const DETECTION_BOUND: Duration = Duration::from_secs(10);
/// Time to converge after a fault ends (a restarted node needs a few rounds, a healed partition
/// a few more to find a peer to gossip with).
const CONVERGENCE_BOUND: Duration = Duration::from_secs(15);

#[test]
fn random_fault_schedules() {
    for seed in seeds() {
        run_schedule(seed);
    }
}

fn seeds() -> Vec<u64> {
    let Ok(text) = std::env::var("HELENUS_SIM_SEEDS") else {
        return vec![20_240_611];
    };
    if text.contains(',') {
        return text
            .split(',')
            .map(|seed| seed.trim().parse().unwrap())
            .collect();
    }
    (0..text.trim().parse::<u64>().unwrap()).collect()
}

#[derive(Debug)]
enum Fault {
    Crash(u8),
    Isolate(u8),
    Partition(Vec<u8>),
    Loss(f64),
    Shutdown(u8),
    DisableGossip(u8),
}

fn run_schedule(seed: u64) {
    let mut rng = SimRng::new(seed);
    let mut cluster = Cluster::start(NODES, seed);
    cluster.converged(CONVERGENCE_BOUND);
    for step in 0..FAULTS {
        let fault = draw_fault(&mut rng);
        let long = rng.chance(0.6);
        let length = if long {
            Duration::from_secs(12 + rng.below(30))
        } else {
            Duration::from_millis(500 + rng.below(3_000))
        };
        eprintln!("seed {seed} step {step}: {fault:?} for {length:?}");
        let cut_off = begin(&mut cluster, &fault);
        if long {
            expect_down(&mut cluster, &cut_off);
        }
        cluster.run_for(length);
        end(&mut cluster, &fault);
        cluster.converged(CONVERGENCE_BOUND);
        cluster.run_for(Duration::from_secs(rng.below(20)));
    }
    check_alternation(&cluster);
}

fn draw_fault(rng: &mut SimRng) -> Fault {
    let node = 1 + rng.below(NODES as u64) as u8;
    match rng.below(6) {
        0 => Fault::Crash(node),
        1 => Fault::Isolate(node),
        2 => {
            let side: BTreeSet<u8> = (0..2).map(|_| 1 + rng.below(NODES as u64) as u8).collect();
            Fault::Partition(side.into_iter().collect())
        }
        // Of TCP segments: each loss stalls a connection until it is redialled.
        3 => Fault::Loss(0.005 + 0.045 * (rng.below(100) as f64 / 100.0)),
        4 => Fault::Shutdown(node),
        _ => Fault::DisableGossip(node),
    }
}

/// Starts a fault; returns the pairs (observer, peer) that must see the peer down if it lasts.
fn begin(cluster: &mut Cluster, fault: &Fault) -> Vec<(u8, u8)> {
    let everyone: Vec<u8> = (1..=NODES).collect();
    match fault {
        Fault::Crash(node) => {
            cluster.crash(*node);
            observers_of(*node, &everyone)
        }
        Fault::Isolate(node) => {
            cluster.isolate(*node);
            observers_of(*node, &everyone)
        }
        Fault::Partition(side) => {
            let other: Vec<u8> = everyone
                .iter()
                .copied()
                .filter(|n| !side.contains(n))
                .collect();
            cluster.partition(side, &other);
            let mut pairs = Vec::new();
            for a in side {
                for b in &other {
                    pairs.extend([(*a, *b), (*b, *a)]);
                }
            }
            pairs
        }
        Fault::Loss(rate) => {
            cluster.set_loss(*rate);
            Vec::new()
        }
        Fault::Shutdown(node) => {
            cluster.shutdown(*node);
            observers_of(*node, &everyone)
        }
        Fault::DisableGossip(node) => {
            cluster.node(*node).stop();
            observers_of(*node, &everyone)
        }
    }
}

fn observers_of(node: u8, everyone: &[u8]) -> Vec<(u8, u8)> {
    everyone
        .iter()
        .filter(|n| **n != node)
        .map(|n| (*n, node))
        .collect()
}

fn expect_down(cluster: &mut Cluster, pairs: &[(u8, u8)]) {
    let present: Vec<(u8, u8)> = pairs
        .iter()
        .copied()
        .filter(|(observer, _)| cluster.nodes.contains_key(observer))
        .collect();
    cluster.wait_until(
        DETECTION_BOUND,
        &format!("{present:?} to be seen down"),
        |cluster| {
            present
                .iter()
                .all(|(observer, peer)| !cluster.sees_alive(*observer, *peer))
        },
    );
}

fn end(cluster: &mut Cluster, fault: &Fault) {
    match fault {
        Fault::Crash(node) | Fault::Shutdown(node) => cluster.join(config(*node)),
        Fault::Isolate(_) | Fault::Partition(_) => cluster.heal(),
        Fault::Loss(_) => cluster.set_loss(0.0),
        Fault::DisableGossip(node) => cluster.node(*node).start(),
    }
}

/// Every observer's Alive/Dead events about a peer alternate, starting with Alive.
fn check_alternation(cluster: &Cluster) {
    for (observer, events) in &cluster.events {
        for peer in cluster.others(*observer) {
            let liveness = events.liveness_of(addr(peer));
            for (index, event) in liveness.iter().enumerate() {
                let expected = if index % 2 == 0 {
                    Alive(addr(peer))
                } else {
                    Dead(addr(peer))
                };
                assert_eq!(
                    *event, expected,
                    "node {observer} about {peer}: {liveness:?}"
                );
            }
        }
    }
}
