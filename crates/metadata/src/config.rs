//! The metadata service's settings.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::model::HostId;

/// The most voters the group keeps; further nodes follow the log as learners.
pub const MAX_VOTERS: usize = 7;

/// The voters a group of `members` settles on: all of them up to `MAX_VOTERS`, one fewer when
/// that would be even — two voters stop at the loss of either, three survive the loss of one.
pub fn settled_voters(members: usize) -> usize {
    let voters = members.min(MAX_VOTERS);
    if voters.is_multiple_of(2) {
        voters.saturating_sub(1)
    } else {
        voters
    }
}

#[derive(Clone, Debug)]
pub struct MetadataConfig {
    /// `metadata_directory`: the Raft log, vote and snapshot live here.
    pub dir: PathBuf,
    pub host_id: HostId,
    /// This node's internode address (listen_address:storage_port).
    pub addr: SocketAddr,
    /// The seeds' internode addresses (this node's own address may be among them).
    pub seeds: Vec<SocketAddr>,
    pub cluster_name: String,
    /// How long `commit` tries before failing with `NoQuorum`.
    pub commit_timeout: Duration,
    /// How often the leader heartbeats its followers (the timeout of one AppendEntries).
    pub heartbeat_interval: Duration,
    /// A follower that hears no leader for this long (randomized up to twice it) starts an
    /// election.
    pub election_timeout: Duration,
    /// A snapshot is built every this many log entries; half as many are kept after it for
    /// followers that lag a little.
    pub snapshot_every: u64,
}

impl MetadataConfig {
    /// Settings with the defaults: 10 s commit timeout, 200 ms heartbeats, 1-2 s election
    /// timeout, a snapshot every 1000 entries, no seeds.
    pub fn new(dir: PathBuf, host_id: HostId, addr: SocketAddr, cluster_name: &str) -> Self {
        MetadataConfig {
            dir,
            host_id,
            addr,
            seeds: Vec::new(),
            cluster_name: cluster_name.to_string(),
            commit_timeout: Duration::from_secs(10),
            heartbeat_interval: Duration::from_millis(200),
            election_timeout: Duration::from_millis(1000),
            snapshot_every: 1000,
        }
    }

    /// The seeds other than this node, without repeats.
    pub(crate) fn other_seeds(&self) -> Vec<SocketAddr> {
        let mut seeds: Vec<SocketAddr> = Vec::new();
        for seed in &self.seeds {
            if *seed != self.addr && !seeds.contains(seed) {
                seeds.push(*seed);
            }
        }
        seeds
    }

    pub(crate) fn is_seed(&self) -> bool {
        self.seeds.contains(&self.addr)
    }

    /// The openraft settings these amount to.
    pub(crate) fn raft_config(&self) -> Result<openraft::Config, String> {
        let millis = |d: Duration| d.as_millis().max(1) as u64;
        let election = millis(self.election_timeout);
        openraft::Config {
            cluster_name: self.cluster_name.clone(),
            heartbeat_interval: millis(self.heartbeat_interval),
            election_timeout_min: election,
            election_timeout_max: election * 2,
            install_snapshot_timeout: election.max(10_000),
            snapshot_policy: openraft::SnapshotPolicy::LogsSinceLast(self.snapshot_every.max(1)),
            max_in_snapshot_log_to_keep: self.snapshot_every / 2,
            ..openraft::Config::default()
        }
        .validate()
        .map_err(|e| e.to_string())
    }
}
