//! WHERE clauses: which partitions (keys, or a token range), which clustering slices, and
//! which remaining relations must be checked row by row (ALLOW FILTERING). The checks and
//! messages follow Cassandra's StatementRestrictions.
use crate::columns::{column, spec};
use cql::ast::{Operator, Relation, Term};
use schema::{ColumnKind, ColumnMetadata, TableMetadata};
use types::{CqlError, CqlResult, CqlType, NativeType};

use crate::multi_column::{self, Group, GroupKind, Written};
use crate::operand::{Binder, Operand};
use crate::terms;

pub const FILTERING_MESSAGE: &str = "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING";

/// The values one key column is restricted to.
#[derive(Clone, Debug)]
pub enum Values {
    Eq(Operand),
    In(Vec<Operand>),
    /// `IN ?`: one bound list.
    InList(Operand),
}

/// One entry of the clustering `=`/`IN` prefix.
#[derive(Clone, Debug)]
pub enum Prefix {
    Column(Values),
    /// `(a, b) IN ((1, 2), (3, 4))`: so many columns at once.
    Tuples(Vec<Vec<Operand>>, usize),
    /// `(a, b) IN ?`: one bound list of tuples over so many columns.
    TupleList(Operand, usize),
}

impl Prefix {
    /// How many clustering columns the entry restricts.
    pub fn width(&self) -> usize {
        match self {
            Prefix::Column(_) => 1,
            Prefix::Tuples(_, width) | Prefix::TupleList(_, width) => *width,
        }
    }
}

/// A one-sided bound of a slice: the value and whether it is inclusive.
pub type SliceBound = Option<(Operand, bool)>;

/// `c > x AND c <= y` on one clustering column (or on the token).
#[derive(Clone, Debug, Default)]
pub struct Slice {
    pub start: SliceBound,
    pub end: SliceBound,
}

/// One bound of a multi-column slice: the tuple and whether it is inclusive.
pub type TupleBound = Option<(Vec<Operand>, bool)>;

/// A multi-column slice right after the `=`/`IN` prefix: `(a, b) > (1, 2)`, merged with the
/// slices that start on the same column (`AND (a) < (3)`, `AND a < 3`): each bound is a tuple
/// of its own length.
#[derive(Clone, Debug, Default)]
pub struct MultiSlice {
    pub start: TupleBound,
    pub end: TupleBound,
}

/// A relation kept for row-by-row evaluation.
#[derive(Clone, Debug)]
pub struct Filter {
    pub column: ColumnMetadata,
    pub op: Operator,
    pub value: Operand,
    /// The key of a map entry compared instead of the whole column (`m['x'] = 1`).
    pub key: Option<Operand>,
}

/// Partition selection.
#[derive(Clone, Debug)]
pub enum PartitionSelection {
    /// Every partition key column restricted by `=` or `IN`.
    Keys(Vec<Values>),
    /// A token range, or everything when both bounds are absent.
    Range(Slice),
}

/// The analysed WHERE clause.
#[derive(Clone, Debug)]
pub struct Restrictions {
    pub partition: PartitionSelection,
    /// `token(...)` bounds the keys named by `=`/`IN` must also meet (`k = 1 AND token(k) > 0`).
    pub key_token: Option<Slice>,
    /// `=`/`IN` on the first clustering columns: one column each, several for a
    /// multi-column `IN`.
    pub clustering_eq: Vec<Prefix>,
    /// A slice on the clustering column after `clustering_eq`.
    pub clustering_slice: Option<Slice>,
    pub multi_slice: Option<MultiSlice>,
    pub filters: Vec<Filter>,
}

impl Restrictions {
    /// How many clustering columns the `=`/`IN` prefix restricts.
    pub fn clustering_eq_columns(&self) -> usize {
        self.clustering_eq.iter().map(Prefix::width).sum()
    }

    /// The `=`/`IN` restriction of one clustering column, when it restricts that column alone.
    pub fn clustering_values(&self, position: usize) -> Option<&Values> {
        let mut at = 0;
        for entry in &self.clustering_eq {
            match entry {
                Prefix::Column(values) if at == position => return Some(values),
                _ if at >= position => return None,
                _ => at += entry.width(),
            }
        }
        None
    }
}

