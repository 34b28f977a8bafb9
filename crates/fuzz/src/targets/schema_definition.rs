//! The schema definition codec (`schema::decode_keyspace`), the bytes a keyspace travels as
//! in the cluster metadata log: the tables of every system keyspace and a keyspace of nested user types,
//! mutated as rows (type names nested a hundred levels, unknown types, names, nulls, rows
//! repeated or dropped) and as bytes. Property: a decoded keyspace encodes to a definition
//! that decodes to the same keyspace.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::BufMut;
use schema::{decode_keyspace, encode_keyspace, keyspace_rows, KeyspaceMetadata, Row};
use types::{CqlType, NativeType, UdtType, Value};

use crate::driver::Target;
use crate::rng::Rng;

pub const TARGET: Target = Target {
    name: "schema",
    seeds,
    generate,
    mutate: Some(mutate_rows),
    run,
    short_iterations: 120,
};

/// The `system_schema` tables of a definition, in its order.
const TABLES: [&str; 5] = ["keyspaces", "tables", "columns", "dropped_columns", "types"];

fn run(input: &[u8]) -> Result<(), String> {
    let Ok(keyspace) = decode_keyspace(input) else {
        return Ok(());
    };
    let again = decode_keyspace(&encode_keyspace(&keyspace)).map_err(|e| {
        format!(
            "keyspace {} re-encodes to an undecodable definition: {e}",
            keyspace.name
        )
    })?;
    match again == keyspace {
        true => Ok(()),
        false => Err(format!(
            "keyspace {} changes when encoded and decoded again",
            keyspace.name
        )),
    }
}

/// The system keyspaces' tables under user keyspace names (a definition never holds a
/// system keyspace), and a keyspace of nested user types.
fn keyspaces() -> Vec<KeyspaceMetadata> {
    let mut all: Vec<KeyspaceMetadata> = schema::system_keyspaces()
        .into_iter()
        .map(|k| renamed(k, "fuzz_copy"))
        .collect();
    all.push(user_types());
    all
}

fn renamed(mut keyspace: KeyspaceMetadata, name: &str) -> KeyspaceMetadata {
    keyspace.name = name.to_string();
    for table in keyspace.tables.values_mut() {
        Arc::make_mut(table).keyspace = name.to_string();
    }
    for udt in keyspace.types.values_mut() {
        Arc::make_mut(udt).keyspace = name.to_string();
    }
    keyspace
}

/// A keyspace of user types, each holding the one before it in collections, the odd ones with
/// their last field added by ALTER TYPE.
fn user_types() -> KeyspaceMetadata {
    let replication = BTreeMap::from([
        (
            "class".to_string(),
            "org.apache.cassandra.locator.SimpleStrategy".to_string(),
        ),
        ("replication_factor".to_string(), "1".to_string()),
    ]);
    let mut keyspace = KeyspaceMetadata::new("fuzz", replication, true);
    let mut inner = CqlType::Native(NativeType::Int);
    for i in 0..4 {
        let mut udt = UdtType::new(
            "fuzz",
            &format!("t{i}"),
            vec![
                ("a".into(), inner.clone()),
                ("b".into(), CqlType::List(Box::new(inner.clone())).freeze()),
            ],
        );
        udt.added_fields = i % 2;
        let udt = Arc::new(udt);
        inner = CqlType::Udt(udt.clone()).freeze();
        keyspace.types.insert(udt.name.clone(), udt);
    }
    keyspace
}

fn seeds() -> Vec<Vec<u8>> {
    keyspaces()
        .iter()
        .map(|k| encode_keyspace(k).to_vec())
        .collect()
}

fn generate(rng: &mut Rng) -> Vec<u8> {
    let all = keyspaces();
    let rows = table_rows(rng.pick(&all));
    encode(&mutated(rng, rows))
}

/// Mutates the rows of a seed: decoding the seed is the library's job, so a mutated input
/// that no longer decodes falls back to a fresh seed.
fn mutate_rows(rng: &mut Rng, base: &[u8], _: &[Vec<u8>]) -> Vec<u8> {
    match decode_keyspace(base) {
        Ok(keyspace) => encode(&mutated(rng, table_rows(&keyspace))),
        Err(_) => generate(rng),
    }
}

