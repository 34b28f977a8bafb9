//! Analysis of selectors into the selection tree, bottom-up as Cassandra's `Selectable`s:
//! each selector's type is known before the function it is passed to is chosen; constants
//! and bind markers take the type of the parameter they fill.
use std::sync::Arc;

use cql::ast::{CastType, Selector, SelectorExpr, Term};
use schema::TableMetadata;
use types::limits::MAX_NESTING;
use types::result::ColumnSpec;
use types::{CqlError, CqlResult, CqlType, NativeType};

use super::{Access, AccessKind, AggregateCall, Leaf, Node, Selection, TimesKind};
use crate::calls::{self, column_name, term_arg, Context};
use crate::columns::{column, spec};
use crate::functions::{self, Arg, CallName, Function};
use crate::operand::{Binder, Operand};
use crate::terms;

/// One analysed selector: its expression, result column name and type (and, when result
/// metadata names another type, that type: see `Function::legacy_timeuuid`).
struct Analysed {
    node: Node,
    name: String,
    ty: CqlType,
    reported: Option<CqlType>,
}

struct Analyzer<'a> {
    table: &'a TableMetadata,
    binder: &'a mut Binder,
    leaves: Vec<Leaf>,
    aggregates: Vec<AggregateCall>,
    /// Set while analysing an aggregate's arguments (aggregates do not nest).
    in_aggregate: bool,
}

impl Selection {
    pub fn analyze(
        table: &TableMetadata,
        selectors: &[Selector],
        binder: &mut Binder,
    ) -> CqlResult<Selection> {
        let mut a = Analyzer {
            table,
            binder,
            leaves: Vec::new(),
            aggregates: Vec::new(),
            in_aggregate: false,
        };
        let (mut outputs, mut specs, mut types) = (Vec::new(), Vec::new(), Vec::new());
        for s in selectors {
            let analysed = a.selector(&s.expr, 0)?;
            let name = s.alias.clone().unwrap_or(analysed.name);
            let reported = analysed.reported.unwrap_or(analysed.ty.clone());
            specs.push(spec(table, &name, reported));
            types.push(analysed.ty);
            outputs.push(analysed.node);
        }
        Ok(Selection {
            is_aggregate: !a.aggregates.is_empty(),
            leaves: a.leaves,
            outputs,
            aggregates: a.aggregates,
            specs,
            types,
        })
    }
}

fn bigint() -> CqlType {
    CqlType::Native(NativeType::Bigint)
}

fn cannot_infer(text: &str) -> CqlError {
    CqlError::invalid(format!(
        "Cannot infer type for term {text} in selection clause (try using a cast to force a type)"
    ))
}

