//! A keyspace's definition as bytes, for the cluster metadata log: its `system_schema` rows,
//! each value in its CQL serialized form. Every node decodes the same bytes into the same
//! keyspace and writes its own `system_schema` rows from it with its own timestamps, so clock
//! skew between nodes can never shadow a schema change. Decoding checks every length and type.
//! The rows are followed by the drop times of the dropped columns in microseconds, which
//! `system_schema.dropped_columns` keeps to the millisecond (`DROP ... USING TIMESTAMP t`
//! hides the cells written up to `t`, as in Cassandra).
use std::sync::{Arc, OnceLock};

use bytes::{BufMut, Bytes};
use types::Value;

use super::{keyspace_rows, load_schema, Row};
use crate::error::SchemaError;
use crate::keyspace::KeyspaceMetadata;
use crate::system::system_keyspaces;

/// The format's version byte; a node refuses definitions of a version it does not know.
const VERSION: u8 = 2;

/// The version without drop times in microseconds (read: its drops are to the millisecond).
const VERSION_MILLIS: u8 = 1;

/// The `system_schema` tables a definition carries, in order.
const TABLES: [&str; 5] = ["keyspaces", "tables", "columns", "dropped_columns", "types"];

/// The bytes of `keyspace`'s definition.
pub fn encode_keyspace(keyspace: &KeyspaceMetadata) -> Bytes {
    let rows = keyspace_rows(keyspace);
    let mut out = vec![VERSION];
    for table in TABLES {
        let table_rows = rows.rows(table);
        put_len(&mut out, table_rows.len());
        for row in table_rows {
            put_row(&mut out, row);
        }
    }
    let drops: Vec<(&str, &str, i64)> = keyspace
        .tables
        .values()
        .flat_map(|t| {
            let drops = t.dropped_columns.iter();
            drops.map(|(column, d)| (t.name.as_str(), column.as_str(), d.dropped_time_micros))
        })
        .collect();
    put_len(&mut out, drops.len());
    for (table, column, micros) in drops {
        put_bytes(&mut out, table.as_bytes());
        put_bytes(&mut out, column.as_bytes());
        out.put_i64(micros);
    }
    Bytes::from(out)
}

/// The keyspace encoded by [`encode_keyspace`].
pub fn decode_keyspace(bytes: &[u8]) -> Result<KeyspaceMetadata, SchemaError> {
    let system_schema = system_schema().ok_or_else(|| corrupt("system_schema is not defined"))?;
    let mut input = Input {
        bytes,
        system_schema,
    };
    let version = input.u8()?;
    if version != VERSION && version != VERSION_MILLIS {
        return Err(corrupt("unknown definition version"));
    }
    let mut tables: Vec<(&str, Vec<Row>)> = Vec::new();
    for table in TABLES {
        let count = input.len()?;
        let mut rows = Vec::new();
        for _ in 0..count {
            rows.push(input.row(table)?);
        }
        tables.push((table, rows));
    }
    let mut drops = Vec::new();
    if version == VERSION {
        for _ in 0..input.len()? {
            drops.push((input.text()?, input.text()?, input.i64()?));
        }
    }
    if !input.bytes.is_empty() {
        return Err(corrupt("trailing bytes"));
    }
    let read = |name: &str| -> Vec<Row> {
        tables
            .iter()
            .find(|(t, _)| *t == name)
            .map(|(_, rows)| rows.clone())
            .unwrap_or_default()
    };
    let schema = load_schema(&read)?;
    let mut keyspaces = schema.keyspaces().values();
    let mut keyspace = match (keyspaces.next(), keyspaces.next()) {
        (Some(ks), None) => ks.as_ref().clone(),
        _ => return Err(corrupt("a definition holds exactly one keyspace")),
    };
    for (table, column, micros) in drops {
        set_drop_time(&mut keyspace, &table, &column, micros)?;
    }
    Ok(keyspace)
}

