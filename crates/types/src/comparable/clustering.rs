//! Clustering keys and slice bounds as byte-comparable strings (see the parent module for the
//! layout and its invariants).
use bytes::Bytes;

use super::decode::decode_item;
use super::encode::encode_item;
use super::reader::Reader;
use super::shape::ItemKind;
use crate::{CqlType, TypeError};

/// Ends a clustering written by `encode_clustering`: above the `Before` bound terminator,
/// below every separator and the `After` bound terminator.
const CLUSTERING_END: u8 = 0x38;
const BEFORE: u8 = 0x20;
const AFTER: u8 = 0x60;

/// Which side of the clusterings extending a prefix a bound sits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundKind {
    /// Before every clustering that extends the prefix.
    Before,
    /// After every clustering that extends the prefix.
    After,
}

/// Appends the encoding of a clustering (or a prefix of one, which sorts before its
/// extensions) to `out`. `types` are the clustering columns with their "reversed" flag
/// (`CLUSTERING ORDER BY ... DESC`); values past `types.len()` are ignored.
pub fn encode_clustering(types: &[(CqlType, bool)], values: &[Option<&[u8]>], out: &mut Vec<u8>) {
    encode_components(types, values, out);
    out.push(CLUSTERING_END);
}

/// Appends the encoding of a slice bound at `prefix` to `out`.
pub fn encode_bound(
    types: &[(CqlType, bool)],
    prefix: &[Option<&[u8]>],
    kind: BoundKind,
    out: &mut Vec<u8>,
) {
    encode_components(types, prefix, out);
    out.push(match kind {
        BoundKind::Before => BEFORE,
        BoundKind::After => AFTER,
    });
}

fn encode_components(types: &[(CqlType, bool)], values: &[Option<&[u8]>], out: &mut Vec<u8>) {
    for ((ty, reversed), value) in types.iter().zip(values) {
        encode_item(ty, *value, *reversed, out);
    }
}

/// Recovers the serialized components of a clustering written by `encode_clustering`
/// (normalised as the module documents). The empty string (the static row) has none.
pub fn decode_clustering(
    types: &[(CqlType, bool)],
    encoded: &[u8],
) -> Result<Vec<Option<Bytes>>, TypeError> {
    let mut values = Vec::with_capacity(types.len());
    if encoded.is_empty() {
        return Ok(values);
    }
    let mut r = Reader::new(encoded);
    let mut buf = Vec::new();
    while r.peek() != Some(CLUSTERING_END) {
        let (ty, reversed) = types
            .get(values.len())
            .ok_or_else(|| TypeError("clustering has more components than columns".to_string()))?;
        buf.clear();
        values.push(match decode_item(ty, &mut r, *reversed, &mut buf)? {
            ItemKind::Null => None,
            ItemKind::Empty => Some(Bytes::new()),
            ItemKind::Value | ItemKind::Malformed => Some(Bytes::copy_from_slice(&buf)),
        });
    }
    r.byte()?;
    if !r.is_at_end() {
        return Err(TypeError("trailing bytes after clustering".to_string()));
    }
    Ok(values)
}
