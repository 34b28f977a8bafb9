//! Connects the native-protocol server to the query processor, counting requests for the
//! admin API (`tpstats`, `/metrics`).
use std::sync::Arc;

use admin::NativeStats;
use query::QueryProcessor;
use transport::{ClientState, QueryHandler};
use types::request::{BatchRequest, QueryOptions};
use types::result::Outcome;
use types::CqlResult;

/// The transport's view of the node: every request goes to the query processor.
pub struct Handler {
    pub processor: Arc<QueryProcessor>,
    pub stats: Arc<NativeStats>,
}

impl QueryHandler for Handler {
    async fn query(
        &self,
        client: &ClientState,
        query: &str,
        options: QueryOptions,
    ) -> CqlResult<Outcome> {
        let _request = self.stats.start();
        let keyspace = options.keyspace.clone().or_else(|| client.keyspace());
        self.processor
            .query(keyspace.as_deref(), query, options)
            .await
    }

    async fn prepare(
        &self,
        client: &ClientState,
        query: &str,
        keyspace: Option<String>,
    ) -> CqlResult<Outcome> {
        let _request = self.stats.start();
        let keyspace = keyspace.or_else(|| client.keyspace());
        self.processor.prepare(keyspace.as_deref(), query).await
    }

    async fn execute(
        &self,
        _client: &ClientState,
        id: &[u8],
        result_metadata_id: Option<&[u8]>,
        options: QueryOptions,
    ) -> CqlResult<Outcome> {
        let _request = self.stats.start();
        self.processor
            .execute(id, result_metadata_id, options)
            .await
    }

    async fn batch(&self, client: &ClientState, batch: BatchRequest) -> CqlResult<Outcome> {
        let _request = self.stats.start();
        let keyspace = batch.keyspace.clone().or_else(|| client.keyspace());
        self.processor.batch(keyspace.as_deref(), batch).await
    }
}
