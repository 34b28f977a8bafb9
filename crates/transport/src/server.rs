//! The listener: accepts connections, owns the shared state, and shuts down gracefully.
use crate::client::Clients;
use crate::connection::{serve_connection, Shared};
use crate::event::Event;
use crate::handler::QueryHandler;
use crate::limits::{LimitSettings, Limits};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, watch};
use tokio::task::JoinSet;

/// Transport settings.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// `native_transport_max_frame_size`: largest accepted envelope body.
    pub max_frame_bytes: usize,
    /// Requests of one connection executing at once; further reads wait.
    pub max_concurrent_requests_per_connection: usize,
    /// How long shutdown waits for in-flight requests.
    pub shutdown_grace: Duration,
    /// `native_transport_max_request_data_in_flight`: request bytes all clients may hold,
    /// counted as a body's bytes arrive and until the response is queued (and, for large
    /// bodies being received, their declared lengths; see `limits`).
    pub max_request_data_in_flight: u64,
    /// `native_transport_max_request_data_in_flight_per_ip`: the same for one client address.
    pub max_request_data_in_flight_per_ip: u64,
    /// Over a limit: `false` stops reading from the connection until there is room
    /// (back-pressure), `true` answers Overloaded. A client asks for `true` with the STARTUP
    /// option `THROW_ON_OVERLOAD: 1`.
    pub throw_on_overload: bool,
    /// `native_transport_max_requests_per_second` when rate limiting is enabled.
    pub max_requests_per_second: Option<u32>,
    /// `native_transport_idle_timeout`: closes connections that send nothing and have no
    /// request in flight for this long.
    pub idle_timeout: Option<Duration>,
    /// A frame begun must be complete within this plus its body's time at 64 KiB/s.
    pub frame_timeout: Duration,
    /// `native_transport_max_concurrent_connections`.
    pub max_connections: Option<u64>,
    /// `native_transport_max_concurrent_connections_per_ip`.
    pub max_connections_per_ip: Option<u64>,
}

impl Default for ServerConfig {
    /// Cassandra's defaults for a 1 GiB heap; frames get 30 s plus their body's time.
    fn default() -> ServerConfig {
        ServerConfig {
            max_frame_bytes: 16 << 20,
            max_concurrent_requests_per_connection: 1024,
            shutdown_grace: Duration::from_secs(10),
            max_request_data_in_flight: (1 << 30) / 10,
            max_request_data_in_flight_per_ip: (1 << 30) / 40,
            throw_on_overload: false,
            max_requests_per_second: None,
            idle_timeout: None,
            frame_timeout: Duration::from_secs(30),
            max_connections: None,
            max_connections_per_ip: None,
        }
    }
}

impl ServerConfig {
    pub(crate) fn limits(&self) -> LimitSettings {
        LimitSettings {
            bytes: self.max_request_data_in_flight,
            bytes_per_ip: self.max_request_data_in_flight_per_ip,
            max_connections: self.max_connections,
            max_connections_per_ip: self.max_connections_per_ip,
            requests_per_second: self.max_requests_per_second,
        }
    }
}

/// A CQL native protocol server.
pub struct Server<H> {
    shared: Arc<Shared<H>>,
}

impl<H: QueryHandler> Server<H> {
    pub fn new(
        handler: Arc<H>,
        events: broadcast::Sender<Event>,
        config: ServerConfig,
    ) -> Server<H> {
        let clients = Arc::new(Clients::new());
        let limits = Arc::new(Limits::new(&config));
        Server {
            shared: Arc::new(Shared {
                handler,
                events,
                config,
                clients,
                limits,
            }),
        }
    }

    /// The live connections, for `system_views.clients`.
    pub fn clients(&self) -> Arc<Clients> {
        Arc::clone(&self.shared.clients)
    }

    /// The overload limits and their figures, for metrics.
    pub fn limits(&self) -> Arc<Limits> {
        Arc::clone(&self.shared.limits)
    }

    /// Serves `listener` until `shutdown` completes, then stops accepting, lets in-flight
    /// requests finish within the grace period, and closes every connection. May run again
    /// with a new listener (the native transport started again).
    pub async fn run(
        &self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> std::io::Result<()> {
        let (stop, stopped) = watch::channel(false);
        let mut connections = JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((socket, peer)) => match self.shared.limits.connect(peer.ip()) {
                        Ok(slot) => {
                            let _ = socket.set_nodelay(true);
                            let shared = Arc::clone(&self.shared);
                            let stopped = stopped.clone();
                            connections.spawn(serve_connection(shared, socket, peer, slot, stopped));
                        }
                        Err(refusal) => tracing::warn!("{refusal}"),
                    },
                    Err(e) => {
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        drop(listener);
        let _ = stop.send(true);
        let all_closed = async { while connections.join_next().await.is_some() {} };
        let limit = self.shared.config.shutdown_grace * 2 + Duration::from_secs(1);
        let _ = tokio::time::timeout(limit, all_closed).await;
        connections.abort_all();
        Ok(())
    }
}

/// Serves CQL on `listener` until `shutdown` completes (see [`Server::run`]).
pub async fn serve<H: QueryHandler>(
    listener: TcpListener,
    handler: Arc<H>,
    events: broadcast::Sender<Event>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    Server::new(handler, events, config)
        .run(listener, shutdown)
        .await
}
