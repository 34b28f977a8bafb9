//! The query processor: parses and analyses statements, caches prepared statements, runs
//! plans through the coordinator, applies schema changes and announces them.
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::OnceLock;

use arc_swap::ArcSwap;
use bytes::Bytes;
use coordinator::Coordinator;
use cql::ast::Statement;
use metadata::MetadataService;
use mutation::clock::{SharedClock, UniqueMicros};
use parking_lot::RwLock;
use ring::ReplicationStrategy;
use schema::{md5, name_uuid, Schema, TableMetadata};
use tokio::sync::{broadcast, watch};
use types::request::{BatchRequest, QueryOptions};
use types::result::{ColumnSpec, Outcome, Prepared, QueryResult, SchemaChange};
use types::{CqlError, CqlResult};

use crate::batch;
use crate::ddl;
use crate::describe;
use crate::exec::ExecContext;
use crate::guardrails::{self, Limits, PartitionGuardrails};
use crate::modify::ModifyPlan;
use crate::node::NodeInfo;
use crate::node_state::NodeState;
use crate::operand::{BindSpecs, Binder};
use crate::restrictions::{PartitionSelection, Values};
use crate::schema_follow::SchemaLag;
use crate::select::SelectPlan;
use crate::tombstones::TombstoneLimits;
use crate::trace::{TraceRequest, Tracer, Tracing};
use crate::virtual_tables::{self, VirtualTables};
use coordinator::trace::trace;
use coordinator::Trace;

/// Keyspaces whose tables only the node itself writes.
const LOCAL_SYSTEM: [&str; 4] = [
    "system",
    "system_schema",
    "system_virtual_schema",
    "system_views",
];

/// An analysed statement, ready to run with bound values.
#[derive(Debug)]
pub enum Plan {
    Select(SelectPlan),
    Modify(ModifyPlan),
    Batch(batch::BatchPlan),
    Use(String),
    Ddl(Statement),
    Truncate(Arc<TableMetadata>),
    Describe(cql::ast::Describe),
}

/// A prepared statement in the cache.
#[derive(Debug)]
pub struct PreparedStatement {
    /// The statement's text, as prepared.
    pub query: String,
    pub plan: Arc<Plan>,
    pub binds: BindSpecs,
    pub keyspace: Option<String>,
    pub table: Option<String>,
    pub result: Prepared,
}

/// The schema and what is derived from it.
pub struct SchemaState {
    pub schema: Arc<Schema>,
    /// Each user keyspace's version in the cluster metadata log (the epoch of its last change)
    /// as of this schema; a schema change names it so that a stale plan cannot commit.
    versions: BTreeMap<String, u64>,
}

impl SchemaState {
    pub fn new(schema: Schema) -> SchemaState {
        SchemaState {
            schema: Arc::new(schema),
            versions: BTreeMap::new(),
        }
    }

    pub(crate) fn with_versions(mut self, versions: BTreeMap<String, u64>) -> SchemaState {
        self.versions = versions;
        self
    }

    /// The keyspace's version in the metadata log, `None` when the log does not have it.
    pub(crate) fn version(&self, keyspace: &str) -> Option<u64> {
        self.versions.get(keyspace).copied()
    }
}

/// Executes CQL for the transport.
/// Waits, within a bound of its own, until the other live nodes have applied the schema of the
/// version given.
pub type AgreementWait =
    Arc<dyn Fn(uuid::Uuid) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

