//! Decoding of item encodings back to Cassandra's serialized form.
use super::encode::{added_marker, separator, END_OF_ITEMS};
use super::fixed::{double_from_key, float_from_key, timeuuid_from_key, uuid_from_key};
use super::numeric::{decode_decimal, decode_varint};
use super::reader::Reader;
use super::shape::{shape, Fields, ItemKind, Shape};
use crate::{CqlType, TypeError};

const KINDS: [ItemKind; 4] = [
    ItemKind::Null,
    ItemKind::Empty,
    ItemKind::Value,
    ItemKind::Malformed,
];

/// Reads one item, appending its serialized bytes (nothing for null or empty) to `out`.
pub(super) fn decode_item(
    ty: &CqlType,
    r: &mut Reader<'_>,
    reversed: bool,
    out: &mut Vec<u8>,
) -> Result<ItemKind, TypeError> {
    let sep = r.byte()?;
    let kind = KINDS
        .into_iter()
        .find(|k| separator(*k, reversed) == sep)
        .ok_or_else(|| bad(format!("invalid component separator {sep:#04x}")))?;
    let outer_mask = r.mask;
    if reversed {
        r.mask ^= 0xFF;
    }
    let result = match kind {
        ItemKind::Value => decode_value(shape(ty), r, out),
        ItemKind::Malformed => unescape(r, out),
        ItemKind::Null | ItemKind::Empty => Ok(()),
    };
    r.mask = outer_mask;
    result.map(|()| kind)
}

fn decode_value(shape: Shape<'_>, r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), TypeError> {
    match shape {
        Shape::Signed(n) => {
            let start = out.len();
            r.copy(n, out)?;
            out[start] ^= 0x80;
            Ok(())
        }
        Shape::Unsigned(n) => r.copy(n, out),
        Shape::Boolean => r.copy(1, out),
        Shape::Float => {
            let key = u32::from_be_bytes(read_array(r)?);
            out.extend_from_slice(&float_from_key(key).to_be_bytes());
            Ok(())
        }
        Shape::Double => {
            let key = u64::from_be_bytes(read_array(r)?);
            out.extend_from_slice(&double_from_key(key).to_be_bytes());
            Ok(())
        }
        Shape::Uuid => {
            out.extend_from_slice(&uuid_from_key(&read_array(r)?));
            Ok(())
        }
        Shape::TimeUuid => {
            out.extend_from_slice(&timeuuid_from_key(&read_array(r)?));
            Ok(())
        }
        Shape::Varint => decode_varint(r, out),
        Shape::Decimal => decode_decimal(r, out),
        Shape::Bytes => unescape(r, out),
        Shape::List(element) => decode_collection(r, 1, |_| element, out),
        Shape::Map(key, value) => {
            decode_collection(r, 2, |i| if i % 2 == 0 { key } else { value }, out)
        }
        Shape::Tuple(fields) => decode_fields(fields, r, out),
    }
}

/// The fields written by `encode_fields`, every one of the type's (unset ones as nulls).
fn decode_fields(
    fields: Fields<'_>,
    r: &mut Reader<'_>,
    out: &mut Vec<u8>,
) -> Result<(), TypeError> {
    let mut read = fields.fixed();
    for ty in (0..read).filter_map(|i| fields.get(i)) {
        decode_length_prefixed(ty, r, out)?;
    }
    if read < fields.len() && r.skip(added_marker(fields)) {
        while r.peek() != Some(END_OF_ITEMS) {
            let ty = fields
                .get(read)
                .ok_or_else(|| bad("more fields than the user type has".to_string()))?;
            decode_length_prefixed(ty, r, out)?;
            read += 1;
        }
        r.byte()?;
    }
    for _ in read..fields.len() {
        out.extend_from_slice(&(-1i32).to_be_bytes());
    }
    Ok(())
}

fn read_array<const N: usize>(r: &mut Reader<'_>) -> Result<[u8; N], TypeError> {
    let mut a = [0u8; N];
    r.read_into(&mut a)?;
    Ok(a)
}

/// Items up to `END_OF_ITEMS`, written as an i32 count (entries) and length-prefixed items.
fn decode_collection<'t>(
    r: &mut Reader<'_>,
    per_entry: usize,
    item_type: impl Fn(usize) -> &'t CqlType,
    out: &mut Vec<u8>,
) -> Result<(), TypeError> {
    let count_at = out.len();
    out.extend_from_slice(&[0; 4]);
    let mut items = 0;
    while r.peek() != Some(END_OF_ITEMS) {
        decode_length_prefixed(item_type(items), r, out)?;
        items += 1;
    }
    r.byte()?;
    if items % per_entry != 0 {
        return Err(bad("map entry without a value".to_string()));
    }
    let count =
        i32::try_from(items / per_entry).map_err(|_| bad("collection too large".to_string()))?;
    out[count_at..count_at + 4].copy_from_slice(&count.to_be_bytes());
    Ok(())
}

/// One item as an i32 length (-1 for null) followed by its bytes.
fn decode_length_prefixed(
    ty: &CqlType,
    r: &mut Reader<'_>,
    out: &mut Vec<u8>,
) -> Result<(), TypeError> {
    let len_at = out.len();
    out.extend_from_slice(&[0; 4]);
    let kind = decode_item(ty, r, false, out)?;
    let len = match kind {
        ItemKind::Null => -1,
        _ => {
            i32::try_from(out.len() - len_at - 4).map_err(|_| bad("item too large".to_string()))?
        }
    };
    out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// The inverse of the 0x00 → 0x00 0xFF escaping, up to the unescaped 0x00 end.
fn unescape(r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), TypeError> {
    loop {
        match r.byte()? {
            0 if r.peek() == Some(0xFF) => {
                r.byte()?;
                out.push(0);
            }
            0 => return Ok(()),
            b => out.push(b),
        }
    }
}

fn bad(message: String) -> TypeError {
    TypeError(message)
}
