//! DESCRIBE output of virtual keyspaces and tables: Cassandra 5.0 prints their structure for
//! reference inside a comment, since CQL cannot create them.
use crate::describe::{column_lines, primary_key, single_key_inline, with_clustering_order};
use crate::keyspace::KeyspaceMetadata;
use crate::quote::{quote_identifier, quote_string};
use crate::table::TableMetadata;

/// The comment wrapping a virtual object's structure.
fn warning(kind: &str, name: &str, structure: &str) -> String {
    format!(
        "/*\nWarning: {kind} {name} is a virtual {} and cannot be recreated with CQL.\n\
         Structure, for reference:\n{structure}\n*/",
        kind.to_lowercase()
    )
}

/// `VIRTUAL KEYSPACE ks;` inside the warning comment.
pub fn describe_virtual_keyspace(keyspace: &KeyspaceMetadata) -> String {
    let name = quote_identifier(&keyspace.name);
    warning("Keyspace", &name, &format!("VIRTUAL KEYSPACE {name};"))
}

/// `VIRTUAL TABLE ks.t (...) WITH ... comment = '...';` inside the warning comment.
pub fn describe_virtual_table(table: &TableMetadata) -> String {
    let name = format!(
        "{}.{}",
        quote_identifier(&table.keyspace),
        quote_identifier(&table.name)
    );
    let mut lines = column_lines(table);
    if !single_key_inline(table) {
        lines.push(primary_key(table));
    }
    let mut clauses = with_clustering_order(table);
    clauses.push(format!(
        "comment = {}",
        quote_string(&table.options.comment)
    ));
    let structure = format!(
        "VIRTUAL TABLE {name} (\n    {}\n) WITH {};",
        lines.join(",\n    "),
        clauses.join("\n    AND ")
    );
    warning("Table", &name, &structure)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::virtual_keyspaces;

    #[test]
    fn virtual_objects_are_described_as_cassandra_does() {
        let keyspaces = virtual_keyspaces();
        let schema_ks = &keyspaces[1];
        assert_eq!(
            describe_virtual_keyspace(schema_ks),
            "/*\nWarning: Keyspace system_virtual_schema is a virtual keyspace and cannot be \
             recreated with CQL.\nStructure, for reference:\nVIRTUAL KEYSPACE \
             system_virtual_schema;\n*/"
        );
        let Some(table) = schema_ks.table("keyspaces") else {
            panic!("system_virtual_schema.keyspaces is defined");
        };
        assert_eq!(
            describe_virtual_table(table),
            "/*\nWarning: Table system_virtual_schema.keyspaces is a virtual table and cannot \
             be recreated with CQL.\nStructure, for reference:\nVIRTUAL TABLE \
             system_virtual_schema.keyspaces (\n    keyspace_name text PRIMARY KEY\n) WITH \
             comment = 'virtual keyspace definitions';\n*/"
        );
        let Some(clients) = keyspaces[0].table("clients") else {
            panic!("system_views.clients is defined");
        };
        let text = describe_virtual_table(clients);
        assert!(text.contains(
            "    username text,\n    PRIMARY KEY (address, port)\n) WITH CLUSTERING ORDER BY \
             (port ASC)\n    AND comment = 'currently connected clients';\n*/"
        ));
    }
}
