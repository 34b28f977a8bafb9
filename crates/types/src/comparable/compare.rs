//! Cassandra's per-type comparators (`AbstractType.compare`) over serialized values.
use std::cmp::Ordering;

use super::fixed::{double_key, float_key};
use super::numeric::{compare_decimal, compare_varint};
use super::shape::{collection_items, item_kind, shape, tuple_items, ItemKind, Items, Shape};
use crate::CqlType;

/// Compares two serialized values of `ty` as Cassandra does. Empty values sort first.
/// Malformed values (wrong length for a fixed-size type, composites that do not split) never
/// panic: they sort after every well-formed value and bytewise among themselves.
pub fn compare(ty: &CqlType, a: &[u8], b: &[u8]) -> Ordering {
    compare_item(ty, Some(a), Some(b))
}

/// Compares items that may be null: null < empty < well-formed < malformed.
pub(super) fn compare_item(ty: &CqlType, a: Option<&[u8]>, b: Option<&[u8]>) -> Ordering {
    let shape = shape(ty);
    let kind = item_kind(shape, a);
    kind.cmp(&item_kind(shape, b))
        .then_with(|| match (kind, a, b) {
            (ItemKind::Value, Some(a), Some(b)) => compare_valid(shape, a, b),
            _ => a.cmp(&b),
        })
}

/// Compares two well-formed, non-empty values.
fn compare_valid(shape: Shape<'_>, a: &[u8], b: &[u8]) -> Ordering {
    match shape {
        Shape::Signed(_) => compare_signed(a, b),
        Shape::Unsigned(_) | Shape::Bytes => a.cmp(b),
        Shape::Boolean => (a[0] != 0).cmp(&(b[0] != 0)),
        Shape::Float => float_key(word(a) as u32).cmp(&float_key(word(b) as u32)),
        Shape::Double => double_key(word(a)).cmp(&double_key(word(b))),
        Shape::Uuid => compare_uuid(a, b),
        Shape::TimeUuid => compare_timeuuid(a, b),
        Shape::Varint => compare_varint(a, b),
        Shape::Decimal => compare_decimal(a, b),
        Shape::List(element) => compare_collections(a, b, 1, |_| element),
        Shape::Map(key, value) => {
            compare_collections(a, b, 2, |i| if i % 2 == 0 { key } else { value })
        }
        Shape::Tuple(fields) => {
            let (mut xs, mut ys) =
                match (tuple_items(a, fields.len()), tuple_items(b, fields.len())) {
                    (Some(xs), Some(ys)) => (xs, ys),
                    _ => return a.cmp(b),
                };
            (0..fields.len())
                .filter_map(|i| fields.get(i))
                .map(|ty| compare_item(ty, xs.next().flatten(), ys.next().flatten()))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }
    }
}

/// Big-endian two's complement of equal lengths.
fn compare_signed(a: &[u8], b: &[u8]) -> Ordering {
    (a[0] as i8)
        .cmp(&(b[0] as i8))
        .then_with(|| a[1..].cmp(&b[1..]))
}

/// Up to eight big-endian bytes as an integer.
fn word(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b))
}

/// Cassandra's TimeUUIDType: the reordered timestamp as a signed long, then the low eight
/// bytes compared as signed bytes.
fn compare_timeuuid(a: &[u8], b: &[u8]) -> Ordering {
    compare_signed(&reordered(a), &reordered(b))
        .then_with(|| signed_bytes(&a[8..]).cmp(&signed_bytes(&b[8..])))
}

/// Cassandra's UUIDType: version, then the timestamp for version 1 or the high half
/// otherwise, then the low half, all unsigned.
fn compare_uuid(a: &[u8], b: &[u8]) -> Ordering {
    let version = |u: &[u8]| u[6] >> 4;
    version(a).cmp(&version(b)).then_with(|| {
        if version(a) == 1 {
            reordered(a)
                .cmp(&reordered(b))
                .then_with(|| a[8..].cmp(&b[8..]))
        } else {
            a.cmp(b)
        }
    })
}

/// A UUID's high half with the timestamp moved to the front: time_hi_and_version,
/// time_mid, time_low.
fn reordered(u: &[u8]) -> [u8; 8] {
    [u[6], u[7], u[4], u[5], u[0], u[1], u[2], u[3]]
}

/// Eight bytes as a number whose unsigned order is their order as signed Java bytes.
fn signed_bytes(bytes: &[u8]) -> u64 {
    word(bytes) ^ 0x8080_8080_8080_8080
}

/// Frozen lists, sets and maps: item by item (for maps key then value), then the shorter first.
fn compare_collections<'t>(
    a: &[u8],
    b: &[u8],
    per_entry: usize,
    item_type: impl Fn(usize) -> &'t CqlType,
) -> Ordering {
    let (xs, ys): (Items<'_>, Items<'_>) = match (
        collection_items(a, per_entry),
        collection_items(b, per_entry),
    ) {
        (Some(xs), Some(ys)) => (xs, ys),
        _ => return a.cmp(b),
    };
    let lengths = xs.remaining().cmp(&ys.remaining());
    xs.zip(ys)
        .enumerate()
        .map(|(i, (x, y))| compare_item(item_type(i), x, y))
        .find(|o| o.is_ne())
        .unwrap_or(lengths)
}
