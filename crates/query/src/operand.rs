//! Values in a plan: constants folded at prepare time, bind markers filled at execution,
//! collection literals with markers inside, and function calls (`now()`, `abs(?)`, `? + 1`)
//! evaluated at execution.
use std::sync::Arc;

use bytes::Bytes;
use schema::TableMetadata;
use types::error::TypeError;
use types::request::BoundValue;
use types::result::ColumnSpec;
use types::{CqlError, CqlResult, CqlType, NativeType};

use crate::collections;
use crate::exec::ExecContext;
use crate::functions::{Env, Function};

/// A value-producing node of a plan.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A constant; `None` is null.
    Const(Option<Bytes>),
    Bind(usize),
    /// A native function applied to operands (not folded: a marker is among them, or the
    /// function is not pure, as `now()`).
    Call(Arc<Function>, Vec<Operand>),
    /// A list, set, map (flattened key, value pairs), tuple or UDT literal with non-constant
    /// parts. `ty` is the literal's type (sets and maps are sorted by it).
    Composite {
        ty: CqlType,
        parts: Vec<Operand>,
    },
    /// One column's value of an `INSERT JSON` document.
    Json(Box<crate::json::JsonField>),
    /// Field `1` of the tuple operand `0` (a bind marker for a whole tuple of a multi-column
    /// relation, `(a, b) > ?`).
    Field(Box<Operand>, usize),
}

/// The refusal of an unset value bound as part `i` of a literal of type `ty`.
fn unset_part(ty: &CqlType, i: usize) -> CqlError {
    match ty.unfrozen() {
        CqlType::Udt(udt) => CqlError::invalid(format!(
            "Invalid unset value for field '{}' of user defined type {}",
            udt.fields.get(i).map_or("", |(name, _)| name.as_str()),
            udt.name
        )),
        CqlType::Tuple(_) => {
            CqlError::invalid(format!("Invalid unset value for tuple field number {i}"))
        }
        // Unset elements are refused as nulls are.
        CqlType::Vector(..) => CqlError::invalid("null is not supported inside vectors"),
        _ => CqlError::invalid("null is not supported inside collections"),
    }
}

/// An operand's value at execution.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved {
    Value(Bytes),
    Null,
    Unset,
}

impl Resolved {
    pub fn into_option(self) -> Option<Bytes> {
        match self {
            Resolved::Value(b) => Some(b),
            _ => None,
        }
    }
}

impl Operand {
    pub fn null() -> Operand {
        Operand::Const(None)
    }

    pub fn resolve(&self, ctx: &ExecContext) -> CqlResult<Resolved> {
        match self {
            Operand::Const(Some(b)) => Ok(Resolved::Value(b.clone())),
            Operand::Const(None) => Ok(Resolved::Null),
            Operand::Bind(i) => ctx.bound(*i),
            Operand::Call(function, args) => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(a.resolve(ctx)?.into_option());
                }
                let env = Env {
                    now_micros: ctx.now_micros,
                };
                Ok(match function.call(&values, &env)? {
                    Some(b) => Resolved::Value(b),
                    None => Resolved::Null,
                })
            }
            Operand::Composite { ty, parts } => {
                let mut values = Vec::with_capacity(parts.len());
                for (i, p) in parts.iter().enumerate() {
                    match p.resolve(ctx)? {
                        Resolved::Unset => return Err(unset_part(ty, i)),
                        resolved => values.push(resolved.into_option()),
                    }
                }
                collections::build(ty, values).map(Resolved::Value)
            }
            Operand::Json(field) => Operand::json_field(field, ctx),
            Operand::Field(tuple, index) => Ok(match tuple.resolve(ctx)? {
                Resolved::Value(bytes) => match collections::split_fields(&bytes)?.get(*index) {
                    Some(Some(field)) => Resolved::Value(field.clone()),
                    _ => Resolved::Null,
                },
                other => other,
            }),
        }
    }

    fn json_field(field: &crate::json::JsonField, ctx: &ExecContext) -> CqlResult<Resolved> {
        let document = &field.document;
        let text = match document.text.resolve(ctx)? {
            Resolved::Value(b) => b,
            Resolved::Null => return Err(CqlError::invalid("Got null for INSERT JSON values")),
            Resolved::Unset => return Err(CqlError::invalid("Got unset for INSERT JSON values")),
        };
        let values = ctx.json_values(document, text)?;
        Ok(match values.get(field.column).cloned().flatten() {
            Some(Some(b)) => Resolved::Value(b),
            Some(None) => Resolved::Null,
            None if document.default_unset => Resolved::Unset,
            None => Resolved::Null,
        })
    }

    /// The value, refusing null and unset (for keys and other required places).
    pub fn resolve_required(&self, ctx: &ExecContext, column: &str) -> CqlResult<Bytes> {
        match self.resolve(ctx)? {
            Resolved::Value(b) => Ok(b),
            Resolved::Null => Err(CqlError::invalid(format!(
                "Invalid null value in condition for column {column}"
            ))),
            Resolved::Unset => Err(CqlError::invalid(format!(
                "Invalid unset value for column {column}"
            ))),
        }
    }
}

