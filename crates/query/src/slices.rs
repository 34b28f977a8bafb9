//! Turns analysed restrictions into what storage reads: partition keys (the cartesian
//! product of `=`/`IN` values), token ranges, and clustering slices in byte-comparable form.
use std::cmp::Ordering;
use std::ops::Bound;

use bytes::Bytes;
use mutation::{KeyRange, PartitionKey, PartitionPosition};
use types::comparable::{compare, BoundKind};
use types::{CqlError, CqlResult};

use crate::collections;
use crate::exec::ExecContext;
use crate::keys::KeyLayout;
use crate::operand::{Operand, Resolved};
use crate::restrictions::{MultiSlice, Prefix, Restrictions, Slice, TupleBound, Values};

/// A clustering slice in storage order.
pub type ByteSlice = (Bound<Bytes>, Bound<Bytes>);

/// Resolves each column's values; `IN` gives several, and an empty `IN` none.
fn resolve_values(values: &Values, ctx: &ExecContext, column: &str) -> CqlResult<Vec<Bytes>> {
    match values {
        Values::Eq(op) => Ok(vec![op.resolve_required(ctx, column)?]),
        Values::In(ops) => ops
            .iter()
            .map(|o| o.resolve_required(ctx, column))
            .collect(),
        Values::InList(op) => match op.resolve(ctx)? {
            Resolved::Value(list) => collections::split(&list, false),
            _ => Err(CqlError::invalid(format!(
                "Invalid null value for IN restriction on column {column}"
            ))),
        },
    }
}

/// The cartesian product of per-column values, in column order.
pub fn combinations(
    columns: &[Values],
    names: &[String],
    ctx: &ExecContext,
) -> CqlResult<Vec<Vec<Bytes>>> {
    let mut parts = Vec::with_capacity(columns.len());
    for (values, name) in columns.iter().zip(names) {
        let resolved = resolve_values(values, ctx, name)?;
        parts.push(resolved.into_iter().map(|v| vec![v]).collect());
    }
    Ok(product(parts))
}

/// The clusterings (or clustering prefixes) a clustering `=`/`IN` prefix names: the
/// cartesian product of its entries, a multi-column `IN` giving several columns at once.
pub fn prefixes(
    entries: &[Prefix],
    names: &[String],
    ctx: &ExecContext,
) -> CqlResult<Vec<Vec<Bytes>>> {
    let mut parts = Vec::with_capacity(entries.len());
    let mut at = 0;
    for entry in entries {
        let rest = names.get(at..).unwrap_or_default();
        parts.push(match entry {
            Prefix::Column(values) => {
                let name = rest.first().map_or("", String::as_str);
                let resolved = resolve_values(values, ctx, name)?;
                resolved.into_iter().map(|v| vec![v]).collect()
            }
            Prefix::Tuples(tuples, _) => tuples
                .iter()
                .map(|t| resolve_in_tuple(t, rest, ctx))
                .collect::<CqlResult<_>>()?,
            Prefix::TupleList(list, width) => {
                if let Resolved::Unset = list.resolve(ctx)? {
                    let listed = rest.get(..*width).unwrap_or(rest).join(",");
                    return Err(CqlError::invalid(format!(
                        "Invalid unset value for in({listed})"
                    )));
                }
                bound_tuples(list, ctx)?
            }
        });
        at += entry.width();
    }
    Ok(product(parts))
}

/// Every way of taking one item of each part, in order, the items' values joined.
fn product(parts: Vec<Vec<Vec<Bytes>>>) -> Vec<Vec<Bytes>> {
    let mut out: Vec<Vec<Bytes>> = vec![Vec::new()];
    for items in parts {
        let mut next = Vec::with_capacity(out.len() * items.len());
        for prefix in &out {
            for item in &items {
                let mut p = prefix.clone();
                p.extend(item.iter().cloned());
                next.push(p);
            }
        }
        out = next;
    }
    out
}

