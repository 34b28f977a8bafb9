//! One client connection: reads envelopes, reserves each request's bytes against the
//! server's limits (a large body's declared length before it is read, its bytes as they
//! arrive; waiting, or answering Overloaded), serves the STARTUP handshake outside the limits,
//! runs requests concurrently (bounded per connection), forwards registered events, closes
//! clients that stall mid-frame or idle, and drains on close.
use crate::body::{declared, FIRST_STEP};
use crate::budget::{Budget, Taken};
use crate::client::{ClientState, Clients, DriverInfo};
use crate::clock::{Expiry, ReadClock};
use crate::compression::decompress_body;
use crate::event::Event;
use crate::framer::{Framer, Inbound, LegacyDecoder, V5Decoder};
use crate::handler::QueryHandler;
use crate::header::{Header, Opcode, FLAG_COMPRESSED, FLAG_TRACING, MAX_VERSION, MIN_VERSION};
use crate::limits::{Kind, Limits, Reservation, Slot};
use crate::panics::{self, PanicReport};
use crate::request::{decode_request, EventKind, Request};
use crate::response;
use crate::server::ServerConfig;
use crate::writer::{self, Framing, Out};
use bytes::{Bytes, BytesMut};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, Interest};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::TcpStream;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::JoinHandle;
use types::result::QueryResult;
use types::CqlError;

const READ_CHUNK: usize = 64 * 1024;
const PAUSED_CLOSE_CHECK: Duration = Duration::from_millis(200);

/// What every connection of a server shares.
pub(crate) struct Shared<H> {
    pub handler: Arc<H>,
    pub events: broadcast::Sender<Event>,
    pub config: ServerConfig,
    pub clients: Arc<Clients>,
    pub limits: Arc<Limits>,
}

struct Connection<H> {
    shared: Arc<Shared<H>>,
    client: Arc<ClientState>,
    out: mpsc::Sender<Out>,
    /// Requests in flight on this connection, at most `max_permits`.
    permits: Arc<Budget>,
    max_permits: u32,
    /// Fixed by STARTUP.
    version: Option<u8>,
    lz4: bool,
    registered: Arc<AtomicU8>,
    event_task: Option<JoinHandle<()>>,
    /// This connection's share of the server's limits.
    slot: Slot,
    /// Overloaded answers instead of waiting: the server's setting or the client's STARTUP.
    throw_on_overload: bool,
    /// The reservation of the body being received, for its envelope.
    receiving: Option<Reservation>,
    shutdown: watch::Receiver<bool>,
}

/// Serves one accepted socket until the client leaves, the stream breaks, or shutdown.
pub(crate) async fn serve_connection<H: QueryHandler>(
    shared: Arc<Shared<H>>,
    socket: TcpStream,
    peer: SocketAddr,
    slot: Slot,
    shutdown: watch::Receiver<bool>,
) {
    let client = Arc::new(ClientState::new(peer));
    let _registration = shared.clients.register(Arc::clone(&client));
    let (mut rd, wr) = socket.into_split();
    let max_permits = shared
        .config
        .max_concurrent_requests_per_connection
        .clamp(1, 1 << 16) as u32;
    let (out, rx) = mpsc::channel(max_permits as usize + 64);
    let writer = tokio::spawn(writer::run(wr, rx));
    let throw_on_overload = shared.config.throw_on_overload;
    let mut conn = Connection {
        shared,
        client,
        out,
        permits: Arc::new(Budget::new(u64::from(max_permits))),
        max_permits,
        version: None,
        lz4: false,
        registered: Arc::new(AtomicU8::new(0)),
        event_task: None,
        slot,
        throw_on_overload,
        receiving: None,
        shutdown,
    };
    conn.read_loop(&mut rd).await;
    conn.close(writer).await;
}

