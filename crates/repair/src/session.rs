//! Running a repair command, as Cassandra's RepairCoordinator, RepairSession, RepairJob,
//! ValidationTask and SyncTask: one session per set of ranges sharing their replicas, one
//! after the other; in a session, a job per table (`job_threads` of them at once); in a job,
//! for each range, a tree from every replica (all at once, or one after the other when
//! sequential), compared pairwise; then every pair that differs is synced both ways over all
//! its differing sub-ranges of the job (each replica of the pair fetches them from the other,
//! one stream session each way). A session
//! fails at the first validation or sync that fails, and the command with it.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use mutation::{TableId, TokenRange};
use net::{NetError, Verb};
use storage::RepairScope;
use tokio::task::JoinSet;
use uuid::Uuid;

use crate::merkle::{self, MerkleTree};
use crate::messages::{
    decode_tree, PendingAction, PendingRequest, SyncRequest, Synced, ValidationRequest,
};
use crate::preview::{self, PreviewKind, PreviewStream};
use crate::status::{now_ms, RepairState, RepairStatus};
use streaming::{time_uuid, StreamRequest};

use crate::{endpoint, fetch, pending, validate, Inner};

/// Ranges that share their replicas (Cassandra's CommonRange): one session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionPlan {
    pub ranges: Vec<TokenRange>,
    /// Internode addresses of the replicas compared, this node among them.
    pub replicas: Vec<SocketAddr>,
}

/// What a repair command repairs and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairPlan {
    pub keyspace: String,
    /// The tables, by name and id.
    pub tables: Vec<(String, TableId)>,
    pub sessions: Vec<SessionPlan>,
    /// Validations one replica after the other (`-seq`) instead of all at once.
    pub sequential: bool,
    /// Tables repaired at once in a session (`-j`).
    pub job_threads: usize,
    /// Incremental (Cassandra 4.0+): each session marks the unrepaired data of its ranges
    /// pending on every replica, compares only that, and promotes it to repaired when the
    /// session succeeds (returns it to unrepaired when it fails). Otherwise full: everything
    /// is compared and no repair state changes.
    pub incremental: bool,
    /// A preview (`--preview`, `--validate`): the data of that kind compared, nothing
    /// streamed and no repair state changed; the command ends with what would be streamed.
    pub preview: Option<PreviewKind>,
    /// The options as Cassandra prints them in the starting line: `repair options (...)`.
    pub options: String,
    /// Why the repair cannot run, found while planning (a replica down, nothing to repair):
    /// the command starts and fails with it, as Cassandra's does.
    pub refused: Option<String>,
}

/// What a repair command tells as it runs: Cassandra's progress events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub kind: NoticeKind,
    pub message: String,
}

/// Cassandra's `ProgressEventType`s that repair sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    Start,
    /// A session finished.
    Progress,
    Error,
    /// A message along the way (a preview's summary).
    Notification,
    Success,
    /// The command's last notice.
    Complete,
}

fn notice(kind: NoticeKind, message: String) -> Notice {
    Notice { kind, message }
}

/// What one job (a table in a session) found and moved, or would move in a preview.
#[derive(Clone, Debug, Default)]
struct JobResult {
    out_of_sync: u64,
    synced: Synced,
    partitions: u64,
    previewed: Vec<PreviewStream>,
}

/// The differing sub-ranges of a pair of replicas, and the partitions each holds in them.
#[derive(Default)]
struct PairDifference {
    ranges: Vec<TokenRange>,
    partitions: (u64, u64),
}

/// What a job needs, owned so it can run as its own task.
#[derive(Clone)]
struct Job {
    inner: Arc<Inner>,
    session: Uuid,
    table: TableId,
    table_name: String,
    plan: SessionPlan,
    sequential: bool,
    trees_at_once: u64,
    incremental: bool,
    preview: Option<PreviewKind>,
}

