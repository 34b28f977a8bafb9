//! Schema statements (CREATE/ALTER/DROP KEYSPACE, TABLE and TYPE, the types in `user_types`)
//! validated against the current schema with Cassandra's messages, producing the new keyspace
//! definition to save.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cql::ast::{
    self, AlterTableAction, ColumnDef, CreateKeyspace, CreateTable, Order, Statement, TypeExpr,
};
use ring::ReplicationStrategy;
use schema::{
    is_system_keyspace, table_id_option, ClusteringOrder, ColumnMetadata, DroppedColumn,
    KeyspaceMetadata, OptionValue, Schema, SchemaError, TableMetadata, TableOptions,
};
use types::result::{SchemaChange, SchemaChangeKind, SchemaChangeTarget};
use types::{CqlError, CqlResult, CqlType, NativeType};
use uuid::Uuid;

mod user_types;

/// What a schema statement changes.
#[derive(Debug)]
pub enum Effect {
    /// Nothing (e.g. `IF NOT EXISTS` on an existing object).
    None,
    Save(KeyspaceMetadata),
    DropKeyspace(String),
}

/// The outcome of a schema statement, applied by the processor.
#[derive(Debug)]
pub struct DdlOutcome {
    pub effect: Effect,
    pub created_tables: Vec<Arc<TableMetadata>>,
    pub dropped_tables: Vec<Uuid>,
    pub change: Option<SchemaChange>,
}

impl DdlOutcome {
    fn none() -> DdlOutcome {
        DdlOutcome {
            effect: Effect::None,
            created_tables: Vec::new(),
            dropped_tables: Vec::new(),
            change: None,
        }
    }

    fn save(
        ks: KeyspaceMetadata,
        kind: SchemaChangeKind,
        target: SchemaChangeTarget,
        name: &str,
    ) -> DdlOutcome {
        let change = SchemaChange {
            kind,
            target,
            keyspace: ks.name.clone(),
            name: name.to_string(),
            arg_types: Vec::new(),
        };
        DdlOutcome {
            effect: Effect::Save(ks),
            created_tables: Vec::new(),
            dropped_tables: Vec::new(),
            change: Some(change),
        }
    }
}

pub fn schema_error(e: SchemaError) -> CqlError {
    match e {
        SchemaError::Syntax(m) => CqlError::Syntax(m),
        SchemaError::Config(m) => CqlError::Config(m),
        SchemaError::Invalid(m) => CqlError::Invalid(m),
        SchemaError::AlreadyExists { keyspace, table } => {
            already_exists(&keyspace, table.as_deref())
        }
        SchemaError::Corrupt { .. } => CqlError::Server(e.to_string()),
    }
}

fn already_exists(keyspace: &str, table: Option<&str>) -> CqlError {
    let message = match table {
        Some(t) => format!("Table '{keyspace}.{t}' already exists"),
        None => format!("Keyspace '{keyspace}' already exists"),
    };
    CqlError::AlreadyExists {
        message,
        keyspace: keyspace.to_string(),
        table: table.unwrap_or_default().to_string(),
    }
}

/// Plans a schema statement; `Ok(None)` when `stmt` is not one.
pub fn plan(
    stmt: &Statement,
    session: Option<&str>,
    schema: &Schema,
    datacenters: &BTreeSet<String>,
) -> CqlResult<Option<DdlOutcome>> {
    let out = match stmt {
        Statement::CreateKeyspace(s) => create_keyspace(s, schema, datacenters)?,
        Statement::AlterKeyspace(s) => {
            alter_keyspace(&s.name, s.if_exists, &s.options, schema, datacenters)?
        }
        Statement::DropKeyspace(s) => drop_keyspace(&s.name.name, s.if_exists, schema)?,
        Statement::CreateTable(s) => create_table(s, session, schema)?,
        Statement::AlterTable(s) => alter_table(s, session, schema)?,
        Statement::DropTable(s) => drop_table(&s.name, s.if_exists, session, schema)?,
        Statement::CreateType(s) => user_types::create_type(s, session, schema)?,
        Statement::AlterType(s) => user_types::alter_type(s, session, schema)?,
        Statement::DropType(s) => user_types::drop_type(&s.name, s.if_exists, session, schema)?,
        _ => return Ok(None),
    };
    Ok(Some(out))
}

pub fn resolve_keyspace(name: &ast::QualifiedName, session: Option<&str>) -> CqlResult<String> {
    name.keyspace.clone().or_else(|| session.map(str::to_string)).ok_or_else(|| {
        CqlError::invalid("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
    })
}

fn keyspace<'a>(schema: &'a Schema, name: &str) -> CqlResult<&'a Arc<KeyspaceMetadata>> {
    schema
        .keyspace(name)
        .ok_or_else(|| CqlError::invalid(format!("Keyspace '{name}' doesn't exist")))
}