/// What the statement kind allows (SELECT, UPDATE, DELETE differ).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum StatementKind {
    Select { allow_filtering: bool },
    Update,
    Delete,
}

#[derive(Default)]
struct Collected {
    pk: Vec<Option<Values>>,
    token: Option<Slice>,
    eq: Vec<Option<Values>>,
    slices: Vec<Option<Slice>>,
    multi: Vec<Written>,
    /// The columns of each `(a, b) = (...)`, restricted as single columns.
    multi_eq: Vec<Vec<String>>,
    /// Relations filtered row by row (map entries `m[key] = value` too), their values
    /// analysed where they stand: Cassandra prepares every relation's value, in order, before
    /// it checks what the relations select.
    filters: Vec<Filter>,
}

pub fn analyze(
    table: &TableMetadata,
    relations: &[Relation],
    kind: StatementKind,
    binder: &mut Binder,
) -> CqlResult<Restrictions> {
    let mut c = Collected {
        pk: vec![None; table.partition_key.len()],
        eq: vec![None; table.clustering.len()],
        slices: vec![None; table.clustering.len()],
        ..Collected::default()
    };
    for r in relations {
        collect(table, r, &mut c, binder)?;
    }
    let filtering = matches!(
        kind,
        StatementKind::Select {
            allow_filtering: true
        }
    );
    let mut pk_filters = Vec::new();
    let partition = partition_selection(table, &mut c, kind, filtering, &mut pk_filters)?;
    let groups = multi_column::groups(table, std::mem::take(&mut c.multi), &c.multi_eq, binder)?;
    let parts = clustering(table, &mut c, groups, kind, &partition, filtering)?;
    let key_token = c.token.take();
    let mut filters = parts.filters;
    filters.append(&mut pk_filters);
    if !filtering && !c.filters.is_empty() {
        return Err(filtering_error(kind, &c.filters));
    }
    filters.append(&mut c.filters);
    Ok(Restrictions {
        partition,
        key_token,
        clustering_eq: parts.eq,
        clustering_slice: parts.slice,
        multi_slice: parts.multi,
        filters,
    })
}