impl<H: QueryHandler> Connection<H> {
    async fn read_loop(&mut self, rd: &mut OwnedReadHalf) {
        let config = &self.shared.config;
        let mut clock = ReadClock::new(config.frame_timeout, config.idle_timeout, Instant::now());
        let mut framer = Framer::Legacy(LegacyDecoder::new(self.max_body()));
        let mut buf = BytesMut::with_capacity(READ_CHUNK);
        while !*self.shutdown.borrow() {
            if !self.drain(&mut framer, &mut buf, &mut clock, rd).await {
                return;
            }
            let partial = framer.pending_body().or((!buf.is_empty()).then_some(0));
            clock.waiting(partial, Instant::now());
            buf.reserve(READ_CHUNK);
            tokio::select! {
                read = rd.read_buf(&mut buf) => match read {
                    Ok(n) if n > 0 => clock.read(Instant::now()),
                    _ => return,
                },
                _ = self.shutdown.changed() => return,
                expiry = expire(clock.deadline()) => if self.expired(expiry, &mut clock) {
                    return;
                },
            }
        }
    }

    /// Handles every unit `buf` holds; false when the connection must close.
    async fn drain(
        &mut self,
        framer: &mut Framer,
        buf: &mut BytesMut,
        clock: &mut ReadClock,
        rd: &OwnedReadHalf,
    ) -> bool {
        loop {
            match framer.next(buf) {
                Ok(Some(inbound)) => {
                    self.on_inbound(inbound, framer, rd).await;
                    clock.progress();
                }
                Ok(None) => return true,
                Err(fatal) => {
                    self.send(response::protocol_error(
                        fatal.version,
                        fatal.stream,
                        fatal.message,
                    ))
                    .await;
                    return false;
                }
            }
        }
    }

    /// A read deadline passed: true when the connection closes. An idle connection with
    /// requests in flight is not idle.
    fn expired(&self, expiry: Expiry, clock: &mut ReadClock) -> bool {
        let peer = self.client.peer();
        match expiry {
            Expiry::Idle if self.permits.used() > 0 => {
                clock.read(Instant::now());
                return false;
            }
            Expiry::Idle => tracing::info!(
                "Closing client connection {peer} after timeout of {}ms",
                self.shared
                    .config
                    .idle_timeout
                    .unwrap_or_default()
                    .as_millis()
            ),
            Expiry::Frame => tracing::info!(
                "Closing client connection {peer}: a frame it began did not arrive in time"
            ),
        }
        self.shared.limits.count_timeout();
        true
    }

    /// Lets in-flight requests finish (bounded by the shutdown grace), then closes the socket.
    async fn close(self, writer: JoinHandle<()>) {
        let grace = self.shared.config.shutdown_grace;
        let all = self.permits.take(u64::from(self.max_permits));
        let _ = tokio::time::timeout(grace, all).await;
        if let Some(task) = &self.event_task {
            task.abort();
        }
        let _ = self.out.send(Out::Close).await;
        drop(self.out);
        let abort = writer.abort_handle();
        if tokio::time::timeout(grace, writer).await.is_err() {
            abort.abort();
        }
    }

    fn max_body(&self) -> usize {
        self.shared.config.max_frame_bytes
    }

    async fn send(&self, envelope: BytesMut) {
        let _ = self.out.send(Out::Envelope(envelope)).await;
    }

    /// The version to answer an envelope in.
    fn reply_version(&self, header: &Header) -> u8 {
        match (self.version, header.version) {
            (Some(v), _) => v,
            (None, v @ MIN_VERSION..=MAX_VERSION) => v,
            (None, _) => MAX_VERSION,
        }
    }

