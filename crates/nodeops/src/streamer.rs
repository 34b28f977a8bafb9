//! [`StreamMover`]: the [`RangeMover`] of a node with the streaming service. Transfers into
//! this node are fetched here, one session per source; the others are asked of their target
//! (`StreamPull`: "pull these ranges from that source"), all at once, each answered once its
//! target holds the data.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use mutation::{TableId, TokenRange};
use query::QueryProcessor;
use streaming::{StreamRequest, Streaming};
use tokio::task::JoinSet;

use crate::mover::{EstimateFuture, MoveFuture, Purpose, RangeMover, Transfer};

pub struct StreamMover {
    streaming: Arc<Streaming>,
    processor: Arc<QueryProcessor>,
    /// Every node's internode port (`storage_port`).
    port: u16,
}

/// The tables and ranges one source sends one target.
type Pairs = BTreeMap<(IpAddr, IpAddr), BTreeMap<TableId, Vec<TokenRange>>>;

impl StreamMover {
    pub fn new(streaming: Arc<Streaming>, processor: Arc<QueryProcessor>, port: u16) -> Self {
        StreamMover {
            streaming,
            processor,
            port,
        }
    }

    /// The transfers as stream requests, by (source, target), with every table of their
    /// keyspaces.
    fn pairs(&self, transfers: Vec<Transfer>) -> Pairs {
        let schema = self.processor.schema();
        let mut pairs = Pairs::new();
        for transfer in transfers {
            let Some(keyspace) = schema.schema.keyspace(&transfer.keyspace) else {
                continue;
            };
            let tables = pairs.entry((transfer.source, transfer.target)).or_default();
            for table in keyspace.tables.values() {
                let ranges = tables.entry(TableId(table.id)).or_default();
                ranges.extend(transfer.ranges.iter().copied());
            }
        }
        pairs
    }

    fn request(&self, source: IpAddr, tables: BTreeMap<TableId, Vec<TokenRange>>) -> StreamRequest {
        StreamRequest {
            peer: SocketAddr::new(source, self.port),
            tables: tables.into_iter().collect(),
        }
    }

    async fn run(&self, purpose: Purpose, transfers: Vec<Transfer>) -> Result<(), String> {
        let local = self.processor.node().listen_address;
        let description = purpose.name();
        let (mut fetched, mut pulls) = (Vec::new(), JoinSet::new());
        for ((source, target), tables) in self.pairs(transfers) {
            let request = self.request(source, tables);
            if target == local {
                fetched.push(request);
                continue;
            }
            let (streaming, to) = (self.streaming.clone(), SocketAddr::new(target, self.port));
            pulls.spawn(async move {
                let result = streaming.pull(to, description, request).await;
                result.map_err(|e| format!("{target}: {e}"))
            });
        }
        let mut failures = Vec::new();
        if let Err(failed) = self.streaming.fetch(description, fetched).finish().await {
            failures.extend(failed.iter().map(|(peer, e)| format!("{}: {e}", peer.ip())));
        }
        while let Some(done) = pulls.join_next().await {
            match done {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failures.push(e),
                Err(e) => failures.push(format!("stream task failed: {e}")),
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(format!("Stream failed: {}", failures.join("; ")))
        }
    }
}

impl RangeMover for StreamMover {
    fn transfer(&self, purpose: Purpose, transfers: Vec<Transfer>) -> MoveFuture<'_> {
        Box::pin(self.run(purpose, transfers))
    }

    /// Each source's answer for the tables and ranges it would send, summed.
    fn estimate(&self, transfers: Vec<Transfer>) -> EstimateFuture<'_> {
        let requests = self
            .pairs(transfers)
            .into_iter()
            .map(|((source, _), tables)| self.request(source, tables))
            .collect();
        Box::pin(crate::room::estimate(&self.streaming, requests))
    }
}
