//! Repair: anti-entropy between the replicas of token ranges, as Cassandra's incremental
//! (`nodetool repair`) and full (`nodetool repair -full`) repairs.
//!
//! This crate owns the Merkle trees ([`merkle`]: a tree per token range of a table, leaves
//! hashing the partitions of their sub-range), validation (`validation`: a table's tree built
//! from this node's data, memtables and SSTables merged and purged as a compaction would,
//! tombstones included, each partition hashed field by field by `digest` so equal data gives
//! equal hashes whatever its layout), the repair verbs' payloads ([`messages`]), and the
//! repair sessions (`session`, Cassandra's RepairSession, RepairJob, ValidationTask and
//! SyncTask): the coordinating node asks every replica of a range for its tree, compares them
//! pairwise and has each pair that differs fetch the differing sub-ranges from each other over
//! `streaming`. An incremental session first has every replica mark the unrepaired data of
//! its ranges pending for the session (`RepairPending`; storage's anticompaction splits what
//! spans other ranges), compares and syncs only that, then has them promote it to repaired, or
//! return it to unrepaired when the session failed. Which ranges and replicas to repair
//! (keyspaces, `-pr`, `-dc`, `-hosts`) is the caller's plan ([`RepairPlan`]); this crate also
//! refuses a repair overlapping one that runs on this node, numbers the commands and keeps
//! their progress ([`RepairStatus`]).
//!
//! A preview (`--preview`, `--validate`: [`PreviewKind`]) compares one kind of data the same
//! way and reports what would be streamed without streaming or marking anything. [`schedule`]
//! plans the built-in scheduler's repairs (which range next, when due, when to hold off).

pub mod merkle;
pub mod messages;
pub mod schedule;
pub mod validation;

mod claims;
mod digest;
mod local;
mod preview;
mod session;
mod status;

pub use local::{LocalSession, SessionState};
pub use preview::{PreviewKind, PreviewStream};
pub use session::{Notice, NoticeKind, RepairPlan, SessionPlan};
pub use status::{RepairState, RepairStatus};

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mutation::TokenRange;
use net::{weak_handler, Messaging, RemoteError, Verb};
use storage::{RepairMark, Storage};
use streaming::{StreamRequest, Streaming};

use crate::claims::Claims;
use crate::local::LocalSessions;
use crate::messages::{
    encode_tree, PendingAction, PendingRequest, SyncRequest, Synced, ValidationRequest,
};
use crate::session::storage_ranges;
use crate::status::Registry;

/// Cassandra 5.0's `repair_session_space` when the heap is 4 GiB (a sixteenth of it).
pub const DEFAULT_SESSION_SPACE: u64 = 256 * 1024 * 1024;

#[derive(Clone, Debug)]
pub struct RepairConfig {
    /// `repair_session_space`: the memory the trees of a session may take at once, which
    /// bounds their depth.
    pub session_space: u64,
    /// Trees at least this deep (when the space allows): the partition estimates count
    /// SSTables only, and a table still in its memtables should not get one leaf.
    pub min_depth: u8,
    /// How long a replica may take to build a tree.
    pub validation_timeout: Duration,
    /// How long a replica may take to fetch the differing ranges from another.
    pub sync_timeout: Duration,
}

impl Default for RepairConfig {
    fn default() -> RepairConfig {
        RepairConfig {
            session_space: DEFAULT_SESSION_SPACE,
            min_depth: 10,
            validation_timeout: Duration::from_secs(600),
            sync_timeout: Duration::from_secs(3600),
        }
    }
}

/// The node's repair service: runs the repairs it coordinates and answers the validation and
/// sync requests of the others.
pub struct Repair {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    storage: Arc<Storage>,
    messaging: Arc<Messaging>,
    streaming: Arc<Streaming>,
    config: RepairConfig,
    claims: Claims,
    registry: Registry,
    local: LocalSessions,
    commands: AtomicU32,
    repaired: std::sync::OnceLock<RepairedHook>,
}