    async fn on_inbound(&mut self, inbound: Inbound, framer: &mut Framer, rd: &OwnedReadHalf) {
        match inbound {
            Inbound::Announced { header } => {
                self.receiving = self.admit_body(&header, rd).await;
                framer.decide(self.receiving.is_some());
            }
            Inbound::Grow { header, bytes } => {
                let mut held = self.receiving.take();
                let grown = match held.as_mut() {
                    Some(held) => {
                        let bytes = bytes as u64;
                        self.reserve(held, &header, Kind::Held, bytes, rd).await
                    }
                    None => false,
                };
                self.receiving = held.filter(|_| grown);
                framer.decide(grown);
            }
            Inbound::TooBig { header } => {
                let msg = format!(
                    "Request is too big: length {} exceeds maximum allowed length {}.",
                    i64::from(header.length) + 9,
                    self.max_body()
                );
                let version = self.reply_version(&header);
                self.send(response::error(
                    version,
                    header.stream,
                    &CqlError::Invalid(msg),
                ))
                .await;
            }
            Inbound::Envelope { header, body } => {
                let held = match self.receiving.take() {
                    Some(mut held) => {
                        held.arrived();
                        Some(held)
                    }
                    None => {
                        let bytes = declared(&header) as u64;
                        self.admit(&header, Kind::Held, bytes, rd).await
                    }
                };
                if let Some(held) = held {
                    if let Some(next) = self.on_envelope(header, body, held).await {
                        *framer = next;
                    }
                }
            }
        }
    }

    /// Admits a body announced before its bytes: a large one reserves its declared length
    /// from the announced budgets, a short one nothing yet (its room is reserved at once when
    /// its bytes come).
    async fn admit_body(&mut self, header: &Header, rd: &OwnedReadHalf) -> Option<Reservation> {
        let length = declared(header);
        let announced = if length > FIRST_STEP {
            length as u64
        } else {
            0
        };
        self.admit(header, Kind::Announced, announced, rd).await
    }

    /// Frames before STARTUP are served outside the limits, as Cassandra's
    /// `InitialConnectionHandler` serves them, so a client address whose budgets are spent
    /// can still connect: they are answered at once and hold nothing after. Only frames of up
    /// to one first step (128 KiB), so that is all a connection holds outside the limits
    /// besides its read buffer.
    fn exempt(&self, header: &Header) -> bool {
        self.version.is_none() && declared(header) <= FIRST_STEP
    }

    /// A new reservation of `bytes` of `kind` for the request `header` begins, past the rate
    /// limit; `None` when refused (see [`Connection::reserve`]).
    async fn admit(
        &mut self,
        header: &Header,
        kind: Kind,
        bytes: u64,
        rd: &OwnedReadHalf,
    ) -> Option<Reservation> {
        let mut held = self.slot.nothing();
        if !self.reserve(&mut held, header, kind, bytes, rd).await {
            return None;
        }
        if self.exempt(header) || !self.slot.rate_limited() {
            return Some(held);
        }
        if self.throw_on_overload {
            return match self.slot.try_pass_rate() {
                Ok(()) => Some(held),
                Err(message) => {
                    self.overloaded(header, message).await;
                    None
                }
            };
        }
        let passed = unless_gone(&mut self.shutdown, rd, self.slot.pass_rate()).await;
        passed.map(|()| held)
    }

    /// Adds `bytes` of `kind` to `held` for the request `header` begins: waits for room, or
    /// answers Overloaded (false) when the connection throws on overload. False too when the
    /// server shuts down or the client leaves meanwhile: a paused connection whose client
    /// has gone neither keeps its place in the queue nor takes bytes when its turn comes.
    async fn reserve(
        &mut self,
        held: &mut Reservation,
        header: &Header,
        kind: Kind,
        bytes: u64,
        rd: &OwnedReadHalf,
    ) -> bool {
        if self.exempt(header) || self.slot.reserve_at_once(held, kind, bytes) {
            return true;
        }
        if !self.throw_on_overload {
            let wait = self.slot.reserve(held, kind, bytes);
            return unless_gone(&mut self.shutdown, rd, wait).await.is_some();
        }
        let version = self.reply_version(header);
        match self.slot.try_reserve(held, kind, bytes, version) {
            Ok(()) => true,
            Err(message) => {
                self.overloaded(header, message).await;
                false
            }
        }
    }

