//! The calls this node answers: Raft RPCs (handed to openraft), work forwarded to the leader,
//! and discovery. Handlers hold the core weakly: once the service is gone they refuse.

use std::fmt::Display;
use std::net::SocketAddr;
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::codec::{decode, encode};
use crate::core::{Core, Leader};
use crate::leader;
use crate::raft_types::Snapshot;
use crate::rpc::{
    DiscoverReply, DiscoverRequest, ForwardReply, ForwardRequest, RaftRequest, SnapshotRequest,
};
use crate::transport::{RpcHandler, RpcKind, Transport};

struct Inbound {
    kind: RpcKind,
    core: Weak<Core>,
}

/// Registers a handler for every kind of call on `transport`.
pub(crate) fn register(core: &Arc<Core>, transport: &Arc<dyn Transport>) {
    for kind in RpcKind::ALL {
        let handler = Inbound {
            kind,
            core: Arc::downgrade(core),
        };
        transport.register(kind, Arc::new(handler));
    }
}

impl RpcHandler for Inbound {
    fn handle(
        &self,
        _from: SocketAddr,
        payload: Bytes,
    ) -> BoxFuture<'static, Result<Bytes, String>> {
        let core = self.core.upgrade();
        let kind = self.kind;
        Box::pin(async move {
            let core = core.ok_or_else(|| "the metadata service is shut down".to_string())?;
            serve(&core, kind, &payload).await
        })
    }
}

async fn serve(core: &Core, kind: RpcKind, payload: &[u8]) -> Result<Bytes, String> {
    match kind {
        RpcKind::Vote => reply(core.raft.vote(open(core, payload)?).await),
        RpcKind::Append => reply(core.raft.append_entries(open(core, payload)?).await),
        RpcKind::Snapshot => {
            let request: SnapshotRequest = open(core, payload)?;
            let snapshot = Snapshot {
                meta: request.snapshot.meta,
                snapshot: Box::new(request.snapshot.data),
            };
            reply(
                core.raft
                    .install_full_snapshot(request.vote, snapshot)
                    .await,
            )
        }
        RpcKind::Forward => {
            let request = decode(payload).map_err(|e| format!("bad forward request: {e}"))?;
            reply(Ok::<_, String>(forward(core, request).await))
        }
        RpcKind::Discover => {
            let request = decode(payload).map_err(|e| format!("bad discover request: {e}"))?;
            reply(discover(core, request))
        }
    }
}

/// The body of a Raft RPC meant for this node.
fn open<T: DeserializeOwned>(core: &Core, payload: &[u8]) -> Result<T, String> {
    let request: RaftRequest<T> = decode(payload).map_err(|e| format!("bad Raft request: {e}"))?;
    if request.to != core.me {
        return Err(format!(
            "this node is {}, not {} (was it replaced?)",
            core.me, request.to
        ));
    }
    Ok(request.body)
}

fn reply<T: Serialize, E: Display>(result: Result<T, E>) -> Result<Bytes, String> {
    let value = result.map_err(|e| e.to_string())?;
    encode(&value).map(Bytes::from).map_err(|e| e.to_string())
}

async fn forward(core: &Core, request: ForwardRequest) -> ForwardReply {
    let leader = core.leader();
    let (timeout_ms, work) = match &request {
        ForwardRequest::Commit { timeout_ms, .. } => (*timeout_ms, "commit"),
        ForwardRequest::Join { timeout_ms, .. } => (*timeout_ms, "join"),
    };
    let timeout = Duration::from_millis(timeout_ms).min(core.config.commit_timeout);
    match (leader, request) {
        (Leader::Peer(peer), _) => ForwardReply::NotLeader(Some(peer)),
        (Leader::Unknown, _) => {
            tracing::debug!("metadata group: a {work} request arrived while no leader is known");
            ForwardReply::NotLeader(None)
        }
        (Leader::Me, ForwardRequest::Commit { command, .. }) => {
            leader::execute(core, command, timeout).await
        }
        (
            Leader::Me,
            ForwardRequest::Join {
                peer, cluster_name, ..
            },
        ) => leader::join(core, peer, &cluster_name, timeout).await,
    }
}

fn discover(core: &Core, request: DiscoverRequest) -> Result<DiscoverReply, String> {
    if request.cluster_name != core.config.cluster_name {
        tracing::warn!(
            "metadata discovery from {} of cluster '{}' ignored: this node belongs to '{}'",
            request.from.addr,
            request.cluster_name,
            core.config.cluster_name
        );
        return Ok(core.discover_reply(core.founding.refusal()));
    }
    let founding = core.founding.step(request.step)?;
    Ok(core.discover_reply(founding))
}
