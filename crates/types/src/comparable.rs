//! Cassandra's per-type value comparators and a byte-comparable encoding of clustering keys,
//! so storage can order rows (memtable keys, SSTable indexes) with a plain byte compare.
//!
//! # Encoding
//!
//! A clustering (or prefix) is a sequence of components, each a separator byte followed by a
//! body, and then a terminator:
//!
//! | byte | meaning |
//! |------|---------|
//! | 0x3E / 0x3F / 0x40 / 0x41 | component separator: null / empty / value / malformed value |
//! | 0x42 .. 0x3E | the same, mirrored around 0x40, for reversed (`DESC`) columns |
//! | 0x38 | end of a clustering written by [`encode_clustering`] |
//! | 0x20 | end of a [`BoundKind::Before`] bound |
//! | 0x60 | end of a [`BoundKind::After`] bound |
//! | 0xE0 .. 0xFE | start of the added fields of a user type value (below) |
//!
//! Bodies are prefix-free per type: fixed-length integers with the sign bit flipped; date and
//! time as is; booleans as 0/1; floats with the IEEE total-order trick (NaNs canonical and
//! last, -0.0 before 0.0, as Java's `Float.compare`); uuids/timeuuids with their timestamp
//! moved to the front as Cassandra's comparators order them; varints as a sign+length header
//! and minimal two's complement; decimals as sign, exponent and base-100 digits; text, blob,
//! inet, duration and other bytes with 0x00 escaped as 0x00 0xFF and ended by 0x00; frozen
//! lists/sets/maps as their items (each with its own separator) ended by 0x20; tuples as one
//! item per field (missing trailing fields as nulls). A user type is spelt the same way up to
//! the fields ALTER TYPE ADD appended (`UdtType::added_fields`); those follow only when one is
//! set: a marker, the added fields up to the last one set, then 0x20. So a value written
//! before `ALTER TYPE ... ADD` and the same value with the new fields null have one key, as
//! Cassandra's comparator holds them equal, and keys written before Helenus counted added
//! fields keep their bytes. Such a body is the one that may be a prefix of another (the same
//! value with added fields set); its marker, 0xE0 to 0xFE, is above every byte that can follow
//! a value, so the shorter value still sorts first, and where types end together (one the last
//! fixed field of the other) the inner one's marker is the higher. A reversed component's body
//! is bit-inverted.
//!
//! # Invariants
//!
//! * For clusterings `a`, `b` of the same table, `encode(a).cmp(encode(b))` equals the
//!   lexicographic comparison of their components by [`compare`] (reversed per `DESC`
//!   column), a clustering sorting before its extensions.
//! * For a prefix `P` and a clustering `C`: `bound(P, Before) < encode(C) < bound(P, After)`
//!   exactly when `C` extends `P` (or equals it); otherwise both bounds are on the same side.
//! * The bounds of the empty prefix are `[0x20]` and `[0x60]`, before and after every row.
//!   The static row is keyed by the empty byte string, which sorts before everything.
//! * [`decode_clustering`] inverts [`encode_clustering`] up to normalisation: varints come
//!   back minimal, decimals with the smallest exact scale (1.50 → 1.5, zero → scale 0),
//!   booleans as 0/1, NaNs canonical, tuples and user types with every field of their type
//!   (explicit trailing nulls).
//! * Malformed values (wrong length for a fixed-size type, composites that do not split) never
//!   panic: they sort after every well-formed value of their type and bytewise among
//!   themselves, in [`compare`] and the encoding alike.
mod clustering;
mod compare;
mod decode;
mod encode;
mod fixed;
mod numeric;
mod reader;
mod shape;
#[cfg(test)]
mod tests;

pub use clustering::{decode_clustering, encode_bound, encode_clustering, BoundKind};
pub use compare::compare;

/// Bitwise-inverts bytes in place (reversed components, negative decimals).
fn invert(bytes: &mut [u8]) {
    bytes.iter_mut().for_each(|b| *b = !*b);
}
