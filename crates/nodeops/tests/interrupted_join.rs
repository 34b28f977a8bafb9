//! A bootstrap whose data movement fails half-way (its source lost mid-stream) stops cleanly:
//! the node stays Joining — a pending owner that writes reach and reads do not — and the join
//! resumed (`nodetool bootstrap resume`) moves the data again and only then makes the node
//! Normal. Runs the real
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
use nodeops::{future_ring_of, ring_of, MoveFuture, NodeOps, OperationMode, Purpose, Settings};
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
    let received_file = dir.path().join("received");
    let settings = Settings {
        received_file: Some(received_file.clone()),
        ..Settings::new(Duration::ZERO)
    };
    let ops = NodeOps::new(metadata.clone(), processor.clone(), Some(gossip), settings);
    let mover = Arc::new(ScriptedMover::default());
    mover
        .results
        .lock()
        .push_back(Err("Stream failed: 127.0.0.2: connection lost".into()));
    ops.set_mover(mover.clone());
    // a node with a bootstrap that never failed has nothing to resume
    assert_eq!(ops.resume_bootstrap().await, Ok(false));
    let me = record(1, vec![0], NodeState::Normal);
    let joining = tokio::spawn({
        let (ops, me) = (ops.clone(), me.clone());
        async move { ops.bootstrap(me).await }
    });
    // the fetch fails: the node stays Joining, waiting to be resumed
    while mover.calls.lock().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!joining.is_finished());
    // the node is a pending owner: in the future ring (writes), not in the ring (reads)
    let meta = metadata.current();
    assert_eq!(meta.nodes[&me.host_id].state, NodeState::Joining);
    let local = me.addr.ip();
    assert!(ring_of(&meta).tokens_of(local).is_empty());
    assert!(!future_ring_of(&meta).unwrap().tokens_of(local).is_empty());
    assert_eq!(ops.mode(), OperationMode::Joining);
    // it asked for its ranges from the node giving them up, as a bootstrap
    let asked = {
        let calls = mover.calls.lock();
        let (purpose, transfers) = calls[0].clone();
        assert_eq!(purpose, Purpose::Bootstrap);
        assert!(!transfers.is_empty());
        assert!(transfers
            .iter()
            .all(|t| t.source == owner.addr.ip() && t.target == local));
        transfers
    };
    // nothing was received: nothing recorded
    assert!(!received_file.exists());
    // nodetool bootstrap resume: the data moves again and the node becomes Normal
    assert_eq!(ops.resume_bootstrap().await, Ok(true));
    joining.await.unwrap().unwrap();
    let meta = metadata.current();
    assert_eq!(meta.nodes[&me.host_id].state, NodeState::Normal);
    assert!(!ring_of(&meta).tokens_of(local).is_empty());
    assert_eq!(mover.calls.lock()[1].1, asked);
    assert_eq!(ops.mode(), OperationMode::Normal);
    // the join is over: what it received is forgotten, and there is nothing to resume
    assert!(!received_file.exists());
    assert_eq!(ops.resume_bootstrap().await, Ok(false));
}
