//! The reads a SELECT makes: of user tables, from the replicas through the coordinator; of
//! virtual tables, from their rows held in memory by the node ([`NodeState::in_memory`]), so
//! virtual tables get the same restrictions, filtering, limits and paging as stored ones.
//!
//! [`NodeState::in_memory`]: crate::NodeState::in_memory
use coordinator::Coordinator;
pub use coordinator::ReadScope;
use mutation::{KeyRange, Partition, PartitionKey, ReadFilter, ReadStats};
use types::CqlResult;

/// The two reads a SELECT makes.
#[async_trait::async_trait]
pub trait PartitionReader: Sync {
    /// The live content of partition `key`.
    async fn read(
        &self,
        scope: &ReadScope,
        key: &PartitionKey,
        filter: &ReadFilter,
        stats: &mut ReadStats,
    ) -> CqlResult<Option<Partition>>;

    /// Up to `limit` live partitions of `range`, in token order.
    async fn scan(
        &self,
        scope: &ReadScope,
        range: &KeyRange,
        filter: &ReadFilter,
        limit: usize,
        stats: &mut ReadStats,
    ) -> CqlResult<Vec<Partition>>;
}

#[async_trait::async_trait]
impl PartitionReader for Coordinator {
    async fn read(
        &self,
        s: &ReadScope,
        key: &PartitionKey,
        filter: &ReadFilter,
        stats: &mut ReadStats,
    ) -> CqlResult<Option<Partition>> {
        Coordinator::read(self, s, key, filter, stats).await
    }

    async fn scan(
        &self,
        s: &ReadScope,
        range: &KeyRange,
        filter: &ReadFilter,
        limit: usize,
        stats: &mut ReadStats,
    ) -> CqlResult<Vec<Partition>> {
        Coordinator::scan(self, s, range, filter, limit, stats).await
    }
}

/// Where a SELECT reads from: the coordinator for stored tables, a snapshot for virtual ones.
pub enum Source<'a> {
    Stored(&'a Coordinator),
    Virtual(Box<dyn PartitionReader + Send>),
}

impl Source<'_> {
    pub fn reader(&self) -> &dyn PartitionReader {
        match self {
            Source::Stored(coordinator) => *coordinator,
            Source::Virtual(snapshot) => snapshot.as_ref(),
        }
    }
}
