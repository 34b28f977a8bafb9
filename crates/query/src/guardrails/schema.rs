//! The guardrails on schema statements. Cassandra checks some when it validates a statement,
//! before looking at the schema ([`before`]: counts of keyspaces, tables, columns and UDT fields,
//! COMPACT STORAGE, a TWCS table without TTL, and at the start of DROPs), and the rest once the
//! change is worked out ([`after`]: replication factors, SimpleStrategy on ALTER, uncompressed
//! tables, columns and UDT fields added).
use cql::ast::{self, AlterTableAction, AlterTypeAction, OptionValue, Statement};
use schema::{is_system_keyspace, Schema, TableMetadata, TableOptions};
use types::CqlResult;

use super::check::Notice;
use super::Limits;
use crate::ddl::{self, DdlOutcome, Effect};

/// Checks made before the statement is applied to the schema.
pub(crate) fn before(
    limits: &Limits,
    stmt: &Statement,
    schema: &Schema,
    session: Option<&str>,
    notice: &Notice,
) -> CqlResult<()> {
    match stmt {
        Statement::CreateKeyspace(s) if !is_system_keyspace(&s.name) => {
            let count = user_keyspaces(schema).count() as i64 + 1;
            limits.keyspaces().guard(count, &s.name, notice)?;
            if replication_class(&s.options) == Some("SimpleStrategy") {
                limits.simple_strategy().ensure_enabled(notice)?;
            }
            Ok(())
        }
        Statement::DropKeyspace(s) if !is_system_keyspace(&s.name.name) => {
            limits.drop_keyspace().ensure_enabled(notice)
        }
        Statement::CreateTable(s) => create_table(limits, s, schema, session, notice),
        Statement::AlterTable(s) => alter_table(limits, s, schema, session, notice),
        Statement::DropTable(s) if user_keyspace(&s.name, session) => {
            limits.drop_truncate_table().ensure_enabled(notice)
        }
        Statement::CreateType(s) if user_keyspace(&s.name, session) => {
            let fields = s.fields.len() as i64;
            limits.fields_per_udt().guard(fields, &s.name.name, notice)
        }
        _ => Ok(()),
    }
}

