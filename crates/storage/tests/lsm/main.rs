//! The LSM engine end to end through `Storage`: flushes, recycling, restarts, crashes and
//! compactions under every strategy.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod cleanup;
mod common;
mod compaction;
mod crash;
mod data_dirs;
mod disk_failures;
mod flush;
mod paging;
mod races;
mod read_path;
mod repair_state;
mod replica_reads;
mod scrub;
mod snapshots;
