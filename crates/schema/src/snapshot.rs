//! `Schema`: an immutable snapshot of every keyspace, with lookups by name and table id and
//! a version UUID derived from the content.
use crate::keyspace::KeyspaceMetadata;
use crate::md5::name_uuid;
use crate::rows::keyspace_rows;
use crate::table::TableMetadata;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use uuid::Uuid;

/// A schema snapshot. Cheap to share; replace the whole snapshot to change schema.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    keyspaces: BTreeMap<String, Arc<KeyspaceMetadata>>,
    by_id: HashMap<Uuid, Arc<TableMetadata>>,
    version: Uuid,
}

impl Schema {
    /// A snapshot of `keyspaces`; the version is computed here.
    pub fn new(keyspaces: impl IntoIterator<Item = Arc<KeyspaceMetadata>>) -> Schema {
        let keyspaces: BTreeMap<String, Arc<KeyspaceMetadata>> = keyspaces
            .into_iter()
            .map(|ks| (ks.name.clone(), ks))
            .collect();
        let by_id = keyspaces
            .values()
            .flat_map(|ks| ks.tables.values())
            .map(|table| (table.id, Arc::clone(table)))
            .collect();
        let version = content_version(&keyspaces);
        Schema {
            keyspaces,
            by_id,
            version,
        }
    }

    /// The same snapshot with `keyspace` added or replaced.
    pub fn with_keyspace(&self, keyspace: KeyspaceMetadata) -> Schema {
        let mut all = self.keyspaces.clone();
        all.insert(keyspace.name.clone(), Arc::new(keyspace));
        Schema::new(all.into_values())
    }

    /// The same snapshot without the keyspace `name`.
    pub fn without_keyspace(&self, name: &str) -> Schema {
        let mut all = self.keyspaces.clone();
        all.remove(name);
        Schema::new(all.into_values())
    }

    pub fn keyspaces(&self) -> &BTreeMap<String, Arc<KeyspaceMetadata>> {
        &self.keyspaces
    }

    pub fn keyspace(&self, name: &str) -> Option<&Arc<KeyspaceMetadata>> {
        self.keyspaces.get(name)
    }

    pub fn table(&self, keyspace: &str, name: &str) -> Option<&Arc<TableMetadata>> {
        self.keyspace(keyspace)?.tables.get(name)
    }

    pub fn table_by_id(&self, id: Uuid) -> Option<&Arc<TableMetadata>> {
        self.by_id.get(&id)
    }

    /// A name-based UUID of the snapshot's schema rows: equal content, equal version.
    pub fn version(&self) -> Uuid {
        self.version
    }
}

fn content_version(keyspaces: &BTreeMap<String, Arc<KeyspaceMetadata>>) -> Uuid {
    let mut text = String::new();
    for keyspace in keyspaces.values() {
        for (table, rows) in keyspace_rows(keyspace).tables {
            for row in rows {
                text.push_str(&format!("{table}{row:?}\n"));
            }
        }
    }
    name_uuid(text.as_bytes())
}