fn user_modifiable(name: &str) -> CqlResult<()> {
    if is_system_keyspace(name) {
        return Err(CqlError::Unauthorized(format!(
            "{name} keyspace is not user-modifiable."
        )));
    }
    Ok(())
}

pub(crate) fn convert_options(
    options: &[(String, ast::OptionValue)],
) -> Vec<(String, OptionValue)> {
    options
        .iter()
        .map(|(k, v)| {
            let v = match v {
                ast::OptionValue::Constant(l) => OptionValue::Constant(l.text.clone()),
                ast::OptionValue::Identifier(s) => OptionValue::Constant(s.clone()),
                ast::OptionValue::Map(pairs) => OptionValue::Map(
                    pairs
                        .iter()
                        .map(|(a, b)| (a.text.clone(), b.text.clone()))
                        .collect(),
                ),
            };
            (k.clone(), v)
        })
        .collect()
}

fn check_keyspace_name(name: &str) -> CqlResult<()> {
    let ok = !name.is_empty()
        && name.len() <= 48
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(CqlError::invalid(format!(
            "Keyspace name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got '{name}')"
        )));
    }
    Ok(())
}

/// The longest table name: its directory, `<name>-<32 hex digits of the id>`, must fit the
/// 255 bytes a file name may have (Cassandra 5.0.4 fails on longer names with an I/O error;
/// later 5.0 releases refuse them, CASSANDRA-20389).
const MAX_TABLE_NAME: usize = 255 - 33;

/// A new table's name, checked as Cassandra 5.0's `TableMetadata.validate` does (its message
/// still says 48 characters, a limit 5.0 no longer applies to tables).
fn check_table_name(keyspace: &str, name: &str) -> CqlResult<()> {
    let word = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !word {
        return Err(CqlError::Config(format!(
            "{keyspace}.{name}: Table name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"{name}\")"
        )));
    }
    if name.len() > MAX_TABLE_NAME {
        return Err(CqlError::Config(format!(
            "{keyspace}.{name}: Table name must not be more than {MAX_TABLE_NAME} characters long (got {} characters)",
            name.len()
        )));
    }
    Ok(())
}

/// Replication and durable_writes from keyspace options.
fn keyspace_params(
    name: &str,
    options: &[(String, ast::OptionValue)],
    base: Option<&KeyspaceMetadata>,
    datacenters: &BTreeSet<String>,
) -> CqlResult<(BTreeMap<String, String>, bool)> {
    let mut replication = base.map(|b| b.replication.clone());
    let mut durable = base.map(|b| b.durable_writes).unwrap_or(true);
    for (key, value) in convert_options(options) {
        match (key.as_str(), value) {
            ("replication", OptionValue::Map(pairs)) => {
                let mut map: BTreeMap<String, String> = pairs.into_iter().collect();
                let simple = map
                    .get("class")
                    .is_some_and(|c| c.ends_with("SimpleStrategy"));
                if simple && !map.contains_key("replication_factor") {
                    map.insert("replication_factor".into(), "1".into());
                }
                replication = Some(map);
            }
            ("durable_writes", OptionValue::Constant(v)) => {
                durable = match v.to_ascii_lowercase().as_str() {
                    "true" => true,
                    "false" => false,
                    _ => {
                        return Err(CqlError::Syntax(format!(
                            "Invalid boolean value {v} for 'durable_writes'"
                        )))
                    }
                }
            }
            (other, _) => return Err(CqlError::Syntax(format!("Unknown property '{other}'"))),
        }
    }
    let Some(replication) = replication else {
        return Err(CqlError::Config(
            "Missing mandatory option 'replication'".into(),
        ));
    };
    let strategy = ReplicationStrategy::from_options(name, &replication, datacenters)
        .map_err(|e| CqlError::Config(e.to_string()))?;
    let mut normalized = strategy.normalized_options();
    if let ReplicationStrategy::NetworkTopology { .. } = strategy {
        normalized.insert(
            "class".into(),
            "org.apache.cassandra.locator.NetworkTopologyStrategy".into(),
        );
    }
    Ok((normalized, durable))
}

fn create_keyspace(
    s: &CreateKeyspace,
    schema: &Schema,
    dcs: &BTreeSet<String>,
) -> CqlResult<DdlOutcome> {
    check_keyspace_name(&s.name)?;
    if schema.keyspace(&s.name).is_some() {
        if s.if_not_exists {
            return Ok(DdlOutcome::none());
        }
        return Err(already_exists(&s.name, None));
    }
    user_modifiable(&s.name)?;
    let (replication, durable) = keyspace_params(&s.name, &s.options, None, dcs)?;
    let ks = KeyspaceMetadata::new(&s.name, replication, durable);
    Ok(DdlOutcome::save(
        ks,
        SchemaChangeKind::Created,
        SchemaChangeTarget::Keyspace,
        "",
    ))
}

