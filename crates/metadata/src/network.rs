//! openraft's outbound network: each Raft RPC becomes one `Transport` call. A failed call is
//! reported as "unreachable", so openraft backs off before retrying.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use openraft::error::{
    Fatal, InstallSnapshotError, NetworkError, RPCError, RaftError, ReplicationClosed,
    StreamingError, Unreachable,
};
use openraft::network::{Backoff, RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    SnapshotResponse, VoteRequest, VoteResponse,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::codec::{decode, encode};
use crate::raft_log::snapshot_file::StoredSnapshot;
use crate::raft_types::{NodeId, PeerNode, Snapshot, TypeConfig, Vote};
use crate::rpc::{RaftRequest, SnapshotRequest};
use crate::transport::{RpcKind, Transport};

/// How long openraft waits before retrying a member it could not reach.
const RETRY_BACKOFF: Duration = Duration::from_millis(200);

/// Makes a client per member.
pub(crate) struct NetworkFactory {
    pub transport: Option<Arc<dyn Transport>>,
}

/// Sends Raft RPCs to one member.
pub(crate) struct PeerClient {
    transport: Option<Arc<dyn Transport>>,
    target: NodeId,
    addr: SocketAddr,
}

/// A call that got no usable answer.
#[derive(Debug, thiserror::Error)]
#[error("metadata RPC to {addr}: {reason}")]
pub(crate) struct CallFailed {
    addr: SocketAddr,
    reason: String,
}

impl RaftNetworkFactory<TypeConfig> for NetworkFactory {
    type Network = PeerClient;

    async fn new_client(&mut self, target: NodeId, node: &PeerNode) -> PeerClient {
        PeerClient {
            transport: self.transport.clone(),
            target,
            addr: node.addr,
        }
    }
}

impl PeerClient {
    async fn call<Req: Serialize, Resp: DeserializeOwned>(
        &self,
        kind: RpcKind,
        body: Req,
        timeout: Duration,
    ) -> Result<Resp, CallFailed> {
        let failed = |reason: String| CallFailed {
            addr: self.addr,
            reason,
        };
        let transport = self
            .transport
            .as_ref()
            .ok_or_else(|| failed("this node runs without internode messaging".to_string()))?;
        let request = RaftRequest {
            to: self.target,
            body,
        };
        let payload = encode(&request).map_err(|e| failed(e.to_string()))?;
        let answer = transport
            .call(self.addr, kind, Bytes::from(payload), timeout)
            .await
            .map_err(|e| failed(e.to_string()))?;
        decode(&answer).map_err(|e| failed(format!("bad answer: {e}")))
    }
}

fn unreachable<E: std::error::Error>(e: CallFailed) -> RPCError<NodeId, PeerNode, E> {
    RPCError::Unreachable(Unreachable::new(&e))
}

impl RaftNetwork<TypeConfig> for PeerClient {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, PeerNode, RaftError<NodeId>>> {
        self.call(RpcKind::Append, rpc, option.hard_ttl())
            .await
            .map_err(unreachable)
    }

    /// Snapshots go whole through `full_snapshot`; openraft never sends chunks then.
    async fn install_snapshot(
        &mut self,
        _rpc: InstallSnapshotRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<NodeId>,
        RPCError<NodeId, PeerNode, RaftError<NodeId, InstallSnapshotError>>,
    > {
        let reason = "snapshots are sent whole, not in chunks".to_string();
        Err(RPCError::Network(NetworkError::new(&CallFailed {
            addr: self.addr,
            reason,
        })))
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, PeerNode, RaftError<NodeId>>> {
        self.call(RpcKind::Vote, rpc, option.hard_ttl())
            .await
            .map_err(unreachable)
    }

    async fn full_snapshot(
        &mut self,
        vote: Vote,
        snapshot: Snapshot,
        cancel: impl Future<Output = ReplicationClosed> + Send + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<NodeId>, StreamingError<TypeConfig, Fatal<NodeId>>> {
        let request = SnapshotRequest {
            vote,
            snapshot: StoredSnapshot {
                meta: snapshot.meta,
                data: *snapshot.snapshot,
            },
        };
        let send = self.call(RpcKind::Snapshot, request, option.hard_ttl());
        tokio::select! {
            biased;
            closed = cancel => Err(StreamingError::Closed(closed)),
            answer = send => answer.map_err(|e| StreamingError::Unreachable(Unreachable::new(&e))),
        }
    }

    fn backoff(&self) -> Backoff {
        Backoff::new(std::iter::repeat(RETRY_BACKOFF))
    }
}