    async fn overloaded(&self, header: &Header, message: String) {
        let version = self.reply_version(header);
        let err = CqlError::Overloaded(message);
        self.send(response::error(version, header.stream, &err))
            .await;
    }

    async fn on_envelope(
        &mut self,
        header: Header,
        body: Bytes,
        held: Reservation,
    ) -> Option<Framer> {
        let version = self.reply_version(&header);
        let decoded = self
            .check_header(&header)
            .and_then(|op| Ok((op, self.maybe_decompress(&header, body)?)))
            .and_then(|(op, body)| {
                decode_request(version, header.flags, op, body).map_err(|e| e.0)
            });
        match decoded {
            Ok(request) => {
                let traced = header.flags & FLAG_TRACING != 0;
                self.dispatch(version, header.stream, request, traced, held)
                    .await
            }
            Err(message) => {
                self.send(response::protocol_error(version, header.stream, message))
                    .await;
                None
            }
        }
    }

    fn check_header(&self, header: &Header) -> Result<Opcode, String> {
        let Some(op) = Opcode::from_byte(header.opcode) else {
            return Err(format!("Unknown opcode {}", header.opcode));
        };
        if op.is_request() == header.response {
            let dir = |response: bool| if response { "RESPONSE" } else { "REQUEST" };
            return Err(format!(
                "Wrong protocol direction (expected {}, got {}) for opcode {} ({})",
                dir(!op.is_request()),
                dir(header.response),
                header.opcode,
                op.name()
            ));
        }
        match self.version {
            Some(v) if v != header.version => Err(format!(
                "Invalid message version. Got {0}/v{0} but previous messages on this connection had version {v}/v{v}",
                header.version
            )),
            _ => Ok(op),
        }
    }

    /// Legacy framing compresses per envelope; v5 compresses segments instead.
    fn maybe_decompress(&self, header: &Header, body: Bytes) -> Result<Bytes, String> {
        let legacy_lz4 = self.lz4 && self.version.is_some_and(|v| v < 5);
        if legacy_lz4 && header.flags & FLAG_COMPRESSED != 0 {
            decompress_body(&body, self.max_body())
        } else {
            Ok(body)
        }
    }

    async fn dispatch(
        &mut self,
        version: u8,
        stream: i16,
        request: Request,
        traced: bool,
        held: Reservation,
    ) -> Option<Framer> {
        let established = self.version.is_some();
        match request {
            Request::Options => self.send(response::supported(version, stream)).await,
            Request::Startup(options) if !established => {
                return self.startup(version, stream, options).await
            }
            _ if !established => {
                let msg = format!(
                    "Unexpected message {}, expecting STARTUP or OPTIONS",
                    name(&request)
                );
                self.send(response::protocol_error(version, stream, msg))
                    .await
            }
            Request::Startup(_) => {
                let msg = "Unexpected message STARTUP, the connection is already initialized";
                self.send(response::protocol_error(version, stream, msg))
                    .await
            }
            Request::Register(kinds) => self.register(version, stream, &kinds).await,
            Request::AuthResponse(_) => self.send(response::auth_success(version, stream)).await,
            work => self.run(version, stream, work, traced, held).await,
        }
        None
    }

