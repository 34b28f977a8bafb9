//! A lightweight transaction's request against partitions built by hand: conditions with
//! Cassandra's null semantics, the read it makes, the mutation at the ballot's timestamp and
//! the rows a failed one answers.
use std::sync::Arc;

use bytes::Bytes;
use cql::ast::Statement;
use mutation::{Cell, ColumnData, LivenessInfo, Partition, PartitionKey, Row};
use schema::{ClusteringOrder, ColumnMetadata, TableMetadata, TableOptions};
use types::request::QueryOptions;
use types::{CqlType, NativeType};

use super::{result, CasRequest};
use crate::exec::ExecContext;
use crate::modify::ModifyPlan;
use crate::operand::Binder;

fn int() -> CqlType {
    CqlType::Native(NativeType::Int)
}

fn table() -> Arc<TableMetadata> {
    let text = CqlType::Native(NativeType::Text);
    let columns = vec![
        ColumnMetadata::partition_key("k", int(), 0),
        ColumnMetadata::clustering("c", int(), 0, ClusteringOrder::Asc),
        ColumnMetadata::static_column("s", int()),
        ColumnMetadata::regular("v", int()),
        ColumnMetadata::regular("m", CqlType::Map(Box::new(text), Box::new(int()))),
        ColumnMetadata::regular("l", CqlType::List(Box::new(int()))),
    ];
    let table = TableMetadata::new(
        "ks",
        "t",
        uuid::Uuid::nil(),
        columns,
        TableOptions::default(),
    );
    Arc::new(table.unwrap_or_else(|e| panic!("{e}")))
}

fn plan(text: &str) -> ModifyPlan {
    let parsed = cql::parse(text).unwrap_or_else(|e| panic!("{e}"));
    let mut binder = Binder::new(0);
    let analysed = match &parsed.statement {
        Statement::Insert(s) => ModifyPlan::insert(table(), s, &mut binder),
        Statement::Update(s) => ModifyPlan::update(table(), s, &mut binder),
        Statement::Delete(s) => ModifyPlan::delete(table(), s, &mut binder),
        other => panic!("not a write: {other:?}"),
    };
    analysed.unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn refusal(text: &str) -> String {
    let parsed = cql::parse(text).unwrap_or_else(|e| panic!("{e}"));
    let Statement::Update(s) = &parsed.statement else {
        panic!("not an update")
    };
    match ModifyPlan::update(table(), s, &mut Binder::new(0)) {
        Ok(_) => panic!("{text} was accepted"),
        Err(e) => e.to_string(),
    }
}

fn ctx() -> ExecContext {
    ExecContext::new(&QueryOptions::default(), Vec::new())
}

fn b(v: i32) -> Bytes {
    Bytes::copy_from_slice(&v.to_be_bytes())
}

fn key() -> PartitionKey {
    schema::keys::partition_key(&[b(1)])
}

fn clustering(c: i32) -> Bytes {
    plan("UPDATE t SET v = 1 WHERE k = 1 AND c = 1")
        .layout
        .clustering(&[b(c)])
}

/// A row of clustering `c` with a live marker (when `marker`) and `v` (when given).
fn row(c: i32, marker: bool, v: Option<i32>) -> Row {
    let mut row = Row::new(clustering(c));
    row.liveness = marker.then(|| LivenessInfo::new(1));
    if let Some(v) = v {
        row.columns.push(ColumnData::simple(
            mutation::column_name("v"),
            Cell::live(1, b(v)),
        ));
    }
    row
}

fn partition(rows: Vec<Row>, s: Option<i32>) -> Partition {
    let static_row = s.map(|s| {
        let mut r = Row::new(Bytes::new());
        r.columns.push(ColumnData::simple(
            mutation::column_name("s"),
            Cell::live(1, b(s)),
        ));
        r
    });
    Partition {
        key: key(),
        static_row,
        rows,
    }
}

fn applies(text: &str, current: Option<&Partition>) -> bool {
    let (plan, ctx) = (plan(text), ctx());
    let request = CasRequest::new(&[(&plan, &ctx)], false).unwrap_or_else(|e| panic!("{e}"));
    request.applies_to(current, 100)
}

#[test]
fn if_not_exists_looks_at_live_data_only() {
    let insert = "INSERT INTO t (k, c, v) VALUES (1, 1, 1) IF NOT EXISTS";
    assert!(applies(insert, None));
    assert!(!applies(
        insert,
        Some(&partition(vec![row(1, true, None)], None))
    ));
    assert!(applies(
        insert,
        Some(&partition(vec![row(2, true, None)], None))
    ));
    let mut expired = row(1, false, None);
    expired.columns.push(ColumnData::simple(
        mutation::column_name("v"),
        Cell::expiring(1, 10, 50, b(3)),
    ));
    assert!(applies(insert, Some(&partition(vec![expired], None))));
}

#[test]
fn null_compares_equal_only_to_an_absent_value() {
    let only_marker = partition(vec![row(1, true, None)], None);
    let with_v = partition(vec![row(1, true, Some(5))], None);
    let update = |cond: &str| format!("UPDATE t SET v = 1 WHERE k = 1 AND c = 1 IF {cond}");
    assert!(applies(&update("v = null"), Some(&only_marker)));
    assert!(applies(&update("v = null"), None));
    assert!(!applies(&update("v = null"), Some(&with_v)));
    assert!(!applies(&update("v > 1"), Some(&only_marker)));
    assert!(applies(&update("v != 1"), Some(&only_marker)));
    assert!(applies(
        &update("v > 1 AND v <= 5 AND v IN (4, 5)"),
        Some(&with_v)
    ));
    assert!(!applies(&update("v IN (1, null)"), Some(&with_v)));
    assert!(applies(&update("v IN (1, null)"), None));
}

#[test]
fn map_and_list_elements_are_read_from_the_cells() {
    let mut r = row(1, true, None);
    let cells = |pairs: Vec<(Bytes, i32)>| {
        pairs
            .into_iter()
            .map(|(path, v)| Cell::live(1, b(v)).with_path(path))
            .collect()
    };
    let dead = mutation::DeletionTime::LIVE;
    r.columns.push(ColumnData::complex(
        mutation::column_name("l"),
        dead,
        cells(vec![
            (Bytes::from_static(&[1]), 7),
            (Bytes::from_static(&[2]), 8),
        ]),
    ));
    r.columns.push(ColumnData::complex(
        mutation::column_name("m"),
        dead,
        cells(vec![(Bytes::from_static(b"a"), 1)]),
    ));
    r.columns.sort_by(|x, y| x.name.cmp(&y.name));
    let p = partition(vec![r], None);
    let update = |cond: &str| format!("UPDATE t SET v = 1 WHERE k = 1 AND c = 1 IF {cond}");
    assert!(applies(&update("l[1] = 8 AND m['a'] = 1"), Some(&p)));
    assert!(applies(&update("l[5] = null AND m['b'] = null"), Some(&p)));
    assert!(applies(
        &update("l = [7, 8] AND l > [7] AND l CONTAINS 8"),
        Some(&p)
    ));
    assert!(!applies(&update("m = {'a': 2}"), Some(&p)));
    assert!(applies(&update("m CONTAINS KEY 'a'"), Some(&p)));
}

#[test]
fn static_conditions_read_the_first_row_and_the_static_row() {
    let (plan, ctx) = (plan("UPDATE t SET s = 2 WHERE k = 1 IF s = 1"), ctx());
    let request = CasRequest::new(&[(&plan, &ctx)], false).unwrap_or_else(|e| panic!("{e}"));
    let filter = request.read_filter();
    assert_eq!((filter.row_limit, filter.include_static), (Some(1), true));
    assert!(request.applies_to(Some(&partition(Vec::new(), Some(1))), 100));
    assert!(!request.applies_to(Some(&partition(Vec::new(), Some(3))), 100));
}

#[test]
fn the_mutation_carries_the_ballot_timestamp_and_deletions_just_before() {
    let (insert, delete, ctx) = (
        plan("UPDATE t SET v = 3 WHERE k = 1 AND c = 1 IF v = 1"),
        plan("DELETE FROM t WHERE k = 1"),
        ctx(),
    );
    let request = CasRequest::new(&[(&insert, &ctx), (&delete, &ctx)], true)
        .unwrap_or_else(|e| panic!("{e}"));
    let m = request
        .mutation(None, 500)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.update.partition_deletion.marked_for_delete_at, 499);
    let written = &m.update.rows[0].columns[0];
    let mutation::ColumnValue::Simple(cell) = &written.value else {
        panic!("a simple cell")
    };
    assert_eq!((cell.timestamp, cell.value.clone()), (500, Some(b(3))));
}

