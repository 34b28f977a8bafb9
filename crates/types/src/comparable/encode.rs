//! Byte-comparable encodings of single items (clustering components, collection elements,
//! tuple fields): a separator byte for the item kind, then a prefix-free body.
use super::fixed::{double_key, float_key, timeuuid_key, uuid_key};
use super::numeric::{encode_decimal, encode_varint};
use super::shape::{collection_items, item_kind, shape, tuple_items, Fields, ItemKind, Shape};
use crate::CqlType;

/// Ends the items of a frozen list, set or map; below every separator.
pub(super) const END_OF_ITEMS: u8 = 0x20;

/// The separator starting an item: ascending with the kind (null 0x3E, empty 0x3F, value
/// 0x40, malformed 0x41), mirrored around 0x40 for reversed components.
pub(super) fn separator(kind: ItemKind, reversed: bool) -> u8 {
    let ascending = match kind {
        ItemKind::Null => 0x3E,
        ItemKind::Empty => 0x3F,
        ItemKind::Value => 0x40,
        ItemKind::Malformed => 0x41,
    };
    if reversed {
        0x80 - ascending
    } else {
        ascending
    }
}

/// Writes one item: its separator, then its body (bit-inverted when `reversed`).
pub(super) fn encode_item(ty: &CqlType, item: Option<&[u8]>, reversed: bool, out: &mut Vec<u8>) {
    let shape = shape(ty);
    let kind = item_kind(shape, item);
    out.push(separator(kind, reversed));
    let start = out.len();
    match (kind, item) {
        (ItemKind::Value, Some(value)) => encode_value(shape, value, out),
        (ItemKind::Malformed, Some(raw)) => escape(raw, out),
        _ => {}
    }
    if reversed {
        super::invert(&mut out[start..]);
    }
}

/// The body of a well-formed, non-empty value.
fn encode_value(shape: Shape<'_>, v: &[u8], out: &mut Vec<u8>) {
    match shape {
        Shape::Signed(_) => {
            out.push(v[0] ^ 0x80);
            out.extend_from_slice(&v[1..]);
        }
        Shape::Unsigned(_) => out.extend_from_slice(v),
        Shape::Boolean => out.push(u8::from(v[0] != 0)),
        Shape::Float => {
            out.extend_from_slice(&float_key(u32::from_be_bytes(array(v))).to_be_bytes())
        }
        Shape::Double => {
            out.extend_from_slice(&double_key(u64::from_be_bytes(array(v))).to_be_bytes())
        }
        Shape::Uuid => out.extend_from_slice(&uuid_key(&array(v))),
        Shape::TimeUuid => out.extend_from_slice(&timeuuid_key(&array(v))),
        Shape::Varint => encode_varint(v, out),
        Shape::Decimal => encode_decimal(v, out),
        Shape::Bytes => escape(v, out),
        Shape::List(element) => encode_collection(v, 1, |_| element, out),
        Shape::Map(key, value) => {
            encode_collection(v, 2, |i| if i % 2 == 0 { key } else { value }, out)
        }
        Shape::Tuple(fields) => encode_fields(fields, v, out),
    }
}

/// A tuple's or user type's fields: each fixed one as an item (missing ones as nulls); then,
/// when an added one is set, the marker, the added ones up to the last one set, and
/// `END_OF_ITEMS`. A value written before ALTER TYPE ADD and the same value with the new
/// fields null have the same encoding.
fn encode_fields(fields: Fields<'_>, v: &[u8], out: &mut Vec<u8>) {
    let mut items = tuple_items(v, fields.len()).into_iter().flatten();
    let fixed = fields.fixed();
    for ty in (0..fixed).filter_map(|i| fields.get(i)) {
        encode_item(ty, items.next().flatten(), false, out);
    }
    let added = items
        .clone()
        .enumerate()
        .filter(|(_, item)| item.is_some())
        .last()
        .map_or(0, |(i, _)| i + 1);
    if added == 0 {
        return;
    }
    out.extend(added_marker(fields));
    let types = (fixed..fields.len()).filter_map(|i| fields.get(i));
    for (ty, item) in types.zip(items.take(added)) {
        encode_item(ty, item, false, out);
    }
    out.push(END_OF_ITEMS);
}

/// Starts the added fields of a user type value that has some set. A marker is 0xE0 to 0xFE,
/// above every byte that can follow a value (separators, terminators), so a value sorts before
/// the same value with added fields set, and after it once inverted in a reversed column; it
/// is never 0xFF, which after an escaped body's 0x00 would read as an escaped zero. Where user
/// types or tuples end together (each the last fixed field of the next), the inner one's
/// marker is above the outer one's, since both would come at the same position: `0xFE - n`
/// for `n` types ending inside this one's end, `0xE0` first for each 30 more.
pub(super) fn added_marker(fields: Fields<'_>) -> impl Iterator<Item = u8> {
    let nested = fields.nested_at_end();
    let last = 0xFE - u8::try_from(nested % 30).unwrap_or(0);
    std::iter::repeat_n(0xE0, nested / 30).chain(std::iter::once(last))
}

fn encode_collection<'t>(
    v: &[u8],
    per_entry: usize,
    item_type: impl Fn(usize) -> &'t CqlType,
    out: &mut Vec<u8>,
) {
    for (i, item) in collection_items(v, per_entry)
        .into_iter()
        .flatten()
        .enumerate()
    {
        encode_item(item_type(i), item, false, out);
    }
    out.push(END_OF_ITEMS);
}

/// Variable-length bytes: 0x00 escaped as 0x00 0xFF, ended by 0x00. Not strictly prefix-free
/// on its own: the byte after the end is always a separator or terminator (never 0x00 or
/// 0xFF), which keeps both the order and the decoding unambiguous.
fn escape(bytes: &[u8], out: &mut Vec<u8>) {
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.push(0x00);
}

/// The first `N` bytes of `v` (zero-padded; callers pass exactly `N`).
fn array<const N: usize>(v: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.iter_mut().zip(v).for_each(|(dst, src)| *dst = *src);
    a
}