pub struct QueryProcessor {
    pub(crate) coordinator: Arc<Coordinator>,
    pub(crate) state: ArcSwap<SchemaState>,
    /// Held while a schema from the metadata log is applied.
    pub(crate) ddl_lock: tokio::sync::Mutex<()>,
    prepared: RwLock<HashMap<Bytes, Arc<PreparedStatement>>>,
    pub(crate) events: broadcast::Sender<SchemaChange>,
    /// The cluster metadata log schema changes commit through (set once the node has one).
    pub(crate) metadata: OnceLock<Arc<MetadataService>>,
    /// The metadata epoch this node's schema has caught up with.
    pub(crate) synced: watch::Sender<u64>,
    /// Why this node could not apply the metadata log's latest schema, while it cannot.
    pub(crate) lag: watch::Sender<Option<SchemaLag>>,
    /// How a schema change waits for the other live nodes to apply it (set in a cluster).
    pub(crate) agreement: OnceLock<AgreementWait>,
    pub(crate) node: NodeInfo,
    /// The node's own state: its system tables, the tables it holds, truncation.
    pub(crate) node_state: Arc<dyn NodeState>,
    virtual_tables: VirtualTables,
    tracer: Tracer,
    /// Guardrails and batch thresholds (cassandra.yaml's; Cassandra's defaults until set).
    limits: ArcSwap<Limits>,
    /// Server-side write timestamps from the node's own clock, once set (a simulated node's);
    /// the process's clock until then.
    stamps: OnceLock<UniqueMicros>,
}

impl QueryProcessor {
    /// A processor over the node's data as start-up left it (the `system` crate opens it:
    /// `schema` loaded, `node` identified), re-preparing the statements saved before a
    /// restart.
    pub async fn start(
        coordinator: Arc<Coordinator>,
        node_state: Arc<dyn NodeState>,
        schema: Schema,
        node: NodeInfo,
        virtual_tables: VirtualTables,
    ) -> Arc<QueryProcessor> {
        let (events, _) = broadcast::channel(256);
        let tracer = Tracer::new(
            Arc::clone(&coordinator),
            &schema,
            node.rpc_address,
            node.native_port,
        );
        let state = SchemaState::new(schema);
        coordinator.install_schema(state.schema.clone());
        let qp = Arc::new(QueryProcessor {
            tracer,
            coordinator,
            state: ArcSwap::from_pointee(state),
            node_state,
            virtual_tables,
            ddl_lock: tokio::sync::Mutex::new(()),
            prepared: RwLock::new(HashMap::new()),
            events,
            metadata: OnceLock::new(),
            agreement: OnceLock::new(),
            synced: watch::Sender::new(0),
            lag: watch::Sender::new(None),
            node,
            limits: ArcSwap::from_pointee(Limits::default()),
            stamps: OnceLock::new(),
        });
        if let Some(sink) = qp.tracer.replica_sink() {
            qp.coordinator.attach_trace_sink(sink);
        }
        qp.reload_prepared().await;
        qp
    }

    /// Schema changes, for the transport's SCHEMA_CHANGE events.
    pub fn subscribe(&self) -> broadcast::Receiver<SchemaChange> {
        self.events.subscribe()
    }

    /// How `keyspace` replicates, as the coordinator has it from the current schema.
    pub fn strategy(&self, keyspace: &str) -> Arc<ReplicationStrategy> {
        self.coordinator.strategy(keyspace)
    }

    pub fn schema(&self) -> Arc<SchemaState> {
        self.state.load_full()
    }

    pub fn node(&self) -> &NodeInfo {
        &self.node
    }

    /// Records the tokens this node took in the ring, in `system.local` and on the
    /// coordinator's ring.
    pub async fn set_local_tokens(&self, tokens: &[i64]) -> CqlResult<()> {
        let schema = self.schema().schema.clone();
        self.node_state.save_tokens(&schema, tokens).await?;
        self.coordinator.set_local_tokens(tokens.to_vec());
        Ok(())
    }

    /// The virtual tables, for the server to install their sources.
    pub fn virtual_tables(&self) -> &VirtualTables {
        &self.virtual_tables
    }

    /// Applies cassandra.yaml's guardrails and batch thresholds to later requests, and to the
    /// partitions later flushes and compactions write.
    pub fn set_limits(self: &Arc<Self>, limits: Limits) {
        let watch = PartitionGuardrails::new(&limits, self);
        self.node_state.watch_partitions(Arc::new(watch));
        self.limits.store(Arc::new(limits));
    }