/// The partition keys selected by `=`/`IN`, deduplicated, in the order Cassandra reads
/// them: by component values (each compared as its type), not by token.
pub fn partition_keys(
    layout: &KeyLayout,
    columns: &[Values],
    ctx: &ExecContext,
) -> CqlResult<Vec<PartitionKey>> {
    let names: Vec<String> = layout
        .table
        .partition_key_columns()
        .map(|c| c.name.clone())
        .collect();
    let mut combos = combinations(columns, &names, ctx)?;
    let by_value = |a: &Vec<Bytes>, b: &Vec<Bytes>| -> Ordering {
        layout
            .partition_types
            .iter()
            .zip(a.iter().zip(b))
            .map(|(ty, (x, y))| compare(ty, x, y))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    };
    combos.sort_by(by_value);
    combos.dedup_by(|a, b| by_value(a, b).is_eq());
    for combo in &combos {
        crate::keys::check_partition_key(combo)?;
    }
    Ok(combos.iter().map(|c| layout.partition_key(c)).collect())
}

/// A token range from `token(...)` bounds (unbounded sides read everything).
pub fn token_range(slice: &Slice, ctx: &ExecContext) -> CqlResult<KeyRange> {
    let bound = |b: &Option<(Operand, bool)>| -> CqlResult<Bound<PartitionPosition>> {
        Ok(match b {
            None => Bound::Unbounded,
            Some((op, inclusive)) => {
                let bytes = match op.resolve(ctx)? {
                    Resolved::Value(bytes) => bytes,
                    Resolved::Null => return Err(CqlError::invalid("Invalid null token value")),
                    Resolved::Unset => {
                        return Err(CqlError::invalid(
                            "Invalid unset value for column partition key token",
                        ))
                    }
                };
                let token = bigint(&bytes)?;
                let pos = PartitionPosition::Token(token);
                if *inclusive {
                    Bound::Included(pos)
                } else {
                    Bound::Excluded(pos)
                }
            }
        })
    };
    Ok(KeyRange {
        start: bound(&slice.start)?,
        end: bound(&slice.end)?,
    })
}

fn bigint(bytes: &[u8]) -> CqlResult<i64> {
    let arr: [u8; 8] = bytes
        .try_into()
        .map_err(|_| CqlError::invalid("Invalid token value: expected 8 bytes"))?;
    Ok(i64::from_be_bytes(arr))
}

/// Clustering slices in ascending byte order (storage order).
pub fn clustering_slices(
    layout: &KeyLayout,
    r: &Restrictions,
    ctx: &ExecContext,
) -> CqlResult<Vec<ByteSlice>> {
    let names: Vec<String> = layout
        .table
        .clustering_columns()
        .map(|c| c.name.clone())
        .collect();
    let prefixes = prefixes(&r.clustering_eq, &names, ctx)?;
    let mut slices = Vec::with_capacity(prefixes.len());
    let slice_col = r.clustering_eq_columns();
    for prefix in prefixes {
        match (&r.multi_slice, &r.clustering_slice) {
            (Some(multi), _) => slices.extend(multi_slices(layout, &prefix, multi, ctx)?),
            (None, Some(slice)) => {
                slices.push(column_slice(layout, prefix, slice_col, slice, ctx)?)
            }
            (None, None) => slices.push(whole_prefix(layout, &prefix)),
        }
    }
    slices.sort_by(|a, b| start_key(&a.0).cmp(start_key(&b.0)));
    slices.dedup();
    Ok(slices)
}

fn start_key(b: &Bound<Bytes>) -> &[u8] {
    match b {
        Bound::Included(k) | Bound::Excluded(k) => k,
        Bound::Unbounded => &[],
    }
}

fn whole_prefix(layout: &KeyLayout, prefix: &[Bytes]) -> ByteSlice {
    if prefix.is_empty() {
        return (Bound::Unbounded, Bound::Unbounded);
    }
    (
        Bound::Included(layout.bound(prefix, BoundKind::Before)),
        Bound::Included(layout.bound(prefix, BoundKind::After)),
    )
}

