//! Encoding of RESULT bodies (spec §4.2.5): Void, Rows, Set_keyspace, Prepared, Schema_change.
use crate::wire::{put_bytes, put_short_bytes, put_string, put_string_list};
use bytes::{BufMut, BytesMut};
use types::result::{ColumnSpec, Prepared, QueryResult, Rows, SchemaChange};
use types::result::{SchemaChangeKind, SchemaChangeTarget};

const GLOBAL_TABLES_SPEC: i32 = 0x0001;
const HAS_MORE_PAGES: i32 = 0x0002;
const NO_METADATA: i32 = 0x0004;

/// Writes a RESULT body.
pub fn write_result(out: &mut BytesMut, version: u8, result: &QueryResult) {
    match result {
        QueryResult::Void => out.put_i32(0x0001),
        QueryResult::Rows(rows) => {
            out.put_i32(0x0002);
            write_rows(out, rows);
        }
        QueryResult::SetKeyspace(ks) => {
            out.put_i32(0x0003);
            put_string(out, ks);
        }
        QueryResult::Prepared(p) => {
            out.put_i32(0x0004);
            write_prepared(out, version, p);
        }
        QueryResult::SchemaChange(sc) => {
            out.put_i32(0x0005);
            write_schema_change(out, sc);
        }
    }
}

fn write_rows(out: &mut BytesMut, rows: &Rows) {
    let columns: &[ColumnSpec] = if rows.skip_metadata {
        &[]
    } else {
        &rows.columns
    };
    let mut flags = if rows.skip_metadata { NO_METADATA } else { 0 };
    if rows.paging_state.is_some() {
        flags |= HAS_MORE_PAGES;
    }
    let global = shares_table(columns);
    if global {
        flags |= GLOBAL_TABLES_SPEC;
    }
    out.put_i32(flags);
    out.put_i32(rows.columns.len() as i32);
    if let Some(state) = &rows.paging_state {
        put_bytes(out, Some(state));
    }
    write_column_specs(out, columns, global);
    out.put_i32(rows.row_count);
    out.put_slice(&rows.content);
}

/// True when there are columns and all come from one table (Global_tables_spec).
fn shares_table(columns: &[ColumnSpec]) -> bool {
    match columns.first() {
        Some(first) => columns
            .iter()
            .all(|c| c.keyspace == first.keyspace && c.table == first.table),
        None => false,
    }
}

fn write_column_specs(out: &mut BytesMut, columns: &[ColumnSpec], global: bool) {
    if let (true, Some(first)) = (global, columns.first()) {
        put_string(out, &first.keyspace);
        put_string(out, &first.table);
    }
    for c in columns {
        if !global {
            put_string(out, &c.keyspace);
            put_string(out, &c.table);
        }
        put_string(out, &c.name);
        c.ty.write_option(out);
    }
}

/// `<metadata>` of a Prepared result: bind variables with partition-key indexes (v4+).
fn write_bind_metadata(out: &mut BytesMut, version: u8, p: &Prepared) {
    let global = shares_table(&p.bind_columns);
    out.put_i32(if global { GLOBAL_TABLES_SPEC } else { 0 });
    out.put_i32(p.bind_columns.len() as i32);
    if version >= 4 {
        out.put_i32(p.pk_indexes.len() as i32);
        p.pk_indexes.iter().for_each(|i| out.put_u16(*i));
    }
    write_column_specs(out, &p.bind_columns, global);
}

/// `<result_metadata>` of a Prepared result; No_metadata when the statement returns no rows.
fn write_result_metadata(out: &mut BytesMut, columns: &[ColumnSpec]) {
    if columns.is_empty() {
        out.put_i32(NO_METADATA);
        out.put_i32(0);
        return;
    }
    let global = shares_table(columns);
    out.put_i32(if global { GLOBAL_TABLES_SPEC } else { 0 });
    out.put_i32(columns.len() as i32);
    write_column_specs(out, columns, global);
}

fn write_prepared(out: &mut BytesMut, version: u8, p: &Prepared) {
    put_short_bytes(out, &p.id);
    if version >= 5 {
        put_short_bytes(out, &p.result_metadata_id);
    }
    write_bind_metadata(out, version, p);
    write_result_metadata(out, &p.result_columns);
}

fn kind_name(k: SchemaChangeKind) -> &'static str {
    match k {
        SchemaChangeKind::Created => "CREATED",
        SchemaChangeKind::Updated => "UPDATED",
        SchemaChangeKind::Dropped => "DROPPED",
    }
}

fn target_name(t: SchemaChangeTarget) -> &'static str {
    match t {
        SchemaChangeTarget::Keyspace => "KEYSPACE",
        SchemaChangeTarget::Table => "TABLE",
        SchemaChangeTarget::Type => "TYPE",
        SchemaChangeTarget::Function => "FUNCTION",
        SchemaChangeTarget::Aggregate => "AGGREGATE",
    }
}

