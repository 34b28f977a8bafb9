//! `helenus server`: reads the configuration, starts the node (`helenus::node`: storage, the
//! query processor, the cluster services), the native-protocol server and the admin API, and shuts down cleanly on SIGTERM/SIGINT or
//! `nodetool stopdaemon`; `nodetool drain` stops the CQL listener and flushes everything but
//! leaves the admin API up until the process is told to stop. A drain that cannot finish (a
//! failed or stuck disk) is logged and given up after `node::DRAIN_LIMIT`: the process still exits.
use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use admin::{AdminNode, Lifecycle, NativeStats};
use config::Config;
use helenus::node::{Node, NodeInputs};
use nodeops::NodeOps;
use tokio::signal::unix::{signal, Signal, SignalKind};
use transport::{Server, ServerConfig};

use crate::failures;
use crate::handler::Handler;
use crate::logging::Logging;
use crate::native;

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
    let runtime = match runtime() {
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

/// The request runtime: one tokio runtime serves the CQL transport, the coordinator, the replica
/// verbs and internode messaging. Its worker threads are named `helenus-worker` and the threads of
/// its blocking pool `helenus-blocking`, so that a per-thread CPU reading (bench/threadcpu) tells
/// them apart from each other and from the storage threads (commitlog, flush, compaction,
/// compactor). Tokio starts the workers first, while building the runtime, through the same
/// thread factory: the first `workers` threads it names are the workers.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let named = AtomicUsize::new(0);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name_fn(move || {
            let kind = if named.fetch_add(1, Ordering::Relaxed) < workers {
                "worker"
            } else {
                "blocking"
            };
            format!("helenus-{kind}")
        })
        .enable_all()
        .build()
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
    let node = Node::open(NodeInputs::production(config)).await?;
    let config = node.config.clone();
    // Bound once the commit log is replayed: a client (or a script) that finds the port open
    // finds the node's data there.
    let addr = SocketAddr::new(config.rpc_address, config.native_transport_port);
    let listener = bind(addr).await?;
    let admin_listener = bind(SocketAddr::new(config.admin_address, config.admin_port)).await?;
    // The admin API serves from here, so that nodetool netstats follows a bootstrap.
    let native = Arc::new(NativeStats::default());
    let handler = Arc::new(Handler {
        processor: node.processor.clone(),
        stats: native.clone(),
    });
    let server = Server::new(handler, node.events.clone(), transport_config(&config));
    let lifecycle = Arc::new(Lifecycle::default());
    let admin_node = Arc::new(AdminNode {
        storage: node.storage.clone(),
        coordinator: node.coordinator.clone(),
        processor: node.processor.clone(),
        config: config.clone(),
        clients: server.clients(),
        native,
        native_limits: server.limits(),
        lifecycle: lifecycle.clone(),
        metadata: node.cluster.metadata.clone(),
        nodeops: node.ops.clone(),
        gossip: node.cluster.membership(),
        messaging: node.cluster.messaging.clone(),
        streaming: node.streaming.clone(),
        repair: node.repair.clone(),
        auto_repair: admin::AutoRepair::open(
            config.data_file_directories.first().map(|d| d.as_path()),
        ),
        logging,
        started,
        generation: admin::generation_now(),
    });
    crate::virtual_sources::install(&admin_node);
    admin::start_auto_repair(&admin_node);
    let admin = tokio::spawn(admin::serve(
        admin_listener,
        admin_node,
        admin_token,
        admin_stopped(lifecycle.clone()),
    ));
    node.join().await?;
    let gossip = node.cluster.membership();
    node.storage
        .on_failure(failures::listener(lifecycle.clone(), gossip.clone()));
    tokio::spawn(leave_when_decommissioned(
        node.ops.clone(),
        lifecycle.clone(),
        gossip,
        config.metadata_directory.clone(),
    ));
    node.start_serving();
    tracing::info!(
        "Starting listening for CQL clients on {addr} (unencrypted), admin API on {}:{}, \
         started in {} ms",
        config.admin_address,
        config.admin_port,
        started.elapsed().as_millis()
    );
    let result = native::serve(&server, addr, listener, &lifecycle, &mut signals).await;
    node.stop().await;
    lifecycle.mark_drained();
    until_stop(&lifecycle, &mut signals).await;
    if admin.await.is_err() {
        tracing::error!("the admin API task failed");
    }
    result.map_err(|e| format!("server: {e}"))
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
    if let Err(e) = helenus::decommissioned::mark(&metadata_dir) {
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
}
