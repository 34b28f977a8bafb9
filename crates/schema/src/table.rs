//! Table metadata: columns in Cassandra's canonical order, the primary key, options and
//! dropped columns, with the lookups the query layers need.
use crate::column::{ColumnKind, ColumnMetadata};
use crate::error::SchemaError;
use crate::md5::name_uuid;
use crate::options::TableOptions;
use std::collections::{BTreeMap, BTreeSet};
use types::CqlType;
use uuid::Uuid;

/// A column that was dropped, kept so that old data for it can be skipped.
#[derive(Clone, Debug, PartialEq)]
pub struct DroppedColumn {
    pub ty: CqlType,
    /// `Regular` or `Static`.
    pub kind: ColumnKind,
    pub dropped_time_micros: i64,
}

/// One table. Build it with [`TableMetadata::new`], which validates the definition and puts
/// the columns in Cassandra's order: partition key, clustering (both by position), then static
/// and regular columns, each with single-cell columns before multi-cell ones, by name.
#[derive(Clone, Debug, PartialEq)]
pub struct TableMetadata {
    pub keyspace: String,
    pub name: String,
    pub id: Uuid,
    pub columns: Vec<ColumnMetadata>,
    /// Indexes into `columns` of the partition key, in key order.
    pub partition_key: Vec<usize>,
    /// Indexes into `columns` of the clustering columns, in clustering order.
    pub clustering: Vec<usize>,
    pub options: TableOptions,
    pub dropped_columns: BTreeMap<String, DroppedColumn>,
}

/// The id Cassandra gives a system table: `UUID.nameUUIDFromBytes(keyspace + table)`.
pub fn system_table_id(keyspace: &str, table: &str) -> Uuid {
    name_uuid(format!("{keyspace}{table}").as_bytes())
}

impl TableMetadata {
    /// A validated table with canonically ordered columns.
    pub fn new(
        keyspace: &str,
        name: &str,
        id: Uuid,
        mut columns: Vec<ColumnMetadata>,
        options: TableOptions,
    ) -> Result<TableMetadata, SchemaError> {
        columns.sort_by(|a, b| column_order_key(a).cmp(&column_order_key(b)));
        check_unique_names(&columns)?;
        let partition_key = key_indexes(&columns, ColumnKind::PartitionKey)?;
        if partition_key.is_empty() {
            return Err(SchemaError::Invalid(
                "No PRIMARY KEY specifed for table (exactly one required)".into(),
            ));
        }
        let clustering = key_indexes(&columns, ColumnKind::Clustering)?;
        let table = TableMetadata {
            keyspace: keyspace.to_string(),
            name: name.to_string(),
            id,
            columns,
            partition_key,
            clustering,
            options,
            dropped_columns: BTreeMap::new(),
        };
        table.check_counters()?;
        Ok(table)
    }

    /// The same table with `dropped_columns` replaced.
    pub fn with_dropped_columns(mut self, dropped: BTreeMap<String, DroppedColumn>) -> Self {
        self.dropped_columns = dropped;
        self
    }

    /// The column called `name` (exact, case-sensitive).
    pub fn column(&self, name: &str) -> Option<&ColumnMetadata> {
        self.columns.iter().find(|c| c.name == name)
    }

    pub fn partition_key_columns(&self) -> impl Iterator<Item = &ColumnMetadata> {
        self.partition_key.iter().map(|&i| &self.columns[i])
    }

    pub fn clustering_columns(&self) -> impl Iterator<Item = &ColumnMetadata> {
        self.clustering.iter().map(|&i| &self.columns[i])
    }

    pub fn regular_columns(&self) -> impl Iterator<Item = &ColumnMetadata> {
        self.columns_of_kind(ColumnKind::Regular)
    }

    pub fn static_columns(&self) -> impl Iterator<Item = &ColumnMetadata> {
        self.columns_of_kind(ColumnKind::Static)
    }

    /// Whether the table holds counters (all its non-key columns are counters).
    pub fn is_counter(&self) -> bool {
        self.columns.iter().any(|c| c.ty.is_counter())
    }

    /// The `system_schema.tables.flags` set: `compound` for every CQL table, plus `counter`.
    pub fn flags(&self) -> BTreeSet<&'static str> {
        let mut flags = BTreeSet::from(["compound"]);
        if self.is_counter() {
            flags.insert("counter");
        }
        flags
    }

    fn columns_of_kind(&self, kind: ColumnKind) -> impl Iterator<Item = &ColumnMetadata> {
        self.columns.iter().filter(move |c| c.kind == kind)
    }

    fn check_counters(&self) -> Result<(), SchemaError> {
        let non_key = || self.columns.iter().filter(|c| !c.kind.is_primary_key());
        if let Some(key) = self
            .columns
            .iter()
            .find(|c| c.kind.is_primary_key() && c.ty.is_counter())
        {
            return Err(SchemaError::Invalid(format!(
                "counter type is not supported for PRIMARY KEY column '{}'",
                key.name
            )));
        }
        let counters = non_key().filter(|c| c.ty.is_counter()).count();
        if counters > 0 && counters != non_key().count() {
            return Err(SchemaError::Invalid(
                "Cannot mix counter and non counter columns in the same table".into(),
            ));
        }
        Ok(())
    }
}

