//! Schema changes through the cluster metadata log. A schema statement is planned against this
//! node's schema and committed to the log as the changed keyspace's definition, compare-and-set
//! on the version the plan saw; the log's schema is then applied on every node, this one
//! included, by [`QueryProcessor::sync_schema`]: the node's state told (tables registered in or
//! dropped from storage, the keyspace's rows written to the local `system_schema` with this
//! node's timestamps: [`NodeState`](crate::NodeState)), the schema swapped, clients told. The log orders every change, so nodes never disagree.
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cql::ast::Statement;
use metadata::{ClusterMetadata, MetadataError, MetadataService, Transformation};
use schema::{decode_keyspace, encode_keyspace, KeyspaceMetadata, Schema, TableMetadata};
use tokio::sync::watch;
use types::result::{QueryResult, SchemaChange, SchemaChangeKind, SchemaChangeTarget};
use types::{Consistency, CqlError, CqlResult};

use crate::ddl::{self, Effect};
use crate::exec::{unique_micros, ExecContext};
use crate::guardrails;
use crate::processor::{QueryProcessor, SchemaState};

/// How long a statement keeps planning again while other schema changes win the race to the
/// log (each loss means another change was committed, so the cluster progresses); several
/// clients creating tables in one keyspace at once make a statement lose a few times in a row.
const CONFLICT_WAIT: Duration = Duration::from_secs(10);

/// The longest random pause after a lost race, so that contenders stop colliding in step.
const CONFLICT_JITTER_MICROS: u64 = 20_000;

/// How long a statement waits for the metadata group to commit it, or to regain a majority (a
/// leader being elected after a node died or came back), before it fails as Unavailable —
/// well within drivers' request timeouts.
const QUORUM_WAIT: Duration = Duration::from_secs(5);

/// The pause between attempts while the metadata group has no majority.
const QUORUM_RETRY: Duration = Duration::from_millis(200);

impl QueryProcessor {
    /// Connects the node to the cluster metadata log: schema statements commit through it, and
    /// every schema the log reaches is applied here (a task that runs while the node does; see
    /// [`schema_follow`](crate::schema_follow)).
    pub fn attach_metadata(self: &Arc<Self>, metadata: Arc<MetadataService>) {
        let states = metadata.watch();
        if self.metadata.set(metadata).is_err() {
            tracing::error!("the cluster metadata log is already attached");
            return;
        }
        self.follow_metadata(states);
    }

    /// The cluster metadata log, once attached.
    pub fn metadata(&self) -> Option<&Arc<MetadataService>> {
        self.metadata.get()
    }

    /// The epochs of the cluster metadata this node's schema has caught up with.
    pub fn schema_epochs(&self) -> watch::Receiver<u64> {
        self.synced.subscribe()
    }

