//! Fuzzing for every decoder of untrusted bytes: CQL text, native protocol frames and
//! segments, values, cassandra.yaml, SSTables and commit-log segments on disk, internode
//! frames and handshakes, mutations and schema definitions.
//!
//! One driver ([`driver`]) serves every target ([`targets`]). The short mode runs a few
//! hundred inputs per target in `cargo test` (`tests/short.rs`); the long mode
//! (`helenus-fuzz long`, `tests/fuzz/run-long`) runs them for hours in child processes that
//! are restarted when they abort or hang. Inputs come from structured generators and from
//! real seeds (statements from the tests, files the code writes) mutated byte by byte.
//!
//! Why not cargo-fuzz or bolero: cargo-fuzz needs a nightly compiler; bolero runs on stable
//! only with its random engine (no coverage feedback either) and replays corpora without
//! mutating them, and neither survives an abort in the middle of a long run.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test tool: seeds and harness state are built here, not read from untrusted input

pub mod driver;
pub mod long;
pub mod mutate;
pub mod rng;
pub mod targets;
pub mod worker;