impl Analyzer<'_> {
    fn leaf(&mut self, leaf: Leaf) -> Node {
        let index = match self.leaves.iter().position(|l| *l == leaf) {
            Some(i) => i,
            None => {
                self.leaves.push(leaf);
                self.leaves.len() - 1
            }
        };
        Node::Leaf(index)
    }

    fn selector(&mut self, expr: &SelectorExpr, depth: usize) -> CqlResult<Analysed> {
        if depth > MAX_NESTING {
            return Err(CqlError::invalid(format!(
                "Selectors nest at most {MAX_NESTING} levels"
            )));
        }
        let depth = depth + 1;
        match expr {
            SelectorExpr::Column(name) => {
                let c = column(self.table, name)?.clone();
                let ty = c.ty.clone();
                Ok(Analysed {
                    node: self.leaf(Leaf::Column(c)),
                    name: name.clone(),
                    ty,
                    reported: None,
                })
            }
            SelectorExpr::WriteTime(inner) => self.times(inner, TimesKind::WriteTime),
            SelectorExpr::MaxWriteTime(inner) => self.times(inner, TimesKind::MaxWriteTime),
            SelectorExpr::Ttl(inner) => self.times(inner, TimesKind::Ttl),
            SelectorExpr::Element(target, _)
            | SelectorExpr::Slice { target, .. }
            | SelectorExpr::Field(target, _) => {
                let target = self.selector(target, depth)?;
                let (access, name, ty) = self.access(expr, &target.name, &target.ty)?;
                Ok(Analysed {
                    node: Node::Access(Box::new(target.node), access),
                    name,
                    ty,
                    reported: None,
                })
            }
            SelectorExpr::CountRows => self.call(&calls::native_call("countrows"), &[], depth),
            SelectorExpr::Term(term) => Err(cannot_infer(&calls::arg_text(term))),
            SelectorExpr::TypeHint(ty, inner) => self.type_hint(ty, inner, depth),
            SelectorExpr::Cast(inner, ty) => self.cast(inner, *ty, depth),
            SelectorExpr::FunctionCall { name, args } => self.function(name, args, depth),
            SelectorExpr::Negated(inner) => self.call(
                &calls::negation_call(),
                std::slice::from_ref(inner.as_ref()),
                depth,
            ),
            SelectorExpr::Arithmetic { op, left, right } => {
                let name = functions::operation_name(calls::operator(*op));
                let args = [left.as_ref().clone(), right.as_ref().clone()];
                self.call(&calls::native_call(name), &args, depth)
            }
            SelectorExpr::List(items) => self.collection(items, depth, "[", "]"),
            SelectorExpr::Set(items) => self.collection(items, depth, "{", "}"),
            SelectorExpr::Tuple(items) => self.collection(items, depth, "(", ")"),
            SelectorExpr::Map(pairs) => self.map(pairs, depth),
            SelectorExpr::Parenthesized(_) => Err(cannot_infer(&selector_text(expr))),
        }
    }

    /// A selector whose receiver gives it a type (a call's argument, an operand, a type
    /// hint): a parenthesised one is its content, named with its parentheses.
    fn operand(&mut self, expr: &SelectorExpr, depth: usize) -> CqlResult<Analysed> {
        let SelectorExpr::Parenthesized(inner) = expr else {
            return self.selector(expr, depth);
        };
        let analysed = self.operand(inner, depth + 1)?;
        Ok(Analysed {
            name: format!("({})", analysed.name),
            ..analysed
        })
    }

    /// WRITETIME, MAXWRITETIME and TTL of a regular or static column, or of element, slice
    /// and field selections in one: a list (one per cell) where what is selected is a
    /// non-frozen collection or UDT, except for MAXWRITETIME.
    fn times(&mut self, inner: &SelectorExpr, kind: TimesKind) -> CqlResult<Analysed> {
        let fname = kind.name();
        let mut chain = Vec::new();
        let mut root = inner;
        while let SelectorExpr::Element(target, _)
        | SelectorExpr::Slice { target, .. }
        | SelectorExpr::Field(target, _) = root
        {
            chain.push(root);
            root = target;
        }
        let SelectorExpr::Column(name) = root else {
            return Err(CqlError::invalid(format!("Invalid argument to {fname}")));
        };
        let column = column(self.table, name)?.clone();
        if column.kind.is_primary_key() {
            return Err(CqlError::invalid(format!(
                "Cannot use selection function {fname} on PRIMARY KEY part {name}"
            )));
        }
        let (mut text, mut ty) = (name.clone(), column.ty.clone());
        let mut path = Vec::with_capacity(chain.len());
        for expr in chain.into_iter().rev() {
            let (access, next_text, next_ty) = self.access(expr, &text, &ty)?;
            path.push(access);
            (text, ty) = (next_text, next_ty);
        }
        let native = CqlType::Native(match kind {
            TimesKind::Ttl => NativeType::Int,
            _ => NativeType::Bigint,
        });
        let ty = if ty.is_multi_cell() && kind != TimesKind::MaxWriteTime {
            CqlType::List(Box::new(native))
        } else {
            native
        };
        Ok(Analysed {
            node: self.leaf(Leaf::Times { kind, column, path }),
            name: format!("{fname}({text})"),
            ty,
            reported: None,
        })
    }

    /// The element, slice or field selection `expr` makes on a value named `name` of type
    /// `ty`, with the result's name and type, as Cassandra's `Selectable`s check and name them.
    fn access(
        &mut self,
        expr: &SelectorExpr,
        name: &str,
        ty: &CqlType,
    ) -> CqlResult<(Access, String, CqlType)> {
        let access = |kind| Access {
            ty: ty.clone(),
            target: name.to_string(),
            kind,
        };
        match expr {
            SelectorExpr::Element(_, key) => {
                let what = format!("Invalid element selection: {name} is of type");
                let (key_name, key_ty, value_ty) = keys(name, ty, "Element", &what)?;
                let operand = self.key_operand(key, &key_name, key_ty)?;
                let text = format!("{name}[{}]", terms::term_text(key));
                Ok((access(AccessKind::Element(operand)), text, value_ty))
            }
            SelectorExpr::Slice { from, to, .. } => {
                let what = format!("Invalid slice selection: {name} of type");
                let (key_name, key_ty, _) = keys(name, ty, "Slice", &what)?;
                let mut bound = |t: &Option<Term>| {
                    t.as_ref()
                        .map(|t| self.key_operand(t, &key_name, key_ty.clone()))
                        .transpose()
                };
                let (from_op, to_op) = (bound(from)?, bound(to)?);
                let shown =
                    |t: &Option<Term>| t.as_ref().map_or_else(String::new, terms::term_text);
                let text = format!("{name}[{}..{}]", shown(from), shown(to));
                Ok((access(AccessKind::Slice(from_op, to_op)), text, ty.clone()))
            }
            SelectorExpr::Field(_, field) => {
                let (index, field_ty) = field_of(name, ty, field)?;
                let text = format!("{name}.{field}");
                Ok((access(AccessKind::Field(index)), text, field_ty))
            }
            _ => Err(CqlError::Server("not an element, slice or field".into())),
        }
    }

    fn key_operand(&mut self, key: &Term, name: &str, ty: CqlType) -> CqlResult<Operand> {
        crate::terms::analyze(key, &self.spec(name, ty), self.binder)
    }

    fn type_hint(
        &mut self,
        ty: &cql::ast::TypeExpr,
        inner: &SelectorExpr,
        depth: usize,
    ) -> CqlResult<Analysed> {
        let hinted = crate::ddl::hint_type(ty, &self.table.keyspace)?;
        let SelectorExpr::Term(term) = inner else {
            let analysed = self.operand(inner, depth)?;
            return Ok(Analysed {
                name: format!("({}){}", hinted.cql_name(), analysed.name),
                ..analysed
            });
        };
        let name = format!("({}){}", hinted.cql_name(), calls::arg_text(term));
        let operand = crate::terms::analyze(term, &self.spec(&name, hinted.clone()), self.binder)?;
        Ok(Analysed {
            node: Node::Value(operand),
            name,
            ty: hinted,
            reported: None,
        })
    }

    fn spec(&self, name: &str, ty: CqlType) -> ColumnSpec {
        spec(self.table, name, ty)
    }

    fn function(
        &mut self,
        name: &cql::ast::QualifiedName,
        args: &[SelectorExpr],
        depth: usize,
    ) -> CqlResult<Analysed> {
        let lower = name.name.to_lowercase();
        let native = name
            .keyspace
            .as_deref()
            .is_none_or(|k| k.eq_ignore_ascii_case("system"));
        if native && lower == "count" && matches!(args, [SelectorExpr::Term(Term::Literal(_))]) {
            return self.call(&calls::native_call("countrows"), &[], depth);
        }
        if native && lower == "token" {
            return self.token(args, depth);
        }
        self.call(&calls::call_name(name), args, depth)
    }

    /// Resolves and analyses a call: selector arguments first (their types choose the
    /// overload), then constants and markers against the chosen parameter types.
    fn call(
        &mut self,
        name: &CallName<'_>,
        args: &[SelectorExpr],
        depth: usize,
    ) -> CqlResult<Analysed> {
        let analysed = self.arguments(name, args, depth)?;
        self.resolve_call(name, args, analysed)
    }

    /// The arguments of a call that are selectors, analysed (`None` for constants and
    /// markers, typed once the function is chosen).
    fn arguments(
        &mut self,
        name: &CallName<'_>,
        args: &[SelectorExpr],
        depth: usize,
    ) -> CqlResult<Vec<Option<Analysed>>> {
        let inside = self.in_aggregate || is_aggregate_name(name);
        let outer = std::mem::replace(&mut self.in_aggregate, inside);
        let analysed = args
            .iter()
            .map(|arg| match as_term(arg) {
                Some(_) => Ok(None),
                None => self.operand(arg, depth).map(Some),
            })
            .collect();
        self.in_aggregate = outer;
        analysed
    }

    fn resolve_call(
        &mut self,
        name: &CallName<'_>,
        args: &[SelectorExpr],
        analysed: Vec<Option<Analysed>>,
    ) -> CqlResult<Analysed> {
        let described = args
            .iter()
            .zip(&analysed)
            .map(|(arg, a)| match (a, as_term(arg)) {
                (Some(a), _) => Ok(Arg::typed(a.name.clone(), a.ty.clone())),
                (None, Some(term)) => term_arg(&term, &self.table.keyspace, Context::Selector),
                (None, None) => Err(CqlError::Server("selector argument lost".into())),
            })
            .collect::<CqlResult<Vec<_>>>()?;
        let function = functions::resolve(name, &described, None)?;
        if function.is_aggregate() && self.in_aggregate {
            return Err(CqlError::invalid(
                "aggregate functions cannot be used as arguments of aggregate functions",
            ));
        }
        let mut nodes = Vec::with_capacity(args.len());
        let mut names = Vec::with_capacity(args.len());
        for (i, (arg, a)) in args.iter().zip(analysed).enumerate() {
            if let Some(a) = a {
                names.push(a.name);
                nodes.push(a.node);
                continue;
            }
            let term =
                as_term(arg).ok_or_else(|| CqlError::Server("selector argument lost".into()))?;
            let param = function.args[i].clone();
            let spec = self.spec(&format!("arg{i}({})", function.qualified()), param);
            nodes.push(Node::Value(crate::terms::analyze(
                &term,
                &spec,
                self.binder,
            )?));
            names.push(described[i].text.clone());
        }
        Ok(self.apply(function, nodes, &names))
    }

    /// `CAST(x AS type)`: `x` itself when it has that type already; an error when nothing
    /// casts to the type, or when `x` is a constant or parenthesised (whose type a selection
    /// cannot infer).
    fn cast(
        &mut self,
        inner: &SelectorExpr,
        target: CastType,
        depth: usize,
    ) -> CqlResult<Analysed> {
        if as_term(inner).is_some() || matches!(inner, SelectorExpr::Parenthesized(_)) {
            return Err(cannot_infer(&selector_text(inner)));
        }
        let name = functions::cast_name(target.name());
        let call = CallName {
            keyspace: Some("system"),
            name: &name,
        };
        let mut analysed = self.arguments(&call, std::slice::from_ref(inner), depth)?;
        if let Some(a) = analysed.first_mut().and_then(Option::take) {
            if a.ty.unfrozen() == &CqlType::Native(target.native) {
                return Ok(a);
            }
            analysed[0] = Some(a);
        }
        if !functions::registry().contains(&name) {
            return Err(CqlError::invalid(format!(
                "{} cannot be cast to {}",
                selector_text(inner),
                target.name()
            )));
        }
        self.resolve_call(&call, std::slice::from_ref(inner), analysed)
    }

    fn apply(&mut self, function: Arc<Function>, nodes: Vec<Node>, names: &[String]) -> Analysed {
        let name = column_name(&function, names);
        let ty = function.ret.clone();
        let reported = function.reported.clone();
        let node = if function.is_aggregate() {
            self.aggregates.push(AggregateCall {
                function,
                args: nodes,
            });
            Node::Aggregate(self.aggregates.len() - 1)
        } else {
            Node::Call(function, nodes)
        };
        Analysed {
            node,
            name,
            ty,
            reported,
        }
    }

    /// `token(k1, k2)` of the partition key columns (or of values for them).
    fn token(&mut self, args: &[SelectorExpr], depth: usize) -> CqlResult<Analysed> {
        let pk: Vec<_> = self.table.partition_key_columns().cloned().collect();
        let columns: Vec<&str> = args
            .iter()
            .filter_map(|a| match a {
                SelectorExpr::Column(n) => Some(n.as_str()),
                _ => None,
            })
            .collect();
        if columns.len() == args.len()
            && columns
                .iter()
                .copied()
                .eq(pk.iter().map(|c| c.name.as_str()))
        {
            return Ok(Analysed {
                node: self.leaf(Leaf::Token),
                name: format!("system.token({})", columns.join(", ")),
                ty: bigint(),
                reported: None,
            });
        }
        if args.len() != pk.len() {
            return Err(CqlError::invalid(format!(
                "Invalid number of arguments in call to function system.token: {} required but {} provided",
                pk.len(),
                args.len()
            )));
        }
        let function = Arc::new(crate::functions::token_function(
            pk.iter().map(|c| c.ty.clone()).collect(),
        ));
        let mut nodes = Vec::new();
        let mut names = Vec::new();
        for (i, (arg, c)) in args.iter().zip(&pk).enumerate() {
            let (node, name) = match arg {
                SelectorExpr::Term(term) => {
                    let spec = self.spec(&format!("arg{i}(system.token)"), c.ty.clone());
                    (
                        Node::Value(crate::terms::analyze(term, &spec, self.binder)?),
                        calls::arg_text(term),
                    )
                }
                other => {
                    let a = self.selector(other, depth)?;
                    (a.node, a.name)
                }
            };
            nodes.push(node);
            names.push(name);
        }
        Ok(self.apply(function, nodes, &names))
    }

    /// `[a, b]`, `{a, b}`, `(a, b)` of selectors, typed by their first typed element.
    /// A part of a collection selector: analysed when it is a selector, `None` for a constant,
    /// marker or parenthesised selector (typed by the collection's type).
    fn part(&mut self, item: &SelectorExpr, depth: usize) -> CqlResult<Option<Analysed>> {
        if as_term(item).is_some() || matches!(item, SelectorExpr::Parenthesized(_)) {
            return Ok(None);
        }
        self.selector(item, depth).map(Some)
    }

    /// The node of a part: its own, or the constant or parenthesised selector typed as `ty`.
    fn part_node(
        &mut self,
        (item, part): (&SelectorExpr, Option<Analysed>),
        ty: &CqlType,
        text: &str,
        depth: usize,
    ) -> CqlResult<Node> {
        if let Some(a) = part {
            return Ok(a.node);
        }
        let Some(term) = as_term(item) else {
            return Ok(self.operand(item, depth)?.node);
        };
        let spec = self.spec(text, ty.clone());
        Ok(Node::Value(crate::terms::analyze(
            &term,
            &spec,
            self.binder,
        )?))
    }

    /// `[a, b]`, `{a, b}`, `(a, b)` of selectors: lists and sets are typed by their first
    /// typed element; every element of a tuple needs a type.
    fn collection(
        &mut self,
        items: &[SelectorExpr],
        depth: usize,
        open: &str,
        close: &str,
    ) -> CqlResult<Analysed> {
        let text = format!(
            "{open}{}{close}",
            items
                .iter()
                .map(selector_text)
                .collect::<Vec<_>>()
                .join(", ")
        );
        let parts = items
            .iter()
            .map(|item| self.part(item, depth))
            .collect::<CqlResult<Vec<_>>>()?;
        let types: Vec<Option<CqlType>> = parts
            .iter()
            .map(|p| p.as_ref().map(|a| a.ty.clone()))
            .collect();
        let first = types
            .iter()
            .flatten()
            .next()
            .cloned()
            .ok_or_else(|| cannot_infer(&text))?;
        let ty = match open {
            "[" => CqlType::List(Box::new(first.clone())),
            "{" => CqlType::Set(Box::new(first.clone())),
            _ => {
                let all = types
                    .into_iter()
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| cannot_infer(&text))?;
                CqlType::Tuple(all).freeze()
            }
        };
        let mut nodes = Vec::with_capacity(items.len());
        for (item, part) in items.iter().zip(parts) {
            nodes.push(self.part_node((item, part), &first, &text, depth)?);
        }
        Ok(Analysed {
            node: Node::Composite(ty.clone(), nodes),
            name: text,
            ty,
            reported: None,
        })
    }

    /// `{k: v, ...}` of selectors, typed by the first typed key and the first typed value.
    fn map(&mut self, pairs: &[(SelectorExpr, SelectorExpr)], depth: usize) -> CqlResult<Analysed> {
        let text = map_text(pairs);
        let mut parts = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            parts.push((self.part(k, depth)?, self.part(v, depth)?));
        }
        let key = parts
            .iter()
            .find_map(|(k, _)| k.as_ref().map(|a| a.ty.clone()));
        let value = parts
            .iter()
            .find_map(|(_, v)| v.as_ref().map(|a| a.ty.clone()));
        let (Some(key), Some(value)) = (key, value) else {
            return Err(cannot_infer(&text));
        };
        let mut nodes = Vec::with_capacity(2 * pairs.len());
        for ((k, v), (kp, vp)) in pairs.iter().zip(parts) {
            nodes.push(self.part_node((k, kp), &key, &text, depth)?);
            nodes.push(self.part_node((v, vp), &value, &text, depth)?);
        }
        let ty = CqlType::Map(Box::new(key), Box::new(value));
        Ok(Analysed {
            node: Node::Composite(ty.clone(), nodes),
            name: text,
            ty,
            reported: None,
        })
    }
}

