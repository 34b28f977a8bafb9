//! The interface between the transport and query execution.
use crate::client::ClientState;
use std::future::Future;
use types::request::{BatchRequest, QueryOptions};
use types::result::Outcome;
use types::CqlResult;

/// Executes decoded requests. The transport owns [`ClientState`]: a `SetKeyspace` result makes
/// it switch the client's keyspace; handlers never mutate it. `traced` is the request's
/// tracing flag; a handler that traces the request returns the session id in
/// [`Outcome::tracing_id`], which the response then carries.
pub trait QueryHandler: Send + Sync + 'static {
    fn query(
        &self,
        client: &ClientState,
        query: &str,
        options: QueryOptions,
        traced: bool,
    ) -> impl Future<Output = CqlResult<Outcome>> + Send;

    /// Must answer with `QueryResult::Prepared`.
    fn prepare(
        &self,
        client: &ClientState,
        query: &str,
        keyspace: Option<String>,
        traced: bool,
    ) -> impl Future<Output = CqlResult<Outcome>> + Send;

    fn execute(
        &self,
        client: &ClientState,
        id: &[u8],
        result_metadata_id: Option<&[u8]>,
        options: QueryOptions,
        traced: bool,
    ) -> impl Future<Output = CqlResult<Outcome>> + Send;

    fn batch(
        &self,
        client: &ClientState,
        batch: BatchRequest,
        traced: bool,
    ) -> impl Future<Output = CqlResult<Outcome>> + Send;
}
