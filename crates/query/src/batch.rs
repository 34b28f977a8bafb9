//! BATCH: logged (atomic: through the coordinator's batchlog), unlogged, and counter batches, from a
//! `BEGIN BATCH` statement or a protocol BATCH message, all statements sharing one timestamp.
use std::collections::BTreeMap;
use std::sync::Arc;

use coordinator::{CounterWrite, ReadPolicy, Trace};
use cql::ast::{self, BatchKind, Statement, UsingOption};
use mutation::{CounterUpdate, PartitionKey, ReadFilter, ReadStats};
use types::request::{BatchRequest, BatchStatement, QueryOptions, Values};
use types::result::{Outcome, QueryResult};
use types::{Consistency, CqlError, CqlResult, CqlType, NativeType};

use crate::exec::ExecContext;
use crate::guardrails::batch::BatchWrites;
use crate::guardrails::{writes, Limits, Warnings};
use crate::modify::{ModifyPlan, StoredRows};
use crate::operand::{Binder, Operand, Resolved};
use crate::processor::{Plan, QueryProcessor};
use crate::reads::{PartitionReader, ReadScope};
use crate::trace::TraceRequest;

/// An analysed `BEGIN BATCH ... APPLY BATCH`.
#[derive(Debug)]
pub struct BatchPlan {
    kind: BatchKind,
    statements: Vec<ModifyPlan>,
    timestamp: Option<Operand>,
}

impl BatchPlan {
    /// The statements of the batch.
    pub fn statements(&self) -> impl Iterator<Item = &ModifyPlan> {
        self.statements.iter()
    }

    pub fn analyze(
        qp: &QueryProcessor,
        b: &ast::Batch,
        keyspace: Option<&str>,
        binder: &mut Binder,
    ) -> CqlResult<BatchPlan> {
        crate::virtual_tables::check_batch(b, keyspace)?;
        let mut statements = Vec::with_capacity(b.statements.len());
        for s in &b.statements {
            if !matches!(
                s,
                Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_)
            ) {
                return Err(not_a_write());
            }
            match qp.analyze(s, keyspace, binder)? {
                Plan::Modify(m) => statements.push(m),
                _ => return Err(not_a_write()),
            }
        }
        let timestamp_set = b
            .using
            .iter()
            .any(|u| matches!(u, UsingOption::Timestamp(_)));
        if timestamp_set && statements.iter().any(|s| s.conditions().is_some()) {
            return Err(CqlError::invalid(
                "Cannot provide custom timestamp for conditional BATCH",
            ));
        }
        check_kinds(b.kind, statements.iter(), timestamp_set)?;
        check_conditional(statements.iter())?;
        let mut timestamp = None;
        for u in &b.using {
            match u {
                UsingOption::Timestamp(t) => {
                    let spec = types::result::ColumnSpec {
                        keyspace: String::new(),
                        table: String::new(),
                        name: "[timestamp]".into(),
                        ty: CqlType::Native(NativeType::Bigint),
                    };
                    timestamp = Some(crate::terms::analyze(t, &spec, binder)?);
                }
                UsingOption::Ttl(_) => {
                    return Err(CqlError::invalid(
                        "Global TTL on the BATCH statement is not supported.",
                    ))
                }
            }
        }
        Ok(BatchPlan {
            kind: b.kind,
            statements,
            timestamp,
        })
    }

    pub async fn execute(&self, qp: &QueryProcessor, ctx: &ExecContext) -> CqlResult<QueryResult> {
        if is_conditional(self.statements.iter()) {
            let items: Vec<_> = self.statements.iter().map(|s| (s, ctx)).collect();
            return Ok(QueryResult::Rows(
                crate::cas::execute(qp, &items, true).await?,
            ));
        }
        let ts = match &self.timestamp {
            Some(op) => match op.resolve(ctx)? {
                Resolved::Value(b) => Some(i64::from_be_bytes(
                    b.as_ref()
                        .try_into()
                        .map_err(|_| CqlError::invalid("Invalid timestamp"))?,
                )),
                _ => None,
            },
            None => None,
        };
        apply(qp, &self.statements, ctx, Some(self.kind), ts).await?;
        Ok(QueryResult::Void)
    }
}

