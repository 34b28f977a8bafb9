//! Hands the virtual tables what other parts of the node know: the transport's live
//! connections (`system_views.clients`), the live configuration (`settings`) and the admin
//! API's pools (`thread_pools`).
use std::sync::Arc;

use admin::AdminNode;
use config::{Config, DataRate};
use coordinator::TimeoutKind;
use query::virtual_tables::{ConnectedClient, NodeSources, RepairRow, StreamState, ThreadPool};
use transport::ClientInfo;

/// Installs the sources into the node's query processor. The admin node is held weakly (it
/// holds the processor).
pub fn install(node: &Arc<AdminNode>) {
    let clients = Arc::clone(&node.clients);
    let for_settings = Arc::downgrade(node);
    let for_pools = Arc::downgrade(node);
    let streaming = node.streaming.clone();
    let repair = node.repair.clone();
    node.processor.virtual_tables().install(NodeSources {
        clients: Some(Box::new(move || {
            clients.snapshot().iter().map(connected).collect()
        })),
        settings: Some(Box::new(move || {
            let Some(node) = for_settings.upgrade() else {
                return Vec::new();
            };
            live_config(&node)
                .settings()
                .into_iter()
                .map(|(name, value)| (name.to_string(), value))
                .collect()
        })),
        thread_pools: Some(Box::new(move || {
            for_pools
                .upgrade()
                .map(|node| admin::tpstats(&node).into_iter().map(pool).collect())
                .unwrap_or_default()
        })),
        streams: Some(Box::new(move || {
            streaming
                .as_ref()
                .map(|s| s.sessions().iter().map(stream_state).collect())
                .unwrap_or_default()
        })),
        repairs: Some(Box::new(move || {
            repair
                .as_ref()
                .map(|r| r.statuses().iter().map(repair_row).collect())
                .unwrap_or_default()
        })),
    });
}

/// The configuration with the values nodetool changes at run time (compaction throughput
/// and compactors, stream throughputs, request timeouts) replaced by the live ones, as Cassandra's settings
/// table shows them.
fn live_config(node: &AdminNode) -> Config {
    let mut config = (*node.config).clone();
    let storage = &node.storage;
    config.compaction_throughput = DataRate::bytes_per_second(storage.compaction_throughput());
    config.concurrent_compactors = u32::try_from(storage.concurrent_compactors()).ok();
    if let Some(streaming) = &node.streaming {
        config.stream_throughput_outbound = DataRate::bytes_per_second(streaming.throttle().rate());
        config.entire_sstable_stream_throughput_outbound =
            DataRate::bytes_per_second(streaming.entire_sstable_throttle().rate());
    }
    let timeouts = node.coordinator.timeouts();
    config.read_request_timeout = timeouts.get(TimeoutKind::Read);
    config.range_request_timeout = timeouts.get(TimeoutKind::Range);
    config.write_request_timeout = timeouts.get(TimeoutKind::Write);
    config.counter_write_request_timeout = timeouts.get(TimeoutKind::CounterWrite);
    config
}

fn stream_state(info: &streaming::SessionInfo) -> StreamState {
    let finished = match &info.state {
        streaming::State::Complete => Some(None),
        streaming::State::Failed(why) => Some(Some(why.clone())),
        streaming::State::Preparing | streaming::State::Streaming => None,
    };
    StreamState {
        id: info.id,
        operation: info.description.clone(),
        peer: info.peer.to_string(),
        sending: info.direction == streaming::Direction::Sending,
        finished,
        files_total: info.files_total,
        files_done: info.files_done,
        bytes_total: info.bytes_total,
        bytes_done: info.bytes_done,
        started_ms: i64::try_from(info.started_ms).unwrap_or(i64::MAX),
        duration_ms: i64::try_from(info.elapsed.as_millis()).unwrap_or(i64::MAX),
    }
}

fn repair_row(s: &repair::RepairStatus) -> RepairRow {
    let finished = match &s.state {
        repair::RepairState::Running => None,
        repair::RepairState::Success => Some(None),
        repair::RepairState::Failed(why) => Some(Some(why.clone())),
    };
    let ranges = s
        .range_groups
        .iter()
        .map(|group| group.iter().map(|(l, r)| format!("({l},{r}]")).collect())
        .collect();
    RepairRow {
        id: s.id,
        command: i32::try_from(s.command).unwrap_or(i32::MAX),
        keyspace: s.keyspace.clone(),
        kind: s.kind.clone(),
        tables: s.tables.clone(),
        finished,
        success_message: s.success_message.clone(),
        sequential: s.sequential,
        incremental: s.incremental,
        job_threads: i32::try_from(s.job_threads).unwrap_or(i32::MAX),
        preview_kind: s
            .preview
            .map_or("NONE", repair::PreviewKind::name)
            .to_string(),
        participants: s
            .participants
            .iter()
            .map(|a| repair::endpoint(*a))
            .collect(),
        ranges,
        sessions: s.sessions.clone(),
        started_ms: i64::try_from(s.started_ms).unwrap_or(i64::MAX),
        duration_ms: i64::try_from(s.elapsed_ms).unwrap_or(i64::MAX),
    }
}

fn connected(info: &ClientInfo) -> ConnectedClient {
    ConnectedClient {
        address: info.peer,
        protocol_version: (info.protocol_version > 0).then_some(info.protocol_version),
        driver_name: info.driver.driver_name.clone(),
        driver_version: info.driver.driver_version.clone(),
        keyspace: info.keyspace.clone(),
        request_count: info.request_count,
        options: info.driver.options.clone(),
    }
}

fn pool(stats: admin::types::PoolStats) -> ThreadPool {
    ThreadPool {
        name: stats.name,
        active: stats.active,
        pending: stats.pending,
        completed: stats.completed,
        blocked: stats.blocked,
        blocked_all_time: stats.all_time_blocked,
    }
}
