//! Statements written for the fuzz keyspace: selects with selectors, relations, ordering,
//! grouping and limits; inserts (also as JSON), updates with collection and counter
//! operations, deletes of rows, ranges and elements, conditions, batches, and now and then
//! a schema change. Names and values mostly fit the table, so the inputs get past analysis
//! into execution; now and then they do not.

use super::literals::{key_int, key_text, term};
use super::schema::{Column, Kind, Role, Table, KEYSPACE, TABLES};
use crate::rng::Rng;

pub fn statement(rng: &mut Rng) -> String {
    let table = rng.pick(&TABLES);
    match rng.below(20) {
        0..=5 => select(rng, table),
        6..=9 if !table.is_counter() => insert(rng, table),
        6..=13 => update(rng, table),
        14..=15 => delete(rng, table),
        16..=18 => batch(rng),
        _ => schema_change(rng, table),
    }
}

fn name(table: &Table) -> String {
    format!("{KEYSPACE}.{}", table.name)
}

/// `count` distinct picks of `columns`, in their order (at least one if any).
fn some<'a>(rng: &mut Rng, columns: impl Iterator<Item = &'a Column>) -> Vec<&'a Column> {
    let all: Vec<&Column> = columns.collect();
    let chosen: Vec<&Column> = all.iter().copied().filter(|_| rng.one_in(2)).collect();
    match (chosen.is_empty(), all.is_empty()) {
        (true, false) => vec![*rng.pick(&all)],
        _ => chosen,
    }
}

fn any_column(rng: &mut Rng, table: &Table) -> &'static Column {
    let columns: &'static [Column] = rng.pick(&TABLES).columns;
    match rng.one_in(12) {
        true => rng.pick(columns),
        false => rng.pick(table.columns),
    }
}

/// A value for `column`: key columns from a small domain so that rows meet.
fn value(rng: &mut Rng, column: &Column) -> String {
    let key = matches!(column.role, Role::Partition | Role::Clustering);
    match (key && !rng.one_in(10), column.kind) {
        (true, Kind::Int) => key_int(rng),
        (true, Kind::Text) => key_text(rng),
        _ => term(rng, column.kind),
    }
}

