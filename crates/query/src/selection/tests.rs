use cql::ast::{QualifiedName, Selector, SelectorExpr};
use schema::{ColumnMetadata, TableMetadata, TableOptions};
use types::limits::{on_worker_stack, MAX_NESTING};
use types::{CqlError, CqlType, NativeType};

use super::{Node, Selection};
use crate::operand::Binder;

fn native(n: NativeType) -> CqlType {
    CqlType::Native(n)
}

fn table() -> TableMetadata {
    let columns = vec![
        ColumnMetadata::partition_key("k", native(NativeType::Int), 0),
        ColumnMetadata::regular("v", native(NativeType::Int)),
        ColumnMetadata::regular("Mixed", native(NativeType::Text)),
    ];
    let id = uuid::Uuid::nil();
    TableMetadata::new("ks", "t", id, columns, TableOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn call(name: &str, args: Vec<SelectorExpr>) -> SelectorExpr {
    SelectorExpr::FunctionCall {
        name: QualifiedName::simple(name.to_string()),
        args,
    }
}

fn column(name: &str) -> SelectorExpr {
    SelectorExpr::Column(name.into())
}

fn analyze(selectors: Vec<SelectorExpr>) -> Result<Selection, CqlError> {
    let selectors: Vec<Selector> = selectors
        .into_iter()
        .map(|expr| Selector { expr, alias: None })
        .collect();
    Selection::analyze(&table(), &selectors, &mut Binder::new(0))
}

/// `max(max(...max(v)...))`, `depth` calls deep, built without the parser.
fn nested_max(depth: usize) -> Vec<Selector> {
    let expr = (0..depth).fold(column("v"), |inner, _| call("max", vec![inner]));
    vec![Selector { expr, alias: None }]
}

#[test]
fn selectors_nested_past_the_limit_are_refused() {
    let (table, selectors) = (table(), nested_max(MAX_NESTING + 2));
    let refused =
        on_worker_stack(|| Selection::analyze(&table, &selectors, &mut Binder::new(0)).map(|_| ()));
    assert_eq!(
        refused,
        Err(CqlError::invalid("Selectors nest at most 100 levels"))
    );
}

#[test]
fn scalar_functions_nested_to_the_limit_analyse_on_a_worker_stack() {
    let expr = (0..MAX_NESTING).fold(column("v"), |inner, _| call("abs", vec![inner]));
    let selectors = vec![Selector { expr, alias: None }];
    let table = table();
    let analysed = on_worker_stack(|| {
        Selection::analyze(&table, &selectors, &mut Binder::new(0)).map(|s| s.specs)
    });
    let specs = analysed.unwrap_or_else(|e| panic!("{e}"));
    assert!(specs[0].name.starts_with("system.abs(system.abs("));
}

#[test]
fn aggregates_inside_aggregates_are_refused() {
    let refused = analyze(vec![call("max", vec![call("max", vec![column("v")])])]);
    assert_eq!(
        refused.map(|_| ()),
        Err(CqlError::invalid(
            "aggregate functions cannot be used as arguments of aggregate functions"
        ))
    );
}

#[test]
fn a_column_read_twice_is_one_leaf() {
    let s = analyze(vec![column("v"), call("abs", vec![column("v")])])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.leaves.len(), 1);
    assert!(matches!(s.outputs[1], Node::Call(..)));
    assert_eq!(s.specs[1].name, "system.abs(v)");
    assert!(!s.is_aggregate);
}

#[test]
fn aggregates_make_an_aggregation_and_name_their_column() {
    let s = analyze(vec![call("sum", vec![column("v")]), column("k")])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(s.is_aggregate);
    assert_eq!(s.specs[0].name, "system.sum(v)");
    assert_eq!(s.specs[0].ty, native(NativeType::Int));
    assert!(matches!(s.outputs[0], Node::Aggregate(0)));
}

#[test]
fn tojson_is_text_named_for_its_argument() {
    let s = analyze(vec![column("Mixed"), call("tojson", vec![column("v")])])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.specs[1].name, "system.tojson(v)");
    assert_eq!(s.specs[1].ty, native(NativeType::Text));
}

