//! Overload resolution, as Cassandra's `FunctionResolver`: an exact match on every argument
//! wins at once; otherwise the one candidate every argument can be assigned to; none is
//! "Invalid call", several are "Ambiguous call" (for operators, the overload whose operand
//! types are the receiver's type breaks the tie when no argument is a bind marker).
use std::sync::{Arc, Mutex};

use types::literal::{is_assignable, LiteralKind};
use types::{CqlError, CqlResult, CqlType, NativeType};

use super::{operation, Function};

/// What a call knows of one argument before the function is chosen.
#[derive(Clone, Debug)]
pub struct Arg {
    /// The argument as Cassandra prints it in messages and column names.
    pub text: String,
    pub kind: ArgKind,
}

#[derive(Clone, Debug)]
pub enum ArgKind {
    /// A column, function result, type hint or cast: its type is known.
    Typed(CqlType),
    /// A constant, with its text (as written, strings unquoted).
    Literal(LiteralKind, String),
    /// A collection, tuple or UDT literal; assignable only to such a type.
    Composite,
    /// A list literal of this many elements (also a vector literal).
    ListLiteral(usize),
    /// `(x)`: a tuple of one for a tuple parameter, else `x` itself.
    Parenthesized(Box<ArgKind>),
    Null,
    Marker,
    /// A call (also an operation, a negation or a cast) inside a term of a statement.
    Call(NestedCall),
}

/// A call among the arguments of another in a term of a statement. As in Cassandra's
/// `FunctionCall.Raw.testAssignment`, it is resolved anew for each parameter type it is tried
/// against (that type as its receiver): the result's type then fits as a typed value does,
/// and a call that cannot be resolved (an unknown function, `token`, no or several matching
/// overloads) fits any parameter weakly, its error left for its own analysis. `fromJson` and
/// `toJson`, whose types follow their receiver or argument, fit weakly too, as in Cassandra
/// 5.0.4.
#[derive(Clone, Debug)]
pub struct NestedCall {
    pub keyspace: Option<String>,
    pub name: String,
    pub args: Vec<Arg>,
    /// The fits found so far by parameter type: a nest of calls is resolved once per type
    /// and level, not once per path through the overloads.
    fits: Arc<Mutex<Vec<(CqlType, Fit)>>>,
}

impl NestedCall {
    pub fn new(keyspace: Option<&str>, name: &str, args: Vec<Arg>) -> NestedCall {
        NestedCall {
            keyspace: keyspace.map(str::to_string),
            name: name.to_string(),
            args,
            fits: Arc::default(),
        }
    }

    fn resolved(&self, receiver: Option<&CqlType>) -> Option<Arc<Function>> {
        let name = super::CallName {
            keyspace: self.keyspace.as_deref(),
            name: &self.name,
        };
        super::resolve(&name, &self.args, receiver)
            .ok()
            .filter(|f| !matches!(f.name.as_str(), "fromjson" | "tojson"))
    }

    fn fit(&self, ty: &CqlType) -> Fit {
        let known = |fits: &Vec<(CqlType, Fit)>| fits.iter().find(|(t, _)| t == ty).map(|f| f.1);
        if let Some(fit) = self.fits.lock().ok().and_then(|f| known(&f)) {
            return fit;
        }
        let fit = match self.resolved(Some(ty)) {
            Some(f) => typed_fit(&f.ret, ty),
            None => Fit::Weak,
        };
        if let Ok(mut fits) = self.fits.lock() {
            fits.push((ty.clone(), fit));
        }
        fit
    }
}

/// How well an argument fits a parameter type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    Exact,
    Weak,
    No,
}

impl Arg {
    pub fn typed(text: impl Into<String>, ty: CqlType) -> Arg {
        Arg {
            text: text.into(),
            kind: ArgKind::Typed(ty),
        }
    }

    /// The type Cassandra infers for the argument alone: a known type, or a literal's
    /// preferred type (`1` int, `1.5` double, `'a'` text).
    pub fn inferred_type(&self) -> Option<CqlType> {
        self.kind.inferred_type()
    }

    /// Cassandra's `testAssignment` of the argument to a parameter of type `ty`.
    pub fn fit(&self, ty: &CqlType) -> Fit {
        self.kind.fit(ty)
    }
}

impl ArgKind {
    fn inferred_type(&self) -> Option<CqlType> {
        match self {
            ArgKind::Typed(ty) => Some(ty.clone()),
            ArgKind::Literal(kind, text) => Some(CqlType::Native(preferred(*kind, text))),
            ArgKind::Parenthesized(inner) => inner.inferred_type(),
            ArgKind::Call(call) => call.resolved(None).map(|f| f.ret.clone()),
            _ => None,
        }
    }

