//! Values in statements: literals, bind markers, collection/tuple/UDT
//! literals, function calls, casts and arithmetic; plus type expressions.

use types::NativeType;

use super::QualifiedName;

/// The type named in `CAST(x AS type)`. `varchar` is text, but Cassandra has no cast
/// functions to it: only what is text already casts to varchar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CastType {
    pub native: NativeType,
    pub varchar: bool,
}

impl CastType {
    /// The type's name as written (`varchar` kept apart from `text`).
    pub fn name(self) -> &'static str {
        if self.varchar {
            "varchar"
        } else {
            self.native.name()
        }
    }
}

/// What kind of constant a `Literal` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiteralKind {
    String,
    Integer,
    /// Includes `NaN`, `Infinity` and `-Infinity`.
    Float,
    Boolean,
    Uuid,
    Hex,
    Duration,
}

/// A constant. `text` is as written, except strings, which hold their
/// unescaped contents (no quotes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    pub kind: LiteralKind,
    pub text: String,
}

/// A `?` or `:name` placeholder; `index` counts every marker of the statement
/// (anonymous and named alike) in order of appearance from 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindMarker {
    pub index: usize,
    pub name: Option<String>,
}

/// Binary arithmetic operators (Cassandra 4+ term/selector arithmetic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// A value expression.
///
/// `{}` is ambiguous between an empty set and an empty map; like Cassandra it
/// parses as `Set(vec![])` and the type checker must accept it for maps.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    Literal(Literal),
    Null,
    Bind(BindMarker),
    List(Vec<Term>),
    Set(Vec<Term>),
    Map(Vec<(Term, Term)>),
    Tuple(Vec<Term>),
    UserTypeLiteral(Vec<(String, Term)>),
    FunctionCall {
        name: QualifiedName,
        args: Vec<Term>,
    },
    /// `(int) ?`: a type hint.
    TypeCast {
        ty: TypeExpr,
        term: Box<Term>,
    },
    /// `CAST(term AS type)`.
    Cast {
        term: Box<Term>,
        ty: CastType,
    },
    Negated(Box<Term>),
    Arithmetic {
        op: ArithOp,
        left: Box<Term>,
        right: Box<Term>,
    },
}

/// A CQL type as written.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeExpr {
    Native(NativeType),
    List(Box<TypeExpr>),
    Set(Box<TypeExpr>),
    Map(Box<TypeExpr>, Box<TypeExpr>),
    Tuple(Vec<TypeExpr>),
    Frozen(Box<TypeExpr>),
    /// `vector<element, dimension>`; the dimension as written (checked when resolved).
    Vector(Box<TypeExpr>, i32),
    UserType(QualifiedName),
    /// A quoted Java class name, e.g. `'org.apache.cassandra.db.marshal.BytesType'`.
    Custom(String),
}

/// Comparison operators of relations and conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    Eq,
    Lt,
    Lte,
    Gt,
    Gte,
    Neq,
    In,
    Contains,
    ContainsKey,
    Like,
}
