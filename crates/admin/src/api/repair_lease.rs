//! The lease a repair holds in the metadata log while it runs (`metadata::RepairLease`): taken
//! before its sessions start, so a repair overlapping another anywhere in the cluster — and a
//! second scheduled repair while one runs — is refused; renewed while it runs; ended when it
//! finishes, with the scheduler's history recorded in the same entry. A node drops the leases
//! it held before a restart once, before its first repair (and at start).

use std::time::Duration;

use metadata::{MetadataError, RepairLease, Transformation};
use mutation::TokenRange;
use repair::RepairPlan;

use crate::node::AdminNode;

/// How long a lease lives without renewal: a repair whose coordinator died blocks the ranges
/// this long at most.
pub const LEASE_PERIOD: Duration = Duration::from_secs(60);

/// The holder renews its lease this often (a third of the period: two renewals may fail).
const RENEW_EVERY: Duration = Duration::from_secs(20);

/// A lease held by this node; ended by [`end`].
pub struct Held {
    lease: RepairLease,
    renewal: tokio::task::JoinHandle<()>,
}

/// Takes the lease of `ranges` of `plan`'s tables (a scheduled one with `scheduled`), or says
/// why not, in the words the repair command fails with.
pub async fn take(
    node: &AdminNode,
    plan: &RepairPlan,
    ranges: Vec<TokenRange>,
    scheduled: bool,
) -> Result<Held, String> {
    clear_own(node).await.map_err(|e| unavailable(&e))?;
    let now = now_ms();
    let names: Vec<&str> = plan.tables.iter().map(|(n, _)| n.as_str()).collect();
    let lease = RepairLease {
        id: uuid::Uuid::new_v4(),
        holder: node.metadata.host_id(),
        what: format!("{}.{}", plan.keyspace, names.join(",")),
        tables: plan.tables.iter().map(|(_, id)| id.0).collect(),
        ranges,
        scheduled,
        expires_ms: now + LEASE_PERIOD.as_millis() as u64,
    };
    let take = Transformation::TakeRepairLease {
        lease: Box::new(lease.clone()),
        now_ms: now,
    };
    match node.metadata.commit(take).await {
        Ok(_) => {}
        Err(MetadataError::Rejected(why)) => return Err(why),
        Err(e) => return Err(unavailable(&e)),
    }
    let renewal = tokio::spawn(renew(node.metadata.clone(), lease.id));
    Ok(Held { lease, renewal })
}

/// Ends a lease; `repaired_ms` records its ranges in the scheduler's history. A failure is
/// logged: the lease then expires by itself.
pub async fn end(node: &AdminNode, held: Held, repaired_ms: Option<u64>) {
    held.renewal.abort();
    let end = Transformation::EndRepairLease {
        lease: Box::new(held.lease),
        repaired_ms,
    };
    if let Err(e) = node.metadata.commit(end).await {
        tracing::warn!("could not end a repair lease (it expires by itself): {e}");
    }
}

/// Drops the leases this node held before it restarted, once.
pub async fn clear_own(node: &AdminNode) -> Result<(), MetadataError> {
    let cleared = &node.auto_repair.leases_cleared;
    cleared
        .get_or_try_init(|| async {
            let holder = node.metadata.host_id();
            let held = node
                .metadata
                .current()
                .repair
                .leases
                .iter()
                .any(|l| l.holder == holder);
            if held {
                let drop = Transformation::DropRepairLeases { holder };
                node.metadata.commit(drop).await?;
            }
            Ok(())
        })
        .await
        .map(|_| ())
}

async fn renew(metadata: std::sync::Arc<metadata::MetadataService>, id: uuid::Uuid) {
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        let expires_ms = now_ms() + LEASE_PERIOD.as_millis() as u64;
        let renew = Transformation::RenewRepairLease { id, expires_ms };
        if let Err(e) = metadata.commit(renew).await {
            tracing::warn!("could not renew repair lease {id}: {e}");
        }
    }
}

fn unavailable(error: &MetadataError) -> String {
    format!("the cluster metadata log could not record the repair's lease: {error}")
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