fn column_slice(
    layout: &KeyLayout,
    prefix: Vec<Bytes>,
    column: usize,
    slice: &Slice,
    ctx: &ExecContext,
) -> CqlResult<ByteSlice> {
    let reversed = layout
        .clustering_types
        .get(column)
        .map(|t| t.1)
        .unwrap_or(false);
    let name = layout
        .table
        .clustering_columns()
        .nth(column)
        .map(|c| c.name.clone())
        .unwrap_or_default();
    let with_value = |b: &Option<(Operand, bool)>| -> CqlResult<Option<(Vec<Bytes>, bool)>> {
        Ok(match b {
            Some((op, inclusive)) => {
                let mut key = prefix.clone();
                key.push(op.resolve_required(ctx, &name)?);
                Some((key, *inclusive))
            }
            None => None,
        })
    };
    let lower = with_value(&slice.start)?;
    let upper = with_value(&slice.end)?;
    Ok(bounded(layout, &prefix, lower, upper, reversed))
}

/// A slice within `prefix` from natural-order bounds. A bound is a storage start when it is
/// a lower bound of an ascending column or an upper bound of a descending one; a start
/// sorts Before its value's rows when inclusive and After them when not, an end the reverse.
fn bounded(
    layout: &KeyLayout,
    prefix: &[Bytes],
    lower: Option<(Vec<Bytes>, bool)>,
    upper: Option<(Vec<Bytes>, bool)>,
    reversed: bool,
) -> ByteSlice {
    let (mut start, mut end) = whole_prefix(layout, prefix);
    for (bound, is_lower) in [(lower, true), (upper, false)] {
        if let Some((key, inclusive)) = bound {
            let as_start = is_lower != reversed;
            let kind = if as_start == inclusive {
                BoundKind::Before
            } else {
                BoundKind::After
            };
            let b = Bound::Included(layout.bound(&key, kind));
            if as_start {
                start = b;
            } else {
                end = b;
            }
        }
    }
    (start, end)
}

/// The slices of a multi-column slice after `prefix`. A tuple bound over columns of mixed
/// order is not one storage range: `(a, b) > (1, 2)` is `a > 1` or `a = 1 AND b > 2`, so
/// each bound becomes one piece per column, and the pieces of the two bounds intersect.
fn multi_slices(
    layout: &KeyLayout,
    prefix: &[Bytes],
    multi: &MultiSlice,
    ctx: &ExecContext,
) -> CqlResult<Vec<ByteSlice>> {
    let lower = bound_pieces(layout, prefix, &multi.start, true, ctx)?;
    let upper = bound_pieces(layout, prefix, &multi.end, false, ctx)?;
    Ok(lower
        .iter()
        .flat_map(|l| upper.iter().map(move |u| intersect(l, u)))
        .filter(|(s, e)| !mutation::filter::slice_is_empty(s, e))
        .collect())
}

/// The names of the clustering columns from position `from` on.
fn tuple_names(layout: &KeyLayout, from: usize) -> Vec<String> {
    let columns = layout.table.clustering_columns().skip(from);
    columns.map(|c| c.name.clone()).collect()
}

/// A tuple of a multi-column `IN`: a null names all the relation's columns, as Cassandra.
fn resolve_in_tuple(
    tuple: &[Operand],
    names: &[String],
    ctx: &ExecContext,
) -> CqlResult<Vec<Bytes>> {
    let null = tuple
        .iter()
        .map(|operand| operand.resolve(ctx))
        .collect::<CqlResult<Vec<_>>>()?
        .iter()
        .any(|value| matches!(value, Resolved::Null));
    if null {
        let listed = names.get(..tuple.len()).unwrap_or(names).join(", ");
        return Err(CqlError::invalid(format!(
            "Invalid null value in condition for columns: [{listed}]"
        )));
    }
    resolve_tuple(tuple, names, ctx)
}