/// Filtering without ALLOW FILTERING; an UPDATE or DELETE names the filtered columns as
/// Cassandra 5.0.4 does (sorted, with a trailing space).
fn filtering_error(kind: StatementKind, filters: &[Filter]) -> CqlError {
    if let StatementKind::Select { .. } = kind {
        return CqlError::invalid(FILTERING_MESSAGE);
    }
    let mut names: Vec<&str> = filters.iter().map(|f| f.column.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    CqlError::invalid(format!(
        "Non PRIMARY KEY columns found in where clause: {} ",
        names.join(", ")
    ))
}

/// A null constant is refused here for key and counter columns, as Cassandra refuses it
/// when it prepares the relation; for other columns the filter refuses it when it runs
/// (`Unsupported null value for column v`), after the other checks of the statement.
fn null_refusal(col: &ColumnMetadata) -> CqlResult<()> {
    if col.ty.is_counter() {
        return Err(CqlError::invalid(
            "Invalid null value for counter increment/decrement",
        ));
    }
    if col.kind.is_primary_key() {
        return Err(CqlError::invalid(format!(
            "Invalid null value in condition for column {}",
            col.name
        )));
    }
    Ok(())
}

fn collect(
    table: &TableMetadata,
    r: &Relation,
    c: &mut Collected,
    binder: &mut Binder,
) -> CqlResult<()> {
    match r {
        Relation::Single {
            column: name,
            op,
            value,
        } => {
            let col = column(table, name)?.clone();
            if *op == Operator::Neq {
                return Err(CqlError::invalid(format!(
                    "Unsupported \"!=\" relation: {} != {}",
                    col.name,
                    terms::term_text(value)
                )));
            }
            if matches!(value, Term::Null) {
                null_refusal(&col)?;
            }
            single(table, col, *op, value, c, binder)
        }
        Relation::Token { columns, op, value } => token(table, columns, *op, value, c, binder),
        Relation::MultiColumn { columns, op, value } => {
            for (i, name) in columns.iter().enumerate() {
                if columns[..i].contains(name) {
                    return Err(CqlError::invalid(format!(
                        "Column \"{name}\" appeared twice in a relation: {}",
                        multi_column::relation_text(columns, *op, value)
                    )));
                }
                let col = column(table, name)?;
                if col.kind != ColumnKind::Clustering {
                    return Err(CqlError::invalid(format!(
                        "Multi-column relations can only be applied to clustering columns but was applied to: {}",
                        col.name
                    )));
                }
            }
            if *op == Operator::Neq {
                return Err(CqlError::invalid(format!(
                    "Unsupported \"!=\" relation: {}",
                    multi_column::relation_text(columns, *op, value)
                )));
            }
            if *op == Operator::Eq {
                return multi_eq(table, columns, value, c, binder);
            }
            c.multi.push((columns.clone(), *op, value.clone()));
            Ok(())
        }
        Relation::IsNotNull(_) => Err(CqlError::invalid(
            "IS NOT NULL restrictions are only supported on materialized views",
        )),
        Relation::MapElement {
            column: name,
            key,
            op: Operator::Eq,
            value,
        } if matches!(column(table, name)?.ty.unfrozen(), CqlType::Map(..)) => {
            let col = column(table, name)?.clone();
            if !col.ty.is_multi_cell() {
                return Err(CqlError::invalid(format!(
                    "Map-entry equality predicates on frozen map column {name} are not supported"
                )));
            }
            c.filters
                .push(entry_filter(table, col, key, value, binder)?);
            Ok(())
        }
        Relation::MapElement { column: name, .. }
        | Relation::CustomIndex {
            index: cql::ast::QualifiedName { name, .. },
            ..
        } => Err(CqlError::invalid(format!(
            "Restrictions on {name} need a secondary index, which this node does not support yet"
        ))),
    }
}

/// `(a, b) = (x, y)` restricts as `a = x AND b = y` does (UPDATE and DELETE name rows with
/// it, filtering takes it out of primary key order), once its columns are checked to follow
/// each other in primary key order.
fn multi_eq(
    table: &TableMetadata,
    names: &[String],
    value: &Term,
    c: &mut Collected,
    binder: &mut Binder,
) -> CqlResult<()> {
    if names.is_empty() {
        return Err(CqlError::invalid("Empty multi-column relation"));
    }
    let operands = multi_column::equality(table, names, value, binder)?;
    for (name, operand) in names.iter().zip(operands) {
        let col = column(table, name)?.clone();
        let pos = col.position.max(0) as usize;
        if c.slices[pos].is_some() {
            return Err(eq_conflict(&col));
        }
        set_once(&mut c.eq[pos], Values::Eq(operand), &col)?;
    }
    c.multi_eq.push(names.to_vec());
    Ok(())
}

/// Cassandra refuses slices on durations, which have no order.
fn check_slice_type(ty: &CqlType) -> CqlResult<()> {
    if !crate::ddl::references_duration(ty) {
        return Ok(());
    }
    let holder = match ty.unfrozen() {
        CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) => "collections containing durations",
        CqlType::Tuple(_) => "tuples containing durations",
        CqlType::Udt(_) => "UDTs containing durations",
        _ => "duration columns",
    };
    Err(CqlError::invalid(format!(
        "Slice restrictions are not supported on {holder}"
    )))
}

