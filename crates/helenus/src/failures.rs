//! The node's part when `disk_failure_policy` or `commit_failure_policy` acts: stopping the
//! native transport and gossip (the admin API stays up, so `nodetool` still answers; the other
//! nodes mark this one down) or exiting at once.

use std::sync::Arc;

use admin::Lifecycle;
use gossip::Membership;
use storage::{FailureListener, NodeAction};

/// Cassandra's exit status when a policy kills the node (`JVMStabilityInspector`).
const DIE_STATUS: i32 = 100;

/// Stops the native transport and gossip, or exits with status 100, as the policy says.
pub fn listener(lifecycle: Arc<Lifecycle>, gossip: Option<Arc<dyn Membership>>) -> FailureListener {
    Arc::new(move |action, reason| match action {
        NodeAction::StopTransports => {
            if lifecycle.stop_transport() {
                tracing::error!("Stopping native transport: {reason}");
            }
            if let Some(gossip) = gossip.as_ref().filter(|g| g.is_running()) {
                tracing::error!("Stopping gossip: {reason}");
                gossip.stop();
            }
        }
        NodeAction::Die => {
            tracing::error!("Exiting with status {DIE_STATUS}: {reason}");
            std::process::exit(DIE_STATUS);
        }
    })
}
