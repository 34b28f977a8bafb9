//! Keeps the node in step with the cluster: the coordinator's ring follows the metadata log and
//! its liveness follows gossip; the peers tables and this node's gossip state follow both; and
//! clients registered for events hear of nodes joining (NEW_NODE), leaving (REMOVED_NODE), going
//! down and coming up — NEW_NODE and UP only once the node serves CQL, as drivers expect.
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use coordinator::Coordinator;
use gossip::{keys, EndpointView, Membership, MembershipEvent};
use metadata::{ClusterMetadata, HostId, MetadataService, NodeRecord, NodeState};
use nodeops::{future_ring_of, ring_of};
use query::{AgreementWait, QueryProcessor};
use storage::Storage;
use system::PeerInfo;
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;
use transport::{Event, TopologyChangeKind};
use uuid::Uuid;

use crate::internode::ClusterServices;

/// How often this node's load is gossiped (Cassandra's LoadBroadcaster: every minute).
const LOAD_INTERVAL: Duration = Duration::from_secs(60);
/// How long a schema change waits for the other live nodes to apply it before answering.
const AGREEMENT_LIMIT: Duration = Duration::from_secs(5);
const AGREEMENT_POLL: Duration = Duration::from_millis(20);

/// Starts the tasks that keep the coordinator, the peers tables, gossip and client events in
/// step with the metadata log and gossip.
pub fn start(
    services: &ClusterServices,
    processor: Arc<QueryProcessor>,
    coordinator: Arc<Coordinator>,
    storage: Arc<Storage>,
    events: broadcast::Sender<Event>,
) {
    let gossip = services.membership();
    if let Some(gossip) = &gossip {
        let alive = gossip.clone();
        coordinator
            .topology()
            .set_liveness(Arc::new(move |addr| alive.is_alive(addr)));
        tokio::spawn(advertise_schema(gossip.clone(), processor.clone()));
        processor.set_agreement_wait(agreement_wait(
            gossip.clone(),
            services.metadata.clone(),
            processor.node().listen_address,
        ));
        tokio::spawn(advertise_load(
            gossip.clone(),
            processor.clone(),
            storage.clone(),
        ));
    }
    let mirror = Mirror {
        processor,
        coordinator,
        storage,
        events,
        gossip,
        known: BTreeMap::new(),
        peers: None,
    };
    tokio::spawn(mirror.run(services.metadata.watch()));
}

/// What the node has told its clients and written about the other nodes.
struct Mirror {
    processor: Arc<QueryProcessor>,
    coordinator: Arc<Coordinator>,
    /// Where the peers tables are written.
    storage: Arc<Storage>,
    events: broadcast::Sender<Event>,
    gossip: Option<Arc<dyn Membership>>,
    /// Each other node announced to clients: its CQL address and whether it was last said up.
    known: BTreeMap<HostId, (SocketAddr, bool)>,
    peers: Option<Vec<PeerInfo>>,
}