    /// Runs a schema statement: plans it, commits the changed keyspace to the metadata log and
    /// waits until this node has applied it; plans again when another change won the race.
    /// Refused at once while this node is behind the log (it could not apply what it commits).
    pub(crate) async fn apply_ddl(
        &self,
        stmt: &Statement,
        keyspace: Option<&str>,
        ctx: &ExecContext,
    ) -> CqlResult<QueryResult> {
        let metadata = self.metadata.get().ok_or_else(|| {
            CqlError::Server("schema changes are not available while the node starts".into())
        })?;
        self.check_caught_up()?;
        let started = tokio::time::Instant::now();
        let deadline = started + QUORUM_WAIT;
        while started.elapsed() < CONFLICT_WAIT {
            let state = self.schema();
            let (limits, notice) = (self.limits(), ctx.notice());
            guardrails::schema::before(&limits, stmt, &state.schema, keyspace, &notice)?;
            let datacenters = self.coordinator.topology().ring().datacenters();
            let Some(outcome) = ddl::plan(stmt, keyspace, &state.schema, &datacenters)? else {
                return Err(CqlError::invalid("not a schema statement"));
            };
            guardrails::schema::after(&limits, stmt, &outcome, &notice)?;
            self.check_table_options(&state.schema, &outcome.effect)?;
            let result = match &outcome.change {
                Some(c) => QueryResult::SchemaChange(c.clone()),
                None => QueryResult::Void,
            };
            let Some(change) = transformation(&state, outcome.effect) else {
                return Ok(result);
            };
            let limit = deadline
                .saturating_duration_since(tokio::time::Instant::now())
                .max(QUORUM_RETRY);
            match metadata.commit_within(change, limit).await {
                Ok(epoch) => {
                    self.await_synced(epoch).await?;
                    self.await_agreement().await;
                    return Ok(result);
                }
                Err(MetadataError::Conflict { current_epoch }) => {
                    self.await_synced(current_epoch).await?;
                    let jitter = unique_micros().unsigned_abs() % CONFLICT_JITTER_MICROS;
                    tokio::time::sleep(Duration::from_micros(jitter)).await;
                }
                Err(MetadataError::NoQuorum(_))
                    if tokio::time::Instant::now() + QUORUM_RETRY < deadline =>
                {
                    tokio::time::sleep(QUORUM_RETRY).await;
                }
                Err(e) => return Err(self.metadata_error(metadata, e)),
            }
        }
        Err(CqlError::Server(
            "the schema kept changing under this statement; try again".into(),
        ))
    }

    /// Sets how schema changes wait for the other live nodes to apply them before answering.
    pub fn set_agreement_wait(&self, wait: crate::processor::AgreementWait) {
        if self.agreement.set(wait).is_err() {
            tracing::error!("the schema agreement wait is already set");
        }
    }

    /// Waits until the other live nodes have applied this node's schema (bounded by the wait
    /// itself). Drivers check agreement on the node of their control connection: were it still
    /// on the previous schema, with gossip not yet carrying the change either, every version it
    /// reads would agree on the old one, and the driver's next statement could reach a node
    /// without the change.
    async fn await_agreement(&self) {
        if let Some(wait) = self.agreement.get() {
            wait(self.schema().schema.version()).await;
        }
    }

    /// A metadata failure as the client sees it: without a majority of the metadata group, a
    /// schema change is Unavailable at QUORUM (drivers try another node), as a write would be.
    fn metadata_error(&self, metadata: &MetadataService, e: MetadataError) -> CqlError {
        match e {
            MetadataError::NoQuorum(reason) => {
                let status = metadata.status();
                let topology = self.coordinator.topology();
                let alive = status
                    .voters
                    .iter()
                    .filter_map(|id| status.members.get(id))
                    .filter(|addr| topology.is_alive(addr.ip()))
                    .count();
                CqlError::Unavailable {
                    message: format!(
                        "Cannot achieve consistency level QUORUM for a schema change: {reason}"
                    ),
                    consistency: Consistency::Quorum,
                    required: (status.voters.len() / 2 + 1) as i32,
                    alive: alive as i32,
                }
            }
            MetadataError::Rejected(reason) => CqlError::Config(reason),
            other => CqlError::Server(other.to_string()),
        }
    }

