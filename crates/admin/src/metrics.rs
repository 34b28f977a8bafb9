//! `GET /metrics`: the node's figures in the Prometheus text format, encoded with
//! `prometheus-client` from a snapshot taken at scrape time (nothing is kept in between).

use coordinator::metrics::{LatencySnapshot, LATENCY_BOUNDS_MICROS};
use coordinator::RequestKind;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use storage::{Percentiles, TableId};

use crate::api::tables::select;
use crate::api::types::TableSelection;
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

pub(crate) type Labels = Vec<(&'static str, String)>;

/// One metric family: its name, help, type and samples.
#[derive(Debug)]
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(Labels, Sample)>,
}

#[derive(Debug)]
pub(crate) enum Sample {
    Counter(u64),
    Gauge(i64),
    Latency(LatencySnapshot),
}

impl Sample {
    fn metric_type(&self) -> MetricType {
        match self {
            Sample::Counter(_) => MetricType::Counter,
            Sample::Gauge(_) => MetricType::Gauge,
            Sample::Latency(_) => MetricType::Histogram,
        }
    }
}

/// The figures of one scrape.
#[derive(Debug, Default)]
pub(crate) struct Snapshot(Vec<Family>);

impl Snapshot {
    pub(crate) fn add(
        &mut self,
        name: &'static str,
        help: &'static str,
        samples: Vec<(Labels, Sample)>,
    ) {
        if !samples.is_empty() {
            self.0.push(Family {
                name,
                help,
                samples,
            });
        }
    }

    pub(crate) fn one(&mut self, name: &'static str, help: &'static str, sample: Sample) {
        self.add(name, help, vec![(Vec::new(), sample)]);
    }
}

impl Collector for Snapshot {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for family in &self.0 {
            let kind = family.samples[0].1.metric_type();
            let mut metric = encoder.encode_descriptor(family.name, family.help, None, kind)?;
            for (labels, sample) in &family.samples {
                if labels.is_empty() {
                    encode_sample(&mut metric, sample)?;
                } else {
                    encode_sample(&mut metric.encode_family(labels)?, sample)?;
                }
            }
        }
        Ok(())
    }
}

fn encode_sample(encoder: &mut MetricEncoder<'_>, sample: &Sample) -> Result<(), std::fmt::Error> {
    match sample {
        Sample::Counter(v) => encoder.encode_counter::<NoLabelSet, _, u64>(v, None),
        Sample::Gauge(v) => encoder.encode_gauge(v),
        Sample::Latency(h) => {
            let buckets = histogram_buckets(h);
            let sum = h.sum_micros as f64 / 1e6;
            encoder.encode_histogram::<NoLabelSet>(sum, h.count, &buckets, None)
        }
    }
}

/// (upper bound in seconds, observations in that bucket) pairs; the encoder accumulates them.
fn histogram_buckets(h: &LatencySnapshot) -> Vec<(f64, u64)> {
    LATENCY_BOUNDS_MICROS
        .iter()
        .map(|&b| b as f64 / 1e6)
        .chain([f64::MAX])
        .zip(h.buckets.iter().copied())
        .collect()
}

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
    let mut registry = Registry::default();
    registry.register_collector(Box::new(snapshot));
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry)
        .map_err(|e| ApiError::internal(format!("cannot encode metrics: {e}")))?;
    Ok(text)
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

/// Median, 99th percentile and maximum of a per-read histogram, as `quantile` gauges.
fn quantiles(labels: &Labels, p: &Percentiles) -> Vec<(Labels, Sample)> {
    [("0.5", p.p50), ("0.99", p.p99), ("1", p.max)]
        .into_iter()
        .map(|(q, v)| {
            let mut labels = labels.clone();
            labels.push(("quantile", q.to_string()));
            (labels, Sample::Gauge(v as i64))
        })
        .collect()
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
        if let Ok(per_read) = node.storage.table_metrics(id) {
            f.sstables_per_read
                .extend(quantiles(&labels, &per_read.sstables_per_read));
            f.tombstones_per_read
                .extend(quantiles(&labels, &per_read.tombstones_per_read));
            f.corrupt_reads
                .push((labels.clone(), Sample::Counter(per_read.corrupt_reads)));
        }
    }
    snapshot.add(
        "helenus_table_reads",
        "Local single-partition reads",
        f.reads,
    );
    snapshot.add(
        "helenus_table_range_reads",
        "Local partition-range reads",
        f.range_reads,
    );
    snapshot.add("helenus_table_writes", "Local partition updates", f.writes);
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
        "helenus_table_flushes",
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
        "helenus_table_corrupt_reads",
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
        "helenus_pool_completed",
        "Tasks done (nodetool tpstats)",
        completed,
    );
}

/// Internode messages per verb: dropped unstarted, and how long those that ran waited for
/// their handler (the message table of `tpstats`).
fn messages(node: &AdminNode, snapshot: &mut Snapshot) {
    let (mut dropped, mut waits) = (Vec::new(), Vec::new());
    for verb in crate::api::pools::dropped(node) {
        let labels = vec![("verb", verb.message_type)];
        dropped.push((labels.clone(), Sample::Counter(verb.dropped)));
        let w = verb.queue_wait_micros;
        if w.max == 0 {
            continue;
        }
        for (q, v) in [
            ("0.5", w.p50),
            ("0.95", w.p95),
            ("0.99", w.p99),
            ("1", w.max),
        ] {
            let mut labels = labels.clone();
            labels.push(("quantile", q.to_string()));
            waits.push((labels, Sample::Gauge(i64::try_from(v).unwrap_or(i64::MAX))));
        }
    }
    snapshot.add(
        "helenus_messages_dropped",
        "Internode messages received and dropped: expired before their handler started",
        dropped,
    );
    snapshot.add(
        "helenus_message_queue_wait_micros",
        "Time internode messages waited between arrival and their handler's start",
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
        "helenus_compactions_completed",
        "Compactions completed",
        Sample::Counter(totals.completed),
    );
    snapshot.one(
        "helenus_compaction_bytes_compacted",
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
        "helenus_flush_failures",
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
        "helenus_native_requests",
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
            "Request bytes reserved by requests being read or run (Client.RequestsSize)",
            gauge(limits.bytes_in_flight),
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
            "helenus_native_connection_pauses",
            "Times a connection was paused by the overload limits",
            Sample::Counter(limits.pauses),
        ),
        (
            "helenus_native_requests_discarded",
            "Requests answered Overloaded (Client.RequestDiscarded)",
            Sample::Counter(limits.discarded),
        ),
        (
            "helenus_native_connections_refused",
            "Connections closed on arrival for exceeding a connection limit",
            Sample::Counter(limits.refused_connections),
        ),
        (
            "helenus_native_connections_timed_out",
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
            "helenus_hints_created",
            "Hints stored for replicas that missed a write (TotalHints)",
            m.written,
        ),
        (
            "helenus_hints_succeeded",
            "Hints delivered and applied by their replica (HintsSucceeded)",
            m.dispatched,
        ),
        (
            "helenus_hints_failed",
            "Hint deliveries the replica answered with an error (HintsFailed)",
            m.failed,
        ),
        (
            "helenus_hints_timed_out",
            "Hint deliveries not answered in time (HintsTimedOut)",
            m.timed_out,
        ),
        (
            "helenus_hints_expired",
            "Hints dropped unsent: past their gc grace, or their table is gone",
            m.expired,
        ),
        (
            "helenus_hints_corrupt",
            "Hint records or files found corrupt",
            m.corrupt,
        ),
        (
            "helenus_hints_not_stored",
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
