//! Streaming: moving the SSTables of some token ranges of some tables between nodes, the
//! machinery under `nodetool rebuild`, bootstrap, replace, decommission and removenode (through
//! `nodeops::StreamMover`) and, later, repair.
//!
//! This crate owns the stream sessions: their protocol (the `Stream*` verbs over `net`,
//! [`messages`]), the receiving side's driver (`receive`), the sending side's sessions
//! (`source`), the node-wide outbound throttles (`stream_throughput_outbound` for SSTables
//! rewritten for a stream, `entire_sstable_stream_throughput_outbound` for whole ones), and
//! the progress of every session ([`SessionInfo`], `nodetool netstats`). Choosing the SSTables
//! and checking and adding received ones belongs to `storage::stream`; which ranges to move
//! and from whom belongs to the caller.
//!
//! Every session is pulled by its receiver: it asks the source to prepare (flush, then stage
//! the SSTables lying in the ranges — whole ones hard-linked, the partitions in range of the
//! others rewritten), gets the list of files, asks for their bytes chunk by chunk (a few
//! requests in flight, each retried after a lost message), and ends the session. A session
//! that fails is ended on both sides: the receiver removes what it staged and tells the
//! source, which drops its staging (or does so on its own when the receiver goes silent).
//! SSTables already added stay: retrying streams the ranges again, and the copies merge as
//! any overlapping SSTables do. To send (decommission), a node asks the receiver to pull from
//! it (`StreamPull`, [`Streaming::pull`]), and the answer comes once the receiver has it all;
//! the same message lets a node have another pull from a third (removenode).

pub mod messages;
mod progress;
mod receive;
mod source;
mod throttle;

pub use progress::{Direction, SessionInfo, State};
pub use throttle::Throttle;

use std::net::SocketAddr;
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use mutation::{TableId, TokenRange};
use net::{weak_handler, Messaging, NetError, RemoteError, Verb};
use storage::{RepairMark, Storage, StorageError};
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::messages::{ChunkRequest, Complete, DecodeError, Estimate, Prepare, Pull, Reader};
use crate::progress::Registry;
use crate::source::Sources;

/// Cassandra 5.0's default for both outbound throughputs: 24 MiB/s.
pub const DEFAULT_THROUGHPUT: u64 = 24 * 1024 * 1024;

#[derive(Clone, Debug)]
pub struct StreamConfig {
    /// Bytes asked for per chunk request.
    pub chunk_bytes: usize,
    /// Chunk requests in flight per session.
    pub window: usize,
    /// Timeout of a chunk or completion request.
    pub request_timeout: Duration,
    /// Timeout of the preparation (a flush and the rewriting of straddling SSTables).
    pub prepare_timeout: Duration,
    /// Timeout of a `StreamPull`: the whole of the sessions it asks for.
    pub pull_timeout: Duration,
    /// A chunk request is sent again this many times after a timeout or a lost connection,
    /// `retry_delay` times the attempt number apart.
    pub retries: u32,
    pub retry_delay: Duration,
    /// A source ends a session its receiver has asked nothing of for this long.
    pub idle_timeout: Duration,
    /// `stream_throughput_outbound` and `entire_sstable_stream_throughput_outbound`, bytes per
    /// second (0: unlimited).
    pub throughput: u64,
    pub entire_sstable_throughput: u64,
}

impl Default for StreamConfig {
    fn default() -> StreamConfig {
        StreamConfig {
            chunk_bytes: 1024 * 1024,
            window: 4,
            request_timeout: Duration::from_secs(60),
            prepare_timeout: Duration::from_secs(600),
            pull_timeout: Duration::from_secs(24 * 3600),
            retries: 5,
            retry_delay: Duration::from_millis(500),
            idle_timeout: Duration::from_secs(300),
            throughput: DEFAULT_THROUGHPUT,
            entire_sstable_throughput: DEFAULT_THROUGHPUT,
        }
    }
}

