//! Gossip clusters on turmoil's simulated network, over the production messaging: timing is
//! simulated, and the network's latencies and losses come from a fixed seed (chitchat picks its
//! gossip partners with its own unseeded generator, so the bounds below are asserted, not exact
//! traces).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod support;

use std::time::Duration;

use gossip::MembershipEvent::{Alive, Changed, Dead};
use gossip::{keys, Membership};
use support::*;

const SECOND: Duration = Duration::from_secs(1);
/// The bound of the brief: a stopped node is marked down everywhere within ~10 s by default.
const DETECTION_BOUND: Duration = Duration::from_secs(10);
/// "Marked up again within a few seconds of returning."
const RETURN_BOUND: Duration = Duration::from_secs(3);
/// The chance that a TCP segment is lost on lossy links.
const LOSS: f64 = 0.01;

#[test]
fn three_nodes_converge_on_each_others_state() {
    let mut cluster = Cluster::start(3, 1);
    cluster.converged(3 * SECOND);
    for observer in 1..=3u8 {
        let endpoints = cluster.node(observer).endpoints();
        assert_eq!(endpoints.len(), 3, "{endpoints:?}");
        for peer in 1..=3u8 {
            let seen = cluster.endpoint(observer, peer);
            assert!(seen.alive);
            assert_eq!(seen.get(keys::RACK), Some(format!("rack{peer}").as_str()));
            assert_eq!(seen.get(keys::DC), Some("dc1"));
            assert_eq!(seen.status(), Some(keys::Status::Normal));
            assert_eq!(seen.host_id, Some(gossip::HostId::from_u128(peer as u128)));
            assert_eq!(
                seen.get(keys::HOST_ID),
                Some(seen.host_id.unwrap().to_string().as_str())
            );
        }
    }
    cluster
        .node(2)
        .set_local(keys::SCHEMA_VERSION, "e84b6a60".to_string());
    let took = cluster.wait_until(2 * SECOND, "the schema version to spread", |cluster| {
        [1u8, 3].iter().all(|observer| {
            let two = cluster.endpoint(*observer, 2);
            two.get(keys::SCHEMA_VERSION) == Some("e84b6a60")
        })
    });
    assert!(took <= SECOND, "{took:?}");
    cluster.run_for(SECOND);
    for observer in [1u8, 3] {
        assert_eq!(
            cluster.events[&observer].count(Changed(addr(2))),
            2,
            "first sight + change"
        );
    }
}

#[test]
fn a_crashed_node_is_marked_down_within_the_bound_and_up_after_restart() {
    let mut cluster = Cluster::start(3, 2);
    cluster.converged(3 * SECOND);
    cluster.run_for(60 * SECOND);
    cluster.crash(3);
    let down = cluster.seen(&[1, 2], 3, false, DETECTION_BOUND);
    let mut restarted = config(3);
    restarted
        .initial_state
        .insert(keys::RELEASE_VERSION.into(), "5.0.5".into());
    cluster.join(restarted);
    let up = cluster.seen(&[1, 2], 3, true, RETURN_BOUND);
    eprintln!("crashed node down after {down:?}, restarted node up after {up:?}");
    for observer in [1u8, 2] {
        let endpoints = cluster.node(observer).endpoints();
        let three: Vec<_> = endpoints.iter().filter(|e| e.addr == addr(3)).collect();
        assert_eq!(
            three.len(),
            1,
            "the restart replaces the old state: {endpoints:?}"
        );
        assert_eq!(three[0].get(keys::RELEASE_VERSION), Some("5.0.5"));
    }
    cluster.expect_liveness(&[1, 2], 3, &[Alive(addr(3)), Dead(addr(3)), Alive(addr(3))]);
}

#[test]
fn a_node_restarted_before_conviction_is_reported_down_then_up_once() {
    let mut cluster = Cluster::start(3, 3);
    cluster.converged(3 * SECOND);
    cluster.crash(3);
    cluster.join(config(3));
    cluster.seen(&[1, 2], 3, true, RETURN_BOUND);
    cluster.run_for(30 * SECOND);
    cluster.expect_liveness(&[1, 2], 3, &[Alive(addr(3)), Dead(addr(3)), Alive(addr(3))]);
}

#[test]
fn a_partitioned_node_is_marked_down_on_the_other_side_and_heals() {
    let mut cluster = Cluster::start(3, 4);
    cluster.converged(3 * SECOND);
    cluster.run_for(30 * SECOND);
    cluster.partition(&[1, 2], &[3]);
    cluster.seen(&[1, 2], 3, false, DETECTION_BOUND);
    cluster.seen(&[3], 1, false, DETECTION_BOUND);
    cluster.seen(&[3], 2, false, DETECTION_BOUND);
    assert!(
        cluster.sees_alive(1, 2) && cluster.sees_alive(2, 1),
        "the majority side stays up"
    );
    cluster.heal();
    let healed = cluster.converged(RETURN_BOUND);
    eprintln!("partition healed in {healed:?}");
}

