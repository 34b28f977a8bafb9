//! What `helenus cluster` prints: the status table and how to connect to a started cluster.

use std::time::Duration;

use super::probe::answers_cql;
use super::process::{self, State};
use super::spec::NodeSpec;
use super::store::Cluster;

const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// One node's line in the status table.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeStatus {
    pub node: NodeSpec,
    pub state: State,
    /// `None` when the node is stopped (not probed).
    pub cql: Option<bool>,
}

/// Each node's state, and for running or paused nodes whether CQL answers (probed in parallel).
pub fn gather(cluster: &Cluster) -> Vec<NodeStatus> {
    std::thread::scope(|scope| {
        let probes: Vec<_> = cluster
            .spec
            .nodes
            .iter()
            .map(|node| scope.spawn(move || status_of(cluster, node)))
            .collect();
        probes
            .into_iter()
            .zip(&cluster.spec.nodes)
            .map(|(probe, node)| {
                probe.join().unwrap_or_else(|_| NodeStatus {
                    node: node.clone(),
                    state: State::Stopped,
                    cql: None,
                })
            })
            .collect()
    })
}

fn status_of(cluster: &Cluster, node: &NodeSpec) -> NodeStatus {
    let state = process::state(&cluster.home(node));
    let cql = state.pid().map(|_| answers_cql(node.native, PROBE_TIMEOUT));
    NodeStatus {
        node: node.clone(),
        state,
        cql,
    }
}

/// The status table.
pub fn status_table(cluster: &Cluster, statuses: &[NodeStatus]) -> String {
    let spec = &cluster.spec;
    let mut rows = vec![["Node", "Address", "DC", "Rack", "PID", "State", "CQL"].map(String::from)];
    for s in statuses {
        rows.push([
            s.node.name(),
            s.node.address.to_string(),
            s.node.dc.clone(),
            s.node.rack.clone(),
            s.state.pid().map_or("-".into(), |p| p.to_string()),
            s.state.word().into(),
            match s.cql {
                None => "-".into(),
                Some(true) => format!("up ({})", s.node.native),
                Some(false) => format!("down ({})", s.node.native),
            },
        ]);
    }
    let mut out = format!(
        "Cluster '{}' in {}: {} nodes, {}\n",
        spec.name,
        cluster.dir.display(),
        spec.nodes.len(),
        spec.snitch()
    );
    out.push_str(&columns(&rows));
    out
}

/// Rows aligned in columns two spaces apart.
fn columns<const N: usize>(rows: &[[String; N]]) -> String {
    let text = crate::text::padded(rows, "  ");
    text.lines()
        .map(|line| format!("{}\n", line.trim_end()))
        .collect()
}

/// How to reach the cluster and manage it; `tool` is the command prefix to show
/// (`helenus cluster`, with `--dir` when it is not the default).
pub fn connect_hints(cluster: &Cluster, tool: &str) -> String {
    let nodes = &cluster.spec.nodes;
    let Some(first) = nodes.first() else {
        return String::new();
    };
    let contact: Vec<String> = nodes.iter().map(|n| n.native.to_string()).collect();
    let port = if first.admin.port() == 7199 {
        String::new()
    } else {
        format!(" -p {}", first.admin.port())
    };
    format!(
        "\nConnect:\n  cqlsh {} {}\n  driver contact points: {}\n  \
         helenus nodetool -h {}{port} status\n\
         Manage:\n  {tool} status | stop | start | clear\n  \
         {tool} kill|stop|start|pause|resume NODE    (NODE: 1..{} or an address)\n  \
         {tool} add\n\
         Logs: {}/node<i>/logs/system.log\n",
        first.native.ip(),
        first.native.port(),
        contact.join(", "),
        first.admin.ip(),
        nodes.len(),
        cluster.dir.display(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::args::Shape;

    fn cluster(dir: &std::path::Path) -> Cluster {
        Cluster::create(
            dir,
            &Shape {
                nodes: Some(2),
                racks: Some(2),
                address: Some("127.0.7.1".parse().unwrap()),
                ..Shape::default()
            },
        )
        .unwrap()
    }

    #[test]
    fn status_of_stopped_nodes() {
        let root = tempfile::tempdir().unwrap();
        let cluster = cluster(&root.path().join("c"));
        let statuses = gather(&cluster);
        assert!(statuses
            .iter()
            .all(|s| s.state == State::Stopped && s.cql.is_none()));
        let table = status_table(&cluster, &statuses);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("Cluster 'Test Cluster' in "));
        assert!(lines[0].ends_with("/c: 2 nodes, GossipingPropertyFileSnitch"));
        assert_eq!(lines[1], "Node   Address    DC   Rack   PID  State    CQL");
        assert_eq!(lines[2], "node1  127.0.7.1  dc1  rack1  -    stopped  -");
        assert_eq!(lines[3], "node2  127.0.7.2  dc1  rack2  -    stopped  -");
    }

    #[test]
    fn hints_name_the_first_node_and_every_contact_point() {
        let root = tempfile::tempdir().unwrap();
        let cluster = cluster(&root.path().join("c"));
        let hints = connect_hints(&cluster, "helenus cluster --dir c");
        assert!(hints.contains("\n  cqlsh 127.0.7.1 9042\n"), "{hints}");
        assert!(hints.contains("driver contact points: 127.0.7.1:9042, 127.0.7.2:9042\n"));
        assert!(hints.contains("helenus nodetool -h 127.0.7.1 status\n"));
        assert!(hints.contains("helenus cluster --dir c kill|stop|start|pause|resume NODE"));
    }
}