fn alter_keyspace(
    name: &str,
    if_exists: bool,
    options: &[(String, ast::OptionValue)],
    schema: &Schema,
    dcs: &BTreeSet<String>,
) -> CqlResult<DdlOutcome> {
    let Some(current) = schema.keyspace(name) else {
        if if_exists {
            return Ok(DdlOutcome::none());
        }
        return Err(CqlError::invalid(format!(
            "Keyspace '{name}' doesn't exist"
        )));
    };
    user_modifiable(name)?;
    let (replication, durable) = keyspace_params(name, options, Some(current), dcs)?;
    let mut ks = current.as_ref().clone();
    ks.replication = replication;
    ks.durable_writes = durable;
    Ok(DdlOutcome::save(
        ks,
        SchemaChangeKind::Updated,
        SchemaChangeTarget::Keyspace,
        "",
    ))
}

fn drop_keyspace(name: &str, if_exists: bool, schema: &Schema) -> CqlResult<DdlOutcome> {
    let Some(ks) = schema.keyspace(name) else {
        if if_exists {
            return Ok(DdlOutcome::none());
        }
        return Err(CqlError::invalid(format!(
            "Keyspace '{name}' doesn't exist"
        )));
    };
    user_modifiable(name)?;
    let change = SchemaChange {
        kind: SchemaChangeKind::Dropped,
        target: SchemaChangeTarget::Keyspace,
        keyspace: name.to_string(),
        name: String::new(),
        arg_types: Vec::new(),
    };
    Ok(DdlOutcome {
        effect: Effect::DropKeyspace(name.to_string()),
        created_tables: Vec::new(),
        dropped_tables: ks.tables.values().map(|t| t.id).collect(),
        change: Some(change),
    })
}

/// A CQL type from its syntax, resolving UDTs in `ks`; refused past the type limits (user
/// types can nest deeper than any one statement, see `CqlType::check_bounds`).
pub fn resolve_type(ty: &TypeExpr, ks: &KeyspaceMetadata) -> CqlResult<CqlType> {
    let user_type = |name: &ast::QualifiedName| {
        ks.user_type(&name.name)
            .map(|udt| CqlType::Udt(udt.clone()))
            .ok_or_else(|| CqlError::invalid(format!("Unknown type {}.{}", ks.name, name.name)))
    };
    let resolved = resolve(ty, &ks.name, &user_type)?;
    check_bounds(&resolved)?;
    Ok(resolved)
}

/// A type hint's or cast's type in a statement on a table of keyspace `keyspace`, where user
/// types are not looked up (statements name them only in schema changes here).
pub fn hint_type(ty: &TypeExpr, keyspace: &str) -> CqlResult<CqlType> {
    let user_type = |name: &ast::QualifiedName| {
        Err(CqlError::invalid(format!(
            "Unknown type {}.{}",
            name.keyspace.as_deref().unwrap_or(keyspace),
            name.name
        )))
    };
    resolve(ty, keyspace, &user_type)
}

type UserTypes<'a> = dyn Fn(&ast::QualifiedName) -> CqlResult<CqlType> + 'a;

fn check_bounds(ty: &CqlType) -> CqlResult<()> {
    ty.check_bounds()
        .map_err(|types::TypeError(message)| CqlError::invalid(message))
}

fn resolve(ty: &TypeExpr, keyspace: &str, ks: &UserTypes<'_>) -> CqlResult<CqlType> {
    resolve_in(ty, keyspace, ks, false)
}

/// `resolve` inside `frozen<>` or a tuple (`frozen`), where Cassandra freezes every nested
/// collection and user type implicitly (`frozen<map<set<int>, list<int>>>` holds frozen
/// sets and lists); elsewhere a collection's elements must be frozen as written.
fn resolve_in(
    ty: &TypeExpr,
    keyspace: &str,
    ks: &UserTypes<'_>,
    frozen: bool,
) -> CqlResult<CqlType> {
    check_elements(ty, keyspace)?;
    let inner = |t: &TypeExpr| resolve_in(t, keyspace, ks, frozen);
    let resolved = match ty {
        TypeExpr::Native(n) => CqlType::Native(*n),
        TypeExpr::List(e) => CqlType::List(Box::new(inner(e)?)),
        TypeExpr::Set(e) => CqlType::Set(Box::new(inner(e)?)),
        TypeExpr::Map(k, v) => CqlType::Map(Box::new(inner(k)?), Box::new(inner(v)?)),
        TypeExpr::Tuple(items) => CqlType::Tuple(
            items
                .iter()
                .map(|t| resolve_in(t, keyspace, ks, true).map(CqlType::freeze))
                .collect::<CqlResult<_>>()?,
        ),
        TypeExpr::Frozen(e) => resolve_in(e, keyspace, ks, true)?.freeze(),
        TypeExpr::Vector(e, n) => CqlType::Vector(Box::new(inner(e)?), vector_dimension(*n)?),
        TypeExpr::UserType(name) => ks(name)?,
        TypeExpr::Custom(class) => CqlType::Custom(class.clone()),
    };
    if frozen {
        return Ok(resolved.freeze());
    }
    check_nesting(resolved)
}

