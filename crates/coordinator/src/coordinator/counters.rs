//! Counter writes across replicas: Cassandra's `StorageProxy.mutateCounter` and counter write
//! performer. A counter update goes to one leader replica — this node when it is a replica of
//! the key, else the closest live replica — which, under storage's counter lock, advances its
//! own shard of each counter (clock + 1, count + delta) and writes it, then sends the cell
//! holding that shard to the other replicas through the normal write path (write type
//! COUNTER, hints for replicas down or silent), answering once the consistency level is met
//! with its own write counted as one answer. Replicas merge shards, so increments led by
//! different nodes add up and a replayed or re-sent shard counts once. A node that is the only
//! replica of the key writes locally, as a single node always did.
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

use mutation::{CounterUpdate, PartitionKey, TableId};
use net::{NetError, Verb};
use ring::Endpoint;
use storage::Storage;
use types::{Consistency, CqlError, CqlResult};

use super::write::{self, bounded, Fanout, Senders};
use super::Coordinator;
use crate::consistency::validate_for_write;
use crate::failures::{reason, Needed, Replica};
use crate::messages::{CounterReply, CounterRequest};
use crate::proxy_metrics::{ProxyMetrics, RequestKind};
use crate::remote::Attachments;
use crate::replicas::ReplicaPlan;
use crate::responses::{unavailable, Requirement};
use crate::timeouts::TimeoutKind;
use crate::topology::Topology;
use crate::trace::{self, Trace};

/// Share of the counter write timeout a remote leader may spend, so that its account of the
/// replicas' answers reaches the coordinator before the coordinator gives up.
const LEADER_SHARE: (u32, u32) = (9, 10);

/// What a leader replica needs to apply and replicate a counter update.
#[derive(Clone)]
pub(crate) struct Leader {
    pub storage: Arc<Storage>,
    pub topology: Arc<Topology>,
    pub attached: Arc<Attachments>,
    pub storage_port: u16,
    pub metrics: Arc<ProxyMetrics>,
}

impl Leader {
    /// This node's counter id: its host id as the ring knows it (nil until the node has
    /// joined, which is the id legacy totals read as — see `mutation::counter_context`).
    fn counter_id(&self) -> [u8; 16] {
        let local = self.topology.local();
        self.topology
            .ring()
            .endpoint(local.addr)
            .map_or(local.host_id, |e| e.host_id)
    }

    /// Applies `request` as its leader and replicates the shards written, answering at its
    /// consistency level (Unavailable first when too few replicas are alive).
    pub async fn lead(&self, request: &CounterRequest) -> CqlResult<()> {
        let local = self.topology.local();
        let cl = request.consistency;
        let reachable = self.attached.remote.get().is_some();
        let plan = ReplicaPlan::for_write(
            &self.topology,
            &request.strategy,
            request.key.token,
            reachable,
        );
        let requirement = Requirement::new(&request.strategy, cl, &local.datacenter);
        let with_pending = requirement.with_pending(&plan.pending);
        unavailable(&with_pending, &plan, cl)?;
        let started = Instant::now();
        let replica = Replica {
            address: local.addr,
            storage_port: self.storage_port,
        };
        let needed = Needed::new(cl, with_pending.block_for());
        let write = self.storage.apply_counter(
            request.table,
            request.key.clone(),
            request.updates.clone(),
            request.timestamp,
            self.counter_id(),
        );
        let Some(mutation) = bounded(write, request.budget, &replica, needed, "COUNTER").await?
        else {
            return Ok(()); // every counter updated was deleted: nothing to replicate
        };
        let fanout = Fanout {
            mutations: Arc::new(vec![mutation]),
            plans: vec![plan],
            requirement,
            requirements: vec![with_pending],
            cl,
            write_type: "COUNTER",
            local: local.addr,
        };
        let left = request.budget.saturating_sub(started.elapsed());
        let (storage, metrics) = (self.storage.clone(), self.metrics.clone());
        let senders = Senders::new(&self.attached, storage, self.storage_port, left, metrics);
        write::send_after(fanout, senders, Some(local.addr)).await
    }
}

/// Counter deltas for one partition of a table of `keyspace`.
pub struct CounterWrite<'a> {
    pub keyspace: &'a str,
    pub table: TableId,
    pub key: PartitionKey,
    pub updates: Vec<CounterUpdate>,
    pub timestamp: i64,
}