fn single(
    table: &TableMetadata,
    col: ColumnMetadata,
    op: Operator,
    value: &Term,
    c: &mut Collected,
    binder: &mut Binder,
) -> CqlResult<()> {
    if matches!(
        op,
        Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte
    ) {
        check_slice_type(&col.ty)?;
    }
    check_collection_relation(&col, op)?;
    let pos = col.position.max(0) as usize;
    match (col.kind, op) {
        (ColumnKind::PartitionKey, Operator::Eq | Operator::In) => {
            let values = key_values(table, &col, op, value, binder)?;
            set_once(&mut c.pk[pos], values, &col)
        }
        (ColumnKind::Clustering, Operator::Eq | Operator::In) => {
            if c.slices[pos].is_some() {
                return Err(eq_conflict(&col));
            }
            let values = key_values(table, &col, op, value, binder)?;
            set_once(&mut c.eq[pos], values, &col)
        }
        (ColumnKind::Clustering, Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte) => {
            if c.eq[pos].is_some() {
                return Err(eq_conflict(&col));
            }
            let operand = terms::analyze(value, &spec(table, &col.name, col.ty.clone()), binder)?;
            let slice = c.slices[pos].get_or_insert_with(Slice::default);
            add_bound(slice, op, operand, &col.name)
        }
        _ => {
            let value = analyze_value(table, &col, op, value, binder)?;
            c.filters.push(Filter {
                column: col,
                op,
                value,
                key: None,
            });
            Ok(())
        }
    }
}

fn eq_conflict(col: &ColumnMetadata) -> CqlError {
    CqlError::invalid(format!(
        "{} cannot be restricted by more than one relation if it includes an Equal",
        col.name
    ))
}

fn set_once(slot: &mut Option<Values>, values: Values, col: &ColumnMetadata) -> CqlResult<()> {
    if slot.is_some() {
        return Err(eq_conflict(col));
    }
    *slot = Some(values);
    Ok(())
}

fn add_bound(slice: &mut Slice, op: Operator, operand: Operand, name: &str) -> CqlResult<()> {
    let (slot, which, inclusive) = match op {
        Operator::Gt => (&mut slice.start, "start", false),
        Operator::Gte => (&mut slice.start, "start", true),
        Operator::Lt => (&mut slice.end, "end", false),
        _ => (&mut slice.end, "end", true),
    };
    if slot.is_some() {
        return Err(CqlError::invalid(format!(
            "More than one restriction was found for the {which} bound on {name}"
        )));
    }
    *slot = Some((operand, inclusive));
    Ok(())
}

fn key_values(
    table: &TableMetadata,
    col: &ColumnMetadata,
    op: Operator,
    value: &Term,
    binder: &mut Binder,
) -> CqlResult<Values> {
    let s = spec(table, &col.name, col.ty.clone());
    if op == Operator::Eq {
        return terms::analyze(value, &s, binder).map(Values::Eq);
    }
    match value {
        Term::List(items) | Term::Tuple(items) => items
            .iter()
            .map(|t| terms::analyze(t, &s, binder))
            .collect::<CqlResult<Vec<_>>>()
            .map(Values::In),
        Term::Bind(m) => {
            let list = spec(
                table,
                &format!("in({})", col.name),
                CqlType::List(Box::new(col.ty.clone())),
            );
            Ok(Values::InList(binder.bind(
                m.index,
                m.name.as_deref(),
                list,
            )))
        }
        _ => Err(CqlError::invalid(format!(
            "Invalid IN relation on {}",
            col.name
        ))),
    }
}

fn analyze_value(
    table: &TableMetadata,
    col: &ColumnMetadata,
    op: Operator,
    term: &Term,
    binder: &mut Binder,
) -> CqlResult<Operand> {
    let ty = match op {
        Operator::In => CqlType::List(Box::new(col.ty.clone())),
        Operator::Contains => match col.ty.unfrozen() {
            CqlType::List(e) | CqlType::Set(e) => e.as_ref().clone(),
            CqlType::Map(_, v) => v.as_ref().clone(),
            _ => {
                return Err(CqlError::invalid(format!(
                    "Cannot use CONTAINS on non-collection column {}",
                    col.name
                )))
            }
        },
        Operator::ContainsKey => match col.ty.unfrozen() {
            CqlType::Map(k, _) => k.as_ref().clone(),
            _ => {
                return Err(CqlError::invalid(format!(
                    "Cannot use CONTAINS KEY on non-map column {}",
                    col.name
                )))
            }
        },
        _ => col.ty.clone(),
    };
    let term = match (op, term) {
        (Operator::In, Term::Tuple(items)) => Term::List(items.clone()),
        _ => term.clone(),
    };
    // Cassandra names a CONTAINS value after the part of the collection it is compared with.
    let name = match op {
        Operator::Contains => format!("value({})", col.name),
        Operator::ContainsKey => format!("key({})", col.name),
        _ => col.name.clone(),
    };
    terms::analyze(&term, &spec(table, &name, ty), binder)
}

