//! A real `helenus server` on loopback for the stress tests, and a way to run
//! `helenus stress` in-process and capture its report.
//!
//! The server binary is `$HELENUS_BIN` if set, else the workspace's `target/debug/helenus`
//! (built with `cargo build -p helenus` when it is missing). Dropping the node kills it.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

fn server_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("HELENUS_BIN") {
        return PathBuf::from(bin);
    }
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.join("target"), PathBuf::from);
    let bin = target.join("debug/helenus");
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "helenus"])
            .current_dir(&workspace)
            .status()
            .expect("run cargo build -p helenus");
        assert!(status.success(), "cargo build -p helenus failed");
    }
    bin
}

pub struct Node {
    pub port: u16,
    _dir: tempfile::TempDir,
    child: Child,
}

impl Node {
    pub fn start() -> Node {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let d = dir.path().display();
        let yaml = format!(
            "cluster_name: 'Test Cluster'\nlisten_address: 127.0.0.1\nrpc_address: 127.0.0.1\n\
             native_transport_port: {port}\ndata_file_directories: [{d}/data]\n\
             commitlog_directory: {d}/commitlog\nadmin_port: {admin}\n",
            admin = free_port()
        );
        let config = dir.path().join("cassandra.yaml");
        std::fs::write(&config, yaml).expect("write config");
        let log = std::fs::File::create(dir.path().join("node.log")).expect("log");
        let child = Command::new(server_binary())
            .arg("server")
            .arg("--config")
            .arg(&config)
            .current_dir(dir.path())
            .stdout(log.try_clone().expect("clone log"))
            .stderr(log)
            .stdin(Stdio::null())
            .spawn()
            .expect("start helenus");
        let node = Node {
            port,
            _dir: dir,
            child,
        };
        node.wait_ready();
        node
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if listening(self.port) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("helenus did not open port {}", self.port);
    }
}

/// Whether a server accepts on `port`. A connection whose two ends are the same address is
/// no answer: polling a free port in the ephemeral range can pick that port as the source and
/// connect the socket to itself (TCP simultaneous open), which once let a test start its
/// client before the server listened.
fn listening(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_ok_and(|s| s.local_addr().ok() != s.peer_addr().ok())
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            let log =
                std::fs::read_to_string(self._dir.path().join("node.log")).unwrap_or_default();
            eprintln!("helenus exited before the test ended ({status}); its output:\n{log}");
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `helenus stress LINE` in-process; returns the exit code and the report.
pub fn stress(line: &str) -> (ExitCode, String) {
    let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    let mut out = Vec::new();
    let code = stress::run_to(args, &mut out);
    (code, String::from_utf8(out).expect("utf-8 report"))
}