    async fn startup(
        &mut self,
        version: u8,
        stream: i16,
        options: Vec<(String, String)>,
    ) -> Option<Framer> {
        let get = |key: &str| {
            options
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        if get("CQL_VERSION").is_none() {
            let msg = "Missing value CQL_VERSION in STARTUP message";
            self.send(response::protocol_error(version, stream, msg))
                .await;
            return None;
        }
        let lz4 = match get("COMPRESSION").map(|c| c.to_lowercase()) {
            None => false,
            Some(c) if c == "lz4" => true,
            Some(c) => {
                let msg = format!("Unknown compression algorithm: {c}");
                self.send(response::protocol_error(version, stream, msg))
                    .await;
                return None;
            }
        };
        let driver = DriverInfo {
            driver_name: get("DRIVER_NAME"),
            driver_version: get("DRIVER_VERSION"),
            client_id: get("CLIENT_ID"),
            options: options.clone(),
        };
        self.client.start(version, driver);
        self.version = Some(version);
        self.lz4 = lz4;
        self.throw_on_overload |= get("THROW_ON_OVERLOAD").as_deref() == Some("1");
        self.send(response::ready(version, stream)).await;
        if version >= 5 {
            let _ = self.out.send(Out::Framing(Framing::V5 { lz4 })).await;
            return Some(Framer::V5(V5Decoder::new(self.max_body(), lz4)));
        }
        if lz4 {
            let _ = self.out.send(Out::Framing(Framing::Legacy { lz4 })).await;
        }
        None
    }

    async fn register(&mut self, version: u8, stream: i16, kinds: &[EventKind]) {
        let mask = kinds.iter().fold(0u8, |m, k| m | *k as u8);
        self.registered.fetch_or(mask, Ordering::Relaxed);
        if self.event_task.is_none() {
            let rx = self.shared.events.subscribe();
            let (registered, out) = (Arc::clone(&self.registered), self.out.clone());
            self.event_task = Some(tokio::spawn(forward_events(rx, registered, out, version)));
        }
        self.send(response::ready(version, stream)).await;
    }

    /// Runs a request: polled once here, it is answered at once when it does not wait (a
    /// local write, a read from cached data), sparing a task and a wake-up of another core;
    /// a request that waits moves to a task of its own, which holds the request's
    /// reservation until the response is queued.
    async fn run(
        &mut self,
        version: u8,
        stream: i16,
        request: Request,
        traced: bool,
        held: Reservation,
    ) {
        let permit = Taken::from(&self.permits, 1).await;
        self.client.count_request();
        let handler = Arc::clone(&self.shared.handler);
        let client = Arc::clone(&self.client);
        let what = name(&request);
        // Boxed: the large request future lives in an ordinary allocation that the allocator
        // recycles at once, and moves to a task without being copied. A panic anywhere in the
        // request (handler or encoding) is this request's ServerError, nothing more.
        let mut work = panics::catch(Box::pin(async move {
            execute(&*handler, &client, version, stream, request, traced).await
        }));
        if let Some(outcome) = poll_once(&mut work).await {
            let envelope = answer(outcome, what, &self.client, version, stream);
            self.send(envelope).await;
            drop((permit, held));
            return;
        }
        let out = self.out.clone();
        let client = Arc::clone(&self.client);
        tokio::spawn(async move {
            let envelope = answer(work.await, what, &client, version, stream);
            let _ = out.send(Out::Envelope(envelope)).await;
            drop((permit, held));
        });
    }
}

/// Polls `work` once: its output when it is ready, `None` when it waits.
async fn poll_once<F: Future + Unpin>(work: &mut F) -> Option<F::Output> {
    std::future::poll_fn(|cx| {
        Poll::Ready(match Pin::new(&mut *work).poll(cx) {
            Poll::Ready(output) => Some(output),
            Poll::Pending => None,
        })
    })
    .await
}

/// The response to a request that ran to its end or panicked.
fn answer(
    outcome: Result<BytesMut, PanicReport>,
    what: &str,
    client: &ClientState,
    version: u8,
    stream: i16,
) -> BytesMut {
    match outcome {
        Ok(envelope) => envelope,
        Err(report) => panicked(&report, what, client, version, stream),
    }
}

/// Runs `wait` unless the server shuts down or the client leaves first (`None` then).
async fn unless_gone<T>(
    shutdown: &mut watch::Receiver<bool>,
    rd: &OwnedReadHalf,
    wait: impl Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        done = wait => Some(done),
        _ = shutdown.changed() => None,
        _ = peer_closed(rd) => None,
    }
}