/// What a session that succeeded (not a preview) repaired, for what acts on it: Paxos purges
/// the state of the rounds older than its start (`paxos_state_purging: repaired`).
#[derive(Clone, Debug)]
pub struct Repaired {
    pub tables: Vec<mutation::TableId>,
    pub ranges: Vec<TokenRange>,
    pub replicas: Vec<SocketAddr>,
    /// When the session started, in milliseconds since the epoch.
    pub started_ms: u64,
}

/// Called at the end of each session that succeeded; the command waits for it.
pub type RepairedHook = Arc<
    dyn Fn(Repaired) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>
        + Send
        + Sync,
>;

impl Repair {
    /// Starts the service: returns the data left pending by sessions of a previous run to
    /// unrepaired, and registers the repair verbs' handlers on `messaging`.
    pub fn start(
        storage: Arc<Storage>,
        messaging: Arc<Messaging>,
        streaming: Arc<Streaming>,
        config: RepairConfig,
    ) -> Repair {
        match storage.release_all_pending() {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                "{n} SSTables left pending by an unfinished repair are unrepaired again"
            ),
            Err(e) => tracing::warn!("could not release the SSTables of unfinished repairs: {e}"),
        }
        let inner = Arc::new(Inner {
            storage,
            messaging: messaging.clone(),
            streaming,
            config,
            claims: Claims::default(),
            registry: Registry::default(),
            local: LocalSessions::default(),
            commands: AtomicU32::new(0),
            repaired: std::sync::OnceLock::new(),
        });
        register(&messaging, &inner);
        Repair { inner }
    }

    /// The number of the next repair command (`#1`, `#2`, ... since the node started).
    pub fn next_command(&self) -> u32 {
        self.inner.commands.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Runs repair command `command` of `plan`, telling `notify` what Cassandra's
    /// RepairCoordinator notifies (the session lines and the final ones); the status
    /// at the end. The command fails as a whole when any session fails.
    pub async fn run(
        &self,
        command: u32,
        plan: RepairPlan,
        notify: &(dyn Fn(Notice) + Sync),
    ) -> RepairStatus {
        session::run_command(&self.inner, command, plan, notify).await
    }

    /// Sets what runs after each session that succeeded (once; a second call is ignored).
    pub fn on_repaired(&self, hook: RepairedHook) {
        let _ = self.inner.repaired.set(hook);
    }

    /// The repairs running and the last ones finished, oldest first.
    pub fn statuses(&self) -> Vec<RepairStatus> {
        self.inner.registry.statuses()
    }

    /// The incremental sessions this node takes part in (`repair_admin list`): those not
    /// ended, or all with `all`.
    pub fn local_sessions(&self, all: bool) -> Vec<LocalSession> {
        self.inner.local.list(all)
    }

    /// Cancels this node's part in incremental session `id` (`repair_admin cancel`): its data
    /// of the session is unrepaired again and the session failed here (a promotion the
    /// coordinator sends later finds nothing pending).
    pub async fn cancel(&self, id: uuid::Uuid) -> Result<(), String> {
        let session = self
            .inner
            .local
            .get(id)
            .ok_or_else(|| format!("Session {id} does not exist"))?;
        let release = PendingRequest {
            session: id,
            participants: session.participants,
            tables: session.tables,
            ranges: Vec::new(),
            action: PendingAction::Release,
        };
        pending(&self.inner, release, session.coordinator)
            .await
            .map_err(|e| e.message)
    }
}

fn register(messaging: &Messaging, inner: &Arc<Inner>) {
    messaging.register(
        Verb::RepairValidation,
        weak_handler(inner, "repair", |inner, _, payload| async move {
            let request = ValidationRequest::decode(&payload).map_err(remote)?;
            validate(&inner, request).await.map(|t| encode_tree(&t))
        }),
    );
    messaging.register(
        Verb::RepairSync,
        weak_handler(inner, "repair", |inner, _, payload| async move {
            let request = SyncRequest::decode(&payload).map_err(remote)?;
            let pending = request.pending.then_some(request.session);
            let synced = fetch(
                &inner,
                request.table,
                request.source,
                request.ranges,
                pending,
            );
            synced.await.map(|s| s.encode()).map_err(remote)
        }),
    );
    messaging.register(
        Verb::RepairPending,
        weak_handler(inner, "repair", |inner, from, payload| async move {
            let request = PendingRequest::decode(&payload).map_err(remote)?;
            pending(&inner, request, from.addr)
                .await
                .map(|()| Bytes::new())
        }),
    );
}

