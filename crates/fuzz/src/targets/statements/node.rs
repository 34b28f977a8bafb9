//! A node of the fuzzing thread's own: a `Storage` in a temporary directory, a coordinator
//! and a `QueryProcessor` on a one-worker runtime, with the fuzz keyspace created. It is
//! started afresh every [`INPUTS_PER_NODE`] inputs, so what the statements dropped or
//! truncated comes back and the data stays small, and removed (directory and all) when the
//! thread ends.

use std::cell::RefCell;
use std::sync::Arc;

use query::QueryProcessor;
use tokio::runtime::Runtime;
use types::request::QueryOptions;
use types::result::Outcome;
use types::CqlResult;

use super::schema;
use crate::driver;

/// Inputs one node serves before it is replaced by a fresh one.
pub const INPUTS_PER_NODE: usize = 1000;
/// Inputs a node serves after its schema was altered or dropped, at most.
const INPUTS_AFTER_CHANGE: usize = 50;

pub struct Node {
    processor: Arc<QueryProcessor>,
    runtime: Runtime,
    inputs: usize,
    /// The schema changes the inputs made, in order: what a failure may need to happen again.
    changes: Vec<String>,
    /// Dropped last, once the storage has stopped.
    _dir: tempfile::TempDir,
}

thread_local! {
    static NODE: RefCell<Option<Node>> = const { RefCell::new(None) };
}

/// Runs `work` on the calling thread's node, starting one first if it has none or its last
/// has served its inputs.
pub fn with<T>(work: impl FnOnce(&mut Node) -> T) -> T {
    NODE.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|n| n.inputs >= INPUTS_PER_NODE) {
            *slot = None;
            *slot = Some(start());
        }
        let node = slot.as_mut().expect("a node was just started");
        node.inputs += 1;
        work(node)
    })
}

impl Node {
    pub fn query(&self, text: &str, options: QueryOptions) -> CqlResult<Outcome> {
        let query = self.processor.query(Some(schema::KEYSPACE), text, options);
        self.runtime.block_on(query)
    }

    /// The input `statement` changed the schema; if it `took` something away the generator
    /// writes for, a fresh node takes over soon.
    pub fn schema_changed(&mut self, statement: &str, took: bool) {
        self.changes.push(statement.to_string());
        if took {
            self.inputs = self.inputs.max(INPUTS_PER_NODE - INPUTS_AFTER_CHANGE);
        }
    }

    /// The schema changes inputs made on this node, one a line.
    pub fn changes(&self) -> String {
        self.changes.join("\n")
    }
}

/// Starts a node; failing to is a broken machine (no disk, no threads), not a finding.
fn start() -> Node {
    let dir = tempfile::tempdir().expect("a temporary directory for the node");
    let owner = std::thread::current().id();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .on_thread_start(move || driver::report_panics_to(owner))
        .build()
        .expect("a runtime");
    let processor = runtime
        .block_on(system::testing::local_processor(dir.path()))
        .expect("the query processor starts");
    let node = Node {
        processor,
        runtime,
        inputs: 0,
        changes: Vec::new(),
        _dir: dir,
    };
    for statement in schema::definitions() {
        node.query(&statement, QueryOptions::default())
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
    node
}
