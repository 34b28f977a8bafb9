//! `system.batches` as Cassandra 5.0 defines it (`id timeuuid PRIMARY KEY, mutations
//! list<blob>, version int`): the row a stored batch becomes, the partition deletion that
//! removes it, and the batches read back from a scan. Rows are laid out as the query layer
//! writes any table without clustering columns, so `SELECT * FROM system.batches` shows them.
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mutation::{
    Cell, ColumnData, ColumnValue, DeletionTime, LivenessInfo, Mutation, Partition, PartitionKey,
    PartitionUpdate, Row, TableId,
};
use storage::Storage;
use uuid::Uuid;

use crate::messages::batch::Batch;

/// The id of `system.batches` (Helenus names system tables by keyspace and table name).
pub(crate) fn table_id() -> TableId {
    TableId(schema::system_table_id("system", "batches"))
}

fn key(id: &Uuid) -> PartitionKey {
    let key = Bytes::copy_from_slice(id.as_bytes());
    PartitionKey {
        token: ring::murmur3_token(&key),
        key,
    }
}

/// The clustering of the only row of a partition without clustering columns.
fn clustering() -> Bytes {
    let mut out = Vec::with_capacity(1);
    types::comparable::encode_clustering(&[], &[], &mut out);
    Bytes::from(out)
}

/// The path of the `i`th element of a list written at `ts` (list paths sort in list order).
fn list_path(ts: i64, i: usize) -> Bytes {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&((ts as u64) ^ (1 << 63)).to_be_bytes());
    out[8..].copy_from_slice(&(i as u64).to_be_bytes());
    Bytes::copy_from_slice(&out)
}

/// The row of `batch`, written at its creation time (as Cassandra's BatchlogManager.store).
pub(crate) fn store(batch: &Batch) -> Mutation {
    let ts = batch.written_at();
    let mut row = Row::new(clustering());
    row.liveness = Some(LivenessInfo::new(ts));
    let cells = batch
        .mutations
        .iter()
        .enumerate()
        .map(|(i, blob)| Cell::live(ts, blob.clone()).with_path(list_path(ts, i)))
        .collect();
    row.columns = vec![
        ColumnData::complex("mutations", DeletionTime::LIVE, cells),
        ColumnData::simple(
            "version",
            Cell::live(ts, Bytes::copy_from_slice(&batch.version.to_be_bytes())),
        ),
    ];
    Mutation {
        table: table_id(),
        key: key(&batch.id),
        update: PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        },
    }
}

/// Deletes the batch `id` at `ts` (never before the batch itself was written, so a clock
/// behind the coordinator's cannot leave it in place).
pub(crate) fn remove(id: &Uuid, ts: i64, now: i32) -> Mutation {
    let ts = ts.max(crate::messages::batch::written_at(id) + 1);
    Mutation {
        table: table_id(),
        key: key(id),
        update: PartitionUpdate {
            partition_deletion: DeletionTime::new(ts, now),
            ..PartitionUpdate::default()
        },
    }
}

/// The batch a scanned partition of `system.batches` holds, or why it cannot be read.
pub(crate) fn read(partition: &Partition, now: i32) -> Result<Batch, String> {
    let id = Uuid::from_slice(&partition.key.key).map_err(|_| "a batch id is not a uuid")?;
    let row = partition.rows.first().ok_or("a batch has no row")?;
    let mut mutations = Vec::new();
    if let Some(ColumnValue::Complex(list)) = row.column(b"mutations").map(|c| &c.value) {
        let live = list.cells.iter().filter(|c| c.is_live(now));
        mutations.extend(live.filter_map(|c| c.value.clone()));
    }
    let version = match row.column(b"version").map(|c| &c.value) {
        Some(ColumnValue::Simple(cell)) if cell.is_live(now) => {
            let bytes = cell.value.as_deref().unwrap_or_default();
            i32::from_be_bytes(bytes.try_into().map_err(|_| "bad version")?)
        }
        _ => return Err(format!("batch {id} has no version")),
    };
    Ok(Batch {
        id,
        version,
        mutations,
    })
}

/// Deletes batch `id` from this node's batchlog at `now` since the epoch (a failure is
/// logged: replay retries it).
pub(crate) async fn remove_locally(storage: Arc<Storage>, id: Uuid, now: Duration) {
    let removal = remove(&id, now.as_micros() as i64, now.as_secs() as i32);
    if let Err(e) = storage.apply(removal).await {
        tracing::warn!("batch {id} not removed from the batchlog: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_batch_reads_back_and_its_removal_follows_it() {
        let id = Uuid::now_v1(&[9; 6]);
        let batch = Batch {
            id,
            version: 1,
            mutations: vec![Bytes::from_static(b"one"), Bytes::from_static(b"two")],
        };
        let stored = store(&batch);
        assert_eq!(stored.table, table_id());
        let partition = Partition {
            key: stored.key.clone(),
            static_row: None,
            rows: stored.update.rows.clone(),
        };
        assert_eq!(read(&partition, 0).unwrap(), batch);
        let removal = remove(&id, 5, 0);
        let deletion = removal.update.partition_deletion;
        assert!(deletion.deletes(batch.written_at()));
        assert_eq!(removal.key, stored.key);
    }

    #[test]
    fn damaged_rows_are_refused() {
        let mut partition = Partition {
            key: key(&Uuid::from_u128(1)),
            static_row: None,
            rows: vec![],
        };
        assert!(read(&partition, 0).is_err());
        partition.rows.push(Row::new(clustering()));
        assert!(read(&partition, 0).is_err());
        partition.key.key = Bytes::from_static(b"short");
        assert!(read(&partition, 0).is_err());
    }
}