/// The bind name and type of an element or slice key, and the type of an element, for a
/// collection of type `ty` selected as `name`; `refused` starts the message for a value that
/// is no collection.
fn keys(
    name: &str,
    ty: &CqlType,
    what: &str,
    refused: &str,
) -> CqlResult<(String, CqlType, CqlType)> {
    match ty.unfrozen() {
        CqlType::Map(k, v) => Ok((format!("key({name})"), *k.clone(), *v.clone())),
        CqlType::Set(e) => Ok((format!("value({name})"), *e.clone(), *e.clone())),
        CqlType::List(_) => Err(CqlError::invalid(format!(
            "{what} selection is only allowed on sets and maps, but {name} is a list"
        ))),
        _ => Err(CqlError::invalid(format!(
            "{refused} {} is not a collection",
            ty.cql_name()
        ))),
    }
}

/// The position and type of field `field` of a user type value named `name`.
fn field_of(name: &str, ty: &CqlType, field: &str) -> CqlResult<(usize, CqlType)> {
    let CqlType::Udt(udt) = ty.unfrozen() else {
        return Err(CqlError::invalid(format!(
            "Invalid field selection: {name} of type {} is not a user type",
            ty.cql_name()
        )));
    };
    let Some(index) = udt.fields.iter().position(|(f, _)| f == field) else {
        return Err(CqlError::invalid(format!(
            "{name} of type {} has no field {field}",
            ty.cql_name()
        )));
    };
    Ok((index, udt.fields[index].1.clone()))
}

