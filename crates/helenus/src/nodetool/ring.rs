//! `status`, `ring`, `describecluster`, `gossipinfo` and `cms`: the cluster as one node sees it,
//! printed as Cassandra 5.0.4 prints it (`cms` as Cassandra 5.1's `nodetool cms describe`).

use std::collections::BTreeMap;

use admin::types::{ClusterInfo, CmsInfo, GossipEndpoint, RingInfo, RingNode, RingRanges};

use super::format::{file_size, percent, TableBuilder};

/// The nodes of each data center, by address.
fn by_datacenter(ring: &RingInfo) -> BTreeMap<&str, Vec<&RingNode>> {
    let mut dcs: BTreeMap<&str, Vec<&RingNode>> = BTreeMap::new();
    for node in &ring.nodes {
        dcs.entry(&node.data_center).or_default().push(node);
    }
    for nodes in dcs.values_mut() {
        nodes.sort_by_key(|n| n.address.parse::<std::net::IpAddr>().ok());
    }
    dcs
}

fn note(ring: &RingInfo) -> String {
    ring.ownership_note
        .as_ref()
        .map(|n| format!("Note: {n}\n"))
        .unwrap_or_default()
}

fn owns(ring: &RingInfo, node: &RingNode, places: usize) -> String {
    if ring.effective {
        percent(node.owns, places)
    } else {
        "?".to_string()
    }
}

fn load(node: &RingNode) -> String {
    node.load_bytes.map_or("?".to_string(), file_size)
}

/// `UN`, `DN`, `UL`…: up or down, then the state's initial.
fn code(node: &RingNode) -> String {
    let up = if node.up { 'U' } else { 'D' };
    format!("{up}{}", node.state.chars().next().unwrap_or('N'))
}

pub fn status(ring: &RingInfo) -> String {
    let single_token = ring.nodes.iter().all(|n| n.tokens.len() == 1);
    let owns_header = if ring.effective {
        "Owns (effective)"
    } else {
        "Owns"
    };
    let mut out = String::new();
    for (dc, nodes) in by_datacenter(ring) {
        let header = format!("Datacenter: {dc}");
        out.push_str(&format!("{header}\n{}\n", "=".repeat(header.len())));
        out.push_str("Status=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n");
        let mut table = TableBuilder::new("  ");
        if single_token {
            table.add([
                "--",
                "Address",
                "Load",
                owns_header,
                "Host ID",
                "Token",
                "Rack",
            ]);
        } else {
            table.add([
                "--",
                "Address",
                "Load",
                "Tokens",
                owns_header,
                "Host ID",
                "Rack",
            ]);
        }
        for node in nodes {
            let middle = if single_token {
                [
                    owns(ring, node, 1),
                    node.host_id.clone(),
                    node.tokens[0].clone(),
                ]
            } else {
                [
                    node.tokens.len().to_string(),
                    owns(ring, node, 1),
                    node.host_id.clone(),
                ]
            };
            let [a, b, c] = middle;
            table.add([
                code(node),
                node.address.clone(),
                load(node),
                a,
                b,
                c,
                node.rack.clone(),
            ]);
        }
        out.push_str(&table.render());
        out.push('\n');
    }
    out.push_str(&note(ring));
    out
}

pub fn ring(ring: &RingInfo) -> String {
    let width = ring
        .nodes
        .iter()
        .map(|n| format!("{}:{}", n.address, n.storage_port).len())
        .max()
        .unwrap_or(0);
    let row = |cells: [&str; 7]| {
        format!(
            "{:<width$}  {:<12}{:<7}{:<8}{:<16}{:<20}{:<44}\n",
            cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6]
        )
    };
    let many_tokens = ring.nodes.iter().any(|n| n.tokens.len() > 1);
    let mut out = String::new();
    for (dc, nodes) in by_datacenter(ring) {
        out.push_str(&format!("\nDatacenter: {dc}\n==========\n"));
        out.push_str(&row([
            "Address", "Rack", "Status", "State", "Load", "Owns", "Token",
        ]));
        let mut tokens: Vec<(i64, &RingNode)> = nodes
            .iter()
            .flat_map(|n| {
                n.tokens
                    .iter()
                    .filter_map(|t| t.parse().ok())
                    .map(move |t| (t, *n))
            })
            .collect();
        tokens.sort_by_key(|(t, _)| *t);
        match tokens.last() {
            Some((last, _)) if tokens.len() > 1 => {
                out.push_str(&row(["", "", "", "", "", "", &last.to_string()]))
            }
            _ => out.push('\n'),
        }
        for (token, node) in tokens {
            let status = if node.up { "Up" } else { "Down" };
            out.push_str(&row([
                &node.address,
                &node.rack,
                status,
                &node.state,
                &load(node),
                &owns(ring, node, 2),
                &token.to_string(),
            ]));
        }
        out.push('\n');
    }
    if many_tokens {
        out.push_str("  Warning: \"nodetool ring\" is used to output all the tokens of a node.\n");
        out.push_str(
            "  To view status related info of a node use \"nodetool status\" instead.\n\n",
        );
    }
    out.push_str("\n  ");
    out.push_str(&note(ring));
    out
}

