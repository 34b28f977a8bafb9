//! Lightweight transactions (Cassandra's `ModificationStatement.executeWithCondition` and
//! `BatchStatement.executeWithConditions`): a conditional statement or batch becomes one
//! [`CasRequest`] on one partition, run by the coordinator's Paxos round
//! ([`coordinator::Coordinator::cas`]) at the protocol's serial consistency, and answered with
//! the `[applied]` rows of [`result`].
mod merge;
mod request;
mod result;

use coordinator::{CasOutcome, CasScope};
use mutation::{Partition, TableId};
use types::result::Rows;
use types::{Consistency, CqlError, CqlResult};

pub use request::CasRequest;

use crate::exec::ExecContext;
use crate::guardrails::writes;
use crate::modify::ModifyPlan;
use crate::processor::QueryProcessor;

/// Runs conditional statements (one, or a batch's) as one compare-and-set.
pub async fn execute(
    qp: &QueryProcessor,
    items: &[(&ModifyPlan, &ExecContext)],
    batch: bool,
) -> CqlResult<Rows> {
    let Some((_, ctx)) = items.first() else {
        return Err(CqlError::invalid("A conditional batch needs a statement"));
    };
    let limits = qp.limits();
    writes::consistency(&limits, ctx)?;
    for (plan, ctx) in items {
        writes::user_timestamp(&limits, plan, ctx)?;
    }
    let request = CasRequest::new(items, batch)?;
    let scope = CasScope {
        keyspace: &request.table.keyspace,
        table: TableId(request.table.id),
        serial: serial_consistency(ctx)?,
        commit: commit_consistency(ctx.consistency)?,
        now: ctx.now_seconds,
        trace: ctx.trace(),
    };
    let filter = request.read_filter();
    let now = ctx.now_seconds;
    // The condition runs inside the Paxos round and may run again after contention: an
    // error of the last run (a list index out of bounds) is the request's.
    let mut failure = None;
    let decide = |partition: Option<&Partition>, ts: i64| {
        let decision = decide(&request, partition, now, ts);
        failure = decision.as_ref().err().cloned();
        decision.ok().flatten()
    };
    let outcome = qp
        .coordinator
        .cas(&scope, &request.key, &filter, decide)
        .await?;
    if let Some(e) = failure {
        return Err(e);
    }
    match outcome {
        CasOutcome::Applied => Ok(result::applied(&request)),
        CasOutcome::NotApplied(partition) => result::not_applied(&request, partition.as_ref(), now),
    }
}

fn decide(
    request: &CasRequest,
    partition: Option<&Partition>,
    now: i32,
    ts: i64,
) -> CqlResult<Option<mutation::Mutation>> {
    if !request.applies_to(partition, now) {
        return Ok(None);
    }
    request.mutation(partition, ts).map(Some)
}

/// The consistency of the Paxos phase: the protocol's serial consistency, SERIAL by default.
fn serial_consistency(ctx: &ExecContext) -> CqlResult<Consistency> {
    match ctx.serial_consistency.unwrap_or(Consistency::Serial) {
        cl @ (Consistency::Serial | Consistency::LocalSerial) => Ok(cl),
        _ => Err(CqlError::invalid(
            "Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL",
        )),
    }
}

/// The consistency of the commit: the request's, which may not be a serial one.
fn commit_consistency(cl: Consistency) -> CqlResult<Consistency> {
    if matches!(cl, Consistency::Serial | Consistency::LocalSerial) {
        return Err(CqlError::invalid(format!(
            "{} is not supported as conditional update commit consistency. Use ANY if you mean \"make sure it is accepted but I don't care how many replicas commit it for non-SERIAL reads\"",
            cl.name()
        )));
    }
    Ok(cl)
}

#[cfg(test)]
mod tests;
