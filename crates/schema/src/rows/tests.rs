//! Round-trip tests: keyspace → `system_schema` rows → keyspace, and the exact rows written.
use super::*;
use crate::column::ClusteringOrder;
use crate::error::SchemaError;
use crate::options::OptionValue;
use std::sync::Arc;
use types::{CqlType, NativeType};
use uuid::Uuid;

fn native(n: NativeType) -> CqlType {
    CqlType::native(n)
}

fn address() -> Arc<UdtType> {
    Arc::new(UdtType::new(
        "shop",
        "Addr",
        vec![
            ("street".into(), native(NativeType::Text)),
            ("Zip".into(), native(NativeType::Int)),
            (
                "tags".into(),
                CqlType::Set(Box::new(native(NativeType::Text))).freeze(),
            ),
        ],
    ))
}

fn option(name: &str, value: &str) -> (String, OptionValue) {
    (name.into(), OptionValue::Constant(value.into()))
}

fn map_option(name: &str, entries: &[(&str, &str)]) -> (String, OptionValue) {
    let entries = entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (name.into(), OptionValue::Map(entries))
}

fn orders(udt: &Arc<UdtType>) -> Result<TableMetadata, SchemaError> {
    let options = TableOptions::for_new_table(&[
        option("comment", "it's"),
        option("default_time_to_live", "100"),
        option("cdc", "true"),
        option("allow_auto_snapshot", "false"),
        option("speculative_retry", "MIN(99p,50ms)"),
        map_option(
            "compaction",
            &[
                ("class", "LeveledCompactionStrategy"),
                ("sstable_size_in_mb", "100"),
            ],
        ),
        map_option("compression", &[("class", "ZstdCompressor")]),
        map_option("caching", &[("keys", "NONE"), ("rows_per_partition", "10")]),
    ])?;
    let columns = vec![
        ColumnMetadata::partition_key("a", native(NativeType::Int), 0),
        ColumnMetadata::partition_key("B", native(NativeType::Text), 1),
        ColumnMetadata::clustering("c", native(NativeType::Timeuuid), 0, ClusteringOrder::Desc),
        ColumnMetadata::clustering("d", native(NativeType::Int), 1, ClusteringOrder::Asc),
        ColumnMetadata::static_column("s1", native(NativeType::Int)),
        ColumnMetadata::regular(
            "aa",
            CqlType::List(Box::new(CqlType::Udt(Arc::clone(udt)).freeze())),
        ),
        ColumnMetadata::regular(
            "zz",
            CqlType::Map(
                Box::new(native(NativeType::Text)),
                Box::new(native(NativeType::Int)),
            ),
        ),
        ColumnMetadata::regular(
            "tt",
            CqlType::Tuple(vec![native(NativeType::Int), native(NativeType::Text)]),
        ),
        ColumnMetadata::regular(
            "vv",
            CqlType::Vector(Box::new(native(NativeType::Float)), 3),
        ),
        ColumnMetadata::regular("addr", CqlType::Udt(Arc::clone(udt))),
    ];
    let dropped = BTreeMap::from([(
        "old".to_string(),
        DroppedColumn {
            ty: native(NativeType::Text),
            kind: crate::column::ColumnKind::Regular,
            dropped_time_micros: 1_795_355_222_212_000,
        },
    )]);
    let id = Uuid::parse_str("eadc70f0-e67a-11f1-99db-39414a0423fd")
        .map_err(|e| SchemaError::Invalid(e.to_string()))?;
    Ok(TableMetadata::new("shop", "orders", id, columns, options)?.with_dropped_columns(dropped))
}

fn counters() -> Result<TableMetadata, SchemaError> {
    let mut options = TableOptions::default();
    options.apply_options(&[
        map_option("compression", &[("enabled", "false")]),
        option("incremental_backups", "false"),
        map_option("auto_repair", &[("incremental_enabled", "false")]),
    ])?;
    let columns = vec![
        ColumnMetadata::partition_key("k", native(NativeType::Text), 0),
        ColumnMetadata::regular("hits", native(NativeType::Counter)),
    ];
    TableMetadata::new("shop", "hits", Uuid::from_u128(7), columns, options)
}

fn shop() -> Result<KeyspaceMetadata, SchemaError> {
    let replication = BTreeMap::from([
        (
            "class".to_string(),
            "org.apache.cassandra.locator.NetworkTopologyStrategy".to_string(),
        ),
        ("dc1".to_string(), "3".to_string()),
    ]);
    let udt = address();
    let mut keyspace = KeyspaceMetadata::new("shop", replication, false);
    keyspace.types.insert(udt.name.clone(), Arc::clone(&udt));
    Ok(keyspace.with_table(orders(&udt)?).with_table(counters()?))
}

