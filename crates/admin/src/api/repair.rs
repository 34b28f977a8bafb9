//! `nodetool repair` (`POST /v1/repair`) and the repairs this node coordinates
//! (`GET /v1/repairs`): which ranges of which keyspaces and tables to repair with which
//! replicas, as Cassandra's StorageService and RepairCoordinator choose them from the options;
//! the repair itself belongs to the `repair` crate.

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

use mutation::{TableId, TokenRange};
use parking_lot::Mutex;
use repair::{Notice, NoticeKind, PreviewKind, Repair, RepairPlan, RepairState, SessionPlan};
use ring::Endpoint;

use super::repair_lease::{self, now_ms, Held};
use crate::api::types::{
    RepairCancelRequest, RepairNotice, RepairReport, RepairRequest, RepairSessionInfo, RepairStatus,
};
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

/// Cassandra's `RepairOption.MAX_JOB_THREADS`.
const MAX_JOB_THREADS: usize = 4;

fn service(node: &AdminNode) -> ApiResult<&Repair> {
    node.repair.as_deref().ok_or_else(|| {
        ApiError::unavailable(
            "this node runs alone (no seed_provider): it has no replicas to repair with",
        )
    })
}

pub fn statuses(node: &AdminNode) -> Vec<RepairStatus> {
    node.repair
        .as_ref()
        .map_or_else(Vec::new, |r| r.statuses().iter().map(status).collect())
}

/// Every incremental session this node takes part in, ended ones included.
pub fn sessions(node: &AdminNode) -> Vec<RepairSessionInfo> {
    let Some(service) = node.repair.as_ref() else {
        return Vec::new();
    };
    service
        .local_sessions(true)
        .into_iter()
        .map(|s| RepairSessionInfo {
            id: s.id.to_string(),
            state: s.state.name().to_string(),
            last_update_ms: s.last_update_ms,
            coordinator: s.coordinator.to_string(),
            participants: s.participants.iter().map(|p| p.to_string()).collect(),
        })
        .collect()
}

/// Cancels this node's part in an incremental session.
pub async fn cancel(
    node: &AdminNode,
    request: &RepairCancelRequest,
) -> ApiResult<serde_json::Value> {
    let service = service(node)?;
    let id = uuid::Uuid::parse_str(&request.session)
        .map_err(|_| ApiError::bad_request(format!("Invalid session id {}", request.session)))?;
    service.cancel(id).await.map_err(ApiError::bad_request)?;
    Ok(serde_json::json!({ "cancelled": id.to_string() }))
}

fn status(s: &repair::RepairStatus) -> RepairStatus {
    let (state, failure) = match &s.state {
        RepairState::Running => ("running", None),
        RepairState::Success => ("success", None),
        RepairState::Failed(why) => ("failed", Some(why.clone())),
    };
    RepairStatus {
        command: s.command,
        id: s.id.to_string(),
        keyspace: s.keyspace.clone(),
        tables: s.tables.clone(),
        state: state.to_string(),
        failure,
        sessions_total: s.sessions_total,
        sessions_done: s.sessions_done,
        ranges: s.ranges,
        ranges_out_of_sync: s.ranges_out_of_sync,
        bytes_streamed: s.bytes_streamed,
        files_streamed: s.files_streamed,
        partitions_validated: s.partitions_validated,
        started_ms: s.started_ms,
        elapsed_ms: s.elapsed_ms,
    }
}

/// Repairs each keyspace asked for (every user keyspace when none), one command each, and
/// answers with what they notified once all ended.
pub async fn repair(node: &AdminNode, request: &RepairRequest) -> ApiResult<RepairReport> {
    // boxed: the HTTP handler's future would otherwise be too deep for the compiler's layout
    let running: Running<'_> = Box::pin(run(node, request, false));
    running.await
}

type Running<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = ApiResult<RepairReport>> + Send + 'a>>;

