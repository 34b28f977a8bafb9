//! Statement terms (literals, markers, collection literals, function calls, operations,
//! casts and type hints) analysed against the column that receives them, as Cassandra's
//! `Term.Raw.prepare`: the receiver's type chooses among overloads, and arguments are then
//! analysed against the chosen function's parameter types. Calls of pure functions on
//! constants are computed once, here.
use std::sync::Arc;

use bytes::Bytes;
use cql::ast::{Literal, LiteralKind as AstKind, Term};
use types::limits::MAX_NESTING;
use types::literal::{is_assignable, parse_literal};
use types::result::ColumnSpec;
use types::{CqlError, CqlResult, CqlType};

use crate::calls::{self, known, literal_kind, term_arg, Context};
use crate::functions::{self, CallName, Env};
use crate::operand::{Binder, Operand};

/// Analyses `term` as a value for `receiver`.
pub fn analyze(term: &Term, receiver: &ColumnSpec, binder: &mut Binder) -> CqlResult<Operand> {
    analyze_at(term, receiver, binder, 0)
}

/// Analyses a term found `depth` levels inside the statement's term. The parser bounds the
/// nesting; this limit keeps the recursion bounded for any tree (and for the collection values
/// built from it) all the same.
fn analyze_at(
    term: &Term,
    receiver: &ColumnSpec,
    binder: &mut Binder,
    depth: usize,
) -> CqlResult<Operand> {
    if depth > MAX_NESTING {
        return Err(CqlError::invalid(format!(
            "Invalid value for \"{}\": terms nest at most {MAX_NESTING} levels",
            receiver.name
        )));
    }
    let depth = depth + 1;
    match term {
        Term::Null => Ok(Operand::null()),
        Term::Bind(m) => Ok(binder.bind(m.index, m.name.as_deref(), receiver.clone())),
        Term::Literal(lit) => literal(lit, receiver).map(|b| Operand::Const(Some(b))),
        Term::Negated(inner) => match inner.as_ref() {
            Term::Literal(lit) if matches!(lit.kind, AstKind::Integer | AstKind::Float) => {
                let negated = Literal {
                    kind: lit.kind,
                    text: format!("-{}", lit.text),
                };
                literal(&negated, receiver).map(|b| Operand::Const(Some(b)))
            }
            other => call(&calls::negation_call(), &[other], receiver, binder, depth),
        },
        Term::TypeCast { ty, term: inner } => type_hint(ty, inner, term, receiver, binder, depth),
        Term::List(items) | Term::Set(items) => sequence(term, items, receiver, binder, depth),
        Term::Map(pairs) => map(pairs, receiver, binder, depth),
        Term::Tuple(items) => tuple(items, receiver, binder, depth),
        Term::UserTypeLiteral(fields) => udt(fields, receiver, binder, depth),
        Term::FunctionCall { name, args } => {
            let args: Vec<&Term> = args.iter().collect();
            if calls::is_token(&calls::call_name(name)) {
                return token(&args, receiver, binder, depth);
            }
            known(&calls::call_name(name), &calls::written_name(name))?;
            call(&calls::call_name(name), &args, receiver, binder, depth)
        }
        Term::Arithmetic { op, left, right } => {
            let name = functions::operation_name(calls::operator(*op));
            call(
                &calls::native_call(name),
                &[left, right],
                receiver,
                binder,
                depth,
            )
        }
        Term::Cast { term, ty } => {
            let name = functions::cast_name(ty.name());
            let cast = CallName {
                keyspace: Some("system"),
                name: &name,
            };
            known(&cast, &format!("system.{name}"))?;
            call(&cast, &[term], receiver, binder, depth)
        }
    }
}

