//! `GET /metrics`: the node's figures in the Prometheus text format (see `exposition`), from a
//! snapshot taken at scrape time (nothing is kept in between).

use coordinator::RequestKind;
use mutation::TableId;
use storage::Percentiles;

use crate::api::tables::select;
use crate::api::types::TableSelection;
use crate::error::ApiResult;
use crate::exposition::{Labels, Sample, Snapshot, Summary};
use crate::node::AdminNode;

/// The node's metrics in the Prometheus text format.
pub fn render(node: &AdminNode) -> ApiResult<String> {
    let mut snapshot = Snapshot::default();
    client_requests(node, &mut snapshot);
    crate::proxy_metrics::add(node, &mut snapshot);
    tables(node, &mut snapshot)?;
    node_figures(node, &mut snapshot);
    pools(node, &mut snapshot);
    messages(node, &mut snapshot);
    hints(node, &mut snapshot);
    Ok(snapshot.encode())
}

fn client_requests(node: &AdminNode, snapshot: &mut Snapshot) {
    let metrics = node.coordinator.metrics();
    let samples = RequestKind::ALL
        .iter()
        .flat_map(|&kind| {
            metrics.requests(kind).into_iter().map(move |(cl, h)| {
                let labels = vec![
                    ("request", kind.name().to_string()),
                    ("consistency", cl.name().to_string()),
                ];
                (labels, Sample::Latency(h))
            })
        })
        .collect();
    snapshot.add(
        "helenus_client_request_latency_seconds",
        "Coordinator latency of client requests by kind and consistency level",
        samples,
    );
}

/// Per-table families, in the order they are added.
#[derive(Default)]
struct TableFamilies {
    reads: Vec<(Labels, Sample)>,
    range_reads: Vec<(Labels, Sample)>,
    writes: Vec<(Labels, Sample)>,
    read_latency: Vec<(Labels, Sample)>,
    write_latency: Vec<(Labels, Sample)>,
    sstables: Vec<(Labels, Sample)>,
    disk: Vec<(Labels, Sample)>,
    memtable: Vec<(Labels, Sample)>,
    flushes: Vec<(Labels, Sample)>,
    pending: Vec<(Labels, Sample)>,
    sstables_per_read: Vec<(Labels, Sample)>,
    tombstones_per_read: Vec<(Labels, Sample)>,
    corrupt_reads: Vec<(Labels, Sample)>,
}

/// A per-read histogram as a summary: median, 99th percentile and maximum (quantile `1`), the
/// reads counted and their sum (from the histogram's mean: exact below 256 a read, within 1%
/// above).
fn per_read(p: &Percentiles) -> Sample {
    let quantiles = [("0.5", p.p50), ("0.99", p.p99), ("1", p.max)];
    Sample::Summary(Summary {
        quantiles: quantiles.map(|(q, v)| (q, v as f64)).to_vec(),
        count: p.count,
        sum: (p.mean * p.count as f64).round(),
    })
}

fn tables(node: &AdminNode, snapshot: &mut Snapshot) -> ApiResult<()> {
    let mut f = TableFamilies::default();
    for table in select(node, &TableSelection::default())? {
        let id = TableId(table.id);
        let Ok(usage) = node.storage.table_usage(id) else {
            continue;
        };
        let labels = vec![
            ("keyspace", table.keyspace.clone()),
            ("table", table.name.clone()),
        ];
        if let Some(m) = node.coordinator.metrics().table_if_used(id) {
            let (reads, writes) = (m.reads.snapshot(), m.writes.snapshot());
            f.reads.push((labels.clone(), Sample::Counter(reads.count)));
            f.range_reads.push((
                labels.clone(),
                Sample::Counter(m.range_reads.snapshot().count),
            ));
            f.writes
                .push((labels.clone(), Sample::Counter(writes.count)));
            f.read_latency
                .push((labels.clone(), Sample::Latency(reads)));
            f.write_latency
                .push((labels.clone(), Sample::Latency(writes)));
        }
        f.sstables
            .push((labels.clone(), Sample::Gauge(usage.sstables as i64)));
        f.disk
            .push((labels.clone(), Sample::Gauge(usage.disk_bytes as i64)));
        f.memtable
            .push((labels.clone(), Sample::Gauge(usage.memtable_bytes as i64)));
        f.flushes
            .push((labels.clone(), Sample::Counter(usage.flushes)));
        f.pending.push((
            labels.clone(),
            Sample::Gauge(usage.pending_compactions as i64),
        ));
        if let Ok(m) = node.storage.table_metrics(id) {
            f.sstables_per_read
                .push((labels.clone(), per_read(&m.sstables_per_read)));
            f.tombstones_per_read
                .push((labels.clone(), per_read(&m.tombstones_per_read)));
            f.corrupt_reads
                .push((labels.clone(), Sample::Counter(m.corrupt_reads)));
        }
    }
    snapshot.add(
        "helenus_table_reads_total",
        "Local single-partition reads",
        f.reads,
    );
    snapshot.add(
        "helenus_table_range_reads_total",
        "Local partition-range reads",
        f.range_reads,
    );
    snapshot.add(
        "helenus_table_writes_total",
        "Local partition updates",
        f.writes,
    );
    snapshot.add(
        "helenus_table_read_latency_seconds",
        "Local read latency",
        f.read_latency,
    );
    snapshot.add(
        "helenus_table_write_latency_seconds",
        "Local write latency",
        f.write_latency,
    );
    snapshot.add("helenus_table_live_sstables", "Live SSTables", f.sstables);
    snapshot.add(
        "helenus_table_live_disk_bytes",
        "Bytes on disk of the live SSTables",
        f.disk,
    );
    snapshot.add(
        "helenus_table_memtable_bytes",
        "Memory of the memtables",
        f.memtable,
    );
    snapshot.add(
        "helenus_table_flushes_total",
        "Memtables flushed to SSTables",
        f.flushes,
    );
    snapshot.add(
        "helenus_table_pending_compactions",
        "Background compactions due",
        f.pending,
    );
    snapshot.add(
        "helenus_table_sstables_per_read",
        "SSTables touched per single-partition read (since the table was opened)",
        f.sstables_per_read,
    );
    snapshot.add(
        "helenus_table_tombstones_per_read",
        "Tombstones scanned per read (since the table was opened)",
        f.tombstones_per_read,
    );
    snapshot.add(
        "helenus_table_corrupt_reads_total",
        "Reads failed by corrupt SSTable data (since the table was opened)",
        f.corrupt_reads,
    );
    Ok(())
}

