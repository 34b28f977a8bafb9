//! Conditions bound to an execution's values (Cassandra's `ColumnCondition.Bound`), and their
//! evaluation against a row as a lightweight transaction read it: null semantics, element and
//! field access, whole collections compared element by element, `IN`, `CONTAINS`.
use std::cmp::Ordering;

use bytes::Bytes;
use cql::ast::Operator;
use mutation::{Cell, PartitionKey, Row};
use types::comparable::compare;
use types::{CqlError, CqlResult, CqlType};

use super::{operator_text, Access, ColumnCondition, Values};
use crate::collections;
use crate::exec::ExecContext;
use crate::operand::Resolved;
use crate::rows::RowView;

/// A condition with its values resolved.
#[derive(Debug)]
pub struct BoundCondition<'a> {
    condition: &'a ColumnCondition,
    /// The list index or map key of an element access.
    element: Option<Bytes>,
    /// The values compared with (`None` is null); several for `IN`.
    values: Vec<Option<Bytes>>,
}

impl ColumnCondition {
    /// Resolves the condition's values, with Cassandra's refusals of unset and null values.
    pub fn bind(&self, ctx: &ExecContext) -> CqlResult<BoundCondition<'_>> {
        let element = match &self.access {
            Access::Element(op) => Some(self.bind_element(op.resolve(ctx)?)?),
            _ => None,
        };
        let values = match &self.values {
            Values::One(op) => vec![single(op.resolve(ctx)?)?],
            Values::List(ops) => {
                let mut out = Vec::with_capacity(ops.len());
                for op in ops {
                    match op.resolve(ctx)? {
                        Resolved::Unset => {}
                        resolved => out.push(resolved.into_option()),
                    }
                }
                out
            }
            Values::Marker(op) => match op.resolve(ctx)? {
                Resolved::Value(list) => collections::split(&list, false)?
                    .into_iter()
                    .map(Some)
                    .collect(),
                Resolved::Null => {
                    return Err(CqlError::invalid("Invalid null list in IN condition"))
                }
                Resolved::Unset => return Err(unset()),
            },
        };
        let op = self.op;
        if !matches!(op, Operator::Eq | Operator::Neq | Operator::In)
            && values.iter().any(Option::is_none)
        {
            return Err(CqlError::invalid(format!(
                "Invalid comparison with null for operator \"{}\"",
                operator_text(op)
            )));
        }
        Ok(BoundCondition {
            condition: self,
            element,
            values,
        })
    }

    fn bind_element(&self, element: Resolved) -> CqlResult<Bytes> {
        let is_map = matches!(self.column.ty.unfrozen(), CqlType::Map(..));
        let Resolved::Value(element) = element else {
            let what = if is_map { "map" } else { "list" };
            return Err(CqlError::invalid(format!(
                "Invalid null value for {what} element access"
            )));
        };
        if !is_map {
            let index = list_index(&element)?;
            if index < 0 {
                return Err(CqlError::invalid(format!(
                    "Invalid negative list index {index}"
                )));
            }
        }
        Ok(element)
    }
}

fn single(value: Resolved) -> CqlResult<Option<Bytes>> {
    match value {
        Resolved::Unset => Err(unset()),
        other => Ok(other.into_option()),
    }
}

fn unset() -> CqlError {
    CqlError::invalid("Invalid 'unset' value in condition")
}

fn list_index(bytes: &[u8]) -> CqlResult<i32> {
    let raw: [u8; 4] = bytes
        .try_into()
        .map_err(|_| CqlError::invalid("Invalid list index"))?;
    Ok(i32::from_be_bytes(raw))
}

impl BoundCondition<'_> {
    /// The column the condition tests.
    pub fn column(&self) -> &schema::ColumnMetadata {
        &self.condition.column
    }

    /// Whether the condition holds for `row` (`None`: the row does not exist), at `now`.
    pub fn applies_to(&self, key: &PartitionKey, row: Option<&Row>, now: i32) -> bool {
        let col = &self.condition.column;
        let view = RowView {
            key,
            pk: &[],
            clustering: &[],
            row,
            static_row: row,
            now,
        };
        let op = match self.condition.op {
            Operator::In => Operator::Eq,
            op => op,
        };
        match &self.condition.access {
            Access::Whole
                if matches!(
                    col.ty,
                    CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)
                ) =>
            {
                let cells = view.live_cells(col);
                self.values
                    .iter()
                    .any(|v| collection_applies(&col.ty, op, &cells, v.as_deref()))
            }
            Access::Whole => self.any_value(op, &col.ty, view.value(col).as_deref()),
            Access::Element(_) => {
                let (ty, value) = self.element_value(&view);
                self.any_value(op, &ty, value.as_deref())
            }
            Access::Field(i) => {
                let ty = field_type(&col.ty, *i);
                self.any_value(op, &ty, field_value(&view, col, *i).as_deref())
            }
        }
    }

    fn any_value(&self, op: Operator, ty: &CqlType, row: Option<&[u8]>) -> bool {
        self.values
            .iter()
            .any(|v| compare_with_operator(op, ty, v.as_deref(), row))
    }

    /// The element's type and its value in the row.
    fn element_value(&self, view: &RowView) -> (CqlType, Option<Bytes>) {
        let col = &self.condition.column;
        let element = self.element.clone().unwrap_or_default();
        match col.ty.unfrozen() {
            CqlType::Map(k, v) => {
                let value = if col.ty.is_multi_cell() {
                    view.live_cells(col)
                        .into_iter()
                        .find(|c| {
                            c.path
                                .as_deref()
                                .is_some_and(|p| compare(k, p, &element).is_eq())
                        })
                        .and_then(|c| c.value.clone())
                } else {
                    frozen_map_value(k, view.value(col), &element)
                };
                ((**v).clone(), value)
            }
            CqlType::List(e) => {
                let index = list_index(&element).unwrap_or(-1).max(0) as usize;
                let value = if col.ty.is_multi_cell() {
                    view.live_cells(col)
                        .get(index)
                        .and_then(|c| c.value.clone())
                } else {
                    view.value(col)
                        .and_then(|l| collections::split(&l, false).ok())
                        .and_then(|items| items.get(index).cloned())
                };
                ((**e).clone(), value)
            }
            other => (other.clone(), None),
        }
    }
}