/// Resolves when the client has closed its side (or the socket failed). A paused connection
/// is not read from, so bytes the client sent meanwhile keep the socket readable: then the
/// close is looked for every `PAUSED_CLOSE_CHECK`.
async fn peer_closed(rd: &OwnedReadHalf) {
    loop {
        match rd.ready(Interest::READABLE).await {
            Ok(ready) if !ready.is_read_closed() => tokio::time::sleep(PAUSED_CLOSE_CHECK).await,
            _ => return,
        }
    }
}

/// Resolves when `deadline` passes; never when there is none.
async fn expire(deadline: Option<(Instant, Expiry)>) -> Expiry {
    match deadline {
        Some((at, expiry)) => {
            tokio::time::sleep_until(at.into()).await;
            expiry
        }
        None => std::future::pending().await,
    }
}

/// Logs a request's panic at ERROR with its backtrace and answers it with a ServerError.
fn panicked(
    report: &PanicReport,
    what: &str,
    client: &ClientState,
    version: u8,
    stream: i16,
) -> BytesMut {
    tracing::error!(
        "Unexpected error (a panic) while handling {what} on stream {stream} from {}: {} at {}\n{}",
        client.peer(),
        report.message,
        report.location.as_deref().unwrap_or("an unknown place"),
        report
            .backtrace
            .as_deref()
            .unwrap_or("(no backtrace: the panic hook is not installed)")
    );
    let message = format!(
        "Unexpected error while executing the request: {}",
        report.message
    );
    response::error(version, stream, &CqlError::Server(message))
}

fn name(request: &Request) -> &'static str {
    match request {
        Request::Startup(_) => "STARTUP",
        Request::Options => "OPTIONS",
        Request::Query { .. } => "QUERY",
        Request::Prepare { .. } => "PREPARE",
        Request::Execute { .. } => "EXECUTE",
        Request::Batch(_) => "BATCH",
        Request::Register(_) => "REGISTER",
        Request::AuthResponse(_) => "AUTH_RESPONSE",
    }
}

/// Runs a QUERY/PREPARE/EXECUTE/BATCH and encodes its response.
async fn execute<H: QueryHandler>(
    handler: &H,
    client: &ClientState,
    version: u8,
    stream: i16,
    request: Request,
    traced: bool,
) -> BytesMut {
    let outcome = match request {
        Request::Query { query, options } => handler.query(client, &query, options, traced).await,
        // Rare next to EXECUTE, and its future (which saves the statement) is large: boxed, it
        // does not widen every request task.
        Request::Prepare { query, keyspace } => {
            Box::pin(handler.prepare(client, &query, keyspace, traced)).await
        }
        Request::Execute {
            id,
            result_metadata_id,
            options,
        } => {
            let metadata_id = result_metadata_id.as_deref();
            handler
                .execute(client, &id, metadata_id, options, traced)
                .await
        }
        Request::Batch(batch) => handler.batch(client, batch, traced).await,
        other => Err(CqlError::Server(format!(
            "{} is not a query request",
            name(&other)
        ))),
    };
    match outcome {
        Ok(outcome) => {
            if let QueryResult::SetKeyspace(ks) = &outcome.result {
                client.set_keyspace(ks.clone());
            }
            response::result(version, stream, &outcome)
        }
        Err(err) => response::error(version, stream, &err),
    }
}

/// Pushes the events this connection registered for until it closes.
async fn forward_events(
    mut rx: broadcast::Receiver<Event>,
    registered: Arc<AtomicU8>,
    out: mpsc::Sender<Out>,
    version: u8,
) {
    loop {
        let event = tokio::select! {
            event = rx.recv() => event,
            _ = out.closed() => return,
        };
        match event {
            Ok(e) if registered.load(Ordering::Relaxed) & e.kind() as u8 != 0 => {
                if out
                    .send(Out::Envelope(response::event(version, &e)))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
