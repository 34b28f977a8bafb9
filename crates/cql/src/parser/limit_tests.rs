//! The parser's limits: nesting depth (at the limit on a 2 MiB stack, one past it, and far past
//! it) and identifier length; and the places where Cassandra's grammar is lenient.

use types::limits::{
    on_stack, on_worker_stack, MAX_IDENTIFIER_BYTES, MAX_NESTING, WORKER_STACK_BYTES,
};

use crate::ast::Statement;
use crate::{parse, parse_statement};

/// A statement nested `depth` levels deep.
type Nested = fn(usize) -> String;

/// One statement per shape a client can nest.
const SHAPES: &[(&str, Nested)] = &[
    ("parenthesised term", |d| {
        format!(
            "SELECT * FROM t WHERE k = {}1{}",
            "(".repeat(d),
            ")".repeat(d)
        )
    }),
    ("list literal", |d| {
        format!(
            "INSERT INTO t (k, l) VALUES (1, {}1{})",
            "[".repeat(d),
            "]".repeat(d)
        )
    }),
    ("map literal", |d| {
        format!(
            "UPDATE t SET m = {}1{} WHERE k = 1",
            "{1: ".repeat(d),
            "}".repeat(d)
        )
    }),
    ("set literal", |d| {
        format!(
            "SELECT * FROM t WHERE k = {}1{}",
            "{".repeat(d),
            "}".repeat(d)
        )
    }),
    ("tuple literal", |d| {
        format!(
            "SELECT * FROM t WHERE k = {}1{}",
            "(1, ".repeat(d),
            ")".repeat(d)
        )
    }),
    ("user type literal", |d| {
        format!(
            "SELECT * FROM t WHERE k = {}1{}",
            "{a: ".repeat(d),
            "}".repeat(d)
        )
    }),
    ("function call term", |d| {
        format!(
            "SELECT * FROM t WHERE k = {}1{}",
            "f(".repeat(d),
            ")".repeat(d)
        )
    }),
    ("cast term", |d| {
        format!(
            "SELECT * FROM t WHERE k = {}1{}",
            "CAST(".repeat(d),
            " AS int)".repeat(d)
        )
    }),
    ("type hint", |d| {
        format!("SELECT * FROM t WHERE k = {}1", "(int)".repeat(d))
    }),
    ("arithmetic", |d| {
        format!("SELECT * FROM t WHERE k = 1{}", " + 1".repeat(d))
    }),
    ("multiplication", |d| {
        format!("SELECT * FROM t WHERE k = 1{}", " * 2".repeat(d))
    }),
    ("parenthesised selector", |d| {
        format!("SELECT {}k{} FROM t", "(".repeat(d), ")".repeat(d))
    }),
    ("function call selector", |d| {
        format!("SELECT {}k{} FROM t", "f(".repeat(d), ")".repeat(d))
    }),
    ("negated selector", |d| {
        format!("SELECT {}k FROM t", "- ".repeat(d))
    }),
    ("selector arithmetic", |d| {
        format!("SELECT k{} FROM t", " - k".repeat(d))
    }),
    ("element selector", |d| {
        format!("SELECT m{} FROM t", "[1]".repeat(d))
    }),
    ("field selector", |d| {
        format!("SELECT u{} FROM t", ".f".repeat(d))
    }),
    ("list selector", |d| {
        format!("SELECT {}k{} FROM t", "[".repeat(d), "]".repeat(d))
    }),
    ("map selector", |d| {
        format!("SELECT {}k{} FROM t", "{k: ".repeat(d), "}".repeat(d))
    }),
    ("parenthesised relation", |d| {
        format!(
            "SELECT * FROM t WHERE {}k = 1{}",
            "(".repeat(d),
            ")".repeat(d)
        )
    }),
    ("column type", |d| {
        format!(
            "CREATE TABLE t (k int PRIMARY KEY, v {}int{})",
            "frozen<".repeat(d),
            ">".repeat(d)
        )
    }),
    ("tuple type", |d| {
        format!(
            "CREATE TABLE t (k int PRIMARY KEY, v {}int{})",
            "tuple<".repeat(d),
            ">".repeat(d)
        )
    }),
    ("type in a type hint", |d| {
        format!(
            "SELECT * FROM t WHERE k = ({}int{}) ?",
            "list<".repeat(d - 1),
            ">".repeat(d - 1)
        )
    }),
];

fn is_nesting_error(text: &str) -> Result<(), String> {
    match parse_statement(text) {
        Err(e) if e.to_string().contains("nesting too deep") => Ok(()),
        Err(e) => Err(format!("other error: {e}")),
        Ok(_) => Err("parsed".into()),
    }
}

/// Parsing at the limit fits in half a worker stack (the costliest shape, parenthesised
/// selectors, takes about 0.85 MiB in a debug build), leaving the other half to the rest of the
/// request; a change that makes the parser's frames much larger fails here.
#[test]
fn every_shape_parses_at_the_nesting_limit_in_half_a_worker_stack() {
    for (shape, statement) in SHAPES {
        let text = statement(MAX_NESTING);
        let parsed = on_stack(WORKER_STACK_BYTES / 2, || {
            parse_statement(&text).map(|_| ())
        });
        assert_eq!(parsed, Ok(()), "{shape} at {MAX_NESTING} levels");
    }
}