/// `(type) term`: the term analysed as a value of the hinted type, which must fit the
/// receiver.
fn type_hint(
    ty: &cql::ast::TypeExpr,
    inner: &Term,
    whole: &Term,
    receiver: &ColumnSpec,
    binder: &mut Binder,
    depth: usize,
) -> CqlResult<Operand> {
    let hinted = crate::ddl::hint_type(ty, &receiver.keyspace)?;
    let fits = functions::Arg::typed("", hinted.clone()).fit(&receiver.ty);
    if fits == functions::Fit::No {
        return Err(CqlError::invalid(format!(
            "Cannot assign value {} to {} of type {}",
            calls::arg_text(whole),
            receiver.name,
            receiver.ty.cql_name()
        )));
    }
    let spec = ColumnSpec {
        ty: hinted,
        ..receiver.clone()
    };
    analyze_at(inner, &spec, binder, depth)
}

/// A function call (also an operator or a cast) whose result goes to `receiver`.
fn call(
    name: &CallName<'_>,
    args: &[&Term],
    receiver: &ColumnSpec,
    binder: &mut Binder,
    depth: usize,
) -> CqlResult<Operand> {
    let described = described(args, receiver)?;
    let function = functions::resolve(name, &described, Some(&receiver.ty))?;
    apply(function, args, receiver, binder, depth)
}

/// `token(…)`: the token function of the statement's table, whose parameters are its
/// partition key (Cassandra's `TokenFct` of the receiver's table).
fn token(
    args: &[&Term],
    receiver: &ColumnSpec,
    binder: &mut Binder,
    depth: usize,
) -> CqlResult<Operand> {
    let function = binder
        .token_function()
        .ok_or_else(|| CqlError::invalid("Unknown function token called"))?;
    functions::check_single(&function, &described(args, receiver)?)?;
    apply(Arc::new(function), args, receiver, binder, depth)
}

/// What resolution knows of a call's arguments.
fn described(args: &[&Term], receiver: &ColumnSpec) -> CqlResult<Vec<functions::Arg>> {
    args.iter()
        .map(|t| term_arg(t, &receiver.keyspace, Context::Statement))
        .collect()
}

/// The call of a chosen function: its result must fit the receiver; its arguments are
/// analysed against its parameter types; a pure function of constants is computed now.
fn apply(
    function: Arc<functions::Function>,
    args: &[&Term],
    receiver: &ColumnSpec,
    binder: &mut Binder,
    depth: usize,
) -> CqlResult<Operand> {
    if !functions::value_compatible(&receiver.ty, &function.ret) {
        return Err(CqlError::invalid(format!(
            "Type error: cannot assign result of function {} (type {}) to {} (type {})",
            function.qualified(),
            function.ret.cql_name(),
            receiver.name,
            receiver.ty.cql_name()
        )));
    }
    let mut operands = Vec::with_capacity(args.len());
    for (i, (arg, ty)) in args.iter().zip(&function.args).enumerate() {
        let spec = ColumnSpec {
            name: format!("arg{i}({})", function.qualified()),
            ty: ty.clone(),
            ..receiver.clone()
        };
        operands.push(analyze_at(arg, &spec, binder, depth)?);
    }
    let constants: Option<Vec<Option<Bytes>>> = operands
        .iter()
        .map(|o| match o {
            Operand::Const(v) => Some(v.clone()),
            _ => None,
        })
        .collect();
    match constants {
        Some(values) if function.pure => {
            let env = Env {
                now_micros: crate::exec::unique_micros(),
            };
            function.call(&values, &env).map(Operand::Const)
        }
        _ => Ok(Operand::Call(function, operands)),
    }
}

fn literal(lit: &Literal, receiver: &ColumnSpec) -> CqlResult<Bytes> {
    let kind = literal_kind(lit.kind);
    let invalid = || {
        CqlError::invalid(format!(
            "Invalid {} constant ({}) for \"{}\" of type {}",
            kind_name(lit.kind),
            lit.text,
            receiver.name,
            receiver.ty.cql_name()
        ))
    };
    let target = match receiver.ty.unfrozen() {
        CqlType::Native(_) if is_assignable(&receiver.ty, kind) => &receiver.ty,
        // Cassandra reads any constant but a blob for a tuple with TupleType.fromString.
        CqlType::Tuple(types) if lit.kind != AstKind::Hex => {
            return types::literal::tuple_from_string(types, &lit.text, &receiver.ty.cql_name())
                .map_err(|e| e.into_cql(""));
        }
        _ => return Err(invalid()),
    };
    // A constant of a kind the type takes but cannot read fails with the type's own message
    // (Cassandra's `fromString`): `Unable to make int from '3000000000'`.
    parse_literal(target, kind, &lit.text)
        .map(|v| v.to_bytes())
        .map_err(|e| e.into_cql(""))
}