fn frozen_map_value(key_type: &CqlType, map: Option<Bytes>, key: &[u8]) -> Option<Bytes> {
    let flat = collections::split(&map?, true).ok()?;
    flat.chunks(2)
        .find(|pair| compare(key_type, &pair[0], key).is_eq())
        .and_then(|pair| pair.get(1).cloned())
}

fn field_type(ty: &CqlType, index: usize) -> CqlType {
    match ty.unfrozen() {
        CqlType::Udt(udt) => udt.fields.get(index).map(|(_, t)| t.clone()),
        _ => None,
    }
    .unwrap_or_else(|| ty.clone())
}

fn field_value(view: &RowView, col: &schema::ColumnMetadata, index: usize) -> Option<Bytes> {
    if col.ty.is_multi_cell() {
        let path = collections::field_path(index);
        return view
            .live_cells(col)
            .into_iter()
            .find(|c| c.path.as_ref() == Some(&path))
            .and_then(|c| c.value.clone());
    }
    let fields = collections::split_fields(&view.value(col)?).ok()?;
    fields.get(index).cloned().flatten()
}

/// Cassandra's `compareWithOperator`: `row OP value`, with null semantics (a null value is
/// equal only to an absent one; an absent value is only different from others).
fn compare_with_operator(
    op: Operator,
    ty: &CqlType,
    value: Option<&[u8]>,
    row: Option<&[u8]>,
) -> bool {
    let Some(value) = value else {
        return match op {
            Operator::Eq => row.is_none(),
            Operator::Neq => row.is_some(),
            _ => false,
        };
    };
    let Some(row) = row else {
        return op == Operator::Neq;
    };
    match op {
        Operator::Contains | Operator::ContainsKey => frozen_contains(op, ty, row, value),
        _ => holds(op, compare(ty, row, value)),
    }
}

fn holds(op: Operator, ordering: Ordering) -> bool {
    match op {
        Operator::Eq => ordering.is_eq(),
        Operator::Neq => ordering.is_ne(),
        Operator::Lt => ordering.is_lt(),
        Operator::Lte => ordering.is_le(),
        Operator::Gt => ordering.is_gt(),
        Operator::Gte => ordering.is_ge(),
        _ => false,
    }
}

/// `CONTAINS` / `CONTAINS KEY` on a serialized collection.
fn frozen_contains(op: Operator, ty: &CqlType, collection: &[u8], value: &[u8]) -> bool {
    let (is_map, element_type, step, first) = match ty.unfrozen() {
        CqlType::Map(k, _) if op == Operator::ContainsKey => (true, &**k, 2, 0),
        CqlType::Map(_, v) => (true, &**v, 2, 1),
        CqlType::List(e) | CqlType::Set(e) => (false, &**e, 1, 0),
        _ => return false,
    };
    let Ok(items) = collections::split(collection, is_map) else {
        return false;
    };
    items
        .iter()
        .skip(first)
        .step_by(step)
        .any(|item| compare(element_type, item, value).is_eq())
}

/// A condition on a whole non-frozen collection, compared element by element with the live
/// cells (no cells compare as an empty collection, as Cassandra's `MultiCellCollectionBound`).
fn collection_applies(ty: &CqlType, op: Operator, cells: &[&Cell], value: Option<&[u8]>) -> bool {
    let Some(value) = value else {
        return match op {
            Operator::Eq => cells.is_empty(),
            Operator::Neq => !cells.is_empty(),
            _ => false,
        };
    };
    let stored = join(ty, cells);
    match op {
        Operator::Contains | Operator::ContainsKey => frozen_contains(op, ty, &stored, value),
        _ => holds(op, compare(ty, &stored, value)),
    }
}

/// The serialized collection the cells hold.
fn join(ty: &CqlType, cells: &[&Cell]) -> Bytes {
    match ty {
        CqlType::Map(..) => {
            let pairs: Vec<(Bytes, Bytes)> = cells
                .iter()
                .filter_map(|c| Some((c.path.clone()?, c.value.clone()?)))
                .collect();
            collections::encode_pairs(&pairs)
        }
        CqlType::Set(_) => {
            let items: Vec<Bytes> = cells.iter().filter_map(|c| c.path.clone()).collect();
            collections::encode_elements(&items)
        }
        _ => {
            let items: Vec<Bytes> = cells.iter().filter_map(|c| c.value.clone()).collect();
            collections::encode_elements(&items)
        }
    }
}
