//! Turmoil's simulated network behind the `Network` seam (feature `sim`): whole-cluster tests
//! drive the production messaging code with fixed seeds, partitions, holds and crashes.
use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::rc::Rc;
use std::time::Duration;

use turmoil::net::{TcpListener, TcpStream};
use turmoil::Sim;

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

/// What a test body asks of the simulation itself (hosts, crashes, losses).
type Request = Box<dyn FnOnce(&mut Sim<'static>)>;

thread_local! {
    /// The requests of the test body of the simulation running on this thread.
    static REQUESTS: RefCell<Option<Rc<RefCell<Vec<Request>>>>> = const { RefCell::new(None) };
}

/// Runs `body` as the turmoil client `name` of `sim` until it ends, doing what it asks with
/// [`with_sim`] between two steps. Panics on a host's error, as a failed test.
pub fn drive_client(mut sim: Sim<'static>, name: &str, body: impl Future<Output = ()> + 'static) {
    let requests: Rc<RefCell<Vec<Request>>> = Rc::default();
    REQUESTS.with(|slot| *slot.borrow_mut() = Some(requests.clone()));
    sim.client(name, async move {
        body.await;
        Ok(())
    });
    loop {
        let finished = sim
            .step()
            .unwrap_or_else(|e| panic!("the simulation failed: {e}"));
        let asked: Vec<Request> = requests.borrow_mut().drain(..).collect();
        for request in asked {
            request(&mut sim);
        }
        if finished {
            break;
        }
    }
    REQUESTS.with(|slot| *slot.borrow_mut() = None);
}

/// From a test body run by [`drive_client`]: has the simulation do `request` after this step
/// (register, crash or bounce a host, set the fail rate or a link's latency), and waits for it.
pub async fn with_sim(request: impl FnOnce(&mut Sim<'static>) + 'static) {
    REQUESTS.with(|slot| {
        let Some(requests) = slot.borrow().clone() else {
            panic!("with_sim is for a test body run by drive_client");
        };
        requests.borrow_mut().push(Box::new(request));
    });
    tokio::time::sleep(Duration::from_millis(1)).await;
}
