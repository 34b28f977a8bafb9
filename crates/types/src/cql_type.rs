//! The CQL type system: native types, collections, tuples, UDTs, vectors.
use std::sync::Arc;

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