fn is_conditional<'a>(mut plans: impl Iterator<Item = &'a ModifyPlan>) -> bool {
    plans.any(|p| p.conditions().is_some())
}

/// A batch with conditions is on one table (Cassandra's check when it is prepared; one
/// partition is checked when it runs).
fn check_conditional<'a>(plans: impl Iterator<Item = &'a ModifyPlan> + Clone) -> CqlResult<()> {
    if !is_conditional(plans.clone()) {
        return Ok(());
    }
    let mut tables = plans.map(|p| p.table().id);
    let first = tables.next();
    if tables.any(|t| Some(t) != first) {
        return Err(CqlError::invalid(
            "Batch with conditions cannot span multiple tables",
        ));
    }
    Ok(())
}

fn not_a_write() -> CqlError {
    CqlError::invalid(
        "Invalid statement in batch: only UPDATE, INSERT and DELETE statements are allowed.",
    )
}

/// Cassandra's checks of a batch's kind against its statements, in its order: a counter
/// batch takes no timestamp and only counter statements, counter and other statements never
/// mix, a logged batch takes no counters (an unlogged batch of counters is fine).
fn check_kinds<'a>(
    kind: BatchKind,
    plans: impl Iterator<Item = &'a ModifyPlan>,
    timestamp_set: bool,
) -> CqlResult<()> {
    let (mut counters, mut others) = (false, false);
    for p in plans {
        if p.is_counter() {
            counters = true;
        } else {
            others = true;
        }
    }
    let refusal = match kind {
        BatchKind::Counter if timestamp_set => "Cannot provide custom timestamp for counter BATCH",
        BatchKind::Counter if others => "Cannot include non-counter statement in a counter batch",
        _ if counters && others => {
            "Counter and non-counter mutations cannot exist in the same batch"
        }
        BatchKind::Logged if counters => "Cannot include a counter statement in a logged batch",
        _ => return Ok(()),
    };
    Err(CqlError::invalid(refusal))
}

/// Applies modification plans with one shared context (one timestamp); `kind` is `None` for a
/// single statement.
pub async fn apply(
    qp: &QueryProcessor,
    plans: &[ModifyPlan],
    ctx: &ExecContext,
    kind: Option<BatchKind>,
    ts: Option<i64>,
) -> CqlResult<()> {
    let ctx_ts;
    let ctx = match ts {
        Some(t) => {
            ctx_ts = ctx.with_timestamp(t);
            &ctx_ts
        }
        None => ctx,
    };
    let contexts: Vec<&ExecContext> = plans.iter().map(|_| ctx).collect();
    apply_each(qp, plans.iter().zip(contexts), kind).await
}

/// Applies each plan with its own context (protocol BATCH: values differ per statement):
/// the guardrails first, then the batch checks on the mutations built, then the writes.
async fn apply_each<'a>(
    qp: &QueryProcessor,
    items: impl Iterator<Item = (&'a ModifyPlan, &'a ExecContext)>,
    kind: Option<BatchKind>,
) -> CqlResult<()> {
    let items: Vec<(&ModifyPlan, &ExecContext)> = items.collect();
    let Some((first, first_ctx)) = items.first().copied() else {
        return Ok(());
    };
    let limits = qp.limits();
    for (plan, ctx) in &items {
        writes::user_timestamp(&limits, plan, ctx)?;
    }
    writes::consistency(&limits, first_ctx)?;
    if kind.is_none() {
        writes::timestamp_bounds(&limits, first, first_ctx)?;
    }
    if items.iter().any(|(p, _)| p.is_counter()) {
        return apply_counters(qp, &limits, &items, kind).await;
    }
    let mut batch = BatchWrites::default();
    let mut by_keyspace: BTreeMap<String, Vec<mutation::Mutation>> = BTreeMap::new();
    for (plan, ctx) in &items {
        writes::keys(&limits, plan, ctx)?;
        let stored = stored_rows(qp, plan, ctx).await?;
        let mutations = plan.mutations(ctx, &stored)?;
        writes::cells(&limits, plan, &mutations, ctx)?;
        if kind.is_some() {
            batch.add(&plan.layout, &mutations);
        }
        by_keyspace
            .entry(plan.table().keyspace.clone())
            .or_default()
            .extend(mutations);
    }
    if let Some(kind) = kind {
        batch.check(&limits, kind, first_ctx)?;
    }
    let (cl, trace) = (first_ctx.consistency, first_ctx.trace());
    if kind == Some(BatchKind::Logged) {
        let groups = by_keyspace.into_iter().collect();
        qp.coordinator.write_atomically(groups, cl, trace).await?;
    } else {
        for (ks, mutations) in by_keyspace {
            qp.coordinator.write(&ks, mutations, cl, trace).await?;
        }
    }
    trace_memtables(trace, &items);
    Ok(())
}

