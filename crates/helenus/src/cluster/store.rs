//! A cluster directory: `cluster.json` and the node directories, created, read, grown by one
//! node and deleted.

use std::path::{Path, PathBuf};

use super::args::Shape;
use super::files::{create_node, node_dir};
use super::spec::{ClusterSpec, NodeSpec, Plan};

const CLUSTER_FILE: &str = "cluster.json";

/// A cluster and its directory (absolute).
#[derive(Debug)]
pub struct Cluster {
    pub dir: PathBuf,
    pub spec: ClusterSpec,
}

impl Cluster {
    /// Whether `dir` holds a cluster.
    pub fn exists(dir: &Path) -> bool {
        dir.join(CLUSTER_FILE).is_file()
    }

    /// Reads the cluster in `dir`.
    pub fn open(dir: &Path) -> Result<Cluster, String> {
        let path = dir.join(CLUSTER_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "no cluster in {} (no {CLUSTER_FILE}); `helenus cluster start --nodes 3` creates one",
                    dir.display()
                )
            } else {
                format!("cannot read {}: {e}", path.display())
            }
        })?;
        let spec = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a cluster description: {e}", path.display()))?;
        Ok(Cluster {
            dir: dir.to_path_buf(),
            spec,
        })
    }

    /// Creates a cluster in `dir`, which must be absent or empty.
    pub fn create(dir: &Path, shape: &Shape) -> Result<Cluster, String> {
        let plan = Plan::new(shape)?;
        refuse_used_dir(dir)?;
        let existed = dir.exists();
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let mut cluster = Cluster {
            dir: dir.to_path_buf(),
            spec: plan.cluster,
        };
        let nodes: Result<Vec<NodeSpec>, String> = plan
            .placements
            .iter()
            .map(|placement| create_node(&cluster.spec, placement, dir, None))
            .collect();
        match nodes {
            Ok(nodes) => cluster.spec.nodes = nodes,
            Err(e) => {
                if existed {
                    for placement in &plan.placements {
                        let _ = std::fs::remove_dir_all(node_dir(dir, placement.number));
                    }
                } else {
                    let _ = std::fs::remove_dir_all(dir);
                }
                return Err(e);
            }
        }
        cluster.save()?;
        Ok(cluster)
    }

    /// Adds a node on the next address; `bootstrap` sets its `auto_bootstrap`.
    pub fn add(
        &mut self,
        dc: Option<&str>,
        rack: Option<&str>,
        bootstrap: Option<bool>,
    ) -> Result<NodeSpec, String> {
        let placement = self.spec.next_placement(dc, rack)?;
        let node = create_node(&self.spec, &placement, &self.dir, bootstrap)?;
        self.spec.nodes.push(node.clone());
        self.save()?;
        Ok(node)
    }

    /// Writes the file whole under another name and renames it over the old one, so a
    /// `helenus cluster` command reading it meanwhile (a restart while a node is added) sees
    /// the old description or the new one, never half of one.
    pub fn save(&self) -> Result<(), String> {
        let path = self.dir.join(CLUSTER_FILE);
        let text = serde_json::to_string_pretty(&self.spec)
            .map_err(|e| format!("cannot describe the cluster: {e}"))?;
        let partial = path.with_extension("json.partial");
        std::fs::write(&partial, text + "\n")
            .and_then(|()| std::fs::rename(&partial, &path))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// The directory of `node`.
    pub fn home(&self, node: &NodeSpec) -> PathBuf {
        node_dir(&self.dir, node.number)
    }

    /// Deletes the cluster's directory (its nodes must be stopped).
    pub fn delete(self) -> Result<(), String> {
        std::fs::remove_dir_all(&self.dir)
            .map_err(|e| format!("cannot delete {}: {e}", self.dir.display()))
    }
}

fn refuse_used_dir(dir: &Path) -> Result<(), String> {
    let used = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some());
    if used {
        Err(format!(
            "{} is not empty and holds no {CLUSTER_FILE}: choose another --dir",
            dir.display()
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_clusters_read_back_and_grow() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("c");
        let shape = Shape {
            nodes: Some(2),
            racks: Some(2),
            address: Some("127.0.7.1".parse().unwrap()),
            ..Shape::default()
        };
        let created = Cluster::create(&dir, &shape).unwrap();
        assert!(Cluster::exists(&dir));
        let mut opened = Cluster::open(&dir).unwrap();
        assert_eq!(opened.spec, created.spec);
        let added = opened.add(None, None, Some(false)).unwrap();
        assert_eq!(
            (added.number, added.address.to_string()),
            (3, "127.0.7.3".into())
        );
        assert_eq!(added.rack, "rack1");
        let yaml = std::fs::read_to_string(opened.home(&added).join("cassandra.yaml")).unwrap();
        assert!(yaml.contains("auto_bootstrap: false\n"));
        assert_eq!(Cluster::open(&dir).unwrap().spec.nodes.len(), 3);
        opened.delete().unwrap();
        assert!(!dir.exists());
    }

    #[test]
    fn used_directories_and_missing_clusters_are_refused() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("precious"), "x").unwrap();
        let err = Cluster::create(root.path(), &Shape::default()).unwrap_err();
        assert!(err.ends_with("is not empty and holds no cluster.json: choose another --dir"));
        assert!(root.path().join("precious").exists());
        let err = Cluster::open(root.path()).err().unwrap();
        assert!(err.starts_with("no cluster in "), "{err}");
    }

    #[test]
    fn a_failed_creation_leaves_nothing() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("c");
        let shape = Shape {
            yaml: Some("num_tokens: many\n".into()),
            ..Shape::default()
        };
        assert!(Cluster::create(&dir, &shape).is_err());
        assert!(!dir.exists());
    }
}
