//! The receiving side: accepts connections, checks their handshake, runs each message's
//! handler and writes the answers back on the connection the request came in on.
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncWriteExt, BufReader, BufWriter, ReadHalf, WriteHalf};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tracing::{debug, warn};

use crate::config::Peer;
use crate::connection::{frame_failure, READ_BUFFER, WRITE_BUFFER};
use crate::context::Context;
use crate::error::RemoteError;
use crate::frame::{self, Frame, Kind};
use crate::handshake::{self, HandshakeError};
use crate::network::{BoxStream, Listener};
use crate::stats::{LinkCounters, Tally};
use crate::verb::{Class, Verb};

/// After a failed accept (e.g. out of file descriptors), wait this long before the next.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

pub(crate) async fn accept_loop(ctx: Arc<Context>, mut listener: Box<dyn Listener>) {
    loop {
        match listener.accept().await {
            Ok((stream, remote)) => {
                ctx.spawn(serve(ctx.clone(), stream, remote));
            }
            Err(error) => {
                warn!(
                    "internode listener on {}: accept failed: {error}",
                    ctx.local
                );
                tokio::time::sleep(ACCEPT_RETRY).await;
            }
        }
    }
}

pub(crate) async fn serve(ctx: Arc<Context>, mut stream: BoxStream, remote: SocketAddr) {
    let Some((class, peer, version)) = greet(&ctx, &mut stream, remote).await else {
        return;
    };
    let counters = ctx.stats.link(peer.addr, class);
    let _open = OpenConnection::new(counters.clone());
    let (reader, writer) = tokio::io::split(stream);
    let (replies, outgoing) = mpsc::unbounded_channel();
    let reason = tokio::select! {
        biased;
        reason = write_replies(&ctx, writer, version, outgoing) => reason,
        reason = read_requests(&ctx, peer, class, version, reader, replies, &counters) => reason,
    };
    debug!(
        "internode {class} connection from {} closed: {reason}",
        peer.addr
    );
}

/// Runs the accepting side of the handshake; logs a refusal or failure.
async fn greet(
    ctx: &Context,
    stream: &mut BoxStream,
    remote: SocketAddr,
) -> Option<(Class, Peer, u8)> {
    let limit = ctx.config.connect_timeout;
    match tokio::time::timeout(limit, handshake::accept(stream, &ctx.hello)).await {
        Ok(Ok((class, theirs, version))) => {
            ctx.learn(theirs.listen, theirs.host_id);
            let peer = Peer {
                addr: theirs.listen,
                host_id: theirs.host_id,
            };
            Some((class, peer, version))
        }
        Ok(Err(HandshakeError::Refused(why))) => {
            warn!("{why}");
            None
        }
        Ok(Err(error)) => {
            warn!("internode handshake from {remote} failed: {error}");
            None
        }
        Err(_) => {
            warn!("internode handshake from {remote} timed out after {limit:?}");
            None
        }
    }
}

/// Counts an open inbound connection for as long as it lives.
struct OpenConnection(Arc<LinkCounters>);

impl OpenConnection {
    fn new(counters: Arc<LinkCounters>) -> OpenConnection {
        counters.inbound_connections.fetch_add(1, Relaxed);
        OpenConnection(counters)
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.inbound_connections.fetch_sub(1, Relaxed);
    }
}

/// An answer to write, holding the request's share of the connection's byte budget.
struct Answer {
    frame: Frame,
    _budget: Option<OwnedSemaphorePermit>,
}

async fn read_requests(
    ctx: &Arc<Context>,
    peer: Peer,
    class: Class,
    version: u8,
    reader: ReadHalf<BoxStream>,
    answers: UnboundedSender<Answer>,
    counters: &LinkCounters,
) -> String {
    let mut reader = BufReader::with_capacity(READ_BUFFER, reader);
    let bound = ctx
        .tuning
        .inbound_bytes
        .clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    let budget = Arc::new(Semaphore::new(bound));
    loop {
        let frame = match frame::read_frame(&mut reader, ctx.limits(version)).await {
            Ok(frame) => frame,
            Err(error) => return frame_failure(peer.addr, class, counters, error),
        };
        let arrival = Instant::now();
        if !matches!(frame.kind, Kind::Ping | Kind::Request | Kind::OneWay) {
            return format!("unexpected {:?} frame from {}", frame.kind, peer.addr);
        }
        // Over the budget the connection stops reading until answers free some.
        let cost = frame.wire_len().clamp(1, bound) as u32;
        let Ok(share) = budget.clone().acquire_many_owned(cost).await else {
            return "budget closed".to_string();
        };
        if frame.kind == Kind::Ping {
            let pong = Frame::new(Kind::Pong, 0, frame.id, Bytes::new());
            let _ = answers.send(Answer {
                frame: pong,
                _budget: Some(share),
            });
        } else {
            dispatch(ctx.clone(), peer, frame, arrival, share, answers.clone());
        }
    }
}