pub async fn run_command(
    inner: &Arc<Inner>,
    command: u32,
    plan: RepairPlan,
    notify: &(dyn Fn(Notice) + Sync),
) -> RepairStatus {
    let id = time_uuid();
    let started = Instant::now();
    let initial = RepairStatus {
        command,
        id,
        keyspace: plan.keyspace.clone(),
        tables: plan.tables.iter().map(|(name, _)| name.clone()).collect(),
        state: RepairState::Running,
        sessions_total: plan.sessions.len(),
        sessions_done: 0,
        ranges: plan.sessions.iter().map(|s| s.ranges.len()).sum(),
        ranges_out_of_sync: 0,
        bytes_streamed: 0,
        files_streamed: 0,
        partitions_validated: 0,
        previewed: Vec::new(),
        kind: kind(&plan),
        incremental: plan.incremental,
        preview: plan.preview,
        sequential: plan.sequential,
        job_threads: plan.job_threads,
        participants: participants(&plan),
        range_groups: plan.sessions.iter().map(|s| s.ranges.clone()).collect(),
        sessions: Vec::new(),
        success_message: None,
        started_ms: now_ms(),
        elapsed_ms: 0,
    };
    inner.registry.start(initial.clone());
    notify(notice(
        NoticeKind::Start,
        format!(
            "Starting repair command #{command} ({id}), repairing keyspace {} with {}",
            plan.keyspace, plan.options
        ),
    ));
    let state = match run_sessions(inner, id, &plan, notify).await {
        Ok(()) => {
            let message = success(inner, id, &plan, notify);
            inner
                .registry
                .update(id, |s| s.success_message = Some(message.clone()));
            notify(notice(NoticeKind::Success, message));
            notify(notice(
                NoticeKind::Complete,
                format!(
                    "Repair command #{command} finished in {}",
                    duration_words(started.elapsed().as_secs())
                ),
            ));
            RepairState::Success
        }
        Err(error) => {
            tracing::warn!("Repair {id} failed: {error}");
            notify(notice(
                NoticeKind::Error,
                format!("Repair command #{command} failed with error {error}"),
            ));
            notify(notice(
                NoticeKind::Complete,
                format!("Repair command #{command} finished with error"),
            ));
            RepairState::Failed(error)
        }
    };
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let finish = |status: &mut RepairStatus| {
        status.state = state.clone();
        status.elapsed_ms = elapsed_ms;
    };
    inner.registry.update(id, finish).unwrap_or_else(|| {
        let mut status = initial;
        finish(&mut status);
        status
    })
}

/// Cassandra's name for the kind of repair (`system_views.repairs.type`).
fn kind(plan: &RepairPlan) -> String {
    match plan.preview {
        Some(PreviewKind::All) => "preview full".into(),
        Some(PreviewKind::Repaired) => "preview repaired".into(),
        Some(PreviewKind::Unrepaired) => "preview unrepaired".into(),
        None if plan.incremental => "incremental".into(),
        None => "full".into(),
    }
}

/// Every replica of the plan's sessions, each once, in their first order.
fn participants(plan: &RepairPlan) -> Vec<SocketAddr> {
    let mut all: Vec<SocketAddr> = Vec::new();
    for replica in plan.sessions.iter().flat_map(|s| &s.replicas) {
        if !all.contains(replica) {
            all.push(*replica);
        }
    }
    all
}

/// The success message: for a preview, after its summary is notified, the summary too.
fn success(inner: &Inner, id: Uuid, plan: &RepairPlan, notify: &(dyn Fn(Notice) + Sync)) -> String {
    let Some(kind) = plan.preview else {
        return "Repair completed successfully".to_string();
    };
    let streams = inner
        .registry
        .update(id, |_| {})
        .map_or_else(Vec::new, |s| s.previewed);
    let message = preview::summary(kind, &plan.keyspace, &streams);
    tracing::info!("{message}");
    notify(notice(NoticeKind::Notification, message.clone()));
    format!("Repair preview completed successfully; {message}")
}

