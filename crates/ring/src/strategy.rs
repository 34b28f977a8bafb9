//! Replication strategies: parsing and validating `replication = {...}` options as Cassandra
//! does, the normalised options `system_schema.keyspaces.replication` stores, and replica
//! placement on the ring.
use smol_str::SmolStr;
use std::collections::{BTreeMap, BTreeSet};

use crate::{Endpoint, RingError, Token, TokenMetadata};

const PACKAGE: &str = "org.apache.cassandra.locator.";
const CLASS: &str = "class";
const REPLICATION_FACTOR: &str = "replication_factor";

/// How a keyspace's data is replicated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplicationStrategy {
    Simple { rf: usize },
    NetworkTopology { dc_rf: BTreeMap<String, usize> },
    Local,
    Everywhere,
}

impl ReplicationStrategy {
    /// Parses and validates replication options for keyspace `keyspace`. `datacenters` are the
    /// datacenters known to the cluster: NetworkTopologyStrategy's `replication_factor` expands
    /// to each of them (explicit datacenter options win), and, when the list is not empty, other
    /// datacenter names are rejected as unrecognized options.
    pub fn from_options(
        keyspace: &str,
        options: &BTreeMap<String, String>,
        datacenters: &BTreeSet<String>,
    ) -> Result<ReplicationStrategy, RingError> {
        let class = options
            .get(CLASS)
            .ok_or_else(|| config("Missing replication strategy class".to_string()))?;
        let rest: BTreeMap<&str, &str> = options
            .iter()
            .filter(|(k, _)| k.as_str() != CLASS)
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        match short_class_name(class) {
            Some("SimpleStrategy") => simple(keyspace, &rest),
            Some("NetworkTopologyStrategy") => network_topology(keyspace, &rest, datacenters),
            Some("LocalStrategy") => {
                no_options(keyspace, "LocalStrategy", &rest).map(|()| ReplicationStrategy::Local)
            }
            Some("EverywhereStrategy") => no_options(keyspace, "EverywhereStrategy", &rest)
                .map(|()| ReplicationStrategy::Everywhere),
            _ => Err(config(format!(
                "Unable to find replication strategy class '{}'",
                full_class_name(class)
            ))),
        }
    }

    /// Replicas of each token across all datacenters.
    pub fn total_replication_factor(&self) -> usize {
        match self {
            ReplicationStrategy::Simple { rf } => *rf,
            ReplicationStrategy::NetworkTopology { dc_rf } => dc_rf.values().sum(),
            ReplicationStrategy::Local | ReplicationStrategy::Everywhere => 1,
        }
    }

    /// Replicas of each token in datacenter `dc` (all of them for datacenter-unaware strategies).
    pub fn local_replication_factor(&self, dc: &str) -> usize {
        match self {
            ReplicationStrategy::NetworkTopology { dc_rf } => dc_rf.get(dc).copied().unwrap_or(0),
            other => other.total_replication_factor(),
        }
    }

    /// Answers EACH_QUORUM needs: a quorum in every datacenter.
    pub fn each_quorum_block_for(&self) -> usize {
        match self {
            ReplicationStrategy::NetworkTopology { dc_rf } => {
                dc_rf.values().map(|rf| rf / 2 + 1).sum()
            }
            other => other.total_replication_factor() / 2 + 1,
        }
    }

    /// The short class name (`SimpleStrategy`).
    pub fn class_name(&self) -> &'static str {
        match self {
            ReplicationStrategy::Simple { .. } => "SimpleStrategy",
            ReplicationStrategy::NetworkTopology { .. } => "NetworkTopologyStrategy",
            ReplicationStrategy::Local => "LocalStrategy",
            ReplicationStrategy::Everywhere => "EverywhereStrategy",
        }
    }

    /// The options as `system_schema.keyspaces.replication` stores them: the full class name
    /// and each factor as a decimal string.
    pub fn normalized_options(&self) -> BTreeMap<String, String> {
        let mut options = BTreeMap::new();
        options.insert(CLASS.to_string(), format!("{PACKAGE}{}", self.class_name()));
        match self {
            ReplicationStrategy::Simple { rf } => {
                options.insert(REPLICATION_FACTOR.to_string(), rf.to_string());
            }
            ReplicationStrategy::NetworkTopology { dc_rf } => {
                for (dc, rf) in dc_rf {
                    options.insert(dc.clone(), rf.to_string());
                }
            }
            ReplicationStrategy::Local | ReplicationStrategy::Everywhere => {}
        }
        options
    }

    /// The replicas of `token`, primary first, in ring-walk order.
    pub fn replicas(&self, token: Token, ring: &TokenMetadata) -> Vec<Endpoint> {
        match self {
            ReplicationStrategy::Simple { rf } => distinct_walk(token, ring, *rf),
            ReplicationStrategy::Everywhere => distinct_walk(token, ring, usize::MAX),
            ReplicationStrategy::Local => ring.local().into_iter().cloned().collect(),
            ReplicationStrategy::NetworkTopology { dc_rf } => {
                network_topology_replicas(token, ring, dc_rf)
            }
        }
    }
}

