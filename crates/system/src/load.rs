//! The bytes this node's tables take (nodetool's Load, gossip's `load`).
use mutation::TableId;
use schema::Schema;
use storage::Storage;

/// Bytes on disk and uncompressed of every table's SSTables.
pub fn load_bytes(storage: &Storage, schema: &Schema) -> (u64, u64) {
    let mut total = (0, 0);
    for table in schema.keyspaces().values().flat_map(|k| k.tables.values()) {
        if let Ok(usage) = storage.table_usage(TableId(table.id)) {
            total.0 += usage.disk_bytes;
            total.1 += usage.uncompressed_bytes;
        }
    }
    total
}