#[derive(Clone, Debug, thiserror::Error)]
pub enum StreamError {
    #[error("{0}")]
    Net(#[from] NetError),
    #[error("{0}")]
    Storage(String),
    #[error("{0}")]
    Decode(#[from] DecodeError),
    #[error("no stream session {0}")]
    UnknownSession(Uuid),
    #[error("stream protocol error: {0}")]
    Protocol(String),
}

impl From<StorageError> for StreamError {
    fn from(error: StorageError) -> StreamError {
        StreamError::Storage(error.to_string())
    }
}

/// Ranges of tables to pull from one peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRequest {
    /// The peer's internode address.
    pub peer: SocketAddr,
    pub tables: Vec<(TableId, Vec<TokenRange>)>,
}

/// The node's streaming service.
pub struct Streaming {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    storage: Arc<Storage>,
    messaging: Arc<Messaging>,
    config: StreamConfig,
    throttle: Throttle,
    entire_sstable_throttle: Throttle,
    registry: Registry,
    sources: Sources,
}

/// A running plan: one session per peer.
pub struct StreamPlan {
    pub id: Uuid,
    sessions: Vec<RunningSession>,
}

/// A session's peer, id and task.
type RunningSession = (SocketAddr, Uuid, JoinHandle<Result<(), StreamError>>);

impl StreamPlan {
    /// The id of each session, one per peer.
    pub fn session_ids(&self) -> Vec<Uuid> {
        self.sessions.iter().map(|(_, id, _)| *id).collect()
    }

    /// Waits for every session; the failures, by peer, if any failed.
    pub async fn finish(self) -> Result<(), Vec<(SocketAddr, StreamError)>> {
        let mut failures = Vec::new();
        for (peer, _, session) in self.sessions {
            let result = session
                .await
                .unwrap_or_else(|e| Err(StreamError::Protocol(format!("session task: {e}"))));
            if let Err(e) = result {
                failures.push((peer, e));
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures)
        }
    }
}

impl Streaming {
    /// Starts the service: registers the stream verbs' handlers on `messaging`.
    pub fn start(
        storage: Arc<Storage>,
        messaging: Arc<Messaging>,
        config: StreamConfig,
    ) -> Streaming {
        let inner = Arc::new(Inner {
            storage,
            messaging: messaging.clone(),
            throttle: Throttle::new(config.throughput),
            entire_sstable_throttle: Throttle::new(config.entire_sstable_throughput),
            config,
            registry: Registry::default(),
            sources: Sources::default(),
        });
        register(&messaging, &inner);
        tokio::spawn(expire_idle(Arc::downgrade(&inner)));
        Streaming { inner }
    }

    /// Pulls the ranges of each request from its peer, one session per request, all at once.
    pub fn fetch(&self, description: &str, requests: Vec<StreamRequest>) -> StreamPlan {
        fetch(&self.inner, description, requests, RepairMark::UNREPAIRED)
    }

    /// [`fetch`](Self::fetch) whose SSTables join with the repair state `mark` (an
    /// incremental repair's pending session) instead of unrepaired.
    pub fn fetch_marked(
        &self,
        description: &str,
        requests: Vec<StreamRequest>,
        mark: RepairMark,
    ) -> StreamPlan {
        fetch(&self.inner, description, requests, mark)
    }

    /// Has `target` pull `request.tables` from `request.peer` (this node or a third one);
    /// resolves once `target` holds them, or with why not.
    pub async fn pull(
        &self,
        target: SocketAddr,
        description: &str,
        request: StreamRequest,
    ) -> Result<(), StreamError> {
        let pull = Pull {
            description: description.to_string(),
            source: request.peer,
            tables: request.tables,
        };
        let timeout = self.inner.config.pull_timeout;
        let messaging = &self.inner.messaging;
        messaging
            .request(target, Verb::StreamPull, pull.encode(), timeout)
            .await?;
        Ok(())
    }

    /// About how many bytes `request.peer` holds in `request.tables` (its SSTables' partitions
    /// in the ranges times their mean size, uncompressed: an estimate on the high side).
    pub async fn estimate(&self, request: StreamRequest) -> Result<u64, StreamError> {
        let estimate = Estimate {
            tables: request.tables,
        };
        let timeout = self.inner.config.request_timeout;
        let answer = self
            .inner
            .messaging
            .request(
                request.peer,
                Verb::StreamEstimate,
                estimate.encode(),
                timeout,
            )
            .await?;
        let mut r = Reader(&answer);
        let bytes = r.u64()?;
        r.end()?;
        Ok(bytes)
    }

    /// Every session running and the last ones finished, oldest first.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        self.inner.registry.sessions()
    }

    /// `stream_throughput_outbound`, bytes per second (0: unlimited).
    pub fn throttle(&self) -> &Throttle {
        &self.inner.throttle
    }

