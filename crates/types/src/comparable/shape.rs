//! How each CQL type is laid out for comparison and encoding, and the structural walk over
//! serialized frozen collections, tuples and UDTs (i32 lengths, -1 = null).
use crate::{CqlType, NativeType, UdtType};

/// The comparison-relevant layout of a type.
#[derive(Clone, Copy, Debug)]
pub(super) enum Shape<'t> {
    /// Big-endian two's complement of this many bytes (tinyint .. bigint, counter, timestamp).
    Signed(usize),
    /// Fixed-length, compared as unsigned bytes (date, time).
    Unsigned(usize),
    Boolean,
    Float,
    Double,
    Uuid,
    TimeUuid,
    Varint,
    Decimal,
    /// Compared bytewise, any length (text, ascii, blob, inet, duration, vector, custom).
    Bytes,
    /// A frozen list or set.
    List(&'t CqlType),
    Map(&'t CqlType, &'t CqlType),
    Tuple(Fields<'t>),
}

/// The field types of a tuple or UDT.
#[derive(Clone, Copy, Debug)]
pub(super) enum Fields<'t> {
    Tuple(&'t [CqlType]),
    Udt(&'t UdtType),
}

impl<'t> Fields<'t> {
    pub(super) fn len(self) -> usize {
        match self {
            Fields::Tuple(types) => types.len(),
            Fields::Udt(udt) => udt.fields.len(),
        }
    }

    pub(super) fn get(self, i: usize) -> Option<&'t CqlType> {
        match self {
            Fields::Tuple(types) => types.get(i),
            Fields::Udt(udt) => udt.fields.get(i).map(|(_, ty)| ty),
        }
    }

    /// The leading fields every encoding spells, null or not: all of a tuple's, a user
    /// type's but those ALTER TYPE added.
    pub(super) fn fixed(self) -> usize {
        match self {
            Fields::Tuple(types) => types.len(),
            Fields::Udt(udt) => udt.fields.len().saturating_sub(udt.added_fields),
        }
    }

    /// How many tuples and user types end where this one's fixed fields end: its last fixed
    /// field if that is one, that one's last fixed field, and so on.
    pub(super) fn nested_at_end(self) -> usize {
        let mut nested = 0;
        let mut fields = self;
        while let Some(Shape::Tuple(last)) = fields
            .fixed()
            .checked_sub(1)
            .and_then(|i| fields.get(i))
            .map(shape)
        {
            nested += 1;
            fields = last;
        }
        nested
    }
}

pub(super) fn shape(ty: &CqlType) -> Shape<'_> {
    match ty {
        CqlType::Native(native) => native_shape(*native),
        CqlType::Frozen(inner) => shape(inner),
        CqlType::List(element) | CqlType::Set(element) => Shape::List(element),
        CqlType::Map(key, value) => Shape::Map(key, value),
        CqlType::Tuple(types) => Shape::Tuple(Fields::Tuple(types)),
        CqlType::Udt(udt) => Shape::Tuple(Fields::Udt(udt)),
        CqlType::Vector(..) | CqlType::Custom(_) => Shape::Bytes,
    }
}

fn native_shape(native: NativeType) -> Shape<'static> {
    use NativeType::*;
    match native {
        Tinyint => Shape::Signed(1),
        Smallint => Shape::Signed(2),
        Int => Shape::Signed(4),
        Bigint | Counter | Timestamp => Shape::Signed(8),
        Date => Shape::Unsigned(4),
        Time => Shape::Unsigned(8),
        Boolean => Shape::Boolean,
        Float => Shape::Float,
        Double => Shape::Double,
        Uuid => Shape::Uuid,
        Timeuuid => Shape::TimeUuid,
        Varint => Shape::Varint,
        Decimal => Shape::Decimal,
        Ascii | Text | Blob | Inet | Duration => Shape::Bytes,
    }
}

/// Whether a non-empty value is well formed at its top level: fixed types have their exact
/// length, decimals have a scale and an unscaled value, composites split exactly into items.
/// Nested items are judged on their own when they are compared or encoded.
pub(super) fn is_well_formed(shape: Shape<'_>, value: &[u8]) -> bool {
    match shape {
        Shape::Signed(n) | Shape::Unsigned(n) => value.len() == n,
        Shape::Boolean => value.len() == 1,
        Shape::Float => value.len() == 4,
        Shape::Double => value.len() == 8,
        Shape::Uuid | Shape::TimeUuid => value.len() == 16,
        Shape::Decimal => value.len() > 4,
        Shape::Varint | Shape::Bytes => true,
        Shape::List(_) => collection_items(value, 1).is_some(),
        Shape::Map(..) => collection_items(value, 2).is_some(),
        Shape::Tuple(fields) => tuple_items(value, fields.len()).is_some(),
    }
}