fn kind_name(kind: AstKind) -> &'static str {
    match kind {
        AstKind::String => "STRING",
        AstKind::Integer => "INTEGER",
        AstKind::Float => "FLOAT",
        AstKind::Boolean => "BOOLEAN",
        AstKind::Uuid => "UUID",
        AstKind::Hex => "HEX",
        AstKind::Duration => "DURATION",
    }
}

fn element_spec(receiver: &ColumnSpec, ty: &CqlType, what: &str) -> ColumnSpec {
    ColumnSpec {
        name: format!("{}({})", what, receiver.name),
        ty: ty.clone(),
        ..receiver.clone()
    }
}

fn sequence(
    term: &Term,
    items: &[Term],
    receiver: &ColumnSpec,
    binder: &mut Binder,
    depth: usize,
) -> CqlResult<Operand> {
    let elem = match (receiver.ty.unfrozen(), term) {
        (CqlType::List(e), Term::List(_)) | (CqlType::Set(e), Term::Set(_)) => e.as_ref().clone(),
        (CqlType::Vector(e, n), Term::List(_)) => {
            if items.len() != *n as usize {
                return Err(CqlError::invalid(format!(
                    "Invalid vector literal for {} of type {}; expected {} elements, but given {}",
                    receiver.name,
                    receiver.ty.cql_name(),
                    n,
                    items.len()
                )));
            }
            e.as_ref().clone()
        }
        (CqlType::Map(..), Term::Set(items)) if items.is_empty() => {
            return composite(receiver, Vec::new())
        }
        (_, Term::List(_)) => return Err(functions::list_receiver_refused(&receiver.ty)),
        _ => return Err(unsupported(term, receiver)),
    };
    let (what, markers_refused) = match receiver.ty.unfrozen() {
        CqlType::Vector(..) => ("vector", false),
        CqlType::Set(_) => ("set", true),
        _ => ("list", true),
    };
    let literal = CollectionLiteral::new(what, receiver);
    for item in items {
        literal.check_fits("value", item, &elem)?;
    }
    let spec = element_spec(receiver, &elem, "value");
    let mut parts = Vec::with_capacity(items.len());
    for item in items {
        parts.push(analyze_at(item, &spec, binder, depth)?);
        if markers_refused {
            literal.refuse_markers(item)?;
        }
    }
    composite(receiver, parts)
}

/// A collection literal being analysed, for Cassandra's checks and messages of its elements.
struct CollectionLiteral<'a> {
    what: &'static str,
    receiver: &'a ColumnSpec,
}

impl<'a> CollectionLiteral<'a> {
    fn new(what: &'static str, receiver: &'a ColumnSpec) -> Self {
        CollectionLiteral { what, receiver }
    }

    /// Cassandra's `validateAssignableTo`: each element (or key) must fit its type before any
    /// is analysed.
    fn check_fits(&self, role: &str, item: &Term, ty: &CqlType) -> CqlResult<()> {
        let takes_lists = matches!(ty.unfrozen(), CqlType::List(_) | CqlType::Vector(..));
        if matches!(item, Term::List(_)) && !takes_lists {
            return Err(functions::list_receiver_refused(ty));
        }
        if fits(item, ty, &self.receiver.keyspace) {
            return Ok(());
        }
        Err(CqlError::invalid(format!(
            "Invalid {} literal for {}: {role} {} is not of type {}",
            self.what,
            self.receiver.name,
            term_text(item),
            ty.cql_name()
        )))
    }

    /// Lists, sets and maps take no bind marker among their elements, at any depth.
    fn refuse_markers(&self, item: &Term) -> CqlResult<()> {
        if !holds_marker(item) {
            return Ok(());
        }
        Err(CqlError::invalid(format!(
            "Invalid {} literal for {}: bind variables are not supported inside collection literals",
            self.what, self.receiver.name
        )))
    }
}

