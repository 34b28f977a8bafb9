//! IF clauses of INSERT, UPDATE, DELETE and conditional BATCH (Cassandra's `ColumnCondition`,
//! `ColumnConditions` and `Conditions`): analysis against the table with Cassandra's checks and
//! messages. [`bound`] binds them to an execution's values and evaluates them against the rows
//! a lightweight transaction read.
pub mod bound;

use cql::ast::{Condition, ConditionTarget, Conditions as Parsed, Operator, Term};
use schema::{ColumnKind, ColumnMetadata, TableMetadata};
use types::{CqlError, CqlResult, CqlType, NativeType};

use crate::columns::{column, spec};
use crate::operand::{Binder, Operand};
use crate::terms;

/// An analysed IF clause.
#[derive(Debug)]
pub enum Conditions {
    /// `IF EXISTS`.
    Exists,
    /// `IF NOT EXISTS`.
    NotExists,
    /// `IF a = 1 AND …`: those on regular columns first, then those on static columns, each
    /// in IF order (the order of the columns a failed update returns).
    Columns(Vec<ColumnCondition>),
}

impl Conditions {
    /// Whether a condition tests a regular (non-static) column.
    pub fn on_regular_columns(&self) -> bool {
        self.columns().any(|c| c.kind != ColumnKind::Static)
    }

    /// Whether this is `IF EXISTS` or `IF NOT EXISTS`.
    pub fn is_existence(&self) -> bool {
        !matches!(self, Conditions::Columns(_))
    }

    /// The columns conditions test, in result order (duplicates kept).
    pub fn columns(&self) -> impl Iterator<Item = &ColumnMetadata> {
        let conditions: &[ColumnCondition] = match self {
            Conditions::Columns(c) => c,
            _ => &[],
        };
        conditions.iter().map(|c| &c.column)
    }
}

/// One `IF` condition on a column, an element of a collection or a field of a UDT.
#[derive(Debug)]
pub struct ColumnCondition {
    pub column: ColumnMetadata,
    access: Access,
    op: Operator,
    values: Values,
}

/// What part of the column a condition tests.
#[derive(Debug)]
enum Access {
    Whole,
    /// `l[i]`, `m[k]`.
    Element(Operand),
    /// `u.f`: the field's position.
    Field(usize),
}

/// The values a condition compares with.
#[derive(Debug)]
enum Values {
    One(Operand),
    /// `IN (a, b)`.
    List(Vec<Operand>),
    /// `IN ?`.
    Marker(Operand),
}

/// Analyses a statement's IF clause; `Ok(None)` when it has none.
pub fn analyze(
    table: &TableMetadata,
    parsed: Option<&Parsed>,
    if_not_exists: bool,
    timestamp_set: bool,
    binder: &mut Binder,
) -> CqlResult<Option<Conditions>> {
    let conditions = match parsed {
        _ if if_not_exists => Conditions::NotExists,
        None => return Ok(None),
        Some(Parsed::Exists) => Conditions::Exists,
        Some(Parsed::Columns(list)) => {
            if timestamp_set {
                return Err(timestamp_refused());
            }
            let mut out = Vec::with_capacity(list.len());
            for c in list {
                out.push(analyze_one(table, c, binder)?);
            }
            // Stable: regular columns' conditions keep their order, then the static ones.
            out.sort_by_key(|c| c.column.kind == ColumnKind::Static);
            Conditions::Columns(out)
        }
    };
    if table.is_counter() {
        return Err(CqlError::invalid(
            "Conditional updates are not supported on counter tables",
        ));
    }
    if timestamp_set {
        return Err(timestamp_refused());
    }
    Ok(Some(conditions))
}

fn timestamp_refused() -> CqlError {
    CqlError::invalid("Cannot provide custom timestamp for conditional updates")
}

fn analyze_one(
    table: &TableMetadata,
    c: &Condition,
    binder: &mut Binder,
) -> CqlResult<ColumnCondition> {
    let name = match &c.target {
        ConditionTarget::Column(n)
        | ConditionTarget::Element(n, _)
        | ConditionTarget::Field(n, _) => n,
    };
    let col = column(table, name)?.clone();
    if col.ty.is_counter() {
        return Err(CqlError::invalid(
            "Conditions on counters are not supported",
        ));
    }
    let (access, receiver, receiver_type) = match &c.target {
        ConditionTarget::Column(_) => (Access::Whole, col.name.clone(), col.ty.clone()),
        ConditionTarget::Element(_, element) => element_access(table, &col, element, binder)?,
        ConditionTarget::Field(_, field) => field_access(&col, field)?,
    };
    check_durations(&receiver_type, c.op)?;
    let values = analyze_values(table, &receiver, &receiver_type, c, binder)?;
    if col.kind.is_primary_key() {
        return Err(CqlError::invalid(format!(
            "PRIMARY KEY column '{}' cannot have IF conditions",
            col.name
        )));
    }
    Ok(ColumnCondition {
        column: col,
        access,
        op: c.op,
        values,
    })
}