    /// Takes server-side write timestamps from `clock` from now on (set once: a simulation
    /// gives each node its own; the server leaves the process's).
    pub fn set_clock(&self, clock: SharedClock) {
        let _ = self.stamps.set(UniqueMicros::new(clock));
    }

    /// The server-side time of a statement executed now, strictly increasing on this node.
    pub(crate) fn now_micros(&self) -> i64 {
        self.stamps
            .get()
            .map_or_else(crate::exec::unique_micros, UniqueMicros::next)
    }

    pub(crate) fn limits(&self) -> Arc<Limits> {
        self.limits.load_full()
    }

    /// Request tracing: settings and the writer of `system_traces`.
    pub fn tracer(&self) -> &Tracer {
        &self.tracer
    }

    pub async fn query(
        &self,
        keyspace: Option<&str>,
        text: &str,
        options: QueryOptions,
    ) -> CqlResult<Outcome> {
        self.query_with(keyspace, text, options, None).await
    }

    /// A client's QUERY, traced when it asks or the trace probability draws it.
    pub async fn query_traced(
        &self,
        keyspace: Option<&str>,
        text: &str,
        options: QueryOptions,
        tracing: Tracing,
    ) -> CqlResult<Outcome> {
        let describe = || TraceRequest::statement("Execute CQL3 query", text, &options);
        let session = self.tracer.begin(tracing, describe);
        let trace = session.as_ref().map(|s| s.trace());
        let result = self.query_with(keyspace, text, options, trace).await;
        self.tracer.finish(session, result)
    }

    async fn query_with(
        &self,
        keyspace: Option<&str>,
        text: &str,
        mut options: QueryOptions,
        trace: Option<Arc<Trace>>,
    ) -> CqlResult<Outcome> {
        let (plan, binds) = self.analyze_text(text, keyspace, trace.as_deref())?;
        let values = binds.positional_query(std::mem::take(&mut options.values))?;
        let ctx = ExecContext::at(&options, values, self.now_micros()).traced(trace);
        self.run(&plan, keyspace, &ctx).await
    }

    pub async fn prepare(&self, keyspace: Option<&str>, text: &str) -> CqlResult<Outcome> {
        self.prepare_with(keyspace, text, None).await
    }

    /// A client's PREPARE, traced when it asks or the trace probability draws it.
    pub async fn prepare_traced(
        &self,
        keyspace: Option<&str>,
        text: &str,
        tracing: Tracing,
    ) -> CqlResult<Outcome> {
        let session = self.tracer.begin(tracing, || TraceRequest::prepare(text));
        let trace = session.as_ref().map(|s| s.trace());
        let result = self.prepare_with(keyspace, text, trace.as_deref()).await;
        self.tracer.finish(session, result)
    }

    async fn prepare_with(
        &self,
        keyspace: Option<&str>,
        text: &str,
        trace: Option<&Trace>,
    ) -> CqlResult<Outcome> {
        let (outcome, new) = self.prepare_cached(keyspace, text, trace)?;
        if let (Some(id), QueryResult::Prepared(_)) = (new, &outcome.result) {
            let schema = self.schema().schema.clone();
            self.node_state
                .save_prepared(&schema, &id, keyspace, text)
                .await?;
        }
        Ok(outcome)
    }