#[test]
fn a_failed_update_shows_the_conditioned_columns_regular_first() {
    let (plan, ctx) = (
        plan("UPDATE t SET v = 3 WHERE k = 1 AND c = 1 IF s = 1 AND v = 1"),
        ctx(),
    );
    let request = CasRequest::new(&[(&plan, &ctx)], false).unwrap_or_else(|e| panic!("{e}"));
    let current = partition(vec![row(1, true, Some(2))], Some(7));
    assert!(!request.applies_to(Some(&current), 100));
    let rows = result::not_applied(&request, Some(&current), 100).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = rows.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["[applied]", "v", "s"]);
    assert_eq!(rows.row_count, 1);
    let empty = result::not_applied(&request, None, 100).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((empty.columns.len(), empty.row_count), (1, 1));
}

#[test]
fn mixed_existence_conditions_on_one_row_are_refused() {
    let (exists, not_exists, ctx) = (
        plan("UPDATE t SET v = 3 WHERE k = 1 AND c = 1 IF EXISTS"),
        plan("INSERT INTO t (k, c) VALUES (1, 1) IF NOT EXISTS"),
        ctx(),
    );
    let refused = CasRequest::new(&[(&exists, &ctx), (&not_exists, &ctx)], true);
    let message = refused.err().map(|e| e.to_string());
    assert_eq!(
        message.as_deref(),
        Some("Cannot mix IF EXISTS and IF NOT EXISTS conditions for the same row")
    );
}

#[test]
fn analysis_refusals_carry_cassandras_messages() {
    assert_eq!(
        refusal("UPDATE t USING TIMESTAMP 1 SET v = 1 WHERE k = 1 AND c = 1 IF v = 1"),
        "Cannot provide custom timestamp for conditional updates"
    );
    assert_eq!(
        refusal("UPDATE t SET v = 1 WHERE k = 1 AND c = 1 IF c = 1"),
        "PRIMARY KEY column 'c' cannot have IF conditions"
    );
    assert_eq!(
        refusal("UPDATE t SET v = 1 WHERE k = 1 AND c = 1 IF v.x = 1"),
        "Invalid field access syntax for non-UDT column v"
    );
    assert_eq!(
        refusal("UPDATE t SET v = 1 WHERE k = 1 AND c = 1 IF v CONTAINS 1"),
        "Cannot use CONTAINS on non-collection column v"
    );
    assert_eq!(
        refusal("UPDATE t SET s = 1 WHERE k = 1 IF v = 1"),
        "Some clustering keys are missing: c"
    );
}
