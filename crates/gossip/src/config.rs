//! Gossip settings and the failure detector they imply.
//!
//! # Timing
//! chitchat's phi-accrual detector models heartbeat arrivals as exponential: the chance that no
//! heartbeat arrives for Δt is e^(-Δt/mean), so chitchat's phi is Δt / mean. Cassandra's phi is the
//! same probability on a base-10 log scale: phi = -log10(e^(-Δt/mean)) = Δt / (mean · ln 10). To give
//! `phi_convict_threshold` Cassandra's meaning, chitchat is handed `phi_convict_threshold · ln 10`,
//! and a peer is convicted Δt = phi_convict_threshold · ln 10 · mean after its last heartbeat:
//! 8 · 2.303 · mean = 18.4 · mean with Cassandra's default threshold of 8.
//!
//! The mean is the mean interval between heartbeat increases observed for a peer. A node bumps
//! its heartbeat every gossip round and every message it handles, and a peer's heartbeat reaches
//! an observer through every digest that carries it (the peer's own SYN and SYN-ACK, and the
//! digests of third nodes): the observed mean is 0.3 to 0.7 of the gossip interval, larger in
//! larger clusters, and at most about one interval. Until a peer has been observed for a while,
//! chitchat smooths the mean toward a prior (weight 5 samples), set to half an interval so that a
//! peer that just joined is judged like a settled one. With the default interval of 400 ms the
//! bound is 18.4 · 0.4 s = 7.4 s, plus at most one round until chitchat re-evaluates liveness and
//! one until the view is refreshed: about 8 s, inside Cassandra's "about 10 s". Measured in the
//! simulated clusters (the slowest of all observers, paused time, 3 runs each): a killed node is
//! marked down after 4.0 / 4.0 / 4.4-4.8 / 4.8-5.2 / 5.6-6.0 / 6.0-6.4 s in clusters of
//! 2 / 3 / 6 / 9 / 20 / 40 nodes after running 2 minutes, and 3.2 / 3.6-4.4 / 4.4-4.8 / 4.4-5.6 /
//! 6.4 / 6.8-7.2 s right after joining. A healthy peer is convicted only after some 3 s without a
//! single heartbeat: 20% message loss with 1-80 ms jitter for 10 simulated minutes convicts none.
//!
//! Heartbeat intervals longer than `4 · interval` (a stall, the peer's own pause) are left out of
//! the mean so that one long gap does not slow the next detection.

use clock::SharedClock;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use chitchat::FailureDetectorConfig;

use crate::HostId;

/// Gossip round period: each round a node sends its digest to up to 3 live peers (plus possibly a
/// dead one and a seed). Cassandra gossips every second but convicts after ~18 s; 400 ms keeps
/// detection within ~10 s (see the module documentation).
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(400);
/// Cassandra's default `phi_convict_threshold`.
pub const DEFAULT_PHI_CONVICT_THRESHOLD: f64 = 8.0;
/// Cassandra accepts `phi_convict_threshold` between 5 and 16.
const PHI_RANGE: std::ops::RangeInclusive<f64> = 5.0..=16.0;
/// A dead node's state is kept this long before chitchat forgets it (Cassandra keeps it until the
/// node is removed; topology itself lives in `metadata`, so gossip may forget after a day).
const DEAD_NODE_GRACE: Duration = Duration::from_secs(24 * 60 * 60);
/// chitchat's samples per peer, as Cassandra's arrival window (1000).
const SAMPLING_WINDOW: usize = 1000;

#[derive(Clone, Debug)]
pub struct GossipConfig {
    pub cluster_name: String,
    pub host_id: HostId,
    /// listen_address:storage_port, the address peers reach this node at (its identity in gossip).
    pub listen: SocketAddr,
    /// Seed nodes (host:storage_port from `seed_provider`); this node's own address may be listed.
    pub seeds: Vec<SocketAddr>,
    pub interval: Duration,
    pub phi_convict_threshold: f64,
    /// dc, rack, native_address, native_port, release_version, ... (see [`crate::keys`]).
    pub initial_state: BTreeMap<String, String>,
    /// The node's wall clock, which generations are taken from.
    pub clock: SharedClock,
    /// Seeds the choice of each round's gossip partners (a simulation's, so that a seed
    /// replays the same rounds; see `partners.rs`); `None`: chitchat's own random choice.
    pub partner_seed: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GossipError {
    /// A setting is out of range; the text names it as cassandra.yaml does.
    Config(String),
    /// The transport could not be opened.
    Transport(String),
}

impl std::fmt::Display for GossipError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GossipError::Config(message) => write!(f, "invalid gossip configuration: {message}"),
            GossipError::Transport(message) => write!(f, "gossip transport failed: {message}"),
        }
    }
}