/// [`repair`], as the built-in scheduler's (`scheduled`) or not: each command holds a lease
/// in the metadata log while it runs (see `repair_lease`), and a scheduled one that succeeds
/// records its ranges in the scheduler's history.
pub(crate) async fn run(
    node: &AdminNode,
    request: &RepairRequest,
    scheduled: bool,
) -> ApiResult<RepairReport> {
    let service = service(node)?;
    check_options(request)?;
    let keyspaces = keyspaces(node, request)?;
    let notices = Mutex::new(Vec::new());
    let notify = |n: Notice| {
        notices
            .lock()
            .push(repair_notice(kind_name(n.kind), n.message))
    };
    let mut repairs = Vec::new();
    for (keyspace, tables) in keyspaces {
        if !replicated(node, &keyspace)? {
            notices.lock().push(repair_notice(
                "notification",
                format!("Replication factor is 1. No repair is needed for keyspace '{keyspace}'"),
            ));
            continue;
        }
        let mut plan = plan(node, request, &keyspace, tables)?;
        let command = service.next_command();
        let lease = leased(node, request, &mut plan, scheduled).await;
        let started = now_ms();
        let done = service.run(command, plan, &notify).await;
        if let Some(lease) = lease {
            let repaired = (scheduled && done.state == RepairState::Success).then_some(started);
            repair_lease::end(node, lease, repaired).await;
        }
        repairs.push(status(&done));
    }
    let notices = notices.into_inner();
    let error = notices
        .iter()
        .rev()
        .find(|n| n.kind == "error")
        .map(|n| n.message.clone());
    Ok(RepairReport {
        notices,
        error,
        repairs,
    })
}

/// The lease of a plan that will run and change data (a preview changes nothing); when it
/// cannot be had, the plan is refused with why, and its command fails with it. A scheduled
/// repair's lease names the range the scheduler chose, as its history keeps it (the plan may
/// hold it in two pieces where it wraps around the ring).
async fn leased(
    node: &AdminNode,
    request: &RepairRequest,
    plan: &mut RepairPlan,
    scheduled: bool,
) -> Option<Held> {
    if plan.preview.is_some() || plan.refused.is_some() {
        return None;
    }
    let ranges = match (scheduled, request.start_token, request.end_token) {
        (true, Some(st), Some(et)) => vec![(st, et)],
        _ => plan
            .sessions
            .iter()
            .flat_map(|s| s.ranges.clone())
            .collect(),
    };
    match repair_lease::take(node, plan, ranges, scheduled).await {
        Ok(held) => Some(held),
        Err(why) => {
            plan.refused = Some(why);
            None
        }
    }
}

fn repair_notice(kind: &str, message: String) -> RepairNotice {
    RepairNotice {
        time_ms: now_ms(),
        kind: kind.to_string(),
        message,
    }
}

fn kind_name(kind: NoticeKind) -> &'static str {
    match kind {
        NoticeKind::Start => "start",
        NoticeKind::Progress => "progress",
        NoticeKind::Error => "error",
        NoticeKind::Notification => "notification",
        NoticeKind::Success => "success",
        NoticeKind::Complete => "complete",
    }
}

/// Cassandra's refusals of option combinations.
fn check_options(request: &RepairRequest) -> ApiResult<()> {
    if request.start_token.is_some() != request.end_token.is_some() {
        return Err(ApiError::bad_request(
            "Both the start token (-st) and the end token (-et) must be given",
        ));
    }
    if request.job_threads.is_some_and(|j| j > MAX_JOB_THREADS) {
        return Err(ApiError::bad_request(format!(
            "Too many job threads. Max is {MAX_JOB_THREADS}"
        )));
    }
    let dcs = !request.data_centers.is_empty() || request.local_dc;
    if dcs && !request.hosts.is_empty() {
        return Err(ApiError::bad_request(
            "Cannot combine -dc and -hosts options.",
        ));
    }
    Ok(())
}

