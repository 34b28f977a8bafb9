//! The native transport's life in `helenus server`: the CQL listener serves while the node's
//! [`Lifecycle`] wants it, stops (closing its connections once their requests finish) on
//! `nodetool disablebinary` or when a failure policy stops the transports, and binds again on
//! `nodetool enablebinary`, until the node drains or a signal stops it.

use std::net::SocketAddr;

use admin::{Lifecycle, Mode};
use tokio::net::TcpListener;
use transport::Server;

use crate::handler::Handler;
use crate::server::{bind, until_drain, StopSignals};

/// Serves CQL from `listener` (bound to `addr`) and from every later listener
/// `enablebinary` asks for; returns once a drain or a stop is asked for.
pub async fn serve(
    server: &Server<Handler>,
    addr: SocketAddr,
    listener: TcpListener,
    lifecycle: &Lifecycle,
    signals: &mut StopSignals,
) -> std::io::Result<()> {
    let mut listener = Some(listener);
    loop {
        if let Some(bound) = listener.take().filter(|_| lifecycle.transport().wanted) {
            lifecycle.set_transport_running(true);
            let stop = async {
                tokio::select! {
                    _ = until_drain(lifecycle, signals) => {}
                    _ = lifecycle.transport_stop_requested() => {}
                }
            };
            let served = server.run(bound, stop).await;
            lifecycle.set_transport_running(false);
            served?;
        }
        if lifecycle.mode() != Mode::Normal {
            return Ok(());
        }
        tracing::warn!("Stop listening for CQL clients; `nodetool enablebinary` starts again");
        tokio::select! {
            _ = until_drain(lifecycle, signals) => return Ok(()),
            _ = lifecycle.transport_start_requested() => {}
        }
        match bind(addr).await {
            Ok(bound) => {
                tracing::info!("Starting listening for CQL clients on {addr} (unencrypted)");
                listener = Some(bound);
            }
            Err(error) => {
                tracing::error!("{error}");
                lifecycle.transport_failed(error);
            }
        }
    }
}