fn map_text(pairs: &[(SelectorExpr, SelectorExpr)]) -> String {
    let shown: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}: {}", selector_text(k), selector_text(v)))
        .collect();
    format!("{{{}}}", shown.join(", "))
}

/// A selector made only of constants and markers (`1`, `[1, 2]`, `{'a': ?}`) as the term it
/// stands for: such arguments take the type of the parameter they fill.
fn as_term(expr: &SelectorExpr) -> Option<Term> {
    let all = |items: &[SelectorExpr]| items.iter().map(as_term).collect::<Option<Vec<_>>>();
    match expr {
        SelectorExpr::Term(term) => Some(term.clone()),
        SelectorExpr::Parenthesized(inner) => as_term(inner).map(|t| Term::Tuple(vec![t])),
        SelectorExpr::List(items) => all(items).map(Term::List),
        SelectorExpr::Set(items) => all(items).map(Term::Set),
        SelectorExpr::Tuple(items) => all(items).map(Term::Tuple),
        SelectorExpr::Map(pairs) => pairs
            .iter()
            .map(|(k, v)| Some((as_term(k)?, as_term(v)?)))
            .collect::<Option<Vec<_>>>()
            .map(Term::Map),
        _ => None,
    }
}

fn is_aggregate_name(name: &CallName<'_>) -> bool {
    let lower = name.name.to_lowercase();
    name.keyspace
        .is_none_or(|k| k.eq_ignore_ascii_case("system"))
        && matches!(
            lower.as_str(),
            "count" | "countrows" | "min" | "max" | "sum" | "avg"
        )
}

