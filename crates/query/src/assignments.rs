//! The items of UPDATE's SET and DELETE's column list analysed into per-column operations,
//! with Cassandra's checks and messages (`Operation.RawUpdate` and `RawDeletion`): whole
//! values, counter deltas, collection additions and removals, map and list elements, and
//! fields of non-frozen user types.
use cql::ast::{Assignment, DeleteTarget, Term};
use schema::{ColumnMetadata, TableMetadata};
use types::{CqlError, CqlResult, CqlType, NativeType};

use crate::calls::arg_text;
use crate::columns::{column, spec};
use crate::operand::{Binder, Operand};
use crate::terms::{self, term_text};

/// One change to one column.
#[derive(Clone, Debug)]
pub enum Op {
    Set(ColumnMetadata, Operand),
    /// Counter increment, set add, map put, list append.
    Add(ColumnMetadata, Operand),
    /// Counter decrement; set, map (by key) and list (by value) removal.
    Subtract(ColumnMetadata, Operand),
    /// `m[k] = v`.
    Put(ColumnMetadata, Operand, Operand),
    /// `l[i] = v`: needs the list as stored.
    SetIndex(ColumnMetadata, Operand, Operand),
    /// `u.f = v`: field `usize` of a non-frozen UDT.
    SetField(ColumnMetadata, usize, Operand),
    Delete(ColumnMetadata),
    /// `DELETE m[k]`, `DELETE s[e]`.
    DeleteElement(ColumnMetadata, Operand),
    /// `DELETE l[i]`: needs the list as stored.
    DeleteIndex(ColumnMetadata, Operand),
    /// `DELETE u.f`.
    DeleteField(ColumnMetadata, usize),
    /// `l = [..] + l`.
    Prepend(ColumnMetadata, Operand),
}

impl Op {
    pub fn column(&self) -> &ColumnMetadata {
        match self {
            Op::Set(c, _)
            | Op::Add(c, _)
            | Op::Subtract(c, _)
            | Op::Put(c, _, _)
            | Op::SetIndex(c, _, _)
            | Op::SetField(c, _, _)
            | Op::Delete(c)
            | Op::DeleteElement(c, _)
            | Op::DeleteIndex(c, _)
            | Op::DeleteField(c, _)
            | Op::Prepend(c, _) => c,
        }
    }

    /// Whether the operation needs the column's current cells (list positions and removal
    /// of list elements by value read the list first, as Cassandra does).
    pub fn reads_existing(&self) -> bool {
        match self {
            Op::SetIndex(..) | Op::DeleteIndex(..) => true,
            Op::Subtract(c, _) => matches!(c.ty, CqlType::List(_)),
            _ => false,
        }
    }
}

/// One `SET` item of an UPDATE.
pub fn assignment(table: &TableMetadata, a: &Assignment, binder: &mut Binder) -> CqlResult<Op> {
    let name = match a {
        Assignment::Set(n, _)
        | Assignment::SetElement(n, _, _)
        | Assignment::SetField(n, _, _)
        | Assignment::Add(n, _)
        | Assignment::Subtract(n, _)
        | Assignment::Prepend(n, _) => n,
    };
    let col = column(table, name)?.clone();
    if col.kind.is_primary_key() {
        return Err(CqlError::invalid(format!(
            "PRIMARY KEY part {} found in SET part",
            col.name
        )));
    }
    match a {
        Assignment::Set(_, term) => set(table, col, term, binder),
        Assignment::Add(_, term) => add_or_subtract(table, col, term, '+', binder),
        Assignment::Subtract(_, term) => add_or_subtract(table, col, term, '-', binder),
        Assignment::SetElement(_, key, value) => set_element(table, col, key, value, binder),
        Assignment::SetField(_, field, value) => set_field(table, col, field, value, binder),
        Assignment::Prepend(_, term) => prepend(table, col, term, binder),
    }
}

fn set(
    table: &TableMetadata,
    col: ColumnMetadata,
    term: &Term,
    binder: &mut Binder,
) -> CqlResult<Op> {
    if col.ty.is_counter() {
        return Err(CqlError::invalid(format!(
            "Cannot set the value of counter column {} (counters can only be incremented/decremented, not set)",
            col.name
        )));
    }
    let operand = terms::analyze(term, &spec(table, &col.name, col.ty.clone()), binder)?;
    Ok(Op::Set(col, operand))
}

