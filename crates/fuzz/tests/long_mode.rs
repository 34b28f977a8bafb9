//! The long mode survives what a fuzz target can do to its process: a stack overflow aborts
//! the worker and an endless loop stops its progress; either way the supervisor saves the
//! input, restarts the worker and reports it in the summary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

use std::path::{Path, PathBuf};
use std::process::Command;

use fuzz::targets::self_test::{ABORT_TRIGGER, HANG_LEFTOVER, HANG_TRIGGER};

/// Runs the long mode with `out` as its output and `out/tmp` as the temporary directory it
/// is given.
fn long_run(target: &str, out: &Path, extra: &[&str]) -> String {
    let tmp = out.join("tmp");
    std::fs::create_dir_all(&tmp).expect("a temporary directory");
    let output = Command::new(env!("CARGO_BIN_EXE_helenus-fuzz"))
        .env("TMPDIR", &tmp)
        .args(["long", "--duration", "4s", "--out"])
        .arg(out)
        .args(extra)
        .arg(target)
        .output()
        .expect("helenus-fuzz runs");
    assert_eq!(
        output.status.code(),
        Some(1),
        "failures make the exit code 1"
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The summary's columns for `target`: iterations, failures, aborts, hangs.
fn counts(summary: &str, target: &str) -> Vec<u64> {
    let line = summary
        .lines()
        .find(|l| l.starts_with(target))
        .unwrap_or_else(|| panic!("no line for {target} in:\n{summary}"));
    let fields: Vec<&str> = line.split_whitespace().collect();
    [2, 4, 5, 6]
        .iter()
        .map(|i| fields[*i].parse().expect("a count"))
        .collect()
}

/// The saved inputs (`.bin` files) in `dir`.
fn saved(dir: &Path) -> Vec<Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("the output directory")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "bin"))
        .map(|e| std::fs::read(e.path()).expect("a saved input"))
        .collect()
}

#[test]
fn a_stack_overflow_is_saved_and_the_run_goes_on() {
    let out = tempfile::tempdir().expect("tempdir");
    let summary = long_run("self-test-abort", out.path(), &[]);
    let [iterations, _, aborts, _] = counts(&summary, "self-test-abort")[..] else {
        unreachable!()
    };
    assert!(aborts >= 1, "{summary}");
    assert!(
        iterations > aborts,
        "workers were restarted and went on: {summary}"
    );
    let inputs = saved(out.path());
    assert!(!inputs.is_empty());
    assert!(inputs.iter().all(|i| i.first() == Some(&ABORT_TRIGGER)));
    let log = std::fs::read_to_string(out.path().join("self-test-abort.log")).expect("log");
    assert!(log.contains("overflowed its stack"), "{log}");
}

#[test]
fn a_hang_is_saved_and_the_worker_replaced() {
    let out = tempfile::tempdir().expect("tempdir");
    let summary = long_run("self-test-hang", out.path(), &["--hang-secs", "1"]);
    assert!(counts(&summary, "self-test-hang")[3] >= 1, "{summary}");
    let inputs = saved(out.path());
    assert!(!inputs.is_empty());
    assert!(inputs.iter().all(|i| i.first() == Some(&HANG_TRIGGER)));
    let leftovers: Vec<_> = walk(out.path())
        .into_iter()
        .filter(|p| p.ends_with(HANG_LEFTOVER))
        .collect();
    assert_eq!(
        leftovers,
        Vec::<PathBuf>::new(),
        "the killed workers' files are removed"
    );
}

/// Every file under `dir`, recursively.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).expect("a directory").flatten();
    entries
        .flat_map(|e| match e.path().is_dir() {
            true => walk(&e.path()),
            false => vec![e.path()],
        })
        .collect()
}
