//! The seam between messaging and sockets: real TCP in production, a simulator in tests.
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpSocket};

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub trait AsyncStream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> AsyncStream for T {}
pub type BoxStream = Box<dyn AsyncStream>;

pub trait Listener: Send + 'static {
    /// The next connection and its remote (source) address.
    fn accept(&mut self) -> BoxFuture<'_, io::Result<(BoxStream, SocketAddr)>>;
    /// The bound address (the port the system chose when bound to port 0).
    fn local_addr(&self) -> io::Result<SocketAddr>;
}

/// The seam a deterministic simulator drives (turmoil in tests; tokio in production).
pub trait Network: Send + Sync + 'static {
    /// Connects to `to` from a socket bound to `from` (the node's listen address).
    fn connect(&self, from: IpAddr, to: SocketAddr) -> BoxFuture<'static, io::Result<BoxStream>>;
    fn bind(&self, addr: SocketAddr) -> BoxFuture<'static, io::Result<Box<dyn Listener>>>;
}

/// Real TCP. Outbound sockets are bound to the node's listen address before connecting, so
/// firewall rules on source and destination address can cut exact links between nodes.
pub struct TokioNetwork;

impl Network for TokioNetwork {
    fn connect(&self, from: IpAddr, to: SocketAddr) -> BoxFuture<'static, io::Result<BoxStream>> {
        Box::pin(async move {
            let socket = match to {
                SocketAddr::V4(_) => TcpSocket::new_v4()?,
                SocketAddr::V6(_) => TcpSocket::new_v6()?,
            };
            if !from.is_unspecified() && from.is_ipv4() == to.is_ipv4() {
                socket.bind(SocketAddr::new(from, 0))?;
            }
            let stream = socket.connect(to).await?;
            stream.set_nodelay(true)?;
            Ok(Box::new(stream) as BoxStream)
        })
    }

    fn bind(&self, addr: SocketAddr) -> BoxFuture<'static, io::Result<Box<dyn Listener>>> {
        Box::pin(async move {
            let listener = TcpListener::bind(addr).await?;
            Ok(Box::new(TokioListener(listener)) as Box<dyn Listener>)
        })
    }
}

struct TokioListener(TcpListener);

impl Listener for TokioListener {
    fn accept(&mut self) -> BoxFuture<'_, io::Result<(BoxStream, SocketAddr)>> {
        Box::pin(async move {
            let (stream, remote) = self.0.accept().await?;
            stream.set_nodelay(true)?;
            Ok((Box::new(stream) as BoxStream, remote))
        })
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn outbound_sockets_come_from_the_listen_address() {
        let network = TokioNetwork;
        let mut listener = network.bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let to = listener.local_addr().unwrap();
        let from: IpAddr = "127.0.6.2".parse().unwrap();
        let (connected, accepted) = tokio::join!(network.connect(from, to), listener.accept());
        connected.unwrap();
        assert_eq!(accepted.unwrap().1.ip(), from);
    }
}