/// Cassandra's `testAssignment` of an element to its type, as far as it can be told before
/// analysis (a term whose fit cannot be told is left to its analysis).
fn fits(item: &Term, ty: &CqlType, keyspace: &str) -> bool {
    term_arg(item, keyspace, Context::Statement)
        .map_or(true, |arg| arg.fit(ty) != functions::Fit::No)
}

/// Whether a bind marker hides anywhere in the term.
fn holds_marker(term: &Term) -> bool {
    match term {
        Term::Bind(_) => true,
        Term::Literal(_) | Term::Null => false,
        Term::List(items) | Term::Set(items) | Term::Tuple(items) => items.iter().any(holds_marker),
        Term::Map(pairs) => pairs
            .iter()
            .any(|(k, v)| holds_marker(k) || holds_marker(v)),
        Term::UserTypeLiteral(fields) => fields.iter().any(|(_, t)| holds_marker(t)),
        Term::FunctionCall { args, .. } => args.iter().any(holds_marker),
        Term::TypeCast { term, .. } | Term::Cast { term, .. } | Term::Negated(term) => {
            holds_marker(term)
        }
        Term::Arithmetic { left, right, .. } => holds_marker(left) || holds_marker(right),
    }
}

fn map(
    pairs: &[(Term, Term)],
    receiver: &ColumnSpec,
    binder: &mut Binder,
    depth: usize,
) -> CqlResult<Operand> {
    let (k, v) = match receiver.ty.unfrozen() {
        CqlType::Map(k, v) => (k.as_ref().clone(), v.as_ref().clone()),
        CqlType::Udt(_) => return Err(unsupported(&Term::Map(pairs.to_vec()), receiver)),
        _ => return Err(unsupported(&Term::Map(pairs.to_vec()), receiver)),
    };
    let literal = CollectionLiteral::new("map", receiver);
    for (kt, vt) in pairs {
        literal.check_fits("key", kt, &k)?;
        literal.check_fits("value", vt, &v)?;
    }
    let (kspec, vspec) = (
        element_spec(receiver, &k, "key"),
        element_spec(receiver, &v, "value"),
    );
    let mut parts = Vec::with_capacity(pairs.len() * 2);
    for (kt, vt) in pairs {
        parts.push(analyze_at(kt, &kspec, binder, depth)?);
        parts.push(analyze_at(vt, &vspec, binder, depth)?);
        literal.refuse_markers(kt)?;
        literal.refuse_markers(vt)?;
    }
    composite(receiver, parts)
}

fn tuple(
    items: &[Term],
    receiver: &ColumnSpec,
    binder: &mut Binder,
    depth: usize,
) -> CqlResult<Operand> {
    let types = match (receiver.ty.unfrozen(), items) {
        (CqlType::Tuple(t), _) => t.clone(),
        // `(x)` is a tuple of one or `x` in parentheses: the receiver tells which.
        (_, [only]) => return analyze_at(only, receiver, binder, depth),
        _ => return Err(unsupported(&Term::Tuple(items.to_vec()), receiver)),
    };
    if items.len() > types.len() {
        return Err(CqlError::invalid(format!(
            "Invalid tuple literal for {}: too many elements. Type {} expects {} but got {}",
            receiver.name,
            receiver.ty.cql_name(),
            types.len(),
            items.len()
        )));
    }
    for (i, (item, ty)) in items.iter().zip(&types).enumerate() {
        if !fits(item, ty, &receiver.keyspace) {
            return Err(CqlError::invalid(format!(
                "Invalid tuple literal for {}: component {i} is not of type {}",
                receiver.name,
                ty.cql_name()
            )));
        }
    }
    let mut parts = Vec::with_capacity(types.len());
    for (i, ty) in types.iter().enumerate() {
        let spec = element_spec(receiver, ty, &format!("{}", i));
        parts.push(match items.get(i) {
            Some(t) => analyze_at(t, &spec, binder, depth)?,
            None => Operand::null(),
        });
    }
    composite(receiver, parts)
}

