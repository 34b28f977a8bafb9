//! Counting replica responses against a consistency level, as Cassandra's response handlers
//! do: how many answers a level needs and from where (any replica; this datacenter for the
//! LOCAL_ levels; a quorum in every datacenter for EACH_QUORUM), whether the live replicas can
//! give them (else Unavailable), and whether failures made them unreachable.
use std::collections::BTreeMap;
use std::net::IpAddr;

use ring::{Endpoint, ReplicationStrategy, SmolStr};
use types::{Consistency, CqlError, CqlResult};

use crate::consistency::block_for;
use crate::replicas::ReplicaPlan;

/// The answers a consistency level needs from the replicas of one token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// This many answers from any replicas.
    Total(i32),
    /// This many answers from replicas in the datacenter.
    InDatacenter { dc: SmolStr, n: i32 },
    /// This many answers in each datacenter.
    EachDatacenter(BTreeMap<String, i32>),
}

impl Requirement {
    pub fn new(strategy: &ReplicationStrategy, cl: Consistency, local_dc: &SmolStr) -> Requirement {
        let n = block_for(strategy, cl, local_dc);
        match (cl, strategy) {
            (Consistency::LocalOne | Consistency::LocalQuorum | Consistency::LocalSerial, _) => {
                Requirement::InDatacenter {
                    dc: local_dc.clone(),
                    n,
                }
            }
            (Consistency::EachQuorum, ReplicationStrategy::NetworkTopology { dc_rf }) => {
                let quorums = dc_rf
                    .iter()
                    .map(|(dc, rf)| (dc.clone(), (rf / 2 + 1) as i32));
                Requirement::EachDatacenter(quorums.collect())
            }
            _ => Requirement::Total(n),
        }
    }

    /// The requirement of a write that also goes to `pending` replicas: one more answer per
    /// pending replica the level counts (Cassandra's blockFor with pending endpoints), so the
    /// level still holds once the ring has changed.
    pub fn with_pending(&self, pending: &[Endpoint]) -> Requirement {
        let in_dc = |dc: &str| pending.iter().filter(|e| &*e.datacenter == dc).count() as i32;
        match self {
            Requirement::Total(n) => Requirement::Total(n + pending.len() as i32),
            Requirement::InDatacenter { dc, n } => Requirement::InDatacenter {
                dc: dc.clone(),
                n: n + in_dc(dc),
            },
            Requirement::EachDatacenter(each) => Requirement::EachDatacenter(
                each.iter()
                    .map(|(dc, n)| (dc.clone(), n + in_dc(dc)))
                    .collect(),
            ),
        }
    }

    /// The answers needed in all (Cassandra's blockFor).
    pub fn block_for(&self) -> i32 {
        match self {
            Requirement::Total(n) | Requirement::InDatacenter { n, .. } => *n,
            Requirement::EachDatacenter(each) => each.values().sum(),
        }
    }

    /// `(required, alive)` of Cassandra's Unavailable when `live` replicas cannot meet it.
    pub fn unavailable(&self, live: &[Endpoint]) -> Option<(i32, i32)> {
        let short = |n: i32, alive: usize| (alive < n as usize).then_some((n, alive as i32));
        match self {
            Requirement::Total(n) => short(*n, live.len()),
            Requirement::InDatacenter { dc, n } => {
                short(*n, live.iter().filter(|e| e.datacenter == *dc).count())
            }
            Requirement::EachDatacenter(each) => {
                let counts = by_datacenter(live.iter().map(|e| e.datacenter.as_ref()));
                each.iter().find_map(|(dc, &n)| {
                    let alive = counts.get(dc.as_str()).copied().unwrap_or(0);
                    (alive < n).then_some((n, alive))
                })
            }
        }
    }

