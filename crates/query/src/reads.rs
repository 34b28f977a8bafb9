//! The reads a SELECT makes: of user tables, from the replicas through the coordinator; of
//! virtual tables, from their rows held in memory by the node ([`NodeState::in_memory`]), so
//! virtual tables get the same restrictions, filtering, limits and paging as stored ones.
//!
//! [`NodeState::in_memory`]: crate::NodeState::in_memory
pub use coordinator::ReadScope;
use coordinator::{CasScope, Coordinator};
use mutation::{KeyRange, Partition, PartitionKey, ReadFilter, ReadStats};
use types::{Consistency, CqlResult};

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

/// Reads at SERIAL or LOCAL_SERIAL: a partition's through a Paxos round (completing a
/// proposal in progress first); a scan's, which Cassandra does not make linearizable, at
/// QUORUM or LOCAL_QUORUM.
pub struct SerialReader<'a>(pub &'a Coordinator);

/// The quorum a serial consistency stands for outside Paxos.
fn quorum_of(serial: Consistency) -> Consistency {
    match serial {
        Consistency::LocalSerial => Consistency::LocalQuorum,
        _ => Consistency::Quorum,
    }
}

#[async_trait::async_trait]
impl PartitionReader for SerialReader<'_> {
    async fn read(
        &self,
        s: &ReadScope,
        key: &PartitionKey,
        filter: &ReadFilter,
        _stats: &mut ReadStats,
    ) -> CqlResult<Option<Partition>> {
        let scope = CasScope {
            keyspace: s.keyspace,
            table: s.table,
            serial: s.cl,
            commit: quorum_of(s.cl),
            now: s.now,
            trace: s.trace,
        };
        self.0.serial_read(&scope, key, filter).await
    }

    async fn scan(
        &self,
        s: &ReadScope,
        range: &KeyRange,
        filter: &ReadFilter,
        limit: usize,
        stats: &mut ReadStats,
    ) -> CqlResult<Vec<Partition>> {
        let scope = ReadScope {
            cl: quorum_of(s.cl),
            ..*s
        };
        self.0.scan(&scope, range, filter, limit, stats).await
    }
}

/// Where a SELECT reads from: the coordinator for stored tables (through Paxos at a serial
/// consistency), a snapshot for virtual ones.
pub enum Source<'a> {
    Stored(&'a Coordinator),
    Serial(SerialReader<'a>),
    Virtual(Box<dyn PartitionReader + Send>),
}

impl<'a> Source<'a> {
    pub fn reader(&self) -> &dyn PartitionReader {
        match self {
            Source::Stored(coordinator) => *coordinator,
            Source::Serial(serial) => serial,
            Source::Virtual(snapshot) => snapshot.as_ref(),
        }
    }

    /// The same source for a read at `cl`: stored tables read at SERIAL go through Paxos.
    pub fn at(self, cl: Consistency) -> Source<'a> {
        match self {
            Source::Stored(c) if matches!(cl, Consistency::Serial | Consistency::LocalSerial) => {
                Source::Serial(SerialReader(c))
            }
            other => other,
        }
    }
}
