//! Keyspace metadata: replication, durable writes, and the keyspace's tables and types.
use crate::error::SchemaError;
use crate::table::TableMetadata;
use std::collections::BTreeMap;
use std::sync::Arc;
use types::UdtType;

/// One keyspace. `replication` is stored as Cassandra stores it, with the full class name
/// (`org.apache.cassandra.locator.SimpleStrategy`).
#[derive(Clone, Debug, PartialEq)]
pub struct KeyspaceMetadata {
    pub name: String,
    pub replication: BTreeMap<String, String>,
    pub durable_writes: bool,
    pub tables: BTreeMap<String, Arc<TableMetadata>>,
    pub types: BTreeMap<String, Arc<UdtType>>,
}

impl KeyspaceMetadata {
    /// An empty keyspace.
    pub fn new(name: &str, replication: BTreeMap<String, String>, durable_writes: bool) -> Self {
        KeyspaceMetadata {
            name: name.to_string(),
            replication,
            durable_writes,
            tables: BTreeMap::new(),
            types: BTreeMap::new(),
        }
    }

    pub fn table(&self, name: &str) -> Option<&Arc<TableMetadata>> {
        self.tables.get(name)
    }

    pub fn user_type(&self, name: &str) -> Option<&Arc<UdtType>> {
        self.types.get(name)
    }

    /// The keyspace with `table` added; an error if a table of that name exists.
    pub fn with_new_table(&self, table: TableMetadata) -> Result<Self, SchemaError> {
        if self.tables.contains_key(&table.name) {
            return Err(SchemaError::AlreadyExists {
                keyspace: self.name.clone(),
                table: Some(table.name),
            });
        }
        Ok(self.with_table(table))
    }

    /// The keyspace with `table` added or replaced.
    pub fn with_table(&self, table: TableMetadata) -> Self {
        let mut next = self.clone();
        next.tables.insert(table.name.clone(), Arc::new(table));
        next
    }

    /// The keyspace with `udt` added or replaced.
    pub fn with_type(&self, udt: UdtType) -> Self {
        let mut next = self.clone();
        next.types.insert(udt.name.clone(), Arc::new(udt));
        next
    }

    /// The class name without Cassandra's locator package, as DESCRIBE shows it.
    pub fn replication_class(&self) -> Option<&str> {
        let class = self.replication.get("class")?;
        Some(
            class
                .strip_prefix("org.apache.cassandra.locator.")
                .unwrap_or(class),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::ColumnMetadata;
    use crate::options::TableOptions;
    use types::{CqlType, NativeType};
    use uuid::Uuid;

    #[test]
    fn adding_tables_and_types() -> Result<(), SchemaError> {
        let replication = BTreeMap::from([(
            "class".to_string(),
            "org.apache.cassandra.locator.SimpleStrategy".to_string(),
        )]);
        let ks = KeyspaceMetadata::new("ks", replication, true);
        assert_eq!(ks.replication_class(), Some("SimpleStrategy"));
        let key = ColumnMetadata::partition_key("k", CqlType::native(NativeType::Int), 0);
        let table = TableMetadata::new("ks", "t", Uuid::nil(), vec![key], TableOptions::default())?;
        let ks = ks.with_new_table(table.clone())?;
        assert!(ks.table("t").is_some());
        assert!(matches!(
            ks.with_new_table(table),
            Err(SchemaError::AlreadyExists { .. })
        ));
        let udt = UdtType::new("ks", "u", vec![]);
        assert!(ks.with_type(udt).user_type("u").is_some());
        Ok(())
    }
}
