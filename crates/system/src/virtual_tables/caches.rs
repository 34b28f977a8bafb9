//! `system_views.caches`: the node's caches. Helenus has the key cache (`keys`) and, unless
//! disabled, the chunk cache (`chunks`, Cassandra's row name for `file_cache_size`); it has no
//! row or counter cache, so those rows are absent. The "recent" rates are the mean rates since
//! the node started.
use std::sync::Arc;

use query::virtual_tables::{per_second, row, text, NodeView, VirtualTable};
use schema::Row as ValueRow;
use storage::{CacheStats, Storage};
use types::{CqlResult, Value};

/// Reads the caches of the node's storage.
pub(super) struct Caches(pub Arc<Storage>);

impl VirtualTable for Caches {
    fn name(&self) -> (&'static str, &'static str) {
        ("system_views", "caches")
    }

    fn rows(&self, node: &NodeView) -> CqlResult<Vec<ValueRow>> {
        let storage = &self.0;
        let chunks = storage.chunk_cache_stats();
        // In key order, as the table is read: `chunks`, then `keys`.
        let mut rows = Vec::with_capacity(2);
        if chunks.capacity_bytes > 0 {
            rows.push(cache_row("chunks", &chunks, node.uptime_seconds));
        }
        rows.push(cache_row(
            "keys",
            &storage.key_cache_stats(),
            node.uptime_seconds,
        ));
        Ok(rows)
    }
}

/// One cache's row.
fn cache_row(name: &str, stats: &CacheStats, uptime_seconds: f64) -> ValueRow {
    let requests = stats.hits + stats.misses;
    let hit_ratio = if requests == 0 {
        f64::NAN
    } else {
        stats.hits as f64 / requests as f64
    };
    let bigint = |v: u64| Some(Value::Bigint(i64::try_from(v).unwrap_or(i64::MAX)));
    let rate = |v: u64| bigint(per_second(v, uptime_seconds).round() as u64);
    row(vec![
        ("name", text(name)),
        ("capacity_bytes", bigint(stats.capacity_bytes)),
        (
            "entry_count",
            Some(Value::Int(i32::try_from(stats.entries).unwrap_or(i32::MAX))),
        ),
        ("hit_count", bigint(stats.hits)),
        ("hit_ratio", Some(Value::Double(hit_ratio))),
        ("recent_hit_rate_per_second", rate(stats.hits)),
        ("recent_request_rate_per_second", rate(requests)),
        ("request_count", bigint(requests)),
        ("size_bytes", bigint(stats.size_bytes)),
    ])
}
