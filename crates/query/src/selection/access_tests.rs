//! Element, slice and field selections and WRITETIME/TTL of them: analysed as Cassandra 5.0.4
//! names, types and refuses them, and evaluated on stored cells.
use std::sync::Arc;

use bytes::Bytes;
use cql::ast::Statement;
use mutation::{Cell, ColumnData, DeletionTime, Row};
use schema::{ColumnMetadata, TableMetadata, TableOptions};
use types::request::{BoundValue, QueryOptions};
use types::{CqlError, CqlType, NativeType, UdtType};

use super::{Evaluator, Leaf, Node, Selection};
use crate::collections;
use crate::exec::ExecContext;
use crate::operand::Binder;
use crate::rows::RowView;

fn native(n: NativeType) -> CqlType {
    CqlType::Native(n)
}

/// `t (k int, m map<text, int>, s set<text>, l list<int>, u addr, v int)` with
/// `addr (street text, zip int)` non-frozen.
fn table() -> TableMetadata {
    let (int, text) = (native(NativeType::Int), native(NativeType::Text));
    let udt = UdtType::new(
        "ks",
        "addr",
        vec![("street".into(), text.clone()), ("zip".into(), int.clone())],
    );
    let columns = vec![
        ColumnMetadata::partition_key("k", int.clone(), 0),
        ColumnMetadata::regular(
            "m",
            CqlType::Map(Box::new(text.clone()), Box::new(int.clone())),
        ),
        ColumnMetadata::regular("s", CqlType::Set(Box::new(text))),
        ColumnMetadata::regular("l", CqlType::List(Box::new(int.clone()))),
        ColumnMetadata::regular("u", CqlType::Udt(Arc::new(udt))),
        ColumnMetadata::regular("v", int),
    ];
    TableMetadata::new(
        "ks",
        "t",
        uuid::Uuid::nil(),
        columns,
        TableOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn analyze(selectors: &str) -> Result<Selection, CqlError> {
    let parsed =
        cql::parse(&format!("SELECT {selectors} FROM t")).unwrap_or_else(|e| panic!("{e:?}"));
    let Statement::Select(select) = parsed.statement else {
        panic!("not a SELECT");
    };
    let selectors = select.selectors.unwrap_or_else(|| panic!("no selectors"));
    Selection::analyze(&table(), &selectors, &mut Binder::new(0))
}

/// Each output's name and type.
fn described(selectors: &str) -> Vec<(String, String)> {
    let s = analyze(selectors).unwrap_or_else(|e| panic!("{e}"));
    s.specs
        .iter()
        .map(|spec| (spec.name.clone(), spec.ty.cql_name()))
        .collect()
}

fn refused(selectors: &str) -> String {
    match analyze(selectors) {
        Err(CqlError::Invalid(m)) => m,
        other => panic!("{other:?}"),
    }
}

fn pair(name: &str, ty: &str) -> (String, String) {
    (name.to_string(), ty.to_string())
}

#[test]
fn elements_slices_and_fields_are_named_and_typed_as_cassandra_does() {
    assert_eq!(
        described("m['x'], s['x'], m[..'y'], m['a'..], u.zip, m['x'] AS e"),
        vec![
            pair("m['x']", "int"),
            pair("s['x']", "text"),
            pair("m[..'y']", "map<text, int>"),
            pair("m['a'..]", "map<text, int>"),
            pair("u.zip", "int"),
            pair("e", "int"),
        ]
    );
}

#[test]
fn elements_of_lists_and_non_collections_are_refused() {
    assert_eq!(
        refused("l[1]"),
        "Element selection is only allowed on sets and maps, but l is a list"
    );
    assert_eq!(
        refused("l[1..2]"),
        "Slice selection is only allowed on sets and maps, but l is a list"
    );
    assert_eq!(
        refused("v['x']"),
        "Invalid element selection: v is of type int is not a collection"
    );
    assert_eq!(refused("u.nope"), "u of type addr has no field nope");
    assert_eq!(
        refused("v.f"),
        "Invalid field selection: v of type int is not a user type"
    );
}

#[test]
fn selections_compose_with_functions_and_aggregates() {
    let s =
        analyze("abs(m['x']), max(u.zip), tojson(m['a'..'b'])").unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(&s.outputs[0], Node::Call(_, args) if matches!(args[0], Node::Access(..))));
    assert!(s.is_aggregate);
    assert_eq!(s.specs[1].name, "system.max(u.zip)");
    assert_eq!(s.specs[2].name, "system.tojson(m['a'..'b'])");
    assert_eq!(s.leaves.len(), 2, "m and u are read once each");
}

#[test]
fn times_of_multi_cell_values_are_lists_and_of_elements_single() {
    assert_eq!(
        described("writetime(l), ttl(u.zip), writetime(m['a'..]), maxwritetime(m), ttl(m['x'])"),
        vec![
            pair("writetime(l)", "list<bigint>"),
            pair("ttl(u.zip)", "int"),
            pair("writetime(m['a'..])", "list<bigint>"),
            pair("maxwritetime(m)", "bigint"),
            pair("ttl(m['x'])", "int"),
        ]
    );
    assert_eq!(
        refused("ttl(k)"),
        "Cannot use selection function ttl on PRIMARY KEY part k"
    );
    let s = analyze("writetime(m['x'])").unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(&s.leaves[0], Leaf::Times { path, .. } if path.len() == 1));
}

