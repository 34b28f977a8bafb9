//! An in-memory `net::Network` for simulations in paused tokio time: every node's sockets in
//! one process, each connection a pair of byte pipes. Bytes take the network's latency (plus
//! a seeded jitter, and a node's extra delay while it is slow) and arrive in order; a lost
//! write resets its connection, so what was in flight on it is lost, as when TCP gives up;
//! a node cut off by a partition, or crashed, has its connections reset and new ones refused.
use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use net::SimRng;
use net::{BoxFuture, BoxStream, Listener, Network};
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};

/// How long a connect across a partition waits before it fails (a lost SYN).
const CUT_CONNECT: Duration = Duration::from_millis(100);

/// The whole simulated network.
pub struct SimNet {
    state: Mutex<NetState>,
}

struct NetState {
    listeners: HashMap<SocketAddr, mpsc::UnboundedSender<(BoxStream, SocketAddr)>>,
    down: HashSet<IpAddr>,
    /// Nodes cut off from every other node.
    isolated: HashSet<IpAddr>,
    /// Extra delay of every byte to or from a slow node.
    slow: HashMap<IpAddr, Duration>,
    connections: Vec<Connection>,
    latency: Duration,
    jitter: Duration,
    /// Probability (in millionths) that a write is lost (and its connection reset).
    drop_ppm: u64,
    next_port: u16,
    rng: SimRng,
}

/// Both pipes of one connection, to reset it.
struct Connection {
    ends: (IpAddr, IpAddr),
    pipes: [Weak<Mutex<Pipe>>; 2],
}

impl SimNet {
    pub fn new(seed: u64) -> Arc<SimNet> {
        Arc::new(SimNet {
            state: Mutex::new(NetState {
                listeners: HashMap::new(),
                down: HashSet::new(),
                isolated: HashSet::new(),
                slow: HashMap::new(),
                connections: Vec::new(),
                latency: Duration::from_millis(1),
                jitter: Duration::from_millis(2),
                drop_ppm: 0,
                next_port: 40_000,
                rng: SimRng::new(seed),
            }),
        })
    }

    /// Each write is lost, resetting its connection, with this probability.
    pub fn set_drop_rate(&self, probability: f64) {
        self.state.lock().drop_ppm = (probability.clamp(0.0, 1.0) * 1e6) as u64;
    }

    /// Bytes to and from `node` take `extra` longer (zero: back to normal).
    pub fn set_slow(&self, node: IpAddr, extra: Duration) {
        let mut state = self.state.lock();
        if extra.is_zero() {
            state.slow.remove(&node);
        } else {
            state.slow.insert(node, extra);
        }
    }

    /// The node stops: its connections are reset and nobody can reach it.
    pub fn crash(&self, node: IpAddr) {
        let mut state = self.state.lock();
        state.down.insert(node);
        state.reset_where(|a, b| a == node || b == node);
    }

    /// The node is reachable again (its messaging binds anew).
    pub fn revive(&self, node: IpAddr) {
        self.state.lock().down.remove(&node);
    }

    /// Cuts `node` off from every other node.
    pub fn isolate(&self, node: IpAddr) {
        let mut state = self.state.lock();
        state.isolated.insert(node);
        state.reset_where(|a, b| a != b && (a == node || b == node));
    }

    /// Ends every partition and slowness.
    pub fn heal(&self) {
        let mut state = self.state.lock();
        state.isolated.clear();
        state.slow.clear();
    }

    pub fn is_cut(&self, a: IpAddr, b: IpAddr) -> bool {
        self.state.lock().cut(a, b)
    }
}

impl NetState {
    fn cut(&self, a: IpAddr, b: IpAddr) -> bool {
        a != b && (self.isolated.contains(&a) || self.isolated.contains(&b))
    }

    fn reset_where(&mut self, hit: impl Fn(IpAddr, IpAddr) -> bool) {
        self.connections.retain(|c| {
            let alive: Vec<_> = c.pipes.iter().filter_map(Weak::upgrade).collect();
            if hit(c.ends.0, c.ends.1) {
                alive.iter().for_each(|pipe| pipe.lock().reset());
                return false;
            }
            !alive.is_empty()
        });
    }

    /// Whether the next write is lost.
    fn lost(&mut self) -> bool {
        self.drop_ppm > 0 && self.rng.below(1_000_000) < self.drop_ppm
    }

    fn delay(&mut self, from: IpAddr, to: IpAddr) -> Duration {
        let jitter = self.jitter.as_micros() as u64;
        let extra = self.rng.below(jitter + 1);
        let slow = |node| self.slow.get(&node).copied().unwrap_or_default();
        self.latency + Duration::from_micros(extra) + slow(from).max(slow(to))
    }
}

/// One node's view of the network: what its messaging binds and connects through.
pub struct SimNetwork(pub Arc<SimNet>);

impl Network for SimNetwork {
    fn connect(&self, from: IpAddr, to: SocketAddr) -> BoxFuture<'static, io::Result<BoxStream>> {
        let net = self.0.clone();
        Box::pin(async move {
            let (refused, cut) = {
                let state = net.state.lock();
                let refused = state.down.contains(&from)
                    || state.down.contains(&to.ip())
                    || !state.listeners.contains_key(&to);
                (refused, state.cut(from, to.ip()))
            };
            if refused {
                return Err(io::ErrorKind::ConnectionRefused.into());
            }
            if cut {
                tokio::time::sleep(CUT_CONNECT).await;
                return Err(io::ErrorKind::TimedOut.into());
            }
            net.open(from, to)
        })
    }

    fn bind(&self, addr: SocketAddr) -> BoxFuture<'static, io::Result<Box<dyn Listener>>> {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.0.state.lock().listeners.insert(addr, sender);
        let listener = SimListener {
            addr,
            accepted: receiver,
        };
        Box::pin(async move { Ok(Box::new(listener) as Box<dyn Listener>) })
    }
}