    /// Re-prepares the statements saved in `system.prepared_statements` before a restart, so
    /// clients keep their ids.
    async fn reload_prepared(&self) {
        let saved = match self.node_state.saved_prepared(&self.schema().schema) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("cannot read saved prepared statements: {e}");
                return;
            }
        };
        let count = saved.len();
        for (keyspace, query) in saved {
            if let Err(e) = self.prepare_cached(keyspace.as_deref(), &query, None) {
                tracing::debug!("dropping saved prepared statement {query:?}: {e}");
            }
        }
        tracing::info!(
            "{} prepared statements reloaded",
            self.prepared.read().len().min(count)
        );
    }

    /// Prepares into the cache; also returns the id when the statement was not cached yet.
    fn prepare_cached(
        &self,
        keyspace: Option<&str>,
        text: &str,
        trace: Option<&Trace>,
    ) -> CqlResult<(Outcome, Option<Bytes>)> {
        let parsed = parse(text, trace)?;
        let scope = if fully_qualified(&parsed.statement) {
            None
        } else {
            keyspace
        };
        let id = statement_id(scope, text);
        let analysed_with = self.schema();
        if let Some(p) = self.prepared.read().get(&id) {
            if names_live_tables(&p.plan, &analysed_with.schema) {
                return Ok((QueryResult::Prepared(p.result.clone()).into(), None));
            }
        }
        let mut binder = Binder::new(parsed.bind_marker_count());
        let plan = self.analyze(&parsed.statement, keyspace, &mut binder)?;
        let binds = binder.finish();
        let result_columns = match &plan {
            Plan::Select(s) => s.result_specs().to_vec(),
            _ => Vec::new(),
        };
        let (ks, table) = plan_table(&plan);
        let result = Prepared {
            id: id.clone(),
            result_metadata_id: metadata_id(&result_columns),
            bind_columns: binds.specs.clone(),
            pk_indexes: pk_indexes(&plan),
            result_columns,
        };
        let stmt = PreparedStatement {
            query: text.to_string(),
            plan: Arc::new(plan),
            binds,
            keyspace: ks,
            table,
            result: result.clone(),
        };
        let mut cache = self.prepared.write();
        if !Arc::ptr_eq(&analysed_with, &self.state.load()) {
            // A schema change since the analysis: its invalidation may have run already.
            drop(cache);
            return self.prepare_cached(keyspace, text, trace);
        }
        cache.insert(id.clone(), Arc::new(stmt));
        Ok((QueryResult::Prepared(result).into(), Some(id)))
    }

    pub async fn execute(
        &self,
        id: &[u8],
        result_metadata_id: Option<&[u8]>,
        options: QueryOptions,
    ) -> CqlResult<Outcome> {
        let stmt = self.lookup(id)?;
        self.execute_with(&stmt, result_metadata_id, options, None)
            .await
    }

    /// A client's EXECUTE, traced when it asks or the trace probability draws it.
    pub async fn execute_traced(
        &self,
        id: &[u8],
        result_metadata_id: Option<&[u8]>,
        options: QueryOptions,
        tracing: Tracing,
    ) -> CqlResult<Outcome> {
        let stmt = self.lookup(id)?;
        let describe =
            || TraceRequest::statement("Execute CQL3 prepared query", &stmt.query, &options);
        let session = self.tracer.begin(tracing, describe);
        let trace = session.as_ref().map(|s| s.trace());
        let result = self
            .execute_with(&stmt, result_metadata_id, options, trace)
            .await;
        self.tracer.finish(session, result)
    }

    async fn execute_with(
        &self,
        stmt: &PreparedStatement,
        _result_metadata_id: Option<&[u8]>,
        mut options: QueryOptions,
        trace: Option<Arc<Trace>>,
    ) -> CqlResult<Outcome> {
        let values = stmt.binds.positional(std::mem::take(&mut options.values))?;
        let ctx = ExecContext::at(&options, values, self.now_micros()).traced(trace);
        self.run(&stmt.plan, stmt.keyspace.as_deref(), &ctx).await
    }

    pub async fn batch(&self, keyspace: Option<&str>, request: BatchRequest) -> CqlResult<Outcome> {
        batch::execute_request(self, keyspace, request, None).await
    }

    /// A client's BATCH, traced when it asks or the trace probability draws it.
    pub async fn batch_traced(
        &self,
        keyspace: Option<&str>,
        request: BatchRequest,
        tracing: Tracing,
    ) -> CqlResult<Outcome> {
        let describe = || batch::trace_request(&request);
        let session = self.tracer.begin(tracing, describe);
        let trace = session.as_ref().map(|s| s.trace());
        let result = batch::execute_request(self, keyspace, request, trace).await;
        self.tracer.finish(session, result)
    }

    /// The prepared statement `id`; one naming a table dropped since it was prepared (a
    /// BATCH or TRUNCATE of a table dropped and created again) is forgotten, so the driver
    /// prepares it again against the current schema.
    pub(crate) fn lookup(&self, id: &[u8]) -> CqlResult<Arc<PreparedStatement>> {
        let found = self.prepared.read().get(id).cloned();
        let state = self.schema();
        let found = match found {
            Some(p) if !names_live_tables(&p.plan, &state.schema) => {
                self.prepared.write().remove(id);
                None
            }
            other => other,
        };
        found.ok_or_else(|| CqlError::Unprepared {
            message: format!(
                "Prepared query with ID {} not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)",
                hex(id)
            ),
            id: Bytes::copy_from_slice(id),
        })
    }

    pub(crate) fn analyze_text(
        &self,
        text: &str,
        keyspace: Option<&str>,
        trace: Option<&Trace>,
    ) -> CqlResult<(Plan, BindSpecs)> {
        let parsed = parse(text, trace)?;
        let mut binder = Binder::new(parsed.bind_marker_count());
        let plan = self.analyze(&parsed.statement, keyspace, &mut binder)?;
        Ok((plan, binder.finish()))
    }

    pub(crate) fn analyze(
        &self,
        stmt: &Statement,
        keyspace: Option<&str>,
        binder: &mut Binder,
    ) -> CqlResult<Plan> {
        let state = self.schema();
        Ok(match stmt {
            Statement::Select(s) => {
                let table = table(&state.schema, &s.table, keyspace)?;
                guardrails::reads::statement(&self.limits(), &table, s)?;
                let s = virtual_tables::implicit_filtering(&table, s);
                Plan::Select(SelectPlan::analyze(table, &s, binder)?)
            }
            Statement::Insert(s) => Plan::Modify(ModifyPlan::insert(
                writable(&state.schema, &s.table, keyspace)?,
                s,
                binder,
            )?),
            Statement::Update(s) => {
                let table = writable(&state.schema, &s.table, keyspace)?;
                guardrails::writes::update_statement(&self.limits(), &table, s)?;
                Plan::Modify(ModifyPlan::update(table, s, binder)?)
            }
            Statement::Delete(s) => {
                let table = writable(&state.schema, &s.table, keyspace)?;
                guardrails::writes::delete_statement(&self.limits(), &table, s)?;
                Plan::Modify(ModifyPlan::delete(table, s, binder)?)
            }
            Statement::Batch(b) => {
                Plan::Batch(batch::BatchPlan::analyze(self, b, keyspace, binder)?)
            }
            Statement::Use(ks) => Plan::Use(ks.clone()),
            Statement::Truncate(name) => {
                let t = table(&state.schema, name, keyspace)?;
                virtual_tables::reject(&t, "Truncation")?;
                Plan::Truncate(writable(&state.schema, name, keyspace)?)
            }
            Statement::Describe(d) => Plan::Describe(d.clone()),
            Statement::CreateKeyspace(_)
            | Statement::AlterKeyspace(_)
            | Statement::DropKeyspace(_)
            | Statement::CreateTable(_)
            | Statement::AlterTable(_)
            | Statement::DropTable(_)
            | Statement::CreateType(_)
            | Statement::AlterType(_)
            | Statement::DropType(_) => Plan::Ddl(stmt.clone()),
            other => {
                return Err(CqlError::invalid(format!(
                    "{} is not supported yet",
                    statement_name(other)
                )))
            }
        })
    }

    pub(crate) async fn run(
        &self,
        plan: &Plan,
        keyspace: Option<&str>,
        ctx: &ExecContext,
    ) -> CqlResult<Outcome> {
        let result = match plan {
            Plan::Select(s) => {
                let state = self.schema();
                let limits = self.tombstone_limits();
                let table = &s.layout.table;
                let source = self
                    .virtual_tables
                    .source(
                        table,
                        &state.schema,
                        &self.coordinator,
                        self.node_state.as_ref(),
                    )?
                    .at(ctx.consistency);
                guardrails::reads::execution(&self.limits(), s, ctx)?;
                let (rows, tombstones) = s.execute(ctx, source.reader(), &limits).await?;
                let mut warnings = ctx.warnings.take();
                warnings.extend(tombstones);
                return Ok(Outcome {
                    result: QueryResult::Rows(rows),
                    warnings,
                    tracing_id: None,
                });
            }
            Plan::Modify(m) if m.conditions().is_some() => {
                QueryResult::Rows(crate::cas::execute(self, &[(m, ctx)], false).await?)
            }
            Plan::Modify(m) => {
                batch::apply(self, std::slice::from_ref(m), ctx, None, None).await?;
                QueryResult::Void
            }
            Plan::Batch(b) => b.execute(self, ctx).await?,
            Plan::Use(ks) => {
                let exists = self.schema().schema.keyspace(ks).is_some();
                if !exists && !virtual_tables::is_virtual(ks) {
                    return Err(CqlError::invalid(format!("Keyspace '{ks}' does not exist")));
                }
                QueryResult::SetKeyspace(ks.clone())
            }
            // Schema changes and truncation are rare and their futures large: boxed, they
            // do not widen the future of every request (it is copied into each request task).
            Plan::Ddl(stmt) => Box::pin(self.apply_ddl(stmt, keyspace, ctx)).await?,
            Plan::Truncate(t) => {
                self.limits()
                    .drop_truncate_table()
                    .ensure_enabled(&ctx.notice())?;
                Box::pin(self.node_state.truncate(t)).await?;
                QueryResult::Void
            }
            Plan::Describe(d) => QueryResult::Rows(describe::execute(
                &self.schema().schema,
                d,
                keyspace,
                ctx,
                &self.node,
            )?),
        };
        Ok(Outcome {
            result,
            warnings: ctx.warnings.take(),
            tracing_id: None,
        })
    }

    /// The tombstone thresholds reads apply, and how this node names itself in failures.
    fn tombstone_limits(&self) -> TombstoneLimits {
        TombstoneLimits {
            thresholds: self.node_state.tombstone_thresholds(),
            address: self.node.listen_address,
            storage_port: self.node.storage_port,
        }
    }

    /// Drops prepared statements on a changed table or keyspace; drivers re-prepare them.
    pub(crate) fn invalidate(&self, change: &SchemaChange) {
        self.prepared.write().retain(|_, p| {
            let same_ks = p.keyspace.as_deref() == Some(change.keyspace.as_str());
            let same_table =
                change.name.is_empty() || p.table.as_deref() == Some(change.name.as_str());
            !(same_ks && same_table)
        });
    }
}

