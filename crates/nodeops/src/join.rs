//! This node joining the ring: a bootstrap or a replacement. Before its first step commits,
//! the join is checked against the ring it would make (`preflight`): every range it would
//! take must have a live source (the node giving it up, under consistent range movement) and
//! the data directories the room for it; a refusal changes nothing. Then StartJoin or
//! StartReplace, the ring delay, the ranges fetched source by source — each source's ranges
//! recorded as received once they are in (`received`) — and FinishJoin. A fetch that fails
//! leaves the node Joining, waiting for `nodetool bootstrap resume` (or a restart), which
//! fetches only the ranges not yet received.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use metadata::{ClusterMetadata, HostId, MetadataError, NodeRecord, NodeState, Transformation};

use tokio::task::JoinSet;

use crate::mover::{RangeMover, Transfer};
use crate::ops::{log_transfers, Bootstrap, Move, NodeOps, OperationMode, RETRY, WAIT_REPORT};
use crate::received::Received;
use crate::room::ensure_room;

impl NodeOps {
    /// Joins the ring as a pending owner of `node`'s tokens and becomes Normal once the
    /// ranges it gains are fetched; a node found Joining (restarted mid-join) goes on.
    pub async fn bootstrap(&self, node: NodeRecord) -> Result<(), String> {
        let _busy = self.busy.lock().await;
        let start = Transformation::StartJoin {
            node: Box::new(node),
        };
        self.start_unless(start, |s| s == NodeState::Joining)
            .await?;
        self.finish_join().await
    }

    /// Takes the tokens of the dead node `replaces` (`replace_address_first_boot`) and becomes
    /// Normal once their ranges are fetched from the live replicas.
    pub async fn replace(&self, node: NodeRecord, replaces: HostId) -> Result<(), String> {
        let _busy = self.busy.lock().await;
        let start = Transformation::StartReplace {
            node: Box::new(node),
            replaces,
        };
        self.start_unless(start, |s| matches!(s, NodeState::Replacing(_)))
            .await?;
        self.finish_join().await
    }

    /// Goes on with the join of a node found Joining or Replacing at start-up.
    pub async fn resume_join(&self) -> Result<(), String> {
        let _busy = self.busy.lock().await;
        tracing::info!("this node was joining the ring when it stopped: finishing the join");
        self.finish_join().await
    }

    /// `nodetool bootstrap resume`: fetches again the ranges a failed bootstrap has not
    /// received; answers once the node has joined, or with the new failure; `false` when no
    /// bootstrap failed here (the node is already bootstrapped).
    pub async fn resume_bootstrap(&self) -> Result<bool, String> {
        let resumed = self.bootstrap.send_if_modified(|state| {
            let failed = matches!(state, Bootstrap::Failed(_));
            if failed {
                *state = Bootstrap::Streaming;
            }
            failed
        });
        if !resumed {
            if *self.bootstrap.borrow() == Bootstrap::Streaming {
                return Err("This node's bootstrap is still streaming".to_string());
            }
            tracing::info!(
                "Resuming bootstrap is requested, but the node is already bootstrapped."
            );
            return Ok(false);
        }
        tracing::info!("Resuming bootstrap");
        let mut state = self.bootstrap.subscribe();
        let ended = state
            .wait_for(|s| *s != Bootstrap::Streaming)
            .await
            .map_err(|_| "this node is shutting down".to_string())?;
        match &*ended {
            Bootstrap::Failed(why) => Err(format!("Error during bootstrap: {why}")),
            _ => Ok(true),
        }
    }

    /// Commits the first step of a join unless this node is already in the state it leads to
    /// (a restart in the middle); checked first (`preflight`), and waiting while another
    /// node's change runs. A join started afresh forgets the ranges an earlier one received.
    async fn start_unless(
        &self,
        start: Transformation,
        started: impl Fn(NodeState) -> bool,
    ) -> Result<(), String> {
        let mut reported: Option<Instant> = None;
        loop {
            if self
                .me(&self.metadata.current())
                .is_some_and(|n| started(n.state))
            {
                return Ok(());
            }
            self.preflight(&start).await?;
            match self.metadata.commit(start.clone()).await {
                Ok(_) => {
                    self.forget_received();
                    return Ok(());
                }
                Err(MetadataError::Rejected(reason))
                    if reason.starts_with("another topology change") =>
                {
                    if reported.is_none_or(|at| at.elapsed() >= WAIT_REPORT) {
                        tracing::info!("waiting to join the ring: {reason}");
                        reported = Some(Instant::now());
                    }
                    tokio::time::sleep(RETRY).await;
                }
                Err(e) => crate::ops::retry_or_fail(e).await?,
            }
        }
    }

