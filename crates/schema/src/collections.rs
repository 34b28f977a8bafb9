//! Serialized collections, tuples and UDTs built from element bytes, and split back into
//! elements (non-frozen collections are stored one cell per element).
use std::cmp::Ordering;

use bytes::{BufMut, Bytes, BytesMut};
use types::comparable::compare;
use types::{CqlError, CqlResult, CqlType};

/// Serializes `values` as a value of `ty` (a map takes flattened key, value pairs).
pub fn build(ty: &CqlType, values: Vec<Option<Bytes>>) -> CqlResult<Bytes> {
    match ty.unfrozen() {
        CqlType::List(_) => elements(values).map(|v| encode_elements(&v)),
        CqlType::Set(elem) => {
            let mut v = elements(values)?;
            sort_dedup(&mut v, elem);
            Ok(encode_elements(&v))
        }
        CqlType::Map(key, _) => {
            let flat = elements(values)?;
            let mut pairs: Vec<(Bytes, Bytes)> = flat
                .chunks(2)
                .filter(|c| c.len() == 2)
                .map(|c| (c[0].clone(), c[1].clone()))
                .collect();
            pairs.sort_by(|a, b| compare(key, &a.0, &b.0));
            pairs.dedup_by(|b, a| compare(key, &a.0, &b.0) == Ordering::Equal);
            Ok(encode_pairs(&pairs))
        }
        CqlType::Tuple(_) | CqlType::Udt(_) => Ok(encode_fields(&values)),
        CqlType::Vector(elem, _) => {
            let v = values
                .into_iter()
                .map(|v| v.ok_or_else(|| CqlError::invalid("null is not supported inside vectors")))
                .collect::<CqlResult<Vec<_>>>()?;
            Ok(encode_vector(elem, &v))
        }
        other => Err(CqlError::invalid(format!(
            "Invalid collection literal for type {}",
            other.cql_name()
        ))),
    }
}

fn elements(values: Vec<Option<Bytes>>) -> CqlResult<Vec<Bytes>> {
    values
        .into_iter()
        .map(|v| v.ok_or_else(|| CqlError::invalid("null is not supported inside collections")))
        .collect()
}

fn sort_dedup(v: &mut Vec<Bytes>, elem: &CqlType) {
    v.sort_by(|a, b| compare(elem, a, b));
    v.dedup_by(|b, a| compare(elem, a, b) == Ordering::Equal);
}

pub fn encode_elements(v: &[Bytes]) -> Bytes {
    let mut out = BytesMut::with_capacity(4 + v.iter().map(|e| e.len() + 4).sum::<usize>());
    out.put_i32(v.len() as i32);
    for e in v {
        out.put_i32(e.len() as i32);
        out.put_slice(e);
    }
    out.freeze()
}

pub fn encode_pairs(pairs: &[(Bytes, Bytes)]) -> Bytes {
    let mut out = BytesMut::new();
    out.put_i32(pairs.len() as i32);
    for (k, v) in pairs {
        out.put_i32(k.len() as i32);
        out.put_slice(k);
        out.put_i32(v.len() as i32);
        out.put_slice(v);
    }
    out.freeze()
}

pub fn encode_fields(values: &[Option<Bytes>]) -> Bytes {
    let mut out = BytesMut::new();
    for v in values {
        match v {
            Some(b) => {
                out.put_i32(b.len() as i32);
                out.put_slice(b);
            }
            None => out.put_i32(-1),
        }
    }
    out.freeze()
}

fn encode_vector(elem: &CqlType, v: &[Bytes]) -> Bytes {
    let mut out = Vec::new();
    let fixed = elem.fixed_length().is_some();
    for e in v {
        if !fixed {
            types::value::vint::write_unsigned(&mut out, e.len() as u64);
        }
        out.extend_from_slice(e);
    }
    Bytes::from(out)
}

/// The cell path of a list element appended at `ts`: ordered by timestamp, then by a
/// process-wide sequence, so elements keep their insertion order under byte comparison.
pub fn list_path(ts: i64) -> Bytes {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&((ts as u64) ^ (1 << 63)).to_be_bytes());
    out[8..].copy_from_slice(&SEQ.fetch_add(1, Ordering::Relaxed).to_be_bytes());
    Bytes::copy_from_slice(&out)
}

/// The cell paths of `count` list elements prepended now, in list order. They sort before
/// every appended element (whose paths start from a non-negative timestamp) and before the
/// elements of earlier prepends: each prepend takes a smaller negative stamp than the last.
pub fn prepend_paths(count: usize) -> Vec<Bytes> {
    use std::sync::atomic::{AtomicI64, Ordering};
    static LAST: AtomicI64 = AtomicI64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    let stamp = |last: i64| (-now).min(last.saturating_sub(1));
    let previous = LAST
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| {
            Some(stamp(last))
        })
        .unwrap_or(0);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&((stamp(previous) as u64) ^ (1 << 63)).to_be_bytes());
    (0..count as u64)
        .map(|i| {
            out[8..].copy_from_slice(&i.to_be_bytes());
            Bytes::copy_from_slice(&out)
        })
        .collect()
}