fn select(rng: &mut Rng, table: &Table) -> String {
    let json = if rng.one_in(16) { "JSON " } else { "" };
    let distinct = if rng.one_in(12) { "DISTINCT " } else { "" };
    let selectors = match rng.below(4) {
        0 => "*".to_string(),
        _ => {
            let n = 1 + rng.size(5);
            (0..n)
                .map(|_| selector(rng, table))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let mut text = format!("SELECT {json}{distinct}{selectors} FROM {}", name(table));
    text.push_str(&where_clause(rng, table));
    text.push_str(&select_tail(rng, table));
    text
}

fn selector(rng: &mut Rng, table: &Table) -> String {
    let column = any_column(rng, table);
    let c = column.name;
    match rng.below(16) {
        0 => format!("writetime({c})"),
        1 => format!("ttl({c})"),
        2 => "count(*)".into(),
        3 => format!("{}({c})", rng.pick(&["max", "min", "sum", "avg", "count"])),
        4 => format!(
            "CAST({c} AS {})",
            rng.pick(&["text", "int", "bigint", "double", "blob"])
        ),
        5 => format!("toJson({c})"),
        6 => format!("{c} AS alias_{}", rng.below(3)),
        7 => format!("token({})", partition_names(table)),
        8 => format!("{c}[{}]", key_text(rng)),
        9 => format!("{c}[{}..{}]", key_text(rng), key_text(rng)),
        10 => format!("{c}.{}", rng.pick(&["street", "zip", "nope"])),
        11 => format!(
            "{c} {} {}",
            rng.pick(&["+", "-", "*", "/", "%"]),
            key_int(rng)
        ),
        12 => format!("maxwritetime({c})"),
        _ => c.to_string(),
    }
}

fn partition_names(table: &Table) -> String {
    table
        .with_role(Role::Partition)
        .map(|c| c.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// ` WHERE ...` for a select: the partition key mostly, sometimes a token range, clustering
/// relations of any kind, sometimes a filter on another column.
fn where_clause(rng: &mut Rng, table: &Table) -> String {
    let mut relations: Vec<String> = Vec::new();
    if !rng.one_in(5) {
        relations.extend(partition_relations(rng, table));
    }
    if rng.one_in(6) {
        relations.push(format!(
            "token({}) {} {}",
            partition_names(table),
            rng.pick(&[">", ">=", "<", "<="]),
            rng.edgy_i64()
        ));
    }
    for column in table.with_role(Role::Clustering) {
        if rng.one_in(2) {
            relations.push(clustering_relation(rng, column));
        }
    }
    if rng.one_in(3) {
        relations.push(filter_relation(rng, table));
    }
    conjunction(relations)
}

/// ` WHERE ...` for a modification: the whole primary key by equality; for a deletion, the
/// last clustering column now and then by a range or not at all (a range deletion).
fn key_clause(rng: &mut Rng, table: &Table, deletion: bool) -> String {
    let mut relations = partition_relations(rng, table);
    let clustering: Vec<&Column> = table.with_role(Role::Clustering).collect();
    for (i, column) in clustering.iter().enumerate() {
        let last = i + 1 == clustering.len();
        match (last && deletion, rng.below(8)) {
            (true, 0) => relations.push(clustering_relation(rng, column)),
            (true, 1) => {}
            _ => relations.push(format!("{} = {}", column.name, value(rng, column))),
        }
    }
    conjunction(relations)
}

fn partition_relations(rng: &mut Rng, table: &Table) -> Vec<String> {
    let mut relations = Vec::new();
    for column in table.with_role(Role::Partition) {
        if !rng.one_in(20) {
            relations.push(key_relation(rng, column));
        }
    }
    relations
}

fn conjunction(relations: Vec<String>) -> String {
    match relations.is_empty() {
        true => String::new(),
        false => format!(" WHERE {}", relations.join(" AND ")),
    }
}

fn key_relation(rng: &mut Rng, column: &Column) -> String {
    match rng.below(5) {
        0 => {
            let n = rng.size(5);
            let values: Vec<String> = (0..n).map(|_| value(rng, column)).collect();
            format!("{} IN ({})", column.name, values.join(", "))
        }
        _ => format!("{} = {}", column.name, value(rng, column)),
    }
}

fn clustering_relation(rng: &mut Rng, column: &Column) -> String {
    let op = rng.pick(&["=", "<", "<=", ">", ">=", "IN"]);
    match *op {
        "IN" => format!(
            "{} IN ({}, {})",
            column.name,
            value(rng, column),
            value(rng, column)
        ),
        op => format!("{} {op} {}", column.name, value(rng, column)),
    }
}

fn filter_relation(rng: &mut Rng, table: &Table) -> String {
    let column = any_column(rng, table);
    let c = column.name;
    match rng.below(8) {
        0 => format!("{c} CONTAINS {}", key_int(rng)),
        1 => format!("{c} CONTAINS KEY {}", key_text(rng)),
        2 => format!("{c}[{}] = {}", key_text(rng), key_int(rng)),
        3 => format!("{c} != {}", value(rng, column)),
        4 => format!("{c} LIKE 'a%'"),
        5 => {
            let keys: Vec<&str> = table.with_role(Role::Clustering).map(|c| c.name).collect();
            let values: Vec<String> = (0..keys.len()).map(|_| key_int(rng)).collect();
            format!("({}) >= ({})", keys.join(", "), values.join(", "))
        }
        _ => format!("{c} {} {}", rng.pick(&["=", ">", "<"]), value(rng, column)),
    }
}

/// GROUP BY, ORDER BY, PER PARTITION LIMIT, LIMIT and ALLOW FILTERING, each now and then.
fn select_tail(rng: &mut Rng, table: &Table) -> String {
    let mut tail = String::new();
    let keys: Vec<&str> = table
        .columns
        .iter()
        .filter(|c| matches!(c.role, Role::Partition | Role::Clustering))
        .map(|c| c.name)
        .collect();
    if rng.one_in(16) {
        let n = 1 + rng.below(keys.len());
        tail.push_str(&format!(" GROUP BY {}", keys[..n].join(", ")));
    }
    if let (true, Some(first)) = (rng.one_in(6), table.with_role(Role::Clustering).next()) {
        tail.push_str(&format!(
            " ORDER BY {} {}",
            first.name,
            rng.pick(&["ASC", "DESC"])
        ));
    }
    if rng.one_in(8) {
        tail.push_str(&format!(" PER PARTITION LIMIT {}", limit(rng)));
    }
    if rng.one_in(4) {
        tail.push_str(&format!(" LIMIT {}", limit(rng)));
    }
    if rng.one_in(3) {
        tail.push_str(" ALLOW FILTERING");
    }
    tail
}

fn limit(rng: &mut Rng) -> String {
    match rng.one_in(6) {
        true => rng.edgy_i64().to_string(),
        false => (1 + rng.below(4)).to_string(),
    }
}

/// ` USING TTL n AND TIMESTAMP n`, one of them, or nothing (mostly, on counter tables).
fn using(rng: &mut Rng, table: &Table) -> String {
    if table.is_counter() && !rng.one_in(10) {
        return String::new();
    }
    match rng.below(6) {
        0 => format!(
            " USING TTL {}",
            rng.pick(&["0", "1", "3600", "630720001", "-1"])
        ),
        1 => format!(" USING TIMESTAMP {}", rng.edgy_i64()),
        2 => format!(
            " USING TTL {} AND TIMESTAMP {}",
            rng.pick(&["2", "86400"]),
            rng.below(3000)
        ),
        _ => String::new(),
    }
}

fn insert(rng: &mut Rng, table: &Table) -> String {
    if rng.one_in(12) {
        return insert_json(rng, table);
    }
    let key = table
        .columns
        .iter()
        .filter(|c| matches!(c.role, Role::Partition | Role::Clustering))
        .filter(|_| !rng.one_in(25));
    let mut columns: Vec<&Column> = key.collect();
    columns.extend(some(rng, table.values()));
    let names: Vec<&str> = columns.iter().map(|c| c.name).collect();
    let values: Vec<String> = columns.iter().map(|c| value(rng, c)).collect();
    let exists = if rng.one_in(16) { " IF NOT EXISTS" } else { "" };
    format!(
        "INSERT INTO {} ({}) VALUES ({}){exists}{}",
        name(table),
        names.join(", "),
        values.join(", "),
        using(rng, table)
    )
}

/// `INSERT ... JSON '{...}'` with CQL literals as JSON values where they fit.
fn insert_json(rng: &mut Rng, table: &Table) -> String {
    let mut fields = Vec::new();
    for column in table.columns {
        if column.role != Role::Regular || rng.one_in(2) {
            let literal = value(rng, column).replace('\'', "\"");
            fields.push(format!("\"{}\": {literal}", column.name));
        }
    }
    let default = rng.pick(&["", " DEFAULT NULL", " DEFAULT UNSET"]);
    format!(
        "INSERT INTO {} JSON '{{{}}}'{default}",
        name(table),
        fields.join(", ").replace('\'', "''")
    )
}

fn update(rng: &mut Rng, table: &Table) -> String {
    let assignments: Vec<String> = some(rng, table.values())
        .into_iter()
        .map(|c| assignment(rng, c))
        .collect();
    format!(
        "UPDATE {}{} SET {}{}{}",
        name(table),
        using(rng, table),
        assignments.join(", "),
        key_clause(rng, table, false),
        condition(rng, table)
    )
}

fn assignment(rng: &mut Rng, column: &Column) -> String {
    let c = column.name;
    let v = value(rng, column);
    if column.kind == Kind::Counter {
        return format!("{c} = {c} {} {}", rng.pick(&["+", "-"]), rng.edgy_i64());
    }
    if !column.kind.is_collection() || rng.one_in(3) {
        return format!("{c} = {v}");
    }
    match rng.below(5) {
        0 => format!("{c} = {c} + {v}"),
        1 => format!("{c} = {v} + {c}"),
        2 => format!("{c} = {c} - {v}"),
        3 if column.kind == Kind::List => format!("{c}[{}] = {}", key_int(rng), key_int(rng)),
        _ => format!("{c}[{}] = {}", key_text(rng), key_int(rng)),
    }
}

/// ` IF EXISTS`, ` IF <conditions>` or nothing (mostly).
fn condition(rng: &mut Rng, table: &Table) -> String {
    match rng.below(16) {
        0 => " IF EXISTS".into(),
        1 => {
            let columns = some(rng, table.values());
            let conditions: Vec<String> = columns
                .iter()
                .map(|c| {
                    let op = rng.pick(&["=", "!=", ">", "<=", "IN"]);
                    match *op {
                        "IN" => format!("{} IN ({}, null)", c.name, value(rng, c)),
                        op => format!("{} {op} {}", c.name, value(rng, c)),
                    }
                })
                .collect();
            format!(" IF {}", conditions.join(" AND "))
        }
        _ => String::new(),
    }
}

fn delete(rng: &mut Rng, table: &Table) -> String {
    let targets: Vec<String> = match rng.below(3) {
        0 => some(rng, table.values())
            .into_iter()
            .map(|c| match (c.kind, rng.one_in(2)) {
                (Kind::Map, true) => format!("{}[{}]", c.name, key_text(rng)),
                (Kind::List, true) => format!("{}[{}]", c.name, key_int(rng)),
                _ => c.name.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    };
    let timestamp = match rng.one_in(5) {
        true => format!(" USING TIMESTAMP {}", rng.below(5000)),
        false => String::new(),
    };
    format!(
        "DELETE {} FROM {}{timestamp}{}{}",
        targets.join(", "),
        name(table),
        key_clause(rng, table, true),
        condition(rng, table)
    )
}

fn batch(rng: &mut Rng) -> String {
    let kind = rng.pick(&["", "UNLOGGED ", "COUNTER "]);
    let counters = *kind == "COUNTER " || rng.one_in(10);
    let tables: Vec<&Table> = TABLES
        .iter()
        .filter(|t| t.is_counter() == counters)
        .collect();
    let n = 1 + rng.size(6);
    let statements: Vec<String> = (0..n)
        .map(|_| {
            let table = *rng.pick(&tables);
            match rng.below(3) {
                0 if !counters => insert(rng, table),
                1 => delete(rng, table),
                _ => update(rng, table),
            }
        })
        .collect();
    let timestamp = match rng.one_in(4) {
        true => format!("USING TIMESTAMP {} ", rng.below(5000)),
        false => String::new(),
    };
    format!(
        "BEGIN {kind}BATCH {timestamp}{}; APPLY BATCH",
        statements.join("; ")
    )
}

/// A change to a table or the type: the node is started afresh often enough that what is
/// taken away comes back.
fn schema_change(rng: &mut Rng, table: &Table) -> String {
    let column = rng.pick(table.columns).name;
    let table = name(table);
    match rng.below(8) {
        0 => format!(
            "ALTER TABLE {table} ADD extra_{} {}",
            rng.below(3),
            rng.pick(&["int", "text", "list<int>", "frozen<address>"])
        ),
        1 => format!("ALTER TABLE {table} DROP {column}"),
        2 => format!("ALTER TABLE {table} RENAME {column} TO renamed"),
        3 => format!(
            "ALTER TABLE {table} WITH gc_grace_seconds = {} AND comment = 'c'",
            rng.below(2)
        ),
        4 => format!("TRUNCATE {table}"),
        5 => format!(
            "ALTER TYPE {KEYSPACE}.address ADD extra_{} int",
            rng.below(3)
        ),
        6 => format!("CREATE INDEX IF NOT EXISTS ON {table} ({column})"),
        _ => format!("SELECT * FROM system_schema.columns WHERE keyspace_name = '{KEYSPACE}'"),
    }
}