    fn fit(&self, ty: &CqlType) -> Fit {
        match self {
            ArgKind::Typed(own) => typed_fit(own, ty),
            ArgKind::Literal(kind, text) => literal_fit(*kind, text, ty),
            ArgKind::Composite | ArgKind::ListLiteral(_) => composite_fit(ty),
            ArgKind::Parenthesized(inner) => match ty.unfrozen() {
                CqlType::Tuple(_) => composite_fit(ty),
                _ => inner.fit(ty),
            },
            ArgKind::Null | ArgKind::Marker => Fit::Weak,
            ArgKind::Call(call) => call.fit(ty),
        }
    }
}

/// Cassandra 5.0.4's list literal refuses to be tested against any type but a list or a vector
/// (its `testAssignment` throws rather than answering "not assignable").
pub fn list_receiver_refused(ty: &CqlType) -> CqlError {
    CqlError::invalid(format!(
        "Unexpected receiver type '{}'; only list and vector are expected",
        ty.cql_name()
    ))
}

/// The refusal of argument `arg` tested against a parameter of type `ty`, if it throws.
fn refusal(arg: &Arg, ty: &CqlType) -> CqlResult<()> {
    let list = matches!(arg.kind, ArgKind::ListLiteral(_));
    match ty.unfrozen() {
        CqlType::List(_) | CqlType::Vector(..) => Ok(()),
        _ if list => Err(list_receiver_refused(ty)),
        _ => Ok(()),
    }
}

fn composite_fit(ty: &CqlType) -> Fit {
    match ty.unfrozen() {
        CqlType::Native(_) => Fit::No,
        _ => Fit::Weak,
    }
}

/// The type a constant prefers (Cassandra's `Constants.Literal` preferred type: a string of
/// ASCII characters prefers ascii, a float that a double does not hold exactly decimal).
pub fn preferred(kind: LiteralKind, text: &str) -> NativeType {
    match kind {
        LiteralKind::String if text.is_ascii() => NativeType::Ascii,
        LiteralKind::String => NativeType::Text,
        LiteralKind::Integer if text.parse::<i32>().is_ok() => NativeType::Int,
        LiteralKind::Integer if text.parse::<i64>().is_ok() => NativeType::Bigint,
        LiteralKind::Integer => NativeType::Varint,
        LiteralKind::Float if types::literal::float_needs_decimal(text) => NativeType::Decimal,
        LiteralKind::Float => NativeType::Double,
        LiteralKind::Boolean => NativeType::Boolean,
        LiteralKind::Uuid => NativeType::Uuid,
        LiteralKind::Hex => NativeType::Blob,
        LiteralKind::Duration => NativeType::Duration,
    }
}

fn literal_fit(kind: LiteralKind, text: &str, ty: &CqlType) -> Fit {
    match ty.unfrozen() {
        CqlType::Native(n) if *n == preferred(kind, text) => Fit::Exact,
        CqlType::Native(NativeType::Ascii) if kind == LiteralKind::String && !text.is_ascii() => {
            Fit::No
        }
        // Constants are weakly assignable to every type that is not native, a collection, a
        // user type or a vector (Cassandra's `Constants.Literal.testAssignment`).
        CqlType::Custom(_) | CqlType::Tuple(_) => Fit::Weak,
        other if is_assignable(other, kind) => Fit::Weak,
        _ => Fit::No,
    }
}

fn typed_fit(own: &CqlType, ty: &CqlType) -> Fit {
    if own.unfrozen() == ty.unfrozen() {
        Fit::Exact
    } else if value_compatible(ty, own) {
        Fit::Weak
    } else {
        Fit::No
    }
}

/// Whether values of `from` are valid values of `to` (Cassandra 5.0's
/// `isValueCompatibleWith`: blob reads anything, text reads ascii, varint reads int, bigint
/// and timestamp, bigint and timestamp read each other, date reads int, uuid reads timeuuid).
pub fn value_compatible(to: &CqlType, from: &CqlType) -> bool {
    use NativeType as N;
    match (to.unfrozen(), from.unfrozen()) {
        (a, b) if a == b => true,
        (CqlType::Native(N::Blob), _) => true,
        (CqlType::Native(to), CqlType::Native(from)) => matches!(
            (to, from),
            (N::Text, N::Ascii)
                | (N::Varint, N::Int | N::Bigint | N::Timestamp)
                | (N::Bigint, N::Timestamp)
                | (N::Timestamp, N::Bigint)
                | (N::Date, N::Int)
                | (N::Uuid, N::Timeuuid)
        ),
        (CqlType::List(a), CqlType::List(b)) | (CqlType::Set(a), CqlType::Set(b)) => {
            value_compatible(a, b)
        }
        (CqlType::Map(ka, va), CqlType::Map(kb, vb)) => ka == kb && value_compatible(va, vb),
        _ => false,
    }
}

