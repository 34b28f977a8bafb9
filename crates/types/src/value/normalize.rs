//! The canonical serialized form of a value: set elements and map keys in their type's order,
//! without duplicates, at every depth. Cassandra sorts them when it builds a collection from a
//! bound value (`Sets.Value.fromSerialized` and `SetSerializer.serializeValues` sort by the
//! element comparator), so a frozen set bound as `{3, 1, 2}` is stored, hashed and compared as
//! `{1, 2, 3}`; values bound here go through [`Value::normalize`] for the same effect.
use bytes::{BufMut, Bytes, BytesMut};

use super::deserialize::split_collection;
use super::Value;
use crate::comparable::compare;
use crate::cql_type::CqlType;
use crate::error::TypeError;

impl Value {
    /// `bytes`, a valid value of `ty`, in canonical form: sets sorted by their element type
    /// with duplicates dropped, maps sorted by key type keeping the last value of a repeated
    /// key, recursively inside lists, sets, maps, tuples and UDTs. Values without sets or maps
    /// come back unchanged.
    pub fn normalize(ty: &CqlType, bytes: &Bytes) -> Result<Bytes, TypeError> {
        if bytes.is_empty() || !holds_unordered(ty) {
            return Ok(bytes.clone());
        }
        match ty {
            CqlType::Frozen(inner) => Value::normalize(inner, bytes),
            CqlType::List(element) => {
                let items = normalized_items(bytes, "list", 1, |_| element)?;
                Ok(encode_collection(items.len(), &items))
            }
            CqlType::Set(element) => {
                let mut items = normalized_items(bytes, "set", 1, |_| element)?;
                items.sort_by(|a, b| compare(element, a, b));
                items.dedup_by(|later, earlier| compare(element, earlier, later).is_eq());
                Ok(encode_collection(items.len(), &items))
            }
            CqlType::Map(key, value) => normalize_map(key, value, bytes),
            CqlType::Tuple(types) => normalize_fields(types.iter(), bytes),
            CqlType::Udt(udt) => normalize_fields(udt.fields.iter().map(|(_, t)| t), bytes),
            CqlType::Native(_) | CqlType::Custom(_) | CqlType::Vector(..) => Ok(bytes.clone()),
        }
    }
}

/// Whether values of `ty` may hold a set or a map (vectors are kept as sent).
fn holds_unordered(ty: &CqlType) -> bool {
    match ty {
        CqlType::Set(_) | CqlType::Map(..) => true,
        CqlType::Frozen(inner) | CqlType::List(inner) => holds_unordered(inner),
        CqlType::Tuple(types) => types.iter().any(holds_unordered),
        CqlType::Udt(udt) => udt.fields.iter().any(|(_, t)| holds_unordered(t)),
        CqlType::Native(_) | CqlType::Custom(_) | CqlType::Vector(..) => false,
    }
}

/// The items of a serialized collection, each normalized as the type `type_at(i)` gives.
fn normalized_items<'t>(
    bytes: &Bytes,
    kind: &str,
    per_entry: usize,
    type_at: impl Fn(usize) -> &'t CqlType,
) -> Result<Vec<Bytes>, TypeError> {
    split_collection(bytes, kind, per_entry)?
        .into_iter()
        .enumerate()
        .map(|(i, item)| Value::normalize(type_at(i), &bytes.slice_ref(item)))
        .collect()
}

fn normalize_map(key: &CqlType, value: &CqlType, bytes: &Bytes) -> Result<Bytes, TypeError> {
    let flat = normalized_items(bytes, "map", 2, |i| if i % 2 == 0 { key } else { value })?;
    let mut pairs: Vec<(Bytes, Bytes)> = flat
        .chunks_exact(2)
        .map(|pair| (pair[0].clone(), pair[1].clone()))
        .collect();
    // A stable sort keeps repeated keys in the order sent; the last one wins.
    pairs.sort_by(|a, b| compare(key, &a.0, &b.0));
    let mut unique: Vec<(Bytes, Bytes)> = Vec::with_capacity(pairs.len());
    for (k, v) in pairs {
        match unique.last_mut() {
            Some(last) if compare(key, &last.0, &k).is_eq() => last.1 = v,
            _ => unique.push((k, v)),
        }
    }
    let items: Vec<Bytes> = unique.into_iter().flat_map(|(k, v)| [k, v]).collect();
    Ok(encode_collection(items.len() / 2, &items))
}

