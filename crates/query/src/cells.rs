//! The cells a write operation puts in a row: one cell for a single-cell column, element
//! cells (paths are list positions, set elements, map keys or UDT field positions) and
//! collection deletions for non-frozen collections and UDTs, as Cassandra's `Lists`, `Sets`,
//! `Maps` and `UserTypes` operations write them. List positions and removal of list elements
//! by value use the list as read before the write.
use bytes::Bytes;
use mutation::{Cell, ColumnData, ColumnValue, DeletionTime, Row};
use types::value::Value;
use types::{CqlError, CqlResult, CqlType};

use crate::assignments::Op;
use crate::collections;
use crate::exec::ExecContext;
use crate::operand::{Operand, Resolved};

/// What every cell of one write shares.
pub struct Write<'a> {
    pub ctx: &'a ExecContext,
    pub ts: i64,
    pub ttl: i32,
}

impl Write<'_> {
    fn now(&self) -> i32 {
        self.ctx.now_seconds
    }

    fn cell(&self, value: Bytes) -> Cell {
        if self.ttl > 0 {
            Cell::expiring(self.ts, self.ttl, self.now(), value)
        } else {
            Cell::live(self.ts, value)
        }
    }

    fn tombstone(&self) -> Cell {
        Cell::tombstone(self.ts, self.now())
    }

    /// The deletion of a whole collection that a new value replaces (just before the write,
    /// so the new elements survive it).
    fn overwrite(&self) -> DeletionTime {
        DeletionTime::new(self.ts - 1, self.now())
    }
}

/// Adds what `op` writes to `row`; `existing` is the row as read before the write, for the
/// operations that need it.
pub fn apply(row: &mut Row, op: &Op, w: &Write, existing: Option<&Row>) -> CqlResult<()> {
    let col = op.column();
    let name = mutation::column_name(&col.name);
    if !col.ty.is_multi_cell() {
        if let Some(cell) = simple(op, w)? {
            row.columns.push(ColumnData::simple(name, cell));
        }
        return Ok(());
    }
    let current = existing.map_or_else(Vec::new, |r| live_cells(r, &name, w.now()));
    let Some((deletion, mut cells)) = complex(op, w, &current)? else {
        return Ok(());
    };
    cells.sort_by(|a, b| a.path.cmp(&b.path));
    row.columns.push(ColumnData::complex(name, deletion, cells));
    Ok(())
}

/// The cell of a single-cell column, `None` for an unset value.
fn simple(op: &Op, w: &Write) -> CqlResult<Option<Cell>> {
    match op {
        Op::Set(_, operand) => Ok(match operand.resolve(w.ctx)? {
            Resolved::Value(b) => Some(w.cell(b)),
            Resolved::Null => Some(w.tombstone()),
            Resolved::Unset => None,
        }),
        Op::Delete(_) => Ok(Some(w.tombstone())),
        _ => Err(CqlError::invalid(format!(
            "Invalid operation on column {}",
            op.column().name
        ))),
    }
}

/// The live cells of column `name` in a row read before the write, in list order.
fn live_cells(row: &Row, name: &[u8], now: i32) -> Vec<Cell> {
    match row.column(name).map(|c| &c.value) {
        Some(ColumnValue::Complex(complex)) => complex
            .cells
            .iter()
            .filter(|c| c.is_live(now))
            .cloned()
            .collect(),
        _ => Vec::new(),
    }
}

type Complex = Option<(DeletionTime, Vec<Cell>)>;

