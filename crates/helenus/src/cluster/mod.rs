//! `helenus cluster`: a local cluster in one command, the way people use `ccm`. Each node is a
//! `helenus server` process on its own loopback address (same ports on each), with its own
//! directory under `--dir` (cassandra.yaml, cassandra-rackdc.properties, data, commit log,
//! hints, logs, pid file); `cluster.json` records the cluster.

mod args;
mod control;
mod files;
mod probe;
mod process;
mod report;
mod spec;
mod store;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

pub use args::ClusterArgs;
use args::{Action, Shape};
use process::Signal;
use spec::NodeSpec;
use store::Cluster;

/// Runs `helenus cluster ...`.
pub fn run(args: ClusterArgs) -> ExitCode {
    match execute(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("helenus cluster: {e}");
            ExitCode::FAILURE
        }
    }
}

fn execute(args: ClusterArgs) -> Result<(), String> {
    let dir = absolute(&args.dir)?;
    let timeout = Duration::from_secs(args.timeout);
    let tool = tool_name(&args.dir);
    match args.action {
        Action::Start { node: None, shape } => start_cluster(&dir, &shape, timeout, &tool),
        Action::Create { shape } => {
            if Cluster::exists(&dir) {
                return Err(format!("a cluster already exists in {}", dir.display()));
            }
            create(&dir, &shape).map(|_| ())
        }
        Action::Start {
            node: Some(which),
            shape,
        } => {
            if shape.is_set() {
                return Err("start NODE takes no cluster options (--nodes, --racks, ...)".into());
            }
            on_node(&dir, &which, |c, n| control::start(c, &[n], timeout))
        }
        Action::Stop { node: None } => on_all(&dir, |c, nodes| {
            control::stop(c, nodes, Signal::Term, timeout)
        }),
        Action::Stop { node: Some(which) } => on_node(&dir, &which, |c, n| {
            control::stop(c, &[n], Signal::Term, timeout)
        }),
        Action::Kill { node } => on_node(&dir, &node, |c, n| {
            control::stop(c, &[n], Signal::Kill, timeout)
        }),
        Action::Pause { node } => on_node(&dir, &node, |c, n| {
            control::pause_or_resume(c, n, Signal::Stop)
        }),
        Action::Resume { node } => on_node(&dir, &node, |c, n| {
            control::pause_or_resume(c, n, Signal::Cont)
        }),
        Action::Status => status(&dir),
        Action::Clear => clear(&dir, timeout),
        Action::Add {
            dc,
            rack,
            no_bootstrap,
        } => add(&dir, dc, rack, no_bootstrap, timeout, &tool),
    }
}

/// `./cluster` made absolute (node configurations hold absolute paths).
fn absolute(dir: &Path) -> Result<PathBuf, String> {
    std::path::absolute(dir).map_err(|e| format!("--dir {}: {e}", dir.display()))
}

/// The command to show in hints: `helenus cluster`, with `--dir` unless it is the default.
fn tool_name(dir: &Path) -> String {
    if dir == Path::new("cluster") {
        "helenus cluster".into()
    } else {
        format!("helenus cluster --dir {}", dir.display())
    }
}

fn on_all(
    dir: &Path,
    act: impl Fn(&Cluster, &[&NodeSpec]) -> Result<(), String>,
) -> Result<(), String> {
    let cluster = Cluster::open(dir)?;
    let nodes: Vec<&NodeSpec> = cluster.spec.nodes.iter().collect();
    act(&cluster, &nodes)
}

fn on_node(
    dir: &Path,
    which: &str,
    act: impl Fn(&Cluster, &NodeSpec) -> Result<(), String>,
) -> Result<(), String> {
    let cluster = Cluster::open(dir)?;
    let node = cluster.spec.find(which)?;
    act(&cluster, node)
}

/// Creates the cluster if `dir` holds none, then starts every stopped node.
fn start_cluster(dir: &Path, shape: &Shape, timeout: Duration, tool: &str) -> Result<(), String> {
    let cluster = if Cluster::exists(dir) {
        if shape.is_set() {
            return Err(format!(
                "a cluster already exists in {}: start it without cluster options, or \
                 `{tool} clear` it first",
                dir.display()
            ));
        }
        Cluster::open(dir)?
    } else {
        create(dir, shape)?
    };
    let nodes: Vec<&NodeSpec> = cluster.spec.nodes.iter().collect();
    control::start(&cluster, &nodes, timeout)?;
    print!("{}", report::connect_hints(&cluster, tool));
    Ok(())
}

fn create(dir: &Path, shape: &Shape) -> Result<Cluster, String> {
    let cluster = Cluster::create(dir, shape)?;
    println!(
        "Created cluster '{}' in {}: {} nodes, {}",
        cluster.spec.name,
        dir.display(),
        cluster.spec.nodes.len(),
        cluster.spec.snitch()
    );
    Ok(cluster)
}

fn status(dir: &Path) -> Result<(), String> {
    let cluster = Cluster::open(dir)?;
    let statuses = report::gather(&cluster);
    print!("{}", report::status_table(&cluster, &statuses));
    Ok(())
}

/// Kills every node and deletes the directory; nothing to do when there is no cluster.
fn clear(dir: &Path, timeout: Duration) -> Result<(), String> {
    if !dir.exists() {
        println!("No cluster in {}", dir.display());
        return Ok(());
    }
    let cluster = Cluster::open(dir)?;
    let nodes: Vec<&NodeSpec> = cluster.spec.nodes.iter().collect();
    control::stop(&cluster, &nodes, Signal::Kill, timeout)?;
    cluster.delete()?;
    println!("Deleted {}", dir.display());
    Ok(())
}

fn add(
    dir: &Path,
    dc: Option<String>,
    rack: Option<String>,
    no_bootstrap: bool,
    timeout: Duration,
    tool: &str,
) -> Result<(), String> {
    let mut cluster = Cluster::open(dir)?;
    let bootstrap = no_bootstrap.then_some(false);
    let node = cluster.add(dc.as_deref(), rack.as_deref(), bootstrap)?;
    println!(
        "Added {} on {} in {}/{}",
        node.name(),
        node.address,
        node.dc,
        node.rack
    );
    control::start(&cluster, &[&node], timeout)?;
    print!("{}", report::connect_hints(&cluster, tool));
    Ok(())
}
