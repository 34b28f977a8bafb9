//! A `helenus cluster` of real processes on the test's own loopback addresses, the faults
//! the test injects into it (kill -9 and restart, SIGSTOP and SIGCONT, and a node cut off from
//! the others by nftables rules in a table of the test's own), and its topology changes (a node
//! added with bootstrap, a node decommissioned).

use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use tempfile::TempDir;

pub struct ProcessCluster {
    dir: TempDir,
    first: Ipv4Addr,
    /// Nodes added, decommissioned ones included: they keep their numbers.
    nodes: AtomicU8,
    partition: Partition,
}

impl ProcessCluster {
    /// Creates and starts `nodes` nodes on `first` and the addresses after it.
    pub fn start(nodes: u8, first: Ipv4Addr) -> ProcessCluster {
        let cluster = ProcessCluster {
            dir: tempfile::tempdir().expect("cluster dir"),
            first,
            nodes: AtomicU8::new(nodes),
            partition: Partition::new(),
        };
        cluster.run(&[
            "start",
            "--nodes",
            &nodes.to_string(),
            "--address",
            &first.to_string(),
        ]);
        cluster
    }

    pub fn nodes(&self) -> u8 {
        self.nodes.load(Ordering::SeqCst)
    }

    /// Adds a node that bootstraps (joins with its ranges streamed from the others) and waits
    /// until it answers CQL; returns its number.
    pub fn add(&self) -> u8 {
        self.run(&["add"]);
        self.nodes.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Decommissions node `n` as an operator would: runs `nodetool decommission` again after
    /// a failure (a stream to a node killed meanwhile fails it, as Cassandra's) until it
    /// succeeds, then stops the node (a decommissioned node's process stays up until stopped,
    /// as Cassandra's). Panics past `timeout`; returns the attempts.
    pub fn decommission(&self, n: u8, timeout: Duration) -> u32 {
        let deadline = Instant::now() + timeout;
        let mut attempts = 1;
        while let Err(why) = self.nodetool(n, "decommission", deadline) {
            eprintln!("decommission of node {n}, attempt {attempts}: {why}");
            attempts += 1;
            std::thread::sleep(Duration::from_secs(2));
        }
        self.run(&["stop", &n.to_string()]);
        attempts
    }

    /// `nodetool -h <node n> <command>`: its error output when it fails; panics when it runs
    /// past `deadline`.
    fn nodetool(&self, n: u8, command: &str, deadline: Instant) -> Result<(), String> {
        let address = self.address(n).to_string();
        let mut child = Command::new(env!("CARGO_BIN_EXE_helenus"))
            .args(["nodetool", "-h", &address, command])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run nodetool");
        while child.try_wait().expect("wait for nodetool").is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("nodetool {command} on {address} still running at the deadline");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let output = child.wait_with_output().expect("nodetool output");
        match output.status.success() {
            true => Ok(()),
            false => Err(String::from_utf8_lossy(&output.stderr).into_owned()),
        }
    }

    /// The listen address of node `n` (1-based).
    pub fn address(&self, n: u8) -> Ipv4Addr {
        let [a, b, c, d] = self.first.octets();
        Ipv4Addr::new(a, b, c, d + n - 1)
    }

    pub fn native(&self, n: u8) -> SocketAddr {
        SocketAddr::from((self.address(n), 9042))
    }

    /// Applies `fault` to node `n`.
    pub fn inject(&self, fault: Fault, n: u8) {
        match fault {
            Fault::Kill => self.run(&["kill", &n.to_string()]),
            Fault::Pause => self.run(&["pause", &n.to_string()]),
            Fault::Isolate => {
                let others: Vec<Ipv4Addr> = (1..=self.nodes())
                    .filter(|&m| m != n)
                    .map(|m| self.address(m))
                    .collect();
                self.partition.cut(self.address(n), &others);
            }
        }
    }

    /// Undoes `fault` on node `n`: restarts it (waiting until it answers CQL), resumes it or
    /// heals the partition.
    pub fn repair(&self, fault: Fault, n: u8) {
        match fault {
            Fault::Kill => self.run(&["start", &n.to_string()]),
            Fault::Pause => self.run(&["resume", &n.to_string()]),
            Fault::Isolate => self.partition.heal(),
        }
    }

    fn run(&self, args: &[&str]) {
        let output = self.command(args);
        assert!(
            output.status.success(),
            "helenus cluster {args:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn command(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_helenus"))
            .arg("cluster")
            .arg("--dir")
            .arg(self.dir.path())
            // A restart replays the commit log; a loaded machine may take minutes.
            .args(["--timeout", "300"])
            .args(args)
            .output()
            .expect("run helenus cluster")
    }
}

impl Drop for ProcessCluster {
    fn drop(&mut self) {
        self.partition.heal();
        if std::thread::panicking() {
            let status = self.command(&["status"]);
            eprintln!("{}", String::from_utf8_lossy(&status.stdout));
            for n in 1..=self.nodes() {
                let log = self.dir.path().join(format!("node{n}/logs/output.log"));
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(30).collect();
                eprintln!("---- {} ----", log.display());
                tail.iter().rev().for_each(|line| eprintln!("{line}"));
            }
        }
        let _ = self.command(&["clear"]);
    }
}

/// What a fault does to one node, until it is repaired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// SIGKILL; repaired by starting the node again on its data.
    Kill,
    /// SIGSTOP: it keeps its sockets and answers nothing; repaired by SIGCONT.
    Pause,
    /// Every packet between it and the other nodes dropped, both ways; its clients still
    /// reach it.
    Isolate,
}

/// An nftables table of this process's own dropping packets between addresses.
struct Partition {
    table: String,
}

impl Partition {
    fn new() -> Partition {
        Partition {
            table: format!("helenus_lwt_{}", std::process::id()),
        }
    }

    fn cut(&self, alone: Ipv4Addr, others: &[Ipv4Addr]) {
        self.heal();
        let chain = "{ type filter hook input priority 0; policy accept; }";
        assert!(nft(&["add", "table", "inet", &self.table]));
        assert!(nft(&["add", "chain", "inet", &self.table, "input", chain]));
        for other in others {
            for (from, to) in [(alone, *other), (*other, alone)] {
                let (from, to) = (from.to_string(), to.to_string());
                let rule = ["ip", "saddr", &from, "ip", "daddr", &to, "drop"];
                let args = [&["add", "rule", "inet", &self.table, "input"][..], &rule].concat();
                assert!(nft(&args), "nft {args:?}");
            }
        }
    }

    fn heal(&self) {
        nft(&["delete", "table", "inet", &self.table]);
    }
}

/// Whether this machine lets the test make nftables tables (root and `nft`).
pub fn partitions_usable() -> bool {
    let probe = format!("helenus_lwt_probe_{}", std::process::id());
    let made = nft(&["add", "table", "inet", &probe]);
    nft(&["delete", "table", "inet", &probe]);
    made
}

/// Runs `nft`; whether it succeeded.
fn nft(args: &[&str]) -> bool {
    Command::new("nft")
        .args(args)
        .output()
        .is_ok_and(|output| output.status.success())
}