impl SimNet {
    /// A connection from `from` to the listener at `to`: the client's end.
    fn open(self: &Arc<Self>, from: IpAddr, to: SocketAddr) -> io::Result<BoxStream> {
        let mut state = self.state.lock();
        let listener = state.listeners.get(&to).cloned();
        let Some(listener) = listener else {
            return Err(io::ErrorKind::ConnectionRefused.into());
        };
        let outgoing = Arc::new(Mutex::new(Pipe::default()));
        let incoming = Arc::new(Mutex::new(Pipe::default()));
        state.connections.push(Connection {
            ends: (from, to.ip()),
            pipes: [Arc::downgrade(&outgoing), Arc::downgrade(&incoming)],
        });
        state.next_port = state.next_port.checked_add(1).unwrap_or(40_000);
        let source = SocketAddr::new(from, state.next_port);
        drop(state);
        let client = SimStream::new(self, (from, to.ip()), incoming.clone(), outgoing.clone());
        let server = SimStream::new(self, (to.ip(), from), outgoing, incoming);
        listener
            .send((Box::new(server), source))
            .map_err(|_| io::Error::from(io::ErrorKind::ConnectionRefused))?;
        Ok(Box::new(client))
    }
}

struct SimListener {
    addr: SocketAddr,
    accepted: mpsc::UnboundedReceiver<(BoxStream, SocketAddr)>,
}

impl Listener for SimListener {
    fn accept(&mut self) -> BoxFuture<'_, io::Result<(BoxStream, SocketAddr)>> {
        Box::pin(async move {
            self.accepted
                .recv()
                .await
                .ok_or_else(|| io::ErrorKind::ConnectionAborted.into())
        })
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.addr)
    }
}

/// One direction of a connection: chunks in order, each with the time it arrives.
#[derive(Default)]
struct Pipe {
    chunks: VecDeque<(Instant, Vec<u8>)>,
    /// When the last chunk arrives (later chunks never overtake it).
    last_due: Option<Instant>,
    /// The writer closed its end: the reader sees the end of the stream after the chunks.
    closed: bool,
    reset: bool,
    reader: Option<Waker>,
}

impl Pipe {
    fn reset(&mut self) {
        self.reset = true;
        self.chunks.clear();
        if let Some(waker) = self.reader.take() {
            waker.wake();
        }
    }
}

/// One end of a connection.
struct SimStream {
    net: Arc<SimNet>,
    /// (this end's node, the other end's node).
    ends: (IpAddr, IpAddr),
    read: Arc<Mutex<Pipe>>,
    write: Arc<Mutex<Pipe>>,
    timer: Option<Pin<Box<Sleep>>>,
}

impl SimStream {
    fn new(
        net: &Arc<SimNet>,
        ends: (IpAddr, IpAddr),
        read: Arc<Mutex<Pipe>>,
        write: Arc<Mutex<Pipe>>,
    ) -> SimStream {
        SimStream {
            net: net.clone(),
            ends,
            read,
            write,
            timer: None,
        }
    }

    fn reset_both(&self) {
        self.read.lock().reset();
        self.write.lock().reset();
    }
}

impl AsyncRead for SimStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            let mut pipe = this.read.lock();
            if pipe.reset {
                return Poll::Ready(Err(io::ErrorKind::ConnectionReset.into()));
            }
            let Some((due, chunk)) = pipe.chunks.front_mut() else {
                if pipe.closed {
                    return Poll::Ready(Ok(()));
                }
                pipe.reader = Some(cx.waker().clone());
                return Poll::Pending;
            };
            if *due > Instant::now() {
                let due = *due;
                drop(pipe);
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
                timer.as_mut().reset(due);
                if timer.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                continue;
            }
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            chunk.drain(..n);
            if chunk.is_empty() {
                pipe.chunks.pop_front();
            }
            return Poll::Ready(Ok(()));
        }
    }
}

impl AsyncWrite for SimStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let (lost, delay) = {
            let mut state = self.net.state.lock();
            (state.lost(), state.delay(self.ends.0, self.ends.1))
        };
        if lost {
            self.reset_both();
        }
        let mut pipe = self.write.lock();
        if pipe.reset || pipe.closed {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        let due = (Instant::now() + delay).max(pipe.last_due.unwrap_or_else(Instant::now));
        pipe.last_due = Some(due);
        pipe.chunks.push_back((due, buf.to_vec()));
        if let Some(waker) = pipe.reader.take() {
            waker.wake();
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        close(&self.write);
        Poll::Ready(Ok(()))
    }
}

impl Drop for SimStream {
    fn drop(&mut self) {
        close(&self.write);
        // Nobody reads this end any more: what the other end sends is lost.
        self.read.lock().reset();
    }
}

fn close(pipe: &Mutex<Pipe>) {
    let mut pipe = pipe.lock();
    pipe.closed = true;
    if let Some(waker) = pipe.reader.take() {
        waker.wake();
    }
}