    /// `entire_sstable_stream_throughput_outbound`, bytes per second (0: unlimited).
    pub fn entire_sstable_throttle(&self) -> &Throttle {
        &self.inner.entire_sstable_throttle
    }
}

fn fetch(
    inner: &Arc<Inner>,
    description: &str,
    requests: Vec<StreamRequest>,
    mark: RepairMark,
) -> StreamPlan {
    let id = time_uuid();
    let sessions = requests
        .into_iter()
        .map(|request| {
            let session = time_uuid();
            let progress =
                inner
                    .registry
                    .start(session, description, request.peer, Direction::Receiving);
            let prepare = Prepare {
                session,
                description: description.to_string(),
                tables: request.tables,
            };
            let run = receive::run(inner.clone(), request.peer, prepare, progress, mark);
            (request.peer, session, tokio::spawn(run))
        })
        .collect();
    StreamPlan { id, sessions }
}

/// Runs the session a `StreamPull` asks for and answers once it has ended.
async fn pulled(inner: &Arc<Inner>, pull: Pull) -> Result<Bytes, RemoteError> {
    let request = StreamRequest {
        peer: pull.source,
        tables: pull.tables,
    };
    fetch(
        inner,
        &pull.description,
        vec![request],
        RepairMark::UNREPAIRED,
    )
    .finish()
    .await
    .map(|()| Bytes::new())
    .map_err(|failures| {
        let why: Vec<String> = failures.iter().map(|(_, e)| e.to_string()).collect();
        remote(why.join("; "))
    })
}

/// A time-based (version 1) id with a random node part, as Cassandra's stream plan and
/// repair ids (`system_views.streaming` keys them as timeuuids).
pub fn time_uuid() -> Uuid {
    let random = Uuid::new_v4();
    let mut node = [0u8; 6];
    node.copy_from_slice(&random.as_bytes()[..6]);
    Uuid::now_v1(&node)
}

fn register(messaging: &Messaging, inner: &Arc<Inner>) {
    messaging.register(
        Verb::StreamPrepare,
        weak_handler(inner, "streaming", |inner, from, payload| async move {
            let prepare = Prepare::decode(&payload).map_err(remote)?;
            source::prepare(&inner, from.addr, prepare)
                .await
                .map_err(remote)
        }),
    );
    messaging.register(
        Verb::StreamChunk,
        weak_handler(inner, "streaming", |inner, _, payload| async move {
            let request = ChunkRequest::decode(&payload).map_err(remote)?;
            source::chunk(&inner, request).await.map_err(remote)
        }),
    );
    messaging.register(
        Verb::StreamComplete,
        weak_handler(inner, "streaming", |inner, _, payload| async move {
            let complete = Complete::decode(&payload).map_err(remote)?;
            Ok::<Bytes, RemoteError>(source::complete(&inner, complete))
        }),
    );
    messaging.register(
        Verb::StreamPull,
        weak_handler(inner, "streaming", |inner, _, payload| async move {
            let pull = Pull::decode(&payload).map_err(remote)?;
            pulled(&inner, pull).await
        }),
    );
    messaging.register(
        Verb::StreamEstimate,
        weak_handler(inner, "streaming", |inner, _, payload| async move {
            let estimate = Estimate::decode(&payload).map_err(remote)?;
            Ok::<Bytes, RemoteError>(estimated(&inner, estimate))
        }),
    );
}

/// The bytes this node holds in the ranges `estimate` names (tables it does not know hold
/// none).
fn estimated(inner: &Inner, estimate: Estimate) -> Bytes {
    let mut bytes = 0u64;
    for (table, ranges) in estimate.tables {
        let Ok(sizes) = inner.storage.size_estimates(table, &ranges) else {
            continue;
        };
        let partitions: u64 = sizes.partitions.iter().sum();
        bytes = bytes.saturating_add(partitions.saturating_mul(sizes.mean_partition_bytes));
    }
    Bytes::copy_from_slice(&bytes.to_be_bytes())
}

fn remote(error: impl std::fmt::Display) -> RemoteError {
    RemoteError::new(RemoteError::SERVER_ERROR, error.to_string())
}

/// Ends, every few seconds, the sending sessions whose receiver went silent.
async fn expire_idle(inner: Weak<Inner>) {
    loop {
        let Some(inner) = inner.upgrade() else { return };
        let idle = inner.config.idle_timeout;
        inner.sources.expire(idle);
        drop(inner);
        tokio::time::sleep((idle / 4).max(Duration::from_millis(100))).await;
    }
}
