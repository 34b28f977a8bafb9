//! Multi-column relations on clustering columns: `(a, b) > (1, 2)`, `(a, b) IN ((1, 2))`.
//! Relations sharing a column merge as Cassandra's RestrictionSet merges them: slices that
//! start on the same column become one slice (each bound keeps its own tuple, so
//! `(a, b) > (1, 2) AND (a) < (3)` is one slice), anything else sharing a column is refused
//! with Cassandra's messages. `(a, b) = (x, y)` is not here: it restricts as single-column
//! equalities do.
use cql::ast::{Operator, Term};
use schema::{ColumnMetadata, TableMetadata};
use types::{CqlError, CqlResult, CqlType};

use crate::columns::{column, spec};
use crate::operand::{Binder, Operand};
use crate::restrictions::{MultiSlice, Prefix, Slice, TupleBound, Values};
use crate::terms;

/// One multi-column relation as written.
pub(crate) type Written = (Vec<String>, Operator, Term);

/// Merged multi-column relations over clustering positions `first..first + names.len()`.
pub(crate) struct Group {
    pub first: usize,
    pub names: Vec<String>,
    pub kind: GroupKind,
}

pub(crate) enum GroupKind {
    /// `IN` (a `Prefix::Tuples` or `Prefix::TupleList`).
    In(Prefix),
    Slice(MultiSlice),
}

impl Group {
    fn covers(&self, position: usize) -> bool {
        (self.first..self.first + self.names.len()).contains(&position)
    }
}

/// Analyses and merges the multi-column `IN` and slice relations, in statement order.
pub(crate) fn groups(
    table: &TableMetadata,
    written: Vec<Written>,
    equalities: &[Vec<String>],
    binder: &mut Binder,
) -> CqlResult<Vec<Group>> {
    let mut out: Vec<Group> = Vec::new();
    for (names, op, value) in written {
        if equalities.contains(&names) {
            return Err(CqlError::invalid(format!(
                "{} cannot be restricted by more than one relation if it includes an Equal",
                names.join(" ,")
            )));
        }
        let first = check_order(table, &names, op, &value)?;
        let shared = out
            .iter()
            .position(|g| (first..first + names.len()).any(|p| g.covers(p)));
        let Some(index) = shared else {
            let kind = analyze(table, &names, op, value, binder)?;
            out.push(Group { first, names, kind });
            continue;
        };
        let group = &mut out[index];
        let common = common_columns(&group.names, &names);
        let bound = match (&mut group.kind, op) {
            (GroupKind::Slice(_), Operator::In) => {
                return Err(CqlError::invalid(format!(
                    "Column \"{common}\" cannot be restricted by both an equality and an inequality relation"
                )))
            }
            (GroupKind::In(_), _) => {
                return Err(CqlError::invalid(format!(
                    "{common} cannot be restricted by more than one relation if it includes an Equal"
                )))
            }
            (GroupKind::Slice(slice), _) => slice,
        };
        if group.first != first {
            let later = table
                .clustering_columns()
                .nth(group.first.max(first))
                .map_or("", |c| c.name.as_str());
            return Err(not_same_start(later));
        }
        let tuple = operands(table, &names, value, binder)?;
        add_bound(bound, op, tuple, &common)?;
        if names.len() > group.names.len() {
            group.names = names;
        }
    }
    Ok(out)
}

/// Merges single-column slices into the multi-column slices that start on their column and
/// refuses single-column restrictions on the other columns of a multi-column relation.
pub(crate) fn merge_single(
    groups: &mut [Group],
    columns: &[&ColumnMetadata],
    eq: &[Option<Values>],
    slices: &mut [Option<Slice>],
) -> CqlResult<()> {
    for group in groups.iter_mut() {
        for position in group.first..group.first + group.names.len() {
            let name = columns[position].name.as_str();
            if eq[position].is_some() {
                return Err(CqlError::invalid(format!(
                    "{name} cannot be restricted by more than one relation if it includes an Equal"
                )));
            }
            let Some(single) = slices[position].take() else {
                continue;
            };
            let GroupKind::Slice(bounds) = &mut group.kind else {
                return Err(CqlError::invalid(format!(
                    "{name} cannot be restricted by more than one relation if it includes an Equal"
                )));
            };
            if position != group.first {
                return Err(not_same_start(name));
            }
            for (value, op) in [(single.start, Operator::Gt), (single.end, Operator::Lt)] {
                if let Some((operand, inclusive)) = value {
                    let op = match (op, inclusive) {
                        (Operator::Gt, true) => Operator::Gte,
                        (Operator::Lt, true) => Operator::Lte,
                        (op, _) => op,
                    };
                    add_bound(bounds, op, vec![operand], name)?;
                }
            }
        }
    }
    Ok(())
}

fn not_same_start(column: &str) -> CqlError {
    CqlError::invalid(format!(
        "Column \"{column}\" cannot be restricted by two inequalities not starting with the same column"
    ))
}

/// The columns two relations share, listed as Cassandra lists them.
fn common_columns(a: &[String], b: &[String]) -> String {
    let common: Vec<&str> = a
        .iter()
        .filter(|n| b.contains(n))
        .map(String::as_str)
        .collect();
    common.join(" ,")
}