/// A non-frozen collection is compared element by element only (CONTAINS, CONTAINS KEY).
fn check_collection_relation(col: &ColumnMetadata, op: Operator) -> CqlResult<()> {
    let whole = matches!(
        op,
        Operator::Eq | Operator::In | Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte
    );
    if whole && col.ty.is_multi_cell() && col.ty.is_collection() {
        return Err(CqlError::invalid(format!(
            "Collection column '{}' ({}) cannot be restricted by a '{}' relation",
            col.name,
            col.ty.cql_name(),
            operator_text(op)
        )));
    }
    Ok(())
}

pub(crate) fn operator_text(op: Operator) -> &'static str {
    match op {
        Operator::Eq => "=",
        Operator::Lt => "<",
        Operator::Lte => "<=",
        Operator::Gt => ">",
        Operator::Gte => ">=",
        Operator::In => "IN",
        Operator::Neq => "!=",
        _ => "?",
    }
}

fn token(
    table: &TableMetadata,
    columns: &[String],
    op: Operator,
    value: &Term,
    c: &mut Collected,
    binder: &mut Binder,
) -> CqlResult<()> {
    let pk: Vec<&str> = table
        .partition_key_columns()
        .map(|c| c.name.as_str())
        .collect();
    if columns.len() != pk.len() {
        return Err(CqlError::invalid(
            "The token() function must be applied to all partition key components or none of them",
        ));
    }
    if columns.iter().zip(&pk).any(|(a, b)| a != b) {
        return Err(CqlError::invalid(format!(
            "The token function arguments must be in the partition key order: {}",
            pk.join(", ")
        )));
    }
    let s = spec(
        table,
        "partition key token",
        CqlType::Native(NativeType::Bigint),
    );
    let operand = terms::analyze(value, &s, binder)?;
    let slice = c.token.get_or_insert_with(Slice::default);
    match op {
        Operator::Eq => {
            if slice.start.is_some() || slice.end.is_some() {
                return Err(CqlError::invalid("partition key token cannot be restricted by more than one relation if it includes an Equal"));
            }
            slice.start = Some((operand.clone(), true));
            slice.end = Some((operand, true));
            Ok(())
        }
        Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte => {
            add_bound(slice, op, operand, "partition key token")
        }
        _ => Err(CqlError::invalid(format!(
            "Unsupported operator {op:?} on token"
        ))),
    }
}

fn partition_selection(
    table: &TableMetadata,
    c: &mut Collected,
    kind: StatementKind,
    filtering: bool,
    pk_filters: &mut Vec<Filter>,
) -> CqlResult<PartitionSelection> {
    let statement = match kind {
        StatementKind::Select { .. } => None,
        StatementKind::Update => Some("UPDATE"),
        StatementKind::Delete => Some("DELETE"),
    };
    if let (Some(statement), Some(_)) = (statement, &c.token) {
        return Err(CqlError::invalid(format!(
            "The token function cannot be used in WHERE clauses for {statement} statements"
        )));
    }
    let restricted = c.pk.iter().filter(|v| v.is_some()).count();
    if restricted == c.pk.len() {
        return Ok(PartitionSelection::Keys(c.pk.drain(..).flatten().collect()));
    }
    if let Some(statement) = statement {
        let key_slice = c
            .filters
            .iter()
            .any(|f| f.column.kind == ColumnKind::PartitionKey);
        if key_slice {
            return Err(CqlError::invalid(format!(
                "Only EQ and IN relation are supported on the partition key (unless you use the token() function) for {statement} statements"
            )));
        }
        let missing: Vec<&str> = table
            .partition_key_columns()
            .zip(&c.pk)
            .filter(|(_, v)| v.is_none())
            .map(|(col, _)| col.name.as_str())
            .collect();
        return Err(CqlError::invalid(format!(
            "Some partition key parts are missing: {}",
            missing.join(", ")
        )));
    }
    if restricted > 0 {
        if !filtering {
            return Err(CqlError::invalid(FILTERING_MESSAGE));
        }
        // Part of the partition key: every partition is read and its rows filtered.
        let columns = table.partition_key_columns().zip(c.pk.drain(..));
        for (col, values) in columns {
            if let Some(values) = values {
                pk_filters.push(key_filter(col, values));
            }
        }
    }
    Ok(PartitionSelection::Range(
        c.token.take().unwrap_or_default(),
    ))
}

