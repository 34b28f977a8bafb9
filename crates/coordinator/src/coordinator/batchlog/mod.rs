//! Logged batches: Cassandra's `StorageProxy.mutateAtomically` and `BatchlogManager`. A logged
//! batch that spans partitions on other nodes is first stored in `system.batches` on up to two
//! other live nodes of this datacenter (other racks where possible), then applied through the
//! normal write path, then removed from them without waiting. If the coordinator dies in
//! between, the batchlog holders replay it (see [`replay`]): the batch ends up applied in full.
mod endpoints;
mod replay;
pub(crate) mod state;

use std::sync::OnceLock;

use clock::{Clock, SharedClock};
use futures::future::join_all;
use mutation::Mutation;
use net::Verb;
use ring::Endpoint;
use types::{Consistency, CqlError, CqlResult};
use uuid::Uuid;

use super::write::Fanout;
use super::Coordinator;
use crate::batches;
use crate::consistency::validate_for_write;
use crate::failures::{local_outcome, remote_outcome, Needed, Outcome};
use crate::messages::batch::{Batch, RemoveRequest, StoreRequest};
use crate::timeouts::TimeoutKind;
use crate::trace::Trace;
use state::BatchlogStats;

/// The write type of a batchlog write that fails.
const BATCH_LOG: &str = "BATCH_LOG";

/// The failpoint that stops the coordinator between the batchlog write and the mutations.
const AFTER_BATCHLOG: &str = "batch_after_batchlog";

/// A logged batch's writes: one group per keyspace, named.
pub type BatchGroups = Vec<(String, Vec<Mutation>)>;

impl Coordinator {
    /// The node's wall clock: its internode messaging's once attached, else the system's.
    fn wall_clock(&self) -> SharedClock {
        let remote = self.attached.remote.get();
        remote.map_or_else(SharedClock::default, |r| r.messaging.clock().clone())
    }

    /// Writes a logged batch atomically: through the batchlog when its partitions are not all
    /// on this node alone, else as one local commit-log record.
    pub async fn write_atomically(
        &self,
        groups: BatchGroups,
        cl: Consistency,
        trace: Option<&Trace>,
    ) -> CqlResult<()> {
        validate_for_write(cl)?;
        crate::trace::trace(trace, || "Determining replicas for atomic batch".into());
        let fanouts: Vec<Fanout> = groups
            .into_iter()
            .filter(|(_, mutations)| !mutations.is_empty())
            .map(|(keyspace, mutations)| {
                let strategy = self.strategy(&keyspace);
                self.fanout(&strategy, mutations, cl, "BATCH")
            })
            .collect();
        let several = several_partitions(&fanouts);
        if !several || all_local(&fanouts, self.topology.local()) {
            for mut fanout in fanouts {
                if !several {
                    fanout.write_type = "SIMPLE"; // one partition: a plain write in Cassandra
                }
                fanout.check_available()?;
                self.apply_fanout(fanout, trace).await?;
            }
            return Ok(());
        }
        let holders = self.batchlog_holders(cl)?;
        for fanout in &fanouts {
            fanout.check_available()?;
        }
        let batch = Batch::new(new_id(), fanouts.iter().flat_map(|f| f.mutations.iter()));
        crate::trace::trace(trace, || "Writing the batchlog".into());
        self.store_batch(&batch, &holders).await?;
        failpoint(AFTER_BATCHLOG);
        let writes = fanouts.into_iter().map(|f| self.apply_fanout(f, trace));
        join_all(writes)
            .await
            .into_iter()
            .collect::<CqlResult<()>>()?;
        self.remove_batch(&batch.id, &holders);
        Ok(())
    }