fn vector_dimension(n: i32) -> CqlResult<u32> {
    u32::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
        CqlError::invalid(format!(
            "vectors may only have positive dimensions; given {n}"
        ))
    })
}

/// Cassandra's checks of a collection's or tuple's direct elements, made on the type as
/// written (its messages print it so, `frozen<...>` included): no counters inside
/// collections or tuples, no durations inside sets or as map keys.
fn check_elements(ty: &TypeExpr, keyspace: &str) -> CqlResult<()> {
    let is = |t: &TypeExpr, native: NativeType| matches!(t, TypeExpr::Native(n) if *n == native);
    let written = || user_types::raw_type_text(ty, keyspace);
    let bare = match ty {
        TypeExpr::Frozen(inner) => inner.as_ref(),
        other => other,
    };
    let counter = NativeType::Counter;
    match bare {
        TypeExpr::List(e) | TypeExpr::Set(e) if is(e, counter) => Err(counters_inside(&written())),
        TypeExpr::Map(k, v) if is(k, counter) || is(v, counter) => Err(counters_inside(&written())),
        TypeExpr::Tuple(items) if items.iter().any(|t| is(t, counter)) => {
            Err(CqlError::invalid("Counters are not allowed inside tuples"))
        }
        TypeExpr::Set(e) if is(e, NativeType::Duration) => Err(CqlError::invalid(format!(
            "Durations are not allowed inside sets: {}",
            written()
        ))),
        TypeExpr::Map(k, _) if is(k, NativeType::Duration) => Err(CqlError::invalid(format!(
            "Durations are not allowed as map keys: {}",
            written()
        ))),
        _ => Ok(()),
    }
}

/// Whether a duration hides anywhere in the type (element, field, component).
pub(crate) fn references_duration(ty: &CqlType) -> bool {
    match ty.unfrozen() {
        CqlType::Native(n) => *n == NativeType::Duration,
        CqlType::List(e) | CqlType::Set(e) | CqlType::Vector(e, _) => references_duration(e),
        CqlType::Map(k, v) => references_duration(k) || references_duration(v),
        CqlType::Tuple(items) => items.iter().any(references_duration),
        CqlType::Udt(udt) => udt.fields.iter().any(|(_, t)| references_duration(t)),
        _ => false,
    }
}

fn counters_inside(written: &str) -> CqlError {
    CqlError::invalid(format!(
        "Counters are not allowed inside collections: {written}"
    ))
}

/// A collection's elements must be frozen (Cassandra checks a map's values before its keys
/// and names the kind of the first one that is not).
fn check_nesting(t: CqlType) -> CqlResult<CqlType> {
    // The collection as written: its non-frozen elements without `frozen<>`.
    let (written, unfrozen) = match &t {
        CqlType::List(e) => (format!("list<{}>", e.cql_name()), vec![e]),
        CqlType::Set(e) => (format!("set<{}>", e.cql_name()), vec![e]),
        CqlType::Map(k, v) => (
            format!("map<{}, {}>", k.cql_name(), v.cql_name()),
            vec![v, k],
        ),
        _ => return Ok(t),
    };
    match unfrozen
        .into_iter()
        .find(|e| e.is_multi_cell())
        .map(|e| e.as_ref())
    {
        Some(CqlType::Udt(_)) => Err(CqlError::invalid(format!(
            "Non-frozen UDTs are not allowed inside collections: {written}"
        ))),
        Some(_) => Err(CqlError::invalid(format!(
            "Non-frozen collections are not allowed inside collections: {written}"
        ))),
        None => Ok(t),
    }
}

fn create_table(s: &CreateTable, session: Option<&str>, schema: &Schema) -> CqlResult<DdlOutcome> {
    let ks_name = resolve_keyspace(&s.name, session)?;
    let ks = keyspace(schema, &ks_name)?;
    if ks.table(&s.name.name).is_some() {
        if s.if_not_exists {
            return Ok(DdlOutcome::none());
        }
        return Err(already_exists(&ks_name, Some(&s.name.name)));
    }
    user_modifiable(&ks_name)?;
    check_table_name(&ks_name, &s.name.name)?;
    let full = format!("{}.{}", ks_name, s.name.name);
    let columns = table_columns(s, ks, &full)?;
    let options = convert_options(&s.options);
    let id = table_id_option(&options)
        .map_err(schema_error)?
        .unwrap_or_else(new_table_id);
    let table_options = TableOptions::for_new_table(&options).map_err(schema_error)?;
    let table = TableMetadata::new(&ks_name, &s.name.name, id, columns, table_options).map_err(
        |e| match e {
            SchemaError::Invalid(m) if m.starts_with("No PRIMARY KEY") => CqlError::invalid(
                format!("No PRIMARY KEY specifed for table '{full}' (exactly one required)"),
            ),
            other => schema_error(other),
        },
    )?;
    check_counter_ttl(&table)?;
    if s.compact_storage {
        // Cassandra 5.0 still creates them; their rows live and die with their cells (no row
        // marker), which Helenus's tables do not do: refused rather than answered otherwise.
        return Err(CqlError::invalid(
            "COMPACT STORAGE tables are not supported by Helenus: create the table without COMPACT STORAGE",
        ));
    }
    let table = Arc::new(table);
    let new_ks = ks
        .with_new_table(table.as_ref().clone())
        .map_err(schema_error)?;
    let mut out = DdlOutcome::save(
        new_ks,
        SchemaChangeKind::Created,
        SchemaChangeTarget::Table,
        &s.name.name,
    );
    out.created_tables.push(table);
    Ok(out)
}

