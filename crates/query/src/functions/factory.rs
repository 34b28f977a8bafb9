//! Functions whose signature follows their arguments' types (`toJson(any)`, `map_keys`,
//! `mask_*`, `similarity_*`, `min`/`max`/`count`): each call builds the function for the types
//! it is given, after Cassandra's checks of the argument count and of arguments whose type
//! cannot be inferred.
use std::sync::Arc;

use types::{CqlError, CqlResult, CqlType};

use super::resolve::{check_single, Arg};
use super::{Factory, Function};

/// Builds the function for the inferred argument types (`None`: a marker or null).
pub type Build = dyn Fn(&[Arg], &[Option<CqlType>]) -> CqlResult<Function> + Send + Sync;

/// A generic function: its name, how its parameters are shown in messages, how many
/// arguments it takes, and which must have an inferable type.
pub struct Generic {
    pub name: &'static str,
    pub params: &'static str,
    pub arity: std::ops::RangeInclusive<usize>,
    /// How many leading arguments need a known type.
    pub typed: usize,
    pub build: Box<Build>,
}

impl Generic {
    /// A generic function of `arity` arguments whose first must have a known type; `build`
    /// gets the arguments and that type.
    pub fn first_typed(
        name: &'static str,
        params: &'static str,
        arity: std::ops::RangeInclusive<usize>,
        build: impl Fn(&[Arg], CqlType) -> CqlResult<Function> + Send + Sync + 'static,
    ) -> Generic {
        Generic {
            name,
            params,
            arity,
            typed: 1,
            build: Box::new(move |args, types| {
                let ty = types.first().cloned().flatten().ok_or_else(|| {
                    CqlError::Server(format!("{name}: first argument without a type"))
                })?;
                build(args, ty)
            }),
        }
    }

    fn shown(&self) -> String {
        format!("system.{}({})", self.name, self.params)
    }
}

impl Factory for Generic {
    fn create(&self, args: &[Arg]) -> CqlResult<Arc<Function>> {
        if !self.arity.contains(&args.len()) {
            return Err(CqlError::invalid(format!(
                "Invalid number of arguments for function {}",
                self.shown()
            )));
        }
        let types: Vec<Option<CqlType>> = args.iter().map(Arg::inferred_type).collect();
        if let Some(i) = (0..self.typed.min(args.len())).find(|i| types[*i].is_none()) {
            return Err(CqlError::invalid(format!(
                "Cannot infer type of argument {} in call to function {}: use type casts to disambiguate",
                args[i].text,
                self.shown()
            )));
        }
        let f = (self.build)(args, &types)?;
        check_single(&f, args)?;
        Ok(Arc::new(f))
    }
}

/// "Function system.f requires <what>, but found argument x of type t".
pub fn wrong_argument(name: &str, what: &str, arg: &Arg, ty: &CqlType) -> CqlError {
    CqlError::invalid(format!(
        "Function system.{name} requires {what}, but found argument {} of type {}",
        arg.text,
        ty.cql_name()
    ))
}