/// A selector as Cassandra prints it in messages and column names.
pub fn selector_text(expr: &SelectorExpr) -> String {
    let join = |items: &[SelectorExpr]| {
        items
            .iter()
            .map(selector_text)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match expr {
        SelectorExpr::Column(name) => name.clone(),
        SelectorExpr::Term(term) => calls::arg_text(term),
        SelectorExpr::Field(inner, field) => format!("{}.{field}", selector_text(inner)),
        SelectorExpr::Element(inner, key) => {
            format!("{}[{}]", selector_text(inner), calls::arg_text(key))
        }
        SelectorExpr::Slice { target, from, to } => {
            let shown = |t: &Option<Term>| t.as_ref().map_or_else(String::new, calls::arg_text);
            format!("{}[{}..{}]", selector_text(target), shown(from), shown(to))
        }
        SelectorExpr::FunctionCall { name, args } => {
            format!("{}({})", name.name.to_lowercase(), join(args))
        }
        SelectorExpr::List(items) => format!("[{}]", join(items)),
        SelectorExpr::Set(items) => format!("{{{}}}", join(items)),
        SelectorExpr::Tuple(items) => format!("({})", join(items)),
        SelectorExpr::Parenthesized(inner) => format!("({})", selector_text(inner)),
        SelectorExpr::Map(pairs) => map_text(pairs),
        SelectorExpr::Negated(inner) => format!("-{}", selector_text(inner)),
        SelectorExpr::Arithmetic { op, left, right } => format!(
            "{} {} {}",
            selector_text(left),
            calls::operator(*op).symbol(),
            selector_text(right)
        ),
        SelectorExpr::TypeHint(ty, inner) => {
            format!("({}){}", calls::type_text(ty), selector_text(inner))
        }
        SelectorExpr::Cast(inner, ty) => format!("cast({} as {})", selector_text(inner), ty.name()),
        SelectorExpr::WriteTime(inner) => format!("writetime({})", selector_text(inner)),
        SelectorExpr::MaxWriteTime(inner) => format!("maxwritetime({})", selector_text(inner)),
        SelectorExpr::Ttl(inner) => format!("ttl({})", selector_text(inner)),
        SelectorExpr::CountRows => "count".into(),
    }
}