/// A tuple or UDT with its fields normalized; fields left out at the end stay left out.
fn normalize_fields<'t>(
    types: impl Iterator<Item = &'t CqlType>,
    bytes: &Bytes,
) -> Result<Bytes, TypeError> {
    let mut rest: &[u8] = bytes;
    let mut out = BytesMut::with_capacity(bytes.len());
    for ty in types {
        if rest.is_empty() {
            break;
        }
        let (len, tail) = rest.split_at_checked(4).ok_or_else(short_field)?;
        let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        let Ok(n) = usize::try_from(len) else {
            out.put_i32(-1);
            rest = tail;
            continue;
        };
        let (field, tail) = tail.split_at_checked(n).ok_or_else(short_field)?;
        let field = Value::normalize(ty, &bytes.slice_ref(field))?;
        out.put_i32(i32::try_from(field.len()).map_err(|_| short_field())?);
        out.put_slice(&field);
        rest = tail;
    }
    Ok(out.freeze())
}

fn short_field() -> TypeError {
    TypeError("Not enough bytes to read a tuple or UDT field".into())
}

/// The v3+ collection layout: i32 entry count, then i32-length-prefixed items.
fn encode_collection(entries: usize, items: &[Bytes]) -> Bytes {
    let size = 4 + items.iter().map(|i| 4 + i.len()).sum::<usize>();
    let mut out = BytesMut::with_capacity(size);
    out.put_i32(i32::try_from(entries).unwrap_or(i32::MAX));
    for item in items {
        out.put_i32(i32::try_from(item.len()).unwrap_or(i32::MAX));
        out.put_slice(item);
    }
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cql_type::NativeType;

    fn int(n: i32) -> Bytes {
        Bytes::copy_from_slice(&n.to_be_bytes())
    }

    fn set_of(items: &[Bytes]) -> Bytes {
        encode_collection(items.len(), items)
    }

    fn int_type() -> CqlType {
        CqlType::Native(NativeType::Int)
    }

    fn frozen_set(element: CqlType) -> CqlType {
        CqlType::Frozen(Box::new(CqlType::Set(Box::new(element))))
    }

    #[test]
    fn sets_sort_and_drop_duplicates_at_every_depth() {
        let ty = frozen_set(int_type());
        let sorted = set_of(&[int(-1), int(2), int(3)]);
        let sent = set_of(&[int(3), int(-1), int(2), int(3)]);
        assert_eq!(Value::normalize(&ty, &sent).expect("valid"), sorted);
        let nested = CqlType::List(Box::new(frozen_set(int_type())));
        let sent = set_of(&[set_of(&[int(2), int(1)]), set_of(&[int(0)])]);
        let want = set_of(&[set_of(&[int(1), int(2)]), set_of(&[int(0)])]);
        assert_eq!(Value::normalize(&nested, &sent).expect("valid"), want);
    }

    #[test]
    fn maps_sort_by_key_and_keep_the_last_value_of_a_repeated_key() {
        let ty = CqlType::Map(Box::new(int_type()), Box::new(int_type()));
        let sent = encode_collection(3, &[int(5), int(50), int(1), int(10), int(5), int(55)]);
        let want = encode_collection(2, &[int(1), int(10), int(5), int(55)]);
        assert_eq!(Value::normalize(&ty, &sent).expect("valid"), want);
    }

    #[test]
    fn tuples_keep_nulls_and_left_out_fields() {
        let ty = CqlType::Tuple(vec![int_type(), frozen_set(int_type()), int_type()]);
        let mut sent = BytesMut::new();
        sent.put_i32(-1);
        let set = set_of(&[int(9), int(4)]);
        sent.put_i32(set.len() as i32);
        sent.put_slice(&set);
        let mut want = BytesMut::new();
        want.put_i32(-1);
        let set = set_of(&[int(4), int(9)]);
        want.put_i32(set.len() as i32);
        want.put_slice(&set);
        let got = Value::normalize(&ty, &sent.freeze()).expect("valid");
        assert_eq!(got, want.freeze());
    }

    #[test]
    fn values_without_sets_or_maps_are_returned_as_they_are() {
        let list = CqlType::List(Box::new(int_type()));
        let sent = set_of(&[int(3), int(1)]);
        assert_eq!(Value::normalize(&list, &sent).expect("valid"), sent);
        assert!(Value::normalize(&frozen_set(int_type()), &int(1)[..3].to_vec().into()).is_err());
    }
}