fn new_table_id() -> Uuid {
    Uuid::from_bytes(crate::exec::timeuuid(crate::exec::unique_micros()))
}

fn table_columns(
    s: &CreateTable,
    ks: &KeyspaceMetadata,
    full: &str,
) -> CqlResult<Vec<ColumnMetadata>> {
    // The table as written (Cassandra's messages print its QualifiedName).
    let table = match &s.name.keyspace {
        Some(ks) => format!("{ks}.{}", s.name.name),
        None => s.name.name.clone(),
    };
    let mut seen = BTreeSet::new();
    for c in &s.columns {
        if !seen.insert(c.name.as_str()) {
            return Err(CqlError::invalid(format!(
                "Duplicate column '{}' declaration for table '{table}'",
                c.name
            )));
        }
    }
    if s.primary_key_clauses > 1 {
        return Err(CqlError::invalid(format!(
            "Multiple PRIMARY KEY specified for table '{table}' (exactly one required)"
        )));
    }
    if s.partition_key.is_empty() {
        return Err(CqlError::invalid(format!(
            "No PRIMARY KEY specifed for table '{full}' (exactly one required)"
        )));
    }
    let find = |name: &str| -> CqlResult<&ColumnDef> {
        s.columns.iter().find(|c| c.name == name).ok_or_else(|| {
            CqlError::invalid(format!(
                "Unknown column '{name}' referenced in PRIMARY KEY for table '{table}'"
            ))
        })
    };
    let mut keys = BTreeSet::new();
    if let Some(repeated) = s
        .partition_key
        .iter()
        .chain(&s.clustering)
        .find(|n| !keys.insert(*n))
    {
        return Err(CqlError::invalid(format!(
            "Duplicate column '{repeated}' in PRIMARY KEY clause for table '{table}'"
        )));
    }
    check_clustering_order(s, &table)?;
    let bad_order: Vec<&str> = s
        .clustering_order
        .iter()
        .filter(|(n, _)| !s.clustering.contains(n))
        .map(|(n, _)| n.as_str())
        .collect();
    if !bad_order.is_empty() {
        return Err(CqlError::invalid(format!(
            "Only clustering key columns can be defined in CLUSTERING ORDER directive: [{}] are not clustering columns",
            bad_order.join(", ")
        )));
    }
    let mut out = Vec::with_capacity(s.columns.len());
    for (i, name) in s.partition_key.iter().enumerate() {
        let def = find(name)?;
        let ty = key_type(def, ks)?;
        out.push(ColumnMetadata::partition_key(name, ty, i as i32));
    }
    for (i, name) in s.clustering.iter().enumerate() {
        let def = find(name)?;
        let ty = key_type(def, ks)?;
        let desc = s
            .clustering_order
            .iter()
            .any(|(n, o)| n == name && *o == Order::Desc);
        let order = if desc {
            ClusteringOrder::Desc
        } else {
            ClusteringOrder::Asc
        };
        out.push(ColumnMetadata::clustering(name, ty, i as i32, order));
    }
    for def in &s.columns {
        if s.partition_key.contains(&def.name) || s.clustering.contains(&def.name) {
            continue;
        }
        let ty = resolve_type(&def.ty, ks)?;
        user_types::check_nested_collections(&ty, "")?;
        if def.is_static {
            if s.clustering.is_empty() {
                return Err(CqlError::invalid("Static columns are only useful (and thus allowed) if the table has at least one clustering column"));
            }
            out.push(ColumnMetadata::static_column(&def.name, ty));
        } else {
            out.push(ColumnMetadata::regular(&def.name, ty));
        }
    }
    Ok(out)
}

/// CLUSTERING ORDER BY names each clustering column once, in their order, from the first
/// (a prefix of them), as Cassandra's CreateTableStatement checks it. Columns that are not
/// clustering columns are refused after this, as there.
fn check_clustering_order(s: &CreateTable, table: &str) -> CqlResult<()> {
    let mut named = BTreeSet::new();
    for (name, _) in &s.clustering_order {
        if !named.insert(name) {
            return Err(CqlError::invalid(format!(
                "Duplicate column '{name}' in CLUSTERING ORDER BY clause for table '{table}'"
            )));
        }
    }
    if s.clustering_order
        .iter()
        .any(|(n, _)| !s.clustering.contains(n))
    {
        return Ok(());
    }
    for ((name, _), expected) in s.clustering_order.iter().zip(&s.clustering) {
        if name == expected {
            continue;
        }
        if !named.contains(expected) {
            return Err(CqlError::invalid(format!(
                "Missing CLUSTERING ORDER for column {expected}"
            )));
        }
        return Err(CqlError::invalid(format!(
            "The order of columns in the CLUSTERING ORDER directive must match that of the clustering columns ({expected} must appear before {name})"
        )));
    }
    Ok(())
}