fn udt(
    fields: &[(String, Term)],
    receiver: &ColumnSpec,
    binder: &mut Binder,
    depth: usize,
) -> CqlResult<Operand> {
    let udt = match receiver.ty.unfrozen() {
        CqlType::Udt(u) => u.clone(),
        _ => {
            return Err(unsupported(
                &Term::UserTypeLiteral(fields.to_vec()),
                receiver,
            ))
        }
    };
    for (name, _) in fields {
        if !udt.fields.iter().any(|(f, _)| f == name) {
            return Err(CqlError::invalid(format!(
                "Unknown field '{}' in value of user defined type {}",
                name, udt.name
            )));
        }
    }
    let mut parts = Vec::with_capacity(udt.fields.len());
    for (fname, fty) in &udt.fields {
        let spec = element_spec(receiver, fty, fname);
        parts.push(match fields.iter().find(|(n, _)| n == fname) {
            Some((_, t)) => analyze_at(t, &spec, binder, depth)?,
            None => Operand::null(),
        });
    }
    composite(receiver, parts)
}

/// Folds a composite whose parts are all constant into one constant.
fn composite(receiver: &ColumnSpec, parts: Vec<Operand>) -> CqlResult<Operand> {
    if parts.iter().all(|p| matches!(p, Operand::Const(_))) {
        let values = parts
            .into_iter()
            .map(|p| match p {
                Operand::Const(v) => v,
                _ => None,
            })
            .collect();
        return crate::collections::build(&receiver.ty, values).map(|b| Operand::Const(Some(b)));
    }
    Ok(Operand::Composite {
        ty: receiver.ty.clone(),
        parts,
    })
}

/// A composite literal for a receiver of another kind, named as Cassandra names it.
fn unsupported(term: &Term, receiver: &ColumnSpec) -> CqlError {
    let what = match term {
        Term::Set(_) => "set literal",
        Term::Map(_) => "map literal",
        Term::Tuple(_) => "tuple type literal",
        Term::UserTypeLiteral(_) => "user type literal",
        _ => {
            return CqlError::invalid(format!(
                "Invalid value {} for \"{}\" of type {}",
                term_text(term),
                receiver.name,
                receiver.ty.cql_name()
            ))
        }
    };
    CqlError::invalid(format!(
        "Invalid {what} for {} of type {}",
        receiver.name,
        receiver.ty.cql_name()
    ))
}

