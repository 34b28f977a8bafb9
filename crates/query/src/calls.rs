//! What selection and term analysis share about function calls: the arguments a call knows
//! before its function is chosen (`Arg`), the names Cassandra gives calls in result columns
//! and messages, and the calls spelled as operators and casts.
use cql::ast::{ArithOp, LiteralKind as AstKind, QualifiedName, Term};
use types::literal::LiteralKind;
use types::{CqlError, CqlResult, CqlType, NativeType};

use crate::functions::{self, Arg, ArgKind, CallName, Function, NestedCall, Operator};
use crate::terms::term_text;

/// The lexical kind of an AST literal.
pub fn literal_kind(kind: AstKind) -> LiteralKind {
    match kind {
        AstKind::String => LiteralKind::String,
        AstKind::Integer => LiteralKind::Integer,
        AstKind::Float => LiteralKind::Float,
        AstKind::Boolean => LiteralKind::Boolean,
        AstKind::Uuid => LiteralKind::Uuid,
        AstKind::Hex => LiteralKind::Hex,
        AstKind::Duration => LiteralKind::Duration,
    }
}

/// The operator of an AST arithmetic operation.
pub fn operator(op: ArithOp) -> Operator {
    match op {
        ArithOp::Add => Operator::Add,
        ArithOp::Sub => Operator::Sub,
        ArithOp::Mul => Operator::Mul,
        ArithOp::Div => Operator::Div,
        ArithOp::Mod => Operator::Mod,
    }
}

/// Where a term stands: Cassandra words a call of an unknown function inside a term of a
/// statement (`Unknown function f called`) otherwise than inside a selector (`Unknown function
/// 'f'`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Statement,
    Selector,
}

/// A term as a function argument. Inside a selector, calls, operations and casts are
/// resolved on their own (no receiver) to learn their type; inside a term of a statement they
/// are resolved against each parameter type they are tried for (`NestedCall`).
pub fn term_arg(term: &Term, keyspace: &str, context: Context) -> CqlResult<Arg> {
    let text = arg_text(term);
    let kind = match term {
        Term::Literal(lit) => ArgKind::Literal(literal_kind(lit.kind), lit.text.clone()),
        Term::Negated(inner) => match inner.as_ref() {
            Term::Literal(lit) if matches!(lit.kind, AstKind::Integer | AstKind::Float) => {
                ArgKind::Literal(literal_kind(lit.kind), format!("-{}", lit.text))
            }
            _ => call_arg(term, keyspace, context)?,
        },
        Term::Null => ArgKind::Null,
        Term::Tuple(items) if items.len() == 1 => {
            ArgKind::Parenthesized(Box::new(term_arg(&items[0], keyspace, context)?.kind))
        }
        Term::Bind(_) => ArgKind::Marker,
        Term::List(items) => ArgKind::ListLiteral(items.len()),
        Term::Set(_) | Term::Map(_) | Term::Tuple(_) | Term::UserTypeLiteral(_) => {
            ArgKind::Composite
        }
        Term::TypeCast { ty, .. } => ArgKind::Typed(crate::ddl::hint_type(ty, keyspace)?),
        _ => call_arg(term, keyspace, context)?,
    };
    Ok(Arg { text, kind })
}

/// A call, operation or cast term as an argument.
fn call_arg(term: &Term, keyspace: &str, context: Context) -> CqlResult<ArgKind> {
    if let (Context::Selector, Term::Cast { ty, .. }) = (context, term) {
        return Ok(ArgKind::Typed(CqlType::Native(ty.native)));
    }
    let Some((name, args)) = call_parts(term) else {
        return Ok(ArgKind::Typed(CqlType::Native(NativeType::Blob)));
    };
    let args = args
        .into_iter()
        .map(|t| term_arg(t, keyspace, context))
        .collect::<CqlResult<Vec<_>>>()?;
    Ok(match context {
        Context::Statement => {
            ArgKind::Call(NestedCall::new(name.keyspace.as_deref(), &name.name, args))
        }
        Context::Selector => ArgKind::Typed(
            functions::resolve(&name.borrowed(), &args, None)?
                .ret
                .clone(),
        ),
    })
}