fn config(message: String) -> RingError {
    RingError::Config(message)
}

/// `SimpleStrategy` for `SimpleStrategy` and `org.apache.cassandra.locator.SimpleStrategy`;
/// `None` for a class outside Cassandra's locator package.
fn short_class_name(class: &str) -> Option<&str> {
    match class.strip_prefix(PACKAGE) {
        Some(short) => Some(short),
        None if !class.contains('.') => Some(class),
        None => None,
    }
}

fn full_class_name(class: &str) -> String {
    if class.contains('.') {
        class.to_string()
    } else {
        format!("{PACKAGE}{class}")
    }
}

fn simple(
    keyspace: &str,
    options: &BTreeMap<&str, &str>,
) -> Result<ReplicationStrategy, RingError> {
    reject_unrecognized(keyspace, "SimpleStrategy", options, |key| {
        key == REPLICATION_FACTOR
    })?;
    let rf = options.get(REPLICATION_FACTOR).ok_or_else(|| {
        config("SimpleStrategy requires a replication_factor strategy option.".to_string())
    })?;
    Ok(ReplicationStrategy::Simple { rf: parse_rf(rf)? })
}

fn network_topology(
    keyspace: &str,
    options: &BTreeMap<&str, &str>,
    datacenters: &BTreeSet<String>,
) -> Result<ReplicationStrategy, RingError> {
    let known = |key: &str| datacenters.is_empty() || datacenters.contains(key);
    reject_unrecognized(keyspace, "NetworkTopologyStrategy", options, |key| {
        key == REPLICATION_FACTOR || known(key)
    })?;
    let mut dc_rf = BTreeMap::new();
    if let Some(rf) = options.get(REPLICATION_FACTOR) {
        let rf = parse_rf(rf)?;
        for dc in datacenters {
            dc_rf.insert(dc.clone(), rf);
        }
    }
    for (dc, rf) in options.iter().filter(|(k, _)| **k != REPLICATION_FACTOR) {
        dc_rf.insert(dc.to_string(), parse_rf(rf)?);
    }
    Ok(ReplicationStrategy::NetworkTopology { dc_rf })
}

fn no_options(
    keyspace: &str,
    class: &str,
    options: &BTreeMap<&str, &str>,
) -> Result<(), RingError> {
    reject_unrecognized(keyspace, class, options, |_| false)
}

fn reject_unrecognized(
    keyspace: &str,
    class: &str,
    options: &BTreeMap<&str, &str>,
    recognized: impl Fn(&str) -> bool,
) -> Result<(), RingError> {
    match options.keys().find(|key| !recognized(key)) {
        Some(key) => Err(config(format!(
            "Unrecognized strategy option {{{key}}} passed to {class} for keyspace {keyspace}"
        ))),
        None => Ok(()),
    }
}

/// A replication factor as Cassandra's `ReplicationFactor.fromString` reads it (Java
/// `Integer.parseInt` messages; transient replication is not supported).
fn parse_rf(value: &str) -> Result<usize, RingError> {
    if value.contains('/') {
        return Err(config(
            "Transient replication is not enabled on this node".to_string(),
        ));
    }
    let rf: i32 = value
        .parse()
        .map_err(|_| config(format!("For input string: \"{value}\"")))?;
    usize::try_from(rf).map_err(|_| {
        config(format!(
            "Replication factor must be non-negative, found {rf}"
        ))
    })
}

