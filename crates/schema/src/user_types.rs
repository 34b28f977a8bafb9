//! Where a keyspace uses its user types, and the keyspace after one of them changes: every
//! type, table column and user type that nests it sees the new definition (ALTER TYPE).
use std::sync::Arc;

use types::{CqlType, UdtType};

use crate::keyspace::KeyspaceMetadata;
use crate::table::TableMetadata;

/// Whether `ty` is, or nests, the user type `keyspace.name`.
pub fn references_type(ty: &CqlType, keyspace: &str, name: &str) -> bool {
    match ty {
        CqlType::Udt(udt) => {
            (udt.keyspace == keyspace && udt.name == name)
                || udt
                    .fields
                    .iter()
                    .any(|(_, t)| references_type(t, keyspace, name))
        }
        CqlType::List(e) | CqlType::Set(e) | CqlType::Frozen(e) | CqlType::Vector(e, _) => {
            references_type(e, keyspace, name)
        }
        CqlType::Map(k, v) => {
            references_type(k, keyspace, name) || references_type(v, keyspace, name)
        }
        CqlType::Tuple(items) => items.iter().any(|t| references_type(t, keyspace, name)),
        CqlType::Native(_) | CqlType::Custom(_) => false,
    }
}

/// `ty` with every occurrence of the user type named like `udt` replaced by `udt`.
pub fn with_type(ty: &CqlType, udt: &Arc<UdtType>) -> CqlType {
    let boxed = |t: &CqlType| Box::new(with_type(t, udt));
    match ty {
        CqlType::Udt(old) if old.keyspace == udt.keyspace && old.name == udt.name => {
            CqlType::Udt(Arc::clone(udt))
        }
        CqlType::Udt(old) => {
            let fields = old
                .fields
                .iter()
                .map(|(n, t)| (n.clone(), with_type(t, udt)));
            CqlType::Udt(Arc::new(UdtType {
                fields: fields.collect(),
                ..old.as_ref().clone()
            }))
        }
        CqlType::List(e) => CqlType::List(boxed(e)),
        CqlType::Set(e) => CqlType::Set(boxed(e)),
        CqlType::Frozen(e) => CqlType::Frozen(boxed(e)),
        CqlType::Vector(e, n) => CqlType::Vector(boxed(e), *n),
        CqlType::Map(k, v) => CqlType::Map(boxed(k), boxed(v)),
        CqlType::Tuple(items) => CqlType::Tuple(items.iter().map(|t| with_type(t, udt)).collect()),
        CqlType::Native(_) | CqlType::Custom(_) => ty.clone(),
    }
}

impl KeyspaceMetadata {
    /// The keyspace with `udt` replacing the type of its name, in the types and table columns
    /// that use it (user types nesting it included).
    pub fn with_altered_type(&self, udt: UdtType) -> KeyspaceMetadata {
        let udt = Arc::new(udt);
        let mut next = self.clone();
        for (name, existing) in next.types.iter_mut() {
            *existing = if *name == udt.name {
                Arc::clone(&udt)
            } else {
                let fields = existing
                    .fields
                    .iter()
                    .map(|(n, t)| (n.clone(), with_type(t, &udt)));
                Arc::new(UdtType {
                    fields: fields.collect(),
                    ..existing.as_ref().clone()
                })
            };
        }
        for table in next.tables.values_mut() {
            if table
                .columns
                .iter()
                .any(|c| references_type(&c.ty, &udt.keyspace, &udt.name))
            {
                *table = Arc::new(table_with_type(table, &udt));
            }
        }
        next
    }

    /// The user types of this keyspace that nest the type `name`, by name.
    pub fn types_using(&self, name: &str) -> Vec<&str> {
        self.types
            .values()
            .filter(|t| t.name != name)
            .filter(|t| {
                t.fields
                    .iter()
                    .any(|(_, f)| references_type(f, &self.name, name))
            })
            .map(|t| t.name.as_str())
            .collect()
    }

    /// The tables of this keyspace with a column of (or nesting) the type `name`, by name.
    pub fn tables_using(&self, name: &str) -> Vec<&TableMetadata> {
        self.tables
            .values()
            .filter(|t| {
                t.columns
                    .iter()
                    .any(|c| references_type(&c.ty, &self.name, name))
            })
            .map(|t| t.as_ref())
            .collect()
    }
}

fn table_with_type(table: &TableMetadata, udt: &Arc<UdtType>) -> TableMetadata {
    let mut next = table.clone();
    for column in next.columns.iter_mut() {
        column.ty = with_type(&column.ty, udt);
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::ColumnMetadata;
    use crate::options::TableOptions;
    use std::collections::BTreeMap;
    use types::NativeType;

    fn udt(name: &str, fields: Vec<(&str, CqlType)>) -> UdtType {
        UdtType::new(
            "ks",
            name,
            fields.into_iter().map(|(n, t)| (n.into(), t)).collect(),
        )
    }

    fn int() -> CqlType {
        CqlType::Native(NativeType::Int)
    }

    /// `inner (a int)`, `outer (i frozen<inner>)` and a table `t (k int, o frozen<outer>,
    /// l list<frozen<inner>>)`.
    fn keyspace() -> KeyspaceMetadata {
        let inner = Arc::new(udt("inner", vec![("a", int())]));
        let outer = udt(
            "outer",
            vec![("i", CqlType::Udt(Arc::clone(&inner)).freeze())],
        );
        let columns = vec![
            ColumnMetadata::partition_key("k", int(), 0),
            ColumnMetadata::regular("o", CqlType::Udt(Arc::new(outer.clone())).freeze()),
            ColumnMetadata::regular(
                "l",
                CqlType::List(Box::new(CqlType::Udt(Arc::clone(&inner)).freeze())),
            ),
            ColumnMetadata::regular("v", int()),
        ];
        let table = TableMetadata::new(
            "ks",
            "t",
            uuid::Uuid::nil(),
            columns,
            TableOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        KeyspaceMetadata::new("ks", BTreeMap::new(), true)
            .with_type(inner.as_ref().clone())
            .with_type(outer)
            .with_table(table)
    }

    #[test]
    fn uses_are_found_through_nesting() {
        let ks = keyspace();
        assert_eq!(ks.types_using("inner"), vec!["outer"]);
        let tables: Vec<&str> = ks
            .tables_using("inner")
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(tables, vec!["t"]);
        assert!(ks.tables_using("nope").is_empty());
        assert!(ks.types_using("outer").is_empty());
    }

    #[test]
    fn an_altered_type_reaches_every_use() {
        let ks = keyspace();
        let altered = udt("inner", vec![("a", int()), ("b", int())]);
        let next = ks.with_altered_type(altered.clone());
        let fields = |ty: &CqlType| match ty.unfrozen() {
            CqlType::Udt(u) => u.fields.len(),
            other => panic!("{other:?}"),
        };
        assert_eq!(next.types["inner"].fields.len(), 2);
        assert_eq!(fields(&next.types["outer"].fields[0].1), 2);
        let table = &next.tables["t"];
        let CqlType::Udt(outer) = table.column("o").map(|c| c.ty.unfrozen()).cloned().unwrap()
        else {
            panic!()
        };
        assert_eq!(fields(&outer.fields[0].1), 2);
        let CqlType::List(elem) = table.column("l").map(|c| c.ty.clone()).unwrap() else {
            panic!()
        };
        assert_eq!(fields(&elem), 2);
    }
}