/// The function a call, operation, negation or cast term calls, and its arguments.
fn call_parts(term: &Term) -> Option<(OwnedCallName, Vec<&Term>)> {
    Some(match term {
        Term::FunctionCall { name, args } => {
            (OwnedCallName::of(&call_name(name)), args.iter().collect())
        }
        Term::Arithmetic { op, left, right } => (
            OwnedCallName::of(&native_call(functions::operation_name(operator(*op)))),
            vec![left.as_ref(), right.as_ref()],
        ),
        Term::Negated(inner) => (OwnedCallName::of(&negation_call()), vec![inner.as_ref()]),
        Term::Cast { term, ty } => (
            OwnedCallName {
                keyspace: Some("system".into()),
                name: functions::cast_name(ty.name()),
            },
            vec![term.as_ref()],
        ),
        _ => return None,
    })
}

/// A `CallName` that owns its parts.
struct OwnedCallName {
    keyspace: Option<String>,
    name: String,
}

impl OwnedCallName {
    fn of(name: &CallName<'_>) -> OwnedCallName {
        OwnedCallName {
            keyspace: name.keyspace.map(str::to_string),
            name: name.name.to_string(),
        }
    }

    fn borrowed(&self) -> CallName<'_> {
        CallName {
            keyspace: self.keyspace.as_deref(),
            name: &self.name,
        }
    }
}

/// Whether a call in a term is `token(…)` (`system.token` too): its parameters are the
/// partition key of the statement's table.
pub fn is_token(name: &CallName<'_>) -> bool {
    name.keyspace.is_none_or(|k| k == "system") && name.name == "token"
}

/// A function a term of a statement calls must exist (`written` is its name as the message
/// shows it).
pub fn known(name: &CallName<'_>, written: &str) -> CqlResult<()> {
    match functions::exists(name) {
        true => Ok(()),
        false => Err(CqlError::invalid(format!(
            "Unknown function {written} called"
        ))),
    }
}

/// A function's name as written (`now`, `ks.f`), as Cassandra's messages about terms show it.
pub fn written_name(name: &QualifiedName) -> String {
    match &name.keyspace {
        Some(ks) => format!("{ks}.{}", name.name),
        None => name.name.clone(),
    }
}

/// The function name of a call as written.
pub fn call_name(name: &QualifiedName) -> CallName<'_> {
    CallName {
        keyspace: name.keyspace.as_deref(),
        name: &name.name,
    }
}

/// A native function named without its keyspace.
pub fn native_call(name: &str) -> CallName<'_> {
    CallName {
        keyspace: None,
        name,
    }
}

/// The call of a unary minus: Cassandra names it with its keyspace (`Invalid call to function
/// system._negate`).
pub fn negation_call() -> CallName<'static> {
    CallName {
        keyspace: Some("system"),
        name: "_negate",
    }
}

/// A term as Cassandra prints it among a call's arguments (`NULL` in capitals, calls named
/// as written).
pub fn arg_text(term: &Term) -> String {
    match term {
        Term::Null => "NULL".into(),
        Term::FunctionCall { name, args } => {
            let args: Vec<String> = args.iter().map(arg_text).collect();
            format!("{}({})", written_name(name), args.join(", "))
        }
        Term::Arithmetic { op, left, right } => format!(
            "{} {} {}",
            arg_text(left),
            operator(*op).symbol(),
            arg_text(right)
        ),
        Term::TypeCast { ty, term } => format!("({}){}", type_text(ty), arg_text(term)),
        Term::Cast { term, ty } => format!("cast({} as {})", arg_text(term), ty.name()),
        other => term_text(other),
    }
}

pub fn type_text(ty: &cql::ast::TypeExpr) -> String {
    crate::ddl::hint_type(ty, "")
        .map(|t| t.cql_name())
        .unwrap_or_else(|_| "?".into())
}

/// The result column name of a call: `system.f(a, b)`, `a + b`, `-a`, `cast(a as t)`.
pub fn column_name(f: &Function, args: &[String]) -> String {
    if let Some(op) = crate::functions::operation_symbol(&f.name) {
        return format!("{} {op} {}", args[0], args[1]);
    }
    match f.name.as_str() {
        "_negate" => format!("-{}", args[0]),
        "countrows" => "count".into(),
        name if name.starts_with("cast_as_") => {
            format!("cast({} as {})", args[0], f.ret.cql_name())
        }
        _ => format!("{}({})", f.qualified(), args.join(", ")),
    }
}