/// The first `count` distinct endpoints clockwise from `token`.
fn distinct_walk(token: Token, ring: &TokenMetadata, count: usize) -> Vec<Endpoint> {
    // No more replicas than endpoints: a walk stops once it has them all.
    let count = count.min(ring.endpoint_count());
    let mut replicas: Vec<Endpoint> = Vec::with_capacity(count.min(8));
    for addr in ring.walk_addrs(token) {
        if replicas.len() >= count {
            break;
        }
        if replicas.iter().all(|r| r.addr != addr) {
            replicas.extend(ring.endpoint(addr).cloned());
        }
    }
    replicas
}

/// Cassandra's NetworkTopologyStrategy placement: one walk of the ring; in each datacenter
/// the first endpoint of every rack is taken, and endpoints of an already-used rack only while
/// there are more replicas to place than racks.
fn network_topology_replicas(
    token: Token,
    ring: &TokenMetadata,
    dc_rf: &BTreeMap<String, usize>,
) -> Vec<Endpoint> {
    let mut dcs: BTreeMap<&str, DcPlacement> = dc_rf
        .iter()
        .filter(|(_, rf)| **rf > 0)
        .map(|(dc, rf)| (dc.as_str(), DcPlacement::new(ring, dc, *rf)))
        .collect();
    let mut replicas: Vec<Endpoint> = Vec::new();
    for endpoint in ring.walk(token) {
        if dcs.values().all(DcPlacement::done) {
            break;
        }
        let Some(dc) = dcs.get_mut(&*endpoint.datacenter) else {
            continue;
        };
        if !replicas.iter().any(|r| r.addr == endpoint.addr) && dc.accept(endpoint) {
            replicas.push(endpoint.clone());
        }
    }
    replicas
}

/// Per-datacenter state of a NetworkTopologyStrategy placement.
struct DcPlacement {
    left: usize,
    rack_repeats: isize,
    racks: BTreeSet<SmolStr>,
}

impl DcPlacement {
    fn new(ring: &TokenMetadata, dc: &str, rf: usize) -> DcPlacement {
        let in_dc: Vec<&Endpoint> = ring
            .endpoints()
            .into_iter()
            .filter(|e| &*e.datacenter == dc)
            .collect();
        let rack_count = in_dc.iter().map(|e| &e.rack).collect::<BTreeSet<_>>().len();
        DcPlacement {
            left: rf.min(in_dc.len()),
            rack_repeats: rf as isize - rack_count as isize,
            racks: BTreeSet::new(),
        }
    }

    fn done(&self) -> bool {
        self.left == 0
    }