/// Counters cannot expire: a counter table has no default TTL.
fn check_counter_ttl(table: &TableMetadata) -> CqlResult<()> {
    if table.is_counter() && table.options.default_time_to_live > 0 {
        return Err(CqlError::invalid(
            "Cannot set default_time_to_live on a table with counters",
        ));
    }
    Ok(())
}

fn key_type(def: &ColumnDef, ks: &KeyspaceMetadata) -> CqlResult<CqlType> {
    if def.is_static {
        return Err(CqlError::invalid(format!(
            "Static column '{}' cannot be part of the PRIMARY KEY",
            def.name
        )));
    }
    let ty = resolve_type(&def.ty, ks)?;
    if ty.is_multi_cell() {
        return Err(CqlError::invalid(format!(
            "Invalid non-frozen collection type {} for PRIMARY KEY column '{}'",
            ty.cql_name(),
            def.name
        )));
    }
    if ty.is_counter() {
        return Err(CqlError::invalid(format!(
            "counter type is not supported for PRIMARY KEY column '{}'",
            def.name
        )));
    }
    if references_duration(&ty) {
        return Err(CqlError::invalid(format!(
            "duration type is not supported for PRIMARY KEY column '{}'",
            def.name
        )));
    }
    Ok(ty)
}

fn alter_table(
    s: &ast::AlterTable,
    session: Option<&str>,
    schema: &Schema,
) -> CqlResult<DdlOutcome> {
    let ks_name = resolve_keyspace(&s.name, session)?;
    let ks = keyspace(schema, &ks_name)?;
    let Some(current) = ks.table(&s.name.name) else {
        if s.if_exists {
            return Ok(DdlOutcome::none());
        }
        return Err(CqlError::invalid(format!(
            "Table '{}.{}' doesn't exist",
            ks_name, s.name.name
        )));
    };
    user_modifiable(&ks_name)?;
    let t = current.as_ref();
    let updated = match &s.action {
        AlterTableAction::Add {
            if_not_exists,
            columns,
        } => add_columns(t, ks, columns, *if_not_exists)?,
        AlterTableAction::Drop {
            if_exists,
            columns,
            timestamp,
        } => drop_columns(t, columns, *if_exists, drop_time(timestamp.as_ref())?)?,
        AlterTableAction::Rename { renames, .. } => rename_columns(t, renames)?,
        AlterTableAction::With(options) => {
            let mut options_now = t.options.clone();
            options_now
                .apply_options(&convert_options(options))
                .map_err(schema_error)?;
            let altered = TableMetadata {
                options: options_now,
                ..t.clone()
            };
            check_counter_ttl(&altered)?;
            altered
        }
        AlterTableAction::AlterColumnType { .. } => {
            return Err(CqlError::invalid(
                "Altering column types is no longer supported",
            ))
        }
        AlterTableAction::AlterColumnMask { .. } => {
            return Err(CqlError::invalid("Column masks are not supported yet"))
        }
        AlterTableAction::DropCompactStorage => {
            return Err(CqlError::invalid(
                "Cannot DROP COMPACT STORAGE on a table without compact storage",
            ))
        }
    };
    let new_ks = ks.with_table(updated);
    Ok(DdlOutcome::save(
        new_ks,
        SchemaChangeKind::Updated,
        SchemaChangeTarget::Table,
        &s.name.name,
    ))
}

fn rebuild(t: &TableMetadata, columns: Vec<ColumnMetadata>) -> CqlResult<TableMetadata> {
    TableMetadata::new(&t.keyspace, &t.name, t.id, columns, t.options.clone())
        .map(|n| n.with_dropped_columns(t.dropped_columns.clone()))
        .map_err(schema_error)
}