pub(crate) fn table(
    schema: &Schema,
    name: &cql::ast::QualifiedName,
    session: Option<&str>,
) -> CqlResult<Arc<TableMetadata>> {
    let ks = ddl::resolve_keyspace(name, session)?;
    if let Some(found) = virtual_tables::lookup(&ks, &name.name)? {
        return Ok(found);
    }
    let keyspace = schema
        .keyspace(&ks)
        .ok_or_else(|| CqlError::invalid(format!("keyspace {ks} does not exist")))?;
    keyspace
        .table(&name.name)
        .cloned()
        .ok_or_else(|| CqlError::invalid(format!("table {} does not exist", name.name)))
}

fn writable(
    schema: &Schema,
    name: &cql::ast::QualifiedName,
    session: Option<&str>,
) -> CqlResult<Arc<TableMetadata>> {
    let t = table(schema, name, session)?;
    virtual_tables::reject(&t, "Modification")?;
    if LOCAL_SYSTEM.contains(&t.keyspace.as_str()) {
        return Err(CqlError::Unauthorized(format!(
            "{} keyspace is not user-modifiable.",
            t.keyspace
        )));
    }
    Ok(t)
}

/// Cassandra's prepared id: the MD5 of the query text, prefixed by the session keyspace
/// unless every table in the statement names its keyspace.
fn statement_id(keyspace: Option<&str>, text: &str) -> Bytes {
    let key = format!("{}{}", keyspace.unwrap_or(""), text);
    Bytes::copy_from_slice(&md5(key.as_bytes()))
}