fn load(rows: &SchemaRows) -> Result<crate::snapshot::Schema, SchemaError> {
    load_schema(&|table: &str| rows.rows(table).to_vec())
}

#[test]
fn keyspace_round_trips_through_rows() -> Result<(), SchemaError> {
    let keyspace = shop()?;
    let schema = load(&keyspace_rows(&keyspace))?;
    let loaded = schema
        .keyspace("shop")
        .ok_or_else(|| SchemaError::Invalid("lost keyspace".into()))?;
    assert_eq!(**loaded, keyspace);
    Ok(())
}

#[test]
fn system_keyspaces_are_not_loaded() -> Result<(), SchemaError> {
    let mut rows = SchemaRows::default();
    for keyspace in crate::system::system_keyspaces() {
        for (table, mut table_rows) in keyspace_rows(&keyspace).tables {
            match rows.tables.iter_mut().find(|(name, _)| *name == table) {
                Some((_, existing)) => existing.append(&mut table_rows),
                None => rows.tables.push((table, table_rows)),
            }
        }
    }
    assert!(load(&rows)?.keyspaces().is_empty());
    Ok(())
}

#[test]
fn table_rows_match_cassandra() -> Result<(), SchemaError> {
    let rows = keyspace_rows(&shop()?);
    let tables = rows.rows("tables");
    let hits = tables
        .iter()
        .find(|r| r.get("table_name") == Some(&Some(Value::Text("hits".into()))))
        .ok_or_else(|| SchemaError::Invalid("no hits row".into()))?;
    let flags = Value::Set(vec![
        Value::Text("compound".into()),
        Value::Text("counter".into()),
    ]);
    assert_eq!(hits.get("flags"), Some(&Some(flags)));
    assert_eq!(
        hits.get("incremental_backups"),
        Some(&Some(Value::Boolean(false)))
    );
    assert!(!hits.contains_key("cdc") && !hits.contains_key("memtable"));
    assert_eq!(
        hits.get("read_repair_chance"),
        Some(&Some(Value::Double(0.0)))
    );
    let columns = rows.rows("columns");
    let b = columns
        .iter()
        .find(|r| r.get("column_name") == Some(&Some(Value::Text("B".into()))))
        .ok_or_else(|| SchemaError::Invalid("no column B".into()))?;
    assert_eq!(
        b.get("kind"),
        Some(&Some(Value::Text("partition_key".into())))
    );
    assert_eq!(b.get("position"), Some(&Some(Value::Int(1))));
    assert_eq!(
        b.get("clustering_order"),
        Some(&Some(Value::Text("none".into())))
    );
    assert_eq!(
        b.get("column_name_bytes"),
        Some(&Some(Value::Blob(Bytes::from_static(b"B"))))
    );
    let aa = columns
        .iter()
        .find(|r| r.get("column_name") == Some(&Some(Value::Text("aa".into()))))
        .ok_or_else(|| SchemaError::Invalid("no column aa".into()))?;
    assert_eq!(
        aa.get("type"),
        Some(&Some(Value::Text("list<frozen<\"Addr\">>".into())))
    );
    let dropped = rows.rows("dropped_columns");
    assert_eq!(dropped.len(), 1);
    assert_eq!(
        dropped[0].get("dropped_time"),
        Some(&Some(Value::Timestamp(1_795_355_222_212)))
    );
    Ok(())
}

#[test]
fn corrupt_rows_are_errors() -> Result<(), SchemaError> {
    let mut rows = keyspace_rows(&shop()?);
    for (table, table_rows) in rows.tables.iter_mut() {
        if *table == "columns" {
            for row in table_rows.iter_mut() {
                row.insert("kind".into(), Some(Value::Text("compact_value".into())));
            }
        }
    }
    assert!(matches!(
        load(&rows),
        Err(SchemaError::Corrupt {
            table: "columns",
            ..
        })
    ));
    Ok(())
}

/// `shop` whose `Addr` got its last field from ALTER TYPE ADD (its table sees the same type).
fn shop_with_an_added_field() -> Result<KeyspaceMetadata, SchemaError> {
    let mut udt = address().as_ref().clone();
    udt.added_fields = 1;
    Ok(shop()?.with_altered_type(udt))
}