/// Runs the handler in its own task, unless the message expired before it could start.
fn dispatch(
    ctx: Arc<Context>,
    peer: Peer,
    frame: Frame,
    arrival: Instant,
    budget: OwnedSemaphorePermit,
    answers: UnboundedSender<Answer>,
) {
    tokio::spawn(async move {
        let verb = Verb::from_u8(frame.verb);
        let timeout = Duration::from_millis(frame.timeout_ms as u64);
        if frame.timeout_ms > 0 && Instant::now() >= arrival + timeout {
            if let Some(verb) = verb {
                ctx.stats.count(verb, Tally::Dropped);
            }
            debug!(
                "dropped message {} from {}: expired before it started",
                frame.id, peer.addr
            );
            return;
        }
        let handler = verb.and_then(|verb| ctx.handler(verb));
        let result = match (verb, handler) {
            (Some(verb), Some(handler)) => {
                ctx.stats.waited(verb, arrival.elapsed());
                let result = handler.handle(peer, frame.payload).await;
                ctx.stats.count(verb, Tally::Completed);
                result
            }
            _ => Err(RemoteError::new(
                RemoteError::SERVER_ERROR,
                format!("no handler for verb {} at {}", frame.verb, ctx.local),
            )),
        };
        if frame.kind == Kind::Request {
            let answer = answer_frame(frame.verb, frame.id, result, ctx.config.max_message_bytes);
            let _ = answers.send(Answer {
                frame: answer,
                _budget: Some(budget),
            });
        }
    });
}

fn answer_frame(verb: u8, id: u64, result: Result<Bytes, RemoteError>, max: usize) -> Frame {
    let checked = result.and_then(|payload| {
        if payload.len() <= max {
            return Ok(payload);
        }
        let why = format!(
            "response of {} bytes exceeds max_message_bytes {max}",
            payload.len()
        );
        Err(RemoteError::new(RemoteError::SERVER_ERROR, why))
    });
    match checked {
        Ok(payload) => Frame::new(Kind::Response, verb, id, payload),
        Err(error) => Frame::new(Kind::Failure, verb, id, Bytes::from(error.encode())),
    }
}

