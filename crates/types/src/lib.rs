//! CQL types and values: the type system (`CqlType`), value codecs, byte-comparable
//! clustering encodings, and the request/result/error vocabulary every layer shares.
pub mod cql_type;
pub mod error;
pub mod request;
pub mod result;

pub use cql_type::{CqlType, NativeType, UdtType};
pub use error::{Consistency, CqlError, CqlResult};