    /// The answers in `counts` (per datacenter) that count toward this requirement.
    fn counted(&self, counts: &BTreeMap<&str, i32>) -> i32 {
        match self {
            Requirement::Total(_) => counts.values().sum(),
            Requirement::InDatacenter { dc, .. } => counts.get(&**dc).copied().unwrap_or(0),
            Requirement::EachDatacenter(each) => each
                .iter()
                .map(|(dc, &n)| counts.get(dc.as_str()).copied().unwrap_or(0).min(n))
                .sum(),
        }
    }

    fn is_met(&self, counts: &BTreeMap<&str, i32>) -> bool {
        match self {
            Requirement::EachDatacenter(each) => each
                .iter()
                .all(|(dc, &n)| counts.get(dc.as_str()).copied().unwrap_or(0) >= n),
            _ => self.counted(counts) >= self.block_for(),
        }
    }
}

fn by_datacenter<'a>(dcs: impl Iterator<Item = &'a str>) -> BTreeMap<&'a str, i32> {
    let mut counts = BTreeMap::new();
    for dc in dcs {
        *counts.entry(dc).or_insert(0) += 1;
    }
    counts
}

/// The answers to one request so far.
#[derive(Clone, Debug)]
pub struct Tally<'a> {
    requirement: &'a Requirement,
    acks: BTreeMap<&'a str, i32>,
    /// Replicas asked that have not answered, per datacenter.
    pending: BTreeMap<&'a str, i32>,
    /// The replicas that failed and their reason codes (Cassandra's failureReasonByEndpoint).
    failed: Vec<(IpAddr, u16)>,
}

impl<'a> Tally<'a> {
    /// A tally of a request sent to `targets`.
    pub fn new(requirement: &'a Requirement, targets: impl Iterator<Item = &'a str>) -> Tally<'a> {
        Tally {
            requirement,
            acks: BTreeMap::new(),
            pending: by_datacenter(targets),
            failed: Vec::new(),
        }
    }

    /// A replica in `dc` answered.
    pub fn ack(&mut self, dc: &'a str) {
        self.settle(dc);
        *self.acks.entry(dc).or_insert(0) += 1;
    }

    /// Replica `addr` in `dc` failed, for reason `code`.
    pub fn fail(&mut self, dc: &'a str, addr: IpAddr, code: u16) {
        self.settle(dc);
        self.failed.push((addr, code));
    }

    /// An answer that counts although no replica was asked (a hint, for ANY).
    pub fn ack_extra(&mut self, dc: &'a str) {
        *self.acks.entry(dc).or_insert(0) += 1;
    }

    fn settle(&mut self, dc: &str) {
        if let Some(n) = self.pending.get_mut(dc) {
            *n = (*n - 1).max(0);
        }
    }

    pub fn is_met(&self) -> bool {
        self.requirement.is_met(&self.acks)
    }

    /// Whether the level can no longer be met even if every pending replica answers.
    pub fn is_lost(&self) -> bool {
        let mut best = self.acks.clone();
        for (dc, n) in &self.pending {
            *best.entry(dc).or_insert(0) += n;
        }
        !self.requirement.is_met(&best)
    }

    /// The answers that count toward the level (Cassandra's `received`).
    pub fn received(&self) -> i32 {
        self.requirement.counted(&self.acks)
    }

    pub fn failures(&self) -> i32 {
        self.failed.len() as i32
    }

    /// The replicas that failed and why.
    pub fn reasons(&self) -> &[(IpAddr, u16)] {
        &self.failed
    }

    pub fn block_for(&self) -> i32 {
        self.requirement.block_for()
    }
}

