//! Cassandra's virtual keyspaces `system_views` and `system_virtual_schema`: read-only tables
//! whose rows the node computes when they are read (connected clients, settings, caches,
//! compactions, thread pools, per-table latencies and histograms, and the virtual schema
//! itself). Their definitions come from `schema::virtual_keyspaces`; a SELECT reads them
//! through the ordinary SELECT path from their rows held in memory by the node
//! ([`NodeState::in_memory`](crate::NodeState::in_memory)). The tables computed from what
//! the query layer sees are here; those computed from the node's storage (caches,
//! compactions, thread pools, per-table figures) are the `system` crate's, added with
//! [`VirtualTables::with`].
mod clients;
mod latency;
mod repairs;
mod schema_tables;
mod settings;
mod streaming;

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use coordinator::Coordinator;
use cql::ast::{Batch, BatchKind, Select, Statement};
use parking_lot::RwLock;
use schema::{KeyspaceMetadata, Row as ValueRow, Schema, TableMetadata};
use types::{CqlError, CqlResult};

use crate::node_state::NodeState;
use crate::reads::{PartitionReader, Source};

pub use clients::ConnectedClient;
pub use repairs::RepairRow;
pub use streaming::StreamState;

/// One virtual table: its name and how to compute its rows.
pub trait VirtualTable: Send + Sync {
    /// The keyspace and table this computes.
    fn name(&self) -> (&'static str, &'static str);

    /// Every row of the table now, as column-name maps (key columns always present).
    fn rows(&self, node: &NodeView) -> CqlResult<Vec<ValueRow>>;
}

/// A function another part of the node supplies, listing what it knows now.
pub type Listing<T> = Box<dyn Fn() -> Vec<T> + Send + Sync>;

/// Data other parts of the node supply; installed by the server once they exist.
#[derive(Default)]
pub struct NodeSources {
    /// The live native-protocol connections.
    pub clients: Option<Listing<ConnectedClient>>,
    /// The effective configuration: Cassandra's key names, values as Cassandra prints them
    /// (`None` when unset).
    pub settings: Option<Listing<(String, Option<String>)>>,
    /// The node's pools of work (as `nodetool tpstats` lists them).
    pub thread_pools: Option<Listing<ThreadPool>>,
    /// The stream sessions, running and recently ended.
    pub streams: Option<Listing<StreamState>>,
    /// The repairs this node coordinates, running and recently ended.
    pub repairs: Option<Listing<RepairRow>>,
}

/// One pool of work's figures, as `nodetool tpstats` lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPool {
    pub name: String,
    pub active: u64,
    pub pending: u64,
    pub completed: u64,
    pub blocked: u64,
    pub blocked_all_time: u64,
}

/// What a virtual table may look at while computing its rows.
pub struct NodeView<'a> {
    pub schema: &'a Schema,
    pub coordinator: &'a Coordinator,
    pub sources: &'a NodeSources,
    /// Seconds since the node started (for rates).
    pub uptime_seconds: f64,
}

/// The virtual tables of a node, with the sources they read.
pub struct VirtualTables {
    tables: Vec<Box<dyn VirtualTable>>,
    sources: RwLock<NodeSources>,
    started: Instant,
}

/// The virtual keyspaces' metadata, built once.
static CATALOG: LazyLock<Vec<KeyspaceMetadata>> = LazyLock::new(schema::virtual_keyspaces);

/// The virtual keyspaces and their tables.
pub fn catalog() -> &'static [KeyspaceMetadata] {
    &CATALOG
}

/// Whether `keyspace` is a virtual keyspace.
pub fn is_virtual(keyspace: &str) -> bool {
    schema::is_virtual_keyspace(keyspace)
}

/// `schema` with the virtual keyspaces added, for DESCRIBE.
pub fn with_virtual_keyspaces(schema: &Schema) -> Schema {
    CATALOG
        .iter()
        .fold(schema.clone(), |all, ks| all.with_keyspace(ks.clone()))
}

/// The virtual table `keyspace.table`: `Ok(None)` when `keyspace` is not virtual, an error
/// when it is but has no such table.
pub fn lookup(keyspace: &str, table: &str) -> CqlResult<Option<Arc<TableMetadata>>> {
    let Some(ks) = CATALOG.iter().find(|k| k.name == keyspace) else {
        return Ok(None);
    };
    match ks.table(table) {
        Some(t) => Ok(Some(t.clone())),
        None => Err(CqlError::invalid(format!("table {table} does not exist"))),
    }
}

/// The error Cassandra gives for a write (`action` "Modification") or a TRUNCATE
/// ("Truncation") of a virtual table; `Ok` for any other table.
pub fn reject(table: &TableMetadata, action: &str) -> CqlResult<()> {
    if !is_virtual(&table.keyspace) {
        return Ok(());
    }
    Err(CqlError::invalid(format!(
        "{action} is not supported by table {}.{}",
        table.keyspace, table.name
    )))
}