async fn run_sessions(
    inner: &Arc<Inner>,
    id: Uuid,
    plan: &RepairPlan,
    notify: &(dyn Fn(Notice) + Sync),
) -> Result<(), String> {
    if let Some(refused) = &plan.refused {
        return Err(refused.clone());
    }
    let tables: Vec<TableId> = plan.tables.iter().map(|(_, t)| *t).collect();
    let ranges: Vec<TokenRange> = plan
        .sessions
        .iter()
        .flat_map(|s| s.ranges.clone())
        .collect();
    // A preview changes nothing, so it may run beside a repair of the same data.
    let _claim = match plan.preview {
        Some(_) => None,
        None => Some(inner.claims.claim(&tables, &ranges).ok_or_else(|| {
            "Cannot start multiple repair sessions over the same sstables".to_string()
        })?),
    };
    for session in &plan.sessions {
        let session_id = time_uuid();
        inner.registry.update(id, |s| s.sessions.push(session_id));
        let ranges = format_ranges(&session.ranges);
        tracing::info!(
            "[repair #{session_id}] new session: will sync {} on range {ranges} for {}.{:?}",
            session
                .replicas
                .iter()
                .map(|a| endpoint(*a))
                .collect::<Vec<_>>()
                .join(", "),
            plan.keyspace,
            plan.tables.iter().map(|(n, _)| n).collect::<Vec<_>>()
        );
        let started_ms = now_ms();
        let result = run_session(inner, id, session_id, plan, session).await;
        if let Err(error) = result {
            return Err(format!(
                "Repair session {session_id} for range {ranges} failed with error {error}"
            ));
        }
        if let (Some(hook), None) = (inner.repaired.get(), plan.preview) {
            hook(crate::Repaired {
                tables: tables.clone(),
                ranges: session.ranges.clone(),
                replicas: session.replicas.clone(),
                started_ms,
            })
            .await;
        }
        inner.registry.update(id, |s| s.sessions_done += 1);
        notify(notice(
            NoticeKind::Progress,
            format!("Repair session {session_id} for range {ranges} finished"),
        ));
    }
    Ok(())
}

/// The session: for an incremental repair, its data marked pending on every replica first,
/// then promoted to repaired (or released to unrepaired when the session failed); its tables
/// `job_threads` at a time.
async fn run_session(
    inner: &Arc<Inner>,
    id: Uuid,
    session: Uuid,
    plan: &RepairPlan,
    session_plan: &SessionPlan,
) -> Result<(), String> {
    if !plan.incremental || plan.preview.is_some() {
        return run_jobs(inner, id, session, plan, session_plan).await;
    }
    let started_ms = now_ms();
    let mut result = on_replicas(inner, session, plan, session_plan, PendingAction::Prepare).await;
    if result.is_ok() {
        result = run_jobs(inner, id, session, plan, session_plan).await;
    }
    let end = match result {
        Ok(()) => PendingAction::Promote(started_ms),
        Err(_) => PendingAction::Release,
    };
    let ended = on_replicas(inner, session, plan, session_plan, end).await;
    result.and(ended)
}

/// Has every replica of the session do `action` with its data of the session, all at once.
async fn on_replicas(
    inner: &Arc<Inner>,
    session: Uuid,
    plan: &RepairPlan,
    session_plan: &SessionPlan,
    action: PendingAction,
) -> Result<(), String> {
    let request = PendingRequest {
        session,
        participants: session_plan.replicas.clone(),
        tables: plan.tables.iter().map(|(_, t)| *t).collect(),
        ranges: session_plan.ranges.clone(),
        action,
    };
    let mut running = JoinSet::new();
    for replica in session_plan.replicas.clone() {
        let (inner, request) = (inner.clone(), request.clone());
        running.spawn(async move {
            let local = inner.messaging.local();
            let answer = if replica == local {
                pending(&inner, request, local).await.map_err(|e| e.message)
            } else {
                let timeout = inner.config.validation_timeout;
                let sent = inner
                    .messaging
                    .request(replica, Verb::RepairPending, request.encode(), timeout)
                    .await;
                sent.map(|_| ()).map_err(|e| e.to_string())
            };
            answer.map_err(|e| {
                tracing::warn!("[repair #{session}] {action:?} in {replica} failed: {e}");
                format!("{action:?} failed in {}", endpoint(replica))
            })
        });
    }
    let mut first_error = Ok(());
    while let Some(done) = running.join_next().await {
        let result = done
            .map_err(|e| format!("repair task: {e}"))
            .and_then(|r| r);
        first_error = first_error.and(result);
    }
    first_error
}

