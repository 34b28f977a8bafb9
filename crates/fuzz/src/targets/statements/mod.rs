//! Statements past the parser: analysis against a schema and execution, through a real
//! `QueryProcessor` on a `Storage` in a temporary directory ([`node`]), whose keyspace has
//! tables of every kind of column ([`schema`]). Inputs are statements written for that
//! keyspace ([`generate`]) and the CQL target's statements, mutated token by token; each
//! input also chooses its page size, client timestamp and `now`, and whether the paging
//! state it sends back for the next pages is damaged.
//!
//! The node keeps what earlier inputs wrote, so a failure may need the inputs before it:
//! `replay` of the saved input alone runs it on a fresh node, and a server error's message
//! lists the schema changes the node had seen (a keyspace an earlier input created).

mod generate;
mod literals;
mod node;
mod schema;

use bytes::Bytes;
use types::request::QueryOptions;
use types::result::{Outcome, QueryResult, SchemaChangeKind};
use types::{CqlError, CqlResult};

use super::cql;
use crate::driver::Target;
use crate::rng::Rng;
use crate::worker::fnv1a;
use node::Node;

pub const TARGET: Target = Target {
    name: "statements",
    seeds: cql::seeds,
    generate,
    mutate: Some(cql::mutate_tokens),
    run,
    short_iterations: 400,
};

fn generate(rng: &mut Rng) -> Vec<u8> {
    generate::statement(rng).into_bytes()
}

/// Pages read after the first, at most.
const MORE_PAGES: usize = 3;

fn run(input: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(input);
    let mut rng = Rng::new(fnv1a(input));
    let mut options = options(&mut rng);
    node::with(|node| {
        for _ in 0..=MORE_PAGES {
            let answer = node.query(&text, options.clone());
            let Some(state) = next_page(node, &text, answer)? else {
                break;
            };
            options.paging_state = Some(maybe_damaged(&mut rng, state));
        }
        Ok(())
    })
}

/// The paging state for the next page, if there is one. A server error is a finding: bad
/// statements deserve an error that says what is wrong with them.
fn next_page(
    node: &mut Node,
    text: &str,
    answer: CqlResult<Outcome>,
) -> Result<Option<Bytes>, String> {
    let outcome = match answer {
        Err(CqlError::Server(message)) => {
            let changes = node.changes();
            return Err(format!(
                "a server error: {message}\nafter these schema changes on a fresh node:\n{changes}"
            ));
        }
        Err(_) => return Ok(None),
        Ok(outcome) => outcome,
    };
    match outcome.result {
        QueryResult::Rows(rows) => Ok(rows.paging_state),
        QueryResult::SchemaChange(change) => {
            node.schema_changed(text, change.kind != SchemaChangeKind::Created);
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// Query options drawn from the input's own hash, so a saved input replays the same way.
fn options(rng: &mut Rng) -> QueryOptions {
    let page_size = *rng.pick(&[None, None, Some(1), Some(2), Some(100), Some(0), Some(-1)]);
    let timestamp = rng.one_in(8).then(|| rng.edgy_i64());
    let now_in_seconds = rng.one_in(8).then(|| rng.edgy_i64() as i32);
    QueryOptions {
        page_size,
        timestamp,
        now_in_seconds,
        ..QueryOptions::default()
    }
}

/// The paging state as the node sent it, or (one time in four) with a byte changed, cut
/// short or grown.
fn maybe_damaged(rng: &mut Rng, state: Bytes) -> Bytes {
    if !rng.one_in(4) {
        return state;
    }
    let mut bytes = state.to_vec();
    match rng.below(3) {
        0 if !bytes.is_empty() => {
            let at = rng.below(bytes.len());
            bytes[at] ^= 1 << rng.below(8);
        }
        1 => bytes.truncate(rng.below(bytes.len() + 1)),
        _ => {
            let n = 1 + rng.below(8);
            bytes.extend(rng.bytes(n));
        }
    }
    Bytes::from(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    /// The generator and the schema agree: a good share of what it writes gets past analysis
    /// (the rest meets what the node refuses or does not support yet, as meant).
    fn a_quarter_or_more_of_generated_statements_execute() {
        let mut rng = Rng::new(11);
        let total = 300;
        let executed = (0..total)
            .filter(|_| {
                let text = generate::statement(&mut rng);
                node::with(|node| node.query(&text, QueryOptions::default()).is_ok())
            })
            .count();
        assert!(executed * 4 >= total, "{executed} of {total} executed");
    }
}
