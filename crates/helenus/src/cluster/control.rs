//! Starting nodes (seeds first) and waiting until they answer CQL; stopping, killing, pausing
//! and resuming them.

use std::net::TcpStream;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use admin::types::{CmsInfo, RingInfo};

use super::probe::answers_cql;
use super::process::{self, Signal, State};
use super::spec::NodeSpec;
use super::store::Cluster;
use crate::nodetool::client::Client;

const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
const RETRY: Duration = Duration::from_millis(100);
/// How long a SIGKILLed, SIGSTOPped or SIGCONTed process may take to show it.
const SIGNAL_SEEN: Duration = Duration::from_secs(10);
const LOG_LINES: usize = 20;

fn label(node: &NodeSpec) -> String {
    format!("{} ({})", node.name(), node.address)
}

/// Starts the stopped nodes among `nodes`: the seeds, then the others, each group waiting
/// until all of its nodes answer CQL.
pub fn start(cluster: &Cluster, nodes: &[&NodeSpec], timeout: Duration) -> Result<(), String> {
    let (seeds, others): (Vec<&NodeSpec>, Vec<&NodeSpec>) = nodes
        .iter()
        .partition(|n| cluster.spec.seeds.contains(&n.address));
    for group in [seeds, others] {
        start_group(cluster, &group, timeout)?;
    }
    let deadline = Instant::now() + timeout;
    await_metadata_group(cluster, deadline)?;
    await_all_up(cluster, deadline)
}

/// The nodes whose process runs (not stopped, not paused).
fn running_nodes(cluster: &Cluster) -> Vec<&NodeSpec> {
    cluster
        .spec
        .nodes
        .iter()
        .filter(|n| matches!(process::state(&cluster.home(n)), State::Running(_)))
        .collect()
}

/// Waits until every running node's gossip sees every running node up, as ccm's
/// `wait_other_notice`: a client is then served at any level the running nodes can meet,
/// whichever node it asks. The running nodes are looked up again at each try: a node stopped
/// meanwhile (once decommissioned, say) is no longer waited for.
fn await_all_up(cluster: &Cluster, deadline: Instant) -> Result<(), String> {
    loop {
        let running = running_nodes(cluster);
        let unseen: Vec<String> = running
            .iter()
            .flat_map(|observer| not_seen_up(observer, &running))
            .collect();
        if unseen.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "gossip did not see every node up: {}",
                unseen.join("; ")
            ));
        }
        std::thread::sleep(RETRY);
    }
}

/// "A does not see B up" for each running node B that `observer`'s ring does not show up.
fn not_seen_up(observer: &NodeSpec, running: &[&NodeSpec]) -> Vec<String> {
    let client = Client::new(
        &observer.admin.ip().to_string(),
        observer.admin.port(),
        None,
    );
    let ring: Result<RingInfo, String> = client.get("/v1/ring");
    let up: Vec<String> = match ring {
        Ok(ring) => ring
            .nodes
            .into_iter()
            .filter(|n| n.up)
            .map(|n| n.address)
            .collect(),
        Err(e) => return vec![format!("{}: {e}", label(observer))],
    };
    running
        .iter()
        .filter(|n| !up.contains(&n.address.to_string()))
        .map(|n| format!("{} does not see {} up", label(observer), label(n)))
        .collect()
}

/// Waits until the cluster metadata group counts every running node as a member and has all
/// the voters it will have (an odd number, at most seven): until then, losing the one voter of
/// a group still forming would leave the cluster unable to change its schema.
fn await_metadata_group(cluster: &Cluster, deadline: Instant) -> Result<(), String> {
    let running = running_nodes(cluster);
    let Some(first) = running.first() else {
        return Ok(());
    };
    let client = Client::new(&first.admin.ip().to_string(), first.admin.port(), None);
    loop {
        let group: Result<CmsInfo, String> = client.get("/v1/cms");
        match group {
            Ok(g) if settled(&g, &running_nodes(cluster)) => {
                println!(
                    "metadata group: {} voters, epoch {}",
                    g.voters.len(),
                    g.epoch
                );
                return Ok(());
            }
            Ok(_) | Err(_) if Instant::now() < deadline => std::thread::sleep(RETRY),
            Ok(g) => {
                return Err(format!(
                    "the cluster metadata group did not settle: voters {:?}, learners {:?}",
                    g.voters, g.learners
                ))
            }
            Err(e) => return Err(format!("cannot read the cluster metadata group: {e}")),
        }
    }
}

/// Every running node is a member, and no learner waits to become a voter.
fn settled(group: &CmsInfo, running: &[&NodeSpec]) -> bool {
    let members: Vec<&str> = group
        .voters
        .iter()
        .chain(&group.learners)
        .map(|m| m.rsplit_once(':').map_or(m.as_str(), |(ip, _)| ip))
        .collect();
    let all_in = running
        .iter()
        .all(|n| members.contains(&n.address.to_string().as_str()));
    all_in && group.voters.len() == metadata::settled_voters(members.len())
}

