//! `system.size_estimates` and `system.table_estimates`: every user table's partitions and
//! mean partition size per primary token range of this node, recorded as Cassandra's
//! SizeEstimatesRecorder records them (every five minutes, and on `nodetool
//! refreshsizeestimates`). A wrapping range is split at the minimum token; a keyspace's old
//! estimates are deleted just before its new ones are written. Both of Cassandra's range
//! types, `primary` and `local_primary`, hold this node's primary ranges.
use coordinator::Coordinator;
use mutation::{TableId, TokenRange};
use schema::{Row as ValueRow, Schema, TableMetadata};
use storage::{SizeEstimates, Storage};
use types::{CqlResult, Value};

use crate::storage_error;
use mutation::clock::unique_micros;
use schema::value_rows;

/// How often Cassandra records the estimates (`cassandra.size_recorder_interval`), and how
/// long after start it first does.
pub const INTERVAL: std::time::Duration = std::time::Duration::from_secs(300);
pub const FIRST_DELAY: std::time::Duration = std::time::Duration::from_secs(30);

/// Records the estimates of every user table.
pub async fn record(coord: &Coordinator, storage: &Storage, schema: &Schema) -> CqlResult<()> {
    let ranges = primary_ranges(coord);
    let (Some(sizes), Some(tables)) = (
        schema.table("system", "size_estimates"),
        schema.table("system", "table_estimates"),
    ) else {
        return Ok(());
    };
    let user = schema
        .keyspaces()
        .values()
        .filter(|k| !schema::is_system_keyspace(&k.name) && !schema::is_virtual_keyspace(&k.name));
    for keyspace in user {
        let ts = unique_micros();
        let mut mutations = Vec::new();
        for target in [sizes, tables] {
            let key = [bytes::Bytes::copy_from_slice(keyspace.name.as_bytes())];
            let now = (ts / 1_000_000) as i32;
            mutations.push(value_rows::delete_partition(target, &key, ts - 1, now));
        }
        for table in keyspace.tables.values() {
            let Ok(estimates) = storage.size_estimates(TableId(table.id), &ranges) else {
                continue; // a table dropped meanwhile
            };
            let rows = estimate_rows(table, &ranges, &estimates);
            for row in &rows {
                mutations.push(value_rows::insert(sizes, row, ts)?);
                for range_type in ["primary", "local_primary"] {
                    let mut typed = row.clone();
                    typed.insert("range_type".into(), text(range_type));
                    mutations.push(value_rows::insert(tables, &typed, ts)?);
                }
            }
        }
        for m in mutations {
            storage.apply(m).await.map_err(storage_error)?;
        }
    }
    Ok(())
}

/// This node's primary ranges, a wrapping one split at the minimum token, as Cassandra
/// splits them.
fn primary_ranges(coord: &Coordinator) -> Vec<TokenRange> {
    let ring = coord.topology().ring();
    let mut out = Vec::new();
    for (left, right) in ring.ranges_of(coord.local_address()) {
        out.extend(split_at_minimum(left.0, right.0));
    }
    out
}

fn split_at_minimum(left: i64, right: i64) -> Vec<TokenRange> {
    if left < right {
        return vec![(left, right)];
    }
    let mut out = vec![(left, i64::MIN)];
    if right != i64::MIN {
        out.push((i64::MIN, right));
    }
    out.retain(|(l, r)| l != r);
    out
}

fn estimate_rows(
    table: &TableMetadata,
    ranges: &[TokenRange],
    estimates: &SizeEstimates,
) -> Vec<ValueRow> {
    let mean = estimates.mean_partition_bytes as i64;
    ranges
        .iter()
        .zip(&estimates.partitions)
        .map(|((left, right), count)| {
            let mut row = ValueRow::new();
            row.insert("keyspace_name".into(), text(&table.keyspace));
            row.insert("table_name".into(), text(&table.name));
            row.insert("range_start".into(), text(&left.to_string()));
            row.insert("range_end".into(), text(&right.to_string()));
            row.insert("mean_partition_size".into(), Some(Value::Bigint(mean)));
            row.insert(
                "partitions_count".into(),
                Some(Value::Bigint(*count as i64)),
            );
            row
        })
        .collect()
}

fn text(s: &str) -> Option<Value> {
    Some(Value::Text(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::split_at_minimum;

    #[test]
    fn a_wrapping_range_is_split_at_the_minimum_token() {
        assert_eq!(split_at_minimum(-5, 7), vec![(-5, 7)]);
        assert_eq!(split_at_minimum(9, -3), vec![(9, i64::MIN), (i64::MIN, -3)]);
        assert_eq!(split_at_minimum(4, 4), vec![(4, i64::MIN), (i64::MIN, 4)]);
        assert_eq!(split_at_minimum(9, i64::MIN), vec![(9, i64::MIN)]);
    }
}
