//! One node started from its inputs, in the order `helenus server` and the whole-cluster
//! simulation share: storage and commit-log replay, the system keyspaces and the query
//! processor, the cluster services (messaging, gossip, the metadata log), the coordinator's
//! remote side, hints, streaming and repair, the batchlog; then the node takes its place in the
//! ring, follows the cluster, waits for gossip to settle, and serves. What differs between
//! production and a simulation is passed in ([`NodeInputs`]): the network between nodes,
//! messaging's timings and the node's clock; the directories and everything else come from the
//! configuration. The native transport and the admin API are the server's (`server.rs`).
mod settings;

use std::future::Future;
use std::sync::{Arc, Weak};
use std::time::Duration;

use clock::SharedClock;
use config::Config;
use coordinator::{Coordinator, Timeouts};
use hints::HintsService;
use metadata::MetadataService;
use net::{Network, Tuning};
use nodeops::NodeOps;
use query::{NodeInfo, QueryProcessor, RELEASE_VERSION};
use repair::Repair;
use ring::Endpoint;
use storage::Storage;
use streaming::Streaming;
use tokio::sync::broadcast;
use transport::Event;

pub use crate::internode::ClusterServices;
pub use settings::{storage_config, stream_config};

/// How long the drain at shutdown may flush before the node stops without it.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(30);
/// How long a starting node waits for gossip to see the ring's other nodes up before it serves
/// clients (Cassandra waits at least 5 s for gossip to settle).
const GOSSIP_SETTLE_LIMIT: Duration = Duration::from_secs(5);

/// What a node is started from.
pub struct NodeInputs {
    /// cassandra.yaml: addresses, directories, timeouts, storage and hints settings.
    pub config: Config,
    /// Sockets between nodes: `net::TokioNetwork` in production, `TurmoilNetwork` in a
    /// simulation.
    pub network: Arc<dyn Network>,
    /// Messaging's keepalive, dead-after and reconnect timings.
    pub tuning: Tuning,
    /// The node's own wall clock (server-side write timestamps, gossip generations, the Echo
    /// verb); `None`: the system clock, as each service takes it by default.
    pub clock: Option<SharedClock>,
    /// Tables keep their data in memtables with no flush or compaction threads
    /// (`storage::StorageConfig::in_memory`); the commit log stays. The simulation's choice,
    /// never production's.
    pub in_memory_tables: bool,
    /// The host id the node takes on its first start (later starts read theirs from
    /// `system.local`); `None`: a random one, as production draws it. A simulation derives it
    /// from its seed, so that a replay names the nodes alike.
    pub first_host_id: Option<uuid::Uuid>,
    /// Seeds gossip's choice of partners each round (`gossip::GossipConfig::partner_seed`);
    /// `None`: chitchat's own random choice, as production.
    pub gossip_seed: Option<u64>,
}

impl NodeInputs {
    /// A production node: TCP between nodes, default timings, the system clock.
    pub fn production(config: Config) -> NodeInputs {
        NodeInputs {
            config,
            network: Arc::new(net::TokioNetwork),
            tuning: Tuning::default(),
            clock: None,
            in_memory_tables: false,
            first_host_id: None,
            gossip_seed: None,
        }
    }
}

/// A running node's services.
pub struct Node {
    pub config: Arc<Config>,
    pub storage: Arc<Storage>,
    pub coordinator: Arc<Coordinator>,
    pub processor: Arc<QueryProcessor>,
    pub cluster: ClusterServices,
    pub hints: Option<Arc<HintsService>>,
    pub streaming: Option<Arc<Streaming>>,
    pub repair: Option<Arc<Repair>>,
    pub ops: Arc<NodeOps>,
    /// Client events (schema changes, topology, up and down) for the native transport.
    pub events: broadcast::Sender<Event>,
}

impl Node {
    /// Opens, joins and serves: the whole start-up, for a node without a native transport.
    pub async fn start(inputs: NodeInputs) -> Result<Node, String> {
        let node = Node::open(inputs).await?;
        node.join().await?;
        node.start_serving();
        Ok(node)
    }