impl Mirror {
    async fn run(mut self, mut states: watch::Receiver<Arc<ClusterMetadata>>) {
        let mut gossip_events = self.gossip.as_ref().map(|g| g.subscribe());
        let mut ring_version = None;
        loop {
            let meta = states.borrow_and_update().clone();
            // the ring changes with the topology only, not with schema changes or gossip
            if ring_version != Some(meta.topology_version) {
                let topology = self.coordinator.topology();
                topology.set_ring(ring_of(&meta));
                topology.set_future_ring(future_ring_of(&meta));
                ring_version = Some(meta.topology_version);
            }
            self.refresh(&meta).await;
            let gossiped = async {
                match gossip_events.as_mut() {
                    Some(events) => next_event(events).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                changed = states.changed() => if changed.is_err() { return },
                alive = gossiped => if !alive { return },
            }
        }
    }

    /// Rewrites the peers tables if they changed and sends the events the change calls for.
    async fn refresh(&mut self, meta: &ClusterMetadata) {
        let local = self.processor.node().host_id;
        let views = self
            .gossip
            .as_ref()
            .map(|g| g.endpoints_by_ip())
            .unwrap_or_default();
        // Joining and replacing nodes serve no reads and no CQL yet: drivers learn of them
        // once they are Normal
        let others: Vec<&NodeRecord> = meta
            .nodes
            .values()
            .filter(|n| n.host_id != local)
            .filter(|n| matches!(n.state, NodeState::Normal | NodeState::Leaving))
            .collect();
        let peers: Vec<PeerInfo> = others
            .iter()
            .map(|n| peer_info(n, views.get(&n.addr.ip())))
            .collect();
        if self.peers.as_ref() != Some(&peers) {
            let schema = self.processor.schema().schema.clone();
            match system::peers::record(&self.storage, &schema, &peers).await {
                Ok(()) => self.peers = Some(peers),
                Err(e) => tracing::error!("cannot record the peers tables: {e}"),
            }
        }
        self.announce(&others, &views);
    }

    /// NEW_NODE / UP for nodes that serve CQL, DOWN for nodes gone down, REMOVED_NODE for
    /// nodes no longer in the ring.
    fn announce(&mut self, others: &[&NodeRecord], views: &BTreeMap<IpAddr, EndpointView>) {
        let mut seen = Vec::new();
        for node in others {
            seen.push(node.host_id);
            let view = views.get(&node.addr.ip());
            let up = view.is_some_and(|v| v.alive && v.get(keys::RPC_READY) == Some("true"));
            match self.known.get(&node.host_id).copied() {
                None if up => {
                    self.send(Event::TopologyChange {
                        change: TopologyChangeKind::NewNode,
                        addr: node.native,
                    });
                    self.known.insert(node.host_id, (node.native, true));
                }
                Some((addr, was_up)) if was_up != up => {
                    self.send(Event::StatusChange { up, addr });
                    self.known.insert(node.host_id, (addr, up));
                }
                _ => {}
            }
        }
        let removed: Vec<(HostId, SocketAddr)> = self
            .known
            .iter()
            .filter(|(id, _)| !seen.contains(id))
            .map(|(id, (addr, _))| (*id, *addr))
            .collect();
        for (id, addr) in removed {
            self.known.remove(&id);
            self.send(Event::TopologyChange {
                change: TopologyChangeKind::RemovedNode,
                addr,
            });
        }
    }

    fn send(&self, event: Event) {
        tracing::info!("cluster event for clients: {event:?}");
        let _ = self.events.send(event);
    }
}

/// Waits for the next gossip event; `false` once gossip has stopped for good.
async fn next_event(events: &mut broadcast::Receiver<MembershipEvent>) -> bool {
    !matches!(
        events.recv().await,
        Err(broadcast::error::RecvError::Closed)
    )
}

fn peer_info(node: &NodeRecord, view: Option<&EndpointView>) -> PeerInfo {
    PeerInfo {
        peer: node.addr,
        host_id: node.host_id,
        data_center: node.dc.clone(),
        rack: node.rack.clone(),
        native: node.native,
        tokens: node.tokens.clone(),
        release_version: view
            .and_then(|v| v.get(keys::RELEASE_VERSION))
            .map(str::to_string)
            .or_else(|| Some(node.release_version.clone())),
        schema_version: view
            .and_then(|v| v.get(keys::SCHEMA_VERSION))
            .and_then(|s| s.parse().ok()),
    }
}

/// Gossips this node's schema version whenever its schema changes.
async fn advertise_schema(gossip: Arc<dyn Membership>, processor: Arc<QueryProcessor>) {
    let mut epochs = processor.schema_epochs();
    loop {
        let version = processor.schema().schema.version();
        gossip.set_local(keys::SCHEMA_VERSION, version.to_string());
        if epochs.changed().await.is_err() {
            return;
        }
    }
}

/// How a schema change made on this node waits for the other live nodes to apply it: until
/// each gossips the new schema version, for at most [`AGREEMENT_LIMIT`].
fn agreement_wait(
    gossip: Arc<dyn Membership>,
    metadata: Arc<MetadataService>,
    local: IpAddr,
) -> AgreementWait {
    Arc::new(move |version| {
        let (gossip, metadata) = (gossip.clone(), metadata.clone());
        Box::pin(async move {
            let started = Instant::now();
            loop {
                let views = gossip.endpoints_by_ip();
                let behind = behind_on_schema(&metadata.current(), &views, local, version);
                if behind.is_empty() {
                    return;
                }
                if started.elapsed() >= AGREEMENT_LIMIT {
                    tracing::warn!(
                        "schema version {version} not yet applied by {behind:?} after \
                         {AGREEMENT_LIMIT:?}; answering the schema change anyway"
                    );
                    return;
                }
                tokio::time::sleep(AGREEMENT_POLL).await;
            }
        })
    })
}

/// The addresses of the ring's nodes (joining, normal or leaving) other than this one.
pub fn other_ring_nodes(
    meta: &ClusterMetadata,
    local: IpAddr,
) -> impl Iterator<Item = IpAddr> + '_ {
    meta.nodes
        .values()
        .filter(|n| n.state != NodeState::Left)
        .map(|n| n.addr.ip())
        .filter(move |ip| *ip != local)
}

