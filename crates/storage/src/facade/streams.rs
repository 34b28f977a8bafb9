//! Streaming's way in: the SSTables to send for some token ranges of a table, and the
//! receiving end of a stream into a table (see [`crate::stream`]).

use super::{blocking, Storage};
use crate::error::Result;
use crate::stream::{outgoing, Incoming, Outgoing, TokenRanges};
use mutation::TableId;

impl Storage {
    /// Flushes `table`, then stages what it holds in `ranges` for stream `session` (a name
    /// unique on this node: its files live under it until the [`Outgoing`] is dropped).
    pub async fn outgoing(
        &self,
        table: TableId,
        ranges: TokenRanges,
        session: String,
    ) -> Result<Outgoing> {
        let engine = self.engine(table)?;
        let core = self.core.clone();
        blocking(move || {
            core.flush(&engine)?;
            let task = engine.start_task()?;
            outgoing::prepare(&engine, &ranges, &session, &task)
        })
        .await
    }

    /// The receiving end of stream `session` into `table`.
    pub fn incoming(&self, table: TableId, session: &str) -> Result<Incoming> {
        let engine = self.engine(table)?;
        let core = self.core.clone();
        Incoming::new(engine, session, Box::new(move || core.wake_background()))
    }
}
