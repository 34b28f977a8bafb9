//! Replay of the batches their coordinators did not remove: Cassandra's
//! `BatchlogManager.replayFailedBatches`. Every 10 s each node reads its `system.batches`; a
//! batch older than twice the write timeout (its coordinator had the time to write and remove
//! it) has each mutation sent to every replica through the normal write path, waiting for all
//! the live ones (those down, or silent past the write timeout, get hints), and is deleted
//! then. Mutations of tables dropped since are left out; a batch that cannot be decoded is
//! deleted with a warning; a batch a replica failed is kept for the next round.
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use clock::Clock;

use futures::future::join_all;
use mutation::{KeyRange, Mutation, ReadFilter};
use ring::ReplicationStrategy;
use types::{Consistency, CqlError, CqlResult};

use crate::batches;
use crate::coordinator::write::{self, Fanout};
use crate::coordinator::Coordinator;
use crate::messages::batch::Batch;
use crate::replicas::ReplicaPlan;
use crate::responses::Requirement;
use crate::timeouts::TimeoutKind;

/// How often the batchlog is replayed (Cassandra's REPLAY_INTERVAL).
const INTERVAL: Duration = Duration::from_secs(10);

/// What became of one batch.
#[derive(Debug, PartialEq, Eq)]
enum Replay {
    /// Applied (or hinted) everywhere: delete it.
    Done,
    /// Its mutations cannot be decoded: delete it, not counted as replayed.
    Unreadable,
    /// A replica failed it: keep it for the next round.
    Retry,
}

impl Coordinator {
    /// Starts replaying this node's batchlog every 10 s at most `throttle` bytes of mutations
    /// per second (cassandra.yaml's `batchlog_replay_throttle`, shared among the nodes of
    /// the ring as Cassandra does; 0: unthrottled). The task ends with the coordinator.
    pub fn start_batchlog_replay(self: &Arc<Self>, throttle: u64) {
        self.batchlog.throttle.store(throttle, Ordering::Relaxed);
        tokio::spawn(replay_periodically(Arc::downgrade(self)));
    }

    /// Replays every batch old enough now (`nodetool replaybatchlog`), after any replay
    /// already running; the number of batches replayed.
    pub async fn replay_batchlog(&self) -> CqlResult<u64> {
        let _one_at_a_time = self.batchlog.replaying.lock().await;
        if !self.strategies.is_installed() {
            return Ok(0);
        }
        let now = self.wall_clock().since_epoch();
        let timeout = self.timeouts.get(TimeoutKind::Write);
        let cutoff = now.saturating_sub(timeout * 2).as_micros() as i64;
        let now_secs = now.as_secs() as i32;
        let partitions = self
            .storage
            .scan(
                batches::table_id(),
                &KeyRange::all(),
                &ReadFilter::all(),
                now_secs,
                usize::MAX,
            )
            .map_err(|e| CqlError::Server(format!("cannot read the batchlog: {e}")))?;
        let mut replayed = 0;
        for partition in &partitions {
            let batch = match batches::read(partition, now_secs) {
                Ok(batch) if batch.written_at() <= cutoff => batch,
                Ok(_) => continue,
                Err(e) => {
                    tracing::warn!("skipped an unreadable batchlog entry: {e}");
                    continue;
                }
            };
            let outcome = self.replay(&batch).await;
            if outcome != Replay::Retry {
                let removed_at = self.wall_clock().since_epoch();
                batches::remove_locally(self.storage.clone(), batch.id, removed_at).await;
            }
            replayed += u64::from(outcome == Replay::Done);
            self.throttle(batch.size()).await;
        }
        self.batchlog
            .replayed
            .fetch_add(replayed, Ordering::Relaxed);
        Ok(replayed)
    }

    /// Sends every mutation of `batch` to all its replicas.
    async fn replay(&self, batch: &Batch) -> Replay {
        let mutations = match batch.decode_mutations() {
            Ok(mutations) => mutations,
            Err(e) => {
                tracing::warn!("skipped batch replay of {} due to {}", batch.id, e.0);
                return Replay::Unreadable;
            }
        };
        let fanouts = mutations.into_iter().filter_map(|m| {
            let strategy = self.strategies.of_table(m.table)?;
            Some(self.replay_fanout(&strategy, m))
        });
        let sends = fanouts.map(|f| write::send(f, self.senders(TimeoutKind::Write)));
        let failed = join_all(sends)
            .await
            .into_iter()
            .any(|r| matches!(r, Err(CqlError::WriteFailure { .. })));
        if failed {
            tracing::warn!("a replica failed batch {}: replayed again later", batch.id);
            return Replay::Retry;
        }
        Replay::Done
    }

    /// One mutation sent to all its replicas (pending ones too), answered once every live one
    /// has it.
    fn replay_fanout(&self, strategy: &ReplicationStrategy, mutation: Mutation) -> Fanout {
        let reachable = self.attached.remote.get().is_some();
        let token = mutation.key.token;
        let plan = ReplicaPlan::for_write(&self.topology, strategy, token, reachable);
        let all_live = Requirement::Total(plan.live.len() as i32);
        Fanout {
            requirements: vec![all_live.clone()],
            requirement: all_live,
            mutations: Arc::new(vec![mutation]),
            plans: vec![plan],
            cl: Consistency::All,
            write_type: "BATCH",
            local: self.local.addr,
        }
    }

    /// Waits as long as replaying `bytes` takes at this node's share of the throttle.
    async fn throttle(&self, bytes: usize) {
        let throttle = self.batchlog.throttle.load(Ordering::Relaxed);
        let nodes = self.topology.ring().endpoints().len().max(1) as u64;
        let rate = throttle / nodes;
        if rate > 0 {
            tokio::time::sleep(Duration::from_secs_f64(bytes as f64 / rate as f64)).await;
        }
    }
}

/// Replays the batchlog every [`INTERVAL`] while the coordinator lives.
pub(crate) async fn replay_periodically(coordinator: Weak<Coordinator>) {
    let start = tokio::time::Instant::now() + INTERVAL;
    let mut ticks = tokio::time::interval_at(start, INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(coordinator) = coordinator.upgrade() else {
            return;
        };
        match coordinator.replay_batchlog().await {
            Ok(0) => {}
            Ok(n) => tracing::info!("replayed {n} batches from the batchlog"),
            Err(e) => tracing::warn!("batchlog replay failed: {e}"),
        }
    }
}