/// The session's tables, `job_threads` at a time.
async fn run_jobs(
    inner: &Arc<Inner>,
    id: Uuid,
    session: Uuid,
    plan: &RepairPlan,
    session_plan: &SessionPlan,
) -> Result<(), String> {
    let at_once = plan.job_threads.max(1);
    for chunk in plan.tables.chunks(at_once) {
        let mut jobs = JoinSet::new();
        for (name, table) in chunk {
            let job = Job {
                inner: inner.clone(),
                session,
                table: *table,
                table_name: name.clone(),
                plan: session_plan.clone(),
                sequential: plan.sequential,
                trees_at_once: (session_plan.replicas.len() * at_once) as u64,
                incremental: plan.incremental,
                preview: plan.preview,
            };
            jobs.spawn(job.run());
        }
        while let Some(done) = jobs.join_next().await {
            let result = done.map_err(|e| format!("repair job: {e}"))??;
            inner.registry.update(id, |s| {
                s.ranges_out_of_sync += result.out_of_sync;
                s.bytes_streamed += result.synced.bytes;
                s.files_streamed += result.synced.files;
                s.partitions_validated += result.partitions;
                s.previewed.extend(result.previewed);
            });
        }
    }
    Ok(())
}

impl Job {
    /// Validates every range, then syncs each pair of replicas that differ once, over all
    /// its differing sub-ranges (one stream each way rather than one per range); a preview
    /// estimates those streams instead.
    async fn run(self) -> Result<JobResult, String> {
        let mut result = JobResult::default();
        let mut differences: BTreeMap<(SocketAddr, SocketAddr), PairDifference> = BTreeMap::new();
        for range in &self.plan.ranges {
            let trees = self.validations(*range).await?;
            result.partitions += trees.iter().map(|(_, t)| t.partitions()).sum::<u64>();
            for (i, (a, tree_a)) in trees.iter().enumerate() {
                for (b, tree_b) in &trees[i + 1..] {
                    let differing = tree_a.difference(tree_b)?;
                    self.log_comparison(*a, *b, differing.len());
                    result.out_of_sync += differing.len() as u64;
                    if !differing.is_empty() {
                        let pair = differences.entry((*a, *b)).or_default();
                        pair.ranges.extend(differing);
                        pair.partitions.0 += tree_a.partitions_differing(tree_b);
                        pair.partitions.1 += tree_b.partitions_differing(tree_a);
                    }
                }
            }
        }
        for ((a, b), pair) in differences {
            if self.preview.is_some() {
                result.previewed.extend(self.estimate(a, b, pair).await?);
                continue;
            }
            let synced = self.sync(a, b, pair.ranges).await?;
            result.synced.bytes += synced.bytes;
            result.synced.files += synced.files;
        }
        Ok(result)
    }

    /// What `a` and `b` would stream each other over their differing ranges.
    async fn estimate(
        &self,
        a: SocketAddr,
        b: SocketAddr,
        pair: PairDifference,
    ) -> Result<[PreviewStream; 2], String> {
        let ranges: Vec<TokenRange> = pair
            .ranges
            .iter()
            .flat_map(|r| storage_ranges(*r))
            .collect();
        let local = self.inner.messaging.local();
        let bytes_in = |peer: SocketAddr| {
            let request = StreamRequest {
                peer,
                tables: vec![(self.table, ranges.clone())],
            };
            let (streaming, storage) = (self.inner.streaming.clone(), self.inner.storage.clone());
            async move {
                if peer == local {
                    // what this node's own StreamEstimate handler would answer
                    let sizes = storage.size_estimates(request.tables[0].0, &request.tables[0].1);
                    let sizes = sizes.map_err(|e| e.to_string())?;
                    let partitions: u64 = sizes.partitions.iter().sum();
                    return Ok(partitions.saturating_mul(sizes.mean_partition_bytes));
                }
                streaming.estimate(request).await.map_err(|e| {
                    tracing::warn!("estimate from {peer} failed: {e}");
                    format!("Endpoint {} died", endpoint(peer))
                })
            }
        };
        let (from_a, from_b) = tokio::join!(bytes_in(a), bytes_in(b));
        let stream = |source, target, partitions, bytes| PreviewStream {
            table: self.table_name.clone(),
            source,
            target,
            ranges: pair.ranges.len() as u64,
            partitions,
            bytes,
        };
        Ok([
            stream(a, b, pair.partitions.0, from_a?),
            stream(b, a, pair.partitions.1, from_b?),
        ])
    }

