//! `helenus server`: reads the configuration, opens storage, starts the query processor, the
//! native-protocol server and the admin API, and shuts down cleanly on SIGTERM/SIGINT or
//! `nodetool stopdaemon`; `nodetool drain` stops the CQL listener and flushes everything but
//! leaves the admin API up until the process is told to stop. A drain that cannot finish (a
//! failed or stuck disk) is logged and given up after [`DRAIN_LIMIT`]: the process still exits.
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Weak};
use std::time::Duration;

use admin::{AdminNode, Lifecycle, NativeStats};
use config::{CommitLogSync, Config, MemtableAllocationType};
use coordinator::{Coordinator, Timeouts};
use metadata::MetadataService;
use nodeops::NodeOps;
use query::{NodeInfo, QueryProcessor, RELEASE_VERSION};
use ring::Endpoint;
use storage::{CommitlogSync, MemtableAllocation, Storage, StorageConfig};
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::broadcast;
use transport::{Event, Server, ServerConfig};

use crate::failures;
use crate::handler::Handler;
use crate::internode::ClusterServices;
use crate::logging::Logging;
use crate::native;
use crate::{join, membership};

/// How long the drain at shutdown may flush before the node stops without it.
const DRAIN_LIMIT: Duration = Duration::from_secs(30);
/// How long a starting node waits for gossip to see the ring's other nodes up before it serves
/// clients (Cassandra waits at least 5 s for gossip to settle).
const GOSSIP_SETTLE_LIMIT: Duration = Duration::from_secs(5);

