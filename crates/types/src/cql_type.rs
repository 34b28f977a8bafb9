//! The CQL type system: native types, collections, tuples, UDTs, vectors, and their
//! names (CQL text, Java class names) and protocol `[option]` encoding.
use std::sync::Arc;

mod bounds;
mod java_name;
mod name;
mod option;
mod parse;

pub use bounds::MAX_TYPE_NODES;
pub use name::{is_reserved_keyword, quote_identifier};

/// The native (non-parameterised) CQL types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NativeType {
    Ascii,
    Bigint,
    Blob,
    Boolean,
    Counter,
    Date,
    Decimal,
    Double,
    Duration,
    Float,
    Inet,
    Int,
    Smallint,
    Text,
    Time,
    Timestamp,
    Timeuuid,
    Tinyint,
    Uuid,
    Varint,
}

/// A user-defined type as stored in `system_schema.types`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UdtType {
    pub keyspace: String,
    pub name: String,
    pub fields: Vec<(String, CqlType)>,
    /// How many of the last `fields` ALTER TYPE ADD appended (0 for a type never altered, or
    /// altered before Helenus counted them). Clustering keys spell the other fields always and
    /// these only up to the last one set, so a key written before an ALTER keeps its bytes.
    pub added_fields: usize,
}

impl UdtType {
    /// A type as CREATE TYPE makes it: no field added since.
    pub fn new(keyspace: &str, name: &str, fields: Vec<(String, CqlType)>) -> UdtType {
        UdtType {
            keyspace: keyspace.to_string(),
            name: name.to_string(),
            fields,
            added_fields: 0,
        }
    }
}

/// Any CQL type. `Frozen` wraps collections/UDTs/tuples stored as a single cell.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CqlType {
    Native(NativeType),
    List(Box<CqlType>),
    Set(Box<CqlType>),
    Map(Box<CqlType>, Box<CqlType>),
    Tuple(Vec<CqlType>),
    Udt(Arc<UdtType>),
    Frozen(Box<CqlType>),
    Vector(Box<CqlType>, u32),
    /// A Java class name for `'org.apache...'` custom types; carried, not interpreted.
    Custom(String),
}

impl NativeType {
    /// Every native type, in declaration order.
    pub const ALL: [NativeType; 20] = [
        NativeType::Ascii,
        NativeType::Bigint,
        NativeType::Blob,
        NativeType::Boolean,
        NativeType::Counter,
        NativeType::Date,
        NativeType::Decimal,
        NativeType::Double,
        NativeType::Duration,
        NativeType::Float,
        NativeType::Inet,
        NativeType::Int,
        NativeType::Smallint,
        NativeType::Text,
        NativeType::Time,
        NativeType::Timestamp,
        NativeType::Timeuuid,
        NativeType::Tinyint,
        NativeType::Uuid,
        NativeType::Varint,
    ];

    /// The serialized size when every value of the type has the same size
    /// (as Cassandra's `valueLengthIfFixed`, which decides the vector layout).
    pub fn fixed_length(self) -> Option<usize> {
        use NativeType::*;
        match self {
            Boolean => Some(1),
            Int | Float => Some(4),
            Bigint | Double | Timestamp => Some(8),
            Uuid | Timeuuid => Some(16),
            _ => None,
        }
    }

    /// Whether a zero-length value is valid for the type (Cassandra's "empty" value).
    pub fn accepts_empty(self) -> bool {
        use NativeType::*;
        !matches!(self, Date | Duration | Smallint | Time | Tinyint)
    }
}

impl CqlType {
    pub fn native(n: NativeType) -> CqlType {
        CqlType::Native(n)
    }

    /// The type with any `Frozen` wrapper removed.
    pub fn unfrozen(&self) -> &CqlType {
        match self {
            CqlType::Frozen(inner) => inner.unfrozen(),
            other => other,
        }
    }

    /// True for a non-frozen collection or UDT: stored as one cell per element/field.
    pub fn is_multi_cell(&self) -> bool {
        matches!(
            self,
            CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) | CqlType::Udt(_)
        )
    }

    pub fn is_counter(&self) -> bool {
        matches!(self.unfrozen(), CqlType::Native(NativeType::Counter))
    }

    /// True for lists, sets and maps, frozen or not.
    pub fn is_collection(&self) -> bool {
        matches!(
            self.unfrozen(),
            CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)
        )
    }

    /// The frozen form of a collection or UDT; other types are returned unchanged
    /// (tuples are always frozen and kept bare, so `frozen<tuple<..>>` parses to `Tuple`).
    pub fn freeze(self) -> CqlType {
        if self.is_multi_cell() {
            CqlType::Frozen(Box::new(self))
        } else {
            self
        }
    }

    /// The size of every serialized value when fixed (natives only; see `NativeType::fixed_length`).
    pub fn fixed_length(&self) -> Option<usize> {
        match self.unfrozen() {
            CqlType::Native(n) => n.fixed_length(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_cell_only_for_unfrozen_collections_and_udts() {
        let list = CqlType::List(Box::new(CqlType::native(NativeType::Int)));
        assert!(list.is_multi_cell());
        assert!(list.is_collection());
        let frozen = list.freeze();
        assert!(!frozen.is_multi_cell());
        assert!(frozen.is_collection());
        let tuple = CqlType::Tuple(vec![CqlType::native(NativeType::Int)]);
        assert_eq!(tuple.clone().freeze(), tuple);
        assert!(!tuple.is_multi_cell());
        assert!(!tuple.is_collection());
    }

    #[test]
    fn freeze_leaves_natives_alone() {
        let int = CqlType::native(NativeType::Int);
        assert_eq!(int.clone().freeze(), int);
        let udt = CqlType::Udt(Arc::new(UdtType::new("ks", "u", vec![])));
        assert!(matches!(udt.freeze(), CqlType::Frozen(_)));
    }

    #[test]
    fn counter_detection() {
        assert!(CqlType::native(NativeType::Counter).is_counter());
        assert!(!CqlType::native(NativeType::Bigint).is_counter());
    }
}