#[test]
fn only_altered_types_have_added_fields_and_keep_them() -> Result<(), SchemaError> {
    let rows = keyspace_rows(&shop()?);
    let columns: Vec<&str> = rows.rows("types")[0].keys().map(String::as_str).collect();
    assert_eq!(
        columns,
        ["field_names", "field_types", "keyspace_name", "type_name"]
    );
    let altered = shop_with_an_added_field()?;
    let rows = keyspace_rows(&altered);
    assert_eq!(
        rows.rows("types")[0].get("added_fields"),
        Some(&Some(Value::Int(1)))
    );
    let loaded = load(&rows)?;
    assert_eq!(loaded.keyspace("shop").map(|k| k.as_ref()), Some(&altered));
    assert_eq!(decode_keyspace(&encode_keyspace(&altered))?, altered);
    Ok(())
}

#[test]
fn more_added_fields_than_fields_are_corrupt() -> Result<(), SchemaError> {
    let mut rows = keyspace_rows(&shop_with_an_added_field()?);
    for (table, table_rows) in rows.tables.iter_mut() {
        if *table == "types" {
            table_rows[0].insert("added_fields".into(), Some(Value::Int(4)));
        }
    }
    assert!(matches!(
        load(&rows),
        Err(SchemaError::Corrupt { table: "types", .. })
    ));
    Ok(())
}

#[test]
fn schema_version_follows_content() -> Result<(), SchemaError> {
    let one = crate::snapshot::Schema::new([Arc::new(shop()?)]);
    let same = crate::snapshot::Schema::new([Arc::new(shop()?)]);
    assert_eq!(one.version(), same.version());
    let other = one.without_keyspace("shop");
    assert_ne!(one.version(), other.version());
    let orders_id = Uuid::parse_str("eadc70f0-e67a-11f1-99db-39414a0423fd")
        .map_err(|e| SchemaError::Invalid(e.to_string()))?;
    assert_eq!(
        one.table_by_id(orders_id).map(|t| t.name.as_str()),
        Some("orders")
    );
    assert!(one.table("shop", "hits").is_some());
    Ok(())
}

#[test]
fn keyspace_definitions_round_trip_through_bytes() -> Result<(), SchemaError> {
    let keyspace = shop()?;
    let bytes = encode_keyspace(&keyspace);
    assert_eq!(decode_keyspace(&bytes)?, keyspace);
    assert_eq!(encode_keyspace(&decode_keyspace(&bytes)?), bytes);
    Ok(())
}

/// `shop` with its counters table's column `gone` dropped at `micros`.
fn shop_with_a_drop(micros: i64) -> Result<KeyspaceMetadata, SchemaError> {
    let dropped = crate::table::DroppedColumn {
        ty: native(NativeType::Int),
        kind: crate::column::ColumnKind::Regular,
        dropped_time_micros: micros,
    };
    let table = counters()?.with_dropped_columns(BTreeMap::from([("gone".into(), dropped)]));
    Ok(shop()?.with_table(table))
}

/// `system_schema.dropped_columns` keeps milliseconds; a definition keeps the microseconds
/// of `DROP ... USING TIMESTAMP` (Cassandra hides cells up to them until it restarts), and one
/// of the first version, without them, reads as milliseconds.
#[test]
fn definitions_keep_drop_times_to_the_microsecond() -> Result<(), SchemaError> {
    let keyspace = shop_with_a_drop(1_000_500)?;
    let bytes = encode_keyspace(&keyspace);
    assert_eq!(decode_keyspace(&bytes)?, keyspace);
    // Version 1: the same rows without the drop times after them (a count, then each drop's
    // table and column names and 8 bytes).
    let drops = keyspace.tables.values().flat_map(|t| {
        let names = t.dropped_columns.keys();
        names.map(|column| 4 + t.name.len() + 4 + column.len() + 8)
    });
    let section = 4 + drops.sum::<usize>();
    let mut first = bytes[..bytes.len() - section].to_vec();
    first[0] = 1;
    assert_eq!(decode_keyspace(&first)?, shop_with_a_drop(1_000_000)?);
    let mut other = bytes.to_vec();
    let at = other.len() - 8;
    other[at..].copy_from_slice(&2_000_500i64.to_be_bytes());
    assert!(
        decode_keyspace(&other).is_err(),
        "not the row's millisecond"
    );
    Ok(())
}

#[test]
fn truncated_or_altered_definitions_are_errors() -> Result<(), SchemaError> {
    let bytes = encode_keyspace(&shop()?);
    for len in 0..bytes.len() {
        assert!(
            decode_keyspace(&bytes[..len]).is_err(),
            "prefix of {len} decoded"
        );
    }
    let mut trailing = bytes.to_vec();
    trailing.push(0);
    assert!(decode_keyspace(&trailing).is_err());
    let mut version = bytes.to_vec();
    version[0] = 9;
    assert!(decode_keyspace(&version).is_err());
    Ok(())
}
