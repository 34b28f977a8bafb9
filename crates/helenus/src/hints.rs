//! Hinted handoff on a clustered node: the `HintsService` (crate `hints`) opened over the
//! node's messaging and attached to the coordinator, told by gossip which hosts are up, and
//! the replica side of `Verb::Hint`, which applies a hint received from another node. The hints
//! of a node the metadata log drops from the ring are deleted. A node running alone (no seeds)
//! has no messaging and keeps no hints.
use std::collections::BTreeSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use config::Config;
use coordinator::Coordinator;
use gossip::{EndpointView, Membership, MembershipEvent};
use hints::{HintsConfig, HintsEnv, HintsService, MessagingDeliver};
use metadata::{ClusterMetadata, NodeState};
use net::{handler_fn, Handler, HostId, RemoteError, Verb};
use query::QueryProcessor;
use storage::{Storage, StorageError};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

use crate::internode::ClusterServices;

/// How long the shutdown may wait for deliveries in flight and the last write of the files.
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(30);

/// What the node needs to open the service.
pub struct HintsNode<'a> {
    pub config: &'a Config,
    pub cluster: &'a ClusterServices,
    pub processor: &'a Arc<QueryProcessor>,
    pub coordinator: &'a Arc<Coordinator>,
    pub storage: &'a Arc<Storage>,
}

/// Answers `Verb::Hint`, opens the hints service, attaches it to the coordinator and feeds it
/// gossip's view of the other nodes. `None` on a node without messaging (no seeds).
pub async fn start(node: HintsNode<'_>) -> Result<Option<Arc<HintsService>>, String> {
    let Some(messaging) = &node.cluster.messaging else {
        return Ok(None);
    };
    messaging.register(Verb::Hint, hint_handler(node.storage.clone()));
    let deliver = MessagingDeliver::new(messaging.clone(), node.config.write_request_timeout);
    let env = HintsEnv {
        deliver: Arc::new(deliver),
        gc_grace: gc_grace_of(Arc::downgrade(node.processor)),
        node_count: node_count_of(Arc::downgrade(node.coordinator)),
    };
    let config = HintsConfig::from_config(node.config);
    let dir = config.hints_directory.clone();
    let service = HintsService::open(config, env)
        .await
        .map_err(|e| format!("cannot open the hints directory {}: {e}", dir.display()))?;
    node.coordinator.attach_hints(service.clone());
    if let Some(gossip) = node.cluster.membership() {
        let local = messaging.host_id();
        tokio::spawn(follow_gossip(gossip, Arc::downgrade(&service), local));
    }
    let states = node.cluster.metadata.watch();
    tokio::spawn(forget_removed(states, Arc::downgrade(&service)));
    Ok(Some(service))
}

/// A table's current `gc_grace_seconds`, from the schema; `None` once it is dropped. Weak: the
/// coordinator holds the service, which must not keep the node's services alive in a cycle.
fn gc_grace_of(processor: Weak<QueryProcessor>) -> hints::GcGrace {
    Arc::new(move |table| {
        let schema = processor.upgrade()?.schema();
        let table = schema.schema.table_by_id(table.0)?;
        Some(table.options.gc_grace_seconds.max(0) as u32)
    })
}

/// Nodes in the ring, this one included (the hints throttle is shared among the others).
fn node_count_of(coordinator: Weak<Coordinator>) -> Arc<dyn Fn() -> usize + Send + Sync> {
    Arc::new(move || {
        let nodes = coordinator
            .upgrade()
            .map(|c| c.topology().ring().endpoints().len());
        nodes.unwrap_or(1).max(1)
    })
}

/// Delivers the remaining hints in flight and writes, syncs and closes every hints file;
/// before messaging stops, so that deliveries in flight can finish.
pub async fn shutdown(service: Option<&Arc<HintsService>>) {
    let Some(service) = service else { return };
    match tokio::time::timeout(SHUTDOWN_LIMIT, service.shutdown()).await {
        Ok(Ok(())) => tracing::info!("hints written and closed"),
        Ok(Err(e)) => tracing::error!("cannot write the buffered hints at shutdown: {e}"),
        Err(_) => tracing::error!(
            "the hints service did not stop within {SHUTDOWN_LIMIT:?}; hints not yet written \
             are lost"
        ),
    }
}

/// Tells the service which hosts are up: every host gossip knows, at start and whenever a
/// host comes up or goes down (or events were missed).
async fn follow_gossip(gossip: Arc<dyn Membership>, service: Weak<HintsService>, local: HostId) {
    let mut events = gossip.subscribe();
    loop {
        let Some(service) = service.upgrade() else {
            return;
        };
        for view in gossip.endpoints() {
            tell(&service, &view, local);
        }
        drop(service);
        loop {
            match events.recv().await {
                Ok(MembershipEvent::Alive(_) | MembershipEvent::Dead(_)) => break,
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => break,
                Err(RecvError::Closed) => return,
            }
        }
    }
}

