//! The SELECT clause: which values each result row carries (columns, WRITETIME, TTL, token,
//! literals) or which aggregate it computes (COUNT, MIN, MAX, SUM, AVG), with Cassandra's
//! result column names.
use crate::columns::{column, spec};
use cql::ast::{Selector, SelectorExpr, Term};
use schema::{ColumnKind, ColumnMetadata, TableMetadata};
use types::limits::MAX_NESTING;
use types::result::ColumnSpec;
use types::{CqlError, CqlResult, CqlType, NativeType};

/// One output value, per row.
#[derive(Clone, Debug)]
pub enum Selected {
    Column(ColumnMetadata),
    WriteTime(ColumnMetadata),
    Ttl(ColumnMetadata),
    Token,
    Aggregate(Aggregate),
}

/// Aggregate functions over all selected rows.
#[derive(Clone, Debug)]
pub enum Aggregate {
    CountRows,
    Count(Box<Selected>),
    Min(Box<Selected>, CqlType),
    Max(Box<Selected>, CqlType),
    Sum(Box<Selected>, CqlType),
    Avg(Box<Selected>, CqlType),
}

/// The analysed selection.
#[derive(Clone, Debug)]
pub struct Selection {
    pub items: Vec<Selected>,
    pub specs: Vec<ColumnSpec>,
    pub is_aggregate: bool,
}

impl Selection {
    pub fn wildcard(table: &TableMetadata) -> Selection {
        let cols = select_order(table);
        let specs = cols
            .iter()
            .map(|c| spec(table, &c.name, c.ty.clone()))
            .collect();
        Selection {
            items: cols.into_iter().map(Selected::Column).collect(),
            specs,
            is_aggregate: false,
        }
    }

    pub fn analyze(table: &TableMetadata, selectors: &[Selector]) -> CqlResult<Selection> {
        let mut items = Vec::with_capacity(selectors.len());
        let mut specs = Vec::with_capacity(selectors.len());
        for s in selectors {
            let (item, name, ty) = selector(table, &s.expr, 0)?;
            specs.push(spec(table, s.alias.as_deref().unwrap_or(&name), ty));
            items.push(item);
        }
        let aggregates = items
            .iter()
            .filter(|i| matches!(i, Selected::Aggregate(_)))
            .count();
        Ok(Selection {
            is_aggregate: aggregates > 0,
            items,
            specs,
        })
    }
}

/// Cassandra's `SELECT *` order: partition key, clustering, then static and regular
/// columns, each group by name.
pub fn select_order(table: &TableMetadata) -> Vec<ColumnMetadata> {
    let mut out: Vec<ColumnMetadata> = table.partition_key_columns().cloned().collect();
    out.extend(table.clustering_columns().cloned());
    let mut statics: Vec<ColumnMetadata> = table.static_columns().cloned().collect();
    statics.sort_by(|a, b| a.name.cmp(&b.name));
    let mut regulars: Vec<ColumnMetadata> = table.regular_columns().cloned().collect();
    regulars.sort_by(|a, b| a.name.cmp(&b.name));
    out.extend(statics);
    out.extend(regulars);
    out
}

fn native(n: NativeType) -> CqlType {
    CqlType::Native(n)
}

type Analysed = (Selected, String, CqlType);

/// Analyses a selector found `depth` function calls down (the parser bounds the nesting; this
/// keeps the recursion bounded for any tree all the same).
fn selector(table: &TableMetadata, expr: &SelectorExpr, depth: usize) -> CqlResult<Analysed> {
    if depth > MAX_NESTING {
        return Err(CqlError::invalid(format!(
            "Selectors nest at most {MAX_NESTING} levels"
        )));
    }
    match expr {
        SelectorExpr::Column(name) => {
            let c = column(table, name)?.clone();
            let ty = c.ty.clone();
            Ok((Selected::Column(c), name.clone(), ty))
        }
        SelectorExpr::WriteTime(inner) => {
            cell_function(table, inner, "writetime", native(NativeType::Bigint))
        }
        SelectorExpr::Ttl(inner) => cell_function(table, inner, "ttl", native(NativeType::Int)),
        SelectorExpr::CountRows => Ok((
            Selected::Aggregate(Aggregate::CountRows),
            "count".into(),
            native(NativeType::Bigint),
        )),
        SelectorExpr::Term(Term::Literal(lit)) => Err(CqlError::invalid(format!(
            "Cannot infer type for term {} in selection clause (try using a cast to force a type)",
            lit.text
        ))),
        SelectorExpr::FunctionCall { name, args } => function(table, &name.name, args, depth),
        other => Err(CqlError::invalid(format!(
            "Selector {other:?} is not supported yet"
        ))),
    }
}

fn cell_function(
    table: &TableMetadata,
    inner: &SelectorExpr,
    fname: &str,
    ty: CqlType,
) -> CqlResult<Analysed> {
    let SelectorExpr::Column(name) = inner else {
        return Err(CqlError::invalid(format!("Invalid argument to {fname}")));
    };
    let c = column(table, name)?.clone();
    if matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Clustering) {
        return Err(CqlError::invalid(format!(
            "Cannot use selection function {fname} on PRIMARY KEY part {name}"
        )));
    }
    if c.ty.is_multi_cell() {
        return Err(CqlError::invalid(format!(
            "Cannot use selection function {fname} on non-frozen collection {name}"
        )));
    }
    let out = format!("{fname}({name})");
    let item = if fname == "ttl" {
        Selected::Ttl(c)
    } else {
        Selected::WriteTime(c)
    };
    Ok((item, out, ty))
}