    /// Whether `endpoint` (not yet a replica) becomes one.
    fn accept(&mut self, endpoint: &Endpoint) -> bool {
        if self.done() {
            return false;
        }
        if !self.racks.insert(endpoint.rack.clone()) {
            if self.rack_repeats <= 0 {
                return false;
            }
            self.rack_repeats -= 1;
        }
        self.left -= 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token_metadata::tests::node;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn dcs(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn parse(pairs: &[(&str, &str)]) -> Result<ReplicationStrategy, RingError> {
        ReplicationStrategy::from_options("ks", &opts(pairs), &dcs(&["dc1", "dc2"]))
    }

    fn message(pairs: &[(&str, &str)]) -> String {
        parse(pairs).unwrap_err().to_string()
    }

    #[test]
    fn simple_strategy_short_and_full_names() {
        let expected = ReplicationStrategy::Simple { rf: 3 };
        assert_eq!(
            parse(&[("class", "SimpleStrategy"), ("replication_factor", "3")]),
            Ok(expected.clone())
        );
        assert_eq!(
            parse(&[
                ("class", "org.apache.cassandra.locator.SimpleStrategy"),
                ("replication_factor", "3")
            ]),
            Ok(expected.clone())
        );
        assert_eq!(
            expected.normalized_options(),
            opts(&[
                ("class", "org.apache.cassandra.locator.SimpleStrategy"),
                ("replication_factor", "3")
            ])
        );
    }

    #[test]
    fn simple_strategy_errors_read_like_cassandra() {
        assert_eq!(
            message(&[("class", "SimpleStrategy")]),
            "SimpleStrategy requires a replication_factor strategy option."
        );
        assert_eq!(
            message(&[("class", "SimpleStrategy"), ("replication_factor", "x")]),
            "For input string: \"x\""
        );
        assert_eq!(
            message(&[("class", "SimpleStrategy"), ("replication_factor", "-1")]),
            "Replication factor must be non-negative, found -1"
        );
        assert_eq!(
            message(&[
                ("class", "SimpleStrategy"),
                ("replication_factor", "1"),
                ("foo", "1")
            ]),
            "Unrecognized strategy option {foo} passed to SimpleStrategy for keyspace ks"
        );
        assert_eq!(
            message(&[("replication_factor", "1")]),
            "Missing replication strategy class"
        );
        assert_eq!(
            message(&[("class", "Bogus")]),
            "Unable to find replication strategy class 'org.apache.cassandra.locator.Bogus'"
        );
    }

    #[test]
    fn network_topology_expands_replication_factor() {
        let nts = parse(&[
            ("class", "NetworkTopologyStrategy"),
            ("replication_factor", "2"),
            ("dc2", "1"),
        ]);
        let dc_rf = BTreeMap::from([("dc1".to_string(), 2), ("dc2".to_string(), 1)]);
        assert_eq!(nts, Ok(ReplicationStrategy::NetworkTopology { dc_rf }));
        assert_eq!(
            message(&[("class", "NetworkTopologyStrategy"), ("dc9", "1")]),
            "Unrecognized strategy option {dc9} passed to NetworkTopologyStrategy for keyspace ks"
        );
        let normalized = parse(&[("class", "NetworkTopologyStrategy"), ("dc1", "3")])
            .unwrap()
            .normalized_options();
        assert_eq!(
            normalized,
            opts(&[
                (
                    "class",
                    "org.apache.cassandra.locator.NetworkTopologyStrategy"
                ),
                ("dc1", "3")
            ])
        );
    }

    fn ring_of(nodes: &[(Endpoint, i64)]) -> TokenMetadata {
        let mut ring = TokenMetadata::new();
        for (endpoint, token) in nodes {
            ring.add_endpoint(endpoint.clone(), vec![Token(*token)]);
        }
        ring
    }

    fn ids(replicas: &[Endpoint]) -> Vec<u8> {
        replicas.iter().map(|e| e.host_id[0]).collect()
    }

    #[test]
    fn simple_replicas_walk_clockwise() {
        let ring = ring_of(&[
            (node(1, "dc1", "r1"), 0),
            (node(2, "dc1", "r1"), 100),
            (node(3, "dc1", "r1"), 200),
        ]);
        let rf2 = ReplicationStrategy::Simple { rf: 2 };
        assert_eq!(ids(&rf2.replicas(Token(50), &ring)), vec![2, 3]);
        assert_eq!(ids(&rf2.replicas(Token(150), &ring)), vec![3, 1]);
        assert_eq!(ids(&rf2.replicas(Token(201), &ring)), vec![1, 2]);
        let rf5 = ReplicationStrategy::Simple { rf: 5 };
        assert_eq!(ids(&rf5.replicas(Token(0), &ring)), vec![1, 2, 3]);
        assert_eq!(
            ids(&ReplicationStrategy::Everywhere.replicas(Token(100), &ring)),
            vec![2, 3, 1]
        );
    }

    #[test]
    fn network_topology_prefers_distinct_racks() {
        let ring = ring_of(&[
            (node(1, "dc1", "r1"), 0),
            (node(2, "dc1", "r1"), 100),
            (node(3, "dc2", "r1"), 150),
            (node(4, "dc1", "r2"), 200),
            (node(5, "dc2", "r1"), 250),
        ]);
        let dc_rf = BTreeMap::from([("dc1".to_string(), 2), ("dc2".to_string(), 1)]);
        let nts = ReplicationStrategy::NetworkTopology { dc_rf };
        assert_eq!(ids(&nts.replicas(Token(1), &ring)), vec![2, 3, 4]);
        assert_eq!(ids(&nts.replicas(Token(201), &ring)), vec![5, 1, 4]);
        let dc_rf = BTreeMap::from([("dc1".to_string(), 3)]);
        let nts3 = ReplicationStrategy::NetworkTopology { dc_rf };
        assert_eq!(ids(&nts3.replicas(Token(1), &ring)), vec![2, 4, 1]);
    }

    #[test]
    fn local_strategy_is_the_local_node() {
        let mut ring = ring_of(&[(node(1, "dc1", "r1"), 0), (node(2, "dc1", "r1"), 9)]);
        assert!(ReplicationStrategy::Local
            .replicas(Token(3), &ring)
            .is_empty());
        ring.set_local(node(2, "dc1", "r1").addr);
        assert_eq!(
            ids(&ReplicationStrategy::Local.replicas(Token(3), &ring)),
            vec![2]
        );
    }
}