/// Unavailable when the live replicas cannot meet `requirement`.
pub(crate) fn unavailable(
    requirement: &Requirement,
    replicas: &ReplicaPlan,
    cl: Consistency,
) -> CqlResult<()> {
    match requirement.unavailable(&replicas.live) {
        None => Ok(()),
        Some((required, alive)) => Err(CqlError::Unavailable {
            message: format!("Cannot achieve consistency level {}", cl.name()),
            consistency: cl,
            required,
            alive,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn endpoint(last: u8, dc: &str) -> Endpoint {
        Endpoint {
            addr: IpAddr::from([127, 0, 0, last]),
            datacenter: dc.into(),
            rack: "r1".into(),
            host_id: [last; 16],
        }
    }

    fn nts() -> ReplicationStrategy {
        ReplicationStrategy::NetworkTopology {
            dc_rf: BTreeMap::from([("dc1".to_string(), 3), ("dc2".to_string(), 3)]),
        }
    }

    #[test]
    fn unavailable_counts_what_the_level_counts() {
        let rf3 = ReplicationStrategy::Simple { rf: 3 };
        let quorum = Requirement::new(&rf3, Consistency::Quorum, &"dc1".into());
        let all = Requirement::new(&rf3, Consistency::All, &"dc1".into());
        let two_live = [endpoint(1, "dc1"), endpoint(2, "dc1")];
        assert_eq!(quorum.unavailable(&two_live), None);
        assert_eq!(all.unavailable(&two_live), Some((3, 2)));
        let local = Requirement::new(&nts(), Consistency::LocalQuorum, &"dc1".into());
        let mixed = [endpoint(1, "dc1"), endpoint(4, "dc2"), endpoint(5, "dc2")];
        assert_eq!(local.unavailable(&mixed), Some((2, 1)));
        let each = Requirement::new(&nts(), Consistency::EachQuorum, &"dc1".into());
        assert_eq!(each.block_for(), 4);
        assert_eq!(each.unavailable(&mixed), Some((2, 1)));
    }

    #[test]
    fn pending_replicas_add_to_what_a_write_needs() {
        let rf3 = ReplicationStrategy::Simple { rf: 3 };
        let quorum = Requirement::new(&rf3, Consistency::Quorum, &"dc1".into());
        assert_eq!(quorum.with_pending(&[]), quorum);
        assert_eq!(quorum.with_pending(&[endpoint(4, "dc1")]).block_for(), 3);
        let local = Requirement::new(&nts(), Consistency::LocalQuorum, &"dc1".into());
        assert_eq!(local.with_pending(&[endpoint(9, "dc2")]).block_for(), 2);
    }

    #[test]
    fn a_tally_is_met_lost_or_waiting() {
        let rf3 = ReplicationStrategy::Simple { rf: 3 };
        let quorum = Requirement::new(&rf3, Consistency::Quorum, &"dc1".into());
        let mut tally = Tally::new(&quorum, ["dc1"; 3].into_iter());
        tally.ack("dc1");
        assert!(!tally.is_met() && !tally.is_lost());
        tally.fail("dc1", endpoint(2, "dc1").addr, 0x0000);
        assert!(!tally.is_met() && !tally.is_lost());
        tally.fail("dc1", endpoint(3, "dc1").addr, 0x0003);
        assert!(tally.is_lost());
        assert_eq!((tally.received(), tally.failures()), (1, 2));
        let reasons = [(endpoint(2, "dc1").addr, 0), (endpoint(3, "dc1").addr, 3)];
        assert_eq!(tally.reasons(), reasons);
    }

    #[test]
    fn local_quorum_ignores_other_datacenters_and_each_quorum_needs_every_one() {
        let local = Requirement::new(&nts(), Consistency::LocalQuorum, &"dc1".into());
        let targets = ["dc1", "dc1", "dc1", "dc2", "dc2", "dc2"];
        let mut tally = Tally::new(&local, targets.into_iter());
        tally.ack("dc2");
        tally.ack("dc2");
        tally.ack("dc1");
        assert!(!tally.is_met());
        assert_eq!(tally.received(), 1);
        tally.ack("dc1");
        assert!(tally.is_met());
        let each = Requirement::new(&nts(), Consistency::EachQuorum, &"dc1".into());
        let mut tally = Tally::new(&each, targets.into_iter());
        for dc in ["dc1", "dc1", "dc2"] {
            tally.ack(dc);
        }
        assert!(!tally.is_met());
        tally.ack("dc2");
        assert!(tally.is_met());
    }
}