/// Splits a serialized list or set into its elements, or a map into flattened key, value pairs.
pub fn split(bytes: &[u8], is_map: bool) -> CqlResult<Vec<Bytes>> {
    let mut buf = bytes;
    let count = read_i32(&mut buf)?;
    if count < 0 {
        return Err(malformed());
    }
    let per = if is_map { 2 } else { 1 };
    let mut out = Vec::with_capacity((count as usize).min(1024) * per);
    for _ in 0..count as usize * per {
        let len = read_i32(&mut buf)?;
        if len < 0 || len as usize > buf.len() {
            return Err(malformed());
        }
        out.push(Bytes::copy_from_slice(&buf[..len as usize]));
        buf = &buf[len as usize..];
    }
    Ok(out)
}

/// Splits a serialized tuple or UDT into its fields (`None` for a null field); a value may end
/// before its type's last fields.
pub fn split_fields(bytes: &[u8]) -> CqlResult<Vec<Option<Bytes>>> {
    let mut buf = bytes;
    let mut out = Vec::new();
    while !buf.is_empty() {
        let len = read_i32(&mut buf)?;
        if len < 0 {
            out.push(None);
            continue;
        }
        if len as usize > buf.len() {
            return Err(malformed());
        }
        out.push(Some(Bytes::copy_from_slice(&buf[..len as usize])));
        buf = &buf[len as usize..];
    }
    Ok(out)
}

/// The cell path of field `index` of a non-frozen UDT: the position as a big-endian short, as
/// Cassandra's `UserType.cellPathForField` (paths survive field renames and additions).
pub fn field_path(index: usize) -> Bytes {
    Bytes::copy_from_slice(&(index as u16).to_be_bytes())
}

/// The field position a non-frozen UDT cell path names.
pub fn field_index(path: &[u8]) -> Option<usize> {
    let bytes: [u8; 2] = path.try_into().ok()?;
    Some(u16::from_be_bytes(bytes) as usize)
}

fn read_i32(buf: &mut &[u8]) -> CqlResult<i32> {
    if buf.len() < 4 {
        return Err(malformed());
    }
    let v = i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
    *buf = &buf[4..];
    Ok(v)
}

fn malformed() -> CqlError {
    CqlError::invalid("Malformed collection value")
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::NativeType;

    fn int(v: i32) -> Bytes {
        Bytes::copy_from_slice(&v.to_be_bytes())
    }

    #[test]
    fn sets_are_sorted_and_deduplicated() {
        let ty = CqlType::Set(Box::new(CqlType::Native(NativeType::Int)));
        let got = build(&ty, vec![Some(int(3)), Some(int(-1)), Some(int(3))]).unwrap();
        assert_eq!(split(&got, false).unwrap(), vec![int(-1), int(3)]);
    }

    #[test]
    fn maps_sort_by_key() {
        let ty = CqlType::Map(
            Box::new(CqlType::Native(NativeType::Int)),
            Box::new(CqlType::Native(NativeType::Int)),
        );
        let got = build(
            &ty,
            vec![Some(int(2)), Some(int(20)), Some(int(1)), Some(int(10))],
        )
        .unwrap();
        assert_eq!(
            split(&got, true).unwrap(),
            vec![int(1), int(10), int(2), int(20)]
        );
    }

    #[test]
    fn nulls_inside_lists_are_refused() {
        let ty = CqlType::List(Box::new(CqlType::Native(NativeType::Int)));
        assert!(build(&ty, vec![None]).is_err());
    }

    #[test]
    fn list_paths_keep_insertion_order() {
        let a = list_path(5);
        let b = list_path(5);
        let c = list_path(-1);
        assert!(a < b);
        assert!(c < a);
    }

    #[test]
    fn prepended_paths_sort_before_appended_and_earlier_prepends() {
        let appended_at_zero = [0x80u8];
        let first = prepend_paths(2);
        let second = prepend_paths(1);
        assert!(first[0] < first[1]);
        assert!(first[1].as_ref() < &appended_at_zero[..]);
        assert!(second[0] < first[0]);
    }

    #[test]
    fn fields_split_with_nulls_and_short_values() {
        let value = encode_fields(&[Some(int(1)), None, Some(Bytes::new())]);
        assert_eq!(
            split_fields(&value).unwrap(),
            vec![Some(int(1)), None, Some(Bytes::new())]
        );
        assert_eq!(split_fields(&[]).unwrap(), Vec::<Option<Bytes>>::new());
        assert!(split_fields(&[0, 0, 0, 9, 1]).is_err());
    }

    #[test]
    fn field_paths_are_positions() {
        assert_eq!(field_path(3).as_ref(), &[0, 3]);
        assert_eq!(field_index(&field_path(300)), Some(300));
        assert_eq!(field_index(&[1]), None);
    }

    #[test]
    fn malformed_bytes_are_an_error() {
        assert!(split(&[0, 0, 0, 2, 0, 0, 0, 9, 1], false).is_err());
    }
}
