//! Repair leases and the repair scheduler's history, kept in the metadata log so that every
//! node sees the same ones in the same order.
//!
//! A lease says "node H repairs these ranges of these tables until time U". A repair takes one
//! before it starts and ends it when it finishes; the holder renews it while the repair runs.
//! Because taking a lease is a log entry checked against the state it meets, two nodes asking
//! at once see one win: a repair is refused while a live lease of another repair overlaps it
//! (the same table and a shared token), and a lease of the built-in scheduler (`scheduled`) is
//! refused while any other scheduled lease lives, which makes the scheduler repair one range
//! at a time across the cluster.
//!
//! Why the log: it already orders every node's changes and answers two nodes asking at once
//! the same way on every node (the check runs when the entry is applied), it survives
//! restarts, and its state is on every node, so the scheduler's history can live beside the
//! leases; a per-node lock cannot see another node's repair, and gossip cannot refuse one of
//! two nodes claiming the same ranges at once.
//!
//! Time is the proposer's clock carried in the entry (`now_ms`), never the applying node's, so
//! applying stays deterministic: a lease is live at an entry when its `expires_ms` is after the
//! entry's `now_ms`. A lease ends when its holder ends it, when it expires (its holder died or
//! lost the log for a whole lease period), when its holder restarts (it drops its own leases
//! at start), and when its holder leaves the cluster (the node's removal drops them).
//!
//! The history records, per table, when the scheduler last repaired each range; a range
//! recorded replaces the entries it overlaps, so the history follows the ring's ranges as they
//! change and stays as small as the ring.

use std::collections::BTreeMap;

use mutation::{tokens_overlap, TokenRange};
use serde::{Deserialize, Serialize};

use crate::model::HostId;
use crate::transform::Refusal;

/// A repair's claim on ranges of tables.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepairLease {
    pub id: uuid::Uuid,
    pub holder: HostId,
    /// What the repair is, for messages: `ks.t1,t2` and its kind.
    pub what: String,
    /// Table ids.
    pub tables: Vec<uuid::Uuid>,
    pub ranges: Vec<TokenRange>,
    /// Taken by the built-in scheduler: one at a time across the cluster.
    pub scheduled: bool,
    /// When the lease ends unless renewed (ms since the epoch, the holder's clock).
    pub expires_ms: u64,
}

impl RepairLease {
    fn overlaps(&self, other: &RepairLease) -> bool {
        self.tables.iter().any(|t| other.tables.contains(t))
            && self
                .ranges
                .iter()
                .any(|r| other.ranges.iter().any(|o| tokens_overlap(*r, *o)))
    }
}

/// The leases held and the scheduler's history.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepairLedger {
    pub leases: Vec<RepairLease>,
    /// By table id: each range the scheduler repaired and when (ms since the epoch).
    pub history: BTreeMap<uuid::Uuid, Vec<(TokenRange, u64)>>,
}

impl RepairLedger {
    /// When `range` of `table` was last repaired by the scheduler.
    pub fn repaired(&self, table: uuid::Uuid, range: TokenRange) -> Option<u64> {
        let ranges = self.history.get(&table)?;
        ranges.iter().find(|(r, _)| *r == range).map(|(_, at)| *at)
    }

    /// The live leases at `now_ms`.
    pub fn live(&self, now_ms: u64) -> impl Iterator<Item = &RepairLease> {
        self.leases.iter().filter(move |l| l.expires_ms > now_ms)
    }

    /// Takes `lease` at `now_ms`, dropping the expired ones, or refuses it with the repair it
    /// would overlap.
    pub(crate) fn take(&mut self, lease: &RepairLease, now_ms: u64) -> Result<(), Refusal> {
        self.leases.retain(|l| l.expires_ms > now_ms);
        let blocking = self.leases.iter().find(|held| {
            held.id != lease.id && (held.overlaps(lease) || (held.scheduled && lease.scheduled))
        });
        if let Some(held) = blocking {
            return Err(Refusal::Rejected(format!(
                "Cannot start multiple repair sessions over the same sstables: {} holds a repair \
                 of {} until {} (lease {})",
                held.holder, held.what, held.expires_ms, held.id
            )));
        }
        self.leases.retain(|l| l.id != lease.id);
        self.leases.push(lease.clone());
        Ok(())
    }