/// The rows a write reads before it is made (list positions, removal of list elements by
/// value), through the coordinator at the statement's consistency (ONE for a write at ANY).
async fn stored_rows(
    qp: &QueryProcessor,
    plan: &ModifyPlan,
    ctx: &ExecContext,
) -> CqlResult<StoredRows> {
    let mut stored = StoredRows::default();
    let reads = plan.stored_reads(ctx)?;
    if reads.is_empty() {
        return Ok(stored);
    }
    let policy = ReadPolicy::from_options(
        &plan.table().options.speculative_retry,
        &plan.table().options.read_repair,
    );
    let scope = ReadScope {
        keyspace: &plan.table().keyspace,
        table: mutation::TableId(plan.table().id),
        cl: match ctx.consistency {
            Consistency::Any => Consistency::One,
            cl => cl,
        },
        now: ctx.now_seconds,
        trace: ctx.trace(),
        policy: &policy,
    };
    for (key, clustering) in reads {
        let filter = match &clustering {
            Some(c) => ReadFilter {
                include_static: false,
                ..ReadFilter::row(c.clone())
            },
            None => ReadFilter {
                slices: Vec::new(),
                ..ReadFilter::all()
            },
        };
        let mut stats = ReadStats::default();
        let mut read =
            PartitionReader::read(qp.coordinator.as_ref(), &scope, &key, &filter, &mut stats)
                .await?;
        if let Some(p) = read.as_mut() {
            crate::dropped::forget_dropped(plan.table(), p);
        }
        let row = read.and_then(|p| match clustering {
            Some(_) => p.rows.into_iter().next(),
            None => p.static_row,
        });
        if let Some(row) = row {
            stored.add(key, clustering, row);
        }
    }
    Ok(stored)
}

/// What a statement on a counter table does: increments go through the counter path (read
/// the totals, write new ones); deletions are written as they are (tombstones need no read).
enum CounterChange {
    Add(Vec<(PartitionKey, Vec<CounterUpdate>)>),
    Delete(Vec<mutation::Mutation>),
}

/// Counter statements: their changes are built (and a batch checked) before any is applied.
async fn apply_counters(
    qp: &QueryProcessor,
    limits: &Limits,
    items: &[(&ModifyPlan, &ExecContext)],
    kind: Option<BatchKind>,
) -> CqlResult<()> {
    let mut batch = BatchWrites::default();
    let mut changes = Vec::with_capacity(items.len());
    for (plan, ctx) in items {
        writes::keys(limits, plan, ctx)?;
        let change = if plan.is_deletion() {
            let mutations = plan.mutations(ctx, &StoredRows::default())?;
            if kind.is_some() {
                batch.add(&plan.layout, &mutations);
            }
            CounterChange::Delete(mutations)
        } else {
            let updates = plan.counter_updates(ctx)?;
            if kind.is_some() {
                batch.add_counters(&plan.layout, &updates);
            }
            CounterChange::Add(updates)
        };
        changes.push(change);
    }
    let Some((_, first_ctx)) = items.first() else {
        return Ok(());
    };
    if let Some(kind) = kind {
        batch.check(limits, kind, first_ctx)?;
    }
    let (cl, trace) = (first_ctx.consistency, first_ctx.trace());
    for ((plan, ctx), change) in items.iter().zip(changes) {
        let keyspace = &plan.table().keyspace;
        let updates = match change {
            CounterChange::Delete(mutations) => {
                qp.coordinator.write(keyspace, mutations, cl, trace).await?;
                continue;
            }
            CounterChange::Add(updates) => updates,
        };
        let timestamp = plan.timestamp(ctx)?;
        for (key, updates) in updates {
            let table = mutation::TableId(plan.table().id);
            let write = CounterWrite {
                keyspace,
                table,
                key,
                updates,
                timestamp,
            };
            // Boxed: a counter write's future (the leader's read-before-write) is kilobytes,
            // and inline it would widen every request's future (see cas.rs in coordinator).
            Box::pin(qp.coordinator.write_counters(write, cl, trace)).await?;
        }
    }
    trace_memtables(trace, items);
    Ok(())
}

