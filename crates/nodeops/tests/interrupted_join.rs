//! A bootstrap whose data movement fails half-way (its source lost mid-stream) stops cleanly:
//! the node stays Joining — a pending owner that writes reach and reads do not — and the join
//! resumed later moves the data again and only then makes the node Normal. Runs the real
//! NodeOps on a one-member metadata log, with a scripted mover and a gossip that sees every
//! node up.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use gossip::{EndpointView, Membership, MembershipEvent};
use metadata::{NodeState, Transformation};
use nodeops::testing::record;
use nodeops::{future_ring_of, ring_of, MoveFuture, NodeOps, OperationMode, Purpose};
use nodeops::{RangeMover, Transfer};
use parking_lot::Mutex;
use tokio::sync::broadcast;

/// Answers each transfer call with the next scripted result, keeping what it was asked.
#[derive(Default)]
struct ScriptedMover {
    results: Mutex<VecDeque<Result<(), String>>>,
    calls: Mutex<Vec<(Purpose, Vec<Transfer>)>>,
}

impl RangeMover for ScriptedMover {
    fn transfer(&self, purpose: Purpose, transfers: Vec<Transfer>) -> MoveFuture<'_> {
        self.calls.lock().push((purpose, transfers));
        let result = self.results.lock().pop_front().unwrap_or(Ok(()));
        Box::pin(async move { result })
    }
}

/// Every node up.
struct AllUp(broadcast::Sender<MembershipEvent>);

impl Membership for AllUp {
    fn set_local(&self, _: &str, _: String) {}
    fn endpoints(&self) -> Vec<EndpointView> {
        Vec::new()
    }
    fn is_alive(&self, _: IpAddr) -> bool {
        true
    }
    fn subscribe(&self) -> broadcast::Receiver<MembershipEvent> {
        self.0.subscribe()
    }
    fn stop(&self) {}
    fn start(&self) {}
    fn is_running(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn a_join_whose_source_is_lost_stays_pending_and_finishes_when_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let processor = system::testing::local_processor(dir.path()).await.unwrap();
    let metadata = processor.metadata().unwrap().clone();
    // node 2 (127.0.0.2) owns the ring; this node (127.0.0.1, host id 1) joins it
    let owner = record(2, vec![-100, 100], NodeState::Normal);
    let expect_topology = metadata.current().topology_version;
    let register = Transformation::RegisterNode {
        node: owner.clone(),
        expect_topology,
    };
    metadata.commit(register).await.unwrap();
    let gossip: Arc<dyn Membership> = Arc::new(AllUp(broadcast::channel(1).0));
    let ops = NodeOps::new(
        metadata.clone(),
        processor.clone(),
        Some(gossip),
        Duration::ZERO,
    );
    let mover = Arc::new(ScriptedMover::default());
    mover
        .results
        .lock()
        .push_back(Err("Stream failed: 127.0.0.2: connection lost".into()));
    ops.set_mover(mover.clone());
    let me = record(1, vec![0], NodeState::Normal);
    let failed = ops.bootstrap(me.clone()).await.unwrap_err();
    assert!(failed.contains("connection lost"), "{failed}");
    // the node is a pending owner: in the future ring (writes), not in the ring (reads)
    let meta = metadata.current();
    assert_eq!(meta.nodes[&me.host_id].state, NodeState::Joining);
    let local = me.addr.ip();
    assert!(ring_of(&meta).tokens_of(local).is_empty());
    assert!(!future_ring_of(&meta).unwrap().tokens_of(local).is_empty());
    assert_eq!(ops.mode(), OperationMode::Joining);
    // it asked for its ranges from the node giving them up, as a bootstrap
    {
        let calls = mover.calls.lock();
        let (purpose, transfers) = &calls[0];
        assert_eq!(*purpose, Purpose::Bootstrap);
        assert!(!transfers.is_empty());
        assert!(transfers
            .iter()
            .all(|t| t.source == owner.addr.ip() && t.target == local));
    }
    // resumed (as at a restart), the data moves again and the node becomes Normal
    ops.resume_join().await.unwrap();
    let meta = metadata.current();
    assert_eq!(meta.nodes[&me.host_id].state, NodeState::Normal);
    assert!(!ring_of(&meta).tokens_of(local).is_empty());
    assert_eq!(mover.calls.lock().len(), 2);
    assert_eq!(ops.mode(), OperationMode::Normal);
}