#[test]
fn a_paused_node_is_marked_down_and_up_again_once() {
    let mut cluster = Cluster::start(3, 5);
    cluster.converged(3 * SECOND);
    cluster.run_for(60 * SECOND);
    // No message in or out for 30 s, as a SIGSTOP'd process.
    cluster.isolate(3);
    let down = cluster.seen(&[1, 2], 3, false, DETECTION_BOUND);
    cluster.run_for(30 * SECOND - down);
    cluster.heal();
    let up = cluster.seen(&[1, 2], 3, true, RETURN_BOUND);
    eprintln!("paused node down after {down:?}, up {up:?} after it returned");
    cluster.run_for(60 * SECOND);
    cluster.expect_liveness(&[1, 2], 3, &[Alive(addr(3)), Dead(addr(3)), Alive(addr(3))]);
}

#[test]
fn lossy_jittery_links_cause_no_flapping_and_a_crash_one_event() {
    let mut cluster = Cluster::start(3, 6);
    cluster.converged(3 * SECOND);
    // A lost segment stalls its TCP connection until messaging notices (about 1 s here) and
    // redials: each link of each node is down for a second now and then.
    cluster.set_loss(LOSS);
    cluster.set_max_delay(Duration::from_millis(80));
    cluster.run_for(600 * SECOND);
    let reconnects: u64 = (1..=3).map(|node| cluster.reconnects(node)).sum();
    assert!(reconnects > 100, "{reconnects} reconnects");
    cluster.expect_no_node_down();
    cluster.crash(3);
    cluster.seen(&[1, 2], 3, false, DETECTION_BOUND);
    cluster.run_for(120 * SECOND);
    cluster.expect_liveness(&[1, 2], 3, &[Alive(addr(3)), Dead(addr(3))]);
}

#[test]
fn a_clean_shutdown_is_seen_at_once() {
    let mut cluster = Cluster::start(3, 7);
    cluster.converged(3 * SECOND);
    let started = cluster.sim.elapsed();
    let three = cluster.shutdown(3);
    assert!(!three.is_running());
    let down = (cluster.sim.elapsed() - started).max(cluster.seen(&[1, 2], 3, false, 2 * SECOND));
    eprintln!("shutdown seen after {down:?}");
    assert!(down <= 2 * SECOND, "{down:?}");
    for observer in [1u8, 2] {
        let seen = cluster.endpoint(observer, 3);
        assert_eq!(seen.status(), Some(keys::Status::Shutdown));
    }
    three.start();
    assert!(
        !three.is_running(),
        "a node shut down does not gossip again"
    );
}

#[test]
fn disable_and_enable_gossip() {
    let mut cluster = Cluster::start(3, 8);
    cluster.converged(3 * SECOND);
    let three = cluster.node(3).clone();
    three.stop();
    assert!(!three.is_running());
    cluster.seen(&[1, 2], 3, false, 2 * SECOND);
    cluster.run_for(20 * SECOND);
    assert!(
        three.is_alive(addr(1).ip()),
        "a stopped node's view is frozen"
    );
    assert_eq!(three.endpoints()[0].status(), Some(keys::Status::Normal));
    three.set_local(keys::LOAD, "1024".to_string());
    three.start();
    assert!(three.is_running());
    let up = cluster.seen(&[1, 2], 3, true, RETURN_BOUND);
    eprintln!("gossip enabled again: seen up after {up:?}");
    for observer in [1u8, 2] {
        let seen = cluster.endpoint(observer, 3);
        assert_eq!(seen.get(keys::LOAD), Some("1024"), "set while stopped");
        assert_eq!(seen.status(), Some(keys::Status::Normal));
    }
    cluster.run_for(30 * SECOND);
    let own = cluster.events[&3].all();
    assert!(!own.iter().any(|e| matches!(e, Dead(_))), "{own:?}");
    cluster.expect_liveness(&[1, 2], 3, &[Alive(addr(3)), Dead(addr(3)), Alive(addr(3))]);
}

#[test]
fn a_stall_of_this_node_does_not_mark_its_peers_down() {
    let mut cluster = Cluster::start(3, 9);
    cluster.converged(3 * SECOND);
    cluster.run_for(60 * SECOND);
    // Every node stalls for 30 s at once (a frozen VM): each detector then sees 30 s without
    // heartbeats, which is this node's fault, not its peers'.
    cluster.run_on_each(&[1, 2, 3], |_| tokio::time::advance(30 * SECOND));
    cluster.run_for(60 * SECOND);
    cluster.expect_no_node_down();
    cluster.converged(Duration::ZERO);
}

#[test]
fn a_node_of_another_cluster_is_refused_with_a_clear_log_line() {
    let log = CapturedLog::default();
    let _guard = tracing::subscriber::set_default(log.subscriber());
    let mut cluster = Cluster::start(2, 10);
    let mut stranger = config(4);
    stranger.cluster_name = "Other Cluster".to_string();
    cluster.join(stranger);
    cluster.run_for(10 * SECOND);
    for node in [1u8, 2] {
        let endpoints = cluster.node(node).endpoints();
        assert!(endpoints.iter().all(|e| e.addr != addr(4)), "{endpoints:?}");
    }
    assert_eq!(cluster.node(4).endpoints().len(), 1);
    assert!(cluster.node(1).stats().foreign_cluster > 0);
    assert!(cluster.node(4).stats().foreign_cluster > 0);
    let text = log.text();
    let refusal = "refusing gossip from 192.168.9.4:7000: it belongs to cluster 'Other Cluster', \
                   this node to cluster 'Test Cluster'";
    assert_eq!(
        text.matches(refusal).count(),
        1,
        "logged once a minute: {text}"
    );
    assert!(
        text.contains("192.168.9.1:7000 refused gossip from this node"),
        "{text}"
    );
}