/// A keyspace to repair and its tables (names and ids).
type Chosen = (String, Vec<(String, TableId)>);

/// The keyspaces to repair with their tables, checked against the schema.
fn keyspaces(node: &AdminNode, request: &RepairRequest) -> ApiResult<Vec<Chosen>> {
    let state = node.processor.schema();
    let schema = &state.schema;
    let names: Vec<String> = match &request.keyspace {
        Some(name) => {
            if schema.keyspace(name).is_none() {
                return Err(ApiError::bad_request(format!(
                    "Keyspace [{name}] does not exist."
                )));
            }
            vec![name.clone()]
        }
        None => schema
            .keyspaces()
            .values()
            .filter(|k| {
                !schema::is_system_keyspace(&k.name)
                    && !schema::is_virtual_keyspace(&k.name)
                    && !matches!(
                        *node.processor.strategy(&k.name),
                        ring::ReplicationStrategy::Local
                    )
            })
            .map(|k| k.name.clone())
            .collect(),
    };
    let mut chosen = Vec::new();
    for name in names {
        let Some(keyspace) = schema.keyspace(&name) else {
            continue;
        };
        let mut tables = Vec::new();
        for table in &request.tables {
            let meta = keyspace.tables.get(table.as_str()).ok_or_else(|| {
                ApiError::bad_request(format!("Unknown keyspace/cf pair ({name}.{table})"))
            })?;
            tables.push((table.clone(), TableId(meta.id)));
        }
        if request.tables.is_empty() {
            tables = keyspace
                .tables
                .values()
                .map(|t| (t.name.clone(), TableId(t.id)))
                .collect();
        }
        chosen.push((name, tables));
    }
    Ok(chosen)
}

/// Whether some range of the keyspace has more than one replica.
fn replicated(node: &AdminNode, keyspace: &str) -> ApiResult<bool> {
    let ranges = node
        .processor
        .ranges(keyspace)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(ranges.iter().any(|r| r.replicas.len() > 1))
}

/// The sessions of a keyspace's repair: this node's ranges (or those it is primary for),
/// cut to `-st/-et`, each with its replicas in the data centers or hosts asked for, ranges
/// with the same replicas in one session. A range left with no other replica, or a replica
/// down, refuses the repair with Cassandra's message.
fn plan(
    node: &AdminNode,
    request: &RepairRequest,
    keyspace: &str,
    tables: Vec<(String, TableId)>,
) -> ApiResult<RepairPlan> {
    let topology = node.coordinator.topology();
    let local = topology.local().clone();
    let port = node.config.storage_port;
    let hosts = parse_hosts(&request.hosts)?;
    let data_centers = if request.local_dc {
        vec![local.datacenter.to_string()]
    } else {
        request.data_centers.clone()
    };
    let ranges = own_ranges(node, request, keyspace, &local)?;
    let mut sessions: Vec<SessionPlan> = Vec::new();
    let mut refused = None;
    if !hosts.is_empty() && !hosts.contains(&local.addr) {
        refused = Some("The current host must be part of the repair".to_string());
    }
    for (range, replicas) in &ranges {
        let neighbours: BTreeSet<IpAddr> = replicas
            .iter()
            .filter(|e| e.addr != local.addr)
            .filter(|e| data_centers.is_empty() || data_centers.contains(&e.datacenter.to_string()))
            .filter(|e| hosts.is_empty() || hosts.contains(&e.addr))
            .map(|e| e.addr)
            .collect();
        if neighbours.is_empty() {
            refused.get_or_insert(format!(
                "Nothing to repair for ({},{}] in {keyspace} - aborting",
                range.0, range.1
            ));
            continue;
        }
        if let Some(dead) = neighbours.iter().find(|addr| !topology.is_alive(**addr)) {
            refused.get_or_insert(format!("Endpoint not alive: /{dead}:{port}"));
        }
        let mut participants = vec![SocketAddr::new(local.addr, port)];
        participants.extend(neighbours.iter().map(|addr| SocketAddr::new(*addr, port)));
        match sessions.iter_mut().find(|s| s.replicas == participants) {
            Some(session) => session.ranges.push(*range),
            None => sessions.push(SessionPlan {
                ranges: vec![*range],
                replicas: participants,
            }),
        }
    }
    let options = options(request, &tables, &data_centers, ranges.len());
    Ok(RepairPlan {
        keyspace: keyspace.to_string(),
        tables,
        sessions,
        sequential: request.sequential,
        job_threads: request.job_threads.unwrap_or(1).max(1),
        incremental: !request.full,
        preview: preview_kind(request),
        options,
        refused,
    })
}