/// Picks among `candidates` of the function written `name`.
pub fn pick(
    name: &str,
    candidates: &[Arc<Function>],
    args: &[Arg],
    receiver: Option<&CqlType>,
) -> CqlResult<Arc<Function>> {
    if let [only] = candidates {
        check_single(only, args)?;
        return Ok(only.clone());
    }
    let mut compatible = Vec::new();
    for f in candidates {
        if !returns_into(f, receiver) {
            continue;
        }
        match fits(f, args)? {
            Fit::Exact => return Ok(f.clone()),
            Fit::Weak => compatible.push(f.clone()),
            Fit::No => {}
        }
    }
    match compatible.len() {
        1 => Ok(compatible.remove(0)),
        0 => Err(no_match(name, candidates, args)),
        _ => ambiguous(name, compatible, args, receiver),
    }
}

fn returns_into(f: &Function, receiver: Option<&CqlType>) -> bool {
    receiver.is_none_or(|r| typed_fit(&f.ret, r) != Fit::No)
}

/// How well the arguments fit `f`'s parameters, tested in order as Cassandra does (a list
/// literal tested against another type fails the call).
fn fits(f: &Function, args: &[Arg]) -> CqlResult<Fit> {
    if f.args.len() != args.len() {
        return Ok(Fit::No);
    }
    let mut result = Fit::Exact;
    for (arg, ty) in args.iter().zip(&f.args) {
        refusal(arg, ty)?;
        match arg.fit(ty) {
            Fit::No => return Ok(Fit::No),
            Fit::Weak => result = Fit::Weak,
            Fit::Exact => {}
        }
    }
    Ok(result)
}

/// The checks of a name with one overload, with their more precise messages.
pub fn check_single(f: &Function, args: &[Arg]) -> CqlResult<()> {
    if f.args.len() != args.len() {
        return Err(CqlError::invalid(format!(
            "Invalid number of arguments in call to function {}: {} required but {} provided",
            f.qualified(),
            f.args.len(),
            args.len()
        )));
    }
    for (i, (arg, ty)) in args.iter().zip(&f.args).enumerate() {
        refusal(arg, ty)?;
        if arg.fit(ty) == Fit::No {
            return Err(CqlError::invalid(format!(
                "Type error: {} cannot be passed as argument {i} of function {} of type {}",
                arg.text,
                f.qualified(),
                ty.cql_name()
            )));
        }
    }
    Ok(())
}

fn listed(functions: &[Arc<Function>]) -> String {
    let shown: Vec<String> = functions.iter().map(|f| f.to_string()).collect();
    shown.join(", ")
}

fn no_match(name: &str, candidates: &[Arc<Function>], args: &[Arg]) -> CqlError {
    if let (Some(op), [left, right]) = (operation::symbol_of(name), args) {
        return CqlError::invalid(format!(
            "the '{op}' operation is not supported between {} and {}",
            left.text, right.text
        ));
    }
    CqlError::invalid(format!(
        "Invalid call to function {name}, none of its type signatures match (known type signatures: {})",
        listed(candidates)
    ))
}

fn ambiguous(
    name: &str,
    compatible: Vec<Arc<Function>>,
    args: &[Arg],
    receiver: Option<&CqlType>,
) -> CqlResult<Arc<Function>> {
    if let Some(op) = operation::symbol_of(name) {
        let markers = args.iter().any(|a| matches!(a.kind, ArgKind::Marker));
        if let (Some(r), false) = (receiver, markers) {
            let same = |f: &&Arc<Function>| f.args.iter().all(|a| a.unfrozen() == r.unfrozen());
            if let Some(f) = compatible.iter().find(same) {
                return Ok(f.clone());
            }
        }
        let text = |i: usize| args.get(i).map_or("", |a| a.text.as_str());
        return Err(CqlError::invalid(format!(
            "Ambiguous '{op}' operation with args {} and {}: use type hint to disambiguate, example '(int) ?'",
            text(0),
            text(1)
        )));
    }
    if name.ends_with("_negate") {
        return Err(CqlError::invalid(
            "Ambiguous negation: use type casts to disambiguate",
        ));
    }
    Err(CqlError::invalid(format!(
        "Ambiguous call to function {name} (can be matched by following signatures: {}): use type casts to disambiguate",
        listed(&compatible)
    )))
}