/// The collection deletion and element cells of a non-frozen column; `None` when nothing is
/// written (an unset value).
fn complex(op: &Op, w: &Write, current: &[Cell]) -> CqlResult<Complex> {
    let col = op.column();
    let live = DeletionTime::LIVE;
    Ok(Some(match op {
        Op::Set(_, operand) => match operand.resolve(w.ctx)? {
            Resolved::Unset => return Ok(None),
            Resolved::Null => (w.overwrite(), Vec::new()),
            Resolved::Value(b) => (w.overwrite(), element_cells(&col.ty, &b, w)?),
        },
        Op::Add(_, operand) => match operand.resolve(w.ctx)? {
            Resolved::Value(b) => (live, element_cells(&col.ty, &b, w)?),
            _ => return Ok(None),
        },
        Op::Subtract(_, operand) => match operand.resolve(w.ctx)? {
            Resolved::Value(b) => (live, removed(&col.ty, &b, w, current)?),
            _ => return Ok(None),
        },
        Op::Put(_, key, value) => {
            let k = element_path(&col.ty, key.resolve_required(w.ctx, &col.name)?)?;
            (live, keyed_cell(value, k, w)?.into_iter().collect())
        }
        Op::SetField(_, index, value) => {
            let path = collections::field_path(*index);
            (live, keyed_cell(value, path, w)?.into_iter().collect())
        }
        Op::SetIndex(_, index, value) => (live, set_index(index, value, w, current)?),
        Op::Prepend(_, operand) => match operand.resolve(w.ctx)? {
            Resolved::Value(b) => (live, prepended(&b, w)?),
            _ => return Ok(None),
        },
        Op::Delete(_) => (DeletionTime::new(w.ts, w.now()), Vec::new()),
        Op::DeleteElement(_, key) => {
            let k = element_path(&col.ty, key.resolve_required(w.ctx, &col.name)?)?;
            (live, vec![w.tombstone().with_path(k)])
        }
        Op::DeleteField(_, index) => (
            live,
            vec![w.tombstone().with_path(collections::field_path(*index))],
        ),
        Op::DeleteIndex(_, index) => match delete_index(index, w, current)? {
            Some(cell) => (live, vec![cell]),
            None => return Ok(None),
        },
    }))
}

/// `m[k] = v`, `u.f = v`: the element's cell, a tombstone for null, nothing for unset.
fn keyed_cell(value: &Operand, path: Bytes, w: &Write) -> CqlResult<Option<Cell>> {
    Ok(match value.resolve(w.ctx)? {
        Resolved::Value(v) => Some(w.cell(v).with_path(path)),
        Resolved::Null => Some(w.tombstone().with_path(path)),
        Resolved::Unset => None,
    })
}

/// One cell per element of a non-frozen collection value, or per non-null field of a
/// non-frozen UDT value.
fn element_cells(ty: &CqlType, value: &[u8], w: &Write) -> CqlResult<Vec<Cell>> {
    Ok(match ty {
        CqlType::List(_) => collections::split(value, false)?
            .into_iter()
            .map(|v| w.cell(v).with_path(collections::list_path(w.ts)))
            .collect(),
        CqlType::Set(_) => collections::split(value, false)?
            .into_iter()
            .map(|e| Ok(w.cell(Bytes::new()).with_path(element_path(ty, e)?)))
            .collect::<CqlResult<_>>()?,
        CqlType::Map(..) => collections::split(value, true)?
            .chunks(2)
            .filter(|kv| kv.len() == 2)
            .map(|kv| {
                Ok(w.cell(kv[1].clone())
                    .with_path(element_path(ty, kv[0].clone())?))
            })
            .collect::<CqlResult<_>>()?,
        _ => collections::split_fields(value)?
            .into_iter()
            .enumerate()
            .filter_map(|(i, v)| Some(w.cell(v?).with_path(collections::field_path(i))))
            .collect(),
    })
}

/// The path of a set element or map key of a collection of type `ty`: one spelling for the
/// values its comparator holds equal (`types::Value::element_key`).
fn element_path(ty: &CqlType, element: Bytes) -> CqlResult<Bytes> {
    let key_type = match ty {
        CqlType::Set(key) | CqlType::Map(key, _) => key,
        _ => return Ok(element),
    };
    Value::element_key(key_type, &element).map_err(|e| CqlError::invalid(e.0))
}

