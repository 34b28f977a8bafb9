//! What the clients asked and what came of it, and the checks over it:
//! - a successful QUORUM read of a partition holds every row written to it at QUORUM or ALL
//!   whose write was acknowledged before the read was sent (quorums intersect), and no row that
//!   was never written there;
//! - at the end, a QUORUM read through every node holds every such acknowledged row.
//!
//! Each write adds its own row (its clustering is the write's id), so no write shadows another
//! whatever the clocks said: a clock jump cannot excuse a missing row.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use types::Consistency;

/// When something happened: the requests run on their nodes' runtimes, whose tokio clocks are
/// not comparable, so events are ordered by a counter (the simulation runs on one thread).
pub type Tick = u64;

/// One request and what came of it.
#[derive(Clone, Debug)]
pub struct Op {
    pub id: u32,
    pub key: u32,
    pub cl: Consistency,
    pub node: usize,
    pub write: bool,
    pub issued: Tick,
    /// When it ended, and the rows a read returned (none for a write), or the error.
    pub done: Option<(Tick, Result<Vec<u32>, String>)>,
}

impl Op {
    fn strong(&self) -> bool {
        matches!(self.cl, Consistency::Quorum | Consistency::All)
    }

    fn acked_at(&self) -> Option<Tick> {
        match &self.done {
            Some((at, Ok(_))) => Some(*at),
            _ => None,
        }
    }

    /// An acknowledged write at QUORUM or ALL.
    fn strong_ack(&self) -> Option<Tick> {
        (self.write && self.strong())
            .then(|| self.acked_at())
            .flatten()
    }
}

#[derive(Clone, Default)]
pub struct History {
    ops: Arc<Mutex<Vec<Op>>>,
    ticks: Arc<AtomicU64>,
}

impl History {
    fn ops(&self) -> std::sync::MutexGuard<'_, Vec<Op>> {
        self.ops.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn tick(&self) -> Tick {
        self.ticks.fetch_add(1, Ordering::SeqCst)
    }

    /// Records a request as sent now; its id.
    pub fn issue(&self, key: u32, cl: Consistency, node: usize, write: bool) -> u32 {
        let mut ops = self.ops();
        let id = ops.len() as u32;
        ops.push(Op {
            id,
            key,
            cl,
            node,
            write,
            issued: self.tick(),
            done: None,
        });
        id
    }

    pub fn finish(&self, id: u32, result: Result<Vec<u32>, String>) {
        if std::env::var_os("HELENUS_SIM_VERBOSE").is_some() {
            eprintln!("op {id}: {result:?}");
        }
        let at = self.tick();
        self.ops()[id as usize].done = Some((at, result));
    }

    /// Whether request `id` ended successfully.
    pub fn acknowledged(&self, id: u32) -> bool {
        let ops = self.ops();
        ops.get(id as usize)
            .is_some_and(|op| op.acked_at().is_some())
    }

    /// How many requests ended how ("write Quorum ok", "read One error", …).
    pub fn outcomes(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for op in self.ops().iter() {
            let kind = if op.write { "write" } else { "read" };
            let end = match &op.done {
                Some((_, Ok(_))) => "ok",
                Some((_, Err(_))) => "error",
                None => "unfinished",
            };
            *counts
                .entry(format!("{kind} {:?} {end}", op.cl))
                .or_default() += 1;
        }
        counts
    }

    /// Every request in the order sent, with its answer (without ticks: see [`History::ticks`]).
    pub fn answers(&self) -> Vec<String> {
        let ops = self.ops();
        let answer = |op: &Op| {
            let kind = if op.write { "write" } else { "read" };
            let done = op.done.as_ref().map(|(_, result)| result);
            format!(
                "op {} {kind} k{} {:?} via node {}: {done:?}",
                op.id, op.key, op.cl, op.node
            )
        };
        ops.iter().map(answer).collect()
    }

    /// When each request was sent and answered, in the order sent.
    pub fn ticks(&self) -> Vec<(Tick, Option<Tick>)> {
        let ops = self.ops();
        ops.iter()
            .map(|op| (op.issued, op.done.as_ref().map(|(at, _)| *at)))
            .collect()
    }

    /// The per-read check of every successful QUORUM read.
    pub fn check_reads(&self) -> Result<(), String> {
        let ops = self.ops();
        for read in ops
            .iter()
            .filter(|op| !op.write && op.cl == Consistency::Quorum)
        {
            let Some((ended, Ok(rows))) = &read.done else {
                continue;
            };
            let rows: BTreeSet<u32> = rows.iter().copied().collect();
            for write in ops.iter().filter(|w| w.write && w.key == read.key) {
                let acked_before = write.strong_ack().is_some_and(|at| at < read.issued);
                if acked_before && !rows.contains(&write.id) {
                    return Err(format!(
                        "op {} (QUORUM read of k{} via node {}) misses row c{} of op {}, \
                         acknowledged at {:?} via node {} before the read began",
                        read.id, read.key, read.node, write.id, write.id, write.cl, write.node
                    ));
                }
            }
            unknown_rows(&ops, read.key, &rows, *ended)
                .map_err(|e| format!("op {} (QUORUM read via node {}): {e}", read.id, read.node))?;
        }
        Ok(())
    }

    /// The final check of partition `key` as node `node` returned it.
    pub fn check_final(&self, key: u32, node: usize, rows: &[u32]) -> Result<(), String> {
        let ops = self.ops();
        let rows: BTreeSet<u32> = rows.iter().copied().collect();
        let acked = ops
            .iter()
            .filter(|w| w.key == key && w.strong_ack().is_some());
        if let Some(lost) = acked.into_iter().find(|w| !rows.contains(&w.id)) {
            return Err(format!(
                "the final QUORUM read of k{key} via node {node} misses row c{} of op {}, \
                 acknowledged at {:?} via node {}",
                lost.id, lost.id, lost.cl, lost.node
            ));
        }
        unknown_rows(&ops, key, &rows, Tick::MAX)
            .map_err(|e| format!("the final read of k{key} via node {node}: {e}"))
    }
}

/// A row no write of partition `key` sent before `by` could have added.
fn unknown_rows(ops: &[Op], key: u32, rows: &BTreeSet<u32>, by: Tick) -> Result<(), String> {
    let written = |id: u32| {
        ops.get(id as usize)
            .is_some_and(|w| w.write && w.key == key && w.issued <= by)
    };
    match rows.iter().find(|id| !written(**id)) {
        Some(id) => Err(format!("row c{id} of k{key} was never written there")),
        None => Ok(()),
    }
}