/// Parses `text`, tracing Cassandra's "Parsing <query>" and "Preparing statement".
fn parse(text: &str, trace_to: Option<&Trace>) -> CqlResult<cql::ParsedStatement> {
    trace(trace_to, || format!("Parsing {text}"));
    let parsed = cql::parse(text).map_err(|e| CqlError::Syntax(e.to_string()))?;
    trace(trace_to, || "Preparing statement".into());
    Ok(parsed)
}

fn fully_qualified(stmt: &Statement) -> bool {
    match stmt {
        Statement::Select(s) => s.table.keyspace.is_some(),
        Statement::Insert(s) => s.table.keyspace.is_some(),
        Statement::Update(s) => s.table.keyspace.is_some(),
        Statement::Delete(s) => s.table.keyspace.is_some(),
        Statement::Batch(b) => b.statements.iter().all(fully_qualified),
        _ => false,
    }
}

fn metadata_id(columns: &[ColumnSpec]) -> Bytes {
    let mut text = String::new();
    for c in columns {
        text.push_str(&format!(
            "{}.{}.{}:{};",
            c.keyspace,
            c.table,
            c.name,
            c.ty.cql_name()
        ));
    }
    Bytes::copy_from_slice(name_uuid(text.as_bytes()).as_bytes())
}