pub fn describecluster(c: &ClusterInfo, ring: &RingInfo) -> String {
    let mut out = String::from("Cluster Information:\n");
    out.push_str(&format!("\tName: {}\n\tSnitch: {}\n", c.name, c.snitch));
    out.push_str("\tDynamicEndPointSnitch: enabled\n");
    out.push_str(&format!(
        "\tPartitioner: {}\n\tSchema versions:\n",
        c.partitioner
    ));
    for (version, addrs) in schema_versions(ring) {
        out.push_str(&format!("\t\t{version}: [{}]\n", addrs.join(", ")));
    }
    let down = ring.nodes.iter().filter(|n| !n.up).count();
    let in_state = |state: &str| ring.nodes.iter().filter(|n| n.state == state).count();
    let (joining, leaving) = (in_state("Joining"), in_state("Leaving"));
    out.push_str(&format!(
        "\nStats for all nodes:\n\tLive: {}\n\tJoining: {joining}\n\tMoving: 0\n\tLeaving: {leaving}\n\tUnreachable: {down}\n\n",
        ring.nodes.len() - down
    ));
    out.push_str("Data Centers: \n");
    for (dc, nodes) in by_datacenter(ring) {
        let down = nodes.iter().filter(|n| !n.up).count();
        out.push_str(&format!("\t{dc} #Nodes: {} #Down: {down}\n", nodes.len()));
    }
    out.push_str("\nDatabase versions:\n");
    for (version, addrs) in release_versions(ring) {
        out.push_str(&format!("\t{version}: [{}]\n", addrs.join(", ")));
    }
    out.push_str("\nKeyspaces:\n");
    for ks in &c.keyspaces {
        let options: Vec<String> = ks.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push_str(&format!(
            "\t{} -> Replication class: {} {{{}}}\n",
            ks.name,
            ks.class,
            options.join(", ")
        ));
    }
    out
}

/// Each schema version and the nodes on it; nodes that are down are `UNREACHABLE`.
fn schema_versions(ring: &RingInfo) -> BTreeMap<String, Vec<String>> {
    let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for node in &ring.nodes {
        let version = match (&node.schema_version, node.up) {
            (Some(v), true) => v.clone(),
            _ => "UNREACHABLE".to_string(),
        };
        versions
            .entry(version)
            .or_default()
            .push(node.address.clone());
    }
    versions
}

fn release_versions(ring: &RingInfo) -> BTreeMap<String, Vec<String>> {
    let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for node in ring.nodes.iter().filter(|n| n.up) {
        let version = node.release_version.clone().unwrap_or_default();
        let addr = format!("{}:{}", node.address, node.storage_port);
        versions.entry(version).or_default().push(addr);
    }
    versions
}

/// Cassandra's gossipinfo: `/address`, then its generation, heartbeat and states.
pub fn gossipinfo(endpoints: &[GossipEndpoint]) -> String {
    let mut out = String::new();
    for e in endpoints {
        let host = e
            .address
            .rsplit_once(':')
            .map_or(e.address.as_str(), |(h, _)| h);
        out.push_str(&format!(
            "/{host}\n  generation:{}\n  heartbeat:{}\n",
            e.generation, e.heartbeat
        ));
        if !e.alive {
            out.push_str("  STATUS:DOWN\n");
        }
        for (key, value) in &e.state {
            out.push_str(&format!("  {}:{value}\n", key.to_uppercase()));
        }
    }
    out
}