/// The `tpstats` pools: work in flight, queued and done (queue depths).
fn pools(node: &AdminNode, snapshot: &mut Snapshot) {
    let (mut active, mut pending, mut completed) = (Vec::new(), Vec::new(), Vec::new());
    for pool in crate::api::pools::tpstats(node) {
        let labels = vec![("pool", pool.name)];
        active.push((labels.clone(), Sample::Gauge(pool.active as i64)));
        pending.push((labels.clone(), Sample::Gauge(pool.pending as i64)));
        completed.push((labels, Sample::Counter(pool.completed)));
    }
    snapshot.add(
        "helenus_pool_active",
        "Tasks running (nodetool tpstats)",
        active,
    );
    snapshot.add(
        "helenus_pool_pending",
        "Tasks waiting (nodetool tpstats)",
        pending,
    );
    snapshot.add(
        "helenus_pool_completed_total",
        "Tasks done (nodetool tpstats)",
        completed,
    );
}

/// Internode messages per verb: dropped unstarted, and how long those that ran waited for
/// their handler (the message table of `tpstats`), a summary of verbs received at least once.
fn messages(node: &AdminNode, snapshot: &mut Snapshot) {
    let (mut dropped, mut waits) = (Vec::new(), Vec::new());
    for verb in crate::api::pools::verb_stats(node) {
        let labels = vec![("verb", verb.verb.name().to_string())];
        dropped.push((labels.clone(), Sample::Counter(verb.dropped)));
        let wait = &verb.queue_wait;
        if wait.count() == 0 {
            continue;
        }
        let mut quantiles: Vec<(&str, f64)> = [("0.5", 0.5), ("0.95", 0.95), ("0.99", 0.99)]
            .into_iter()
            .map(|(q, f)| (q, wait.percentile_micros(f) as f64))
            .collect();
        quantiles.push(("1", wait.max_micros() as f64));
        let summary = Summary {
            quantiles,
            count: wait.count(),
            sum: wait.sum_micros as f64,
        };
        waits.push((labels, Sample::Summary(summary)));
    }
    snapshot.add(
        "helenus_messages_dropped_total",
        "Internode messages received and dropped: expired before their handler started",
        dropped,
    );
    snapshot.add(
        "helenus_message_queue_wait_micros",
        "Microseconds internode messages waited between arrival and their handler's start",
        waits,
    );
}