    /// What the batchlog did since the node started.
    pub fn batchlog_stats(&self) -> BatchlogStats {
        BatchlogStats {
            replayed: self
                .batchlog
                .replayed
                .load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Where the batchlog goes; Unavailable (as Cassandra's, for level TWO) when no other node
    /// of the datacenter is up, unless the batch is written at ANY (then it goes here).
    fn batchlog_holders(&self, cl: Consistency) -> CqlResult<Vec<Endpoint>> {
        let local = self.topology.local();
        let ring = self.topology.ring();
        let datacenter: Vec<Endpoint> = ring
            .endpoints()
            .into_iter()
            .filter(|e| e.datacenter == local.datacenter)
            .cloned()
            .collect();
        let reachable = self.attached.remote.get().is_some();
        let alive = |addr| reachable && self.topology.is_alive(addr);
        let chosen = endpoints::choose(local, &datacenter, alive, &mut endpoints::random_index);
        match (chosen.is_empty(), cl) {
            (false, _) => Ok(chosen),
            (true, Consistency::Any) => Ok(vec![local.clone()]),
            (true, _) => Err(CqlError::Unavailable {
                message: format!(
                    "Cannot achieve consistency level TWO for batchlog in local DC, \
                     required:{}, available:0",
                    endpoints::REPLICAS
                ),
                consistency: Consistency::Two,
                required: endpoints::REPLICAS as i32,
                alive: 0,
            }),
        }
    }

    /// Stores `batch` on every holder, answering WriteTimeout (or WriteFailure) with write
    /// type BATCH_LOG unless all of them have it within the write timeout.
    async fn store_batch(&self, batch: &Batch, holders: &[Endpoint]) -> CqlResult<()> {
        let senders = self.senders(TimeoutKind::Write);
        let payload = StoreRequest::encode(senders.epoch, batch);
        let stores = holders.iter().map(|holder| async {
            if holder.addr == self.local.addr {
                let write = self.storage.apply(batches::store(batch));
                return bounded_outcome(write, senders.timeout).await;
            }
            let Some(messaging) = &senders.messaging else {
                return Outcome::Silent;
            };
            let to = std::net::SocketAddr::new(holder.addr, senders.storage_port);
            let answer = messaging.request(to, Verb::BatchStore, payload.clone(), senders.timeout);
            remote_outcome(answer.await)
        });
        let outcomes = join_all(stores).await;
        let received = outcomes.iter().filter(|&&o| o == Outcome::Applied).count() as i32;
        let failed = holders
            .iter()
            .zip(&outcomes)
            .filter_map(|(holder, outcome)| match outcome {
                Outcome::Failed(code) => Some((holder.addr, *code)),
                _ => None,
            });
        let needed = Needed {
            consistency: match holders.len() {
                1 => Consistency::One,
                _ => Consistency::Two,
            },
            block_for: holders.len() as i32,
        };
        batchlog_verdict(needed, received, failed.collect())
    }

    /// Deletes `id` from its holders' batchlogs, without waiting.
    fn remove_batch(&self, id: &Uuid, holders: &[Endpoint]) {
        let senders = self.senders(TimeoutKind::Write);
        let request = RemoveRequest {
            epoch: senders.epoch,
            id: *id,
        };
        for holder in holders {
            if holder.addr == self.local.addr {
                let now = self.wall_clock().since_epoch();
                tokio::spawn(batches::remove_locally(self.storage.clone(), *id, now));
            } else if let Some(messaging) = &senders.messaging {
                let to = std::net::SocketAddr::new(holder.addr, senders.storage_port);
                if let Err(e) = messaging.send(to, Verb::BatchRemove, request.encode()) {
                    tracing::debug!("batch {id} not removed from {}: {e}", holder.addr);
                }
            }
        }
    }
}

/// Whether a batch touches more than one partition (only those use the batchlog).
fn several_partitions(fanouts: &[Fanout]) -> bool {
    let mut partitions = fanouts
        .iter()
        .enumerate()
        .flat_map(|(i, f)| f.mutations.iter().map(move |m| (i, &m.key.key)));
    let first = partitions.next();
    partitions.any(|p| Some(p) != first)
}

/// Whether this node is the only replica of every mutation: one local commit-log record is
/// atomic already.
fn all_local(fanouts: &[Fanout], local: &Endpoint) -> bool {
    fanouts
        .iter()
        .all(|f| f.plans.iter().all(|p| p.only_local(local)))
}

/// The answer to a batchlog write from its holders' outcomes.
fn batchlog_verdict(
    needed: Needed,
    received: i32,
    failed: Vec<(std::net::IpAddr, u16)>,
) -> CqlResult<()> {
    if received >= needed.block_for {
        return Ok(());
    }
    if !failed.is_empty() {
        let failures = failed.len() as i32;
        return Err(CqlError::WriteFailure {
            message: format!(
                "Operation failed - received {received} responses and {failures} failures"
            ),
            consistency: needed.consistency,
            received,
            block_for: needed.block_for,
            failures,
            write_type: BATCH_LOG.into(),
            reasons: failed,
        });
    }
    Err(CqlError::WriteTimeout {
        message: format!("Operation timed out - received only {received} responses."),
        consistency: needed.consistency,
        received,
        block_for: needed.block_for,
        write_type: BATCH_LOG.into(),
    })
}

/// A new batch id: a time-based UUID with a node part drawn once per process.
fn new_id() -> Uuid {
    static NODE: OnceLock<[u8; 6]> = OnceLock::new();
    let node = NODE.get_or_init(|| {
        let mut node = [0u8; 6];
        node.copy_from_slice(&Uuid::new_v4().as_bytes()[..6]);
        node[0] |= 0x01; // the multicast bit: not a real MAC address
        node
    });
    Uuid::now_v1(node)
}

/// Stops the process at the test failpoint named by `HELENUS_FAILPOINT` (read once), as if
/// the node had been killed there. Only the integration tests set it.
fn failpoint(name: &str) {
    static ACTIVE: OnceLock<Option<String>> = OnceLock::new();
    let active = ACTIVE.get_or_init(|| std::env::var("HELENUS_FAILPOINT").ok());
    if active.as_deref() == Some(name) {
        tracing::error!("failpoint {name} reached: aborting (HELENUS_FAILPOINT)");
        std::process::abort();
    }
}

/// A local write's outcome, counted as a replica's answer (silent after `timeout`).
async fn bounded_outcome(
    write: impl std::future::Future<Output = storage::Result<()>>,
    timeout: std::time::Duration,
) -> Outcome {
    match tokio::time::timeout(timeout, write).await {
        Ok(result) => local_outcome(result),
        Err(_) => Outcome::Silent,
    }
}

#[cfg(test)]
pub(crate) mod tests;