    /// Whether a join may start: a live source for every range it would take and the disk
    /// space for them, over the ring the join would make.
    async fn preflight(&self, start: &Transformation) -> Result<(), String> {
        let mover = self.mover.read().clone();
        let Some(mover) = mover else {
            return Ok(());
        };
        let (joining, doing) = match start {
            Transformation::StartJoin { node } => (
                NodeRecord {
                    state: NodeState::Joining,
                    ..NodeRecord::clone(node)
                },
                "bootstrap",
            ),
            Transformation::StartReplace { node, replaces } => (
                NodeRecord {
                    state: NodeState::Replacing(*replaces),
                    ..NodeRecord::clone(node)
                },
                "replace",
            ),
            _ => return Ok(()),
        };
        let prospective = || {
            let mut meta = ClusterMetadata::clone(&self.metadata.current());
            meta.nodes.insert(joining.host_id, joining.clone());
            Arc::new(meta)
        };
        let step = Move::Fetch {
            strict: self.strict(joining.state),
        };
        let transfers = self.plan_when_sources_up(step, prospective).await?;
        let dirs = &self.settings.data_dirs;
        ensure_room(doing, dirs, mover.estimate(transfers)).await
    }

    /// Whether a node in `state` fetches each range from the node giving it up: a bootstrap
    /// under consistent range movement (a replacement's giver is the dead node).
    fn strict(&self, state: NodeState) -> bool {
        state == NodeState::Joining && self.settings.consistent_rangemovement
    }

    async fn finish_join(&self) -> Result<(), String> {
        self.mode.send_replace(OperationMode::Joining);
        self.settle("joining").await;
        self.bootstrap.send_replace(Bootstrap::Streaming);
        while let Err(why) = self.fetch_gained().await {
            tracing::error!(
                "Error during bootstrap: {why}. This node stays joining: nodetool bootstrap \
                 resume (or a restart) fetches the ranges not received yet; nodetool \
                 removenode {} from another node gives the join up",
                self.host_id()
            );
            self.bootstrap.send_replace(Bootstrap::Failed(why));
            let mut state = self.bootstrap.subscribe();
            if state
                .wait_for(|s| *s == Bootstrap::Streaming)
                .await
                .is_err()
            {
                return Err("this node is shutting down".to_string());
            }
        }
        let done = Transformation::FinishJoin {
            host_id: self.host_id(),
        };
        self.commit_retrying(done).await?;
        self.forget_received();
        self.mode.send_replace(OperationMode::Normal);
        self.bootstrap.send_replace(Bootstrap::Idle);
        tracing::info!("joined the ring: this node is Normal");
        Ok(())
    }

    /// Fetches the ranges this node gains and has not received yet, each source's at once,
    /// recording each source's as received when they are in.
    async fn fetch_gained(&self) -> Result<(), String> {
        let meta = self.metadata.current();
        let state = self.me(&meta).map_or(NodeState::Joining, |n| n.state);
        let step = Move::Fetch {
            strict: self.strict(state),
        };
        let Some(mover) = self.mover_or_warn(step) else {
            return Ok(());
        };
        let planned = self
            .plan_when_sources_up(step, || self.metadata.current())
            .await?;
        let mut received = self.received();
        let transfers = received.remaining(planned);
        if !received.is_empty() {
            tracing::info!(
                "resuming the bootstrap: the ranges received before are not fetched again"
            );
        }
        log_transfers(step, &transfers);
        let mut by_source: BTreeMap<IpAddr, Vec<Transfer>> = BTreeMap::new();
        for transfer in transfers {
            by_source.entry(transfer.source).or_default().push(transfer);
        }
        let mut running = JoinSet::new();
        for (source, transfers) in by_source {
            let mover: Arc<dyn RangeMover> = mover.clone();
            running.spawn(async move {
                let moved = mover.transfer(step.purpose(), transfers.clone()).await;
                (source, transfers, moved)
            });
        }
        let mut failures = Vec::new();
        while let Some(done) = running.join_next().await {
            match done {
                Ok((_, transfers, Ok(()))) => {
                    received.add(&transfers);
                    self.save_received(&received);
                }
                Ok((source, _, Err(why))) => failures.push(format!("{source}: {why}")),
                Err(e) => failures.push(format!("stream task failed: {e}")),
            }
        }
        if failures.is_empty() {
            tracing::info!("{}: every range has moved", step.purpose().name());
            Ok(())
        } else {
            Err(failures.join("; "))
        }
    }

    fn received(&self) -> Received {
        self.settings
            .received_file
            .as_deref()
            .map(Received::load)
            .unwrap_or_default()
    }

    fn save_received(&self, received: &Received) {
        let Some(path) = &self.settings.received_file else {
            return;
        };
        if let Err(e) = received.save(path) {
            tracing::warn!(
                "cannot record the ranges received in {}: {e}; a resumed bootstrap fetches \
                 them again",
                path.display()
            );
        }
    }

    fn forget_received(&self) {
        let Some(path) = &self.settings.received_file else {
            return;
        };
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!("cannot remove {}: {e}", path.display()),
        }
    }
}
