//! Keyspace -> replication strategy: the query layer hands the coordinator each schema it
//! installs, and the coordinator computes every keyspace's strategy then, once per schema, so
//! that a request's lookup is one map read. A keyspace the schema does not have, or whose
//! options are not understood, replicates as LocalStrategy, as before the coordinator has a
//! schema.
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use mutation::TableId;
use ring::ReplicationStrategy;
use schema::{KeyspaceMetadata, Schema};

/// The strategies of one schema's keyspaces.
struct Computed {
    schema: Arc<Schema>,
    keyspaces: HashMap<String, Arc<ReplicationStrategy>>,
}

/// Every keyspace's strategy under the last schema installed.
#[derive(Default)]
pub(crate) struct Strategies {
    computed: ArcSwapOption<Computed>,
}

impl Strategies {
    /// Replicates each keyspace as `schema` says from now on.
    pub fn install(&self, schema: Arc<Schema>) {
        let keyspaces = schema
            .keyspaces()
            .iter()
            .map(|(name, ks)| (name.clone(), Arc::new(strategy_of(name, ks))))
            .collect();
        self.computed
            .store(Some(Arc::new(Computed { schema, keyspaces })));
    }

    /// The strategy of `keyspace`.
    pub fn of_keyspace(&self, keyspace: &str) -> Arc<ReplicationStrategy> {
        self.computed
            .load()
            .as_ref()
            .and_then(|c| c.keyspaces.get(keyspace).cloned())
            .unwrap_or_else(|| Arc::new(ReplicationStrategy::Local))
    }

    /// Whether a schema was installed.
    pub fn is_installed(&self) -> bool {
        self.computed.load().is_some()
    }

    /// The strategy of `table`'s keyspace; `None` for a table the schema does not have.
    pub fn of_table(&self, table: TableId) -> Option<Arc<ReplicationStrategy>> {
        let computed = self.computed.load();
        let computed = computed.as_ref()?;
        let keyspace = &computed.schema.table_by_id(table.0)?.keyspace;
        computed.keyspaces.get(keyspace).cloned()
    }
}

/// How keyspace `name` replicates (LocalStrategy when its options are not understood).
fn strategy_of(name: &str, keyspace: &KeyspaceMetadata) -> ReplicationStrategy {
    ReplicationStrategy::from_options(name, &keyspace.replication, &BTreeSet::new())
        .unwrap_or(ReplicationStrategy::Local)
}

/// A schema of SimpleStrategy keyspaces, each `(name, replication factor, its tables)`, a
/// table a single blob key, for tests.
#[cfg(test)]
pub(crate) fn simple_keyspaces(keyspaces: &[(&str, usize, &[TableId])]) -> Arc<Schema> {
    Arc::new(Schema::new(keyspaces.iter().map(|&(name, rf, tables)| {
        let keyspace = tables
            .iter()
            .fold(keyspace(name, rf), |ks, &id| ks.with_table(table(name, id)));
        Arc::new(keyspace)
    })))
}

#[cfg(test)]
fn keyspace(name: &str, rf: usize) -> KeyspaceMetadata {
    let replication = [
        ("class".to_string(), "SimpleStrategy".to_string()),
        ("replication_factor".to_string(), rf.to_string()),
    ];
    KeyspaceMetadata::new(name, replication.into(), true)
}

#[cfg(test)]
fn table(keyspace: &str, id: TableId) -> schema::TableMetadata {
    let key = schema::ColumnMetadata {
        name: "k".into(),
        ty: types::CqlType::Native(types::NativeType::Blob),
        kind: schema::ColumnKind::PartitionKey,
        position: 0,
        order: schema::ClusteringOrder::Asc,
    };
    let options = schema::TableOptions::default();
    let name = format!("t{}", id.0.as_u128());
    schema::TableMetadata::new(keyspace, &name, id.0, vec![key], options)
        .unwrap_or_else(|e| panic!("a test table: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_replicates_as_its_keyspace() {
        let strategies = Strategies::default();
        let id = TableId(uuid::Uuid::from_u128(5));
        strategies.install(simple_keyspaces(&[("ks", 2, &[id]), ("other", 1, &[])]));
        let rf2 = ReplicationStrategy::Simple { rf: 2 };
        assert_eq!(strategies.of_table(id).as_deref(), Some(&rf2));
        assert_eq!(strategies.of_table(TableId(uuid::Uuid::from_u128(6))), None);
    }

    #[test]
    fn strategies_follow_the_installed_schema() {
        let strategies = Strategies::default();
        assert!(!strategies.is_installed());
        assert_eq!(*strategies.of_keyspace("ks"), ReplicationStrategy::Local);
        let schema = Arc::new(Schema::new([Arc::new(keyspace("ks", 3))]));
        strategies.install(schema.clone());
        assert!(strategies.is_installed());
        assert_eq!(
            *strategies.of_keyspace("ks"),
            ReplicationStrategy::Simple { rf: 3 }
        );
        assert_eq!(*strategies.of_keyspace("gone"), ReplicationStrategy::Local);
        strategies.install(Arc::new(schema.with_keyspace(keyspace("ks", 2))));
        assert_eq!(
            *strategies.of_keyspace("ks"),
            ReplicationStrategy::Simple { rf: 2 }
        );
    }
}
