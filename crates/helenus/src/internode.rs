//! The node's cluster services, started from cassandra.yaml and the node's inputs (the network
//! between nodes, messaging's timings, the clock): internode messaging (`net`), gossip and the
//! cluster metadata log. With no `seed_provider` the node runs alone: no
//! internode port, no gossip, a one-member metadata group on the same code path.
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use config::{Config, InternodeCompression};
use gossip::{keys, GossipConfig, Gossiper, Membership};
use metadata::{ClusterMetadata, KeyspaceEntry, MetadataConfig, MetadataService, NetTransport};
use net::{Messaging, NetConfig};
use query::NodeInfo;
use schema::{encode_keyspace, is_system_keyspace, Schema};
use tokio::time::Instant;

use crate::membership::other_ring_nodes;
use crate::node::NodeInputs;

/// Messaging, gossip and the metadata log of one node.
pub struct ClusterServices {
    pub messaging: Option<Arc<Messaging>>,
    pub gossip: Option<Arc<Gossiper>>,
    pub metadata: Arc<MetadataService>,
}

impl ClusterServices {
    /// Starts the services. `schema` (this node's local schema) founds the metadata log if this
    /// node is the one to found it: a single node upgraded from before clusters keeps its schema.
    pub async fn start(
        inputs: &NodeInputs,
        node: &NodeInfo,
        schema: &Schema,
    ) -> Result<ClusterServices, String> {
        let config = &inputs.config;
        let listen = SocketAddr::new(config.listen_address, config.storage_port);
        let seeds = config.seed_addresses();
        let mut meta = MetadataConfig::new(
            config.metadata_directory.clone(),
            node.host_id,
            listen,
            &config.cluster_name,
        );
        meta.seeds = seeds.clone();
        let initial = Some(founding_state(&config.cluster_name, schema));
        if seeds.is_empty() {
            let metadata = MetadataService::start(meta, None, initial)
                .await
                .map_err(|e| format!("cannot start the cluster metadata log: {e}"))?;
            return Ok(ClusterServices {
                messaging: None,
                gossip: None,
                metadata,
            });
        }
        let messaging = start_messaging(inputs, node, listen).await?;
        let mut gossip = gossip_config(config, node, listen, seeds);
        if let Some(clock) = &inputs.clock {
            gossip.clock = clock.clone();
        }
        gossip.partner_seed = inputs.gossip_seed;
        let gossip = gossip::net_wire::start_over_net(gossip, messaging.clone())
            .await
            .map_err(|e| format!("cannot start gossip: {e}"))?;
        let transport = NetTransport::new(messaging.clone());
        let metadata = MetadataService::start(meta, Some(transport), initial)
            .await
            .map_err(|e| format!("cannot start the cluster metadata log: {e}"))?;
        Ok(ClusterServices {
            messaging: Some(messaging),
            gossip: Some(gossip),
            metadata,
        })
    }

    /// How the coordinator reaches the other nodes; `None` for a node running alone.
    pub fn remote(&self, storage_port: u16) -> Option<coordinator::Remote> {
        let messaging = self.messaging.clone()?;
        let (current, waiting) = (self.metadata.clone(), self.metadata.clone());
        Some(coordinator::Remote {
            messaging,
            storage_port,
            epoch: Arc::new(move || current.current().epoch),
            await_epoch: Arc::new(move |epoch, timeout| {
                let metadata = waiting.clone();
                Box::pin(async move {
                    if let Err(e) = metadata.await_epoch(epoch, timeout).await {
                        tracing::debug!("metadata epoch {epoch} not reached: {e}");
                    }
                })
            }),
        })
    }

    /// The gossip service as the rest of the node sees it.
    pub fn membership(&self) -> Option<Arc<dyn Membership>> {
        self.gossip.clone().map(|g| g as Arc<dyn Membership>)
    }

    /// Waits, for at most `limit`, until gossip sees every other node of the ring up, as
    /// Cassandra waits for gossip to settle before it serves clients: a node serving at once
    /// would answer Unavailable for replicas that are up but not yet heard from. A node that
    /// stays unheard (down) only delays the start by `limit`.
    pub async fn await_peers_up(&self, local: IpAddr, limit: Duration) {
        let Some(gossip) = &self.gossip else { return };
        let started = Instant::now();
        loop {
            let unheard: Vec<IpAddr> = other_ring_nodes(&self.metadata.current(), local)
                .filter(|ip| !gossip.is_alive(*ip))
                .collect();
            if unheard.is_empty() {
                tracing::debug!("gossip saw every node up in {:?}", started.elapsed());
                return;
            }
            if started.elapsed() >= limit {
                tracing::info!(
                    "serving clients with {unheard:?} not seen up by gossip within {limit:?}"
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Tells the cluster this node is in the ring and serves CQL (drivers are told of it then).
    pub fn announce_serving(&self) {
        if let Some(gossip) = &self.gossip {
            gossip.set_local(keys::STATUS, keys::Status::Normal.as_str().to_string());
            gossip.set_local(keys::RPC_READY, "true".to_string());
        }
    }

    /// Announces the shutdown through gossip, then stops the metadata group and messaging.
    pub async fn shutdown(&self) {
        if let Some(gossip) = &self.gossip {
            gossip.shutdown().await;
        }
        self.metadata.shutdown().await;
        if let Some(messaging) = &self.messaging {
            messaging.shutdown().await;
        }
    }
}

async fn start_messaging(
    inputs: &NodeInputs,
    node: &NodeInfo,
    listen: SocketAddr,
) -> Result<Arc<Messaging>, String> {
    let config = &inputs.config;
    let mut net = NetConfig::new(&config.cluster_name, node.host_id, listen);
    net.compression = config.internode_compression == InternodeCompression::All;
    if let Some(clock) = &inputs.clock {
        net.clock = clock.clone();
    }
    Messaging::start_tuned(net, inputs.tuning.clone(), inputs.network.clone())
        .await
        .map_err(|e| format!("cannot listen for other nodes on {listen}: {e}"))
}

fn gossip_config(
    config: &Config,
    node: &NodeInfo,
    listen: SocketAddr,
    seeds: Vec<SocketAddr>,
) -> GossipConfig {
    let mut gossip = GossipConfig::new(&config.cluster_name, node.host_id, listen);
    gossip.seeds = seeds;
    gossip.phi_convict_threshold = config.phi_convict_threshold;
    gossip.initial_state = BTreeMap::from([
        (keys::DC.to_string(), node.data_center.clone()),
        (keys::RACK.to_string(), node.rack.clone()),
        (
            keys::NATIVE_ADDRESS.to_string(),
            node.rpc_address.to_string(),
        ),
        (keys::NATIVE_PORT.to_string(), node.native_port.to_string()),
        (
            keys::RELEASE_VERSION.to_string(),
            node.release_version.clone(),
        ),
        (
            keys::STATUS.to_string(),
            keys::Status::Starting.as_str().to_string(),
        ),
    ]);
    gossip
}

/// The metadata a group founded by this node starts from: its user keyspaces.
fn founding_state(cluster_name: &str, schema: &Schema) -> ClusterMetadata {
    let mut state = ClusterMetadata::empty(cluster_name);
    for (name, ks) in schema.keyspaces() {
        if !is_system_keyspace(name) {
            let entry = KeyspaceEntry {
                version: 0,
                definition: encode_keyspace(ks),
            };
            state.schema.insert(name.clone(), entry);
        }
    }
    state
}