fn start_group(cluster: &Cluster, group: &[&NodeSpec], timeout: Duration) -> Result<(), String> {
    let mut launched = Vec::new();
    for node in group {
        let home = cluster.home(node);
        match process::state(&home) {
            State::Stopped => {
                refuse_taken_ports(node)?;
                launched.push((*node, process::spawn(&home)?));
            }
            state => println!("{} is already {}", label(node), state.word()),
        }
    }
    let deadline = Instant::now() + timeout;
    for (node, child) in &mut launched {
        await_cql(node, &cluster.home(node), child, deadline, timeout)?;
        println!(
            "{} is up: CQL on {}, pid {}",
            label(node),
            node.native,
            child.id()
        );
    }
    Ok(())
}

/// A stopped node's ports must be free: otherwise another process (a node of another cluster,
/// say) would answer in its place.
fn refuse_taken_ports(node: &NodeSpec) -> Result<(), String> {
    for addr in [node.native, node.admin] {
        if TcpStream::connect_timeout(&addr, PROBE_TIMEOUT).is_ok() {
            return Err(format!(
                "cannot start {}: {addr} is already in use by another process",
                label(node)
            ));
        }
    }
    Ok(())
}

fn await_cql(
    node: &NodeSpec,
    home: &Path,
    child: &mut Child,
    deadline: Instant,
    timeout: Duration,
) -> Result<(), String> {
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            process::forget(home);
            let (log, tail) = process::output_tail(home, LOG_LINES);
            return Err(format!(
                "{} exited ({status}) before answering CQL; the end of {}:\n{tail}",
                label(node),
                log.display()
            ));
        }
        if answers_cql(node.native, PROBE_TIMEOUT) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "{} did not answer CQL on {} within {} s (it is still running); see {}",
                label(node),
                node.native,
                timeout.as_secs(),
                home.join(process::OUTPUT_LOG).display()
            ));
        }
        std::thread::sleep(RETRY);
    }
}

/// Stops the running or paused nodes among `nodes` with SIGTERM (SIGKILL after `timeout`) or
/// SIGKILL, and waits until they are gone.
pub fn stop(
    cluster: &Cluster,
    nodes: &[&NodeSpec],
    signal: Signal,
    timeout: Duration,
) -> Result<(), String> {
    let mut signalled = Vec::new();
    for node in nodes {
        let home = cluster.home(node);
        match process::state(&home) {
            State::Stopped => {
                process::forget(&home);
                println!("{} is not running", label(node));
            }
            State::Running(pid) => {
                process::send(pid, signal)?;
                signalled.push(*node);
            }
            State::Paused(pid) => {
                process::send(pid, signal)?;
                process::send(pid, Signal::Cont)?;
                signalled.push(*node);
            }
        }
    }
    let deadline = Instant::now() + timeout;
    for node in signalled {
        await_exit(&cluster.home(node), node, deadline)?;
        let done = if signal == Signal::Kill {
            "killed"
        } else {
            "stopped"
        };
        println!("{} {done}", label(node));
    }
    Ok(())
}

fn await_exit(home: &Path, node: &NodeSpec, deadline: Instant) -> Result<(), String> {
    let stopped = |s| s == State::Stopped;
    let left = deadline.saturating_duration_since(Instant::now());
    if !process::wait_for(home, left, stopped) {
        if let Some(pid) = process::state(home).pid() {
            eprintln!("{} did not stop in time: killing it", label(node));
            process::send(pid, Signal::Kill)?;
        }
        if !process::wait_for(home, SIGNAL_SEEN, stopped) {
            return Err(format!("{} does not die", label(node)));
        }
    }
    process::forget(home);
    Ok(())
}

/// Pauses (SIGSTOP) a running node or resumes (SIGCONT) a paused one.
pub fn pause_or_resume(cluster: &Cluster, node: &NodeSpec, signal: Signal) -> Result<(), String> {
    let home = cluster.home(node);
    let (pid, wanted): (u32, fn(u32) -> State) = match (process::state(&home), signal) {
        (State::Stopped, _) => return Err(format!("{} is not running", label(node))),
        (State::Running(pid), Signal::Stop) => (pid, State::Paused),
        (State::Paused(pid), Signal::Cont) => (pid, State::Running),
        (state, _) => {
            println!("{} is already {}", label(node), state.word());
            return Ok(());
        }
    };
    process::send(pid, signal)?;
    if !process::wait_for(&home, SIGNAL_SEEN, |s| s == wanted(pid)) {
        return Err(format!(
            "{} did not become {}",
            label(node),
            wanted(pid).word()
        ));
    }
    println!("{} {}", label(node), wanted(pid).word());
    Ok(())
}