/// Cassandra's checks of a batch touching virtual tables: never in a logged batch, never
/// mixed with stored tables. A batch of virtual tables only fails later, table by table.
pub fn check_batch(batch: &Batch, session: Option<&str>) -> CqlResult<()> {
    let is_virtual_statement = |s: &Statement| {
        let name = match s {
            Statement::Insert(i) => &i.table,
            Statement::Update(u) => &u.table,
            Statement::Delete(d) => &d.table,
            _ => return false,
        };
        crate::ddl::resolve_keyspace(name, session).is_ok_and(|ks| is_virtual(&ks))
    };
    let virtual_count = batch
        .statements
        .iter()
        .filter(|s| is_virtual_statement(s))
        .count();
    if virtual_count == 0 {
        return Ok(());
    }
    if batch.kind == BatchKind::Logged {
        return Err(CqlError::invalid(
            "Cannot include a virtual table statement in a logged batch",
        ));
    }
    if virtual_count < batch.statements.len() {
        return Err(CqlError::invalid(
            "Mutations for virtual and regular tables cannot exist in the same batch",
        ));
    }
    Ok(())
}

impl Default for VirtualTables {
    fn default() -> Self {
        VirtualTables::new()
    }
}

impl VirtualTables {
    /// The virtual tables computed from what the query layer sees, with no outside sources
    /// installed yet.
    pub fn new() -> VirtualTables {
        let mut tables: Vec<Box<dyn VirtualTable>> = vec![
            Box::new(clients::Clients),
            Box::new(settings::Settings),
            Box::new(streaming::Streaming),
            Box::new(repairs::Repairs),
        ];
        tables.extend(latency::tables());
        tables.extend(schema_tables::tables());
        VirtualTables {
            tables,
            sources: RwLock::new(NodeSources::default()),
            started: Instant::now(),
        }
    }

    /// These tables and `more`.
    pub fn with(mut self, more: impl IntoIterator<Item = Box<dyn VirtualTable>>) -> Self {
        self.tables.extend(more);
        self
    }

    /// The (keyspace, table) names of the tables served.
    pub fn names(&self) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        self.tables.iter().map(|t| t.name())
    }

    /// Installs the data other parts of the node supply.
    pub fn install(&self, sources: NodeSources) {
        *self.sources.write() = sources;
    }

    /// `table`'s rows now, held in memory by `node` to be read by a SELECT.
    pub fn snapshot(
        &self,
        table: &TableMetadata,
        schema: &Schema,
        coordinator: &Coordinator,
        node: &dyn NodeState,
    ) -> CqlResult<Box<dyn PartitionReader + Send>> {
        let producer = self
            .tables
            .iter()
            .find(|t| t.name() == (table.keyspace.as_str(), table.name.as_str()))
            .ok_or_else(|| CqlError::invalid(format!("table {} does not exist", table.name)))?;
        let sources = self.sources.read();
        let view = NodeView {
            schema,
            coordinator,
            sources: &sources,
            uptime_seconds: self.started.elapsed().as_secs_f64(),
        };
        node.in_memory(table, &producer.rows(&view)?)
    }
}

impl VirtualTables {
    /// The source a SELECT on `table` reads.
    pub fn source<'a>(
        &self,
        table: &TableMetadata,
        schema: &Schema,
        coordinator: &'a Coordinator,
        node: &dyn NodeState,
    ) -> CqlResult<Source<'a>> {
        if !is_virtual(&table.keyspace) {
            return Ok(Source::Stored(coordinator));
        }
        let rows = self.snapshot(table, schema, coordinator, node)?;
        Ok(Source::Virtual(rows))
    }
}

/// The SELECT as analysed on `table`: virtual tables filter on any column without
/// ALLOW FILTERING, as in Cassandra 5.0.
pub fn implicit_filtering<'a>(table: &TableMetadata, select: &'a Select) -> Cow<'a, Select> {
    if is_virtual(&table.keyspace) && !select.allow_filtering {
        return Cow::Owned(Select {
            allow_filtering: true,
            ..select.clone()
        });
    }
    Cow::Borrowed(select)
}

/// A row from `(column, value)` pairs, leaving out the nulls.
pub fn row(values: Vec<(&str, Option<types::Value>)>) -> ValueRow {
    values
        .into_iter()
        .filter(|(_, v)| v.is_some())
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// A `text` value.
pub fn text(value: &str) -> Option<types::Value> {
    Some(types::Value::Text(value.to_string()))
}

/// The mean rate of `count` events over `seconds`.
pub fn per_second(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// Every table of the user's and the system keyspaces (not the virtual ones), in name order,
/// as the per-table virtual tables list them.
pub fn all_tables(schema: &Schema) -> impl Iterator<Item = &Arc<TableMetadata>> {
    schema.keyspaces().values().flat_map(|k| k.tables.values())
}

#[cfg(test)]
mod tests;
