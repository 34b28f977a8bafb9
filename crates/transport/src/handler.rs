//! The interface between the transport and query execution.
use crate::client::ClientState;
use std::future::Future;
use types::request::{BatchRequest, QueryOptions};
use types::result::Outcome;
use types::CqlResult;

/// Executes decoded requests. The transport owns [`ClientState`]: a `SetKeyspace` result makes
/// it switch the client's keyspace; handlers never mutate it.
pub trait QueryHandler: Send + Sync + 'static {
    fn query(
        &self,
        client: &ClientState,
        query: &str,
        options: QueryOptions,
    ) -> impl Future<Output = CqlResult<Outcome>> + Send;

    /// Must answer with `QueryResult::Prepared`.
    fn prepare(
        &self,
        client: &ClientState,
        query: &str,
        keyspace: Option<String>,
    ) -> impl Future<Output = CqlResult<Outcome>> + Send;

    fn execute(
        &self,
        client: &ClientState,
        id: &[u8],
        result_metadata_id: Option<&[u8]>,
        options: QueryOptions,
    ) -> impl Future<Output = CqlResult<Outcome>> + Send;

    fn batch(
        &self,
        client: &ClientState,
        batch: BatchRequest,
    ) -> impl Future<Output = CqlResult<Outcome>> + Send;
}