pub fn run(config_path: Option<&Path>) -> ExitCode {
    crate::allocator::keep_freed_memory();
    let logging = Logging::init();
    transport::install_panic_hook();
    let (config, admin_token) = match load_config(config_path) {
        Ok(loaded) => loaded,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("helenus: {e}");
            return ExitCode::from(2);
        }
    };
    match logging.open_file() {
        Ok(path) => tracing::info!("logging to {}", path.display()),
        Err(e) => tracing::warn!("not logging to a file: {e}"),
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("helenus: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(serve(config, admin_token, logging));
    // A drain given up on a stuck disk leaves its blocking task behind: do not wait for it.
    runtime.shutdown_timeout(Duration::from_secs(1));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("helenus: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The configuration and the admin API's token (read from `admin_auth_token_file`).
fn load_config(path: Option<&Path>) -> Result<(Config, Option<String>), String> {
    let Some(path) = path else {
        let mut config = Config::default();
        apply_jvm_options(&mut config)?;
        return Ok((config, None));
    };
    let mut loaded = config::load(path).map_err(|e| e.to_string())?;
    apply_jvm_options(&mut loaded.config)?;
    if !loaded.ignored.is_empty() {
        tracing::info!(
            "settings not used by Helenus (ignored): {}",
            loaded.ignored.join(", ")
        );
    }
    loaded.config.validate().map_err(|e| e.to_string())?;
    let token = loaded.config.admin_auth_token_file.as_deref();
    let token = token.map(admin::read_token).transpose()?;
    tracing::info!("configuration loaded from {}", path.display());
    Ok((loaded.config, token))
}

/// The `-Dcassandra.*` properties of `JVM_OPTS` and `JVM_EXTRA_OPTS` Helenus honours
/// (`replace_address_first_boot`, `ring_delay_ms`, `consistent.rangemovement`), as Cassandra's
/// start script passes them.
fn apply_jvm_options(config: &mut Config) -> Result<(), String> {
    for var in ["JVM_OPTS", "JVM_EXTRA_OPTS"] {
        if let Ok(options) = std::env::var(var) {
            config::apply_jvm_options(config, &options).map_err(|e| format!("{var}: {e}"))?;
        }
    }
    Ok(())
}

fn storage_config(config: &Config) -> StorageConfig {
    let data_dir = config
        .data_file_directories
        .first()
        .cloned()
        .unwrap_or_else(|| "data/data".into());
    let mut sc = StorageConfig::new(data_dir, config.commitlog_directory.clone());
    sc.data_dirs = config.data_file_directories.clone();
    sc.segment_size = config.commitlog_segment_size.as_bytes();
    sc.sync = match config.commitlog_sync {
        CommitLogSync::Periodic => CommitlogSync::Periodic {
            period: config.commitlog_sync_period,
        },
        CommitLogSync::Batch => CommitlogSync::Batch,
        CommitLogSync::Group => CommitlogSync::Group {
            window: config.commitlog_sync_group_window,
        },
    };
    if let Some(space) = config.memtable_heap_space {
        sc.memtable_space = space.as_bytes();
    }
    if let Some(space) = config.memtable_offheap_space {
        sc.memtable_offheap_space = space.as_bytes();
    }
    sc.memtable_allocation = match config.memtable_allocation_type {
        MemtableAllocationType::OffheapBuffers | MemtableAllocationType::OffheapObjects => {
            MemtableAllocation::Offheap
        }
        MemtableAllocationType::HeapBuffers
        | MemtableAllocationType::UnslabbedHeapBuffers
        | MemtableAllocationType::UnslabbedHeapBuffersLogged => MemtableAllocation::Heap,
    };
    if let Some(threshold) = config.memtable_cleanup_threshold {
        sc.memtable_cleanup_threshold = threshold;
    }
    if let Some(space) = config.commitlog_total_space {
        sc.commitlog_total_space = space.as_bytes();
    }
    sc.compaction_throughput = config.compaction_throughput.as_bytes_per_second();
    if let Some(compactors) = config.concurrent_compactors {
        sc.concurrent_compactors = compactors as usize;
    }
    if let Some(size) = config.key_cache_size {
        sc.key_cache_size = size.as_bytes();
    }
    if let Some(size) = config.file_cache_size {
        sc.file_cache_size = size.as_bytes();
    }
    if !config.file_cache_enabled {
        sc.file_cache_size = 0;
    }
    sc.tombstone_warn_threshold = u64::from(config.tombstone_warn_threshold);
    sc.tombstone_failure_threshold = u64::from(config.tombstone_failure_threshold);
    sc.auto_snapshot = config.auto_snapshot;
    sc.disk_failure_policy = config.disk_failure_policy;
    sc.commit_failure_policy = config.commit_failure_policy;
    sc
}

/// The native transport's settings: frame size, request data in flight, overload answers,
/// rate limit, idle timeout and connection caps (Cassandra's -1 meaning no cap).
fn transport_config(config: &Config) -> ServerConfig {
    let (in_flight, in_flight_per_ip) = config.request_data_in_flight();
    let cap = |limit: i64| u64::try_from(limit).ok();
    let per_ip = config.native_transport_max_concurrent_connections_per_ip;
    let idle = config.native_transport_idle_timeout;
    ServerConfig {
        max_frame_bytes: config.native_transport_max_frame_size.as_bytes() as usize,
        max_request_data_in_flight: in_flight,
        max_request_data_in_flight_per_ip: in_flight_per_ip,
        throw_on_overload: config.native_transport_throw_on_overload,
        max_requests_per_second: config
            .native_transport_rate_limiting_enabled
            .then_some(config.native_transport_max_requests_per_second),
        idle_timeout: (!idle.is_zero()).then_some(idle),
        max_connections: cap(config.native_transport_max_concurrent_connections),
        max_connections_per_ip: cap(per_ip).filter(|&n| n > 0),
        ..ServerConfig::default()
    }
}

async fn serve(
    config: Config,
    admin_token: Option<String>,
    logging: Arc<Logging>,
) -> Result<(), String> {
    let started = std::time::Instant::now();
    let mut signals = StopSignals::install();
    crate::decommissioned::refuse_if_marked(&config.metadata_directory)?;
    let storage = Arc::new(
        Storage::open(storage_config(&config)).map_err(|e| format!("cannot open storage: {e}"))?,
    );
    let endpoint = Endpoint {
        addr: config.listen_address,
        datacenter: config.location.data_center.as_str().into(),
        rack: config.location.rack.as_str().into(),
        host_id: [0; 16],
    };
    let timeouts = Timeouts {
        read: config.read_request_timeout,
        range: config.range_request_timeout,
        write: config.write_request_timeout,
        counter_write: config.counter_write_request_timeout,
    };
    let coordinator = Arc::new(
        Coordinator::new(storage.clone(), endpoint, timeouts)
            .with_storage_port(config.storage_port),
    );
    let slow_queries = coordinator.slow_queries();
    slow_queries.set_threshold(config.slow_query_log_timeout);
    tokio::spawn(slow_queries.clone().report_periodically());
    let node = NodeInfo {
        cluster_name: config.cluster_name.clone(),
        listen_address: config.listen_address,
        rpc_address: config.rpc_address,
        native_port: config.native_transport_port,
        storage_port: config.storage_port,
        data_center: config.location.data_center.clone(),
        rack: config.location.rack.clone(),
        release_version: RELEASE_VERSION.into(),
        tokens: config.initial_token.clone(),
        host_id: uuid::Uuid::nil(),
    };
    let processor = system::start(coordinator.clone(), storage.clone(), node)
        .await
        .map_err(|e| format!("cannot start: {e}"))?;
    processor.set_limits(query::Limits::from_config(&config));
    let addr = SocketAddr::new(config.rpc_address, config.native_transport_port);
    let listener = bind(addr).await?;
    let admin_listener = bind(SocketAddr::new(config.admin_address, config.admin_port)).await?;
    let cluster =
        ClusterServices::start(&config, processor.node(), &processor.schema().schema).await?;
    processor.attach_metadata(cluster.metadata.clone());
    if let Some(remote) = cluster.remote(config.storage_port) {
        coordinator.attach_remote(remote);
    }
    let hints = crate::hints::start(crate::hints::HintsNode {
        config: &config,
        cluster: &cluster,
        processor: &processor,
        coordinator: &coordinator,
        storage: &storage,
    })
    .await?;
    let streaming = cluster.messaging.as_ref().map(|messaging| {
        Arc::new(streaming::Streaming::start(
            storage.clone(),
            messaging.clone(),
            stream_config(&config),
        ))
    });
    let repair =
        cluster
            .messaging
            .as_ref()
            .zip(streaming.as_ref())
            .map(|(messaging, streaming)| {
                Arc::new(repair::Repair::start(
                    storage.clone(),
                    messaging.clone(),
                    streaming.clone(),
                    repair::RepairConfig::default(),
                ))
            });
    coordinator.start_batchlog_replay(config.batchlog_replay_throttle.as_bytes());
    tokio::spawn(record_size_estimates(
        Arc::downgrade(&processor),
        coordinator.clone(),
        storage.clone(),
    ));
    let ops = NodeOps::new(
        cluster.metadata.clone(),
        processor.clone(),
        cluster.membership(),
        nodeops_settings(&config),
    );
    if let Some(streaming) = &streaming {
        let mover =
            nodeops::StreamMover::new(streaming.clone(), processor.clone(), config.storage_port);
        ops.set_mover(Arc::new(mover));
    }
    // The admin API serves from here, so that nodetool netstats follows a bootstrap.
    let (events, _) = broadcast::channel(1024);
    let native = Arc::new(NativeStats::default());
    let handler = Arc::new(Handler {
        processor: processor.clone(),
        stats: native.clone(),
    });
    let server = Server::new(handler, events.clone(), transport_config(&config));
    let lifecycle = Arc::new(Lifecycle::default());
    let admin_node = Arc::new(AdminNode {
        storage: storage.clone(),
        coordinator: coordinator.clone(),
        processor: processor.clone(),
        config: Arc::new(config.clone()),
        clients: server.clients(),
        native,
        native_limits: server.limits(),
        lifecycle: lifecycle.clone(),
        metadata: cluster.metadata.clone(),
        nodeops: ops.clone(),
        gossip: cluster.membership(),
        messaging: cluster.messaging.clone(),
        streaming,
        repair,
        logging,
        started,
        generation: admin::generation_now(),
    });
    crate::virtual_sources::install(&admin_node);
    let admin = tokio::spawn(admin::serve(
        admin_listener,
        admin_node,
        admin_token,
        admin_stopped(lifecycle.clone()),
    ));
    let tokens = join::join(&cluster.metadata, &processor, &config, &ops).await?;
    tracing::info!("joined the ring with {} tokens", tokens.len());
    forward_schema_events(&processor, events.clone());
    membership::start(
        &cluster,
        processor.clone(),
        coordinator.clone(),
        storage.clone(),
        events,
    );
    if let (Some(messaging), Some(gossip)) = (&cluster.messaging, cluster.membership()) {
        crate::reconnect::start(messaging.clone(), gossip.clone());
        crate::clock_skew::start(messaging.clone(), gossip, config.listen_address);
    }
    cluster
        .await_peers_up(config.listen_address, GOSSIP_SETTLE_LIMIT)
        .await;
    storage.on_failure(failures::listener(lifecycle.clone(), cluster.membership()));
    tokio::spawn(leave_when_decommissioned(
        ops.clone(),
        lifecycle.clone(),
        cluster.membership(),
        config.metadata_directory.clone(),
    ));
    resume_leave(&ops, &cluster.metadata, processor.node().host_id);
    tracing::info!(
        "Starting listening for CQL clients on {addr} (unencrypted), admin API on {}:{}, \
         started in {} ms",
        config.admin_address,
        config.admin_port,
        started.elapsed().as_millis()
    );
    cluster.announce_serving();
    if ops.mode() == nodeops::OperationMode::Starting {
        ops.mark_normal();
    }
    let result = native::serve(&server, addr, listener, &lifecycle, &mut signals).await;
    crate::hints::shutdown(hints.as_ref()).await;
    cluster.shutdown().await;
    drain(storage.shutdown(), DRAIN_LIMIT).await;
    lifecycle.mark_drained();
    until_stop(&lifecycle, &mut signals).await;
    if admin.await.is_err() {
        tracing::error!("the admin API task failed");
    }
    result.map_err(|e| format!("server: {e}"))
}

/// How this node's topology changes run: the ring delay and consistent range movement from the
/// settings, the data directories a join must have room in, and the file in the metadata
/// directory where a join records the ranges it has received.
fn nodeops_settings(config: &Config) -> nodeops::Settings {
    nodeops::Settings {
        consistent_rangemovement: config.consistent_rangemovement,
        data_dirs: config.data_file_directories.clone(),
        received_file: Some(config.metadata_directory.join("bootstrap_received_ranges")),
        ..nodeops::Settings::new(config.ring_delay)
    }
}

/// The stream throttles from cassandra.yaml, the rest as the crate's defaults.
fn stream_config(config: &Config) -> streaming::StreamConfig {
    streaming::StreamConfig {
        throughput: config.stream_throughput_outbound.as_bytes_per_second(),
        entire_sstable_throughput: config
            .entire_sstable_stream_throughput_outbound
            .as_bytes_per_second(),
        ..streaming::StreamConfig::default()
    }
}

/// Runs `shutdown` (flush every table, sync the commit log) for at most `limit`. A failure or
/// a timeout is logged: what was not flushed stays in the commit log for the next start.
async fn drain(shutdown: impl Future<Output = storage::Result<()>>, limit: Duration) {
    tracing::info!("draining: flushing memtables and syncing the commit log");
    match tokio::time::timeout(limit, shutdown).await {
        Ok(Ok(())) => tracing::info!("drained"),
        Ok(Err(e)) => tracing::error!(
            "drain failed: {e}; what was not flushed is replayed from the commit log at the next start"
        ),
        Err(_) => tracing::error!(
            "drain did not finish within {limit:?} (a stuck disk?); stopping without it: \
             what was not flushed is replayed from the commit log at the next start"
        ),
    }
}

/// Once this node has left the ring (decommission), it stops serving clients and gossiping,
/// as a decommissioned Cassandra node does, and marks itself so that it refuses to start again;
/// the process stays up until stopped.
async fn leave_when_decommissioned(
    ops: Arc<NodeOps>,
    lifecycle: Arc<Lifecycle>,
    gossip: Option<Arc<dyn gossip::Membership>>,
    metadata_dir: std::path::PathBuf,
) {
    ops.decommissioned().await;
    if let Err(e) = crate::decommissioned::mark(&metadata_dir) {
        tracing::error!(
            "cannot record in {} that this node was decommissioned: {e}",
            metadata_dir.display()
        );
    }
    lifecycle.stop_transport();
    if let Some(gossip) = gossip {
        gossip.stop();
    }
}

/// A node restarted in the middle of its decommission finishes it.
fn resume_leave(ops: &Arc<NodeOps>, metadata: &MetadataService, host_id: uuid::Uuid) {
    let state = metadata.current().nodes.get(&host_id).map(|n| n.state);
    if state == Some(metadata::NodeState::Leaving) {
        let ops = ops.clone();
        tokio::spawn(async move {
            if let Err(e) = ops.resume_leave().await {
                tracing::error!("cannot finish the decommission of this node: {e}");
            }
        });
    }
}

pub(crate) async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, String> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))
}