/// The live nodes of the ring, other than this one, that do not gossip schema `version`.
fn behind_on_schema(
    meta: &ClusterMetadata,
    views: &BTreeMap<IpAddr, EndpointView>,
    local: IpAddr,
    version: Uuid,
) -> Vec<IpAddr> {
    let version = version.to_string();
    other_ring_nodes(meta, local)
        .filter(|ip| {
            views
                .get(ip)
                .is_some_and(|v| v.alive && v.get(keys::SCHEMA_VERSION) != Some(&version))
        })
        .collect()
}

/// Gossips this node's load (bytes of live data on disk) every minute.
async fn advertise_load(
    gossip: Arc<dyn Membership>,
    processor: Arc<QueryProcessor>,
    storage: Arc<Storage>,
) {
    let mut ticks = tokio::time::interval(LOAD_INTERVAL);
    loop {
        ticks.tick().await;
        let (load, _) = system::load_bytes(&storage, &processor.schema().schema);
        gossip.set_local(keys::LOAD, load.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metadata::NodeRecord;
    use nodeops::testing::record;
    use uuid::Uuid;

    fn view(node: &NodeRecord, alive: bool, version: Uuid) -> EndpointView {
        EndpointView {
            addr: node.addr,
            host_id: Some(node.host_id),
            alive,
            generation: 1,
            heartbeat: 1,
            state: BTreeMap::from([(keys::SCHEMA_VERSION.to_string(), version.to_string())]),
        }
    }

    #[test]
    fn the_other_ring_nodes_leave_out_this_one_and_those_that_left() {
        let mut meta = ClusterMetadata::empty("c");
        for n in [
            record(1, vec![1], NodeState::Normal),
            record(2, vec![2], NodeState::Normal),
            record(3, vec![3], NodeState::Joining),
            record(4, vec![4], NodeState::Left),
        ] {
            meta.nodes.insert(n.host_id, n);
        }
        let ip = |last: u8| IpAddr::from([127, 0, 0, last]);
        let others: Vec<IpAddr> = other_ring_nodes(&meta, ip(1)).collect();
        assert_eq!(others, vec![ip(2), ip(3)]);
    }

    #[test]
    fn a_schema_change_waits_for_the_live_nodes_still_on_another_version() {
        let (old, new) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let mut meta = ClusterMetadata::empty("c");
        let nodes: Vec<NodeRecord> = (1..=4)
            .map(|i| record(i, vec![i as i64], NodeState::Normal))
            .collect();
        for n in &nodes {
            meta.nodes.insert(n.host_id, n.clone());
        }
        let views = BTreeMap::from([
            (nodes[1].addr.ip(), view(&nodes[1], true, new)),
            (nodes[2].addr.ip(), view(&nodes[2], true, old)),
            (nodes[3].addr.ip(), view(&nodes[3], false, old)),
        ]);
        let local = nodes[0].addr.ip();
        // node 3 is live on the old version; node 4 is down, so not waited for
        assert_eq!(
            behind_on_schema(&meta, &views, local, new),
            vec![nodes[2].addr.ip()]
        );
        assert_eq!(
            behind_on_schema(&meta, &views, local, old),
            vec![nodes[1].addr.ip()]
        );
    }

    #[test]
    fn peers_take_versions_from_gossip_when_heard() {
        let node = record(2, vec![5], NodeState::Normal);
        let unheard = peer_info(&node, None);
        assert_eq!(unheard.schema_version, None);
        assert_eq!(unheard.release_version.as_deref(), Some("5.0.4"));
        let version = Uuid::from_u128(99);
        let view = EndpointView {
            addr: node.addr,
            host_id: Some(node.host_id),
            alive: true,
            generation: 1,
            heartbeat: 1,
            state: BTreeMap::from([(keys::SCHEMA_VERSION.to_string(), version.to_string())]),
        };
        assert_eq!(peer_info(&node, Some(&view)).schema_version, Some(version));
    }
}