/// Marks this node's data of an incremental repair session `coordinator` runs pending, or
/// ends the session, off the async threads; the session's local state follows.
pub(crate) async fn pending(
    inner: &Arc<Inner>,
    request: PendingRequest,
    coordinator: SocketAddr,
) -> Result<(), RemoteError> {
    let (session, action) = (request.session, request.action);
    let (participants, tables) = (request.participants.clone(), request.tables.clone());
    let storage = inner.storage.clone();
    let done = tokio::task::spawn_blocking(move || mark(&storage, &request))
        .await
        .map_err(remote)?;
    let local = &inner.local;
    match (action, &done) {
        (PendingAction::Prepare, Ok(())) => {
            local.prepared(session, coordinator, participants, tables);
        }
        (PendingAction::Promote(_), Ok(())) => {
            local.set_state(session, SessionState::Finalized);
        }
        _ => {
            local.set_state(session, SessionState::Failed);
        }
    }
    done.map_err(remote)
}

/// What `request` asks of this node's data. Blocking.
fn mark(storage: &Storage, request: &PendingRequest) -> Result<(), storage::StorageError> {
    let session = request.session;
    let ranges: Vec<TokenRange> = request
        .ranges
        .iter()
        .flat_map(|r| storage_ranges(*r))
        .collect();
    for table in &request.tables {
        match request.action {
            PendingAction::Prepare => {
                let report = storage.mark_pending(*table, &ranges, session)?;
                tracing::info!(
                    "[repair #{session}] marked pending: {} SSTables whole, {} split",
                    report.marked,
                    report.split
                );
            }
            PendingAction::Promote(at) => {
                storage.finish_pending(*table, session, RepairMark::repaired(at))?;
            }
            PendingAction::Release => {
                storage.finish_pending(*table, session, RepairMark::UNREPAIRED)?;
            }
        }
    }
    Ok(())
}

/// Builds this node's tree for `request`, off the async threads.
pub(crate) async fn validate(
    inner: &Arc<Inner>,
    request: ValidationRequest,
) -> Result<merkle::MerkleTree, RemoteError> {
    if let storage::RepairScope::Pending(session) = request.scope {
        inner.local.set_state(session, SessionState::Repairing);
    }
    let storage = inner.storage.clone();
    tokio::task::spawn_blocking(move || validation::build(&storage, &request))
        .await
        .map_err(remote)?
        .map_err(remote)
}

/// Fetches `ranges` of `table` from `source` into this node, pending for incremental repair
/// session `pending` if given; what moved.
pub(crate) async fn fetch(
    inner: &Inner,
    table: mutation::TableId,
    source: SocketAddr,
    ranges: Vec<TokenRange>,
    pending: Option<uuid::Uuid>,
) -> Result<Synced, String> {
    let request = StreamRequest {
        peer: source,
        tables: vec![(table, ranges)],
    };
    let mark = pending.map_or(RepairMark::UNREPAIRED, RepairMark::pending);
    let plan = inner.streaming.fetch_marked("Repair", vec![request], mark);
    let ids = plan.session_ids();
    plan.finish().await.map_err(|failures| {
        let why: Vec<String> = failures.iter().map(|(_, e)| e.to_string()).collect();
        why.join("; ")
    })?;
    let mut synced = Synced::default();
    for info in inner.streaming.sessions() {
        if ids.contains(&info.id) {
            synced.files += info.files_done;
            synced.bytes += info.bytes_done;
        }
    }
    Ok(synced)
}

fn remote(error: impl std::fmt::Display) -> RemoteError {
    RemoteError::new(RemoteError::SERVER_ERROR, error.to_string())
}

/// An internode address as Cassandra prints an InetAddressAndPort: `/127.0.0.1:7000`.
pub fn endpoint(addr: SocketAddr) -> String {
    format!("/{addr}")
}
