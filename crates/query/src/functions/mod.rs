//! Cassandra's native functions: one registry of functions by name, each with its type
//! signature, grouped in modules by family as Cassandra groups them (`time`, `conversion`
//! (CAST), `blob`, `collection`, `math`, `mask`, `vector`, `json`, `operation` (arithmetic)
//! and `aggregate`). A name maps either to a fixed set of overloads, resolved by argument
//! types with Cassandra's rules (`resolve`), or to a factory that builds the function for the
//! argument types it is called with (`toJson`, `map_keys`, `mask_*`, `min`, …).
//!
//! Functions run on decoded values (`types::Value`); `Function::call` decodes the serialized
//! arguments with the signature's types and encodes the result.
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use types::{CqlError, CqlResult, CqlType, Value};

mod aggregate;
mod bigmath;
mod blob;
mod collection;
mod conversion;
mod factory;
mod json;
mod mask;
mod math;
pub mod numeric;
mod operation;
mod resolve;
#[cfg(test)]
mod tests;
mod time;
mod vector;

pub use conversion::cast_name;
pub use operation::{operation_name, symbol_of as operation_symbol, Operator};
pub use resolve::{
    check_single, list_receiver_refused, value_compatible, Arg, ArgKind, Fit, NestedCall,
};

/// What a call can read besides its arguments: the moment of the execution.
#[derive(Clone, Copy, Debug)]
pub struct Env {
    pub now_micros: i64,
}

/// A scalar function body: decoded arguments (None is null) to the result.
pub type Scalar = dyn Fn(&[Option<Value>], &Env) -> CqlResult<Option<Value>> + Send + Sync;

/// The running state of one aggregate over the rows of a group.
pub trait Accumulator: Send {
    fn add(&mut self, args: &[Option<Value>]) -> CqlResult<()>;
    fn result(&self) -> CqlResult<Option<Value>>;
}

/// Makes the state of one aggregate for a new group.
pub type AggregateFactory = dyn Fn() -> Box<dyn Accumulator> + Send + Sync;

/// What a function does.
#[derive(Clone)]
pub enum Body {
    Scalar(Arc<Scalar>),
    Aggregate(Arc<AggregateFactory>),
}

/// One native function with its signature (`system.<name> : (args) -> ret`).
pub struct Function {
    /// The lower-case name (`abs`, `cast_as_int`, `_add`).
    pub name: String,
    pub args: Vec<CqlType>,
    pub ret: CqlType,
    pub body: Body,
    /// Whether the result depends only on the arguments (then calls on constants are folded
    /// when a statement is prepared; `now()` and `uuid()` are not).
    pub pure: bool,
    /// The type result metadata names when it is not `ret` (see `legacy_timeuuid`).
    pub reported: Option<CqlType>,
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl PartialEq for Function {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.args == other.args && self.ret == other.ret
    }
}

/// `system.abs : (int) -> int`, the name quoted when CQL needs it (`system."_negate"`), as
/// Cassandra lists signatures.
impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(CqlType::cql_name).collect();
        write!(
            f,
            "system.{} : ({}) -> {}",
            quoted_if_needed(&self.name),
            args.join(", "),
            self.ret.cql_name()
        )
    }
}

/// A name as CQL writes it: as is when it is a lowercase identifier, else in double quotes.
fn quoted_if_needed(name: &str) -> Cow<'_, str> {
    let mut chars = name.chars();
    let plain = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    match plain {
        true => Cow::Borrowed(name),
        false => Cow::Owned(format!("\"{}\"", name.replace('"', "\"\""))),
    }
}

impl Function {
    pub fn scalar(
        name: &str,
        args: Vec<CqlType>,
        ret: CqlType,
        body: impl Fn(&[Option<Value>], &Env) -> CqlResult<Option<Value>> + Send + Sync + 'static,
    ) -> Function {
        Function {
            name: name.to_string(),
            args,
            ret,
            body: Body::Scalar(Arc::new(body)),
            pure: true,
            reported: None,
        }
    }

    pub fn aggregate(
        name: &str,
        args: Vec<CqlType>,
        ret: CqlType,
        make: impl Fn() -> Box<dyn Accumulator> + Send + Sync + 'static,
    ) -> Function {
        Function {
            name: name.to_string(),
            args,
            ret,
            body: Body::Aggregate(Arc::new(make)),
            pure: true,
            reported: None,
        }
    }

    /// The same function, not folded at prepare time (its result changes between calls).
    pub fn impure(mut self) -> Function {
        self.pure = false;
        self
    }

    /// The type a result column of this function has in result metadata.
    pub fn reported_type(&self) -> &CqlType {
        self.reported.as_ref().unwrap_or(&self.ret)
    }

    /// The function of an `any` parameter (`min`, `max`, `mask_*`) returning its argument's
    /// type: when that is timeuuid, Cassandra 5.0.4 describes the result column as the custom
    /// type `LegacyTimeUUIDType` (values and further calls treat it as a timeuuid).
    pub fn legacy_timeuuid(mut self) -> Function {
        if self.ret.unfrozen() == &CqlType::Native(types::NativeType::Timeuuid) {
            self.reported = Some(CqlType::Custom(
                "org.apache.cassandra.db.marshal.LegacyTimeUUIDType".into(),
            ));
        }
        self
    }

    pub fn is_aggregate(&self) -> bool {
        matches!(self.body, Body::Aggregate(_))
    }

