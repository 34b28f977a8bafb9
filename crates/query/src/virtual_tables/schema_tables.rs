//! `system_virtual_schema.keyspaces`, `.tables` and `.columns`: the virtual keyspaces
//! described as `system_schema` describes stored ones (drivers build their metadata of the
//! virtual keyspaces from these).
use schema::{keyspace_rows, Row as ValueRow};
use types::CqlResult;

use super::{catalog, NodeView, VirtualTable};

/// One of the three schema tables, named as the `system_schema` table whose rows for the
/// virtual keyspaces it projects onto its own columns.
struct SchemaTable {
    name: &'static str,
}

pub(super) fn tables() -> Vec<Box<dyn VirtualTable>> {
    ["keyspaces", "tables", "columns"]
        .into_iter()
        .map(|name| Box::new(SchemaTable { name }) as Box<dyn VirtualTable>)
        .collect()
}

impl VirtualTable for SchemaTable {
    fn name(&self) -> (&'static str, &'static str) {
        ("system_virtual_schema", self.name)
    }

    fn rows(&self, _node: &NodeView) -> CqlResult<Vec<ValueRow>> {
        catalog_rows(self.name)
    }
}

/// The rows of `system_virtual_schema.<name>`: computed from the catalog alone.
pub(super) fn catalog_rows(name: &str) -> CqlResult<Vec<ValueRow>> {
    let Some(own) = super::lookup("system_virtual_schema", name)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for keyspace in catalog() {
        let rows = keyspace_rows(keyspace)
            .tables
            .into_iter()
            .filter(|(table, _)| *table == name)
            .flat_map(|(_, rows)| rows);
        out.extend(rows.map(|mut row| {
            row.retain(|column, _| own.column(column).is_some());
            row
        }));
    }
    Ok(out)
}