fn plan_table(plan: &Plan) -> (Option<String>, Option<String>) {
    let t = match plan {
        Plan::Select(s) => Some(&s.layout.table),
        Plan::Modify(m) => Some(m.table()),
        _ => None,
    };
    (t.map(|t| t.keyspace.clone()), t.map(|t| t.name.clone()))
}

/// Whether every table `plan` reads or writes is still in `schema` under the same id.
fn names_live_tables(plan: &Plan, schema: &Schema) -> bool {
    let live = |t: &TableMetadata| {
        schema.table_by_id(t.id).is_some() || virtual_tables::is_virtual(&t.keyspace)
    };
    match plan {
        Plan::Select(s) => live(&s.layout.table),
        Plan::Modify(m) => live(m.table()),
        Plan::Batch(b) => b.statements().all(|m| live(m.table())),
        Plan::Truncate(t) => live(t),
        Plan::Use(_) | Plan::Ddl(_) | Plan::Describe(_) => true,
    }
}

/// Positions of the partition key's bind markers, in key order, when each component is a
/// single `= ?`.
fn pk_indexes(plan: &Plan) -> Vec<u16> {
    let selection = match plan {
        Plan::Select(s) => s.partition(),
        Plan::Modify(m) => m.partition(),
        _ => None,
    };
    let Some(PartitionSelection::Keys(values)) = selection else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(values.len());
    for v in values {
        match v {
            Values::Eq(crate::operand::Operand::Bind(i)) => out.push(*i as u16),
            _ => return Vec::new(),
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::from("0x");
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

fn statement_name(stmt: &Statement) -> &'static str {
    match stmt {
        Statement::CreateIndex(_) | Statement::DropIndex(_) => "Secondary indexes",
        Statement::CreateMaterializedView(_)
        | Statement::AlterMaterializedView(_)
        | Statement::DropMaterializedView(_) => "Materialized views",
        Statement::CreateTrigger(_) | Statement::DropTrigger(_) => "Triggers",
        Statement::CreateFunction(_)
        | Statement::DropFunction(_)
        | Statement::CreateAggregate(_)
        | Statement::DropAggregate(_) => "User-defined functions",
        Statement::AlterType(_) => "ALTER TYPE",
        _ => "Authentication and authorization",
    }
}
