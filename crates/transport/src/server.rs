//! The listener: accepts connections, owns the shared state, and shuts down gracefully.
use crate::client::Clients;
use crate::connection::{serve_connection, Shared};
use crate::event::Event;
use crate::handler::QueryHandler;
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
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            max_frame_bytes: 16 << 20,
            max_concurrent_requests_per_connection: 1024,
            shutdown_grace: Duration::from_secs(10),
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
        Server {
            shared: Arc::new(Shared {
                handler,
                events,
                config,
                clients,
            }),
        }
    }

    /// The live connections, for `system_views.clients`.
    pub fn clients(&self) -> Arc<Clients> {
        Arc::clone(&self.shared.clients)
    }

    /// Serves `listener` until `shutdown` completes, then stops accepting, lets in-flight
    /// requests finish within the grace period, and closes every connection.
    pub async fn run(
        self,
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
                    Ok((socket, peer)) => {
                        let _ = socket.set_nodelay(true);
                        let shared = Arc::clone(&self.shared);
                        connections.spawn(serve_connection(shared, socket, peer, stopped.clone()));
                    }
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
