//! Server-side DESCRIBE (cqlsh 6 sends DESCRIBE to Cassandra 4+ servers): result rows with
//! the keyspace, object type, name and CREATE statement, as Cassandra 5.0 returns them.
use cql::ast::{Describe, DescribeTarget, QualifiedName};
use schema::quote_identifier;
use schema::{
    describe_keyspace, describe_table, describe_type, is_system_keyspace, KeyspaceMetadata, Schema,
};
use types::result::{ColumnSpec, Rows};
use types::{CqlError, CqlResult, CqlType, NativeType};

use crate::exec::ExecContext;
use crate::node::NodeInfo;

fn spec(name: &str) -> ColumnSpec {
    ColumnSpec {
        keyspace: String::new(),
        table: String::new(),
        name: name.into(),
        ty: CqlType::Native(NativeType::Text),
    }
}

struct Out {
    rows: Rows,
    with_statement: bool,
}

impl Out {
    fn new(with_statement: bool) -> Out {
        let mut cols = vec![spec("keyspace_name"), spec("type"), spec("name")];
        if with_statement {
            cols.push(spec("create_statement"));
        }
        Out {
            rows: Rows::new(cols),
            with_statement,
        }
    }

    /// One row; the keyspace and the name are quoted where CQL needs it, as Cassandra
    /// prints them.
    fn push(&mut self, ks: &str, kind: &str, name: &str, statement: &str) {
        let (ks, name) = (quote_identifier(ks), quote_identifier(name));
        self.rows.push_value(Some(ks.as_bytes()));
        self.rows.push_value(Some(kind.as_bytes()));
        self.rows.push_value(Some(name.as_bytes()));
        if self.with_statement {
            self.rows.push_value(Some(statement.as_bytes()));
        }
        self.rows.end_row();
    }

    fn keyspace(&mut self, ks: &KeyspaceMetadata, only: bool, internals: bool) {
        self.push(&ks.name, "keyspace", &ks.name, &describe_keyspace(ks));
        if only {
            return;
        }
        for t in ks.types.values() {
            self.push(&ks.name, "type", &t.name, &describe_type(t));
        }
        for t in ks.tables.values() {
            self.push(&ks.name, "table", &t.name, &describe_table(t, internals));
        }
    }
}

pub fn execute(
    schema: &Schema,
    d: &Describe,
    session: Option<&str>,
    _ctx: &ExecContext,
    node: &NodeInfo,
) -> CqlResult<Rows> {
    let schema = &crate::virtual_tables::with_virtual_keyspaces(schema);
    let internals = d.with_internals;
    let out = match &d.target {
        DescribeTarget::Keyspaces => {
            let mut out = Out::new(false);
            for name in schema.keyspaces().keys() {
                out.push(name, "keyspace", name, "");
            }
            out
        }
        DescribeTarget::Keyspace { name, only } => {
            let name = name.as_deref().or(session).ok_or_else(no_keyspace)?;
            let mut out = Out::new(true);
            out.keyspace(keyspace(schema, name)?, *only, internals);
            out
        }
        DescribeTarget::Tables => listing(schema, session, "table", |k| {
            k.tables.keys().cloned().collect()
        }),
        DescribeTarget::Table(name) => {
            let (ks, t) = table(schema, name, session)?;
            let mut out = Out::new(true);
            out.push(&ks.name, "table", &t.name, &describe_table(t, internals));
            out
        }
        DescribeTarget::Types => listing(schema, session, "type", |k| {
            k.types.keys().cloned().collect()
        }),
        DescribeTarget::Type(name) => {
            let ks = named_keyspace(schema, name, session)?;
            let t = ks.user_type(&name.name).ok_or_else(|| {
                CqlError::invalid(format!(
                    "User defined type '{}' not found in '{}'",
                    name.name, ks.name
                ))
            })?;
            let mut out = Out::new(true);
            out.push(&ks.name, "type", &t.name, &describe_type(t));
            out
        }
        DescribeTarget::Schema | DescribeTarget::FullSchema => {
            let full = matches!(d.target, DescribeTarget::FullSchema);
            let mut out = Out::new(true);
            for ks in schema
                .keyspaces()
                .values()
                .filter(|k| full || !is_system_keyspace(&k.name))
            {
                out.keyspace(ks, false, internals);
            }
            out
        }
        DescribeTarget::Cluster => return Ok(cluster(node)),
        DescribeTarget::Generic(name) => generic(schema, name, session, internals)?,
        DescribeTarget::Functions | DescribeTarget::Aggregates => Out::new(false),
        DescribeTarget::Function(n) | DescribeTarget::Aggregate(n) => {
            return Err(CqlError::invalid(format!(
                "Function '{}' not found",
                n.name
            )))
        }
        DescribeTarget::Index(n) | DescribeTarget::MaterializedView(n) => {
            return Err(CqlError::invalid(format!(
                "'{}' not found in keyspace",
                n.name
            )))
        }
    };
    Ok(out.rows)
}