#[test]
fn a_bare_literal_cannot_be_typed() {
    let literal = SelectorExpr::Term(cql::ast::Term::Literal(cql::ast::Literal {
        kind: cql::ast::LiteralKind::Integer,
        text: "1".into(),
    }));
    assert_eq!(
        analyze(vec![literal]).map(|_| ()),
        Err(CqlError::invalid(
            "Cannot infer type for term 1 in selection clause (try using a cast to force a type)"
        ))
    );
}

#[test]
fn unknown_functions_are_named_in_the_error() {
    assert_eq!(
        analyze(vec![call("nosuch", vec![column("v")])]).map(|_| ()),
        Err(CqlError::invalid("Unknown function 'nosuch'"))
    );
}

fn string(text: &str) -> SelectorExpr {
    SelectorExpr::Term(cql::ast::Term::Literal(cql::ast::Literal {
        kind: cql::ast::LiteralKind::String,
        text: text.into(),
    }))
}

#[test]
fn text_plus_a_string_concatenates_as_text() {
    let plus = SelectorExpr::Arithmetic {
        op: cql::ast::ArithOp::Add,
        left: Box::new(column("Mixed")),
        right: Box::new(string("x")),
    };
    let s = analyze(vec![plus]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.specs[0].ty, native(NativeType::Text));
    assert_eq!(s.specs[0].name, "Mixed + 'x'");
}

/// The selectors of `SELECT <selectors> FROM t`, analysed.
fn analyze_text(selectors: &str) -> Result<Selection, CqlError> {
    let text = format!("SELECT {selectors} FROM t");
    let Ok(cql::ast::Statement::Select(select)) = cql::parse_statement(&text) else {
        panic!("{text} does not parse");
    };
    let selectors = select.selectors.unwrap_or_default();
    Selection::analyze(&table(), &selectors, &mut Binder::new(0))
}

fn names(selectors: &str) -> Vec<String> {
    let s = analyze_text(selectors).unwrap_or_else(|e| panic!("{selectors}: {e}"));
    s.specs.into_iter().map(|spec| spec.name).collect()
}

fn cannot_infer(term: &str) -> CqlError {
    CqlError::invalid(format!(
        "Cannot infer type for term {term} in selection clause (try using a cast to force a type)"
    ))
}

/// Cassandra 5.0.4 has no `cast_as_varchar`: only text casts to varchar (as itself).
#[test]
fn only_text_casts_to_varchar() {
    assert_eq!(names("CAST(\"Mixed\" AS varchar)"), ["Mixed"]);
    assert_eq!(
        analyze_text("CAST(v AS VARCHAR)").map(|_| ()),
        Err(CqlError::invalid("v cannot be cast to varchar"))
    );
    assert_eq!(names("CAST(v AS text)"), ["cast(v as text)"]);
}

/// Cassandra 5.0.4 cannot tell `(v)` from a tuple of one element: it has a type (and keeps
/// its parentheses in the column name) only as an operand or a call's argument.
#[test]
fn a_parenthesised_selector_needs_a_receiver() {
    assert_eq!(
        names("-(v), -v, (v) + 1, abs((v)), (varint)(v), -((v)), [v, (v)], -(5), abs((1))"),
        [
            "-(v)",
            "-v",
            "(v) + 1",
            "system.abs((v))",
            "(varint)(v)",
            "-((v))",
            "[v, (v)]",
            "-(5)",
            "system.abs((1))"
        ]
    );
    for (selectors, term) in [
        ("(v)", "(v)"),
        ("(v + 1)", "(v + 1)"),
        ("[(v)]", "[(v)]"),
        ("((v), k)", "((v), k)"),
        ("CAST((v) AS text)", "(v)"),
    ] {
        assert_eq!(
            analyze_text(selectors).map(|_| ()),
            Err(cannot_infer(term)),
            "{selectors}"
        );
    }
}