fn node_figures(node: &AdminNode, snapshot: &mut Snapshot) {
    let totals = node.storage.compaction_totals();
    let remaining: u64 = node
        .storage
        .compactions()
        .iter()
        .map(|c| c.bytes_total.saturating_sub(c.bytes_done))
        .sum();
    snapshot.one(
        "helenus_compactions_completed_total",
        "Compactions completed",
        Sample::Counter(totals.completed),
    );
    snapshot.one(
        "helenus_compaction_bytes_compacted_total",
        "Input bytes of completed compactions",
        Sample::Counter(totals.bytes_compacted),
    );
    snapshot.one(
        "helenus_compaction_pending_bytes",
        "Input bytes running compactions have yet to process",
        Sample::Gauge(remaining as i64),
    );
    snapshot.one(
        "helenus_commitlog_bytes",
        "Bytes of commit-log segments on disk",
        Sample::Gauge(node.storage.commitlog_bytes() as i64),
    );
    snapshot.one(
        "helenus_flush_failures_total",
        "Memtable flushes that failed (a full or broken disk)",
        Sample::Counter(node.storage.flush_failures()),
    );
    snapshot.one(
        "helenus_unwritable_data_directories",
        "Data directories disk_failure_policy best_effort took out of use",
        Sample::Gauge(node.storage.unwritable_dirs().len() as i64),
    );
    snapshot.one(
        "helenus_native_transport_running",
        "1 while the native transport serves clients (nodetool statusbinary)",
        Sample::Gauge(i64::from(node.lifecycle.transport().running)),
    );
    snapshot.one(
        "helenus_native_connections",
        "Open native-protocol connections",
        Sample::Gauge(node.clients.len() as i64),
    );
    snapshot.one(
        "helenus_native_requests_active",
        "Native-protocol requests in flight",
        Sample::Gauge(node.native.active() as i64),
    );
    snapshot.one(
        "helenus_native_requests_total",
        "Native-protocol requests completed",
        Sample::Counter(node.native.completed()),
    );
    native_limits(node, snapshot);
}

/// The native transport's overload limits (Cassandra's `Client` metrics).
fn native_limits(node: &AdminNode, snapshot: &mut Snapshot) {
    let limits = node.native_limits.stats();
    let gauge = |v: u64| Sample::Gauge(i64::try_from(v).unwrap_or(i64::MAX));
    let families = [
        (
            "helenus_native_request_bytes_in_flight",
            "Request bytes held by requests being read (as their bytes arrive) or run (Client.RequestsSize)",
            gauge(limits.bytes_in_flight),
        ),
        (
            "helenus_native_request_bytes_announced",
            "Declared lengths of the large request bodies being received",
            gauge(limits.bytes_announced),
        ),
        (
            "helenus_native_request_bytes_limit",
            "native_transport_max_request_data_in_flight",
            gauge(limits.bytes_limit),
        ),
        (
            "helenus_native_paused_connections",
            "Connections not read from, waiting for request budget or the rate limit (Client.PausedConnections)",
            gauge(limits.paused_connections),
        ),
        (
            "helenus_native_connection_pauses_total",
            "Times a connection was paused by the overload limits",
            Sample::Counter(limits.pauses),
        ),
        (
            "helenus_native_requests_discarded_total",
            "Requests answered Overloaded (Client.RequestDiscarded)",
            Sample::Counter(limits.discarded),
        ),
        (
            "helenus_native_connections_refused_total",
            "Connections closed on arrival for exceeding a connection limit",
            Sample::Counter(limits.refused_connections),
        ),
        (
            "helenus_native_connections_timed_out_total",
            "Connections closed for idling or for a frame that did not arrive in time",
            Sample::Counter(limits.timed_out_connections),
        ),
    ];
    for (name, help, sample) in families {
        snapshot.one(name, help, sample);
    }
}

/// Hinted handoff (Cassandra's `StorageMetrics.TotalHints`, `TotalHintsInProgress` and
/// `HintsServiceMetrics`); none on a node that keeps no hints.
fn hints(node: &AdminNode, snapshot: &mut Snapshot) {
    let Some(service) = node.coordinator.hints() else {
        return;
    };
    let m = service.metrics();
    let counters = [
        (
            "helenus_hints_created_total",
            "Hints stored for replicas that missed a write (TotalHints)",
            m.written,
        ),
        (
            "helenus_hints_succeeded_total",
            "Hints delivered and applied by their replica (HintsSucceeded)",
            m.dispatched,
        ),
        (
            "helenus_hints_failed_total",
            "Hint deliveries the replica answered with an error (HintsFailed)",
            m.failed,
        ),
        (
            "helenus_hints_timed_out_total",
            "Hint deliveries not answered in time (HintsTimedOut)",
            m.timed_out,
        ),
        (
            "helenus_hints_expired_total",
            "Hints dropped unsent: past their gc grace, or their table is gone",
            m.expired,
        ),
        (
            "helenus_hints_corrupt_total",
            "Hint records or files found corrupt",
            m.corrupt,
        ),
        (
            "helenus_hints_not_stored_total",
            "Hints refused (window passed, size limits) or lost to a disk error",
            m.not_stored,
        ),
    ];
    for (name, help, value) in counters {
        snapshot.one(name, help, Sample::Counter(value));
    }
    snapshot.one(
        "helenus_hints_in_progress",
        "Hints accepted and not yet written to their file (TotalHintsInProgress)",
        Sample::Gauge(m.in_progress as i64),
    );
    let pending = m.bytes_on_disk.iter().map(|(host, bytes)| {
        let labels = vec![("host_id", host.to_string())];
        (
            labels,
            Sample::Gauge(i64::try_from(*bytes).unwrap_or(i64::MAX)),
        )
    });
    snapshot.add(
        "helenus_hints_pending_bytes",
        "Bytes of hints waiting per host, on disk and buffered",
        pending.collect(),
    );
}