/// `m[key] = value` as a filter on each row: the entry's key and value typed as the map's.
fn entry_filter(
    table: &TableMetadata,
    col: ColumnMetadata,
    key: &Term,
    value: &Term,
    binder: &mut Binder,
) -> CqlResult<Filter> {
    let CqlType::Map(key_type, value_type) = col.ty.unfrozen().clone() else {
        return Err(CqlError::invalid(format!(
            "Column {} is not a map",
            col.name
        )));
    };
    let key_spec = spec(table, &format!("key({})", col.name), *key_type);
    let value_spec = spec(table, &format!("value({})", col.name), *value_type);
    Ok(Filter {
        key: Some(terms::analyze(key, &key_spec, binder)?),
        value: terms::analyze(value, &value_spec, binder)?,
        op: Operator::Eq,
        column: col,
    })
}

/// A partition key column's `=`/`IN` as a filter on each row.
fn key_filter(column: &ColumnMetadata, values: Values) -> Filter {
    let (op, value) = match values {
        Values::Eq(value) => (Operator::Eq, value),
        Values::In(items) => (
            Operator::In,
            Operand::Composite {
                ty: CqlType::List(Box::new(column.ty.clone())),
                parts: items,
            },
        ),
        Values::InList(list) => (Operator::In, list),
    };
    Filter {
        column: column.clone(),
        op,
        value,
        key: None,
    }
}

/// The `=`/`IN` prefix, the slice after it, and restrictions left for filtering.
struct ClusteringParts {
    eq: Vec<Prefix>,
    slice: Option<Slice>,
    multi: Option<MultiSlice>,
    filters: Vec<Filter>,
}

/// The restricted clustering columns must follow each other from the first one: `=`/`IN`
/// on single columns or (multi-column `IN`) several, then at most one slice.
fn clustering(
    table: &TableMetadata,
    c: &mut Collected,
    mut groups: Vec<Group>,
    kind: StatementKind,
    partition: &PartitionSelection,
    filtering: bool,
) -> CqlResult<ClusteringParts> {
    let cols: Vec<&ColumnMetadata> = table.clustering_columns().collect();
    multi_column::merge_single(&mut groups, &cols, &c.eq, &mut c.slices)?;
    let mut parts = ClusteringParts {
        eq: Vec::new(),
        slice: None,
        multi: None,
        filters: Vec::new(),
    };
    // The first column of the slice that ends the prefix.
    let mut slice_start = None;
    let mut i = 0;
    while i < cols.len() {
        if let Some(v) = c.eq[i].take() {
            parts.eq.push(Prefix::Column(v));
            i += 1;
            continue;
        }
        if let Some(at) = groups.iter().position(|g| g.first == i) {
            let group = groups.swap_remove(at);
            i += group.names.len();
            match group.kind {
                GroupKind::In(values) => {
                    parts.eq.push(values);
                    continue;
                }
                GroupKind::Slice(slice) => {
                    parts.multi = Some(slice);
                    slice_start = Some(group.first);
                    break;
                }
            }
        }
        if let Some(s) = c.slices[i].take() {
            parts.slice = Some(s);
            slice_start = Some(i);
            i += 1;
        }
        break;
    }
    let stop = i;
    for j in stop..cols.len() {
        if c.eq[j].is_none() && c.slices[j].is_none() {
            continue;
        }
        let single_partition = matches!(partition, PartitionSelection::Keys(_));
        if !single_partition && matches!(kind, StatementKind::Select { .. }) && !filtering {
            return Err(CqlError::invalid(FILTERING_MESSAGE));
        }
        if filtering {
            parts.filters.extend(clustering_filters(
                cols[j],
                c.eq[j].take(),
                c.slices[j].take(),
            ));
            continue;
        }
        if kind == StatementKind::Update && slice_start.is_none() {
            let missing: Vec<&str> = (stop..cols.len())
                .filter(|&p| c.eq[p].is_none())
                .map(|p| cols[p].name.as_str())
                .collect();
            return Err(CqlError::invalid(format!(
                "Some clustering keys are missing: {}",
                missing.join(", ")
            )));
        }
        let msg = match slice_start {
            Some(s) if parts.multi.is_some() || stop == j => {
                after_slice(&cols[j].name, &cols[s].name)
            }
            _ => unrestricted_before(&cols[j].name, &cols[j - 1].name),
        };
        return Err(CqlError::invalid(msg));
    }
    if let Some(group) = groups.iter().min_by_key(|g| g.first) {
        let name = &cols[group.first].name;
        let msg = match slice_start {
            Some(s) => after_slice(name, &cols[s].name),
            None => unrestricted_before(name, &cols[group.first.saturating_sub(1)].name),
        };
        return Err(CqlError::invalid(msg));
    }
    let restricted_any = !parts.eq.is_empty() || parts.slice.is_some() || parts.multi.is_some();
    if restricted_any && matches!(kind, StatementKind::Select { .. }) && !filtering {
        if let PartitionSelection::Range(_) = partition {
            return Err(CqlError::invalid(FILTERING_MESSAGE));
        }
    }
    let sliced = parts.slice.is_some() || parts.multi.is_some();
    check_modification_clustering(&cols, &parts.eq, sliced, kind)?;
    Ok(parts)
}

