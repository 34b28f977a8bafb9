//! `tpstats`, `gcstats`, `drain` and `stopdaemon`.

use admin::types::{DroppedMessages, GcStats, PoolStats};

use super::client::Client;
use super::format::{java_double, TableBuilder};
use super::{no_args, node_error, Output};

pub fn run(client: &Client, command: &str, args: &[String]) -> Output {
    no_args(args)?;
    match command {
        "tpstats" => {
            let pools: Vec<PoolStats> = client.get("/v1/tpstats").map_err(node_error)?;
            let dropped: Vec<DroppedMessages> =
                client.get("/v1/tpstats/dropped").map_err(node_error)?;
            Ok(tpstats(&pools, &dropped))
        }
        "gcstats" => Ok(gcstats(&client.get("/v1/gcstats").map_err(node_error)?)),
        "drain" => {
            let _: serde_json::Value = client
                .post("/v1/drain", &serde_json::json!({}))
                .map_err(node_error)?;
            Ok(String::new())
        }
        _ => {
            let _: serde_json::Value = client
                .post("/v1/stopdaemon", &serde_json::json!({}))
                .map_err(node_error)?;
            Ok(String::new())
        }
    }
}

/// Cassandra's `TpStatsPrinter`: the pools, then per verb the messages dropped and the 50th,
/// 95th, 99th percentile and maximum of the time messages waited for their handler, in
/// microseconds as Java prints a double (0.0 for a verb never received, as Cassandra).
pub fn tpstats(pools: &[PoolStats], dropped: &[DroppedMessages]) -> String {
    let mut table = TableBuilder::new(" ");
    table.add([
        "Pool Name",
        "Active",
        "Pending",
        "Completed",
        "Blocked",
        "All time blocked",
    ]);
    for p in pools {
        table.add([
            p.name.clone(),
            p.active.to_string(),
            p.pending.to_string(),
            p.completed.to_string(),
            p.blocked.to_string(),
            p.all_time_blocked.to_string(),
        ]);
    }
    let mut messages = TableBuilder::new(" ");
    messages.add([
        "Message type",
        "Dropped    ",
        "50%     ",
        "95%     ",
        "99%     ",
        "Max",
    ]);
    for d in dropped {
        let w = d.queue_wait_micros;
        let micros = |v: u64| java_double(v as f64);
        messages.add([
            d.message_type.clone(),
            d.dropped.to_string(),
            micros(w.p50),
            micros(w.p95),
            micros(w.p99),
            micros(w.max),
        ]);
    }
    format!(
        "{}\nLatencies waiting in queue (micros) per dropped message types\n{}",
        table.render(),
        messages.render()
    )
}

/// Cassandra's `GcStatsPrinter` columns.
pub fn gcstats(s: &GcStats) -> String {
    format!(
        "{:>20}{:>20}{:>20}{:>20}{:>20}{:>20}{:>25}\n{:>20}{:>20}{:>20}{:>20}{:>20}{:>20}{:>25}\n",
        "Interval (ms)",
        "Max GC Elapsed (ms)",
        "Total GC Elapsed (ms)",
        "Stdev GC Elapsed (ms)",
        "GC Reclaimed (MB)",
        "Collections",
        "Direct Memory Bytes",
        s.interval_ms,
        s.max_gc_elapsed_ms,
        s.total_gc_elapsed_ms,
        s.stdev_gc_elapsed_ms,
        s.gc_reclaimed_mb,
        s.collections,
        s.direct_memory_bytes,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use admin::types::QueueWaitMicros;

    #[test]
    fn gcstats_layout() {
        // matches Cassandra 5.0.4 (`refcass nodetool gcstats`)
        let s = GcStats {
            interval_ms: 3_218_543,
            max_gc_elapsed_ms: 64,
            total_gc_elapsed_ms: 353,
            stdev_gc_elapsed_ms: 16,
            gc_reclaimed_mb: 10_451_050_320,
            collections: 12,
            direct_memory_bytes: -1,
            note: String::new(),
        };
        assert_eq!(
            gcstats(&s),
            "       Interval (ms) Max GC Elapsed (ms)Total GC Elapsed (ms)Stdev GC Elapsed (ms)   GC Reclaimed (MB)         Collections      Direct Memory Bytes\n             3218543                  64                 353                  16         10451050320                  12                       -1\n"
        );
    }

    #[test]
    fn tpstats_layout() {
        // matches Cassandra 5.0.4 (`refcass nodetool tpstats`) for the pools Helenus has
        let pool = PoolStats {
            name: "MutationStage".into(),
            active: 0,
            pending: 0,
            completed: 1091,
            blocked: 0,
            all_time_blocked: 0,
        };
        let dropped = |message_type: &str, dropped, p50| DroppedMessages {
            message_type: message_type.into(),
            dropped,
            queue_wait_micros: QueueWaitMicros {
                p50,
                p95: p50 * 2,
                p99: p50 * 4,
                max: p50 * 8,
            },
        };
        let text = tpstats(
            &[pool],
            &[dropped("MUTATION_REQ", 12, 642), dropped("READ_REQ", 0, 0)],
        );
        assert!(text.starts_with("Pool Name     Active Pending Completed Blocked All time blocked\nMutationStage 0      0       1091      0       0               \n\nLatencies waiting in queue (micros) per dropped message types\n"));
        // Cassandra 5.0's TpStatsPrinter: header cells padded, Java's doubles, 0.0 when empty.
        assert!(text.ends_with(concat!(
            "Message type Dropped     50%      95%      99%      Max   \n",
            "MUTATION_REQ 12          642.0    1284.0   2568.0   5136.0\n",
            "READ_REQ     0           0.0      0.0      0.0      0.0   \n",
        )));
    }
}
