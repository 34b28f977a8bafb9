//! The guardrails on INSERT, UPDATE and DELETE, where Cassandra's ModificationStatement and its
//! operations apply them: user timestamps and list operations needing a read on the statement,
//! then at execution the write consistency levels, the timestamp bounds, the IN products of
//! the keys, and on each cell written the column value size and the collection guardrails.
use bytes::Bytes;
use cql::ast::{Assignment, Delete, DeleteTarget, Update};
use mutation::{Cell, ColumnValue, Mutation, Row};
use schema::{ColumnMetadata, TableMetadata};
use types::{Consistency, CqlResult, CqlType};

use super::check::{Notice, Threshold};
use super::reads;
use super::Limits;
use crate::exec::ExecContext;
use crate::modify::{ModifyPlan, WriteKind};
use crate::restrictions::PartitionSelection;

fn list_column<'a>(table: &'a TableMetadata, name: &str) -> Option<&'a ColumnMetadata> {
    table
        .column(name)
        .filter(|c| matches!(c.ty, CqlType::List(_)) && c.ty.is_multi_cell())
}

/// `l[i] = v` and `l = l - [v]` on a non-frozen list read the list first.
pub(crate) fn update_statement(
    limits: &Limits,
    table: &TableMetadata,
    s: &Update,
) -> CqlResult<()> {
    for a in &s.assignments {
        let feature = match a {
            Assignment::SetElement(name, ..) if list_column(table, name).is_some() => {
                "Setting of list items by index requiring read before write"
            }
            Assignment::Subtract(name, _) if list_column(table, name).is_some() => {
                "Removal of list items requiring read before write"
            }
            _ => continue,
        };
        let flag = limits.read_before_write_list_operations();
        flag.ensure_enabled_as(feature, &Notice::analysis())?;
    }
    Ok(())
}

/// `DELETE l[i]` on a non-frozen list reads the list first.
pub(crate) fn delete_statement(
    limits: &Limits,
    table: &TableMetadata,
    s: &Delete,
) -> CqlResult<()> {
    for target in &s.columns {
        if let DeleteTarget::Element(name, _) = target {
            if list_column(table, name).is_some() {
                let feature = "Removal of list items by index requiring read before write";
                let flag = limits.read_before_write_list_operations();
                flag.ensure_enabled_as(feature, &Notice::analysis())?;
            }
        }
    }
    Ok(())
}

/// `USING TIMESTAMP` on a statement (not on a whole batch), checked as Cassandra validates it.
pub(crate) fn user_timestamp(
    limits: &Limits,
    plan: &ModifyPlan,
    ctx: &ExecContext,
) -> CqlResult<()> {
    if plan.timestamp_set() {
        limits.user_timestamps().ensure_enabled(&ctx.notice())?;
    }
    Ok(())
}

/// The consistency and serial consistency levels of a write (SERIAL when none is given).
pub(crate) fn consistency(limits: &Limits, ctx: &ExecContext) -> CqlResult<()> {
    let serial = ctx.serial_consistency.unwrap_or(Consistency::Serial);
    let levels = config::ConsistencyLevels::of(&[ctx.consistency as u16, serial as u16]);
    limits
        .write_consistency_levels()
        .guard(levels, &ctx.notice())
}

/// A single statement's `USING TIMESTAMP` against the timestamp bounds (batches skip this, as
/// in Cassandra).
pub(crate) fn timestamp_bounds(
    limits: &Limits,
    plan: &ModifyPlan,
    ctx: &ExecContext,
) -> CqlResult<()> {
    let (maximum, minimum) = (
        limits.maximum_timestamp(ctx.now_micros),
        limits.minimum_timestamp(ctx.now_micros),
    );
    if !plan.timestamp_set() || !(maximum.enabled() || minimum.enabled()) {
        return Ok(());
    }
    let ts = plan.timestamp(ctx)?;
    let table = &plan.table().name;
    maximum.guard(ts, table, &ctx.notice())?;
    minimum.guard(ts, table, &ctx.notice())
}

/// The IN products of the keys a statement writes, before its mutations are built.
pub(crate) fn keys(limits: &Limits, plan: &ModifyPlan, ctx: &ExecContext) -> CqlResult<()> {
    let restrictions = plan.restrictions();
    if let PartitionSelection::Keys(columns) = &restrictions.partition {
        reads::partition_product(limits, columns, ctx)?;
    }
    reads::clustering_product(limits, &plan.layout, restrictions, ctx)
}

/// The cells a statement writes: each value and element key against `column_value_size`, and
/// whole collections set or added to against `items_per_collection` and `collection_size`.
/// Rows are checked one by one, as Cassandra runs the operations once per row.
pub(crate) fn cells(
    limits: &Limits,
    plan: &ModifyPlan,
    mutations: &[Mutation],
    ctx: &ExecContext,
) -> CqlResult<()> {
    let guards = CellGuards {
        value: limits.column_value_size(),
        items: limits.items_per_collection(),
        size: limits.collection_size(),
        notice: ctx.notice(),
    };
    if !(guards.value.enabled() || guards.items.enabled() || guards.size.enabled()) {
        return Ok(());
    }
    for m in mutations {
        for row in m.update.static_row.iter().chain(&m.update.rows) {
            guards.row(plan, row)?;
        }
    }
    Ok(())
}

struct CellGuards<'a> {
    value: Threshold,
    items: Threshold,
    size: Threshold,
    notice: Notice<'a>,
}

impl CellGuards<'_> {
    fn row(&self, plan: &ModifyPlan, row: &Row) -> CqlResult<()> {
        for (column, kind) in plan.writes() {
            let Some(data) = row.column(column.name.as_bytes()) else {
                continue;
            };
            let whole = kind == WriteKind::Whole && is_collection(&column.ty);
            match &data.value {
                ColumnValue::Simple(cell) => self.simple(&column.name, cell, whole)?,
                ColumnValue::Complex(c) => self.complex(&column.name, &c.cells, whole)?,
            }
        }
        Ok(())
    }

    /// A frozen collection is counted and sized as one cell.
    fn simple(&self, name: &str, cell: &Cell, whole: bool) -> CqlResult<()> {
        let Some(value) = &cell.value else {
            return Ok(());
        };
        if whole {
            self.items.guard(element_count(value), name, &self.notice)?;
        }
        self.value.guard(value.len() as i64, name, &self.notice)?;
        if whole {
            self.size
                .guard(cell.data_size() as i64, name, &self.notice)?;
        }
        Ok(())
    }

    /// A non-frozen collection's elements: only those this statement writes are counted.
    fn complex(&self, name: &str, cells: &[Cell], whole: bool) -> CqlResult<()> {
        let whole = whole && !cells.is_empty();
        if whole {
            self.items.guard(cells.len() as i64, name, &self.notice)?;
        }
        let mut size = 0;
        for cell in cells {
            if let Some(value) = &cell.value {
                self.value.guard(value.len() as i64, name, &self.notice)?;
            }
            let path = cell.path.as_ref().map_or(0, Bytes::len);
            self.value.guard(path as i64, name, &self.notice)?;
            size += cell.data_size();
        }
        if whole {
            self.size.guard(size as i64, name, &self.notice)?;
        }
        Ok(())
    }
}

fn is_collection(ty: &CqlType) -> bool {
    matches!(
        ty.unfrozen(),
        CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)
    )
}

/// The element count a serialized collection starts with.
fn element_count(value: &[u8]) -> i64 {
    value
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, |b| i64::from(i32::from_be_bytes(b)))
}