    /// Makes this node's schema the log's at `meta`: every keyspace whose definition differs is
    /// saved, every user keyspace the log lacks is dropped.
    pub(crate) async fn sync_schema(&self, meta: &ClusterMetadata) -> CqlResult<()> {
        let _guard = self.ddl_lock.lock().await;
        let state = self.schema();
        let mut wanted: BTreeMap<String, KeyspaceMetadata> = BTreeMap::new();
        for (name, entry) in &meta.schema {
            let known = state
                .schema
                .keyspace(name)
                .filter(|_| state.version(name) == Some(entry.version));
            let ks = match known {
                Some(ks) => ks.as_ref().clone(),
                None => decode_keyspace(&entry.definition).map_err(ddl::schema_error)?,
            };
            wanted.insert(name.clone(), ks);
        }
        let mut schema = state.schema.as_ref().clone();
        let mut changes = Vec::new();
        for ks in wanted.values() {
            let before = schema.keyspace(&ks.name).cloned();
            if before.as_deref() != Some(ks) {
                self.node_state.save_keyspace(&schema, ks).await?;
                changes.extend(keyspace_changes(before.as_deref(), Some(ks)));
                schema = schema.with_keyspace(ks.clone());
            }
        }
        let dropped: Vec<Arc<KeyspaceMetadata>> = schema
            .keyspaces()
            .values()
            .filter(|k| !schema::is_system_keyspace(&k.name) && !wanted.contains_key(&k.name))
            .cloned()
            .collect();
        for ks in dropped {
            self.node_state.drop_keyspace(&schema, &ks).await?;
            changes.extend(keyspace_changes(Some(&ks), None));
            schema = schema.without_keyspace(&ks.name);
        }
        let versions = meta
            .schema
            .iter()
            .map(|(name, entry)| (name.clone(), entry.version))
            .collect();
        self.install(schema, versions, &changes).await?;
        let _ = self.synced.send_replace(meta.epoch);
        Ok(())
    }

    /// Table options this node cannot hold (a compaction sub-option's value, a compression
    /// setting) are the statement's configuration error, as in Cassandra, found before the
    /// change is committed: every node has to be able to apply what the log holds.
    fn check_table_options(&self, schema: &Schema, effect: &Effect) -> CqlResult<()> {
        let Effect::Save(ks) = effect else {
            return Ok(());
        };
        for (t, _) in changed_tables(schema, ks) {
            self.node_state.check_table(t).map_err(CqlError::Config)?;
        }
        Ok(())
    }

    /// Swaps in the new schema, records its version and tells clients of each change.
    async fn install(
        &self,
        schema: Schema,
        versions: BTreeMap<String, u64>,
        changes: &[SchemaChange],
    ) -> CqlResult<()> {
        if !changes.is_empty() {
            self.node_state.save_schema_version(&schema).await?;
        }
        let state = SchemaState::new(schema).with_versions(versions);
        // The coordinator first: a request that sees the new schema replicates by it.
        self.coordinator.install_schema(state.schema.clone());
        self.state.store(Arc::new(state));
        for change in changes {
            self.invalidate(change);
            let _ = self.events.send(change.clone());
        }
        Ok(())
    }
}