/// `s = s - {..}`, `m = m - {keys}`: tombstones at the paths; `l = l - [..]`: tombstones for
/// every element of the stored list equal to one of the values.
fn removed(ty: &CqlType, value: &[u8], w: &Write, current: &[Cell]) -> CqlResult<Vec<Cell>> {
    let values = collections::split(value, false)?;
    if !matches!(ty, CqlType::List(_)) {
        return values
            .into_iter()
            .map(|e| Ok(w.tombstone().with_path(element_path(ty, e)?)))
            .collect();
    }
    Ok(current
        .iter()
        .filter(|c| c.value.as_ref().is_some_and(|v| values.contains(v)))
        .filter_map(|c| Some(w.tombstone().with_path(c.path.clone()?)))
        .collect())
}

/// `l = [..] + l`.
fn prepended(value: &[u8], w: &Write) -> CqlResult<Vec<Cell>> {
    let items = collections::split(value, false)?;
    let paths = collections::prepend_paths(items.len());
    Ok(items
        .into_iter()
        .zip(paths)
        .map(|(v, path)| w.cell(v).with_path(path))
        .collect())
}

/// The position a list index names, checked against the stored list as Cassandra does.
fn position(index: &[u8], current: &[Cell], null_list: &str) -> CqlResult<usize> {
    let idx = i32::from_be_bytes(
        index
            .try_into()
            .map_err(|_| CqlError::invalid("Invalid list index"))?,
    );
    if current.is_empty() {
        return Err(CqlError::invalid(null_list));
    }
    if idx < 0 || idx as usize >= current.len() {
        return Err(CqlError::invalid(format!(
            "List index {idx} out of bound, list has size {}",
            current.len()
        )));
    }
    Ok(idx as usize)
}

/// `l[i] = v`: a new value (or a tombstone for null) at the path of the stored element.
fn set_index(
    index: &Operand,
    value: &Operand,
    w: &Write,
    current: &[Cell],
) -> CqlResult<Vec<Cell>> {
    let set = "set an element on";
    let Some(path) = indexed_path(index, w, current, set)? else {
        return Err(CqlError::invalid("Invalid unset value for list index"));
    };
    Ok(keyed_cell(value, path, w)?.into_iter().collect())
}

/// `DELETE l[i]`: a tombstone at the path of the stored element; nothing for an unset index.
fn delete_index(index: &Operand, w: &Write, current: &[Cell]) -> CqlResult<Option<Cell>> {
    let path = indexed_path(index, w, current, "delete an element from")?;
    Ok(path.map(|path| w.tombstone().with_path(path)))
}

