//! Connects the native-protocol server to the query processor, counting requests for the
//! admin API (`tpstats`, `/metrics`).
use std::sync::Arc;

use admin::NativeStats;
use query::{QueryProcessor, Tracing};
use transport::{ClientState, QueryHandler};
use types::request::{BatchRequest, QueryOptions};
use types::result::Outcome;
use types::CqlResult;

/// The transport's view of the node: every request goes to the query processor.
pub struct Handler {
    pub processor: Arc<QueryProcessor>,
    pub stats: Arc<NativeStats>,
}

/// The request's tracing as the query processor needs it.
fn tracing(client: &ClientState, requested: bool) -> Tracing {
    Tracing {
        requested,
        client: client.peer().ip(),
    }
}

impl QueryHandler for Handler {
    async fn query(
        &self,
        client: &ClientState,
        query: &str,
        options: QueryOptions,
        traced: bool,
    ) -> CqlResult<Outcome> {
        let _request = self.stats.start();
        let keyspace = options.keyspace.clone().or_else(|| client.keyspace());
        let tracing = tracing(client, traced);
        self.processor
            .query_traced(keyspace.as_deref(), query, options, tracing)
            .await
    }

    async fn prepare(
        &self,
        client: &ClientState,
        query: &str,
        keyspace: Option<String>,
        traced: bool,
    ) -> CqlResult<Outcome> {
        let _request = self.stats.start();
        let keyspace = keyspace.or_else(|| client.keyspace());
        let tracing = tracing(client, traced);
        self.processor
            .prepare_traced(keyspace.as_deref(), query, tracing)
            .await
    }

    async fn execute(
        &self,
        client: &ClientState,
        id: &[u8],
        result_metadata_id: Option<&[u8]>,
        options: QueryOptions,
        traced: bool,
    ) -> CqlResult<Outcome> {
        let _request = self.stats.start();
        let tracing = tracing(client, traced);
        self.processor
            .execute_traced(id, result_metadata_id, options, tracing)
            .await
    }

    async fn batch(
        &self,
        client: &ClientState,
        batch: BatchRequest,
        traced: bool,
    ) -> CqlResult<Outcome> {
        let _request = self.stats.start();
        let keyspace = batch.keyspace.clone().or_else(|| client.keyspace());
        let tracing = tracing(client, traced);
        self.processor
            .batch_traced(keyspace.as_deref(), batch, tracing)
            .await
    }
}
