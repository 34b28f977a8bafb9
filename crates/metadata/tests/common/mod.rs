//! A cluster of metadata services on the in-memory network, for tests.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use metadata::memnet::MemNetwork;
use metadata::{
    ClusterMetadata, HostId, MetadataConfig, MetadataError, MetadataService, NodeRecord, NodeState,
    RaftRole, Transformation, Transport,
};

pub const CLUSTER: &str = "Test Cluster";

pub fn init_logs() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

pub fn host(i: usize) -> HostId {
    HostId::from_u64_pair(0, i as u64 + 1)
}

pub fn addr(i: usize) -> SocketAddr {
    SocketAddr::from(([127, 0, 8, i as u8 + 1], 7000))
}

pub struct Cluster {
    pub net: Arc<MemNetwork>,
    dirs: Vec<tempfile::TempDir>,
    nodes: Vec<Option<Arc<MetadataService>>>,
    pub seeds: Vec<SocketAddr>,
    pub snapshot_every: u64,
    pub commit_timeout: Duration,
}

impl Cluster {
    /// `n` nodes, none started; every node is a seed.
    pub fn new(n: usize, seed: u64) -> Cluster {
        init_logs();
        Cluster {
            net: MemNetwork::new(seed),
            dirs: (0..n).map(|_| tempfile::tempdir().unwrap()).collect(),
            nodes: (0..n).map(|_| None).collect(),
            seeds: (0..n).map(addr).collect(),
            snapshot_every: 1000,
            commit_timeout: Duration::from_secs(3),
        }
    }

    pub fn config(&self, i: usize) -> MetadataConfig {
        let mut config =
            MetadataConfig::new(self.dirs[i].path().to_path_buf(), host(i), addr(i), CLUSTER);
        config.seeds = self.seeds.clone();
        config.commit_timeout = self.commit_timeout;
        config.heartbeat_interval = Duration::from_millis(100);
        config.election_timeout = Duration::from_millis(500);
        config.snapshot_every = self.snapshot_every;
        config
    }

    pub async fn start(&mut self, i: usize) -> Arc<MetadataService> {
        let transport: Arc<dyn Transport> = self.net.transport(addr(i));
        let service = MetadataService::start(self.config(i), Some(transport), None)
            .await
            .unwrap_or_else(|e| panic!("node {i} did not start: {e}"));
        self.nodes[i] = Some(service.clone());
        service
    }

    /// Stops node `i` as a crash would (its files stay).
    pub async fn crash(&mut self, i: usize) {
        self.net.crash(addr(i));
        if let Some(node) = self.nodes[i].take() {
            node.shutdown().await;
        }
    }

    pub fn node(&self, i: usize) -> &Arc<MetadataService> {
        self.nodes[i].as_ref().expect("node is running")
    }

    pub fn running(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|i| self.nodes[*i].is_some())
            .collect()
    }

    /// The running node that leads, once every running node agrees on it.
    pub fn agreed_leader(&self) -> Option<usize> {
        let running = self.running();
        let leaders: Vec<Option<HostId>> = running
            .iter()
            .map(|i| self.node(*i).status().leader)
            .collect();
        let leader = leaders.first().copied().flatten()?;
        let i = running.iter().copied().find(|i| host(*i) == leader)?;
        let agreed = leaders.iter().all(|l| *l == Some(leader));
        (agreed && self.node(i).status().role == RaftRole::Leader).then_some(i)
    }

    /// Waits (simulated time) until `check` holds, failing after `limit`.
    pub async fn wait_until(&self, what: &str, limit: Duration, check: impl Fn(&Cluster) -> bool) {
        let deadline = tokio::time::Instant::now() + limit;
        while !check(self) {
            if tokio::time::Instant::now() > deadline {
                let statuses: Vec<String> = self
                    .running()
                    .iter()
                    .map(|i| format!("node {i}: {:?}", self.node(*i).status()))
                    .collect();
                panic!("timed out waiting for {what}:\n{}", statuses.join("\n"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until every running node applied the same epoch as the others, at least `epoch`.
    pub async fn converged(&self, epoch: u64) -> Arc<ClusterMetadata> {
        self.wait_until("the same state everywhere", Duration::from_secs(20), |c| {
            let states: Vec<Arc<ClusterMetadata>> =
                c.running().iter().map(|i| c.node(*i).current()).collect();
            states[0].epoch >= epoch && states.iter().all(|s| **s == *states[0])
        })
        .await;
        self.node(self.running()[0]).current()
    }

    /// Starts nodes in `order`, registers each, and waits for one group with them all voting.
    pub async fn form(&mut self, order: &[usize]) {
        for i in order {
            self.start(*i).await;
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        for i in order {
            self.node(*i)
                .await_epoch(1, Duration::from_secs(20))
                .await
                .unwrap_or_else(|e| panic!("node {i} joined no group: {e}"));
            register(self.node(*i), *i).await;
        }
        let n = order.len();
        self.wait_until("every node a voter", Duration::from_secs(20), |c| {
            c.agreed_leader()
                .is_some_and(|l| c.node(l).status().voters.len() == n)
        })
        .await;
    }
}

pub fn record(i: usize) -> NodeRecord {
    NodeRecord {
        host_id: host(i),
        addr: addr(i),
        native: SocketAddr::new(addr(i).ip(), 9042),
        dc: "dc1".to_string(),
        rack: format!("rack{}", i % 3 + 1),
        tokens: vec![(i as i64 + 1) * 1000, (i as i64 + 1) * 1000 + 500],
        state: NodeState::Normal,
        release_version: "5.0.4".to_string(),
    }
}

/// Registers node `i` through `service`, re-planning on conflicts as a real caller does.
pub async fn register(service: &MetadataService, i: usize) -> u64 {
    loop {
        let expect_topology = service.current().topology_version;
        let change = Transformation::RegisterNode {
            node: record(i),
            expect_topology,
        };
        match service.commit(change).await {
            Ok(epoch) => return epoch,
            Err(MetadataError::Conflict { .. }) => continue,
            Err(e) => panic!("registering node {i}: {e}"),
        }
    }
}

pub fn create(name: &str) -> Transformation {
    Transformation::SaveKeyspace {
        name: name.to_string(),
        definition: Bytes::from(format!("CREATE KEYSPACE {name}")),
        expect: None,
    }
}

/// Creates keyspaces `{prefix}0` to `{prefix}{n - 1}` through `service`; the last epoch.
pub async fn create_many(service: &MetadataService, prefix: &str, n: usize) -> u64 {
    let mut last = 0;
    for k in 0..n {
        last = service
            .commit(create(&format!("{prefix}{k}")))
            .await
            .unwrap();
    }
    last
}
