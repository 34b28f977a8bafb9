//! What the replica side's handlers share: the node's storage and services, the wait for a
//! table the sender's schema has, and the end of a traced message.
use std::sync::Arc;
use std::time::Duration;

use mutation::TableId;
use net::Peer;
use storage::{Storage, StorageError};

use crate::coordinator::counters::Leader;
use crate::remote::{Attachments, EpochWaiter};
use crate::trace::{self, Trace};

/// How long a replica waits for a table it does not know to arrive through the metadata log.
const SCHEMA_WAIT: Duration = Duration::from_secs(2);

/// How often a replica looks again for a table its metadata log has but storage has not yet.
const SCHEMA_POLL: Duration = Duration::from_millis(20);

/// What the handlers need from the node.
#[derive(Clone)]
pub(super) struct Replica {
    pub storage: Arc<Storage>,
    pub await_epoch: EpochWaiter,
    /// Leads counter updates other coordinators send this node.
    pub leader: Leader,
    /// The trace sink, once the query layer has attached it.
    pub attached: Arc<Attachments>,
}

impl Replica {
    /// Ends the trace of a traced message with the response to `to`, and writes its events.
    pub fn respond(&self, trace: Option<Trace>, to: &Peer) {
        trace::respond(trace, self.attached.traces.get(), to.addr);
    }

    /// Waits until storage knows every one of `tables`: when one is missing, first for the
    /// metadata log to reach `epoch`, then for the schema it holds to reach storage, at most
    /// [`SCHEMA_WAIT`] in all; `UnknownTable` if one is still missing then.
    pub async fn known_tables(
        &self,
        epoch: u64,
        tables: impl Iterator<Item = TableId> + Clone,
    ) -> storage::Result<()> {
        let missing = || tables.clone().find(|&t| !self.storage.has_table(t));
        let Some(mut table) = missing() else {
            return Ok(());
        };
        let deadline = tokio::time::Instant::now() + SCHEMA_WAIT;
        (self.await_epoch)(epoch, SCHEMA_WAIT).await;
        loop {
            tracing::debug!("waiting for table {table:?} at epoch {epoch}");
            match missing() {
                None => return Ok(()),
                Some(_) if tokio::time::Instant::now() >= deadline => {
                    return Err(StorageError::UnknownTable(table))
                }
                Some(t) => table = t,
            }
            tokio::time::sleep(SCHEMA_POLL).await;
        }
    }
}
