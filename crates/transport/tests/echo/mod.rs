//! The query handler of the end-to-end tests.
use bytes::Bytes;
use std::time::Duration;
use transport::{ClientState, QueryHandler};
use types::request::{BatchRequest, QueryOptions};
use types::result::{ColumnSpec, Outcome, QueryResult, Rows};
use types::{CqlError, CqlResult, CqlType, NativeType};

/// Echoes the query text as one row; "fail" fails, "USE x" switches keyspace,
/// "sleep N" waits N ms first.
pub struct Echo;

fn echo_rows(text: &str) -> Outcome {
    let column = ColumnSpec {
        keyspace: "ks".into(),
        table: "t".into(),
        name: "q".into(),
        ty: CqlType::Native(NativeType::Text),
    };
    let mut rows = Rows::new(vec![column]);
    rows.push_value(Some(text.as_bytes()));
    rows.end_row();
    QueryResult::Rows(rows).into()
}

impl QueryHandler for Echo {
    async fn query(
        &self,
        _: &ClientState,
        query: &str,
        _: QueryOptions,
        _: bool,
    ) -> CqlResult<Outcome> {
        if query == "panic" {
            panic!("handler bug");
        }
        if query == "fail" {
            return Err(CqlError::invalid("boom"));
        }
        if let Some(ks) = query.strip_prefix("USE ") {
            return Ok(QueryResult::SetKeyspace(ks.into()).into());
        }
        if let Some(ms) = query
            .strip_prefix("sleep ")
            .and_then(|n| n.split(' ').next())
        {
            let ms = ms.parse().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        Ok(echo_rows(query))
    }

    async fn prepare(
        &self,
        _: &ClientState,
        _: &str,
        _: Option<String>,
        _: bool,
    ) -> CqlResult<Outcome> {
        Err(CqlError::invalid("no prepare"))
    }

    async fn execute(
        &self,
        _: &ClientState,
        id: &[u8],
        _: Option<&[u8]>,
        _: QueryOptions,
        _: bool,
    ) -> CqlResult<Outcome> {
        Err(CqlError::Unprepared {
            message: "unknown".into(),
            id: Bytes::copy_from_slice(id),
        })
    }

    async fn batch(&self, _: &ClientState, _: BatchRequest, _: bool) -> CqlResult<Outcome> {
        Ok(QueryResult::Void.into())
    }
}
