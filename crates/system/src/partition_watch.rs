//! Storage's [`storage::PartitionWatch`] over the query layer's partition guardrails: what a
//! flush or compaction writes past their thresholds is handed to them to log.
use std::sync::Arc;

use query::guardrails::{PartitionGuardrails, WrittenAt};
use storage::{WatchThresholds, WrittenCollection, WrittenPartition};

/// The guardrails, as storage's watch.
pub(crate) struct PartitionWatch(pub Arc<PartitionGuardrails>);

impl storage::PartitionWatch for PartitionWatch {
    fn thresholds(&self) -> WatchThresholds {
        let floors = self.0.floors();
        WatchThresholds {
            partition_size: floors.partition_size,
            partition_tombstones: floors.partition_tombstones,
            collection_size: floors.collection_size,
            collection_items: floors.collection_items,
        }
    }

    fn written(&self, p: &WrittenPartition<'_>) {
        let at = WrittenAt {
            keyspace: p.keyspace,
            table: p.table,
            key: &p.key.key,
        };
        self.0
            .partition_written(&at, p.sstable, p.size, p.tombstones);
    }

    fn collection(&self, c: &WrittenCollection<'_>) {
        let at = WrittenAt {
            keyspace: c.keyspace,
            table: c.table,
            key: &c.key.key,
        };
        self.0
            .collection_written(&at, c.clustering, c.column, c.size, c.items);
    }
}