/// One row per object of `kind` in the session's keyspace, or in every keyspace.
fn listing(
    schema: &Schema,
    session: Option<&str>,
    kind: &str,
    names: impl Fn(&KeyspaceMetadata) -> Vec<String>,
) -> Out {
    let mut out = Out::new(false);
    let in_scope = |k: &&std::sync::Arc<KeyspaceMetadata>| session.is_none_or(|s| s == k.name);
    for ks in schema.keyspaces().values().filter(in_scope) {
        for name in names(ks) {
            out.push(&ks.name, kind, &name, "");
        }
    }
    out
}

fn cluster(node: &NodeInfo) -> Rows {
    let mut rows = Rows::new(vec![spec("cluster"), spec("partitioner"), spec("snitch")]);
    rows.push_value(Some(node.cluster_name.as_bytes()));
    rows.push_value(Some(b"Murmur3Partitioner"));
    rows.push_value(Some(b"DynamicEndpointSnitch"));
    rows.end_row();
    rows
}

fn generic(
    schema: &Schema,
    name: &QualifiedName,
    session: Option<&str>,
    internals: bool,
) -> CqlResult<Out> {
    let mut out = Out::new(true);
    if name.keyspace.is_none() {
        if let Some(ks) = schema.keyspace(&name.name) {
            out.keyspace(ks, false, internals);
            return Ok(out);
        }
    }
    let (ks, t) = table(schema, name, session)?;
    out.push(&ks.name, "table", &t.name, &describe_table(t, internals));
    Ok(out)
}

/// The keyspace a possibly qualified name lives in (the session's when unqualified).
fn named_keyspace<'a>(
    schema: &'a Schema,
    name: &QualifiedName,
    session: Option<&str>,
) -> CqlResult<&'a KeyspaceMetadata> {
    let ks_name = name
        .keyspace
        .as_deref()
        .or(session)
        .ok_or_else(no_keyspace)?;
    keyspace(schema, ks_name)
}

fn no_keyspace() -> CqlError {
    CqlError::invalid("No keyspace specified and no current keyspace")
}

fn keyspace<'a>(schema: &'a Schema, name: &str) -> CqlResult<&'a KeyspaceMetadata> {
    schema
        .keyspace(name)
        .map(|k| k.as_ref())
        .ok_or_else(|| CqlError::invalid(format!("'{name}' not found in keyspaces")))
}

fn table<'a>(
    schema: &'a Schema,
    name: &QualifiedName,
    session: Option<&str>,
) -> CqlResult<(&'a KeyspaceMetadata, &'a schema::TableMetadata)> {
    let ks = named_keyspace(schema, name, session)?;
    let t = ks.table(&name.name).ok_or_else(|| {
        CqlError::invalid(format!(
            "'{}' not found in keyspace '{}'",
            name.name, ks.name
        ))
    })?;
    Ok((ks, t))
}