fn text(v: &str) -> Bytes {
    Bytes::copy_from_slice(v.as_bytes())
}

fn int(v: i32) -> Bytes {
    Bytes::copy_from_slice(&v.to_be_bytes())
}

fn bigint(v: i64) -> Option<Bytes> {
    Some(Bytes::copy_from_slice(&v.to_be_bytes()))
}

/// `m = {'a': 1 (written at 10), 'b': 2 (at 20)}`, `u = {zip: 7}` written at 30 with a TTL
/// of 100 s at second 1000.
fn row() -> Row {
    let map_cells = vec![
        Cell::live(10, int(1)).with_path(text("a")),
        Cell::live(20, int(2)).with_path(text("b")),
    ];
    let udt_cells =
        vec![Cell::expiring(30, 100, 1000, int(7)).with_path(collections::field_path(1))];
    let mut row = Row::new(Bytes::new());
    row.columns = vec![
        ColumnData::complex(text("m"), DeletionTime::LIVE, map_cells),
        ColumnData::complex(text("u"), DeletionTime::LIVE, udt_cells),
    ];
    row
}

fn evaluate(selectors: &str, values: Vec<BoundValue>) -> Result<Vec<Option<Bytes>>, CqlError> {
    let selection = analyze(selectors)?;
    let ctx = ExecContext::new(&QueryOptions::default(), values);
    selection.check_bound(&ctx)?;
    let (row, pk) = (row(), vec![int(1)]);
    let key = crate::keys::partition_key(&pk);
    let view = RowView {
        key: &key,
        pk: &pk,
        clustering: &[],
        row: Some(&row),
        static_row: None,
        now: 1040,
    };
    Evaluator {
        selection: &selection,
        ctx: &ctx,
    }
    .row(&view)
}

#[test]
fn values_and_times_of_selections_are_read_from_the_cells() {
    let got = evaluate(
        "m['b'], m['z'], writetime(m['b']), writetime(m['z']), maxwritetime(m), u.zip, u.street, \
         ttl(u.zip), writetime(u.street), writetime(u)",
        Vec::new(),
    );
    let list =
        collections::encode_elements(&[Bytes::new(), Bytes::copy_from_slice(&30i64.to_be_bytes())]);
    assert_eq!(
        got,
        Ok(vec![
            Some(int(2)),
            None,
            bigint(20),
            None,
            bigint(20),
            Some(int(7)),
            None,
            Some(int(60)),
            None,
            Some(list),
        ])
    );
}

#[test]
fn slices_keep_the_times_of_their_cells_and_are_null_when_empty() {
    let got = evaluate("m['a'..'a'], writetime(m['b'..]), m['c'..]", Vec::new());
    let a = collections::encode_pairs(&[(text("a"), int(1))]);
    let times = collections::encode_elements(&[Bytes::copy_from_slice(&20i64.to_be_bytes())]);
    assert_eq!(got, Ok(vec![Some(a), Some(times), None]));
}

#[test]
fn null_keys_are_refused_and_unset_bounds_leave_the_slice_open() {
    let null = evaluate("m[?]", vec![BoundValue::Null]);
    assert_eq!(
        null,
        Err(CqlError::invalid(
            "Invalid null value for element selection on m"
        ))
    );
    let unset = evaluate("m[?]", vec![BoundValue::Unset]);
    assert_eq!(
        unset,
        Err(CqlError::invalid(
            "Invalid unset value for element selection on m"
        ))
    );
    let open = evaluate("m[?..'a']", vec![BoundValue::Unset]);
    let a = collections::encode_pairs(&[(text("a"), int(1))]);
    assert_eq!(open, Ok(vec![Some(a)]));
    let null_bound = evaluate("m[?..'a']", vec![BoundValue::Null]);
    assert_eq!(
        null_bound,
        Err(CqlError::invalid(
            "Invalid null value for slice selection on m"
        ))
    );
}