/// Puts back the microseconds of a drop its `dropped_columns` row dates to the millisecond.
fn set_drop_time(
    keyspace: &mut KeyspaceMetadata,
    table: &str,
    column: &str,
    micros: i64,
) -> Result<(), SchemaError> {
    let dropped = keyspace
        .tables
        .get_mut(table)
        .and_then(|t| Arc::make_mut(t).dropped_columns.get_mut(column))
        .ok_or_else(|| corrupt("a drop time of no dropped column"))?;
    if dropped.dropped_time_micros != micros.div_euclid(1000).saturating_mul(1000) {
        return Err(corrupt("a drop time other than its dropped_columns row's"));
    }
    dropped.dropped_time_micros = micros;
    Ok(())
}

/// `system_schema`'s definition, built once.
fn system_schema() -> Option<&'static KeyspaceMetadata> {
    static SYSTEM_SCHEMA: OnceLock<Option<KeyspaceMetadata>> = OnceLock::new();
    SYSTEM_SCHEMA
        .get_or_init(|| {
            system_keyspaces()
                .into_iter()
                .find(|k| k.name == "system_schema")
        })
        .as_ref()
}

fn corrupt(message: &str) -> SchemaError {
    SchemaError::corrupt("definition", message.to_string())
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    out.put_u32(u32::try_from(len).unwrap_or(u32::MAX));
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_len(out, bytes.len());
    out.put_slice(bytes);
}

/// A row as its column count, then each column's name and value (absent, null or bytes).
fn put_row(out: &mut Vec<u8>, row: &Row) {
    put_len(out, row.len());
    for (name, value) in row {
        put_bytes(out, name.as_bytes());
        match value {
            None => out.put_u8(0),
            Some(v) => {
                out.put_u8(1);
                put_bytes(out, &v.to_bytes());
            }
        }
    }
}

/// A bounds-checked cursor over a definition, typing values by `system_schema`'s columns.
struct Input<'a> {
    bytes: &'a [u8],
    system_schema: &'a KeyspaceMetadata,
}

impl<'a> Input<'a> {
    fn u8(&mut self) -> Result<u8, SchemaError> {
        let (&first, rest) = self
            .bytes
            .split_first()
            .ok_or_else(|| corrupt("ends early"))?;
        self.bytes = rest;
        Ok(first)
    }

    fn chunk<const N: usize>(&mut self) -> Result<[u8; N], SchemaError> {
        let (head, rest) = self
            .bytes
            .split_first_chunk::<N>()
            .ok_or_else(|| corrupt("ends early"))?;
        self.bytes = rest;
        Ok(*head)
    }

    fn len(&mut self) -> Result<usize, SchemaError> {
        let len = u32::from_be_bytes(self.chunk()?) as usize;
        if len > self.bytes.len() {
            return Err(corrupt("length exceeds the definition"));
        }
        Ok(len)
    }

    fn i64(&mut self) -> Result<i64, SchemaError> {
        Ok(i64::from_be_bytes(self.chunk()?))
    }

    fn text(&mut self) -> Result<String, SchemaError> {
        let bytes = self.bytes()?;
        let text = std::str::from_utf8(bytes).map_err(|_| corrupt("a name is not UTF-8"))?;
        Ok(text.to_string())
    }

    fn bytes(&mut self) -> Result<&'a [u8], SchemaError> {
        let len = self.len()?;
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(head)
    }

    /// A row of `system_schema.<table>`, each value read with its column's type.
    fn row(&mut self, table: &str) -> Result<Row, SchemaError> {
        let mut row = Row::new();
        for _ in 0..self.len()? {
            let name = self.text()?;
            let value = match self.u8()? {
                0 => None,
                1 => {
                    let bytes = self.bytes()?;
                    Some(self.value(table, &name, bytes)?)
                }
                _ => return Err(corrupt("invalid value tag")),
            };
            row.insert(name, value);
        }
        Ok(row)
    }

    /// Deserializes the value of `system_schema.<table>.<column>` with the column's type.
    fn value(&self, table: &str, column: &str, bytes: &[u8]) -> Result<Value, SchemaError> {
        let ty = self
            .system_schema
            .tables
            .get(table)
            .and_then(|t| t.column(column))
            .map(|c| &c.ty)
            .ok_or_else(|| corrupt("unknown system_schema column"))?;
        Value::deserialize(ty, bytes).map_err(|e| corrupt(&format!("{table}.{column}: {e}")))
    }
}