/// `c = c + v` / `c = c - v` (and `+=`, `-=`).
fn add_or_subtract(
    table: &TableMetadata,
    col: ColumnMetadata,
    term: &Term,
    sign: char,
    binder: &mut Binder,
) -> CqlResult<Op> {
    let shown = format!("{0} = {0} {sign} {1}", col.name, arg_text(term));
    let receiver = spec(table, &col.name, col.ty.clone());
    if !col.ty.is_collection() {
        if !col.ty.is_counter() {
            return Err(CqlError::invalid(format!(
                "Invalid operation ({shown}) for non counter column {}",
                col.name
            )));
        }
        // Cassandra binds a counter delta as the counter column itself.
        let operand = terms::analyze(term, &receiver, binder)?;
        return Ok(counter_op(col, operand, sign));
    }
    if !col.ty.is_multi_cell() {
        return Err(CqlError::invalid(format!(
            "Invalid operation ({shown}) for frozen collection column {}",
            col.name
        )));
    }
    let operand = match (&col.ty, sign) {
        // `m = m - {k1, k2}` removes map entries by key.
        (CqlType::Map(key, _), '-') => {
            let keys = spec(table, &col.name, CqlType::Set(key.clone()));
            terms::analyze(term, &keys, binder).map_err(|_| {
                CqlError::invalid(format!(
                    "Value for a map substraction has to be a set, but was: '{}'",
                    term_text(term)
                ))
            })?
        }
        (CqlType::Map(..), _) => terms::analyze(term, &receiver, binder).map_err(|_| {
            CqlError::invalid(format!(
                "Value for a map addition has to be a map, but was: '{}'",
                term_text(term)
            ))
        })?,
        _ => terms::analyze(term, &receiver, binder)?,
    };
    Ok(counter_op(col, operand, sign))
}

fn counter_op(col: ColumnMetadata, operand: Operand, sign: char) -> Op {
    if sign == '+' {
        Op::Add(col, operand)
    } else {
        Op::Subtract(col, operand)
    }
}

/// `m[k] = v` or `l[i] = v`.
fn set_element(
    table: &TableMetadata,
    col: ColumnMetadata,
    key: &Term,
    value: &Term,
    binder: &mut Binder,
) -> CqlResult<Op> {
    let shown = format!("{}[{}] = {}", col.name, term_text(key), term_text(value));
    collection_target(&col, &shown, "Invalid operation", "frozen collection")?;
    let named =
        |what: &str, ty: &CqlType| spec(table, &format!("{what}({})", col.name), ty.clone());
    match col.ty.clone() {
        CqlType::List(elem) => {
            let index = terms::analyze(key, &named("idx", &int()), binder)?;
            let value = terms::analyze(value, &named("value", &elem), binder)?;
            Ok(Op::SetIndex(col, index, value))
        }
        CqlType::Map(k, v) => {
            let key = terms::analyze(key, &named("key", &k), binder)?;
            let value = terms::analyze(value, &named("value", &v), binder)?;
            Ok(Op::Put(col, key, value))
        }
        _ => Err(CqlError::invalid(format!(
            "Invalid operation ({shown}) for set column {}",
            col.name
        ))),
    }
}

fn int() -> CqlType {
    CqlType::Native(NativeType::Int)
}

/// Checks that `col` is a non-frozen collection, with Cassandra's two messages otherwise:
/// `{prefix} ({shown}) for non collection column c` and `... for {frozen} column c` (without
/// `shown` when it is empty).
fn collection_target(
    col: &ColumnMetadata,
    shown: &str,
    prefix: &str,
    frozen: &str,
) -> CqlResult<()> {
    let what = if shown.is_empty() {
        prefix.to_string()
    } else {
        format!("{prefix} ({shown})")
    };
    if !col.ty.is_collection() {
        return Err(CqlError::invalid(format!(
            "{what} for non collection column {}",
            col.name
        )));
    }
    if !col.ty.is_multi_cell() {
        return Err(CqlError::invalid(format!(
            "{what} for {frozen} column {}",
            col.name
        )));
    }
    Ok(())
}