/// Collects the bind-variable specs of a statement while it is analysed, and knows the
/// partition key of the table the statement is on (`token(…)` in a term takes its types, as
/// Cassandra's token function of the receiver's table).
#[derive(Default, Debug)]
pub struct Binder {
    specs: Vec<Option<ColumnSpec>>,
    names: Vec<Option<String>>,
    partition_key: Option<Vec<CqlType>>,
}

impl Binder {
    pub fn new(count: usize) -> Binder {
        Binder {
            specs: vec![None; count],
            names: vec![None; count],
            partition_key: None,
        }
    }

    /// The statement being analysed (next, in a batch) is on `table`.
    pub fn on_table(&mut self, table: &TableMetadata) {
        let key = table
            .partition_key_columns()
            .map(|c| c.ty.clone())
            .collect();
        self.partition_key = Some(key);
    }

    /// `token(…)` of the statement's table: its partition key's types to a bigint.
    pub fn token_function(&self) -> Option<Function> {
        let key = self.partition_key.clone()?;
        Some(crate::functions::token_function(key))
    }

    pub fn bind(&mut self, index: usize, name: Option<&str>, spec: ColumnSpec) -> Operand {
        if index >= self.specs.len() {
            self.specs.resize(index + 1, None);
            self.names.resize(index + 1, None);
        }
        let spec = match name {
            Some(n) => ColumnSpec {
                name: n.to_string(),
                ..spec
            },
            None => spec,
        };
        self.specs[index] = Some(spec);
        self.names[index] = name.map(str::to_string);
        Operand::Bind(index)
    }

    /// The specs in marker order. Markers never reached (impossible for a well-formed
    /// statement) become blobs so the count still matches.
    pub fn finish(self) -> BindSpecs {
        let specs = self
            .specs
            .into_iter()
            .map(|s| {
                s.unwrap_or_else(|| ColumnSpec {
                    keyspace: String::new(),
                    table: String::new(),
                    name: "?".into(),
                    ty: CqlType::Native(NativeType::Blob),
                })
            })
            .collect();
        BindSpecs { specs }
    }
}

/// Bind-variable metadata of a prepared statement.
#[derive(Clone, Debug, Default)]
pub struct BindSpecs {
    pub specs: Vec<ColumnSpec>,
}

impl BindSpecs {
    /// The values of a prepared statement's markers, named ones ordered as the markers expect
    /// them.
    pub fn positional(&self, values: types::request::Values) -> CqlResult<Vec<BoundValue>> {
        self.bind(values, |markers, bound| {
            format!("There were {markers} markers(?) in CQL but {bound} bound variables")
        })
    }

    /// The values of a QUERY's markers: Cassandra words a count that differs otherwise.
    pub fn positional_query(&self, values: types::request::Values) -> CqlResult<Vec<BoundValue>> {
        self.bind(values, |_, _| "Invalid amount of bind variables".into())
    }

    fn bind(
        &self,
        values: types::request::Values,
        miscount: impl FnOnce(usize, usize) -> String,
    ) -> CqlResult<Vec<BoundValue>> {
        use types::request::Values;
        let values = match values {
            Values::None => Vec::new(),
            Values::Positional(v) => v,
            Values::Named(named) => self.order_named(named)?,
        };
        if values.len() != self.specs.len() {
            return Err(CqlError::invalid(miscount(self.specs.len(), values.len())));
        }
        values
            .into_iter()
            .zip(&self.specs)
            .map(|(value, spec)| match value {
                BoundValue::Set(bytes) => canonical_bound(spec, &bytes).map(BoundValue::Set),
                other => Ok(other),
            })
            .collect()
    }

    fn order_named(&self, named: Vec<(String, BoundValue)>) -> CqlResult<Vec<BoundValue>> {
        let mut out = Vec::with_capacity(self.specs.len());
        for spec in &self.specs {
            let found = named
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(&spec.name));
            match found {
                Some((_, v)) => out.push(v.clone()),
                None => {
                    return Err(CqlError::invalid(format!(
                        "Invalid unset value for column {}",
                        spec.name
                    )))
                }
            }
        }
        Ok(out)
    }
}

/// A bound value checked against its marker's type, in the canonical form Cassandra stores
/// (set elements and map keys sorted, see `Value::normalize`).
fn canonical_bound(spec: &ColumnSpec, bytes: &Bytes) -> CqlResult<Bytes> {
    let invalid = |TypeError(reason)| {
        CqlError::invalid(format!(
            "Exception while binding column {}: {}",
            spec.name, reason
        ))
    };
    types::value::Value::validate(&spec.ty, bytes).map_err(invalid)?;
    types::value::Value::normalize(&spec.ty, bytes).map_err(invalid)
}
