//! `system_views.thread_pools`: the node's pools of work as `nodetool tpstats` lists them.
//! Only the compaction pool has a concurrency limit (`concurrent_compactors`); the others
//! report none.
use std::sync::Arc;

use query::virtual_tables::{row, text, NodeView, ThreadPool, VirtualTable};
use schema::Row as ValueRow;
use storage::Storage;
use types::{CqlResult, Value};

const COMPACTION_POOL: &str = "CompactionExecutor";

/// Reads the node's pools, and the compaction limit of its storage.
pub(super) struct ThreadPools(pub Arc<Storage>);

impl VirtualTable for ThreadPools {
    fn name(&self) -> (&'static str, &'static str) {
        ("system_views", "thread_pools")
    }

    fn rows(&self, node: &NodeView) -> CqlResult<Vec<ValueRow>> {
        let Some(pools) = &node.sources.thread_pools else {
            return Ok(Vec::new());
        };
        let compactors = self.0.concurrent_compactors();
        Ok(pools()
            .iter()
            .map(|p| {
                let limit = (p.name == COMPACTION_POOL).then_some(compactors as u64);
                pool_row(p, limit)
            })
            .collect())
    }
}

fn int(v: u64) -> Option<Value> {
    Some(Value::Int(i32::try_from(v).unwrap_or(i32::MAX)))
}

fn bigint(v: u64) -> Option<Value> {
    Some(Value::Bigint(i64::try_from(v).unwrap_or(i64::MAX)))
}

fn pool_row(pool: &ThreadPool, limit: Option<u64>) -> ValueRow {
    row(vec![
        ("name", text(&pool.name)),
        ("active_tasks", int(pool.active)),
        ("active_tasks_limit", limit.and_then(int)),
        ("blocked_tasks", bigint(pool.blocked)),
        ("blocked_tasks_all_time", bigint(pool.blocked_all_time)),
        ("completed_tasks", bigint(pool.completed)),
        ("pending_tasks", int(pool.pending)),
    ])
}