/// Resolves when the CQL listener must stop: a signal (which also stops the process) or a
/// drain or stop asked through the admin API.
pub(crate) async fn until_drain(lifecycle: &Lifecycle, signals: &mut StopSignals) {
    tokio::select! {
        _ = signals.recv() => lifecycle.request_stop(),
        _ = lifecycle.drain_requested() => {}
    }
}

/// After a drain, waits for `stopdaemon` or a signal.
async fn until_stop(lifecycle: &Lifecycle, signals: &mut StopSignals) {
    tokio::select! {
        _ = signals.recv() => lifecycle.request_stop(),
        _ = lifecycle.stop_requested() => {}
    }
}

/// The admin API stops once the process is stopping and the node is drained.
async fn admin_stopped(lifecycle: Arc<Lifecycle>) {
    lifecycle.stop_requested().await;
    lifecycle.drained().await;
}

/// Records `system.size_estimates` 30 seconds after start and then every five minutes, as
/// Cassandra does, while the node runs.
async fn record_size_estimates(
    processor: Weak<QueryProcessor>,
    coordinator: Arc<Coordinator>,
    storage: Arc<Storage>,
) {
    tokio::time::sleep(system::size_estimates::FIRST_DELAY).await;
    let mut ticks = tokio::time::interval(system::size_estimates::INTERVAL);
    loop {
        ticks.tick().await;
        let Some(processor) = processor.upgrade() else {
            return;
        };
        let schema = processor.schema().schema.clone();
        drop(processor);
        if let Err(e) = system::size_estimates::record(&coordinator, &storage, &schema).await {
            tracing::debug!("size estimates not recorded: {e}");
        }
    }
}

