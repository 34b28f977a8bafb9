//! The bytes a set element or a map key is stored under in a non-frozen collection (its cell
//! path). Storage tells cells apart by their path bytes, while Cassandra tells them apart by
//! the element type's comparator, which holds a user type or tuple equal to the same value
//! with more trailing null fields: after `ALTER TYPE ... ADD`, `{a: 1}` written before and
//! `{a: 1, b: null}` written after are one set element there. So such values are spelt one
//! way, as the clustering encoding spells them (`crate::comparable`): a user type with every
//! field it had before ALTER TYPE ADD appended any (`UdtType::added_fields`) and the added
//! ones up to the last set, a tuple with every item; at every depth.
use bytes::{BufMut, Bytes, BytesMut};

use super::deserialize::{split_collection, split_fields};
use super::Value;
use crate::cql_type::CqlType;
use crate::error::TypeError;

impl Value {
    /// `bytes`, a valid value of `ty`, as the path of a set element or map key. Values
    /// without tuples or user types come back unchanged.
    pub fn element_key(ty: &CqlType, bytes: &Bytes) -> Result<Bytes, TypeError> {
        if !holds_fields(ty) {
            return Ok(bytes.clone());
        }
        match ty {
            CqlType::Frozen(inner) => Value::element_key(inner, bytes),
            CqlType::List(element) => items(bytes, "list", 1, |_| element),
            CqlType::Set(element) => items(bytes, "set", 1, |_| element),
            CqlType::Map(key, value) => {
                items(bytes, "map", 2, |i| if i % 2 == 0 { key } else { value })
            }
            CqlType::Tuple(types) => fields(types.iter().collect(), types.len(), bytes),
            CqlType::Udt(udt) => {
                let kept = udt.fields.len().saturating_sub(udt.added_fields);
                fields(udt.fields.iter().map(|(_, t)| t).collect(), kept, bytes)
            }
            CqlType::Native(_) | CqlType::Custom(_) | CqlType::Vector(..) => Ok(bytes.clone()),
        }
    }
}

/// Whether values of `ty` may hold a tuple or a user type (vectors are kept as sent).
fn holds_fields(ty: &CqlType) -> bool {
    match ty {
        CqlType::Tuple(_) | CqlType::Udt(_) => true,
        CqlType::Frozen(inner) | CqlType::List(inner) | CqlType::Set(inner) => holds_fields(inner),
        CqlType::Map(key, value) => holds_fields(key) || holds_fields(value),
        CqlType::Native(_) | CqlType::Custom(_) | CqlType::Vector(..) => false,
    }
}

/// A collection with each item spelt as the type `type_at(i)` gives.
fn items<'t>(
    bytes: &Bytes,
    kind: &str,
    per_entry: usize,
    type_at: impl Fn(usize) -> &'t CqlType,
) -> Result<Bytes, TypeError> {
    let parts = split_collection(bytes, kind, per_entry)?;
    let mut out = BytesMut::with_capacity(bytes.len());
    out.put_slice(&bytes[..4]);
    for (i, part) in parts.into_iter().enumerate() {
        put_field(
            &mut out,
            Some(Value::element_key(type_at(i), &bytes.slice_ref(part))?),
        )?;
    }
    Ok(out.freeze())
}

/// Fields of `types`: the first `kept` always (absent ones as nulls), the others up to the
/// last one set.
fn fields(types: Vec<&CqlType>, kept: usize, bytes: &Bytes) -> Result<Bytes, TypeError> {
    let mut spelt = split_fields(bytes, types.len())?
        .into_iter()
        .zip(types)
        .map(|(field, ty)| {
            field
                .map(|f| Value::element_key(ty, &bytes.slice_ref(f)))
                .transpose()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let last_set = spelt.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
    spelt.truncate(last_set.max(kept));
    let mut out = BytesMut::with_capacity(bytes.len());
    for field in spelt {
        put_field(&mut out, field)?;
    }
    Ok(out.freeze())
}

fn put_field(out: &mut BytesMut, field: Option<Bytes>) -> Result<(), TypeError> {
    match field {
        Some(f) => {
            let len = i32::try_from(f.len())
                .map_err(|_| TypeError("A collection item is too large".into()))?;
            out.put_i32(len);
            out.put_slice(&f);
        }
        None => out.put_i32(-1),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::cql_type::{NativeType, UdtType};

    fn int(n: i32) -> Option<Bytes> {
        Some(Bytes::copy_from_slice(&n.to_be_bytes()))
    }

    fn spelt(fields: &[Option<Bytes>]) -> Bytes {
        let mut out = BytesMut::new();
        for f in fields {
            put_field(&mut out, f.clone()).expect("small");
        }
        out.freeze()
    }

    /// A user type of `n` int fields, the last `added` appended by ALTER TYPE ADD.
    fn udt(n: usize, added: usize) -> CqlType {
        let mut udt = UdtType::new(
            "ks",
            "u",
            (0..n)
                .map(|i| (format!("f{i}"), CqlType::Native(NativeType::Int)))
                .collect(),
        );
        udt.added_fields = added;
        CqlType::Udt(Arc::new(udt))
    }

    #[test]
    fn a_user_type_keeps_its_first_fields_and_the_added_ones_up_to_the_last_set() {
        let ty = udt(3, 1);
        let before_alter = spelt(&[int(1), None]);
        let key = |v: &[Option<Bytes>]| Value::element_key(&ty, &spelt(v)).expect("valid");
        assert_eq!(key(&[int(1), None]), before_alter);
        assert_eq!(key(&[int(1), None, None]), before_alter);
        assert_eq!(key(&[int(1)]), before_alter);
        assert_eq!(key(&[int(1), None, int(3)]), spelt(&[int(1), None, int(3)]));
    }

    #[test]
    fn tuples_get_every_item_at_every_depth() {
        let pair = CqlType::Tuple(vec![udt(2, 1), CqlType::Native(NativeType::Int)]);
        let ty = CqlType::Frozen(Box::new(CqlType::List(Box::new(pair))));
        let inner = spelt(&[spelt(&[int(1), None]).into()]);
        let sent = Bytes::from(
            [
                &1i32.to_be_bytes()[..],
                &(inner.len() as i32).to_be_bytes(),
                &inner,
            ]
            .concat(),
        );
        let want_inner = spelt(&[spelt(&[int(1)]).into(), None]);
        let want = Bytes::from(
            [
                &1i32.to_be_bytes()[..],
                &(want_inner.len() as i32).to_be_bytes(),
                &want_inner,
            ]
            .concat(),
        );
        assert_eq!(Value::element_key(&ty, &sent).expect("valid"), want);
        let plain = CqlType::Native(NativeType::Int);
        assert_eq!(
            Value::element_key(&plain, &int(7).unwrap()).expect("valid"),
            int(7).unwrap()
        );
    }
}