fn function(
    table: &TableMetadata,
    name: &str,
    args: &[SelectorExpr],
    depth: usize,
) -> CqlResult<Analysed> {
    let lower = name.to_ascii_lowercase();
    if lower == "token" {
        return token(table, args);
    }
    if !matches!(lower.as_str(), "count" | "min" | "max" | "sum" | "avg") {
        return Err(CqlError::invalid(format!("Unknown function '{name}'")));
    }
    let [arg] = args else {
        return Err(CqlError::invalid(format!(
            "Invalid number of arguments in call to function system.{lower}: 1 required but {} provided",
            args.len()
        )));
    };
    if lower == "count" {
        if let SelectorExpr::Term(Term::Literal(_)) = arg {
            return Ok((
                Selected::Aggregate(Aggregate::CountRows),
                "count".into(),
                native(NativeType::Bigint),
            ));
        }
    }
    let (inner, inner_name, ty) = selector(table, arg, depth + 1)?;
    let out = format!("system.{lower}({inner_name})");
    let boxed = Box::new(inner);
    let (agg, result_ty) = match lower.as_str() {
        "count" => (Aggregate::Count(boxed), native(NativeType::Bigint)),
        "min" => (Aggregate::Min(boxed, ty.clone()), ty),
        "max" => (Aggregate::Max(boxed, ty.clone()), ty),
        "sum" => {
            check_numeric(&ty, &lower)?;
            (Aggregate::Sum(boxed, ty.clone()), ty)
        }
        _ => {
            check_numeric(&ty, &lower)?;
            (Aggregate::Avg(boxed, ty.clone()), ty)
        }
    };
    Ok((Selected::Aggregate(agg), out, result_ty))
}

fn check_numeric(ty: &CqlType, fname: &str) -> CqlResult<()> {
    match ty {
        CqlType::Native(
            NativeType::Tinyint
            | NativeType::Smallint
            | NativeType::Int
            | NativeType::Bigint
            | NativeType::Counter
            | NativeType::Float
            | NativeType::Double,
        ) => Ok(()),
        _ => Err(CqlError::invalid(format!(
            "Invalid call to function {fname}, none of its type signatures match (known type signatures: {})",
            known_signatures(fname)
        ))),
    }
}

/// The overloads of a numeric aggregate, listed as Cassandra 5.0 lists them.
fn known_signatures(fname: &str) -> String {
    let types: &[&str] = if fname == "sum" {
        &[
            "float", "tinyint", "smallint", "counter", "bigint", "varint", "double", "int",
            "decimal",
        ]
    } else {
        &[
            "double", "decimal", "float", "int", "bigint", "tinyint", "smallint", "counter",
            "varint",
        ]
    };
    types
        .iter()
        .map(|t| format!("system.{fname} : ({t}) -> {t}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn token(table: &TableMetadata, args: &[SelectorExpr]) -> CqlResult<Analysed> {
    let pk: Vec<&str> = table
        .partition_key_columns()
        .map(|c| c.name.as_str())
        .collect();
    let names: Vec<&str> = args
        .iter()
        .map(|a| match a {
            SelectorExpr::Column(n) => Ok(n.as_str()),
            _ => Err(CqlError::invalid(
                "token() only accepts partition key columns",
            )),
        })
        .collect::<CqlResult<_>>()?;
    if names != pk {
        return Err(CqlError::invalid(format!(
            "Type error in call to function system.token: expected the partition key columns ({})",
            pk.join(", ")
        )));
    }
    Ok((
        Selected::Token,
        format!("system.token({})", names.join(", ")),
        native(NativeType::Bigint),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cql::ast::QualifiedName;
    use schema::TableOptions;
    use types::limits::on_worker_stack;

    fn table() -> TableMetadata {
        let columns = vec![
            ColumnMetadata::partition_key("k", native(NativeType::Int), 0),
            ColumnMetadata::regular("v", native(NativeType::Int)),
        ];
        let id = uuid::Uuid::nil();
        TableMetadata::new("ks", "t", id, columns, TableOptions::default())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// `max(max(...max(v)...))`, `depth` calls deep, built without the parser.
    fn nested_max(depth: usize) -> Vec<Selector> {
        let expr = (0..depth).fold(SelectorExpr::Column("v".into()), |inner, _| {
            SelectorExpr::FunctionCall {
                name: QualifiedName::simple("max".to_string()),
                args: vec![inner],
            }
        });
        vec![Selector { expr, alias: None }]
    }

    #[test]
    fn function_calls_nested_to_the_limit_analyse_on_a_worker_stack() {
        let (table, selectors) = (table(), nested_max(MAX_NESTING));
        let analysed = on_worker_stack(|| Selection::analyze(&table, &selectors).map(|s| s.specs));
        let specs = analysed.unwrap_or_else(|e| panic!("{e}"));
        assert!(specs[0].name.starts_with("system.max(system.max("));
    }

    #[test]
    fn function_calls_nested_past_the_limit_are_refused() {
        let (table, selectors) = (table(), nested_max(MAX_NESTING + 1));
        let refused = on_worker_stack(|| Selection::analyze(&table, &selectors).map(|_| ()));
        assert_eq!(
            refused,
            Err(CqlError::invalid("Selectors nest at most 100 levels"))
        );
    }
}
