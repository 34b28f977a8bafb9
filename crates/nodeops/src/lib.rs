//! Node operations — a node joining the ring (bootstrap), replacing a dead node, leaving it
//! (decommission) or being removed by another (removenode) — each run as steps, every step an
//! entry of the cluster metadata log that checks, compare-and-set, that the change is still
//! allowed (one topology change at a time, enough nodes left for every replication factor).
//! Between the steps a [`RangeMover`] moves the data of the ranges that change hands; until
//! one is attached the steps run and no data moves. [`StreamMover`] moves it with the
//! streaming service: a joining or replacing node fetches each range it gains from the node
//! giving it up (refused while that node is down: strict consistent range movement) or, for a
//! replacement, from a live replica; a decommissioning node has each new replica pull from it;
//! removenode has each new replica of the removed node's ranges pull from a live survivor.
//!
//! - `mover`: the [`RangeMover`] seam and the [`Transfer`]s handed to it;
//! - `streamer`: [`StreamMover`], the seam over `streaming::Streaming`;
//! - `plan`: pure planning: which ranges move from and to whom, the replication factors a
//!   leaving node must leave room for;
//! - `rings`: the read ring and the future ring of a metadata state;
//! - `ops`: [`NodeOps`], the operations and the node's [`OperationMode`];
//! - `join`: a bootstrap or replacement: the checks before it starts (a live source for each
//!   range, the disk space), the fetch source by source, `nodetool bootstrap resume`;
//! - `received`: the ranges a join has received, kept so that a resumed join skips them;
//! - `room`: whether the data directories have room for what a join would fetch.

mod join;
mod mover;
mod ops;
mod plan;
mod received;
mod rings;
pub mod room;
mod streamer;
pub use rings::testing;

pub use mover::{EstimateFuture, MoveFuture, Purpose, RangeMover, Transfer};
pub use ops::{NodeOps, OperationMode, Settings};
pub use plan::{
    gained_ranges, gains_ranges, lost_ranges, owned_ranges, replication_checks, restored_ranges,
    Rings,
};
pub use rings::{endpoint_of, future_ring_of, ring_of};
pub use streamer::StreamMover;