/// The path of the stored list element that `index` names (`None` for an unset index),
/// checked against the stored list as Cassandra checks it for the action named.
fn indexed_path(
    index: &Operand,
    w: &Write,
    current: &[Cell],
    action: &str,
) -> CqlResult<Option<Bytes>> {
    let index = match index.resolve(w.ctx)? {
        Resolved::Value(b) => b,
        Resolved::Null => return Err(CqlError::invalid("Invalid null value for list index")),
        Resolved::Unset => return Ok(None),
    };
    let null_list = format!("Attempted to {action} a list which is null");
    let at = position(&index, current, &null_list)?;
    Ok(Some(current[at].path.clone().unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use schema::ColumnMetadata;
    use std::sync::Arc;
    use types::request::QueryOptions;
    use types::{NativeType, UdtType};

    fn int(v: i32) -> Bytes {
        Bytes::copy_from_slice(&v.to_be_bytes())
    }

    fn list_column() -> ColumnMetadata {
        let ty = CqlType::List(Box::new(CqlType::Native(NativeType::Int)));
        ColumnMetadata::regular("l", ty)
    }

    /// A stored list of the given values, with increasing paths.
    fn stored(values: &[i32]) -> Vec<Cell> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| Cell::live(1, int(*v)).with_path(Bytes::from(vec![i as u8])))
            .collect()
    }

    fn write(ctx: &ExecContext) -> Write<'_> {
        Write {
            ctx,
            ts: 10,
            ttl: 0,
        }
    }

    fn constant(v: i32) -> Operand {
        Operand::Const(Some(int(v)))
    }

    #[test]
    fn setting_a_list_index_overwrites_the_stored_element() {
        let ctx = ExecContext::new(&QueryOptions::default(), Vec::new());
        let op = Op::SetIndex(list_column(), constant(1), constant(99));
        let (_, cells) = complex(&op, &write(&ctx), &stored(&[5, 6, 7]))
            .unwrap()
            .unwrap();
        assert_eq!(
            cells,
            vec![Cell::live(10, int(99)).with_path(Bytes::from(vec![1u8]))]
        );
    }

    #[test]
    fn list_indexes_are_checked_against_the_stored_list() {
        let ctx = ExecContext::new(&QueryOptions::default(), Vec::new());
        let w = write(&ctx);
        let out_of_bounds = Op::SetIndex(list_column(), constant(3), constant(1));
        assert_eq!(
            complex(&out_of_bounds, &w, &stored(&[5, 6, 7])),
            Err(CqlError::invalid(
                "List index 3 out of bound, list has size 3"
            ))
        );
        assert_eq!(
            complex(&out_of_bounds, &w, &[]),
            Err(CqlError::invalid(
                "Attempted to set an element on a list which is null"
            ))
        );
        let negative = Op::DeleteIndex(list_column(), constant(-1));
        assert_eq!(
            complex(&negative, &w, &stored(&[5])),
            Err(CqlError::invalid(
                "List index -1 out of bound, list has size 1"
            ))
        );
        let null = Op::DeleteIndex(list_column(), Operand::null());
        assert_eq!(
            complex(&null, &w, &stored(&[5])),
            Err(CqlError::invalid("Invalid null value for list index"))
        );
    }

    #[test]
    fn removing_list_values_deletes_every_equal_element() {
        let ctx = ExecContext::new(&QueryOptions::default(), Vec::new());
        let removed = collections::encode_elements(&[int(6)]);
        let op = Op::Subtract(list_column(), Operand::Const(Some(removed)));
        let (_, cells) = complex(&op, &write(&ctx), &stored(&[6, 5, 6]))
            .unwrap()
            .unwrap();
        let paths: Vec<_> = cells
            .iter()
            .map(|c| (c.path.clone(), c.is_tombstone()))
            .collect();
        assert_eq!(
            paths,
            vec![
                (Some(Bytes::from(vec![0u8])), true),
                (Some(Bytes::from(vec![2u8])), true)
            ]
        );
    }

    #[test]
    fn udt_values_write_one_cell_per_non_null_field_over_a_deletion() {
        let ctx = ExecContext::new(&QueryOptions::default(), Vec::new());
        let udt = UdtType::new(
            "ks",
            "u",
            vec![
                ("a".into(), CqlType::Native(NativeType::Int)),
                ("b".into(), CqlType::Native(NativeType::Int)),
            ],
        );
        let col = ColumnMetadata::regular("u", CqlType::Udt(Arc::new(udt)));
        let value = collections::encode_fields(&[None, Some(int(2))]);
        let op = Op::Set(col.clone(), Operand::Const(Some(value)));
        let (deletion, cells) = complex(&op, &write(&ctx), &[]).unwrap().unwrap();
        assert_eq!(deletion.marked_for_delete_at, 9);
        assert_eq!(
            cells,
            vec![Cell::live(10, int(2)).with_path(collections::field_path(1))]
        );
        let field = Op::SetField(col, 0, Operand::null());
        let (_, cells) = complex(&field, &write(&ctx), &[]).unwrap().unwrap();
        assert!(cells[0].is_tombstone());
        assert_eq!(cells[0].path, Some(collections::field_path(0)));
    }
}