    /// `system.<name>`, as messages name the function.
    pub fn qualified(&self) -> String {
        format!("system.{}", self.name)
    }

    /// Decodes the arguments, runs a scalar body and encodes the result.
    pub fn call(&self, args: &[Option<Bytes>], env: &Env) -> CqlResult<Option<Bytes>> {
        let Body::Scalar(body) = &self.body else {
            return Err(CqlError::Server(format!(
                "aggregate {} called as a scalar",
                self.name
            )));
        };
        let values = self.decode(args)?;
        Ok(body(&values, env)?.map(|v| v.to_bytes()))
    }

    /// A new accumulator of an aggregate.
    pub fn accumulator(&self) -> Option<Box<dyn Accumulator>> {
        match &self.body {
            Body::Aggregate(make) => Some(make()),
            Body::Scalar(_) => None,
        }
    }

    /// The serialized arguments decoded with the signature's types.
    pub fn decode(&self, args: &[Option<Bytes>]) -> CqlResult<Vec<Option<Value>>> {
        args.iter()
            .zip(&self.args)
            .map(|(arg, ty)| arg.as_ref().map(|b| decode_arg(self, ty, b)).transpose())
            .collect()
    }
}

fn decode_arg(f: &Function, ty: &CqlType, bytes: &[u8]) -> CqlResult<Value> {
    Value::deserialize(ty, bytes).map_err(|_| {
        CqlError::invalid(format!(
            "In call to function {}, value 0x{} is not a valid binary representation for type {}",
            f.qualified(),
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>(),
            ty.cql_name()
        ))
    })
}

/// Builds the function of a name for the arguments of one call.
pub trait Factory: Send + Sync {
    fn create(&self, args: &[Arg]) -> CqlResult<Arc<Function>>;
}

enum Entry {
    Overloads(Vec<Arc<Function>>),
    Factory(Box<dyn Factory>),
}

/// Every native function by lower-case name.
#[derive(Default)]
pub struct Registry {
    entries: HashMap<String, Entry>,
}

impl Registry {
    fn add(&mut self, function: Function) {
        let entry = self
            .entries
            .entry(function.name.clone())
            .or_insert_with(|| Entry::Overloads(Vec::new()));
        if let Entry::Overloads(list) = entry {
            list.push(Arc::new(function));
        }
    }

    fn add_factory(&mut self, name: &str, factory: impl Factory + 'static) {
        self.entries
            .insert(name.to_string(), Entry::Factory(Box::new(factory)));
    }

    fn build() -> Registry {
        let mut r = Registry::default();
        time::register(&mut r);
        blob::register(&mut r);
        conversion::register(&mut r);
        math::register(&mut r);
        collection::register(&mut r);
        mask::register(&mut r);
        vector::register(&mut r);
        json::register(&mut r);
        operation::register(&mut r);
        aggregate::register(&mut r);
        r
    }

    /// Whether `name` (lower case) is a native function.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }
}

/// The registry, built once.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::build)
}

/// How a call names its function: `abs`, `system.abs`, `ks.f`.
#[derive(Clone, Debug)]
pub struct CallName<'a> {
    pub keyspace: Option<&'a str>,
    pub name: &'a str,
}

impl fmt::Display for CallName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.keyspace {
            Some(ks) => write!(f, "{ks}.{}", self.name),
            None => f.write_str(self.name),
        }
    }
}

/// Finds the function a call means (`receiver` is the type the result is assigned to, when
/// known), with Cassandra's errors for unknown names and unmatched or ambiguous arguments.
pub fn resolve(
    name: &CallName<'_>,
    args: &[Arg],
    receiver: Option<&CqlType>,
) -> CqlResult<Arc<Function>> {
    let lower = name.name.to_lowercase();
    let native_keyspace = name
        .keyspace
        .is_none_or(|k| k.eq_ignore_ascii_case("system"));
    let entry = native_keyspace
        .then(|| registry().entries.get(&lower))
        .flatten();
    let shown = CallName {
        keyspace: name.keyspace.map(|k| {
            if k.eq_ignore_ascii_case("system") {
                "system"
            } else {
                k
            }
        }),
        name: &lower,
    };
    if native_keyspace && lower == "fromjson" {
        let f = json::from_json_function(receiver)?;
        resolve::check_single(&f, args)?;
        return Ok(Arc::new(f));
    }
    match entry {
        None => Err(CqlError::invalid(format!("Unknown function '{shown}'"))),
        Some(Entry::Factory(factory)) => factory.create(args),
        Some(Entry::Overloads(candidates)) => {
            resolve::pick(&shown.to_string(), candidates, args, receiver)
        }
    }
}

/// Whether a call names a native function.
pub fn exists(name: &CallName<'_>) -> bool {
    let lower = name.name.to_lowercase();
    name.keyspace
        .is_none_or(|k| k.eq_ignore_ascii_case("system"))
        && (lower == "fromjson" || registry().contains(&lower))
}

/// `token(k1, …)` over values of the partition key types: the Murmur3 token as a bigint.
/// Not in the registry: its signature is the table's partition key.
pub fn token_function(key_types: Vec<CqlType>) -> Function {
    let bigint = CqlType::Native(types::NativeType::Bigint);
    Function::scalar("token", key_types, bigint, |args, _| {
        let parts: Option<Vec<Bytes>> = args
            .iter()
            .map(|a| a.as_ref().map(Value::to_bytes))
            .collect();
        Ok(parts.map(|p| Value::Bigint(crate::keys::partition_key(&p).token)))
    })
}