/// A term as Cassandra prints it in messages: `'a'`, `[1, 2]`, `{1}`, `(1, 'x')`, `?`.
pub fn term_text(term: &Term) -> String {
    let join = |items: &[Term]| items.iter().map(term_text).collect::<Vec<_>>().join(", ");
    match term {
        Term::Literal(l) if l.kind == AstKind::String => {
            format!("'{}'", l.text.replace('\'', "''"))
        }
        Term::Literal(l) => l.text.clone(),
        Term::Null => "null".to_string(),
        Term::Bind(m) => m.name.as_ref().map_or("?".to_string(), |n| format!(":{n}")),
        Term::List(items) => format!("[{}]", join(items)),
        Term::Set(items) => format!("{{{}}}", join(items)),
        Term::Tuple(items) => format!("({})", join(items)),
        Term::Map(pairs) => {
            let pairs: Vec<String> = pairs
                .iter()
                .map(|(k, v)| format!("{}: {}", term_text(k), term_text(v)))
                .collect();
            format!("{{{}}}", pairs.join(", "))
        }
        Term::Negated(inner) => format!("-{}", term_text(inner)),
        _ => "?".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cql::ast::LiteralKind;
    use types::limits::on_worker_stack;
    use types::NativeType;

    /// A `frozen<list<...>>` column `depth` levels deep around an int.
    fn receiver(depth: usize) -> ColumnSpec {
        let ty = (0..depth).fold(CqlType::Native(NativeType::Int), |t, _| {
            CqlType::List(Box::new(t)).freeze()
        });
        ColumnSpec {
            keyspace: "ks".into(),
            table: "t".into(),
            name: "c".into(),
            ty,
        }
    }

    /// `[[...[?]...]]`, `depth` lists around a bind marker, built without the parser.
    fn nested_list(depth: usize) -> Term {
        let marker = Term::Bind(cql::ast::BindMarker {
            index: 0,
            name: None,
        });
        (0..depth).fold(marker, |t, _| Term::List(vec![t]))
    }

    #[test]
    fn terms_nested_to_the_limit_analyse_on_a_worker_stack() {
        let (term, column) = (nested_list(MAX_NESTING), receiver(MAX_NESTING));
        // Analysed to the bottom, where Cassandra refuses the marker in a collection literal.
        let analysed = on_worker_stack(|| analyze(&term, &column, &mut Binder::new(1)));
        let Err(CqlError::Invalid(message)) = analysed else {
            panic!("{analysed:?}");
        };
        assert!(message.ends_with("bind variables are not supported inside collection literals"));
        let literal = Term::Literal(cql::ast::Literal {
            kind: LiteralKind::Integer,
            text: "7".into(),
        });
        let constant = (0..MAX_NESTING).fold(literal, |t, _| Term::List(vec![t]));
        let folded = on_worker_stack(|| analyze(&constant, &column, &mut Binder::new(0)));
        assert!(matches!(folded, Ok(Operand::Const(Some(_)))));
    }

    #[test]
    fn terms_nested_past_the_limit_are_refused() {
        let depth = MAX_NESTING + 1;
        let (term, column) = (nested_list(depth), receiver(depth));
        let refused = on_worker_stack(|| analyze(&term, &column, &mut Binder::new(1)));
        let Err(CqlError::Invalid(message)) = refused else {
            panic!("{refused:?}");
        };
        assert!(
            message.ends_with("terms nest at most 100 levels"),
            "{message}"
        );
    }

    /// Cassandra 5.0.4 has no `cast_as_varchar`: a term cast to varchar calls an unknown
    /// function, named with its keyspace.
    #[test]
    fn a_term_cast_to_varchar_calls_an_unknown_function() {
        let Ok(cql::ast::Statement::Insert(insert)) =
            cql::parse_statement("INSERT INTO t (k, c) VALUES (1, CAST(1 AS varchar))")
        else {
            panic!("not an insert");
        };
        let text = ColumnSpec {
            ty: CqlType::Native(NativeType::Text),
            ..receiver(0)
        };
        let cql::ast::InsertValues::Columns { values, .. } = insert.values else {
            panic!("not a VALUES insert");
        };
        assert_eq!(
            analyze(&values[1], &text, &mut Binder::new(0)).map(|_| ()),
            Err(CqlError::invalid(
                "Unknown function system.cast_as_varchar called"
            ))
        );
    }

    /// The term of `WHERE k = value`, parsed.
    fn where_value(value: &str) -> Term {
        let text = format!("SELECT * FROM t WHERE k = {value}");
        let Ok(cql::ast::Statement::Select(select)) = cql::parse_statement(&text) else {
            panic!("not a select: {text}");
        };
        let relation = select.where_clause.first().cloned();
        let Some(cql::ast::Relation::Single { value, .. }) = relation else {
            panic!("no relation: {text}");
        };
        value
    }

    /// Cassandra 5.0.4 words an unknown function called anywhere inside a term of a statement
    /// (in a call, an operation or a negation) as one called directly, outermost first.
    #[test]
    fn an_unknown_function_inside_a_term_is_called() {
        let analyzed = |value: &str| {
            analyze(&where_value(value), &receiver(0), &mut Binder::new(0)).map(|_| ())
        };
        for (value, unknown) in [
            ("- k(1)", "k"),
            ("abs(abs(nosuch()))", "nosuch"),
            ("1 + - nosuch(1)", "nosuch"),
            ("nosuch() + 1", "nosuch"),
            ("nosuch1(nosuch2())", "nosuch1"),
            ("abs(ks.nosuch())", "ks.nosuch"),
        ] {
            let expected = format!("Unknown function {unknown} called");
            assert_eq!(analyzed(value), Err(CqlError::invalid(expected)), "{value}");
        }
    }

    /// An unknown function among a call's arguments fits any parameter (Cassandra's
    /// `testAssignment` of a call it cannot resolve): the call is refused first when no
    /// overload takes that many arguments, and a CAST of it is ambiguous.
    #[test]
    fn a_call_is_checked_before_the_unknown_functions_in_its_arguments() {
        for (value, start) in [
            (
                "abs(nosuch1(), nosuch2())",
                "Invalid call to function abs, none of its type signatures match",
            ),
            (
                "intAsBlob(nosuch1(), 2)",
                "Invalid number of arguments in call to function system.intasblob: 1 required but 2 provided",
            ),
            ("CAST(nosuch() AS int)", "Ambiguous call to function system.cast_as_int"),
            ("CAST(token(1) AS int)", "Ambiguous call to function system.cast_as_int"),
            ("abs(nosuch1())", "Unknown function nosuch1 called"),
        ] {
            let refused = analyze(&where_value(value), &receiver(0), &mut Binder::new(0));
            let Err(CqlError::Invalid(message)) = refused else {
                panic!("{value}: {refused:?}");
            };
            assert!(message.starts_with(start), "{value}: {message}");
        }
    }

    /// Cassandra 5.0.4's list literal is a value of a list or a vector only: given to a set,
    /// a map, a scalar column or a function parameter of another type it is refused with its
    /// own message (a set or a map takes no list literal).
    #[test]
    fn a_list_literal_is_refused_for_any_receiver_but_a_list_or_vector() {
        let set = ColumnSpec {
            ty: CqlType::Set(Box::new(CqlType::Native(NativeType::Int))),
            ..receiver(0)
        };
        let blob = ColumnSpec {
            ty: CqlType::Native(NativeType::Blob),
            ..receiver(0)
        };
        for (value, receiver, ty) in [
            ("[1]", &set, "set<int>"),
            ("[1]", &receiver(0), "int"),
            ("intAsBlob([1, 2])", &blob, "int"),
            ("abs([])", &receiver(0), "int"),
        ] {
            let refused = analyze(&where_value(value), receiver, &mut Binder::new(0));
            let expected =
                format!("Unexpected receiver type '{ty}'; only list and vector are expected");
            assert_eq!(refused, Err(CqlError::invalid(expected)), "{value}");
        }
        let list = receiver(1);
        assert!(analyze(&where_value("[1, 2]"), &list, &mut Binder::new(0)).is_ok());
    }

    /// A binder on a table keyed by an int and a text.
    fn on_int_text_key() -> Binder {
        use schema::{ColumnMetadata, TableMetadata, TableOptions};
        let columns = vec![
            ColumnMetadata::partition_key("a", CqlType::Native(NativeType::Int), 0),
            ColumnMetadata::partition_key("b", CqlType::Native(NativeType::Text), 1),
        ];
        let table = TableMetadata::new(
            "ks",
            "t",
            uuid::Uuid::nil(),
            columns,
            TableOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut binder = Binder::new(0);
        binder.on_table(&table);
        binder
    }

    /// `token(…)` as a value: the token of its arguments as a partition key of the
    /// statement's table, a bigint, checked as a function of the key's types.
    #[test]
    fn token_in_a_term_is_the_partition_key_token_of_its_arguments() {
        let bigint = ColumnSpec {
            ty: CqlType::Native(NativeType::Bigint),
            ..receiver(0)
        };
        let key = crate::keys::partition_key(&[
            Bytes::from_static(&[0, 0, 0, 1]),
            Bytes::from_static(b"x"),
        ]);
        let expected = Operand::Const(Some(Bytes::copy_from_slice(&key.token.to_be_bytes())));
        for value in [
            "token(1, 'x')",
            "system.token(1, 'x')",
            "(bigint) token((int) 1, 'x')",
        ] {
            let analysed = analyze(&where_value(value), &bigint, &mut on_int_text_key());
            assert_eq!(analysed, Ok(expected.clone()), "{value}");
        }
        for (value, receiver, message) in [
            ("token(1)", &bigint, "Invalid number of arguments in call to function system.token: 2 required but 1 provided"),
            ("token('x', 1)", &bigint, "Type error: 'x' cannot be passed as argument 0 of function system.token of type int"),
            ("token(1, 'x')", &receiver(0), "Type error: cannot assign result of function system.token (type bigint) to c (type int)"),
        ] {
            let refused = analyze(&where_value(value), receiver, &mut on_int_text_key());
            assert_eq!(refused, Err(CqlError::invalid(message)), "{value}");
        }
        let unbound = analyze(&where_value("token(1, 'x')"), &bigint, &mut Binder::new(0));
        assert_eq!(
            unbound,
            Err(CqlError::invalid("Unknown function token called"))
        );
    }

    /// A minus before a value no overload takes: Cassandra 5.0.4 names the call with its
    /// keyspace and lists the overloads with the name quoted, as CQL writes `_negate`.
    #[test]
    fn a_negation_no_overload_takes_names_system_negate() {
        let Ok(cql::ast::Statement::Select(select)) =
            cql::parse_statement("SELECT * FROM t WHERE k = -'a'")
        else {
            panic!("not a select");
        };
        let Some(cql::ast::Relation::Single { value, .. }) = select.where_clause.first() else {
            panic!("no relation");
        };
        let refused = analyze(value, &receiver(0), &mut Binder::new(0)).map(|_| ());
        let Err(CqlError::Invalid(message)) = refused else {
            panic!("{refused:?}");
        };
        let prefix = "Invalid call to function system._negate, none of its type signatures \
                      match (known type signatures: system.\"_negate\" : (";
        assert!(message.starts_with(prefix), "{message}");
        assert!(
            message.contains(", system.\"_negate\" : (int) -> int"),
            "{message}"
        );
    }

    /// Cassandra 5.0.4: a constant of a kind the type does not take is an `Invalid <KIND>
    /// constant`; one it takes but cannot read fails with the type's own message.
    #[test]
    fn constants_the_type_cannot_read_fail_in_the_types_words() {
        let refused = |ty: NativeType, kind: LiteralKind, text: &str| {
            let column = ColumnSpec {
                ty: CqlType::Native(ty),
                ..receiver(0)
            };
            let literal = Term::Literal(cql::ast::Literal {
                kind,
                text: text.into(),
            });
            match analyze(&literal, &column, &mut Binder::new(0)) {
                Err(CqlError::Invalid(message)) => message,
                other => panic!("{text}: {other:?}"),
            }
        };
        use NativeType::{Blob, Int, Time, Timestamp};
        let cases = [
            (
                Int,
                LiteralKind::Integer,
                "3000000000",
                "Unable to make int from '3000000000'",
            ),
            (
                Int,
                LiteralKind::String,
                "a",
                "Invalid STRING constant (a) for \"c\" of type int",
            ),
            (
                Timestamp,
                LiteralKind::String,
                "abc",
                "Unable to parse a date/time from 'abc'",
            ),
            (
                Blob,
                LiteralKind::Hex,
                "0x123",
                "cannot parse '123' as hex bytes",
            ),
            (
                Time,
                LiteralKind::String,
                "10:00",
                "(TimeType) Unable to coerce '10:00' to a formatted time (long)",
            ),
        ];
        for (ty, kind, text, message) in cases {
            assert_eq!(refused(ty, kind, text), message);
        }
    }

    /// Cassandra 5.0.4 lets `Instant.toEpochMilli`'s exception through: a server error.
    #[test]
    fn a_timestamp_past_long_milliseconds_is_a_server_error() {
        let column = ColumnSpec {
            ty: CqlType::Native(NativeType::Timestamp),
            ..receiver(0)
        };
        let literal = Term::Literal(cql::ast::Literal {
            kind: LiteralKind::String,
            text: "292278995-01-02 03:04 PST".into(),
        });
        assert_eq!(
            analyze(&literal, &column, &mut Binder::new(0)).map(|_| ()),
            Err(CqlError::Server(types::error::LONG_OVERFLOW.into()))
        );
    }
}