/// Checks made on the change a statement works out, before it is saved.
pub(crate) fn after(
    limits: &Limits,
    stmt: &Statement,
    outcome: &DdlOutcome,
    notice: &Notice,
) -> CqlResult<()> {
    let Effect::Save(ks) = &outcome.effect else {
        return Ok(());
    };
    match stmt {
        Statement::CreateKeyspace(_) => {
            replication_factors(limits, &ks.name, &ks.replication, notice)
        }
        Statement::AlterKeyspace(s) => {
            if replication_class(&s.options) == Some("SimpleStrategy") {
                limits.simple_strategy().ensure_enabled(notice)?;
            }
            replication_factors(limits, &ks.name, &ks.replication, notice)
        }
        Statement::CreateTable(s) => match ks.table(&s.name.name) {
            Some(table) => compression(limits, table, notice),
            None => Ok(()),
        },
        Statement::AlterTable(s) => {
            let Some(table) = ks.table(&s.name.name) else {
                return Ok(());
            };
            match &s.action {
                AlterTableAction::Add { .. } => {
                    let columns = table.columns.len() as i64;
                    limits
                        .columns_per_table()
                        .guard(columns, &table.name, notice)
                }
                AlterTableAction::With(_) => compression(limits, table, notice),
                _ => Ok(()),
            }
        }
        // Cassandra checks the new field count once the field passed the type's own checks.
        Statement::AlterType(s) if matches!(s.action, AlterTypeAction::Add { .. }) => {
            match ks.user_type(&s.name.name) {
                Some(udt) if !is_system_keyspace(&ks.name) => {
                    let fields = udt.fields.len() as i64;
                    limits.fields_per_udt().guard(fields, &udt.name, notice)
                }
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

fn create_table(
    limits: &Limits,
    s: &ast::CreateTable,
    schema: &Schema,
    session: Option<&str>,
    notice: &Notice,
) -> CqlResult<()> {
    if !user_keyspace(&s.name, session) {
        return Ok(());
    }
    let name = &s.name.name;
    limits
        .columns_per_table()
        .guard(s.columns.len() as i64, name, notice)?;
    let tables = limits.tables();
    if tables.enabled() {
        let count: usize = user_keyspaces(schema).map(|ks| ks.tables.len()).sum();
        tables.guard(count as i64 + 1, name, notice)?;
    }
    if s.compact_storage {
        limits.compact_tables().ensure_enabled(notice)?;
    }
    zero_ttl_on_twcs(limits, &s.options, notice)
}

fn alter_table(
    limits: &Limits,
    s: &ast::AlterTable,
    schema: &Schema,
    session: Option<&str>,
    notice: &Notice,
) -> CqlResult<()> {
    if !user_keyspace(&s.name, session) {
        return Ok(());
    }
    match &s.action {
        AlterTableAction::With(options) => zero_ttl_on_twcs(limits, options, notice),
        AlterTableAction::Add { .. }
        | AlterTableAction::Drop { .. }
        | AlterTableAction::Rename { .. } => {
            let ks = ddl::resolve_keyspace(&s.name, session)?;
            if schema.table(&ks, &s.name.name).is_none() {
                return Ok(());
            }
            let flag = limits.alter_table();
            flag.ensure_enabled_as("ALTER TABLE changing columns", notice)
        }
        _ => Ok(()),
    }
}

/// Cassandra looks at the options the statement gives, not at the table's result: a TWCS
/// compaction given without `default_time_to_live` (which defaults to 0) is reported.
fn zero_ttl_on_twcs(limits: &Limits, options: &ast::Properties, notice: &Notice) -> CqlResult<()> {
    let Ok(given) = TableOptions::for_new_table(&ddl::convert_options(options)) else {
        return Ok(());
    };
    let twcs = given
        .compaction
        .get("class")
        .is_some_and(|c| c.ends_with("TimeWindowCompactionStrategy"));
    if twcs && given.default_time_to_live == 0 {
        limits.zero_ttl_on_twcs().ensure_enabled(notice)?;
    }
    Ok(())
}

fn compression(limits: &Limits, table: &TableMetadata, notice: &Notice) -> CqlResult<()> {
    let disabled = table
        .options
        .compression
        .get("enabled")
        .is_some_and(|e| e == "false");
    if disabled {
        limits.uncompressed_tables().ensure_enabled(notice)?;
    }
    Ok(())
}

/// The full replicas of each data centre (SimpleStrategy: its one factor), checked against
/// the minimum and maximum replication factors.
fn replication_factors(
    limits: &Limits,
    keyspace: &str,
    replication: &std::collections::BTreeMap<String, String>,
    notice: &Notice,
) -> CqlResult<()> {
    let (minimum, maximum) = (
        limits.minimum_replication_factor(),
        limits.maximum_replication_factor(),
    );
    if is_system_keyspace(keyspace) || !(minimum.enabled() || maximum.enabled()) {
        return Ok(());
    }
    let factors = replication
        .iter()
        .filter(|(option, _)| option.as_str() != "class")
        .filter_map(|(_, factor)| factor.split('/').next()?.trim().parse::<i64>().ok());
    for rf in factors {
        minimum.guard(rf, keyspace, notice)?;
        maximum.guard(rf, keyspace, notice)?;
    }
    Ok(())
}

/// The `class` of a `replication` option, as written.
fn replication_class(options: &ast::Properties) -> Option<&str> {
    options.iter().find_map(|(name, value)| match value {
        OptionValue::Map(pairs) if name == "replication" => pairs
            .iter()
            .find(|(key, _)| key.text == "class")
            .map(|(_, class)| class.text.as_str()),
        _ => None,
    })
}

fn user_keyspaces(
    schema: &Schema,
) -> impl Iterator<Item = &std::sync::Arc<schema::KeyspaceMetadata>> {
    schema
        .keyspaces()
        .iter()
        .filter(|(name, _)| !is_system_keyspace(name))
        .map(|(_, ks)| ks)
}

/// Whether `name` resolves to a keyspace users own (system ones are refused with
/// Unauthorized before any guardrail, as in Cassandra).
fn user_keyspace(name: &ast::QualifiedName, session: Option<&str>) -> bool {
    ddl::resolve_keyspace(name, session).is_ok_and(|ks| !is_system_keyspace(&ks))
}