/// The v3+ schema change layout, shared by RESULT Schema_change and EVENT SCHEMA_CHANGE.
pub fn write_schema_change(out: &mut BytesMut, sc: &SchemaChange) {
    put_string(out, kind_name(sc.kind));
    put_string(out, target_name(sc.target));
    put_string(out, &sc.keyspace);
    match sc.target {
        SchemaChangeTarget::Keyspace => {}
        SchemaChangeTarget::Table | SchemaChangeTarget::Type => put_string(out, &sc.name),
        SchemaChangeTarget::Function | SchemaChangeTarget::Aggregate => {
            put_string(out, &sc.name);
            put_string_list(out, &sc.arg_types);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Reader;
    use bytes::Bytes;
    use types::{CqlType, NativeType};

    fn col(table: &str, name: &str) -> ColumnSpec {
        ColumnSpec {
            keyspace: "ks".into(),
            table: table.into(),
            name: name.into(),
            ty: CqlType::Native(NativeType::Int),
        }
    }

    fn encode(version: u8, r: &QueryResult) -> Reader {
        let mut out = BytesMut::new();
        write_result(&mut out, version, r);
        Reader::new(out.freeze())
    }

    fn rows_with(columns: Vec<ColumnSpec>) -> Rows {
        let mut rows = Rows::new(columns);
        rows.push_value(Some(&[0, 0, 0, 7]));
        rows.push_value(None);
        rows.end_row();
        rows
    }

    #[test]
    fn rows_global_spec() {
        let mut r = encode(
            4,
            &QueryResult::Rows(rows_with(vec![col("t", "a"), col("t", "b")])),
        );
        assert_eq!(r.int().unwrap(), 2);
        assert_eq!(r.int().unwrap(), GLOBAL_TABLES_SPEC);
        assert_eq!(r.int().unwrap(), 2);
        assert_eq!(
            (r.string().unwrap(), r.string().unwrap()),
            ("ks".into(), "t".into())
        );
        assert_eq!(
            (r.string().unwrap(), r.short().unwrap()),
            ("a".into(), 0x09)
        );
        assert_eq!(
            (r.string().unwrap(), r.short().unwrap()),
            ("b".into(), 0x09)
        );
        assert_eq!(r.int().unwrap(), 1);
        assert_eq!(r.bytes().unwrap(), Some(Bytes::from_static(&[0, 0, 0, 7])));
        assert_eq!(r.bytes().unwrap(), None);
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn rows_per_column_spec_and_paging() {
        let mut rows = rows_with(vec![col("t", "a"), col("u", "b")]);
        rows.paging_state = Some(Bytes::from_static(b"p"));
        let mut r = encode(4, &QueryResult::Rows(rows));
        r.int().unwrap();
        assert_eq!(r.int().unwrap(), HAS_MORE_PAGES);
        assert_eq!(r.int().unwrap(), 2);
        assert_eq!(r.bytes().unwrap(), Some(Bytes::from_static(b"p")));
        assert_eq!(r.string().unwrap(), "ks");
        assert_eq!(r.string().unwrap(), "t");
        assert_eq!(r.string().unwrap(), "a");
    }

    #[test]
    fn rows_skip_metadata() {
        let mut rows = rows_with(vec![col("t", "a"), col("t", "b")]);
        rows.skip_metadata = true;
        let mut r = encode(4, &QueryResult::Rows(rows));
        r.int().unwrap();
        assert_eq!(r.int().unwrap(), NO_METADATA);
        assert_eq!(r.int().unwrap(), 2);
        assert_eq!(r.int().unwrap(), 1);
    }

    fn prepared() -> Prepared {
        Prepared {
            id: Bytes::from_static(b"id"),
            result_metadata_id: Bytes::from_static(b"md"),
            bind_columns: vec![col("t", "k"), col("t", "v")],
            pk_indexes: vec![0],
            result_columns: vec![],
        }
    }

    #[test]
    fn prepared_v4_and_v5() {
        let mut r = encode(4, &QueryResult::Prepared(prepared()));
        assert_eq!(r.int().unwrap(), 4);
        assert_eq!(r.short_bytes().unwrap(), Bytes::from_static(b"id"));
        assert_eq!(r.int().unwrap(), GLOBAL_TABLES_SPEC);
        assert_eq!(r.int().unwrap(), 2);
        assert_eq!((r.int().unwrap(), r.short().unwrap()), (1, 0));
        let mut r5 = encode(5, &QueryResult::Prepared(prepared()));
        r5.int().unwrap();
        r5.short_bytes().unwrap();
        assert_eq!(r5.short_bytes().unwrap(), Bytes::from_static(b"md"));
        let mut r3 = encode(3, &QueryResult::Prepared(prepared()));
        r3.int().unwrap();
        r3.short_bytes().unwrap();
        r3.int().unwrap();
        r3.int().unwrap();
        assert_eq!(r3.string().unwrap(), "ks", "v3 has no pk indexes");
    }

    #[test]
    fn prepared_result_metadata_is_no_metadata_when_empty() {
        let mut out = BytesMut::new();
        write_result_metadata(&mut out, &[]);
        assert_eq!(&out[..], &[0, 0, 0, 4, 0, 0, 0, 0]);
    }

    #[test]
    fn void_set_keyspace_schema_change() {
        assert_eq!(encode(4, &QueryResult::Void).int().unwrap(), 1);
        let mut r = encode(4, &QueryResult::SetKeyspace("ks".into()));
        assert_eq!((r.int().unwrap(), r.string().unwrap()), (3, "ks".into()));
        let sc = SchemaChange {
            kind: SchemaChangeKind::Created,
            target: SchemaChangeTarget::Function,
            keyspace: "ks".into(),
            name: "f".into(),
            arg_types: vec!["int".into()],
        };
        let mut r = encode(4, &QueryResult::SchemaChange(sc));
        assert_eq!(r.int().unwrap(), 5);
        let fields: Vec<String> = (0..4).map(|_| r.string().unwrap()).collect();
        assert_eq!(fields, vec!["CREATED", "FUNCTION", "ks", "f"]);
        assert_eq!(r.string_list().unwrap(), vec!["int"]);
    }
}