/// This node's ranges of the keyspace (those it is the primary replica of with `-pr`), cut to
/// (st, et] when given, each with its replicas.
fn own_ranges(
    node: &AdminNode,
    request: &RepairRequest,
    keyspace: &str,
    local: &Endpoint,
) -> ApiResult<Vec<(TokenRange, Vec<Endpoint>)>> {
    let ranges = node
        .processor
        .ranges(keyspace)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let mine = ranges.into_iter().filter(|r| {
        if request.primary_range {
            r.replicas.first().is_some_and(|e| e.addr == local.addr)
        } else {
            r.replicas.iter().any(|e| e.addr == local.addr)
        }
    });
    let mut out = Vec::new();
    for r in mine {
        let pieces = match (request.start_token, request.end_token) {
            (Some(st), Some(et)) => mutation::token_intersection((r.start, r.end), (st, et)),
            _ => vec![(r.start, r.end)],
        };
        out.extend(pieces.into_iter().map(|p| (p, r.replicas.clone())));
    }
    Ok(out)
}

fn parse_hosts(hosts: &[String]) -> ApiResult<Vec<IpAddr>> {
    hosts
        .iter()
        .map(|h| {
            let ip = h.trim_start_matches('/');
            ip.parse::<IpAddr>()
                .or_else(|_| ip.parse::<SocketAddr>().map(|s| s.ip()))
                .map_err(|_| ApiError::bad_request(format!("Unknown host specified {h}")))
        })
        .collect()
}

/// Cassandra's preview kind from nodetool's flags: `--validate` the repaired data, `--preview`
/// the unrepaired data (everything with `-full`).
fn preview_kind(request: &RepairRequest) -> Option<PreviewKind> {
    match (request.validate, request.preview, request.full) {
        (true, _, _) => Some(PreviewKind::Repaired),
        (false, true, true) => Some(PreviewKind::All),
        (false, true, false) => Some(PreviewKind::Unrepaired),
        (false, false, _) => None,
    }
}

/// The options as Cassandra 5.0.4's `RepairOption.toString` prints them.
fn options(
    request: &RepairRequest,
    tables: &[(String, TableId)],
    data_centers: &[String],
    ranges: usize,
) -> String {
    let named: Vec<&str> = if request.tables.is_empty() {
        Vec::new()
    } else {
        tables.iter().map(|(n, _)| n.as_str()).collect()
    };
    format!(
        "repair options (parallelism: {}, primary range: {}, incremental: {}, job threads: {}, \
         ColumnFamilies: [{}], dataCenters: [{}], hosts: [{}], previewKind: {}, # of ranges: {ranges}, \
         pull repair: false, force repair: false, optimise streams: false, ignore unreplicated keyspaces: false, \
         repairPaxos: true, paxosOnly: false)",
        if request.sequential { "sequential" } else { "parallel" },
        request.primary_range,
        !request.full,
        request.job_threads.unwrap_or(1),
        named.join(", "),
        data_centers.join(", "),
        request.hosts.join(", "),
        preview_kind(request).map_or("NONE", PreviewKind::name),
    )
}
