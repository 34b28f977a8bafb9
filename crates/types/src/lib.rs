//! CQL types and values: the type system (`CqlType`), value codecs, CQL literals,
//! byte-comparable clustering encodings, and the request/result/error vocabulary every layer shares.
pub mod comparable;
pub mod cql_type;
pub mod error;
pub mod json;
pub mod limits;
pub mod literal;
pub mod request;
pub mod result;
pub mod units;
pub mod value;

pub use cql_type::{CqlType, NativeType, UdtType};
pub use error::{Consistency, CqlError, CqlResult, TypeError};
pub use value::Value;