/// Cassandra's describering: the schema version, then each range and its replicas.
pub fn describering(r: &RingRanges) -> String {
    let mut out = format!("Schema Version:{}\nTokenRange: \n", r.schema_version);
    for range in &r.ranges {
        let hosts: Vec<&str> = range.endpoints.iter().map(|(a, _, _)| a.as_str()).collect();
        let details: Vec<String> = range
            .endpoints
            .iter()
            .map(|(a, dc, rack)| format!("EndpointDetails(host:{a}, datacenter:{dc}, rack:{rack})"))
            .collect();
        out.push_str(&format!(
            "\tTokenRange(start_token:{}, end_token:{}, endpoints:[{}], rpc_endpoints:[{}], endpoint_details:[{}])\n",
            range.start_token,
            range.end_token,
            hosts.join(", "),
            hosts.join(", "),
            details.join(", ")
        ));
    }
    out
}

/// The metadata group as this node sees it.
pub fn cms(c: &CmsInfo) -> String {
    let optional = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    format!(
        "Cluster Metadata Service:\nMembers: {}\nLearners: {}\nLeader: {}\nThis node: {} ({})\nEpoch: {}\nTerm: {}\nLast log index: {}\nApplied index: {}\nSnapshot index: {}\n",
        c.voters.join(", "),
        c.learners.join(", "),
        c.leader.as_deref().unwrap_or("none"),
        c.host_id,
        c.role,
        c.epoch,
        c.term,
        optional(c.last_log_index),
        optional(c.applied_index),
        optional(c.snapshot_index),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use admin::types::KeyspaceReplication;

    const NOTE: &str = "Non-system keyspaces don't have the same replication settings, effective ownership information is meaningless";

    fn node(address: &str, tokens: &[&str], load: u64) -> RingNode {
        RingNode {
            address: address.into(),
            storage_port: 7000,
            host_id: "e0be2bdb-e194-4014-ab11-156f4ff3bc07".into(),
            data_center: "datacenter1".into(),
            rack: "rack1".into(),
            up: true,
            state: "Normal".into(),
            load_bytes: Some(load),
            tokens: tokens.iter().map(|t| t.to_string()).collect(),
            owns: 1.0,
            schema_version: Some("5f68869d-2066-3466-a2d2-4dd2d04fc092".into()),
            release_version: Some("5.0.4".into()),
        }
    }

    fn one(node: RingNode, effective: bool) -> RingInfo {
        RingInfo {
            nodes: vec![node],
            effective,
            ownership_note: (!effective).then(|| NOTE.to_string()),
        }
    }

    #[test]
    fn status_with_effective_ownership() {
        // matches Cassandra 5.0.4 (`refcass nodetool status nt_helper`)
        let tokens: Vec<String> = (0..16).map(|i| i.to_string()).collect();
        let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
        assert_eq!(
            status(&one(node("127.0.0.2", &tokens, 316_621), true)),
            "Datacenter: datacenter1\n=======================\nStatus=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n\
--  Address    Load       Tokens  Owns (effective)  Host ID                               Rack \n\
UN  127.0.0.2  309.2 KiB  16      100.0%            e0be2bdb-e194-4014-ab11-156f4ff3bc07  rack1\n\n"
        );
    }

    #[test]
    fn status_without_effective_ownership() {
        // matches Cassandra 5.0.4 (`refcass nodetool status`)
        let text = status(&one(node("127.0.0.2", &["1", "2"], 300_165), false));
        assert!(text.contains("--  Address    Load        Tokens  Owns  Host ID                               Rack \n"));
        assert!(text.contains("UN  127.0.0.2  293.13 KiB  2       ?     e0be2bdb-e194-4014-ab11-156f4ff3bc07  rack1\n"));
        assert!(text.ends_with(&format!("rack1\n\nNote: {NOTE}\n")));
    }

    #[test]
    fn status_lists_every_node_by_data_center_down_ones_too() {
        let mut b = node("127.0.0.10", &["5", "6"], 1024);
        b.up = false;
        b.load_bytes = None;
        b.owns = 0.5;
        let mut c = node("127.0.0.3", &["7", "8"], 2048);
        c.data_center = "dc2".into();
        let ring = RingInfo {
            nodes: vec![b, node("127.0.0.2", &["1", "2"], 2048), c],
            effective: true,
            ownership_note: None,
        };
        let text = status(&ring);
        let dc1 = text.find("Datacenter: datacenter1").unwrap();
        let dc2 = text.find("Datacenter: dc2").unwrap();
        let first = text.find("UN  127.0.0.2 ").unwrap();
        let down = text.find("DN  127.0.0.10").unwrap();
        assert!(dc1 < first && first < down && down < dc2, "{text}");
        assert!(
            text.contains("DN  127.0.0.10  ?      2       50.0% "),
            "{text}"
        );
    }

    #[test]
    fn ring_lists_every_token() {
        // matches Cassandra 5.0.4 (`refcass nodetool ring`)
        let n = node(
            "127.0.0.2",
            &["-8537504946695191133", "8468970897111777244"],
            300_165,
        );
        let text = ring(&one(n, false));
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines[0], "");
        assert_eq!(lines[1], "Datacenter: datacenter1");
        assert_eq!(lines[2], "==========");
        assert_eq!(lines[3], "Address         Rack        Status State   Load            Owns                Token                                       ");
        assert_eq!(lines[4], "                                                                               8468970897111777244                         ");
        assert_eq!(lines[5], "127.0.0.2       rack1       Up     Normal  293.13 KiB      ?                   -8537504946695191133                        ");
        assert!(text.ends_with(&format!("\n\n  Warning: \"nodetool ring\" is used to output all the tokens of a node.\n  To view status related info of a node use \"nodetool status\" instead.\n\n\n  Note: {NOTE}\n")));
    }

    #[test]
    fn ring_interleaves_the_tokens_of_all_nodes() {
        let ring_info = RingInfo {
            nodes: vec![
                node("127.0.0.1", &["10", "-30"], 1),
                node("127.0.0.2", &["20"], 1),
            ],
            effective: true,
            ownership_note: None,
        };
        let text = ring(&ring_info);
        let owners: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("127."))
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(owners, vec!["127.0.0.1", "127.0.0.1", "127.0.0.2"]);
    }

    #[test]
    fn describecluster_layout() {
        // matches Cassandra 5.0.4 (`refcass nodetool describecluster`)
        let c = ClusterInfo {
            name: "refcass".into(),
            snitch: "org.apache.cassandra.locator.SimpleSnitch".into(),
            partitioner: "org.apache.cassandra.dht.Murmur3Partitioner".into(),
            schema_version: "5f68869d-2066-3466-a2d2-4dd2d04fc092".into(),
            address: "127.0.0.2".into(),
            storage_port: 7000,
            data_center: "datacenter1".into(),
            release_version: "5.0.4".into(),
            keyspaces: vec![KeyspaceReplication {
                name: "x".into(),
                class: "SimpleStrategy".into(),
                options: vec![("replication_factor".into(), "1".into())],
            }],
        };
        let text = describecluster(&c, &one(node("127.0.0.2", &["1"], 1), true));
        assert!(text.starts_with("Cluster Information:\n\tName: refcass\n\tSnitch: org.apache.cassandra.locator.SimpleSnitch\n"));
        assert!(text.contains("\tSchema versions:\n\t\t5f68869d-2066-3466-a2d2-4dd2d04fc092: [127.0.0.2]\n\nStats for all nodes:\n\tLive: 1\n"));
        assert!(text.contains("Data Centers: \n\tdatacenter1 #Nodes: 1 #Down: 0\n\nDatabase versions:\n\t5.0.4: [127.0.0.2:7000]\n\nKeyspaces:\n\tx -> Replication class: SimpleStrategy {replication_factor=1}\n"));
    }

    #[test]
    fn describecluster_counts_unreachable_nodes() {
        let c = ClusterInfo {
            name: "c".into(),
            snitch: "s".into(),
            partitioner: "p".into(),
            schema_version: "v".into(),
            address: "127.0.0.1".into(),
            storage_port: 7000,
            data_center: "datacenter1".into(),
            release_version: "5.0.4".into(),
            keyspaces: vec![],
        };
        let mut down = node("127.0.0.3", &["3"], 1);
        down.up = false;
        let ring_info = RingInfo {
            nodes: vec![
                node("127.0.0.1", &["1"], 1),
                node("127.0.0.2", &["2"], 1),
                down,
            ],
            effective: true,
            ownership_note: None,
        };
        let text = describecluster(&c, &ring_info);
        assert!(
            text.contains(": [127.0.0.1, 127.0.0.2]\n\t\tUNREACHABLE: [127.0.0.3]\n"),
            "{text}"
        );
        assert!(text.contains("\tLive: 2\n") && text.contains("\tUnreachable: 1\n"));
        assert!(text.contains("\tdatacenter1 #Nodes: 3 #Down: 1\n"));
    }
}