fn add_columns(
    t: &TableMetadata,
    ks: &KeyspaceMetadata,
    defs: &[ColumnDef],
    if_not_exists: bool,
) -> CqlResult<TableMetadata> {
    let mut columns = t.columns.clone();
    for def in defs {
        if t.column(&def.name).is_some() {
            if if_not_exists {
                continue;
            }
            return Err(CqlError::invalid(format!(
                "Column with name '{}' already exists",
                def.name
            )));
        }
        let ty = resolve_type(&def.ty, ks)?;
        user_types::check_nested_collections(&ty, &format!(" for column {}", def.name))?;
        if let Some(dropped) = t.dropped_columns.get(&def.name) {
            check_readd(&def.name, &ty, &dropped.ty)?;
        }
        if def.is_static && t.clustering.is_empty() {
            return Err(CqlError::invalid("Static columns are only useful (and thus allowed) if the table has at least one clustering column"));
        }
        if ty.is_counter() != t.is_counter() {
            let (kind, table_kind) = if t.is_counter() {
                ("non counter", "counter")
            } else {
                ("counter", "non counter")
            };
            return Err(CqlError::Config(format!(
                "{}.{}: Cannot have a {kind} column (\"{}\") in a {table_kind} table",
                t.keyspace, t.name, def.name
            )));
        }
        if columns.iter().any(|c| c.name == def.name) {
            return Err(CqlError::invalid(format!(
                "Column with name '{}' already exists",
                def.name
            )));
        }
        columns.push(if def.is_static {
            ColumnMetadata::static_column(&def.name, ty)
        } else {
            ColumnMetadata::regular(&def.name, ty)
        });
    }
    // The drop's record stays: cells written before it must not come back (Cassandra's
    // dropped_columns).
    rebuild(t, columns)
}

/// Cassandra refuses a column added again with a type its old cells cannot be read as.
fn check_readd(name: &str, ty: &CqlType, old: &CqlType) -> CqlResult<()> {
    let simple = !ty.is_multi_cell() && !old.is_multi_cell();
    let readable = ty == old
        || simple && *ty == CqlType::Native(NativeType::Blob)
        || *old == CqlType::Native(NativeType::Ascii) && *ty == CqlType::Native(NativeType::Text);
    if readable {
        return Ok(());
    }
    Err(CqlError::invalid(format!(
        "Cannot re-add previously dropped column '{name}' of type {}, incompatible with previous type {}",
        ty.cql_name(),
        old.cql_name()
    )))
}

/// The time of a column drop: `USING TIMESTAMP t` (microseconds), else now rounded up to
/// the millisecond, the precision of `system_schema.dropped_columns` (as Cassandra's), so
/// that every cell written before the drop stays hidden once the schema is read back.
fn drop_time(timestamp: Option<&ast::Literal>) -> CqlResult<i64> {
    let Some(literal) = timestamp else {
        let now = crate::exec::unique_micros();
        return Ok(now.div_euclid(1000) * 1000 + 1000);
    };
    literal
        .text
        .parse::<i64>()
        .map_err(|_| CqlError::invalid(format!("Invalid timestamp {}", literal.text)))
}

fn drop_columns(
    t: &TableMetadata,
    names: &[String],
    if_exists: bool,
    now: i64,
) -> CqlResult<TableMetadata> {
    let mut columns = t.columns.clone();
    let mut dropped = t.dropped_columns.clone();
    for name in names {
        let Some(col) = t.column(name) else {
            if if_exists {
                continue;
            }
            return Err(CqlError::invalid(format!(
                "Column {} was not found in table '{}.{}'",
                name, t.keyspace, t.name
            )));
        };
        if col.kind.is_primary_key() {
            return Err(CqlError::invalid(format!(
                "Cannot drop PRIMARY KEY column {name}"
            )));
        }
        columns.retain(|c| &c.name != name);
        dropped.insert(
            name.clone(),
            DroppedColumn {
                ty: col.ty.clone(),
                kind: col.kind,
                dropped_time_micros: now,
            },
        );
    }
    Ok(rebuild(t, columns)?.with_dropped_columns(dropped))
}

fn rename_columns(t: &TableMetadata, renames: &[(String, String)]) -> CqlResult<TableMetadata> {
    let mut columns = t.columns.clone();
    for (from, to) in renames {
        let Some(col) = t.column(from) else {
            return Err(CqlError::invalid(format!(
                "Column {} was not found in table {}.{}",
                from, t.keyspace, t.name
            )));
        };
        if !col.kind.is_primary_key() {
            return Err(CqlError::invalid(format!(
                "Cannot rename non PRIMARY KEY column {from}"
            )));
        }
        if t.column(to).is_some() {
            return Err(CqlError::invalid(format!("Cannot rename column {from} to {to} in table '{}'; another column with that name already exists", t.name)));
        }
        for c in columns.iter_mut().filter(|c| &c.name == from) {
            c.name = to.clone();
        }
    }
    rebuild(t, columns)
}

