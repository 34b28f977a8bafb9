//! `helenus cluster` command line: the actions and the options that shape a new cluster.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `helenus cluster [--dir DIR] ACTION`.
#[derive(Args, Debug)]
pub struct ClusterArgs {
    /// The cluster's directory: `cluster.json` and one `node<i>/` per node.
    #[arg(long, global = true, default_value = "cluster")]
    pub dir: PathBuf,
    /// Seconds to wait for a node to answer CQL (start) or to exit (stop).
    #[arg(long, global = true, default_value_t = 60)]
    pub timeout: u64,
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Subcommand, Debug)]
pub enum Action {
    /// Without NODE: create the cluster if `--dir` holds none, then start every stopped node
    /// (seeds first) and wait until each answers CQL. With NODE: start that node.
    Start {
        /// A node's number (`2`, `node2`) or address (`127.0.0.2`).
        node: Option<String>,
        #[command(flatten)]
        shape: Shape,
    },
    /// Create the cluster's files without starting any node (as `ccm create` without `-s`).
    Create {
        #[command(flatten)]
        shape: Shape,
    },
    /// Without NODE: stop every node (SIGTERM, then wait). With NODE: stop that node.
    Stop { node: Option<String> },
    /// Each node's number, address, data center, rack, pid, state and whether CQL answers.
    Status,
    /// Kill every node (SIGKILL) and delete the cluster's directory.
    Clear,
    /// SIGKILL a node.
    Kill { node: String },
    /// SIGSTOP a node (it keeps its sockets but answers nothing).
    Pause { node: String },
    /// SIGCONT a paused node.
    Resume { node: String },
    /// Add a node on the next address and start it.
    Add {
        /// Its data center (default: the one with the fewest nodes).
        #[arg(long)]
        dc: Option<String>,
        /// Its rack (default: the rack of its data center with the fewest nodes).
        #[arg(long)]
        rack: Option<String>,
        /// Write `auto_bootstrap: false` in its cassandra.yaml.
        #[arg(long)]
        no_bootstrap: bool,
    },
}

/// Options of a new cluster; refused when the cluster already exists.
#[derive(Args, Debug, Default, PartialEq)]
pub struct Shape {
    /// Number of nodes (default 3).
    #[arg(long)]
    pub nodes: Option<u32>,
    /// Racks per data center, assigned round-robin (default 1).
    #[arg(long)]
    pub racks: Option<u32>,
    /// Data centers, each a block of consecutive nodes (default 1).
    #[arg(long)]
    pub datacenters: Option<u32>,
    /// The first node's address; the others follow it (default 127.0.0.1).
    #[arg(long)]
    pub address: Option<IpAddr>,
    /// `num_tokens` of each node (default 16).
    #[arg(long)]
    pub num_tokens: Option<u32>,
    /// How many of the first nodes are seeds (default: up to 3).
    #[arg(long)]
    pub seeds: Option<u32>,
    /// `cluster_name` (default `Test Cluster`).
    #[arg(long)]
    pub name: Option<String>,
    /// Extra cassandra.yaml lines for every node; a key set here replaces the generated one.
    #[arg(long)]
    pub yaml: Option<String>,
}

impl Shape {
    /// Whether any option was given.
    pub fn is_set(&self) -> bool {
        *self != Shape::default()
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        cluster: ClusterArgs,
    }

    fn parse(words: &[&str]) -> Result<ClusterArgs, String> {
        let argv = std::iter::once("cluster").chain(words.iter().copied());
        Cli::try_parse_from(argv)
            .map(|cli| cli.cluster)
            .map_err(|e| e.kind().to_string())
    }

    #[test]
    fn start_with_every_shape_option() {
        let args = parse(&[
            "start",
            "--nodes",
            "6",
            "--racks",
            "3",
            "--datacenters",
            "2",
            "--address",
            "127.0.10.1",
            "--dir",
            "/tmp/c",
            "--num-tokens",
            "8",
            "--seeds",
            "2",
            "--yaml",
            "auto_snapshot: false",
        ])
        .unwrap();
        assert_eq!(args.dir, PathBuf::from("/tmp/c"));
        let Action::Start { node, shape } = args.action else {
            panic!("not start");
        };
        assert_eq!(node, None);
        assert_eq!(
            shape,
            Shape {
                nodes: Some(6),
                racks: Some(3),
                datacenters: Some(2),
                address: Some("127.0.10.1".parse().unwrap()),
                num_tokens: Some(8),
                seeds: Some(2),
                name: None,
                yaml: Some("auto_snapshot: false".into()),
            }
        );
    }

    #[test]
    fn defaults_and_dir_before_the_action() {
        let args = parse(&["--dir", "x", "status"]).unwrap();
        assert_eq!((args.dir, args.timeout), (PathBuf::from("x"), 60));
        assert!(matches!(args.action, Action::Status));
        let args = parse(&["start"]).unwrap();
        assert_eq!(args.dir, PathBuf::from("cluster"));
        assert!(matches!(args.action, Action::Start { node: None, shape } if !shape.is_set()));
    }

    #[test]
    fn node_actions_take_a_node() {
        for action in ["kill", "pause", "resume"] {
            assert!(parse(&[action]).is_err(), "{action} without NODE");
            assert!(parse(&[action, "2"]).is_ok());
        }
        let args = parse(&["stop", "127.0.0.2"]).unwrap();
        assert!(matches!(args.action, Action::Stop { node: Some(n) } if n == "127.0.0.2"));
        let args = parse(&["create", "--nodes", "5"]).unwrap();
        assert!(matches!(args.action, Action::Create { shape } if shape.nodes == Some(5)));
        let args = parse(&["start", "node3"]).unwrap();
        assert!(matches!(args.action, Action::Start { node: Some(n), .. } if n == "node3"));
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(parse(&["start", "--nodes", "three"]).is_err());
        assert!(parse(&["start", "--address", "localhost"]).is_err());
        assert!(parse(&["explode"]).is_err());
        let args = parse(&["add", "--dc", "dc2", "--no-bootstrap"]).unwrap();
        assert!(matches!(
            args.action,
            Action::Add { dc: Some(d), rack: None, no_bootstrap: true } if d == "dc2"
        ));
    }
}
