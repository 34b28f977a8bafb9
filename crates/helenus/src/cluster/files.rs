//! A node's directory: its cassandra.yaml and cassandra-rackdc.properties, written from the
//! cluster's settings and the node's placement, and the directories the node writes in.

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use config::{Config, RACKDC_FILE};

use super::spec::{ClusterSpec, NodeSpec, Placement};

pub const YAML_FILE: &str = "cassandra.yaml";
/// Directories made in each node's directory (`metadata` is the default `metadata_directory`
/// beside `data`).
const SUBDIRS: [&str; 6] = [
    "data",
    "commitlog",
    "metadata",
    "hints",
    "saved_caches",
    "logs",
];

/// The directory of node `number` in the cluster directory `dir`.
pub fn node_dir(dir: &Path, number: u32) -> PathBuf {
    dir.join(format!("node{number}"))
}

/// Writes a new node's directory and returns the node as the cluster records it.
pub fn create_node(
    cluster: &ClusterSpec,
    placement: &Placement,
    dir: &Path,
    bootstrap: Option<bool>,
) -> Result<NodeSpec, String> {
    let home = node_dir(dir, placement.number);
    if home.exists() {
        return Err(format!("{} already exists", home.display()));
    }
    let yaml = render_yaml(cluster, placement, &home, bootstrap)?;
    let node = describe(placement, &yaml, &home)?;
    for sub in SUBDIRS {
        let path = home.join(sub);
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    }
    write(&home.join(YAML_FILE), &yaml)?;
    write(&home.join(RACKDC_FILE), &render_rackdc(placement))?;
    Ok(node)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The node's CQL and admin endpoints as its configuration sets them.
fn describe(placement: &Placement, yaml: &str, home: &Path) -> Result<NodeSpec, String> {
    let config = load(yaml, home)?;
    let reachable = |ip: IpAddr| {
        if ip.is_unspecified() {
            placement.address
        } else {
            ip
        }
    };
    Ok(NodeSpec {
        number: placement.number,
        address: placement.address,
        dc: placement.dc.clone(),
        rack: placement.rack.clone(),
        native: SocketAddr::new(reachable(config.rpc_address), config.native_transport_port),
        admin: SocketAddr::new(reachable(config.admin_address), config.admin_port),
    })
}

fn load(yaml: &str, base: &Path) -> Result<Config, String> {
    config::load_str(yaml, base)
        .map(|loaded| loaded.config)
        .map_err(|e| format!("the configuration does not load: {e}"))
}

/// A node's cassandra.yaml: the generated settings, less any key the cluster's extra YAML
/// sets, then the extra YAML.
pub fn render_yaml(
    cluster: &ClusterSpec,
    placement: &Placement,
    home: &Path,
    bootstrap: Option<bool>,
) -> Result<String, String> {
    let storage_port = load(&cluster.yaml, home)
        .map_err(|e| format!("--yaml: {e}"))?
        .storage_port;
    let mut entries = generated(cluster, placement, home, storage_port);
    if let Some(bootstrap) = bootstrap {
        entries.push(("auto_bootstrap", format!(" {bootstrap}")));
    }
    let overridden = top_level_keys(&cluster.yaml);
    let mut text = format!(
        "# Written by `helenus cluster` for node {}.\n",
        placement.number
    );
    for (key, value) in entries {
        if !overridden.iter().any(|k| k == key) {
            let _ = writeln!(text, "{key}:{value}");
        }
    }
    if !cluster.yaml.trim().is_empty() {
        let _ = writeln!(text, "# --yaml\n{}", cluster.yaml.trim_end());
    }
    Ok(text)
}

/// Each generated key with its value as written after the colon (a scalar after a space, or
/// an indented block).
fn generated(
    cluster: &ClusterSpec,
    placement: &Placement,
    home: &Path,
    storage_port: u16,
) -> Vec<(&'static str, String)> {
    let address = placement.address.to_string();
    let path = |sub: &str| format!(" {}", quote(&home.join(sub).display().to_string()));
    let seeds: Vec<String> = cluster
        .seeds
        .iter()
        .map(|ip| SocketAddr::new(*ip, storage_port).to_string())
        .collect();
    vec![
        ("cluster_name", format!(" {}", quote(&cluster.name))),
        ("num_tokens", format!(" {}", cluster.num_tokens)),
        ("listen_address", format!(" {address}")),
        ("rpc_address", format!(" {address}")),
        ("admin_address", format!(" {address}")),
        ("storage_port", " 7000".into()),
        ("native_transport_port", " 9042".into()),
        ("admin_port", " 7199".into()),
        ("endpoint_snitch", format!(" {}", cluster.snitch())),
        ("seed_provider", seed_provider(&seeds.join(","))),
        ("data_file_directories", format!("\n  -{}", path("data"))),
        ("commitlog_directory", path("commitlog")),
        ("hints_directory", path("hints")),
        ("saved_caches_directory", path("saved_caches")),
    ]
}

fn seed_provider(seeds: &str) -> String {
    format!(
        "\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    parameters:\n      \
         - seeds: \"{seeds}\""
    )
}

/// A YAML single-quoted scalar.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The top-level keys of a YAML text (lines that start with a key and a colon).
fn top_level_keys(yaml: &str) -> Vec<String> {
    yaml.lines()
        .filter(|line| !line.starts_with([' ', '\t', '#', '-']))
        .filter_map(|line| line.split_once(':'))
        .map(|(key, _)| key.trim().trim_matches(['\'', '"']).to_string())
        .filter(|key| !key.is_empty())
        .collect()
}

/// A node's cassandra-rackdc.properties (read only under GossipingPropertyFileSnitch, written
/// for every node so that switching the snitch in the yaml keeps the same places).
pub fn render_rackdc(placement: &Placement) -> String {
    format!(
        "# Read by GossipingPropertyFileSnitch.\ndc={}\nrack={}\n",
        placement.dc, placement.rack
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use config::Snitch;

    use crate::cluster::args::Shape;
    use crate::cluster::spec::Plan;

    fn plan(shape: Shape) -> Plan {
        Plan::new(&shape).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn yaml_of_a_three_rack_cluster() {
        let plan = plan(Shape {
            racks: Some(3),
            address: Some("127.0.10.1".parse().unwrap()),
            name: Some("it's local".into()),
            ..Shape::default()
        });
        let yaml = render_yaml(
            &plan.cluster,
            &plan.placements[1],
            Path::new("/c/node2"),
            None,
        );
        let yaml = yaml.unwrap();
        let expected = "# Written by `helenus cluster` for node 2.\n\
            cluster_name: 'it''s local'\nnum_tokens: 16\n\
            listen_address: 127.0.10.2\nrpc_address: 127.0.10.2\nadmin_address: 127.0.10.2\n\
            storage_port: 7000\nnative_transport_port: 9042\nadmin_port: 7199\n\
            endpoint_snitch: GossipingPropertyFileSnitch\n\
            seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    \
            parameters:\n      - seeds: \"127.0.10.1:7000,127.0.10.2:7000,127.0.10.3:7000\"\n\
            data_file_directories:\n  - '/c/node2/data'\n\
            commitlog_directory: '/c/node2/commitlog'\nhints_directory: '/c/node2/hints'\n\
            saved_caches_directory: '/c/node2/saved_caches'\n";
        assert_eq!(yaml, expected);
        assert_eq!(
            render_rackdc(&plan.placements[1]),
            "# Read by GossipingPropertyFileSnitch.\ndc=dc1\nrack=rack2\n"
        );
    }

    #[test]
    fn generated_yaml_loads_with_the_cluster_settings() {
        let plan = plan(Shape {
            nodes: Some(2),
            seeds: Some(1),
            num_tokens: Some(4),
            ..Shape::default()
        });
        let yaml = render_yaml(
            &plan.cluster,
            &plan.placements[1],
            Path::new("/c/node2"),
            Some(false),
        );
        let config = load(&yaml.unwrap(), Path::new("/")).unwrap();
        assert_eq!(config.endpoint_snitch, Snitch::Simple);
        assert_eq!(config.num_tokens, 4);
        assert_eq!(config.listen_address.to_string(), "127.0.0.2");
        assert_eq!(config.admin_address.to_string(), "127.0.0.2");
        assert_eq!(
            config.seed_addresses(),
            vec!["127.0.0.1:7000".parse().unwrap()]
        );
        assert_eq!(
            config.data_file_directories,
            vec![PathBuf::from("/c/node2/data")]
        );
    }

    #[test]
    fn extra_yaml_replaces_generated_keys() {
        let plan = plan(Shape {
            nodes: Some(1),
            yaml: Some("native_transport_port: 9142\nstorage_port: 7010\n# note: x\n".into()),
            ..Shape::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let node = create_node(&plan.cluster, &plan.placements[0], dir.path(), None).unwrap();
        assert_eq!(node.native.to_string(), "127.0.0.1:9142");
        assert_eq!(node.admin.to_string(), "127.0.0.1:7199");
        let yaml = std::fs::read_to_string(node_dir(dir.path(), 1).join(YAML_FILE)).unwrap();
        assert_eq!(yaml.matches("native_transport_port").count(), 1);
        assert!(yaml.contains("seeds: \"127.0.0.1:7010\""), "{yaml}");
        for sub in SUBDIRS {
            assert!(node_dir(dir.path(), 1).join(sub).is_dir(), "{sub}");
        }
        let again = create_node(&plan.cluster, &plan.placements[0], dir.path(), None);
        assert!(again.unwrap_err().ends_with("already exists"));
    }

    #[test]
    fn bad_extra_yaml_is_refused_before_anything_is_written() {
        let plan = plan(Shape {
            yaml: Some("no_such_key: 1\n".into()),
            ..Shape::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let err = create_node(&plan.cluster, &plan.placements[0], dir.path(), None).unwrap_err();
        assert_eq!(
            err,
            "--yaml: the configuration does not load: Invalid yaml. Please remove properties \
             [no_such_key] from your cassandra.yaml"
        );
        assert!(!node_dir(dir.path(), 1).exists());
    }

    #[test]
    fn top_level_keys_skip_nested_lines_and_comments() {
        let keys = top_level_keys("a: 1\n  b: 2\n# c: 3\nseed_provider:\n  - x: y\n'q': 1\n");
        assert_eq!(keys, ["a", "seed_provider", "q"]);
    }
}