fn drop_table(
    name: &ast::QualifiedName,
    if_exists: bool,
    session: Option<&str>,
    schema: &Schema,
) -> CqlResult<DdlOutcome> {
    let ks_name = resolve_keyspace(name, session)?;
    let ks = schema.keyspace(&ks_name);
    let Some(t) = ks.and_then(|k| k.table(&name.name)) else {
        if if_exists {
            return Ok(DdlOutcome::none());
        }
        return Err(CqlError::invalid(format!(
            "Table '{}.{}' doesn't exist",
            ks_name, name.name
        )));
    };
    user_modifiable(&ks_name)?;
    let mut new_ks = ks
        .map(|k| k.as_ref().clone())
        .ok_or_else(|| CqlError::invalid("keyspace vanished"))?;
    new_ks.tables.remove(&name.name);
    let mut out = DdlOutcome::save(
        new_ks,
        SchemaChangeKind::Dropped,
        SchemaChangeTarget::Table,
        &name.name,
    );
    out.dropped_tables.push(t.id);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_as_cassandra_checks_them() {
        assert_eq!(check_table_name("k", "t_1"), Ok(()));
        assert_eq!(check_table_name("k", &"t".repeat(MAX_TABLE_NAME)), Ok(()));
        assert_eq!(
            check_table_name("k", "tä"),
            Err(CqlError::Config(
                "k.tä: Table name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"tä\")".into()
            ))
        );
        let long = "t".repeat(MAX_TABLE_NAME + 1);
        assert_eq!(
            check_table_name("k", &long),
            Err(CqlError::Config(format!(
                "k.{long}: Table name must not be more than 222 characters long (got 223 characters)"
            )))
        );
    }

    fn resolved(text: &str) -> CqlResult<CqlType> {
        let create = format!("CREATE TABLE t (k int PRIMARY KEY, v {text})");
        let ty = match cql::parse_statement(&create) {
            Ok(Statement::CreateTable(s)) => s.columns[1].ty.clone(),
            other => return Err(CqlError::invalid(format!("{other:?}"))),
        };
        resolve(&ty, "ks", &|name: &ast::QualifiedName| {
            Err(CqlError::invalid(format!("Unknown type {}", name.name)))
        })
    }

    fn refusal(text: &str) -> String {
        match resolved(text) {
            Err(CqlError::Invalid(message)) => message,
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn types_cassandra_refuses_never_reach_the_schema() {
        for (text, message) in [
            (
                "vector<float, 0>",
                "vectors may only have positive dimensions; given 0",
            ),
            (
                "vector<float, -1>",
                "vectors may only have positive dimensions; given -1",
            ),
            (
                "vector<vector<int, 0>, 2>",
                "vectors may only have positive dimensions; given 0",
            ),
            (
                "list<counter>",
                "Counters are not allowed inside collections: list<counter>",
            ),
            (
                "frozen<list<counter>>",
                "Counters are not allowed inside collections: frozen<list<counter>>",
            ),
            (
                "map<int, counter>",
                "Counters are not allowed inside collections: map<int, counter>",
            ),
            (
                "tuple<int, counter>",
                "Counters are not allowed inside tuples",
            ),
            (
                "map<int, list<int>>",
                "Non-frozen collections are not allowed inside collections: map<int, list<int>>",
            ),
            (
                "set<duration>",
                "Durations are not allowed inside sets: set<duration>",
            ),
            (
                "map<duration, int>",
                "Durations are not allowed as map keys: map<duration, int>",
            ),
        ] {
            assert_eq!(refusal(text), message, "{text}");
        }
        assert!(resolved("map<int, duration>").is_ok());
        assert!(resolved("vector<float, 8193>").is_ok());
    }

    #[test]
    fn collections_inside_frozen_types_and_tuples_are_frozen_implicitly() {
        let parsed = |text: &str| CqlType::parse(text, &|_| None).expect("a schema type");
        for (text, stored) in [
            (
                "frozen<map<set<int>, list<int>>>",
                "frozen<map<frozen<set<int>>, frozen<list<int>>>>",
            ),
            ("frozen<list<list<int>>>", "frozen<list<frozen<list<int>>>>"),
            (
                "tuple<list<list<int>>, int>",
                "tuple<frozen<list<frozen<list<int>>>>, int>",
            ),
        ] {
            assert_eq!(resolved(text), Ok(parsed(stored)), "{text}");
        }
        assert_eq!(
            refusal("map<frozen<list<int>>, set<int>>"),
            "Non-frozen collections are not allowed inside collections: map<frozen<list<int>>, set<int>>"
        );
        assert_eq!(
            refusal("vector<list<list<int>>, 2>"),
            "Non-frozen collections are not allowed inside collections: list<list<int>>"
        );
    }

    #[test]
    fn a_dropped_column_comes_back_only_with_a_type_that_reads_its_cells() {
        let ty = |text: &str| resolved(text).expect("a valid type");
        assert!(check_readd("w", &ty("text"), &ty("text")).is_ok());
        assert!(check_readd("w", &ty("blob"), &ty("text")).is_ok());
        assert_eq!(
            check_readd("w", &ty("int"), &ty("text")),
            Err(CqlError::invalid(
                "Cannot re-add previously dropped column 'w' of type int, incompatible with previous type text"
            ))
        );
        assert!(check_readd("l", &ty("set<int>"), &ty("list<int>")).is_err());
        assert!(check_readd("l", &ty("frozen<list<int>>"), &ty("list<int>")).is_err());
        assert!(check_readd("l", &ty("blob"), &ty("list<int>")).is_err());
    }
}