/// Deletes the hints of the nodes the metadata log drops from the ring (Cassandra's
/// `HintsService.excise` when a node leaves): at start those it records as left, then each
/// member that leaves or is removed.
async fn forget_removed(
    mut states: watch::Receiver<Arc<ClusterMetadata>>,
    service: Weak<HintsService>,
) {
    let mut members: Option<BTreeSet<uuid::Uuid>> = None;
    loop {
        let meta = states.borrow_and_update().clone();
        let gone = dropped(members.as_ref(), &meta);
        members = Some(members_of(&meta));
        let Some(service) = service.upgrade() else {
            return;
        };
        for host_id in gone {
            match service.delete_for(host_id).await {
                Ok(()) => tracing::info!("deleted the hints of {host_id}: it left the ring"),
                Err(e) => tracing::error!("cannot delete the hints of {host_id}: {e}"),
            }
        }
        drop(service);
        if states.changed().await.is_err() {
            return;
        }
    }
}

/// The nodes of the ring: those the metadata log records in any state but left.
fn members_of(meta: &ClusterMetadata) -> BTreeSet<uuid::Uuid> {
    let members = meta.nodes.values().filter(|n| n.state != NodeState::Left);
    members.map(|n| n.host_id).collect()
}

/// The nodes whose hints go: `members` that `meta` no longer has as members, or, with no
/// members known yet (at start), those `meta` records as left.
fn dropped(members: Option<&BTreeSet<uuid::Uuid>>, meta: &ClusterMetadata) -> Vec<uuid::Uuid> {
    let now = members_of(meta);
    match members {
        Some(members) => members.difference(&now).copied().collect(),
        None => {
            let left = meta.nodes.values().filter(|n| n.state == NodeState::Left);
            left.map(|n| n.host_id).collect()
        }
    }
}

/// One host's liveness, as gossip sees it, to the service.
fn tell(service: &Arc<HintsService>, view: &EndpointView, local: HostId) {
    let Some(host_id) = view.host_id.filter(|id| *id != local) else {
        return;
    };
    if view.alive {
        service.host_alive(host_id, view.addr);
    } else {
        service.host_down(host_id);
    }
}

/// The replica side of `Verb::Hint`: applies the hint's mutation to local storage and answers
/// once it is durable; an error keeps the hint at its sender, which retries it later.
pub fn hint_handler(storage: Arc<Storage>) -> Arc<dyn Handler> {
    handler_fn(move |_from, payload: Bytes| {
        let storage = storage.clone();
        async move { apply_hint(&storage, &payload).await.map(|()| Bytes::new()) }
    })
}

/// Decodes and applies one hint. A table this node does not know is an error: the sender keeps
/// the hint while its own schema has the table (this node's may be behind) and drops it once
/// the table is dropped there.
pub async fn apply_hint(storage: &Storage, payload: &[u8]) -> Result<(), RemoteError> {
    let mutation = hints::decode_hint(payload).map_err(|e| {
        RemoteError::new(
            RemoteError::SERVER_ERROR,
            format!("cannot read the hint: {e}"),
        )
    })?;
    storage.apply(mutation).await.map_err(|e| {
        let message = match e {
            StorageError::UnknownTable(id) => format!("hint for unknown table {id}"),
            other => format!("cannot apply the hint: {other}"),
        };
        RemoteError::new(RemoteError::SERVER_ERROR, message)
    })
}

#[cfg(test)]
mod tests {
    use mutation::{
        Cell, ColumnData, Mutation, PartitionKey, PartitionUpdate, ReadFilter, Row, TableId,
    };
    use storage::{StorageConfig, TableParams};

    use super::*;

    fn open(dir: &std::path::Path) -> Storage {
        let config = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
        Storage::open(config).expect("storage opens")
    }

    fn mutation(table: TableId) -> Mutation {
        let mut row = Row::new(Bytes::from_static(b"c"));
        let value = Bytes::from_static(b"hinted");
        row.columns = vec![ColumnData::simple("v", Cell::live(1, value))];
        Mutation {
            table,
            key: PartitionKey {
                token: 42,
                key: Bytes::from_static(b"k"),
            },
            update: PartitionUpdate {
                rows: vec![row],
                ..PartitionUpdate::default()
            },
        }
    }

    #[tokio::test]
    async fn a_hint_is_applied_to_local_storage() {
        let dir = tempfile::tempdir().unwrap();
        let storage = open(dir.path());
        let table = TableId(uuid::Uuid::from_u128(7));
        storage
            .create_table(table, TableParams::new("ks", "t"))
            .unwrap();
        let hinted = mutation(table);
        let payload = hints::encode_hint(&hinted, 1_000, 864_000);
        assert_eq!(apply_hint(&storage, &payload).await, Ok(()));
        let read = storage
            .read(table, &hinted.key, &ReadFilter::all(), 0)
            .unwrap()
            .expect("the hinted row is stored");
        assert_eq!(read.rows, hinted.update.rows);
        storage.shutdown().await.unwrap();
    }

    /// A hints service under `dir` delivering through `messaging`, in a ring of `nodes`.
    async fn open_service(
        dir: &std::path::Path,
        messaging: &Arc<net::Messaging>,
        nodes: usize,
    ) -> Arc<HintsService> {
        let env = HintsEnv {
            deliver: Arc::new(MessagingDeliver::new(
                messaging.clone(),
                Duration::from_secs(2),
            )),
            gc_grace: Arc::new(|_| Some(864_000)),
            node_count: Arc::new(move || nodes),
        };
        HintsService::open(HintsConfig::new(dir.join("hints")), env)
            .await
            .unwrap()
    }

