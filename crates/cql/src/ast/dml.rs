//! AST of queries and writes: SELECT, INSERT, UPDATE, DELETE, BATCH, with
//! their selectors, WHERE relations, assignments and IF conditions.

use super::{ArithOp, CastType, Operator, Order, QualifiedName, Term, TypeExpr};

/// `SELECT ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    pub json: bool,
    pub distinct: bool,
    /// `None` for `*`.
    pub selectors: Option<Vec<Selector>>,
    pub table: QualifiedName,
    pub where_clause: Vec<Relation>,
    pub group_by: Vec<SelectorExpr>,
    pub order_by: Vec<Ordering>,
    pub per_partition_limit: Option<Term>,
    pub limit: Option<Term>,
    pub allow_filtering: bool,
}

/// One output column of a SELECT, with its optional `AS` alias.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    pub expr: SelectorExpr,
    pub alias: Option<String>,
}

/// A selection expression.
#[derive(Debug, Clone, PartialEq)]
pub enum SelectorExpr {
    Column(String),
    /// A literal, `NULL` or bind marker.
    Term(Term),
    /// `WRITETIME(col)`; the target is a column, possibly with field/element access.
    WriteTime(Box<SelectorExpr>),
    MaxWriteTime(Box<SelectorExpr>),
    Ttl(Box<SelectorExpr>),
    /// `COUNT(*)`.
    CountRows,
    Cast(Box<SelectorExpr>, CastType),
    FunctionCall {
        name: QualifiedName,
        args: Vec<SelectorExpr>,
    },
    /// `udt_col.field`.
    Field(Box<SelectorExpr>, String),
    /// `coll['key']`.
    Element(Box<SelectorExpr>, Term),
    /// `coll[from..to]`, either bound optional.
    Slice {
        target: Box<SelectorExpr>,
        from: Option<Term>,
        to: Option<Term>,
    },
    /// `(type) selector`.
    TypeHint(TypeExpr, Box<SelectorExpr>),
    Negated(Box<SelectorExpr>),
    Arithmetic {
        op: ArithOp,
        left: Box<SelectorExpr>,
        right: Box<SelectorExpr>,
    },
    /// `(a, b)`.
    Tuple(Vec<SelectorExpr>),
    /// `(a)`: Cassandra cannot tell it from a tuple of one element, so it has a type only
    /// where its receiver gives one (a function's argument, an operand, a type hint).
    Parenthesized(Box<SelectorExpr>),
    List(Vec<SelectorExpr>),
    Set(Vec<SelectorExpr>),
    /// `{k: v, ...}`: a map, or a UDT literal when keys are field names
    /// (then they parse as `Column`).
    Map(Vec<(SelectorExpr, SelectorExpr)>),
}

/// One `ORDER BY` entry; `ann_of` holds the vector of `ORDER BY c ANN OF [..]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Ordering {
    pub column: String,
    pub ann_of: Option<Term>,
    pub order: Order,
}

/// A WHERE-clause relation.
///
/// For `IN`, `value` is a `Term::List` of the parenthesised values, or a bind
/// marker; for multi-column `IN` the list holds tuples or markers.
#[derive(Debug, Clone, PartialEq)]
pub enum Relation {
    Single {
        column: String,
        op: Operator,
        value: Term,
    },
    /// `m['k'] = v`.
    MapElement {
        column: String,
        key: Term,
        op: Operator,
        value: Term,
    },
    /// `(a, b) > (1, 2)`, `(a, b) IN ((1, 2), (3, 4))`.
    MultiColumn {
        columns: Vec<String>,
        op: Operator,
        value: Term,
    },
    /// `token(a, b) > token(?, ?)`.
    Token {
        columns: Vec<String>,
        op: Operator,
        value: Term,
    },
    IsNotNull(String),
    /// `expr(index_name, 'query')`.
    CustomIndex {
        index: QualifiedName,
        value: Term,
    },
}

/// `USING TTL x AND TIMESTAMP y` options.
#[derive(Debug, Clone, PartialEq)]
pub enum UsingOption {
    Ttl(Term),
    Timestamp(Term),
}

/// `INSERT INTO ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Insert {
    pub table: QualifiedName,
    pub values: InsertValues,
    pub if_not_exists: bool,
    pub using: Vec<UsingOption>,
}

/// What an INSERT writes.
#[derive(Debug, Clone, PartialEq)]
pub enum InsertValues {
    /// `(c1, c2) VALUES (v1, v2)`.
    Columns {
        columns: Vec<String>,
        values: Vec<Term>,
    },
    /// `JSON '...' [DEFAULT UNSET|NULL]`; `default_unset` is false for NULL (the default).
    Json { value: Term, default_unset: bool },
}

/// `UPDATE ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    pub table: QualifiedName,
    pub using: Vec<UsingOption>,
    pub assignments: Vec<Assignment>,
    pub where_clause: Vec<Relation>,
    pub conditions: Option<Conditions>,
}

/// One `SET` item of an UPDATE.
#[derive(Debug, Clone, PartialEq)]
pub enum Assignment {
    /// `c = v`.
    Set(String, Term),
    /// `c[k] = v`.
    SetElement(String, Term, Term),
    /// `c.f = v`.
    SetField(String, String, Term),
    /// `c = c + v`, `c += v` (also counters).
    Add(String, Term),
    /// `c = c - v`, `c -= v`.
    Subtract(String, Term),
    /// `c = v + c`.
    Prepend(String, Term),
}

/// The `IF` part of a conditional write.
#[derive(Debug, Clone, PartialEq)]
pub enum Conditions {
    Exists,
    Columns(Vec<Condition>),
}

/// One `IF` condition; for `IN`, `value` is a `Term::List` or a marker.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub target: ConditionTarget,
    pub op: Operator,
    pub value: Term,
}

/// What a condition tests.
#[derive(Debug, Clone, PartialEq)]
pub enum ConditionTarget {
    Column(String),
    Element(String, Term),
    Field(String, String),
}

/// `DELETE ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Delete {
    /// Empty means the whole row(s).
    pub columns: Vec<DeleteTarget>,
    pub table: QualifiedName,
    pub using_timestamp: Option<Term>,
    pub where_clause: Vec<Relation>,
    pub conditions: Option<Conditions>,
}

/// One deleted item.
#[derive(Debug, Clone, PartialEq)]
pub enum DeleteTarget {
    Column(String),
    Element(String, Term),
    Field(String, String),
}

/// `BEGIN [UNLOGGED|COUNTER] BATCH ... APPLY BATCH`.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub kind: BatchKind,
    pub using: Vec<UsingOption>,
    /// Only `Insert`, `Update` and `Delete` statements.
    pub statements: Vec<super::Statement>,
}

/// Batch type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchKind {
    Logged,
    Unlogged,
    Counter,
}
