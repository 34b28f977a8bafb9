//! Turmoil's simulated network behind the `Network` seam (feature `sim`): whole-cluster tests
//! drive the production messaging code with fixed seeds, partitions, holds and crashes.
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use turmoil::net::{TcpListener, TcpStream};

use crate::network::{BoxFuture, BoxStream, Listener, Network};

/// Sockets of the turmoil host the calling task runs on. A simulated host has one address,
/// so outbound connections always come from it (`from` is that address).
pub struct TurmoilNetwork;

impl Network for TurmoilNetwork {
    fn connect(&self, _from: IpAddr, to: SocketAddr) -> BoxFuture<'static, io::Result<BoxStream>> {
        Box::pin(async move {
            let stream = TcpStream::connect(to).await?;
            Ok(Box::new(stream) as BoxStream)
        })
    }

    /// Turmoil listens on the unspecified address only: binds that, on the same port.
    fn bind(&self, addr: SocketAddr) -> BoxFuture<'static, io::Result<Box<dyn Listener>>> {
        let any = match addr.ip() {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        };
        Box::pin(async move {
            let listener = TcpListener::bind(SocketAddr::new(any, addr.port())).await?;
            Ok(Box::new(TurmoilListener(listener)) as Box<dyn Listener>)
        })
    }
}

struct TurmoilListener(TcpListener);

impl Listener for TurmoilListener {
    fn accept(&mut self) -> BoxFuture<'_, io::Result<(BoxStream, SocketAddr)>> {
        Box::pin(async move {
            let (stream, remote) = self.0.accept().await?;
            Ok((Box::new(stream) as BoxStream, remote))
        })
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}
