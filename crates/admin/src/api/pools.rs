//! `tpstats` and `gcstats`. Helenus has no staged thread pools: each "pool" reports the work
//! of the same kind that exists (requests in flight, compactions, flushes); the native
//! transport's "blocked" are its connections paused by the overload limits. There is no
//! garbage collector, so `gcstats` reports zeros.

use parking_lot::Mutex;
use std::time::Instant;

use coordinator::RequestKind;

use super::types::{DroppedMessages, GcStats, PoolStats, QueueWaitMicros};
use crate::node::AdminNode;

fn pool(name: &str, active: u64, pending: u64, completed: u64) -> PoolStats {
    PoolStats {
        name: name.to_string(),
        active,
        pending,
        completed,
        blocked: 0,
        all_time_blocked: 0,
    }
}

/// Requests of one kind completed, over every consistency level.
fn completed(node: &AdminNode, kind: RequestKind) -> u64 {
    node.coordinator
        .metrics()
        .requests(kind)
        .iter()
        .map(|(_, s)| s.count)
        .sum()
}

pub fn tpstats(node: &AdminNode) -> Vec<PoolStats> {
    let storage = &node.storage;
    let running = storage.compactions().len() as u64;
    let pending: u64 = super::compaction::stats(node)
        .map(|s| s.pending.iter().map(|p| p.tasks).sum())
        .unwrap_or(0);
    let flushes: u64 = super::tables::stats(node)
        .map(|all| all.iter().map(|t| t.memtable_switch_count).sum())
        .unwrap_or(0);
    let reads = completed(node, RequestKind::Read) + completed(node, RequestKind::Range);
    [
        pool("MutationStage", 0, 0, completed(node, RequestKind::Write)),
        pool("ReadStage", 0, 0, reads),
        pool(
            "CompactionExecutor",
            running,
            pending,
            storage.compaction_totals().completed,
        ),
        pool("MemtableFlushWriter", 0, 0, flushes),
        native_transport(node),
    ]
    .into_iter()
    .chain(hints_dispatcher(node))
    .collect()
}

/// Deliveries of hints running or waiting for a slot, and hints delivered; none on a node
/// that keeps no hints.
fn hints_dispatcher(node: &AdminNode) -> Option<PoolStats> {
    let hints = node.coordinator.hints()?;
    let delivered = hints.metrics().dispatched;
    Some(pool(
        "HintsDispatcher",
        hints.deliveries() as u64,
        0,
        delivered,
    ))
}

/// Requests in flight and done; blocked: connections paused now by the limits on request
/// data in flight or the rate limit, and all pauses since start.
fn native_transport(node: &AdminNode) -> PoolStats {
    let limits = node.native_limits.stats();
    PoolStats {
        blocked: limits.paused_connections,
        all_time_blocked: limits.pauses,
        ..pool(
            "Native-Transport-Requests",
            node.native.active(),
            0,
            node.native.completed(),
        )
    }
}

/// Every verb, the messages of it dropped here since start and how long those that ran waited
/// for their handler.
pub fn dropped(node: &AdminNode) -> Vec<DroppedMessages> {
    let dropped = |stats: net::VerbStats| DroppedMessages {
        message_type: stats.verb.name().to_string(),
        dropped: stats.dropped,
        queue_wait_micros: queue_wait(&stats.queue_wait),
    };
    verb_stats(node).into_iter().map(dropped).collect()
}

/// Every verb's messaging figures here (all zero on a node that runs alone: it has no
/// internode messaging).
pub fn verb_stats(node: &AdminNode) -> Vec<net::VerbStats> {
    let stats = node
        .messaging
        .as_ref()
        .map(|m| m.stats())
        .unwrap_or_default();
    net::Verb::ALL.into_iter().map(|v| stats.verb(v)).collect()
}

fn queue_wait(wait: &net::QueueWait) -> QueueWaitMicros {
    QueueWaitMicros {
        p50: wait.percentile_micros(0.50),
        p95: wait.percentile_micros(0.95),
        p99: wait.percentile_micros(0.99),
        max: wait.max_micros(),
    }
}

/// When `gcstats` was last asked (its interval starts there).
pub struct GcClock(Mutex<Instant>);

impl GcClock {
    pub fn new(start: Instant) -> GcClock {
        GcClock(Mutex::new(start))
    }

    fn lap(&self) -> u64 {
        let mut last = self.0.lock();
        let now = Instant::now();
        let interval = now.duration_since(*last);
        *last = now;
        u64::try_from(interval.as_millis()).unwrap_or(u64::MAX)
    }
}

pub fn gcstats(clock: &GcClock) -> GcStats {
    GcStats {
        interval_ms: clock.lap(),
        max_gc_elapsed_ms: 0,
        total_gc_elapsed_ms: 0,
        stdev_gc_elapsed_ms: 0,
        gc_reclaimed_mb: 0,
        collections: 0,
        direct_memory_bytes: -1,
        note: "Helenus has no garbage collector: no pauses to report".to_string(),
    }
}