    /// Opens the node's data and starts its services, up to (not including) joining the ring.
    pub async fn open(inputs: NodeInputs) -> Result<Node, String> {
        let config = &inputs.config;
        crate::decommissioned::refuse_if_marked(&config.metadata_directory)?;
        let mut storage_settings = storage_config(config);
        storage_settings.in_memory = inputs.in_memory_tables;
        let storage =
            Storage::open(storage_settings).map_err(|e| format!("cannot open storage: {e}"))?;
        let storage = Arc::new(storage);
        let coordinator = Arc::new(
            Coordinator::new(storage.clone(), endpoint(config), timeouts(config))
                .with_storage_port(config.storage_port),
        );
        let slow_queries = coordinator.slow_queries();
        slow_queries.set_threshold(config.slow_query_log_timeout);
        tokio::spawn(slow_queries.clone().report_periodically());
        let processor = system::start(coordinator.clone(), storage.clone(), node_info(&inputs))
            .await
            .map_err(|e| format!("cannot start: {e}"))?;
        processor.set_limits(query::Limits::from_config(config));
        if let Some(clock) = &inputs.clock {
            processor.set_clock(clock.clone());
        }
        let cluster =
            ClusterServices::start(&inputs, processor.node(), &processor.schema().schema).await?;
        processor.attach_metadata(cluster.metadata.clone());
        if let Some(remote) = cluster.remote(config.storage_port) {
            coordinator.attach_remote(remote);
        }
        let hints = crate::hints::start(crate::hints::HintsNode {
            config,
            cluster: &cluster,
            processor: &processor,
            coordinator: &coordinator,
            storage: &storage,
        })
        .await?;
        let streaming = cluster.messaging.as_ref().map(|messaging| {
            let config = stream_config(config);
            Arc::new(Streaming::start(storage.clone(), messaging.clone(), config))
        });
        let repair = start_repair(config, &cluster, &storage, streaming.as_ref());
        if let Some(repair) = &repair {
            repair.on_repaired(purge_paxos(
                coordinator.clone(),
                config.paxos_purge_grace_period,
            ));
        }
        coordinator.start_batchlog_replay(config.batchlog_replay_throttle.as_bytes());
        tokio::spawn(record_size_estimates(
            Arc::downgrade(&processor),
            coordinator.clone(),
            storage.clone(),
        ));
        let ops = NodeOps::new(
            cluster.metadata.clone(),
            processor.clone(),
            cluster.membership(),
            settings::nodeops_settings(config),
        );
        if let Some(streaming) = &streaming {
            let mover = nodeops::StreamMover::new(
                streaming.clone(),
                processor.clone(),
                config.storage_port,
            );
            ops.set_mover(Arc::new(mover));
        }
        let (events, _) = broadcast::channel(1024);
        Ok(Node {
            config: Arc::new(inputs.config),
            storage,
            coordinator,
            processor,
            cluster,
            hints,
            streaming,
            repair,
            ops,
            events,
        })
    }

    /// Takes the node's place in the ring, follows the cluster from then on, and waits (for a
    /// bounded time) until gossip sees the ring's other nodes up.
    pub async fn join(&self) -> Result<Vec<i64>, String> {
        let tokens = crate::join::join(
            &self.cluster.metadata,
            &self.processor,
            &self.config,
            &self.ops,
        )
        .await?;
        tracing::info!("joined the ring with {} tokens", tokens.len());
        forward_schema_events(&self.processor, self.events.clone());
        crate::membership::start(
            &self.cluster,
            self.processor.clone(),
            self.coordinator.clone(),
            self.storage.clone(),
            self.events.clone(),
        );
        if let (Some(messaging), Some(gossip)) =
            (&self.cluster.messaging, self.cluster.membership())
        {
            crate::reconnect::start(messaging.clone(), gossip.clone());
            crate::clock_skew::start(messaging.clone(), gossip, self.config.listen_address);
        }
        self.cluster
            .await_peers_up(self.config.listen_address, GOSSIP_SETTLE_LIMIT)
            .await;
        Ok(tokens)
    }

    /// Finishes a decommission a restart interrupted, and tells the cluster the node serves.
    pub fn start_serving(&self) {
        resume_leave(
            &self.ops,
            &self.cluster.metadata,
            self.processor.node().host_id,
        );
        self.cluster.announce_serving();
        if self.ops.mode() == nodeops::OperationMode::Starting {
            self.ops.mark_normal();
        }
    }

    /// A clean stop: hints written, the cluster told, messaging closed, memtables flushed and
    /// the commit log synced (for at most [`DRAIN_LIMIT`]).
    pub async fn stop(&self) {
        crate::hints::shutdown(self.hints.as_ref()).await;
        self.cluster.shutdown().await;
        drain(self.storage.shutdown(), DRAIN_LIMIT).await;
    }
}

fn endpoint(config: &Config) -> Endpoint {
    Endpoint {
        addr: config.listen_address,
        datacenter: config.location.data_center.as_str().into(),
        rack: config.location.rack.as_str().into(),
        host_id: [0; 16],
    }
}

fn timeouts(config: &Config) -> Timeouts {
    Timeouts {
        read: config.read_request_timeout,
        range: config.range_request_timeout,
        write: config.write_request_timeout,
        counter_write: config.counter_write_request_timeout,
    }
}

/// The node as the query layer knows it (its host id is read from `system.local` at start;
/// on the first start it is the inputs' `first_host_id`, or a random one when that is nil).
fn node_info(inputs: &NodeInputs) -> NodeInfo {
    let config = &inputs.config;
    NodeInfo {
        cluster_name: config.cluster_name.clone(),
        listen_address: config.listen_address,
        rpc_address: config.rpc_address,
        native_port: config.native_transport_port,
        storage_port: config.storage_port,
        data_center: config.location.data_center.clone(),
        rack: config.location.rack.clone(),
        release_version: RELEASE_VERSION.into(),
        tokens: config.initial_token.clone(),
        host_id: inputs.first_host_id.unwrap_or_default(),
    }
}