fn analyze(
    table: &TableMetadata,
    names: &[String],
    op: Operator,
    value: Term,
    binder: &mut Binder,
) -> CqlResult<GroupKind> {
    if op == Operator::In {
        return tuples(table, names, value, binder).map(GroupKind::In);
    }
    let mut slice = MultiSlice::default();
    let tuple = operands(table, names, value, binder)?;
    add_bound(&mut slice, op, tuple, &names.join(", "))?;
    Ok(GroupKind::Slice(slice))
}

fn add_bound(
    slice: &mut MultiSlice,
    op: Operator,
    tuple: Vec<Operand>,
    listed: &str,
) -> CqlResult<()> {
    let (slot, which, inclusive): (&mut TupleBound, _, _) = match op {
        Operator::Gt => (&mut slice.start, "start", false),
        Operator::Gte => (&mut slice.start, "start", true),
        Operator::Lt => (&mut slice.end, "end", false),
        Operator::Lte => (&mut slice.end, "end", true),
        _ => return Err(CqlError::invalid("Unsupported multi-column relation")),
    };
    if slot.is_some() {
        return Err(CqlError::invalid(format!(
            "More than one restriction was found for the {which} bound on {listed}"
        )));
    }
    *slot = Some((tuple, inclusive));
    Ok(())
}

fn tuples(
    table: &TableMetadata,
    names: &[String],
    value: Term,
    binder: &mut Binder,
) -> CqlResult<Prefix> {
    let Term::List(items) = value else {
        let tuple = CqlType::Tuple(types_of(table, names)?);
        let list = CqlType::List(Box::new(tuple));
        let operand = terms::analyze(&value, &spec(table, &tuple_name(names), list), binder)?;
        return Ok(Prefix::TupleList(operand, names.len()));
    };
    items
        .into_iter()
        .map(|t| operands(table, names, t, binder))
        .collect::<CqlResult<Vec<_>>>()
        .map(|tuples| Prefix::Tuples(tuples, names.len()))
}

/// The position of the relation's first column, once its columns are checked to follow each
/// other in primary key order.
fn check_order(
    table: &TableMetadata,
    names: &[String],
    op: Operator,
    value: &Term,
) -> CqlResult<usize> {
    let cols: Vec<&ColumnMetadata> = table.clustering_columns().collect();
    let first = cols
        .iter()
        .position(|c| Some(&c.name) == names.first())
        .unwrap_or(0);
    for (i, name) in names.iter().enumerate() {
        if cols.get(first + i).map(|c| &c.name) != Some(name) {
            return Err(CqlError::invalid(format!(
                "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: {}",
                relation_text(names, op, value)
            )));
        }
    }
    Ok(first)
}

/// `(a, b) = (x, y)`'s values, once its columns are checked to follow each other.
pub(crate) fn equality(
    table: &TableMetadata,
    names: &[String],
    value: &Term,
    binder: &mut Binder,
) -> CqlResult<Vec<Operand>> {
    check_order(table, names, Operator::Eq, value)?;
    operands(table, names, value.clone(), binder)
}

/// A multi-column relation as Cassandra prints it in messages: `(a, b) > (1, 2)`.
pub(crate) fn relation_text(names: &[String], op: Operator, value: &Term) -> String {
    let op = crate::restrictions::operator_text(op);
    let value = match value {
        Term::List(items) if op == "IN" => {
            let items: Vec<String> = items.iter().map(terms::term_text).collect();
            format!("({})", items.join(", "))
        }
        other => terms::term_text(other),
    };
    format!("({}) {op} {value}", names.join(", "))
}

/// The types of the columns of a multi-column relation.
fn types_of(table: &TableMetadata, names: &[String]) -> CqlResult<Vec<CqlType>> {
    names
        .iter()
        .map(|name| column(table, name).map(|c| c.ty.clone()))
        .collect()
}

/// A tuple bind marker's name, as Cassandra names it: `(a,b)`.
fn tuple_name(names: &[String]) -> String {
    format!("({})", names.join(","))
}

fn operands(
    table: &TableMetadata,
    names: &[String],
    value: Term,
    binder: &mut Binder,
) -> CqlResult<Vec<Operand>> {
    if matches!(value, Term::Bind(_)) {
        let tuple = CqlType::Tuple(types_of(table, names)?);
        let operand = terms::analyze(&value, &spec(table, &tuple_name(names), tuple), binder)?;
        let fields = (0..names.len()).map(|i| Operand::Field(Box::new(operand.clone()), i));
        return Ok(fields.collect());
    }
    let items = match value {
        Term::Tuple(items) if items.len() == names.len() => items,
        other => {
            let count = if let Term::Tuple(items) = &other {
                items.len()
            } else {
                1
            };
            return Err(CqlError::invalid(format!(
                "Expected {} elements in value tuple, but got {count}: {}",
                names.len(),
                terms::term_text(&other)
            )));
        }
    };
    names
        .iter()
        .zip(&items)
        .map(|(name, t)| {
            let col = column(table, name)?;
            terms::analyze(t, &spec(table, &col.name, col.ty.clone()), binder)
        })
        .collect()
}