/// Sort key giving Cassandra's column order (see [`TableMetadata`]).
fn column_order_key(column: &ColumnMetadata) -> (ColumnKind, i32, bool, &str) {
    (
        column.kind,
        column.position,
        column.ty.is_multi_cell(),
        &column.name,
    )
}

fn check_unique_names(columns: &[ColumnMetadata]) -> Result<(), SchemaError> {
    let mut seen = BTreeSet::new();
    for column in columns {
        if !seen.insert(column.name.as_str()) {
            return Err(SchemaError::Invalid(format!(
                "Duplicate column '{}' declaration for table",
                column.name
            )));
        }
    }
    Ok(())
}

/// Indexes of the columns of `kind` (already sorted by position), checking positions 0..n.
fn key_indexes(columns: &[ColumnMetadata], kind: ColumnKind) -> Result<Vec<usize>, SchemaError> {
    let indexes: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i].kind == kind)
        .collect();
    for (expected, &i) in indexes.iter().enumerate() {
        if usize::try_from(columns[i].position).ok() != Some(expected) {
            return Err(SchemaError::Invalid(format!(
                "Column '{}' has position {} but {} was expected",
                columns[i].name, columns[i].position, expected
            )));
        }
    }
    Ok(indexes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::ClusteringOrder;
    use types::NativeType;

    fn native(n: NativeType) -> CqlType {
        CqlType::native(n)
    }

    fn sample() -> Result<TableMetadata, SchemaError> {
        let list = CqlType::List(Box::new(native(NativeType::Int)));
        let columns = vec![
            ColumnMetadata::regular("zz", list),
            ColumnMetadata::regular("b", native(NativeType::Text)),
            ColumnMetadata::clustering("c", native(NativeType::Int), 0, ClusteringOrder::Desc),
            ColumnMetadata::partition_key("k2", native(NativeType::Int), 1),
            ColumnMetadata::static_column("s", native(NativeType::Int)),
            ColumnMetadata::partition_key("k1", native(NativeType::Int), 0),
            ColumnMetadata::regular("a", native(NativeType::Text)),
        ];
        TableMetadata::new("ks", "t", Uuid::nil(), columns, TableOptions::default())
    }

    #[test]
    fn columns_are_put_in_cassandra_order() -> Result<(), SchemaError> {
        let table = sample()?;
        let names: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["k1", "k2", "c", "s", "a", "b", "zz"]);
        let pk: Vec<&str> = table
            .partition_key_columns()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(pk, ["k1", "k2"]);
        assert_eq!(table.clustering_columns().count(), 1);
        assert_eq!(table.static_columns().count(), 1);
        assert_eq!(table.regular_columns().count(), 3);
        assert_eq!(table.column("b").map(|c| c.kind), Some(ColumnKind::Regular));
        assert!(table.column("B").is_none());
        assert_eq!(table.flags(), BTreeSet::from(["compound"]));
        Ok(())
    }

    #[test]
    fn rejects_bad_definitions() {
        let int = native(NativeType::Int);
        let no_key = vec![ColumnMetadata::regular("v", int.clone())];
        assert!(
            TableMetadata::new("ks", "t", Uuid::nil(), no_key, TableOptions::default()).is_err()
        );
        let duplicate = vec![
            ColumnMetadata::partition_key("k", int.clone(), 0),
            ColumnMetadata::regular("k", int.clone()),
        ];
        let err = TableMetadata::new("ks", "t", Uuid::nil(), duplicate, TableOptions::default());
        assert!(matches!(err, Err(SchemaError::Invalid(_))));
        let gap = vec![ColumnMetadata::partition_key("k", int, 1)];
        assert!(TableMetadata::new("ks", "t", Uuid::nil(), gap, TableOptions::default()).is_err());
    }

    #[test]
    fn counter_tables() -> Result<(), SchemaError> {
        let counter = native(NativeType::Counter);
        let key = ColumnMetadata::partition_key("k", native(NativeType::Text), 0);
        let columns = vec![key.clone(), ColumnMetadata::regular("c", counter.clone())];
        let table = TableMetadata::new("ks", "t", Uuid::nil(), columns, TableOptions::default())?;
        assert!(table.is_counter());
        assert_eq!(table.flags(), BTreeSet::from(["compound", "counter"]));
        let mixed = vec![
            key,
            ColumnMetadata::regular("c", counter),
            ColumnMetadata::regular("v", native(NativeType::Int)),
        ];
        let err = TableMetadata::new("ks", "t", Uuid::nil(), mixed, TableOptions::default());
        assert_eq!(
            err.err(),
            Some(SchemaError::Invalid(
                "Cannot mix counter and non counter columns in the same table".into()
            ))
        );
        Ok(())
    }

    #[test]
    fn system_ids_match_cassandra() {
        // Ids reported by Cassandra 5.0.4's system_schema.tables.
        assert_eq!(
            system_table_id("system_schema", "tables").to_string(),
            "afddfb9d-bc1e-3068-8056-eed6c302ba09"
        );
        assert_eq!(
            system_table_id("system", "IndexInfo").to_string(),
            "9f5c6374-d485-3229-9a0a-5094af9ad1e3"
        );
    }
}