    async fn messaging(n: u128) -> Arc<net::Messaging> {
        let listen = "127.0.0.1:0".parse().unwrap();
        let config = net::NetConfig::new("Test Cluster", uuid::Uuid::from_u128(n), listen);
        net::Messaging::start(config, Arc::new(net::TokioNetwork))
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_stored_hint_reaches_the_replicas_storage_over_messaging() {
        let dir = tempfile::tempdir().unwrap();
        let replica = open(&dir.path().join("replica"));
        let table = TableId(uuid::Uuid::from_u128(9));
        replica
            .create_table(table, TableParams::new("ks", "t"))
            .unwrap();
        let replica = Arc::new(replica);
        let (a, b) = (messaging(1).await, messaging(2).await);
        b.register(Verb::Hint, hint_handler(replica.clone()));
        let service = open_service(dir.path(), &a, 2).await;
        let hinted = mutation(table);
        service.store(b.host_id(), &hinted).unwrap();
        service.host_alive(b.host_id(), b.local());
        let started = std::time::Instant::now();
        while service.metrics().dispatched == 0 || !service.pending().is_empty() {
            assert!(started.elapsed() < Duration::from_secs(10), "not delivered");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let read = replica.read(table, &hinted.key, &ReadFilter::all(), 0);
        assert_eq!(read.unwrap().map(|p| p.rows), Some(hinted.update.rows));
        service.shutdown().await.unwrap();
        a.shutdown().await;
        b.shutdown().await;
        replica.shutdown().await.unwrap();
    }

    fn node(n: u128, state: NodeState) -> metadata::NodeRecord {
        let addr = std::net::SocketAddr::from(([127, 0, 0, n as u8], 7000));
        metadata::NodeRecord {
            host_id: uuid::Uuid::from_u128(n),
            addr,
            native: addr,
            dc: "dc1".into(),
            rack: "r1".into(),
            tokens: vec![n as i64],
            state,
            release_version: "5.0.4".into(),
        }
    }

    fn metadata_of(nodes: &[metadata::NodeRecord]) -> ClusterMetadata {
        let mut meta = ClusterMetadata::empty("c");
        for n in nodes {
            meta.nodes.insert(n.host_id, n.clone());
        }
        meta
    }

    #[test]
    fn nodes_that_leave_or_are_removed_are_dropped() {
        let id = uuid::Uuid::from_u128;
        let start = metadata_of(&[
            node(1, NodeState::Normal),
            node(2, NodeState::Leaving),
            node(3, NodeState::Left),
        ]);
        assert_eq!(dropped(None, &start), vec![id(3)], "left before start");
        let members = members_of(&start);
        assert!(dropped(Some(&members), &start).is_empty());
        let later = metadata_of(&[node(2, NodeState::Left), node(4, NodeState::Joining)]);
        assert_eq!(dropped(Some(&members), &later), vec![id(1), id(2)]);
    }

    #[tokio::test]
    async fn the_hints_of_a_node_removed_from_the_ring_are_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let a = messaging(1).await;
        let service = open_service(dir.path(), &a, 3).await;
        let (kept, removed) = (node(2, NodeState::Normal), node(3, NodeState::Normal));
        let hinted = mutation(TableId(uuid::Uuid::from_u128(5)));
        service.store(kept.host_id, &hinted).unwrap();
        service.store(removed.host_id, &hinted).unwrap();
        let (states, watched) =
            watch::channel(Arc::new(metadata_of(&[kept.clone(), removed.clone()])));
        tokio::spawn(forget_removed(watched, Arc::downgrade(&service)));
        // The task takes the first state as the ring's members before the removal.
        tokio::time::sleep(Duration::from_millis(50)).await;
        states.send_replace(Arc::new(metadata_of(std::slice::from_ref(&kept))));
        let pending_hosts =
            || -> Vec<uuid::Uuid> { service.pending().iter().map(|p| p.host_id).collect() };
        let started = std::time::Instant::now();
        while pending_hosts() != vec![kept.host_id] {
            assert!(started.elapsed() < Duration::from_secs(10), "not deleted");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        service.shutdown().await.unwrap();
        a.shutdown().await;
    }

    #[tokio::test]
    async fn a_hint_for_an_unknown_table_or_unreadable_is_answered_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let storage = open(dir.path());
        let table = TableId(uuid::Uuid::from_u128(8));
        let payload = hints::encode_hint(&mutation(table), 1_000, 864_000);
        let unknown = apply_hint(&storage, &payload).await.unwrap_err();
        assert_eq!(unknown.message, format!("hint for unknown table {table}"));
        let unreadable = apply_hint(&storage, &payload[..5]).await.unwrap_err();
        assert!(
            unreadable.message.starts_with("cannot read the hint: "),
            "{unreadable}"
        );
        storage.shutdown().await.unwrap();
    }
}
