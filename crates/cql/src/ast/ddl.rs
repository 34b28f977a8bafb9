//! AST of schema statements: keyspaces, tables, types, indexes, materialized
//! views, triggers, functions and aggregates.

use super::{Literal, Order, QualifiedName, Relation, Selector, Term, TypeExpr};

/// The value of a `WITH name = value` property.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    Constant(Literal),
    /// `{'class': 'SimpleStrategy', 'replication_factor': 1}`.
    Map(Vec<(Literal, Literal)>),
    /// A bare (unreserved keyword) word, e.g. `WITH foo = ttl`.
    Identifier(String),
}

/// `name = value` properties, in the order written.
pub type Properties = Vec<(String, OptionValue)>;

/// `CREATE KEYSPACE`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateKeyspace {
    pub name: String,
    pub if_not_exists: bool,
    pub options: Properties,
}

/// `ALTER KEYSPACE`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterKeyspace {
    pub name: String,
    pub if_exists: bool,
    pub options: Properties,
}

/// A column mask: `MASKED WITH fn(args)`; `function` is `None` for `MASKED WITH DEFAULT`.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnMask {
    pub function: Option<QualifiedName>,
    pub args: Vec<Term>,
}

/// One column definition.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: TypeExpr,
    pub is_static: bool,
    pub mask: Option<ColumnMask>,
}

/// `CREATE TABLE`. An inline `c type PRIMARY KEY` sets `partition_key`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTable {
    pub name: QualifiedName,
    pub if_not_exists: bool,
    pub columns: Vec<ColumnDef>,
    pub partition_key: Vec<String>,
    pub clustering: Vec<String>,
    pub options: Properties,
    pub clustering_order: Vec<(String, Order)>,
    pub compact_storage: bool,
    /// How many PRIMARY KEY clauses (or column-level `PRIMARY KEY`s) were written; Cassandra
    /// refuses more than one when it prepares the statement.
    pub primary_key_clauses: usize,
}

/// `ALTER TABLE`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterTable {
    pub name: QualifiedName,
    pub if_exists: bool,
    pub action: AlterTableAction,
}

/// What an `ALTER TABLE` does.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterTableAction {
    /// `ALTER c TYPE t` (rejected by Cassandra 5 at execution, but parsed).
    AlterColumnType {
        column: String,
        ty: TypeExpr,
    },
    /// `ALTER [IF EXISTS] c MASKED WITH ...` / `DROP MASKED` (mask `None`).
    AlterColumnMask {
        column: String,
        if_exists: bool,
        mask: Option<ColumnMask>,
    },
    Add {
        if_not_exists: bool,
        columns: Vec<ColumnDef>,
    },
    /// `timestamp` is the `USING TIMESTAMP n` literal.
    Drop {
        if_exists: bool,
        columns: Vec<String>,
        timestamp: Option<Literal>,
    },
    Rename {
        if_exists: bool,
        renames: Vec<(String, String)>,
    },
    DropCompactStorage,
    With(Properties),
}

/// `CREATE TYPE`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateType {
    pub name: QualifiedName,
    pub if_not_exists: bool,
    pub fields: Vec<(String, TypeExpr)>,
}

/// `ALTER TYPE`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterType {
    pub name: QualifiedName,
    pub if_exists: bool,
    pub action: AlterTypeAction,
}

/// What an `ALTER TYPE` does.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterTypeAction {
    AlterField {
        field: String,
        ty: TypeExpr,
    },
    Add {
        if_not_exists: bool,
        field: String,
        ty: TypeExpr,
    },
    Rename {
        if_exists: bool,
        renames: Vec<(String, String)>,
    },
}

/// `CREATE [CUSTOM] INDEX`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateIndex {
    pub custom: bool,
    pub if_not_exists: bool,
    pub name: Option<String>,
    pub table: QualifiedName,
    pub targets: Vec<IndexTarget>,
    /// `USING 'class'`.
    pub using: Option<String>,
    pub options: Properties,
}

/// An indexed column and what of it is indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexTarget {
    pub kind: IndexTargetKind,
    pub column: String,
}

/// `c`, `KEYS(c)`, `VALUES(c)`, `ENTRIES(c)`, `FULL(c)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexTargetKind {
    Simple,
    Keys,
    Values,
    Entries,
    Full,
}

/// `CREATE MATERIALIZED VIEW`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateMaterializedView {
    pub name: QualifiedName,
    pub if_not_exists: bool,
    pub base_table: QualifiedName,
    /// `None` for `*`.
    pub selectors: Option<Vec<Selector>>,
    pub where_clause: Vec<Relation>,
    pub partition_key: Vec<String>,
    pub clustering: Vec<String>,
    pub clustering_order: Vec<(String, Order)>,
    pub options: Properties,
}

/// `ALTER MATERIALIZED VIEW`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterMaterializedView {
    pub name: QualifiedName,
    pub if_exists: bool,
    pub options: Properties,
}

/// `CREATE TRIGGER`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTrigger {
    pub name: String,
    pub if_not_exists: bool,
    pub table: QualifiedName,
    pub class: String,
}

/// `DROP TRIGGER`.
#[derive(Debug, Clone, PartialEq)]
pub struct DropTrigger {
    pub name: String,
    pub if_exists: bool,
    pub table: QualifiedName,
}

/// `CREATE FUNCTION`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateFunction {
    pub or_replace: bool,
    pub if_not_exists: bool,
    pub name: QualifiedName,
    pub args: Vec<(String, TypeExpr)>,
    pub called_on_null_input: bool,
    pub return_type: TypeExpr,
    /// Lowercased.
    pub language: String,
    pub body: String,
}

/// `CREATE AGGREGATE`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateAggregate {
    pub or_replace: bool,
    pub if_not_exists: bool,
    pub name: QualifiedName,
    pub arg_types: Vec<TypeExpr>,
    pub state_function: String,
    pub state_type: TypeExpr,
    pub final_function: Option<String>,
    pub initial_condition: Option<Term>,
}

/// `DROP FUNCTION` / `DROP AGGREGATE`; `arg_types` is `None` when no
/// signature was given.
#[derive(Debug, Clone, PartialEq)]
pub struct DropFunction {
    pub name: QualifiedName,
    pub if_exists: bool,
    pub arg_types: Option<Vec<TypeExpr>>,
}