/// Repair, on a node with messaging and streaming (not one running alone).
fn start_repair(
    config: &Config,
    cluster: &ClusterServices,
    storage: &Arc<Storage>,
    streaming: Option<&Arc<Streaming>>,
) -> Option<Arc<Repair>> {
    let (messaging, streaming) = cluster.messaging.as_ref().zip(streaming)?;
    Some(Arc::new(Repair::start(
        storage.clone(),
        messaging.clone(),
        streaming.clone(),
        repair_config(config),
    )))
}

/// After each repair session that succeeded, the Paxos state of its ranges is purged
/// (`paxos_state_purging: repaired`): the rounds older than the session's start less
/// `paxos_purge_grace_period` that every replica holds committed.
fn purge_paxos(coordinator: Arc<Coordinator>, grace: Duration) -> repair::RepairedHook {
    Arc::new(move |repaired: repair::Repaired| {
        let coordinator = coordinator.clone();
        Box::pin(async move {
            let participants: Vec<std::net::IpAddr> =
                repaired.replicas.iter().map(|a| a.ip()).collect();
            let started = i64::try_from(repaired.started_ms).unwrap_or(i64::MAX);
            let grace = i64::try_from(grace.as_micros()).unwrap_or(i64::MAX);
            let before = started.saturating_mul(1_000).saturating_sub(grace);
            for table in &repaired.tables {
                let purge = coordinator.purge_repaired_paxos(
                    *table,
                    &repaired.ranges,
                    &participants,
                    before,
                );
                match purge.await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!("purged the Paxos state of {n} repaired partitions"),
                    Err(e) => tracing::warn!("Paxos state not purged after a repair: {e}"),
                }
            }
        })
    })
}

/// Repair's settings: `repair_session_space` bounds the trees of a session.
fn repair_config(config: &Config) -> repair::RepairConfig {
    let mut repair = repair::RepairConfig::default();
    if let Some(space) = config.repair_session_space {
        repair.session_space = space.as_bytes();
    }
    repair
}

/// Runs `shutdown` (flush every table, sync the commit log) for at most `limit`. A failure or
/// a timeout is logged: what was not flushed stays in the commit log for the next start.
pub async fn drain(shutdown: impl Future<Output = storage::Result<()>>, limit: Duration) {
    tracing::info!("draining: flushing memtables and syncing the commit log");
    match tokio::time::timeout(limit, shutdown).await {
        Ok(Ok(())) => tracing::info!("drained"),
        Ok(Err(e)) => tracing::error!(
            "drain failed: {e}; what was not flushed is replayed from the commit log at the next start"
        ),
        Err(_) => tracing::error!(
            "drain did not finish within {limit:?} (a stuck disk?); stopping without it: \
             what was not flushed is replayed from the commit log at the next start"
        ),
    }
}

/// A node restarted in the middle of its decommission finishes it.
fn resume_leave(ops: &Arc<NodeOps>, metadata: &MetadataService, host_id: uuid::Uuid) {
    let state = metadata.current().nodes.get(&host_id).map(|n| n.state);
    if state == Some(metadata::NodeState::Leaving) {
        let ops = ops.clone();
        tokio::spawn(async move {
            if let Err(e) = ops.resume_leave().await {
                tracing::error!("cannot finish the decommission of this node: {e}");
            }
        });
    }
}

/// Records `system.size_estimates` 30 seconds after start and then every five minutes, as
/// Cassandra does, while the node runs.
async fn record_size_estimates(
    processor: Weak<QueryProcessor>,
    coordinator: Arc<Coordinator>,
    storage: Arc<Storage>,
) {
    tokio::time::sleep(system::size_estimates::FIRST_DELAY).await;
    let mut ticks = tokio::time::interval(system::size_estimates::INTERVAL);
    loop {
        ticks.tick().await;
        let Some(processor) = processor.upgrade() else {
            return;
        };
        let schema = processor.schema().schema.clone();
        drop(processor);
        if let Err(e) = system::size_estimates::record(&coordinator, &storage, &schema).await {
            tracing::debug!("size estimates not recorded: {e}");
        }
    }
}

fn forward_schema_events(processor: &QueryProcessor, events: broadcast::Sender<Event>) {
    let mut changes = processor.subscribe();
    tokio::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(change) => {
                    let _ = events.send(Event::SchemaChange(change));
                }
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_drain_that_hangs_is_given_up_after_its_limit() {
        let started = std::time::Instant::now();
        drain(std::future::pending(), Duration::from_millis(20)).await;
        assert!(started.elapsed() < Duration::from_secs(5));
        let failed = async { Err(storage::StorageError::Closed) };
        drain(failed, Duration::from_secs(5)).await;
    }
}