fn after_slice(column: &str, slice_column: &str) -> String {
    format!(
        "Clustering column \"{column}\" cannot be restricted (preceding column \"{slice_column}\" is restricted by a non-EQ relation)"
    )
}

fn unrestricted_before(column: &str, previous: &str) -> String {
    format!(
        "PRIMARY KEY column \"{column}\" cannot be restricted as preceding column \"{previous}\" is not restricted"
    )
}

/// Row-by-row checks for a clustering column restricted out of primary key order.
fn clustering_filters(
    col: &ColumnMetadata,
    eq: Option<Values>,
    slice: Option<Slice>,
) -> Vec<Filter> {
    let filter = |op, value| Filter {
        column: col.clone(),
        op,
        value,
        key: None,
    };
    let mut out = Vec::new();
    match eq {
        Some(Values::Eq(v)) => out.push(filter(Operator::Eq, v)),
        Some(Values::In(parts)) => {
            let ty = CqlType::List(Box::new(col.ty.clone()));
            out.push(filter(Operator::In, Operand::Composite { ty, parts }));
        }
        Some(Values::InList(list)) => out.push(filter(Operator::In, list)),
        None => {}
    }
    let Some(slice) = slice else { return out };
    let bounds = [
        (slice.start, Operator::Gte, Operator::Gt),
        (slice.end, Operator::Lte, Operator::Lt),
    ];
    for (bound, inclusive, exclusive) in bounds {
        if let Some((v, incl)) = bound {
            out.push(filter(if incl { inclusive } else { exclusive }, v));
        }
    }
    out
}

fn check_modification_clustering(
    cols: &[&ColumnMetadata],
    eq: &[Prefix],
    sliced: bool,
    kind: StatementKind,
) -> CqlResult<()> {
    if kind == StatementKind::Update {
        if sliced {
            return Err(CqlError::invalid(
                "Slice restrictions are not supported on the clustering columns in UPDATE statements",
            ));
        }
        let restricted: usize = eq.iter().map(Prefix::width).sum();
        if restricted < cols.len() {
            let missing: Vec<&str> = cols[restricted..].iter().map(|c| c.name.as_str()).collect();
            return Err(CqlError::invalid(format!(
                "Some clustering keys are missing: {}",
                missing.join(", ")
            )));
        }
    }
    Ok(())
}