fn table_rows(keyspace: &KeyspaceMetadata) -> Vec<Vec<Row>> {
    let rows = keyspace_rows(keyspace);
    TABLES.iter().map(|t| rows.rows(t).to_vec()).collect()
}

fn mutated(rng: &mut Rng, mut tables: Vec<Vec<Row>>) -> Vec<Vec<Row>> {
    for _ in 0..1 + rng.below(3) {
        let table = &mut tables[rng.below(TABLES.len())];
        if table.is_empty() {
            continue;
        }
        let at = rng.below(table.len());
        match rng.below(6) {
            0 => {
                table.remove(at);
            }
            1 => table.push(table[at].clone()),
            _ => mutate_row(rng, &mut table[at]),
        }
    }
    tables
}

fn mutate_row(rng: &mut Rng, row: &mut Row) {
    let names: Vec<String> = row.keys().cloned().collect();
    if names.is_empty() {
        return;
    }
    let name = rng.pick(&names).clone();
    match rng.below(5) {
        0 => {
            row.remove(&name);
        }
        1 => {
            row.insert(name, None);
        }
        _ => {
            if let Some(Some(value)) = row.get_mut(&name) {
                mutate_value(rng, value);
            }
        }
    }
}

const TYPE_TEXTS: [&str; 10] = [
    "frozen<list<int>>",
    "vector<float, 0>",
    "vector<int, 2147483647>",
    "map<text, frozen<set<timeuuid>>>",
    "tuple<>",
    "frozen<t3>",
    "no_such_type",
    "org.apache.cassandra.db.marshal.ReversedType(Int32Type)",
    "",
    "frozen<",
];

fn mutate_value(rng: &mut Rng, value: &mut Value) {
    match value {
        Value::Text(s) | Value::Ascii(s) => *s = odd_text(rng, s),
        Value::Int(i) => *i = rng.edgy_i64() as i32,
        Value::Bigint(i) => *i = rng.edgy_i64(),
        Value::Double(d) => *d = rng.edgy_i64() as f64 / 3.0,
        Value::Boolean(b) => *b = !*b,
        Value::List(items) | Value::Set(items) if !items.is_empty() => {
            let at = rng.below(items.len());
            mutate_value(rng, &mut items[at]);
        }
        Value::Map(pairs) if !pairs.is_empty() => {
            let at = rng.below(pairs.len());
            match rng.one_in(2) {
                true => mutate_value(rng, &mut pairs[at].0),
                false => mutate_value(rng, &mut pairs[at].1),
            }
        }
        _ => *value = Value::Text(odd_text(rng, "")),
    }
}

fn odd_text(rng: &mut Rng, current: &str) -> String {
    match rng.below(5) {
        0 => {
            let depth = *rng.pick(&[99usize, 100, 101, 300]);
            format!("{}int{}", "frozen<list<".repeat(depth), ">>".repeat(depth))
        }
        1 => format!("{current}{current}"),
        2 => "x".repeat(rng.size(70_000)),
        _ => rng.pick(&TYPE_TEXTS).to_string(),
    }
}

/// The definition format: a version byte, then per table a count and its rows; a row is a
/// count of columns, each a name and a tagged value (0 null, 1 bytes); then the count of
/// drop times in microseconds (none here: the rows' drops keep their milliseconds).
fn encode(tables: &[Vec<Row>]) -> Vec<u8> {
    let mut out = vec![2u8];
    for rows in tables {
        out.put_u32(rows.len() as u32);
        for row in rows {
            out.put_u32(row.len() as u32);
            for (name, value) in row {
                put_bytes(&mut out, name.as_bytes());
                match value {
                    None => out.put_u8(0),
                    Some(v) => {
                        out.put_u8(1);
                        put_bytes(&mut out, &v.to_bytes());
                    }
                }
            }
        }
    }
    out.put_u32(0);
    out
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.put_u32(bytes.len() as u32);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encoder here writes what the schema crate writes, so mutated rows reach its
    /// decoder rather than failing at the framing.
    #[test]
    fn unmutated_rows_encode_as_the_schema_crate_does() {
        for keyspace in keyspaces() {
            let ours = encode(&table_rows(&keyspace));
            assert_eq!(
                ours,
                encode_keyspace(&keyspace).to_vec(),
                "{}",
                keyspace.name
            );
            assert!(decode_keyspace(&ours).is_ok(), "{}", keyspace.name);
        }
    }
}