/// The tables of `ks` a node has to register (`true`: new) or alter (changed options) to go
/// from `schema` to `ks`.
pub fn changed_tables<'a>(
    schema: &'a Schema,
    ks: &'a KeyspaceMetadata,
) -> impl Iterator<Item = (&'a Arc<TableMetadata>, bool)> + 'a {
    let before = schema.keyspace(&ks.name);
    ks.tables.values().filter_map(move |t| {
        let existing = before
            .and_then(|b| b.tables.get(&t.name))
            .filter(|b| b.id == t.id);
        match existing {
            None => Some((t, true)),
            Some(b) if b.options != t.options || b.dropped_columns != t.dropped_columns => {
                Some((t, false))
            }
            Some(_) => None,
        }
    })
}

/// The log entry for a planned schema change, `None` when it changes nothing.
fn transformation(state: &SchemaState, effect: Effect) -> Option<Transformation> {
    match effect {
        Effect::None => None,
        Effect::Save(ks) => Some(Transformation::SaveKeyspace {
            expect: state.version(&ks.name),
            definition: encode_keyspace(&ks),
            name: ks.name,
        }),
        Effect::DropKeyspace(name) => Some(Transformation::DropKeyspace {
            expect: state.version(&name).unwrap_or(0),
            name,
        }),
    }
}

/// The SCHEMA_CHANGE events that turning `before` into `after` sends, as Cassandra sends them:
/// the keyspace when it is created, dropped or its options change, then each table and type
/// created, dropped or changed.
pub(crate) fn keyspace_changes(
    before: Option<&KeyspaceMetadata>,
    after: Option<&KeyspaceMetadata>,
) -> Vec<SchemaChange> {
    let name = after.or(before).map(|k| k.name.clone()).unwrap_or_default();
    let event = |kind, target, object: &str| SchemaChange {
        kind,
        target,
        keyspace: name.clone(),
        name: object.to_string(),
        arg_types: Vec::new(),
    };
    let (before, after) = match (before, after) {
        (None, None) => return Vec::new(),
        (None, Some(_)) => {
            return vec![event(
                SchemaChangeKind::Created,
                SchemaChangeTarget::Keyspace,
                "",
            )]
        }
        (Some(_), None) => {
            return vec![event(
                SchemaChangeKind::Dropped,
                SchemaChangeTarget::Keyspace,
                "",
            )]
        }
        (Some(b), Some(a)) => (b, a),
    };
    let mut changes = Vec::new();
    if before.replication != after.replication || before.durable_writes != after.durable_writes {
        changes.push(event(
            SchemaChangeKind::Updated,
            SchemaChangeTarget::Keyspace,
            "",
        ));
    }
    let types = diff(&before.types, &after.types, |b, a| b == a);
    for (kind, name) in types {
        changes.push(event(kind, SchemaChangeTarget::Type, &name));
    }
    let tables = diff(&before.tables, &after.tables, |b, a| b == a);
    for (kind, name) in tables {
        changes.push(event(kind, SchemaChangeTarget::Table, &name));
    }
    changes
}

/// The entries created, dropped or changed between two maps, in name order.
fn diff<V>(
    before: &BTreeMap<String, V>,
    after: &BTreeMap<String, V>,
    same: impl Fn(&V, &V) -> bool,
) -> Vec<(SchemaChangeKind, String)> {
    let mut out = Vec::new();
    for (name, b) in before {
        match after.get(name) {
            None => out.push((SchemaChangeKind::Dropped, name.clone())),
            Some(a) if !same(b, a) => out.push((SchemaChangeKind::Updated, name.clone())),
            Some(_) => {}
        }
    }
    for name in after.keys().filter(|n| !before.contains_key(*n)) {
        out.push((SchemaChangeKind::Created, name.clone()));
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap as Map;

    fn keyspace(rf: &str) -> KeyspaceMetadata {
        let replication = Map::from([
            (
                "class".to_string(),
                "org.apache.cassandra.locator.SimpleStrategy".to_string(),
            ),
            ("replication_factor".to_string(), rf.to_string()),
        ]);
        KeyspaceMetadata::new("ks", replication, true)
    }

    fn described(changes: &[SchemaChange]) -> Vec<String> {
        changes
            .iter()
            .map(|c| format!("{:?} {:?} {}.{}", c.kind, c.target, c.keyspace, c.name))
            .collect()
    }

    #[test]
    fn keyspace_events_follow_the_change() {
        let ks = keyspace("1");
        assert_eq!(
            described(&keyspace_changes(None, Some(&ks))),
            ["Created Keyspace ks."]
        );
        assert_eq!(
            described(&keyspace_changes(Some(&ks), None)),
            ["Dropped Keyspace ks."]
        );
        assert!(keyspace_changes(Some(&ks), Some(&ks)).is_empty());
        assert_eq!(
            described(&keyspace_changes(Some(&ks), Some(&keyspace("3")))),
            ["Updated Keyspace ks."]
        );
    }

    #[test]
    fn map_differences_name_each_entry_once() {
        let before = Map::from([("a".to_string(), 1), ("b".to_string(), 2)]);
        let after = Map::from([("b".to_string(), 3), ("c".to_string(), 4)]);
        let out = diff(&before, &after, |x, y| x == y);
        assert_eq!(
            out,
            vec![
                (SchemaChangeKind::Dropped, "a".to_string()),
                (SchemaChangeKind::Updated, "b".to_string()),
                (SchemaChangeKind::Created, "c".to_string()),
            ]
        );
    }
}