/// The items of a frozen collection (`per_entry` = 2 for maps: key, value, key, ...), or
/// `None` when the bytes do not split exactly.
pub(super) fn collection_items(value: &[u8], per_entry: usize) -> Option<Items<'_>> {
    let (count, rest) = read_i32(value)?;
    let total = usize::try_from(count).ok()?.checked_mul(per_entry)?;
    let items = Items {
        rest,
        remaining: total,
    };
    items.clone().check().then_some(items)
}

/// The fields of a tuple/UDT value (at most `max` of them), or `None` when malformed.
pub(super) fn tuple_items(value: &[u8], max: usize) -> Option<Items<'_>> {
    let mut count = 0;
    let mut items = Items {
        rest: value,
        remaining: usize::MAX,
    };
    while !items.rest.is_empty() {
        items.next()?;
        count += 1;
    }
    (count <= max).then_some(Items {
        rest: value,
        remaining: count,
    })
}

/// An iterator over length-prefixed items; `None` items are nulls (negative length).
#[derive(Clone, Debug)]
pub(super) struct Items<'a> {
    rest: &'a [u8],
    remaining: usize,
}

impl<'a> Items<'a> {
    /// Number of items left.
    pub(super) fn remaining(&self) -> usize {
        self.remaining
    }

    /// Whether every item reads and nothing is left over.
    fn check(mut self) -> bool {
        while self.remaining > 0 {
            if self.next().is_none() {
                return false;
            }
        }
        self.rest.is_empty()
    }
}

impl<'a> Iterator for Items<'a> {
    type Item = Option<&'a [u8]>;

    /// The next item; iteration stops early (returns `None`) on truncated bytes, which
    /// `check` rules out for values built by `collection_items`/`tuple_items`.
    fn next(&mut self) -> Option<Option<&'a [u8]>> {
        if self.remaining == 0 {
            return None;
        }
        let (len, rest) = read_i32(self.rest)?;
        self.remaining -= 1;
        let Ok(len) = usize::try_from(len) else {
            self.rest = rest;
            return Some(None);
        };
        if rest.len() < len {
            return None;
        }
        let (item, rest) = rest.split_at(len);
        self.rest = rest;
        Some(Some(item))
    }
}

fn read_i32(bytes: &[u8]) -> Option<(i32, &[u8])> {
    let (head, rest) = bytes.split_first_chunk::<4>()?;
    Some((i32::from_be_bytes(*head), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collections_must_split_exactly() {
        let list = [0, 0, 0, 2, 0, 0, 0, 1, 7, 255, 255, 255, 255];
        let items: Vec<_> = collection_items(&list, 1).unwrap().collect();
        assert_eq!(items, vec![Some(&[7u8][..]), None]);
        assert!(collection_items(&list[..12], 1).is_none());
        assert!(collection_items(&[0, 0, 0, 1, 0, 0, 0, 0, 9], 1).is_none());
        assert!(collection_items(&list, 2).is_none());
        assert!(collection_items(&[255, 255, 255, 255], 1).is_none());
    }

    #[test]
    fn tuples_may_be_short_but_not_long() {
        let two = [0, 0, 0, 1, 5, 255, 255, 255, 255];
        assert_eq!(tuple_items(&two, 3).unwrap().count(), 2);
        assert!(tuple_items(&two, 1).is_none());
        assert!(tuple_items(&two[..3], 3).is_none());
    }

    #[test]
    fn fixed_lengths() {
        let int = shape(&CqlType::Native(NativeType::Int));
        assert!(is_well_formed(int, &[0, 0, 0, 1]));
        assert!(!is_well_formed(int, &[0, 0, 1]));
        assert!(!is_well_formed(
            shape(&CqlType::Native(NativeType::Decimal)),
            &[0; 4]
        ));
    }
}

/// What an item (a clustering component, collection element or tuple field) holds, in the
/// order such items sort (ascending): null, empty, a well-formed value, malformed bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum ItemKind {
    Null,
    Empty,
    Value,
    Malformed,
}

pub(super) fn item_kind(shape: Shape<'_>, item: Option<&[u8]>) -> ItemKind {
    match item {
        None => ItemKind::Null,
        Some([]) => ItemKind::Empty,
        Some(v) if is_well_formed(shape, v) => ItemKind::Value,
        Some(_) => ItemKind::Malformed,
    }
}