/// Cassandra's "Adding to <table> memtable", once per table written.
fn trace_memtables(trace: Option<&Trace>, items: &[(&ModifyPlan, &ExecContext)]) {
    if let Some(trace) = trace {
        let names = items.iter().map(|(plan, _)| plan.table().name.as_str());
        coordinator::trace::memtables(trace, names);
    }
}

/// The trace session's description of a protocol BATCH (Cassandra's `BatchMessage`).
pub fn trace_request(req: &BatchRequest) -> TraceRequest {
    let mut parameters = vec![(
        "consistency_level".to_string(),
        req.consistency.name().to_string(),
    )];
    if let Some(serial) = req.serial_consistency {
        parameters.push(("serial_consistency_level".into(), serial.name().into()));
    }
    TraceRequest {
        request: "Execute batch of CQL3 queries",
        parameters,
    }
}

/// A protocol BATCH message.
pub async fn execute_request(
    qp: &QueryProcessor,
    keyspace: Option<&str>,
    req: BatchRequest,
    trace: Option<Arc<Trace>>,
) -> CqlResult<Outcome> {
    let kind = match req.kind {
        types::request::BatchKind::Logged => BatchKind::Logged,
        types::request::BatchKind::Unlogged => BatchKind::Unlogged,
        types::request::BatchKind::Counter => BatchKind::Counter,
    };
    let options = QueryOptions {
        consistency: req.consistency,
        serial_consistency: req.serial_consistency,
        timestamp: Some(req.timestamp.unwrap_or_else(|| qp.now_micros())),
        now_in_seconds: req.now_in_seconds,
        keyspace: req.keyspace.clone(),
        ..QueryOptions::default()
    };
    let mut plans: Vec<Arc<Plan>> = Vec::with_capacity(req.statements.len());
    let mut contexts = Vec::with_capacity(req.statements.len());
    let warnings = Warnings::default();
    for s in &req.statements {
        let (plan, binds, values) = match s {
            BatchStatement::Query { query, values } => {
                let (plan, binds) = qp.analyze_text(query, keyspace, trace.as_deref())?;
                (Arc::new(plan), binds, values)
            }
            BatchStatement::Prepared { id, values } => {
                let p = qp.lookup(id)?;
                (p.plan.clone(), p.binds.clone(), values)
            }
        };
        if !matches!(plan.as_ref(), Plan::Modify(_)) {
            return Err(not_a_write());
        }
        let bound = binds.positional(Values::Positional(values.clone()))?;
        let ctx = ExecContext::at(&options, bound, qp.now_micros()).traced(trace.clone());
        contexts.push(ctx.warned(warnings.clone()));
        plans.push(plan);
    }
    let modify: Vec<&ModifyPlan> = plans
        .iter()
        .filter_map(|p| match p.as_ref() {
            Plan::Modify(m) => Some(m),
            _ => None,
        })
        .collect();
    // A protocol BATCH's timestamp is the client's default, not USING TIMESTAMP.
    check_kinds(kind, modify.iter().copied(), false)?;
    check_conditional(modify.iter().copied())?;
    let result = if is_conditional(modify.iter().copied()) {
        let items: Vec<_> = modify.into_iter().zip(contexts.iter()).collect();
        QueryResult::Rows(crate::cas::execute(qp, &items, true).await?)
    } else {
        apply_each(qp, modify.into_iter().zip(contexts.iter()), Some(kind)).await?;
        QueryResult::Void
    };
    Ok(Outcome {
        result,
        warnings: warnings.take(),
        tracing_id: None,
    })
}