/// A tuple's values, refusing null and unset ones with Cassandra's messages.
fn resolve_tuple(tuple: &[Operand], names: &[String], ctx: &ExecContext) -> CqlResult<Vec<Bytes>> {
    let value = |(i, operand): (usize, &Operand)| match operand.resolve(ctx)? {
        Resolved::Value(v) => Ok(v),
        Resolved::Null => Err(CqlError::invalid(format!(
            "Invalid null value in condition for column {}",
            names.get(i).map_or("", String::as_str)
        ))),
        // A field of a bound tuple is unset when the whole tuple is.
        Resolved::Unset if matches!(operand, Operand::Field(..)) => {
            Err(CqlError::invalid(format!(
                "Invalid unset value for tuple ({})",
                names.get(..tuple.len()).unwrap_or(names).join(",")
            )))
        }
        Resolved::Unset => Err(CqlError::invalid(format!(
            "Invalid unset value for tuple field number {i}"
        ))),
    };
    tuple.iter().enumerate().map(value).collect()
}

/// The tuples of a bound `IN ?` list (the list's type gives them their size).
pub(crate) fn bound_tuples(list: &Operand, ctx: &ExecContext) -> CqlResult<Vec<Vec<Bytes>>> {
    let bytes = match list.resolve(ctx)? {
        Resolved::Value(bytes) => bytes,
        Resolved::Null => return Err(CqlError::invalid("Invalid null value for IN restriction")),
        Resolved::Unset => return Err(CqlError::invalid("Invalid unset value for IN restriction")),
    };
    let mut tuples = Vec::new();
    for tuple in collections::split(&bytes, false)? {
        let fields = collections::split_fields(&tuple)?;
        if fields.iter().any(Option::is_none) {
            return Err(CqlError::invalid(
                "Invalid null value in condition for IN restriction",
            ));
        }
        tuples.push(fields.into_iter().flatten().collect());
    }
    Ok(tuples)
}

/// Disjoint slices whose union is everything on one side of a tuple bound.
fn bound_pieces(
    layout: &KeyLayout,
    prefix: &[Bytes],
    bound: &TupleBound,
    is_lower: bool,
    ctx: &ExecContext,
) -> CqlResult<Vec<ByteSlice>> {
    let Some((tuple, inclusive)) = bound else {
        return Ok(vec![whole_prefix(layout, prefix)]);
    };
    let values = resolve_tuple(tuple, &tuple_names(layout, prefix.len()), ctx)?;
    let mut pieces = Vec::with_capacity(values.len());
    let mut within = prefix.to_vec();
    for (i, value) in values.iter().enumerate() {
        let reversed = layout
            .clustering_types
            .get(within.len())
            .is_some_and(|t| t.1);
        let mut key = within.clone();
        key.push(value.clone());
        let side = Some((key, *inclusive && i + 1 == values.len()));
        let (lower, upper) = if is_lower { (side, None) } else { (None, side) };
        pieces.push(bounded(layout, &within, lower, upper, reversed));
        within.push(value.clone());
    }
    Ok(pieces)
}

/// The common part of two slices (possibly empty).
fn intersect(a: &ByteSlice, b: &ByteSlice) -> ByteSlice {
    let start = match (start_key(&a.0) >= start_key(&b.0), &a.0, &b.0) {
        (_, Bound::Unbounded, other) | (_, other, Bound::Unbounded) => other.clone(),
        (true, chosen, _) | (false, _, chosen) => chosen.clone(),
    };
    let end = match (&a.1, &b.1) {
        (Bound::Unbounded, other) | (other, Bound::Unbounded) => other.clone(),
        (x, y) => {
            if start_key(x) <= start_key(y) {
                x.clone()
            } else {
                y.clone()
            }
        }
    };
    (start, end)
}
