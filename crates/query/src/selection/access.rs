//! Element (`m[k]`, `s[e]`), slice (`m[a..b]`, both bounds inclusive) and field (`u.f`)
//! selections, as Cassandra's `ElementsSelector` and `FieldSelector`: what they take from a
//! serialized value (a non-frozen one assembled from its cells), and which of the value's
//! cells they keep for WRITETIME and TTL (`Times`).
use std::cmp::Ordering;
use std::ops::Range;

use bytes::Bytes;
use types::comparable::compare;
use types::{CqlError, CqlResult, CqlType};

use super::times::Times;
use crate::collections;
use crate::exec::ExecContext;
use crate::operand::{Operand, Resolved};

/// A selection inside a value of type `ty`, which the selector `target` gives (its text names
/// it in messages).
#[derive(Clone, Debug, PartialEq)]
pub struct Access {
    pub ty: CqlType,
    pub target: String,
    pub kind: AccessKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AccessKind {
    /// `target[key]` of a map or set.
    Element(Operand),
    /// `target[from..to]` of a map or set, either bound optional.
    Slice(Option<Operand>, Option<Operand>),
    /// `target.field`: the field at this position of a user type.
    Field(usize),
}

/// An access with this execution's values of its key or bounds.
#[derive(Clone, Debug, PartialEq)]
pub enum Bound {
    Element(Bytes),
    Slice(Option<Bytes>, Option<Bytes>),
    Field(usize),
}

impl Access {
    /// The key or bounds for one execution: a null key or bound and an unset key are refused
    /// as Cassandra refuses them; an unset bound leaves that end open.
    pub fn bind(&self, ctx: &ExecContext) -> CqlResult<Bound> {
        let refused = |what: &str, selection: &str| {
            CqlError::invalid(format!(
                "Invalid {what} value for {selection} selection on {}",
                self.target
            ))
        };
        let bound = |op: &Option<Operand>| match op.as_ref().map(|o| o.resolve(ctx)) {
            None | Some(Ok(Resolved::Unset)) => Ok(None),
            Some(Ok(Resolved::Value(b))) => Ok(Some(b)),
            Some(Ok(Resolved::Null)) => Err(refused("null", "slice")),
            Some(Err(e)) => Err(e),
        };
        Ok(match &self.kind {
            AccessKind::Element(key) => match key.resolve(ctx)? {
                Resolved::Value(b) => Bound::Element(b),
                Resolved::Null => return Err(refused("null", "element")),
                Resolved::Unset => return Err(refused("unset", "element")),
            },
            AccessKind::Slice(from, to) => Bound::Slice(bound(from)?, bound(to)?),
            AccessKind::Field(index) => Bound::Field(*index),
        })
    }
}

impl Bound {
    /// What the access takes from `value`, a value of type `ty`.
    pub fn value(&self, ty: &CqlType, value: &[u8]) -> Option<Bytes> {
        match self {
            Bound::Element(key) => element(ty, value, key),
            Bound::Field(index) => field(value, *index),
            Bound::Slice(from, to) => slice(ty, value, from.as_deref(), to.as_deref()),
        }
    }

