//! The guardrails on reads, in the order Cassandra's SelectStatement applies them:
//! `group_by` and `allow_filtering` on the statement, then at execution the read consistency
//! level, the cartesian product of the partition key's IN lists, the number of partition keys,
//! the cartesian product of the clustering IN lists, and the page size.
use cql::ast::Select;
use schema::{is_system_keyspace, TableMetadata};
use types::CqlResult;

use super::check::{Notice, Threshold};
use super::Limits;
use crate::collections;
use crate::exec::ExecContext;
use crate::keys::KeyLayout;
use crate::operand::Resolved;
use crate::restrictions::{PartitionSelection, Prefix, Restrictions, Values};
use crate::select::SelectPlan;
use crate::slices;

/// Checks made when a SELECT is analysed (Cassandra: when it is prepared or validated).
pub(crate) fn statement(limits: &Limits, table: &TableMetadata, s: &Select) -> CqlResult<()> {
    let notice = Notice::analysis();
    if !s.group_by.is_empty() {
        limits.group_by().ensure_enabled(&notice)?;
    }
    if s.allow_filtering && !is_system_keyspace(&table.keyspace) {
        limits.allow_filtering().ensure_enabled(&notice)?;
    }
    Ok(())
}

/// Checks made when a SELECT runs, before it reads; the page size only when the query is
/// paged (Cassandra reads a LIMIT within one page, or an unpaged query, without checking it).
pub(crate) fn execution(limits: &Limits, plan: &SelectPlan, ctx: &ExecContext) -> CqlResult<()> {
    let notice = ctx.notice();
    let levels = config::ConsistencyLevels::of(&[ctx.consistency as u16]);
    limits.read_consistency_levels().guard(levels, &notice)?;
    let (layout, restrictions) = (&plan.layout, plan.restrictions());
    if let PartitionSelection::Keys(columns) = &restrictions.partition {
        if partition_keys(limits, layout, columns, ctx)? {
            clustering_product(limits, layout, restrictions, ctx)?;
        }
    }
    let page_size = limits.page_size();
    match ctx.page_size {
        Some(size) if page_size.enabled() && plan.pages(ctx)? => {
            page_size.guard(i64::from(size), &layout.table.name, &notice)
        }
        _ => Ok(()),
    }
}

/// The partition key checks; `false` when the statement selects no partition (an empty IN),
/// as Cassandra then stops before the clustering.
fn partition_keys(
    limits: &Limits,
    layout: &KeyLayout,
    columns: &[Values],
    ctx: &ExecContext,
) -> CqlResult<bool> {
    if !has_in(columns) {
        return Ok(true);
    }
    let counts = counts(columns, ctx)?;
    let product = limits.in_select_cartesian_product();
    if product.enabled() && !guard_products(&product, "partition key", &counts, ctx)? {
        return Ok(false);
    }
    if counts.contains(&0) {
        return Ok(false);
    }
    let in_select = limits.partition_keys_in_select();
    if in_select.enabled() {
        let keys = slices::partition_keys(layout, columns, ctx)?.len();
        in_select.guard(keys as i64, &layout.table.name, &ctx.notice())?;
    }
    Ok(true)
}

/// The clustering product, checked only when every clustering column is restricted by `=` or
/// `IN` (Cassandra builds clusterings then; slices are built as bounds and not checked).
pub(crate) fn clustering_product(
    limits: &Limits,
    layout: &KeyLayout,
    r: &Restrictions,
    ctx: &ExecContext,
) -> CqlResult<()> {
    let product = limits.in_select_cartesian_product();
    if !product.enabled() || r.clustering_slice.is_some() || r.multi_slice.is_some() {
        return Ok(());
    }
    let any_in = r
        .clustering_eq
        .iter()
        .any(|e| !matches!(e, Prefix::Column(Values::Eq(_))));
    if r.clustering_eq_columns() < layout.clustering_types.len() || !any_in {
        return Ok(());
    }
    let counts = r
        .clustering_eq
        .iter()
        .map(|entry| match entry {
            Prefix::Column(values) => count(values, ctx),
            Prefix::Tuples(tuples, _) => Ok(tuples.len()),
            Prefix::TupleList(list, _) => Ok(slices::bound_tuples(list, ctx)?.len()),
        })
        .collect::<CqlResult<Vec<_>>>()?;
    guard_products(&product, "clustering key", &counts, ctx).map(|_| ())
}

/// The partition key's product for a write (Cassandra checks it when it builds the keys).
pub(crate) fn partition_product(
    limits: &Limits,
    columns: &[Values],
    ctx: &ExecContext,
) -> CqlResult<()> {
    let product = limits.in_select_cartesian_product();
    if !product.enabled() || !has_in(columns) {
        return Ok(());
    }
    let counts = counts(columns, ctx)?;
    guard_products(&product, "partition key", &counts, ctx).map(|_| ())
}

fn has_in(columns: &[Values]) -> bool {
    columns
        .iter()
        .any(|v| matches!(v, Values::In(_) | Values::InList(_)))
}

/// How many values each column's restriction has, duplicates included.
fn counts(columns: &[Values], ctx: &ExecContext) -> CqlResult<Vec<usize>> {
    columns.iter().map(|values| count(values, ctx)).collect()
}

fn count(values: &Values, ctx: &ExecContext) -> CqlResult<usize> {
    Ok(match values {
        Values::Eq(_) => 1,
        Values::In(items) => items.len(),
        Values::InList(list) => match list.resolve(ctx)? {
            Resolved::Value(bytes) => collections::split(&bytes, false)?.len(),
            // A null list is refused when the keys are built; nothing to count here.
            _ => 1,
        },
    })
}

/// Checks the running product after each column, as Cassandra's `MultiCBuilder` grows; stops
/// (returning `false`) at an empty list, which selects nothing.
fn guard_products(
    threshold: &Threshold,
    what: &str,
    counts: &[usize],
    ctx: &ExecContext,
) -> CqlResult<bool> {
    let notice = ctx.notice();
    let mut product: i64 = 1;
    for count in counts {
        product = product.saturating_mul(*count as i64);
        threshold.guard(product, what, &notice)?;
        if product == 0 {
            return Ok(false);
        }
    }
    Ok(true)
}