/// `l[i]` or `m[k]`: the access, and the name and type of the values compared.
fn element_access(
    table: &TableMetadata,
    col: &ColumnMetadata,
    element: &Term,
    binder: &mut Binder,
) -> CqlResult<(Access, String, CqlType)> {
    let (element_spec, value_spec) = match col.ty.unfrozen() {
        CqlType::List(e) => (
            spec(
                table,
                &format!("idx({})", col.name),
                CqlType::Native(NativeType::Int),
            ),
            spec(table, &format!("value({})", col.name), (**e).clone()),
        ),
        CqlType::Map(k, v) => (
            spec(table, &format!("key({})", col.name), (**k).clone()),
            spec(table, &format!("value({})", col.name), (**v).clone()),
        ),
        CqlType::Set(_) => {
            return Err(CqlError::invalid(format!(
                "Invalid element access syntax for set column {}",
                col.name
            )))
        }
        _ => {
            return Err(CqlError::invalid(format!(
                "Invalid element access syntax for non-collection column {}",
                col.name
            )))
        }
    };
    let element = terms::analyze(element, &element_spec, binder)?;
    Ok((Access::Element(element), value_spec.name, value_spec.ty))
}

/// `u.f`: the access, and the name and type of the values compared.
fn field_access(col: &ColumnMetadata, field: &str) -> CqlResult<(Access, String, CqlType)> {
    let CqlType::Udt(udt) = col.ty.unfrozen() else {
        return Err(CqlError::invalid(format!(
            "Invalid field access syntax for non-UDT column {}",
            col.name
        )));
    };
    let Some(position) = udt.fields.iter().position(|(name, _)| name == field) else {
        return Err(CqlError::invalid(format!(
            "Unknown field {field} for column {}",
            col.name
        )));
    };
    let ty = udt.fields[position].1.clone();
    Ok((Access::Field(position), format!("{}.{field}", col.name), ty))
}

/// Cassandra refuses `<`, `<=`, `>`, `>=` on durations and on values holding them.
fn check_durations(ty: &CqlType, op: Operator) -> CqlResult<()> {
    let slice = matches!(
        op,
        Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte
    );
    if !slice || !references_duration(ty) {
        return Ok(());
    }
    let message = match ty.unfrozen() {
        CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) => {
            "Slice conditions are not supported on collections containing durations".to_string()
        }
        CqlType::Tuple(_) => {
            "Slice conditions are not supported on tuples containing durations".to_string()
        }
        CqlType::Udt(_) => {
            "Slice conditions are not supported on UDTs containing durations".to_string()
        }
        _ => format!(
            "Slice conditions ( {} ) are not supported on durations",
            operator_text(op)
        ),
    };
    Err(CqlError::invalid(message))
}

fn references_duration(ty: &CqlType) -> bool {
    match ty {
        CqlType::Native(n) => *n == NativeType::Duration,
        CqlType::List(e) | CqlType::Set(e) | CqlType::Frozen(e) | CqlType::Vector(e, _) => {
            references_duration(e)
        }
        CqlType::Map(k, v) => references_duration(k) || references_duration(v),
        CqlType::Tuple(items) => items.iter().any(references_duration),
        CqlType::Udt(udt) => udt.fields.iter().any(|(_, t)| references_duration(t)),
        CqlType::Custom(_) => false,
    }
}

/// The condition's values, analysed against the receiver (`IN` values one by one, as
/// Cassandra prepares them: a null among them is allowed).
fn analyze_values(
    table: &TableMetadata,
    receiver: &str,
    ty: &CqlType,
    c: &Condition,
    binder: &mut Binder,
) -> CqlResult<Values> {
    let element_of = |key: bool| match ty.unfrozen() {
        CqlType::Map(k, _) if key => Some(("key", (**k).clone())),
        CqlType::List(e) | CqlType::Set(e) | CqlType::Map(_, e) if !key => {
            Some(("value", (**e).clone()))
        }
        _ => None,
    };
    let receiver_spec = match c.op {
        Operator::ContainsKey | Operator::Contains => {
            let key = c.op == Operator::ContainsKey;
            let Some((part, element)) = element_of(key) else {
                let (what, kind) = if key {
                    ("CONTAINS KEY", "non-map")
                } else {
                    ("CONTAINS", "non-collection")
                };
                return Err(CqlError::invalid(format!(
                    "Cannot use {what} on {kind} column {receiver}"
                )));
            };
            spec(table, &format!("{part}({receiver})"), element)
        }
        _ => spec(table, receiver, ty.clone()),
    };
    match (c.op, &c.value) {
        (Operator::In, Term::List(items) | Term::Tuple(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(terms::analyze(item, &receiver_spec, binder)?);
            }
            Ok(Values::List(out))
        }
        (Operator::In, marker) => {
            let list = CqlType::List(Box::new(ty.clone()));
            let in_spec = spec(table, &format!("in({receiver})"), list);
            Ok(Values::Marker(terms::analyze(marker, &in_spec, binder)?))
        }
        (Operator::Like, _) => Err(CqlError::invalid(format!(
            "Unsupported operator LIKE in condition on column {receiver}"
        ))),
        (_, value) => Ok(Values::One(terms::analyze(value, &receiver_spec, binder)?)),
    }
}

/// How Cassandra writes an operator in its messages.
pub(crate) fn operator_text(op: Operator) -> &'static str {
    match op {
        Operator::Eq => "=",
        Operator::Neq => "!=",
        Operator::Lt => "<",
        Operator::Lte => "<=",
        Operator::Gt => ">",
        Operator::Gte => ">=",
        Operator::In => "IN",
        Operator::Contains => "CONTAINS",
        Operator::ContainsKey => "CONTAINS KEY",
        Operator::Like => "LIKE",
    }
}