async fn write_replies(
    ctx: &Context,
    writer: WriteHalf<BoxStream>,
    version: u8,
    mut answers: UnboundedReceiver<Answer>,
) -> String {
    let mut writer = BufWriter::with_capacity(WRITE_BUFFER, writer);
    while let Some(answer) = answers.recv().await {
        let encoded = frame::encode(&answer.frame, version, ctx.config.compression);
        if let Err(error) = encoded.write_to(&mut writer).await {
            return format!("write failed: {error}");
        }
        drop(answer);
        if answers.is_empty() {
            if let Err(error) = writer.flush().await {
                return format!("write failed: {error}");
            }
        }
    }
    "closed".to_string()
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, DuplexStream};
    use tokio::task::JoinHandle;

    use super::*;
    use crate::config::{HostId, NetConfig, Tuning};
    use crate::frame::Limits;
    use crate::handler::handler_fn;
    use crate::handshake::{Hello, MESSAGING_VERSION};
    use crate::network::TokioNetwork;

    fn hello(last: u8) -> Hello {
        Hello {
            version: MESSAGING_VERSION,
            host_id: HostId::from_u128(last as u128),
            listen: SocketAddr::from(([127, 0, 6, last], 7000)),
            cluster_name: "Test".to_string(),
        }
    }

    /// A node (127.0.6.1) serving one in-memory connection from 127.0.6.2.
    async fn connection() -> (Arc<Context>, DuplexStream, JoinHandle<()>) {
        let ours = hello(1);
        let config = NetConfig::new("Test", ours.host_id, ours.listen);
        let network = Arc::new(TokioNetwork);
        let ctx = Arc::new(Context::new(
            config,
            Tuning::default(),
            network,
            ours.listen,
            ours,
        ));
        ctx.register(
            Verb::Echo,
            handler_fn(|_, payload| async move { Ok(payload) }),
        );
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let remote = SocketAddr::from(([127, 0, 6, 2], 40000));
        let task = tokio::spawn(serve(ctx.clone(), Box::new(server), remote));
        handshake::initiate(&mut client, &hello(2), Class::Small)
            .await
            .unwrap();
        (ctx, client, task)
    }

    fn frame_bytes(kind: Kind, id: u64, payload: &'static str) -> Vec<u8> {
        let frame = Frame::new(kind, Verb::Echo as u8, id, Bytes::from(payload));
        frame::encode(&frame, MESSAGING_VERSION, false).to_vec()
    }

    const LIMITS: Limits = Limits {
        version: MESSAGING_VERSION,
        max_message: 1 << 20,
    };

    #[tokio::test]
    async fn requests_are_answered_and_pings_ponged_on_the_same_connection() {
        let (ctx, mut client, _task) = connection().await;
        client
            .write_all(&frame_bytes(Kind::Request, 7, "hi"))
            .await
            .unwrap();
        client
            .write_all(&frame_bytes(Kind::Ping, 0, ""))
            .await
            .unwrap();
        let mut kinds = Vec::new();
        for _ in 0..2 {
            let frame = frame::read_frame(&mut client, LIMITS).await.unwrap();
            kinds.push((frame.kind, frame.id, frame.payload));
        }
        kinds.sort_by_key(|(kind, ..)| *kind as u8);
        let expected = vec![
            (Kind::Response, 7, Bytes::from("hi")),
            (Kind::Pong, 0, Bytes::new()),
        ];
        assert_eq!(kinds, expected);
        let echo = ctx.stats.snapshot().verb(Verb::Echo);
        assert_eq!((echo.completed, echo.queue_wait.count()), (1, 1));
        let peer = hello(2);
        assert_eq!(ctx.host_id_of(peer.listen), Some(peer.host_id));
    }

    #[tokio::test]
    async fn a_corrupt_frame_closes_the_connection_and_is_counted() {
        let (ctx, mut client, task) = connection().await;
        let mut bytes = frame_bytes(Kind::Request, 1, "payload");
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        client.write_all(&bytes).await.unwrap();
        task.await.unwrap();
        let mut rest = Vec::new();
        client.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "no answer to a corrupt frame");
        let stats = ctx.stats.snapshot();
        let link = stats.link(hello(2).listen, Class::Small).unwrap();
        assert_eq!((link.crc_errors, link.inbound_connections), (1, 0));
        assert_eq!(stats.verb(Verb::Echo).completed, 0);
    }

    #[tokio::test]
    async fn a_frame_kind_only_the_other_side_sends_closes_the_connection() {
        let (ctx, mut client, task) = connection().await;
        client
            .write_all(&frame_bytes(Kind::Response, 1, ""))
            .await
            .unwrap();
        task.await.unwrap();
        let stats = ctx.stats.snapshot();
        assert_eq!(
            stats
                .link(hello(2).listen, Class::Small)
                .unwrap()
                .crc_errors,
            0
        );
    }

    #[tokio::test]
    async fn a_handshake_from_another_cluster_is_refused_and_not_served() {
        let ours = hello(1);
        let config = NetConfig::new("Test", ours.host_id, ours.listen);
        let ctx = Arc::new(Context::new(
            config,
            Tuning::default(),
            Arc::new(TokioNetwork),
            ours.listen,
            ours,
        ));
        let (mut client, server) = tokio::io::duplex(4096);
        let task = tokio::spawn(serve(ctx.clone(), Box::new(server), hello(2).listen));
        let stranger = Hello {
            cluster_name: "Elsewhere".to_string(),
            ..hello(2)
        };
        let refused = handshake::initiate(&mut client, &stranger, Class::Urgent).await;
        assert!(matches!(refused, Err(HandshakeError::Refused(_))));
        task.await.unwrap();
        assert!(ctx.stats.snapshot().links.is_empty());
    }
}