/// `u.f = v` on a non-frozen UDT column.
fn set_field(
    table: &TableMetadata,
    col: ColumnMetadata,
    field: &str,
    value: &Term,
    binder: &mut Binder,
) -> CqlResult<Op> {
    let shown = format!("{}.{field} = {}", col.name, term_text(value));
    let CqlType::Udt(udt) = col.ty.unfrozen() else {
        return Err(CqlError::invalid(format!(
            "Invalid operation ({shown}) for non-UDT column {}",
            col.name
        )));
    };
    if !col.ty.is_multi_cell() {
        return Err(CqlError::invalid(format!(
            "Invalid operation ({shown}) for frozen UDT column {}",
            col.name
        )));
    }
    let index = field_position(&col, &udt.fields, field)?;
    let receiver = spec(
        table,
        &format!("{}.{field}", col.name),
        udt.fields[index].1.clone(),
    );
    let operand = terms::analyze(value, &receiver, binder)?;
    Ok(Op::SetField(col, index, operand))
}

fn field_position(
    col: &ColumnMetadata,
    fields: &[(String, CqlType)],
    field: &str,
) -> CqlResult<usize> {
    fields.iter().position(|(f, _)| f == field).ok_or_else(|| {
        CqlError::invalid(format!(
            "UDT column {} does not have a field named {field}",
            col.name
        ))
    })
}

/// `l = [..] + l`.
fn prepend(
    table: &TableMetadata,
    col: ColumnMetadata,
    term: &Term,
    binder: &mut Binder,
) -> CqlResult<Op> {
    if !matches!(col.ty, CqlType::List(_)) {
        // Cassandra 5.0 prints a prepend as `c = v - c` in this message.
        let kind = match col.ty.unfrozen() {
            CqlType::List(_) => "frozen list",
            _ => "non list",
        };
        return Err(CqlError::invalid(format!(
            "Invalid operation ({} = {} - {}) for {kind} column {}",
            col.name,
            term_text(term),
            col.name,
            col.name
        )));
    }
    let operand = terms::analyze(term, &spec(table, &col.name, col.ty.clone()), binder)?;
    Ok(Op::Prepend(col, operand))
}

/// One deleted item of a DELETE.
pub fn delete_target(
    table: &TableMetadata,
    target: &DeleteTarget,
    binder: &mut Binder,
) -> CqlResult<Op> {
    let name = match target {
        DeleteTarget::Column(n) | DeleteTarget::Element(n, _) | DeleteTarget::Field(n, _) => n,
    };
    let col = column(table, name)?.clone();
    if col.kind.is_primary_key() {
        return Err(CqlError::invalid(format!(
            "Invalid identifier {} for deletion (should not be a PRIMARY KEY part)",
            col.name
        )));
    }
    match target {
        DeleteTarget::Column(_) => Ok(Op::Delete(col)),
        DeleteTarget::Element(_, term) => delete_element(table, col, term, binder),
        DeleteTarget::Field(_, field) => delete_field(col, field),
    }
}

fn delete_element(
    table: &TableMetadata,
    col: ColumnMetadata,
    term: &Term,
    binder: &mut Binder,
) -> CqlResult<Op> {
    collection_target(&col, "", "Invalid deletion operation", "frozen collection")?;
    let named = |what: &str, ty: CqlType| spec(table, &format!("{what}({})", col.name), ty);
    match col.ty.clone() {
        CqlType::List(_) => {
            let index = terms::analyze(term, &named("idx", int()), binder)?;
            Ok(Op::DeleteIndex(col, index))
        }
        CqlType::Set(e) => {
            let element = terms::analyze(term, &named("value", *e), binder)?;
            Ok(Op::DeleteElement(col, element))
        }
        CqlType::Map(k, _) => {
            let key = terms::analyze(term, &named("key", *k), binder)?;
            Ok(Op::DeleteElement(col, key))
        }
        _ => Err(CqlError::invalid(format!(
            "Invalid deletion operation for non collection column {}",
            col.name
        ))),
    }
}

fn delete_field(col: ColumnMetadata, field: &str) -> CqlResult<Op> {
    let CqlType::Udt(udt) = col.ty.unfrozen() else {
        return Err(CqlError::invalid(format!(
            "Invalid field deletion operation for non-UDT column {}",
            col.name
        )));
    };
    if !col.ty.is_multi_cell() {
        return Err(CqlError::invalid(format!(
            "Frozen UDT column {} does not support field deletions",
            col.name
        )));
    }
    let index = field_position(&col, &udt.fields, field)?;
    Ok(Op::DeleteField(col, index))
}