impl std::error::Error for GossipError {}

impl GossipConfig {
    /// Defaults for everything but the node's identity: no seeds, the default interval and
    /// threshold, empty state.
    pub fn new(cluster_name: impl Into<String>, host_id: HostId, listen: SocketAddr) -> Self {
        GossipConfig {
            cluster_name: cluster_name.into(),
            host_id,
            listen,
            seeds: Vec::new(),
            interval: DEFAULT_INTERVAL,
            phi_convict_threshold: DEFAULT_PHI_CONVICT_THRESHOLD,
            initial_state: BTreeMap::new(),
            clock: SharedClock::default(),
            partner_seed: None,
        }
    }

    pub fn validate(&self) -> Result<(), GossipError> {
        if !PHI_RANGE.contains(&self.phi_convict_threshold) {
            return Err(GossipError::Config(format!(
                "phi_convict_threshold must be between 5 and 16, not {}",
                self.phi_convict_threshold
            )));
        }
        if self.interval < Duration::from_millis(10) || self.interval > Duration::from_secs(60) {
            return Err(GossipError::Config(format!(
                "the gossip interval must be between 10 ms and 60 s, not {:?}",
                self.interval
            )));
        }
        if self.cluster_name.is_empty() {
            return Err(GossipError::Config("cluster_name is empty".to_string()));
        }
        Ok(())
    }

    /// The time without heartbeats after which a peer whose heartbeats arrived every
    /// `mean_arrival` on average is convicted (before the next liveness check).
    pub fn conviction_delay(&self, mean_arrival: Duration) -> Duration {
        mean_arrival.mul_f64(self.chitchat_phi_threshold())
    }

    /// Cassandra's threshold on chitchat's scale (see the module documentation).
    pub(crate) fn chitchat_phi_threshold(&self) -> f64 {
        self.phi_convict_threshold * std::f64::consts::LN_10
    }

    pub(crate) fn failure_detector(&self) -> FailureDetectorConfig {
        FailureDetectorConfig {
            phi_threshold: self.chitchat_phi_threshold(),
            sampling_window_size: SAMPLING_WINDOW,
            max_interval: self.interval * 4,
            initial_interval: self.interval / 2,
            dead_node_grace_period: DEAD_NODE_GRACE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> GossipConfig {
        GossipConfig::new(
            "Test Cluster",
            HostId::nil(),
            "127.0.0.1:7000".parse().unwrap(),
        )
    }

    #[test]
    fn default_threshold_convicts_after_eighteen_mean_intervals() {
        let config = config();
        let threshold = config.failure_detector().phi_threshold;
        assert!(
            (threshold - 18.420_680_743_952_367).abs() < 1e-9,
            "{threshold}"
        );
    }

    #[test]
    fn default_settings_convict_a_silent_peer_within_ten_seconds() {
        // The slowest case: heartbeats observed once per round, conviction noticed one round
        // later by chitchat and one more by the view.
        let config = config();
        let worst = config.conviction_delay(config.interval) + config.interval * 2;
        assert_eq!(worst.as_millis(), 8168);
        // Half that silence still convicts no one.
        assert!(config.conviction_delay(config.interval / 2) >= Duration::from_secs(3));
    }

    #[test]
    fn detector_prior_and_gap_cap_follow_the_interval() {
        let mut config = config();
        config.interval = Duration::from_millis(200);
        let detector = config.failure_detector();
        assert_eq!(detector.initial_interval, Duration::from_millis(100));
        assert_eq!(detector.max_interval, Duration::from_millis(800));
        assert_eq!(detector.sampling_window_size, 1000);
    }

    #[test]
    fn phi_outside_cassandras_range_is_refused() {
        for phi in [4.9, 16.5, f64::NAN] {
            let mut config = config();
            config.phi_convict_threshold = phi;
            let error = config.validate().unwrap_err();
            assert!(
                error
                    .to_string()
                    .contains("phi_convict_threshold must be between 5 and 16"),
                "{error}"
            );
        }
        let mut config = config();
        config.phi_convict_threshold = 12.0;
        assert_eq!(config.validate(), Ok(()));
    }

    #[test]
    fn interval_and_cluster_name_are_checked() {
        let mut zero = config();
        zero.interval = Duration::ZERO;
        assert!(matches!(zero.validate(), Err(GossipError::Config(_))));
        let mut unnamed = config();
        unnamed.cluster_name.clear();
        assert!(matches!(unnamed.validate(), Err(GossipError::Config(_))));
    }
}