    fn log_comparison(&self, a: SocketAddr, b: SocketAddr, differing: usize) {
        let (a, b) = (endpoint(a), endpoint(b));
        let table = &self.table_name;
        if differing == 0 {
            tracing::info!(
                "[repair #{}] Endpoints {a} and {b} are consistent for {table}",
                self.session
            );
        } else {
            tracing::info!(
                "[repair #{}] Endpoints {a} and {b} have {differing} range(s) out of sync for {table}",
                self.session
            );
        }
    }

    /// Every replica's tree of `range`, in the order of the replicas.
    async fn validations(
        &self,
        range: TokenRange,
    ) -> Result<Vec<(SocketAddr, MerkleTree)>, String> {
        let request = ValidationRequest {
            session: self.session,
            table: self.table,
            range,
            depth: self.depth(range),
            now: (now_ms() / 1000) as i32,
            scope: match self.preview {
                Some(kind) => kind.scope(),
                None if self.incremental => RepairScope::Pending(self.session),
                None => RepairScope::All,
            },
        };
        let mut trees = Vec::with_capacity(self.plan.replicas.len());
        if self.sequential {
            for replica in &self.plan.replicas {
                trees.push((*replica, self.validation(*replica, request.clone()).await?));
            }
            return Ok(trees);
        }
        let mut running = JoinSet::new();
        for (n, replica) in self.plan.replicas.iter().enumerate() {
            let (job, request, replica) = (self.clone(), request.clone(), *replica);
            running.spawn(async move { (n, replica, job.validation(replica, request).await) });
        }
        let mut answers = Vec::new();
        while let Some(done) = running.join_next().await {
            let (n, replica, tree) = done.map_err(|e| format!("validation task: {e}"))?;
            answers.push((n, replica, tree?));
        }
        answers.sort_by_key(|(n, _, _)| *n);
        trees.extend(answers.into_iter().map(|(_, r, t)| (r, t)));
        Ok(trees)
    }

    /// One replica's tree: built here for this node, asked for otherwise.
    async fn validation(
        &self,
        replica: SocketAddr,
        request: ValidationRequest,
    ) -> Result<MerkleTree, String> {
        let failed = || format!("Validation failed in {}", endpoint(replica));
        if replica == self.inner.messaging.local() {
            return validate(&self.inner, request).await.map_err(|e| {
                tracing::warn!("validation of {} failed: {}", self.table_name, e.message);
                failed()
            });
        }
        let timeout = self.inner.config.validation_timeout;
        let answer = self
            .inner
            .messaging
            .request(replica, Verb::RepairValidation, request.encode(), timeout)
            .await;
        match answer {
            Ok(bytes) => decode_tree(&bytes).map_err(|e| format!("{}: {e}", failed())),
            Err(NetError::Remote(e)) => {
                tracing::warn!(
                    "validation of {} in {replica} failed: {}",
                    self.table_name,
                    e.message
                );
                Err(failed())
            }
            Err(_) => Err(format!("Endpoint {} died", endpoint(replica))),
        }
    }

    /// Cassandra's depth: one partition a leaf by this node's estimate, at least
    /// `min_depth`, at most what `repair_session_space` holds for the trees at once.
    fn depth(&self, range: TokenRange) -> u8 {
        let config = &self.inner.config;
        let estimate = self
            .inner
            .storage
            .size_estimates(self.table, &storage_ranges(range))
            .map_or(0, |e| e.partitions.iter().sum());
        let max = merkle::max_depth(config.session_space, self.trees_at_once);
        merkle::depth_for(estimate, max)
            .max(config.min_depth)
            .min(max)
    }