fn forward_schema_events(processor: &QueryProcessor, events: broadcast::Sender<Event>) {
    let mut changes = processor.subscribe();
    tokio::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(change) => {
                    let _ = events.send(Event::SchemaChange(change));
                }
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    });
}

/// SIGTERM and SIGINT, caught from the start of `serve`: a signal that arrives while the node is
/// still starting (listener already bound, say) stops it gracefully instead of killing it.
pub(crate) struct StopSignals {
    term: Option<Signal>,
    int: Option<Signal>,
}

impl StopSignals {
    fn install() -> StopSignals {
        StopSignals {
            term: signal(SignalKind::terminate()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
        }
    }

    async fn recv(&mut self) {
        match (&mut self.term, &mut self.int) {
            (Some(term), Some(int)) => {
                tokio::select! {
                    _ = term.recv() => tracing::info!("SIGTERM received"),
                    _ = int.recv() => tracing::info!("SIGINT received"),
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::{CommitFailurePolicy, DiskFailurePolicy};

    fn mapped(yaml: &str) -> StorageConfig {
        let loaded = config::load_str(yaml, Path::new("/")).expect("valid configuration");
        storage_config(&loaded.config)
    }

    #[test]
    fn storage_config_maps_pools_directories_and_commitlog_space() {
        let sc = mapped(
            "data_file_directories: [/d1, /d2]\ncommitlog_directory: /cl\n\
             memtable_heap_space: 10MiB\nmemtable_offheap_space: 20MiB\n\
             memtable_allocation_type: offheap_objects\n",
        );
        assert_eq!(sc.data_dirs, vec![Path::new("/d1"), Path::new("/d2")]);
        assert_eq!(
            (sc.memtable_space, sc.memtable_offheap_space),
            (10 << 20, 20 << 20)
        );
        assert_eq!(sc.memtable_allocation, MemtableAllocation::Offheap);
        assert_eq!(
            sc.commitlog_total_space,
            storage::default_commitlog_total_space(Path::new("/cl"))
        );

        let sc = mapped(
            "memtable_allocation_type: unslabbed_heap_buffers\ncommitlog_total_space: 1GiB\n",
        );
        assert_eq!(sc.memtable_allocation, MemtableAllocation::Heap);
        assert_eq!(sc.commitlog_total_space, 1 << 30);
    }

    #[tokio::test]
    async fn a_drain_that_hangs_is_given_up_after_its_limit() {
        let started = std::time::Instant::now();
        drain(std::future::pending(), Duration::from_millis(20)).await;
        assert!(started.elapsed() < Duration::from_secs(5));
        let failed = async { Err(storage::StorageError::Closed) };
        drain(failed, Duration::from_secs(5)).await;
    }

    #[test]
    fn transport_limits_follow_cassandra_semantics() {
        let loaded = config::load_str(
            "native_transport_max_request_data_in_flight: 64MiB\n\
             native_transport_max_request_data_in_flight_per_ip: 16MiB\n\
             native_transport_rate_limiting_enabled: true\n\
             native_transport_max_requests_per_second: 500\n\
             native_transport_idle_timeout: 30s\n\
             native_transport_max_concurrent_connections: 0\n",
            Path::new("/"),
        )
        .expect("valid configuration");
        let tc = transport_config(&loaded.config);
        assert_eq!(
            (
                tc.max_request_data_in_flight,
                tc.max_request_data_in_flight_per_ip
            ),
            (64 << 20, 16 << 20)
        );
        assert_eq!(tc.max_requests_per_second, Some(500));
        assert_eq!(tc.idle_timeout, Some(std::time::Duration::from_secs(30)));
        assert_eq!(
            (tc.max_connections, tc.max_connections_per_ip),
            (Some(0), None)
        );
        let defaults = transport_config(&Config::default());
        assert_eq!(defaults.max_requests_per_second, None);
        assert_eq!(defaults.idle_timeout, None);
        assert_eq!(
            (defaults.max_connections, defaults.max_connections_per_ip),
            (None, None)
        );
    }

    #[test]
    fn failure_policies_reach_storage() {
        let defaults = mapped("");
        assert_eq!(defaults.disk_failure_policy, DiskFailurePolicy::Stop);
        assert_eq!(defaults.commit_failure_policy, CommitFailurePolicy::Stop);
        let set = mapped("disk_failure_policy: best_effort\ncommit_failure_policy: ignore\n");
        assert_eq!(set.disk_failure_policy, DiskFailurePolicy::BestEffort);
        assert_eq!(set.commit_failure_policy, CommitFailurePolicy::Ignore);
    }

    #[test]
    fn the_chunk_cache_is_on_unless_disabled_or_sized_zero() {
        assert!(mapped("").file_cache_size > 0, "on by default");
        assert_eq!(mapped("file_cache_size: 64MiB\n").file_cache_size, 64 << 20);
        assert_eq!(mapped("file_cache_size: 0MiB\n").file_cache_size, 0);
        let off = "file_cache_enabled: false\nfile_cache_size: 64MiB\n";
        assert_eq!(mapped(off).file_cache_size, 0);
    }
}