#[test]
fn every_shape_is_refused_one_level_past_the_limit() {
    for (shape, statement) in SHAPES {
        let text = statement(MAX_NESTING + 1);
        assert_eq!(
            on_worker_stack(|| is_nesting_error(&text)),
            Ok(()),
            "{shape}"
        );
    }
}

#[test]
fn absurd_nesting_is_a_syntax_error_not_a_stack_overflow() {
    for (shape, statement) in SHAPES {
        for depth in [3_000, 100_000] {
            let text = statement(depth);
            assert_eq!(
                on_worker_stack(|| is_nesting_error(&text)),
                Ok(()),
                "{shape} at {depth}"
            );
        }
    }
}

#[test]
fn the_nesting_error_names_the_limit_and_the_position() {
    let text = format!("SELECT * FROM t WHERE k = {}", "(".repeat(MAX_NESTING + 5));
    let message = parse_statement(&text).map(|_| ()).unwrap_err().to_string();
    let column = "SELECT * FROM t WHERE k = ".len() + MAX_NESTING;
    assert!(
        message.starts_with(&format!(
            "line 1:{column} nesting too deep at input '(': terms, selectors, relations and \
             types nest at most {MAX_NESTING} levels"
        )),
        "{message}"
    );
}

#[test]
fn a_failed_type_hint_does_not_hide_the_nesting_error() {
    let deep_type = format!(
        "{}int{}",
        "list<".repeat(MAX_NESTING),
        ">".repeat(MAX_NESTING)
    );
    let text = format!("SELECT * FROM t WHERE k = ({deep_type}) ?");
    assert_eq!(is_nesting_error(&text), Ok(()));
}

#[test]
fn nesting_is_counted_per_branch_not_per_statement() {
    let deep = |d: usize| format!("{}1{}", "[".repeat(d), "]".repeat(d));
    let siblings = vec![deep(MAX_NESTING - 1); 50].join(", ");
    let text = format!("INSERT INTO t (k, l) VALUES (1, [{siblings}])");
    assert!(parse_statement(&text).is_ok());
}

#[test]
fn identifiers_up_to_the_protocol_string_limit() {
    let column = |name: &str| format!("SELECT {name} FROM t");
    let longest = "c".repeat(MAX_IDENTIFIER_BYTES);
    assert!(parse_statement(&column(&longest)).is_ok());
    let quoted_multibyte = format!("\"{}\"", "é".repeat(MAX_IDENTIFIER_BYTES / 2));
    assert!(parse_statement(&column(&quoted_multibyte)).is_ok());
    for too_long in [
        "c".repeat(MAX_IDENTIFIER_BYTES + 1),
        format!("\"{}\"", "é".repeat(MAX_IDENTIFIER_BYTES / 2 + 1)),
        "c".repeat(1_000_000),
    ] {
        let message = parse_statement(&column(&too_long)).unwrap_err().to_string();
        assert!(
            message.starts_with("line 1:7 identifier too long (")
                && message.ends_with("names are at most 65535 bytes"),
            "{message}"
        );
    }
}

#[test]
fn overlong_names_are_refused_wherever_a_name_is_read() {
    let name = "n".repeat(MAX_IDENTIFIER_BYTES + 1);
    for text in [
        format!("CREATE TABLE t (k int PRIMARY KEY, \"{name}\" int)"),
        format!("CREATE KEYSPACE {name} WITH replication = {{}}"),
        format!("CREATE TYPE ks.{name} (a int)"),
        format!("CREATE TYPE ks.u ({name} int)"),
        format!("SELECT k AS {name} FROM t"),
        format!("SELECT * FROM t WHERE k = :{name}"),
        format!("DROP INDEX {name}"),
    ] {
        let message = parse_statement(&text).unwrap_err().to_string();
        assert!(message.contains("identifier too long"), "{message}");
    }
}

#[test]
fn empty_elements_in_table_columns_and_type_fields() {
    // cassandra-stress's counter1 table, as its `write` and `counter_write` create it.
    let stress = "CREATE TABLE IF NOT EXISTS counter1 (key blob PRIMARY KEY,\n, \"C0\" counter, \"C1\" counter)";
    let Statement::CreateTable(table) = parse_statement(stress).unwrap() else {
        panic!("not a table");
    };
    let names: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["key", "C0", "C1"]);
    for text in [
        "CREATE TABLE t (k int PRIMARY KEY,,, v int,)",
        "CREATE TABLE t (k int PRIMARY KEY, , )",
        "CREATE TABLE t (k int, v int,, PRIMARY KEY (k),)",
        "CREATE TYPE u (a int,, b int,)",
    ] {
        assert!(parse_statement(text).is_ok(), "{text}");
    }
    // The first element is required, as in Cassandra.
    for text in [
        "CREATE TABLE t (, k int PRIMARY KEY)",
        "CREATE TYPE u (, a int)",
    ] {
        let message = parse_statement(text).unwrap_err().to_string();
        assert!(
            message.contains("no viable alternative at input ','"),
            "{message}"
        );
    }
}

#[test]
fn any_number_of_trailing_semicolons() {
    for text in [
        "SELECT * FROM t;;;",
        "SELECT * FROM t ; ; ",
        "DESCRIBE KEYSPACES;;",
    ] {
        assert!(parse(text).is_ok(), "{text}");
    }
    assert_eq!(
        parse_statement(";").unwrap_err().to_string(),
        "line 1:0 no viable alternative at input ';' ([;])"
    );
}