impl Coordinator {
    /// Adds counter deltas in one partition (see the module docs).
    pub async fn write_counters(
        &self,
        write: CounterWrite<'_>,
        cl: Consistency,
        trace: Option<&Trace>,
    ) -> CqlResult<()> {
        let CounterWrite {
            keyspace,
            table,
            key,
            updates,
            timestamp,
        } = write;
        let strategy = &*self.strategy(keyspace);
        if cl == Consistency::Any {
            return Err(CqlError::invalid(
                "Consistency level ANY is not yet supported for counter table",
            ));
        }
        validate_for_write(cl)?;
        trace::trace(trace, || "Determining replicas for mutation".into());
        let reachable = self.attached.remote.get().is_some();
        let plan = ReplicaPlan::for_write(&self.topology, strategy, key.token, reachable);
        let requirement =
            Requirement::new(strategy, cl, &self.local.datacenter).with_pending(&plan.pending);
        unavailable(&requirement, &plan, cl)?;
        let started = Instant::now();
        let timeout = self.timeouts.get(TimeoutKind::CounterWrite);
        let block_for = requirement.block_for();
        if plan.only_local(&self.local) {
            trace::trace(trace, || "Appending to commitlog".into());
            let id = self.leader().counter_id();
            let write = self
                .storage
                .apply_counter(table, key, updates, timestamp, id);
            let needed = Needed::new(cl, block_for);
            bounded(write, timeout, &self.replica, needed, "COUNTER").await?;
            self.record(RequestKind::Write, cl, &[table], started);
            return Ok(());
        }
        let mut request = CounterRequest {
            epoch: self.attached.remote.get().map_or(0, |r| (r.epoch)()),
            table,
            key,
            updates,
            timestamp,
            consistency: cl,
            strategy: strategy.clone(),
            budget: timeout,
        };
        match plan.live.first() {
            Some(leader) if leader.addr != self.local.addr => {
                trace::trace(trace, || {
                    format!("Enqueuing counter update to /{}", leader.addr)
                });
                request.budget = timeout * LEADER_SHARE.0 / LEADER_SHARE.1;
                self.forward(leader, &request, timeout, block_for).await?;
            }
            _ => {
                trace::sending(
                    trace,
                    net::Verb::Mutation,
                    self.local.addr,
                    self.replica.storage_port,
                    plan.live.iter(),
                );
                self.leader().lead(&request).await?;
            }
        }
        self.record(RequestKind::Write, cl, &[table], started);
        Ok(())
    }

    /// What leads counter updates on this node.
    pub(crate) fn leader(&self) -> Leader {
        Leader {
            storage: self.storage.clone(),
            topology: self.topology.clone(),
            attached: self.attached.clone(),
            storage_port: self.replica.storage_port,
            metrics: self.metrics.proxy().clone(),
        }
    }