    pub(crate) fn renew(&mut self, id: uuid::Uuid, expires_ms: u64) -> Result<(), Refusal> {
        let lease =
            self.leases.iter_mut().find(|l| l.id == id).ok_or_else(|| {
                Refusal::Rejected(format!("repair lease {id} expired or was ended"))
            })?;
        lease.expires_ms = lease.expires_ms.max(expires_ms);
        Ok(())
    }

    /// Ends `lease`; with `repaired_ms`, records its ranges as repaired then.
    pub(crate) fn end(&mut self, lease: &RepairLease, repaired_ms: Option<u64>) {
        self.leases.retain(|l| l.id != lease.id);
        let Some(at) = repaired_ms else { return };
        for table in &lease.tables {
            let ranges = self.history.entry(*table).or_default();
            ranges.retain(|(r, _)| !lease.ranges.iter().any(|l| tokens_overlap(*l, *r)));
            ranges.extend(lease.ranges.iter().map(|r| (*r, at)));
        }
    }

    /// Drops every lease of `holder` (it restarted, or left the cluster).
    pub(crate) fn drop_holder(&mut self, holder: HostId) {
        self.leases.retain(|l| l.holder != holder);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn lease(id: u128, holder: u128, ranges: &[TokenRange], scheduled: bool) -> RepairLease {
        RepairLease {
            id: Uuid::from_u128(id),
            holder: Uuid::from_u128(holder),
            what: "ks.t".into(),
            tables: vec![Uuid::from_u128(7)],
            ranges: ranges.to_vec(),
            scheduled,
            expires_ms: 1_000,
        }
    }

    #[test]
    fn overlapping_repairs_and_two_scheduled_ones_are_refused_while_live() {
        let mut ledger = RepairLedger::default();
        ledger.take(&lease(1, 1, &[(0, 100)], false), 0).unwrap();
        let overlapping = ledger.take(&lease(2, 2, &[(50, 150)], false), 10);
        assert!(matches!(overlapping, Err(Refusal::Rejected(m)) if m.contains("same sstables")));
        ledger.take(&lease(3, 2, &[(100, 200)], true), 10).unwrap();
        assert!(
            ledger.take(&lease(4, 3, &[(300, 400)], true), 10).is_err(),
            "one scheduled repair at a time"
        );
        // once expired, a lease no longer blocks and is dropped
        ledger
            .take(&lease(4, 3, &[(300, 400)], true), 1_000)
            .unwrap();
        assert_eq!(ledger.leases.len(), 1);
    }

    #[test]
    fn renewals_keep_a_lease_and_ends_record_history_over_older_ranges() {
        let mut ledger = RepairLedger::default();
        let first = lease(1, 1, &[(0, 100)], true);
        ledger.take(&first, 0).unwrap();
        ledger.renew(first.id, 5_000).unwrap();
        assert!(ledger.take(&lease(2, 2, &[(0, 10)], false), 2_000).is_err());
        ledger.end(&first, Some(42));
        assert!(ledger.renew(first.id, 6_000).is_err());
        assert_eq!(ledger.repaired(Uuid::from_u128(7), (0, 100)), Some(42));
        // the ring changed: a narrower range replaces the one it overlaps
        ledger.end(&lease(3, 1, &[(0, 50)], true), Some(50));
        let table = Uuid::from_u128(7);
        assert_eq!(ledger.history[&table], vec![((0, 50), 50)]);
        ledger.take(&lease(4, 9, &[(0, 10)], false), 0).unwrap();
        ledger.drop_holder(Uuid::from_u128(9));
        assert!(ledger.leases.is_empty());
    }
}
