//! Start and stop a real `helenus server` process on loopback for integration tests.
//!
//! The node writes a `cassandra.yaml` into its data directory (a free native port, a free
//! admin port, data and commit log directories inside the directory), runs the binary Cargo
//! built for this test, and waits until the native port accepts connections. Dropping the
//! node kills the process (so a panicking test leaves nothing behind) and, while panicking,
//! prints the tail of the node's log.

#![allow(dead_code)]

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A port that was free on 127.0.0.1 a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind 127.0.0.1:0")
        .local_addr()
        .expect("local_addr")
        .port()
}

pub struct Node {
    pub dir: PathBuf,
    pub port: u16,
    child: Option<Child>,
}

impl Node {
    /// A node (not yet started) that keeps its files under `dir`.
    pub fn new(dir: &Path) -> Node {
        Node {
            dir: dir.to_path_buf(),
            port: free_port(),
            child: None,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join("node.log")
    }

    fn write_config(&self) -> PathBuf {
        let d = self.dir.display();
        let yaml = format!(
            "cluster_name: 'Test Cluster'\n\
             listen_address: 127.0.0.1\n\
             rpc_address: 127.0.0.1\n\
             native_transport_port: {port}\n\
             data_file_directories: [{d}/data]\n\
             commitlog_directory: {d}/commitlog\n\
             admin_port: {admin}\n",
            port = self.port,
            admin = free_port(),
        );
        let path = self.dir.join("cassandra.yaml");
        std::fs::write(&path, yaml).expect("write cassandra.yaml");
        path
    }

    /// Start the process and wait until the native port accepts connections.
    pub fn start(&mut self) {
        assert!(self.child.is_none(), "node already running");
        let config = self.write_config();
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("open node.log");
        let child = Command::new(env!("CARGO_BIN_EXE_helenus"))
            .arg("server")
            .arg("--config")
            .arg(&config)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("dup log"))
            .stderr(log)
            .spawn()
            .expect("spawn helenus");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().expect("try_wait") {
                self.child = None;
                panic!(
                    "helenus exited with {status} at start:\n{}",
                    self.log_tail()
                );
            }
            // A socket connected to itself (its source port picked equal to the free port
            // it polls, TCP simultaneous open) is not a listening server.
            if TcpStream::connect_timeout(&self.addr(), Duration::from_millis(300))
                .is_ok_and(|s| s.local_addr().ok() != s.peer_addr().ok())
            {
                return;
            }
            if Instant::now() > deadline {
                panic!(
                    "helenus did not open {} within 30 s:\n{}",
                    self.addr(),
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Send SIGTERM and wait for the process to exit; returns its exit status.
    pub fn stop(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("node not running");
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "helenus did not exit within 20 s of SIGTERM:\n{}",
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The last few KB of the node's log.
    pub fn log_tail(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = File::open(self.log_path()) {
            let mut bytes = Vec::new();
            let _ = f.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        let keep = 6000;
        if text.len() > keep {
            let mut cut = text.len() - keep;
            while !text.is_char_boundary(cut) {
                cut += 1;
            }
            text = text[cut..].to_string();
        }
        text
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!(
                "---- helenus log ({}) ----\n{}",
                self.dir.display(),
                self.log_tail()
            );
        }
    }
}
