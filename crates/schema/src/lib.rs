//! Schema metadata for Helenus: keyspaces, tables, columns, user types and table options;
//! the fixed system keyspaces of Cassandra 5.0; conversion to and from `system_schema` rows;
//! and DESCRIBE output formatted exactly as Cassandra 5.0 prints it. Also how a table's
//! values sit in the model: partition and clustering keys (`keys`), non-frozen collections
//! (`collections`), reading values out of rows (`row_view`), and rows as column-name maps
//! written and read by the node itself (`value_rows`).
pub mod collections;
mod column;
mod describe;
mod describe_virtual;
mod error;
pub mod keys;
mod keyspace;
mod md5;
mod options;
mod quote;
pub mod row_view;
mod rows;
mod snapshot;
mod system;
mod table;
mod user_types;
pub mod value_rows;

pub use column::{ClusteringOrder, ColumnKind, ColumnMetadata};
pub use describe::{describe_keyspace, describe_table, describe_type};
pub use error::SchemaError;
pub use keyspace::KeyspaceMetadata;
pub use md5::{md5, name_uuid};
pub use options::{
    auto_repair_setting, java_double, table_id_option, AutoRepairSetting, OptionValue,
    TableOptions, MAX_TTL, OPTION_NAMES,
};
pub use quote::{is_reserved_keyword, quote_identifier, quote_string};
pub use rows::{decode_keyspace, encode_keyspace, keyspace_rows, load_schema, Row, SchemaRows};
pub use snapshot::Schema;
pub use system::{is_system_keyspace, is_virtual_keyspace, system_keyspaces, virtual_keyspaces};
pub use table::{system_table_id, DroppedColumn, TableMetadata};
pub use user_types::{references_type, with_type};