    /// The times of what the access takes from `value` (`None`: the target is null), given
    /// the times of the whole value.
    pub fn times(&self, ty: &CqlType, value: Option<&[u8]>, times: Times) -> Times {
        match self {
            Bound::Field(index) => times.get(*index),
            Bound::Element(key) => match value.and_then(|v| position(ty, v, key)) {
                Some(at) => times.get(at),
                None => Times::None,
            },
            Bound::Slice(from, to) => {
                let (from, to) = (from.as_deref(), to.as_deref());
                let range = value
                    .filter(|v| !is_empty_collection(v))
                    .and_then(|v| slice_range(ty, v, from, to));
                match range {
                    Some(range) => times.slice(range),
                    None => Times::None,
                }
            }
        }
    }
}

/// A serialized collection of no element (only frozen ones can be empty).
fn is_empty_collection(value: &[u8]) -> bool {
    value == [0, 0, 0, 0]
}

/// The element of a map (its value) or set (the element itself) with key `key`; `None` when
/// the value holds no such key or is malformed.
fn element(ty: &CqlType, value: &[u8], key: &[u8]) -> Option<Bytes> {
    let (entries, step) = entries(ty, value)?;
    let at = position_in(ty, &entries, step, key)?;
    Some(entries[at * step + step - 1].clone())
}

/// The position of `key` among the entries of a map or set value.
fn position(ty: &CqlType, value: &[u8], key: &[u8]) -> Option<usize> {
    let (entries, step) = entries(ty, value)?;
    position_in(ty, &entries, step, key)
}

fn position_in(ty: &CqlType, entries: &[Bytes], step: usize, key: &[u8]) -> Option<usize> {
    let (_, key_ty) = keyed(ty)?;
    entries
        .chunks(step)
        .position(|entry| compare(key_ty, &entry[0], key) == Ordering::Equal)
}

/// The entries of a map or set whose keys lie between `from` and `to` (inclusive, either
/// bound absent), serialized as the same collection type. As Cassandra, an empty slice of a
/// non-frozen collection is null, and of a frozen one an empty collection.
fn slice(ty: &CqlType, value: &[u8], from: Option<&[u8]>, to: Option<&[u8]>) -> Option<Bytes> {
    let (entries, step) = entries(ty, value)?;
    let range = range_in(ty, &entries, step, from, to)?;
    if range.is_empty() && ty.is_multi_cell() {
        return None;
    }
    let kept = &entries[range.start * step..range.end * step];
    Some(if step == 2 {
        let pairs: Vec<(Bytes, Bytes)> = kept
            .chunks(2)
            .map(|e| (e[0].clone(), e[1].clone()))
            .collect();
        collections::encode_pairs(&pairs)
    } else {
        collections::encode_elements(kept)
    })
}

/// The positions of the entries a slice keeps (entries are sorted by key, so they are
/// consecutive).
fn slice_range(
    ty: &CqlType,
    value: &[u8],
    from: Option<&[u8]>,
    to: Option<&[u8]>,
) -> Option<Range<usize>> {
    let (entries, step) = entries(ty, value)?;
    range_in(ty, &entries, step, from, to)
}

fn range_in(
    ty: &CqlType,
    entries: &[Bytes],
    step: usize,
    from: Option<&[u8]>,
    to: Option<&[u8]>,
) -> Option<Range<usize>> {
    let (_, key_ty) = keyed(ty)?;
    let keys: Vec<&Bytes> = entries.iter().step_by(step).collect();
    let start = keys
        .iter()
        .position(|k| from.is_none_or(|f| compare(key_ty, k, f) != Ordering::Less))
        .unwrap_or(keys.len());
    let end = keys
        .iter()
        .rposition(|k| to.is_none_or(|t| compare(key_ty, k, t) != Ordering::Greater))
        .map_or(0, |i| i + 1);
    Some(start..end.max(start))
}

/// The flattened entries of a map (key, value pairs: step 2) or set (step 1) value.
fn entries(ty: &CqlType, value: &[u8]) -> Option<(Vec<Bytes>, usize)> {
    let (is_map, _) = keyed(ty)?;
    let entries = collections::split(value, is_map).ok()?;
    Some((entries, if is_map { 2 } else { 1 }))
}

/// Whether `ty` is a map (`true`) or set (`false`), with its key (element) type.
fn keyed(ty: &CqlType) -> Option<(bool, &CqlType)> {
    match ty.unfrozen() {
        CqlType::Map(k, _) => Some((true, k)),
        CqlType::Set(e) => Some((false, e)),
        _ => None,
    }
}

/// Field `index` of a serialized UDT (absent trailing fields and nulls are `None`).
fn field(value: &[u8], index: usize) -> Option<Bytes> {
    collections::split_fields(value)
        .ok()?
        .into_iter()
        .nth(index)
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::NativeType;

    fn int(v: i32) -> Bytes {
        Bytes::copy_from_slice(&v.to_be_bytes())
    }

    fn int_type() -> Box<CqlType> {
        Box::new(CqlType::Native(NativeType::Int))
    }

    fn map() -> (CqlType, Bytes) {
        let pairs = [(int(1), int(10)), (int(2), int(20)), (int(3), int(30))];
        (
            CqlType::Map(int_type(), int_type()),
            collections::encode_pairs(&pairs),
        )
    }

    #[test]
    fn map_elements_are_their_values() {
        let (ty, value) = map();
        assert_eq!(element(&ty, &value, &int(2)), Some(int(20)));
        assert_eq!(element(&ty, &value, &int(9)), None);
    }

    #[test]
    fn set_elements_are_themselves() {
        let ty = CqlType::Set(int_type()).freeze();
        let value = collections::encode_elements(&[int(-1), int(4)]);
        assert_eq!(element(&ty, &value, &int(4)), Some(int(4)));
        assert_eq!(element(&ty, &value, &int(5)), None);
    }

    #[test]
    fn slices_include_both_bounds_keep_the_type_and_are_null_when_empty_and_not_frozen() {
        let (ty, value) = map();
        let got = slice(&ty, &value, Some(&int(2)), None).unwrap();
        assert_eq!(
            got,
            collections::encode_pairs(&[(int(2), int(20)), (int(3), int(30))])
        );
        let got = slice(&ty, &value, None, Some(&int(1))).unwrap();
        assert_eq!(got, collections::encode_pairs(&[(int(1), int(10))]));
        assert_eq!(slice(&ty, &value, Some(&int(4)), None), None);
        let frozen = ty.freeze();
        let empty = slice(&frozen, &value, Some(&int(4)), None);
        assert_eq!(empty, Some(collections::encode_pairs(&[])));
    }

    #[test]
    fn positions_and_ranges_of_entries() {
        let (ty, value) = map();
        assert_eq!(position(&ty, &value, &int(3)), Some(2));
        assert_eq!(position(&ty, &value, &int(0)), None);
        assert_eq!(
            slice_range(&ty, &value, Some(&int(2)), Some(&int(9))),
            Some(1..3)
        );
        assert_eq!(
            slice_range(&ty, &value, Some(&int(3)), Some(&int(1))),
            Some(2..2)
        );
        assert_eq!(slice_range(&ty, &value, None, None), Some(0..3));
    }

    #[test]
    fn lists_have_no_keyed_access() {
        let ty = CqlType::List(int_type());
        let value = collections::encode_elements(&[int(1)]);
        assert_eq!(element(&ty, &value, &int(0)), None);
    }

    #[test]
    fn udt_fields_by_position() {
        let value = collections::encode_fields(&[Some(int(1)), None]);
        assert_eq!(field(&value, 0), Some(int(1)));
        assert_eq!(field(&value, 1), None);
        assert_eq!(field(&value, 5), None);
    }
}
