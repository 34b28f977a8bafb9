//! The child process of the long mode: fuzzes one target for a while on a thread with a
//! tokio worker's stack, writing each input to a progress file before running it, so the
//! supervisor can save the input that aborted or hung the process. Panics and broken
//! properties are saved here and the run goes on.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::driver::{run_one, Fuzzer, Target};

/// Saved inputs per distinct failure message (the first line: message and place).
const KEEP_PER_FAILURE: usize = 3;

/// The progress file: `[inputs started u64][failures u64][input length u64][input]`,
/// little-endian.
pub struct Progress {
    file: File,
}

pub const PROGRESS_HEADER: usize = 24;

/// What a progress file says.
#[derive(Debug, Default, Clone)]
pub struct ProgressState {
    pub started: u64,
    pub failures: u64,
    pub input: Vec<u8>,
}

impl Progress {
    pub fn create(path: &Path) -> io::Result<Progress> {
        let file = File::create(path)?;
        Ok(Progress { file })
    }

    /// Records that input number `started` is about to run (the input first, then the counts
    /// that make it current).
    pub fn record(&self, started: u64, failures: u64, input: &[u8]) -> io::Result<()> {
        self.file.write_all_at(input, PROGRESS_HEADER as u64)?;
        let mut header = [0u8; PROGRESS_HEADER];
        header[0..8].copy_from_slice(&started.to_le_bytes());
        header[8..16].copy_from_slice(&failures.to_le_bytes());
        header[16..24].copy_from_slice(&(input.len() as u64).to_le_bytes());
        self.file.write_all_at(&header, 0)
    }

    pub fn read(path: &Path) -> ProgressState {
        let Ok(bytes) = fs::read(path) else {
            return ProgressState::default();
        };
        let word = |at: usize| {
            bytes
                .get(at..at + 8)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u64::from_le_bytes)
        };
        let len = word(16) as usize;
        let input = bytes
            .get(PROGRESS_HEADER..PROGRESS_HEADER.saturating_add(len))
            .unwrap_or_default()
            .to_vec();
        ProgressState {
            started: word(0),
            failures: word(8),
            input,
        }
    }
}

/// Where failing inputs go: `<target>-<hash>.bin` with the message in `<target>-<hash>.txt`.
pub fn save_failure(dir: &Path, target: &str, input: &[u8], message: &str) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let stem = format!("{target}-{:016x}", fnv1a(input));
    let path = dir.join(format!("{stem}.bin"));
    fs::write(&path, input)?;
    fs::write(dir.join(format!("{stem}.txt")), format!("{message}\n"))?;
    Ok(path)
}

pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Fuzzes `target` from `seed` for `seconds`, recording progress in `progress` and saving
/// failures under `out`. Runs on a thread with a tokio worker's 2 MiB stack.
pub fn work(target: &'static Target, seed: u64, seconds: f64, progress: &Path, out: &Path) {
    let progress = Progress::create(progress).unwrap_or_else(|e| {
        eprintln!("cannot create {}: {e}", progress.display());
        std::process::exit(2)
    });
    let out = out.to_path_buf();
    types::limits::on_worker_stack(move || fuzz_for(target, seed, seconds, &progress, &out));
}

fn fuzz_for(target: &Target, seed: u64, seconds: f64, progress: &Progress, out: &Path) {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut fuzzer = Fuzzer::new(target, seed);
    let mut failures = 0u64;
    let mut seen: Vec<(String, usize)> = Vec::new();
    let mut started = 0u64;
    while Instant::now() < deadline {
        let input = fuzzer.next_input(started as usize);
        started += 1;
        if let Err(e) = progress.record(started, failures, &input) {
            eprintln!("cannot record progress: {e}");
            std::process::exit(2);
        }
        if let Err(message) = run_one(target, &input) {
            failures += 1;
            keep(&mut seen, out, target.name, &input, &message);
        }
    }
    let _ = progress.record(started, failures, &[]);
}

/// Saves the input unless [`KEEP_PER_FAILURE`] inputs with the same first line are saved.
fn keep(seen: &mut Vec<(String, usize)>, out: &Path, target: &str, input: &[u8], message: &str) {
    let key = message.lines().next().unwrap_or_default().to_string();
    let count = match seen.iter_mut().find(|(k, _)| *k == key) {
        Some((_, count)) => count,
        None => {
            eprintln!("{target}: new failure: {key}");
            seen.push((key, 0));
            &mut seen.last_mut().expect("just pushed").1
        }
    };
    *count += 1;
    if *count <= KEEP_PER_FAILURE {
        if let Err(e) = save_failure(out, target, input, message) {
            eprintln!("cannot save a failing input: {e}");
        }
    }
}
