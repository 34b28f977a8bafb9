//! Column lookups and column specs shared by statement analysis, with Cassandra's message for
//! an unknown column.
use schema::{ColumnMetadata, TableMetadata};
use types::result::ColumnSpec;
use types::{CqlError, CqlResult, CqlType};

/// The spec of a value bound to or read from `table` under `name`.
pub fn spec(table: &TableMetadata, name: &str, ty: CqlType) -> ColumnSpec {
    ColumnSpec {
        keyspace: table.keyspace.clone(),
        table: table.name.clone(),
        name: name.to_string(),
        ty,
    }
}

/// The column called `name`, or Cassandra's "Undefined column name" error.
pub fn column<'a>(table: &'a TableMetadata, name: &str) -> CqlResult<&'a ColumnMetadata> {
    table.column(name).ok_or_else(|| {
        CqlError::invalid(format!(
            "Undefined column name {} in table {}.{}",
            name, table.keyspace, table.name
        ))
    })
}
