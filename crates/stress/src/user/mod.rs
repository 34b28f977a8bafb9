//! `helenus stress user profile=FILE ops(insert=N,QUERY=M…)`: cassandra-stress's user mode.
//! The profile ([`profile`]) names a table (created from its definitions when missing); the
//! table's columns come from the driver's schema metadata; values ([`values`]) and rows
//! ([`rows`]) are generated from the population seeds as cassandra-stress does, and
//! [`workload`] runs the inserts and queries, writing partitions over several inserts when
//! the profile asks for `visits` ([`visits`]).

pub mod profile;
mod rows;
mod values;
mod visits;
mod workload;

use std::sync::Arc;

use scylla::client::session::Session;
use scylla::cluster::metadata::{ColumnKind, Table};
use scylla::statement::prepared::PreparedStatement;

pub use profile::Profile;
use rows::{Clustering, TableGen};
use values::ValueGen;
use workload::{Query, UserWorkload};

use crate::client::consistency;
use crate::dist::Sampler;
use crate::runner::Workload;
use crate::settings::Settings;

/// Creates the keyspace and table from the profile's definitions when they do not exist
/// (and then runs `extra_definitions`), and makes the keyspace the session's.
pub async fn create_schema(session: &Session, p: &Profile) -> Result<(), String> {
    refresh(session).await?;
    let state = session.get_cluster_state();
    let keyspace = state.get_keyspace(&p.keyspace);
    if keyspace.is_none() {
        let def = p.keyspace_definition.as_deref().ok_or_else(|| {
            format!(
                "Keyspace {} does not exist and the profile has no keyspace_definition",
                p.keyspace
            )
        })?;
        execute(session, def).await?;
    }
    session
        .use_keyspace(&p.keyspace, true)
        .await
        .map_err(|e| format!("Cannot use keyspace {}: {e}", p.keyspace))?;
    let has_table = keyspace.is_some_and(|k| k.tables.contains_key(&p.table));
    if !has_table {
        let def = p.table_definition.as_deref().ok_or_else(|| {
            format!(
                "Table {} does not exist and the profile has no table_definition",
                p.table
            )
        })?;
        execute(session, def).await?;
        for extra in &p.extra_definitions {
            execute(session, extra).await?;
        }
    }
    Ok(())
}

async fn refresh(session: &Session) -> Result<(), String> {
    session
        .refresh_metadata()
        .await
        .map_err(|e| format!("Cannot read the schema: {e}"))
}

async fn execute(session: &Session, cql: &str) -> Result<(), String> {
    session
        .query_unpaged(cql.trim().trim_end_matches(';'), ())
        .await
        .map(|_| ())
        .map_err(|e| format!("Encountered exception creating schema: {e}"))
}

/// The table's columns in insert order: partition key, clustering, then the rest by name.
fn column_order(t: &Table) -> Vec<String> {
    let mut rest: Vec<String> = t
        .columns
        .iter()
        .filter(|(_, c)| matches!(c.kind, ColumnKind::Regular | ColumnKind::Static))
        .map(|(n, _)| n.clone())
        .collect();
    rest.sort();
    let mut names = t.partition_key.clone();
    names.extend(t.clustering_key.iter().cloned());
    names.extend(rest);
    names
}

fn table_gen(t: &Table, names: &[String], p: &Profile) -> Result<TableGen, String> {
    let value = |n: &String| -> Result<ValueGen, String> {
        let col = t.columns.get(n).ok_or_else(|| format!("no column {n}"))?;
        ValueGen::new(n, &col.typ, &p.column(n))
    };
    let (pk, ck) = (t.partition_key.len(), t.clustering_key.len());
    Ok(TableGen {
        partition: names[..pk].iter().map(value).collect::<Result<_, _>>()?,
        clustering: names[pk..pk + ck]
            .iter()
            .map(|n| {
                Ok(Clustering {
                    values: value(n)?,
                    cluster: Sampler::new(p.column(n).cluster, 0),
                })
            })
            .collect::<Result<_, String>>()?,
        regular: names[pk + ck..]
            .iter()
            .map(value)
            .collect::<Result<_, _>>()?,
    })
}

fn quoted(names: &[String]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    q.join(",")
}

/// Prepares the profile's statements against the table as the server describes it.
pub async fn prepare(
    session: Arc<Session>,
    settings: &Settings,
    p: Profile,
) -> Result<Arc<dyn Workload>, String> {
    refresh(&session).await?;
    let state = session.get_cluster_state();
    let table = state
        .get_keyspace(&p.keyspace)
        .and_then(|k| k.tables.get(&p.table))
        .ok_or_else(|| format!("Table {}.{} not found", p.keyspace, p.table))?;
    let names = column_order(table);
    if let Some(unknown) = p.columns.keys().find(|c| !names.contains(c)) {
        return Err(format!(
            "columnspec names {unknown}, which is not a column of {}",
            p.table
        ));
    }
    let gen = table_gen(table, &names, &p)?;
    let cl = consistency(&settings.command.consistency);
    let insert_cql = format!(
        "INSERT INTO \"{}\".\"{}\" ({}) VALUES ({})",
        p.keyspace,
        p.table,
        quoted(&names),
        vec!["?"; names.len()].join(",")
    );
    let insert = prepared(&session, &insert_cql, cl).await?;
    let mut queries = Vec::new();
    for q in &p.queries {
        let statement = prepared(&session, &q.cql, cl).await?;
        let columns = statement
            .get_variable_col_specs()
            .iter()
            .map(|spec| {
                names.iter().position(|n| n == spec.name()).ok_or_else(|| {
                    format!(
                        "query {}: marker {} is not a column of {}",
                        q.name,
                        spec.name(),
                        p.table
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        queries.push(Query {
            statement,
            columns,
            multirow: q.multirow,
        });
    }
    Ok(Arc::new(Arc::new(UserWorkload {
        session,
        table: gen,
        insert,
        batch: p.insert.batch,
        partitions: p.insert.partitions.clone(),
        select: p.insert.select.clone(),
        pool: visits::Pool::new(p.insert.visits.clone(), p.insert.revisit.clone()),
        queries,
    })))
}

async fn prepared(
    session: &Session,
    cql: &str,
    cl: scylla::statement::Consistency,
) -> Result<PreparedStatement, String> {
    let mut p = session
        .prepare(cql)
        .await
        .map_err(|e| format!("Failed to prepare {cql}: {e}"))?;
    p.set_consistency(cl);
    // Results decoded with the metadata from PREPARE (the server may omit it), as the Java
    // driver does for cassandra-stress.
    p.set_use_cached_result_metadata(true);
    Ok(p)
}
