//! A node's process: `helenus server --config <node>/cassandra.yaml` started in its own process
//! group (a Ctrl-C in the terminal does not reach it), found again through its pid file, told
//! apart from an unrelated process that reused the pid by its command line, and signalled.
#![allow(unsafe_code)] // kill(2) signals the cluster's node processes

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use std::os::unix::process::CommandExt;

use super::files::YAML_FILE;

const PID_FILE: &str = "helenus.pid";
/// Where the node's stdout and stderr go (`system.log` is beside it).
pub const OUTPUT_LOG: &str = "logs/output.log";
const POLL: Duration = Duration::from_millis(50);

/// What a node's process is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Running(u32),
    /// Stopped by SIGSTOP.
    Paused(u32),
    Stopped,
}

impl State {
    pub fn pid(self) -> Option<u32> {
        match self {
            State::Running(pid) | State::Paused(pid) => Some(pid),
            State::Stopped => None,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            State::Running(_) => "running",
            State::Paused(_) => "paused",
            State::Stopped => "stopped",
        }
    }
}

/// The signals the cluster tool sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Term,
    Kill,
    Stop,
    Cont,
}

impl Signal {
    fn number(self) -> libc::c_int {
        match self {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
            Signal::Stop => libc::SIGSTOP,
            Signal::Cont => libc::SIGCONT,
        }
    }
}

/// The state of the node whose directory is `home`.
pub fn state(home: &Path) -> State {
    let Some(pid) = read_pid(home) else {
        return State::Stopped;
    };
    if !runs_node(pid, &home.join(YAML_FILE)) {
        return State::Stopped;
    }
    match process_state(pid) {
        Some('T' | 't') => State::Paused(pid),
        Some('Z' | 'X') | None => State::Stopped,
        Some(_) => State::Running(pid),
    }
}

fn read_pid(home: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(home.join(PID_FILE)).ok()?;
    text.trim().parse().ok()
}

/// Whether process `pid` runs `server --config <config>`.
fn runs_node(pid: u32, config: &Path) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let wanted = [
        &b"server"[..],
        b"--config",
        config.as_os_str().as_encoded_bytes(),
    ];
    args.windows(3).any(|w| w == wanted)
}

/// The state letter of `/proc/<pid>/stat` (after the command name, which may hold spaces).
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after) = stat.rsplit_once(')')?;
    after.trim_start().chars().next()
}

/// Starts the node (the current executable as `helenus server`) and records its pid.
pub fn spawn(home: &Path) -> Result<Child, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find helenus itself: {e}"))?;
    let log_path = home.join(OUTPUT_LOG);
    let log = File::options()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
    let err_log = log
        .try_clone()
        .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
    let child = Command::new(exe)
        .arg("server")
        .arg("--config")
        .arg(home.join(YAML_FILE))
        .current_dir(home)
        .env("CASSANDRA_LOG_DIR", home.join("logs"))
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err_log)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start a node in {}: {e}", home.display()))?;
    let pid_path = home.join(PID_FILE);
    std::fs::write(&pid_path, format!("{}\n", child.id()))
        .map_err(|e| format!("cannot write {}: {e}", pid_path.display()))?;
    Ok(child)
}

/// Sends `signal` to `pid`.
pub fn send(pid: u32, signal: Signal) -> Result<(), String> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| format!("bad pid {pid}"))?;
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    if unsafe { libc::kill(pid, signal.number()) } == 0 {
        Ok(())
    } else {
        Err(format!(
            "cannot signal process {pid}: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// Waits until the node's state satisfies `done`; false on timeout.
pub fn wait_for(home: &Path, timeout: Duration, done: impl Fn(State) -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done(state(home)) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

/// Forgets the pid of a stopped node.
pub fn forget(home: &Path) {
    let _ = std::fs::remove_file(home.join(PID_FILE));
}

/// The last `lines` lines of the node's output log, for error messages.
pub fn output_tail(home: &Path, lines: usize) -> (PathBuf, String) {
    let path = home.join(OUTPUT_LOG);
    let text = std::fs::read(&path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    let tail = all[all.len().saturating_sub(lines)..].join("\n");
    (path, tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_stale_pid_file_means_stopped() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(state(dir.path()), State::Stopped);
        std::fs::write(dir.path().join(PID_FILE), "not a pid\n").unwrap();
        assert_eq!(state(dir.path()), State::Stopped);
        // This test process is alive but is not `helenus server --config <dir>/cassandra.yaml`.
        std::fs::write(dir.path().join(PID_FILE), std::process::id().to_string()).unwrap();
        assert_eq!(state(dir.path()), State::Stopped);
    }

    #[test]
    fn states_of_a_process_with_a_node_command_line() {
        let dir = tempfile::tempdir().unwrap();
        // A stand-in whose command line holds a node's: `sh -c '...' server --config <yaml>`.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30; true", "server", "--config"])
            .arg(dir.path().join(YAML_FILE))
            .spawn()
            .unwrap();
        let pid = child.id();
        std::fs::write(dir.path().join(PID_FILE), pid.to_string()).unwrap();
        let reaches = |signal, expected| {
            send(pid, signal).is_ok()
                && wait_for(dir.path(), Duration::from_secs(5), |s| s == expected)
        };
        // Right after spawn, /proc may still show the command line of before the exec.
        let running = wait_for(dir.path(), Duration::from_secs(5), |s| {
            s == State::Running(pid)
        });
        let paused = reaches(Signal::Stop, State::Paused(pid));
        let resumed = reaches(Signal::Cont, State::Running(pid));
        let killed = reaches(Signal::Kill, State::Stopped);
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            running,
            "the pid file's process runs `server --config <yaml>`"
        );
        assert!(paused && resumed, "SIGSTOP pauses, SIGCONT resumes");
        assert!(killed, "a killed process, even a zombie, is stopped");
        assert_eq!(state(dir.path()), State::Stopped, "reaped");
        assert!(send(pid, Signal::Cont).is_err());
    }

    #[test]
    fn output_tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("logs")).unwrap();
        std::fs::write(dir.path().join(OUTPUT_LOG), "a\nb\nc\n").unwrap();
        assert_eq!(output_tail(dir.path(), 2).1, "b\nc");
        assert_eq!(output_tail(Path::new("/nonexistent"), 2).1, "");
    }
}