    /// Sends a counter update to its leader replica and gives its answer; no answer in time is
    /// a WriteTimeout that saw no replica answer.
    async fn forward(
        &self,
        leader: &Endpoint,
        request: &CounterRequest,
        timeout: Duration,
        block_for: i32,
    ) -> CqlResult<()> {
        let cl = request.consistency;
        let timed_out = CounterReply::Timeout {
            received: 0,
            block_for,
        };
        let Some(remote) = self.attached.remote.get() else {
            return timed_out.into_result(cl);
        };
        let to = remote.peer(leader.addr);
        let answer = remote
            .messaging
            .request(to, Verb::Counter, request.encode(), timeout)
            .await;
        match answer {
            Ok(bytes) => CounterReply::decode(&bytes)
                .map_err(|e| {
                    CqlError::Server(format!("bad counter reply from {}: {}", leader.addr, e.0))
                })?
                .into_result(cl),
            Err(NetError::Remote(e)) if e.code != reason::TIMEOUT => {
                tracing::debug!("counter leader {} failed: {}", leader.addr, e.message);
                let failed = CounterReply::Failure {
                    received: 0,
                    block_for,
                    failures: 1,
                    reasons: vec![(leader.addr, e.code)],
                };
                failed.into_result(cl)
            }
            Err(_) => timed_out.into_result(cl),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeouts::Timeouts;
    use bytes::Bytes;
    use mutation::counter_context::{CounterContext, Shard};
    use mutation::{Cell, ColumnValue, ReadFilter};
    use ring::{Token, TokenMetadata};
    use std::net::IpAddr;
    use storage::{StorageConfig, TableParams};

    const TABLE: TableId = TableId(uuid::Uuid::from_u128(7));

    fn endpoint(last: u8) -> Endpoint {
        Endpoint {
            addr: IpAddr::from([127, 0, 0, last]),
            datacenter: "dc1".into(),
            rack: "r1".into(),
            host_id: [last; 16],
        }
    }

    fn key() -> PartitionKey {
        PartitionKey {
            token: 50,
            key: Bytes::from_static(b"k"),
        }
    }

    /// A coordinator at 127.0.0.1 on a ring of `nodes` nodes, the others unreachable.
    fn coordinator(dir: &std::path::Path, nodes: u8) -> Coordinator {
        let config = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
        let storage = Arc::new(Storage::open(config).expect("open"));
        storage
            .create_table(TABLE, TableParams::new("ks", "c"))
            .expect("table");
        let coordinator = Coordinator::new(storage, endpoint(1), Timeouts::default());
        let mut ring = TokenMetadata::new();
        for last in 1..=nodes {
            ring.add_endpoint(endpoint(last), vec![Token(i64::from(last) * 100)]);
        }
        coordinator.topology().set_ring(ring);
        let keyspaces = [("rf1", 1, &[][..]), ("rf3", 3, &[])];
        coordinator.install_schema(crate::coordinator::strategies::simple_keyspaces(&keyspaces));
        coordinator
    }

    async fn add(c: &Coordinator, rf: usize, cl: Consistency, delta: i64) -> CqlResult<()> {
        let update = CounterUpdate {
            clustering: Some(Bytes::from_static(b"c")),
            column: Bytes::from_static(b"n"),
            delta,
        };
        let write = CounterWrite {
            keyspace: &format!("rf{rf}"),
            table: TABLE,
            key: key(),
            updates: vec![update],
            timestamp: 1,
        };
        c.write_counters(write, cl, None).await
    }

    /// The counter cell as stored, unresolved.
    fn stored(c: &Coordinator) -> Cell {
        let source = c
            .storage
            .read_source(TABLE, &key(), &ReadFilter::all(), usize::MAX);
        let data = source.expect("read").expect("partition").data;
        let row = data.rows.values().next().expect("row").clone();
        match row.column(b"n").map(|c| c.value.clone()) {
            Some(ColumnValue::Simple(cell)) => cell,
            other => panic!("{other:?}"),
        }
    }

    fn shards(cell: &Cell) -> Vec<Shard> {
        let value = cell.value.as_deref().expect("live");
        CounterContext::decode(value)
            .expect("context")
            .shards()
            .to_vec()
    }

    #[tokio::test]
    async fn a_leader_counts_its_own_write_and_advances_only_its_shard() {
        let dir = tempfile::tempdir().expect("tempdir");
        let c = coordinator(dir.path(), 3);
        for delta in [2, 3, -1] {
            add(&c, 3, Consistency::One, delta).await.expect("ONE");
        }
        let cell = stored(&c);
        assert!(cell.is_counter());
        let mine = Shard {
            id: [1; 16],
            clock: 3,
            count: 4,
        };
        assert_eq!(shards(&cell), vec![mine]);
        match add(&c, 3, Consistency::Quorum, 1).await {
            Err(CqlError::Unavailable {
                required, alive, ..
            }) => assert_eq!((required, alive), (2, 1)),
            other => panic!("{other:?}"),
        }
        assert_eq!(shards(&stored(&c)), vec![mine]);
    }

    #[tokio::test]
    async fn the_only_replica_writes_its_shard_locally() {
        let dir = tempfile::tempdir().expect("tempdir");
        let c = coordinator(dir.path(), 1);
        add(&c, 1, Consistency::One, 5).await.expect("ONE");
        add(&c, 1, Consistency::All, 5).await.expect("ALL");
        let mine = Shard {
            id: [1; 16],
            clock: 2,
            count: 10,
        };
        assert_eq!(shards(&stored(&c)), vec![mine]);
        let refused = add(&c, 1, Consistency::Any, 1).await;
        assert!(matches!(refused, Err(CqlError::Invalid(_))), "{refused:?}");
    }
}