    /// Each of `a` and `b` fetches `ranges` from the other (Cassandra's symmetric sync).
    async fn sync(
        &self,
        a: SocketAddr,
        b: SocketAddr,
        ranges: Vec<TokenRange>,
    ) -> Result<Synced, String> {
        let (into_a, into_b) = tokio::join!(
            self.fetch_into(a, b, ranges.clone()),
            self.fetch_into(b, a, ranges)
        );
        let failed = |e: String| {
            tracing::warn!("sync between {a} and {b} failed: {e}");
            format!("Sync failed between {} and {}", endpoint(a), endpoint(b))
        };
        let (into_a, into_b) = (into_a.map_err(failed)?, into_b.map_err(failed)?);
        Ok(Synced {
            files: into_a.files + into_b.files,
            bytes: into_a.bytes + into_b.bytes,
        })
    }

    /// `receiver` fetches `ranges` from `source`: this node itself, or asked to.
    async fn fetch_into(
        &self,
        receiver: SocketAddr,
        source: SocketAddr,
        ranges: Vec<TokenRange>,
    ) -> Result<Synced, String> {
        if receiver == self.inner.messaging.local() {
            let pending = self.incremental.then_some(self.session);
            return fetch(&self.inner, self.table, source, ranges, pending).await;
        }
        let request = SyncRequest {
            session: self.session,
            table: self.table,
            source,
            ranges,
            pending: self.incremental,
        };
        let timeout = self.inner.config.sync_timeout;
        let answer = self
            .inner
            .messaging
            .request(receiver, Verb::RepairSync, request.encode(), timeout)
            .await
            .map_err(|e| e.to_string())?;
        Synced::decode(&answer).map_err(|e| e.to_string())
    }
}

/// A range as storage takes them: `left < right`, `i64::MIN` on the right for the end of the
/// ring, a wrapping range cut in two.
pub(crate) fn storage_ranges((left, right): TokenRange) -> Vec<TokenRange> {
    if left < right || right == i64::MIN {
        vec![(left, right)]
    } else {
        vec![(left, i64::MIN), (i64::MIN, right)]
    }
}

/// Ranges as Cassandra prints a list of them: `[(-5,3], (9,12]]`.
pub fn format_ranges(ranges: &[TokenRange]) -> String {
    let items: Vec<String> = ranges.iter().map(|(l, r)| format!("({l},{r}]")).collect();
    format!("[{}]", items.join(", "))
}

/// A duration as Apache Commons' `formatDurationWords` writes it with leading and trailing
/// zero elements suppressed, as Cassandra's "Repair command #1 finished in 1 minute 5 seconds".
pub fn duration_words(seconds: u64) -> String {
    let elements = [
        (seconds / 86_400, "day"),
        (seconds / 3600 % 24, "hour"),
        (seconds / 60 % 60, "minute"),
        (seconds % 60, "second"),
    ];
    let first = elements.iter().position(|(n, _)| *n != 0).unwrap_or(3);
    let last = elements.iter().rposition(|(n, _)| *n != 0).unwrap_or(3);
    elements[first..=last]
        .iter()
        .map(|(n, unit)| format!("{n} {unit}{}", if *n == 1 { "" } else { "s" }))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_words_without_leading_or_trailing_zeros() {
        assert_eq!(duration_words(0), "0 seconds");
        assert_eq!(duration_words(1), "1 second");
        assert_eq!(duration_words(60), "1 minute");
        assert_eq!(duration_words(125), "2 minutes 5 seconds");
        assert_eq!(duration_words(3605), "1 hour 0 minutes 5 seconds");
        assert_eq!(duration_words(86_400 * 2 + 3600), "2 days 1 hour");
    }

    #[test]
    fn ranges_print_as_cassandra_prints_them() {
        assert_eq!(format_ranges(&[(-5, 3), (9, 12)]), "[(-5,3], (9,12]]");
        assert_eq!(
            storage_ranges((10, -10)),
            vec![(10, i64::MIN), (i64::MIN, -10)]
        );
        assert_eq!(storage_ranges((10, i64::MIN)), vec![(10, i64::MIN)]);
    }
}
