//! The node as a library: [`node::Node`] starts one Helenus node from its inputs (the network
//! between nodes, messaging's timings, the clock and the configuration), for `helenus server`
//! and for the whole-cluster simulation (`tests/cluster_sim.rs`), so that both start a node in
//! the same order.
mod clock_skew;
pub mod decommissioned;
mod hints;
mod internode;
mod join;
mod membership;
pub mod node;
mod reconnect;
