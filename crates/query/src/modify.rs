//! INSERT, UPDATE and DELETE: analysis into per-column operations and execution into
//! storage mutations (cells, row markers, tombstones, counter deltas), with Cassandra's
//! checks and messages.
use std::sync::Arc;

use bytes::Bytes;
use cql::ast::{Delete, Insert, InsertValues, Relation, Update, UsingOption};
use mutation::{
    CounterUpdate, DeletionTime, LivenessInfo, Mutation, PartitionKey, PartitionUpdate,
    RangeTombstone, Row,
};
use schema::{ColumnKind, ColumnMetadata, TableMetadata};
use types::{CqlError, CqlResult, CqlType, NativeType};

use crate::assignments::{self, Op};
use crate::cells::{self, Write};
use crate::columns::{column, spec};
use crate::conditions::{self, Conditions};
use crate::exec::ExecContext;
use crate::keys::KeyLayout;
use crate::operand::{Binder, Operand, Resolved};
use crate::restrictions::{self, Prefix, Restrictions, StatementKind, Values};
use crate::slices;
use crate::terms;

const MAX_TTL: i64 = 630_720_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Insert,
    Update,
    Delete,
}

/// An analysed INSERT, UPDATE or DELETE.
#[derive(Debug)]
pub struct ModifyPlan {
    pub layout: KeyLayout,
    kind: Kind,
    restrictions: Restrictions,
    ops: Vec<Op>,
    ttl: Option<Operand>,
    timestamp: Option<Operand>,
    /// The IF clause, when the statement is a lightweight transaction.
    conditions: Option<Conditions>,
}

fn using(
    table: &TableMetadata,
    options: &[UsingOption],
    binder: &mut Binder,
) -> CqlResult<(Option<Operand>, Option<Operand>)> {
    let (mut ttl, mut ts) = (None, None);
    for o in options {
        match o {
            UsingOption::Ttl(t) => {
                ttl = Some(terms::analyze(
                    t,
                    &spec(table, "[ttl]", CqlType::Native(NativeType::Int)),
                    binder,
                )?)
            }
            UsingOption::Timestamp(t) => {
                ts = Some(terms::analyze(
                    t,
                    &spec(table, "[timestamp]", CqlType::Native(NativeType::Bigint)),
                    binder,
                )?)
            }
        }
    }
    if ts.is_some() && table.is_counter() {
        return Err(CqlError::invalid(
            "Cannot provide custom timestamp for counter updates",
        ));
    }
    if ttl.is_some() && table.is_counter() {
        return Err(CqlError::invalid(
            "Cannot provide custom TTL for counter updates",
        ));
    }
    Ok((ttl, ts))
}

impl ModifyPlan {
    pub fn insert(
        table: Arc<TableMetadata>,
        s: &Insert,
        binder: &mut Binder,
    ) -> CqlResult<ModifyPlan> {
        binder.on_table(&table);
        if table.is_counter() {
            return Err(CqlError::invalid(
                "INSERT statements are not allowed on counter tables, use UPDATE instead",
            ));
        }
        let assigned = match &s.values {
            InsertValues::Columns { columns, values } => {
                if columns.len() != values.len() {
                    return Err(CqlError::invalid("Unmatched column names/values"));
                }
                if columns
                    .iter()
                    .enumerate()
                    .any(|(i, c)| columns[..i].contains(c))
                {
                    return Err(CqlError::invalid("The column names contains duplicates"));
                }
                let mut assigned = Vec::with_capacity(columns.len());
                for (name, term) in columns.iter().zip(values) {
                    let col = column(&table, name)?.clone();
                    let operand =
                        terms::analyze(term, &spec(&table, &col.name, col.ty.clone()), binder)?;
                    assigned.push((col, operand));
                }
                assigned
            }
            InsertValues::Json {
                value,
                default_unset,
            } => json_values(&table, value, *default_unset, binder)?,
        };
        let (ttl, timestamp) = using(&table, &s.using, binder)?;
        let conditions =
            conditions::analyze(&table, None, s.if_not_exists, timestamp.is_some(), binder)?;
        let mut pk: Vec<Option<Values>> = vec![None; table.partition_key.len()];
        let mut ck: Vec<Option<Values>> = vec![None; table.clustering.len()];
        let mut ops = Vec::new();
        for (col, operand) in assigned {
            if ops.iter().any(|o: &Op| o.column().name == col.name)
                || pk.iter().chain(&ck).flatten().count() > 0 && is_key_set(&table, &col, &pk, &ck)
            {
                return Err(CqlError::invalid(format!(
                    "Multiple definitions found for column {}",
                    col.name
                )));
            }
            let pos = col.position.max(0) as usize;
            match col.kind {
                ColumnKind::PartitionKey => pk[pos] = Some(Values::Eq(operand)),
                ColumnKind::Clustering => ck[pos] = Some(Values::Eq(operand)),
                _ => ops.push(Op::Set(col, operand)),
            }
        }
        let missing = |cols: Vec<&ColumnMetadata>, set: &[Option<Values>]| -> Vec<String> {
            cols.iter()
                .zip(set)
                .filter(|(_, v)| v.is_none())
                .map(|(c, _)| c.name.clone())
                .collect()
        };
        let missing_pk = missing(table.partition_key_columns().collect(), &pk);
        if !missing_pk.is_empty() {
            return Err(CqlError::invalid(format!(
                "Some partition key parts are missing: {}",
                missing_pk.join(", ")
            )));
        }
        let missing_ck = missing(table.clustering_columns().collect(), &ck);
        let only_static =
            !ops.is_empty() && ops.iter().all(|o| o.column().kind == ColumnKind::Static);
        let statics_only = only_static && ck.iter().all(Option::is_none);
        if !missing_ck.is_empty() && !statics_only {
            return Err(CqlError::invalid(format!(
                "Some clustering keys are missing: {}",
                missing_ck.join(", ")
            )));
        }
        let restrictions = Restrictions {
            partition: restrictions::PartitionSelection::Keys(pk.into_iter().flatten().collect()),
            key_token: None,
            clustering_eq: ck.into_iter().flatten().map(Prefix::Column).collect(),
            clustering_slice: None,
            multi_slice: None,
            filters: Vec::new(),
        };
        Ok(ModifyPlan {
            layout: KeyLayout::new(table),
            kind: Kind::Insert,
            restrictions,
            ops,
            ttl,
            timestamp,
            conditions,
        })
    }

    pub fn update(
        table: Arc<TableMetadata>,
        s: &Update,
        binder: &mut Binder,
    ) -> CqlResult<ModifyPlan> {
        binder.on_table(&table);
        let (ttl, timestamp) = using(&table, &s.using, binder)?;
        let conditions = conditions::analyze(
            &table,
            s.conditions.as_ref(),
            false,
            timestamp.is_some(),
            binder,
        )?;
        let mut ops = Vec::with_capacity(s.assignments.len());
        for a in &s.assignments {
            ops.push(assignments::assignment(&table, a, binder)?);
        }
        let only_static = ops.iter().all(|o| o.column().kind == ColumnKind::Static)
            && !conditions
                .as_ref()
                .is_some_and(Conditions::on_regular_columns);
        let restrictions = where_clause(
            &table,
            &s.where_clause,
            StatementKind::Update,
            only_static,
            binder,
        )?;
        Ok(ModifyPlan {
            layout: KeyLayout::new(table),
            kind: Kind::Update,
            restrictions,
            ops,
            ttl,
            timestamp,
            conditions,
        })
    }

    pub fn delete(
        table: Arc<TableMetadata>,
        s: &Delete,
        binder: &mut Binder,
    ) -> CqlResult<ModifyPlan> {
        binder.on_table(&table);
        let timestamp = match &s.using_timestamp {
            Some(t) => Some(terms::analyze(
                t,
                &spec(&table, "[timestamp]", CqlType::Native(NativeType::Bigint)),
                binder,
            )?),
            None => None,
        };
        let conditions = conditions::analyze(
            &table,
            s.conditions.as_ref(),
            false,
            timestamp.is_some(),
            binder,
        )?;
        let mut ops = Vec::with_capacity(s.columns.len());
        for target in &s.columns {
            ops.push(assignments::delete_target(&table, target, binder)?);
        }
        let restrictions =
            restrictions::analyze(&table, &s.where_clause, StatementKind::Delete, binder)?;
        if let Some(conditions) = &conditions {
            conditional_delete(&table, &restrictions, &ops, conditions)?;
        }
        let partial = restrictions.clustering_eq_columns() < table.clustering.len();
        let ranged = restrictions.clustering_slice.is_some() || restrictions.multi_slice.is_some();
        let only_static =
            !ops.is_empty() && ops.iter().all(|o| o.column().kind == ColumnKind::Static);
        if only_static {
            only_static_rows(&restrictions, "DELETE")?;
        } else if !ops.is_empty() && (partial || ranged) {
            return Err(CqlError::invalid(
                "Range deletions are not supported for specific columns",
            ));
        }
        Ok(ModifyPlan {
            layout: KeyLayout::new(table),
            kind: Kind::Delete,
            restrictions,
            ops,
            ttl: None,
            timestamp,
            conditions,
        })
    }

    pub fn is_counter(&self) -> bool {
        self.layout.table.is_counter()
    }

    /// Whether this is a DELETE statement.
    pub fn is_deletion(&self) -> bool {
        self.kind == Kind::Delete
    }

    /// Positions of the partition key's bind markers, for the PREPARED result.
    pub fn table(&self) -> &Arc<TableMetadata> {
        &self.layout.table
    }

    /// The mutations this statement makes; `stored` holds the rows its `stored_reads` named.
    pub fn mutations(&self, ctx: &ExecContext, stored: &StoredRows) -> CqlResult<Vec<Mutation>> {
        self.mutations_at(ctx, stored, self.timestamp(ctx)?)
    }

    /// The mutations this statement makes with every cell written at `ts` (a lightweight
    /// transaction writes at its ballot's time).
    pub fn mutations_at(
        &self,
        ctx: &ExecContext,
        stored: &StoredRows,
        ts: i64,
    ) -> CqlResult<Vec<Mutation>> {
        let keys = self.partition_keys(ctx)?;
        let w = Write {
            ctx,
            ts,
            ttl: self.ttl(ctx)?,
        };
        let table = mutation::TableId(self.layout.table.id);
        if !self.ops.iter().any(Op::reads_existing) {
            let update = self.partition_update(&w, None)?;
            // Cloned for every key but the last, which takes it (one key: no copy).
            let mut keys = keys.into_iter();
            let last = keys.next_back();
            let mut out: Vec<Mutation> = keys
                .map(|key| Mutation {
                    table,
                    key,
                    update: update.clone(),
                })
                .collect();
            out.extend(last.map(|key| Mutation { table, key, update }));
            return Ok(out);
        }
        keys.into_iter()
            .map(|key| {
                let update = self.partition_update(&w, Some((&key, stored)))?;
                Ok(Mutation { table, key, update })
            })
            .collect()
    }

    /// The rows to read before the write, as (partition, clustering, `None` for the static
    /// row): those whose operations need the stored cells (list positions, removal of list
    /// elements by value), as Cassandra reads them first.
    pub fn stored_reads(&self, ctx: &ExecContext) -> CqlResult<Vec<(PartitionKey, Option<Bytes>)>> {
        let (static_ops, row_ops) = self.split_ops();
        let needs = |ops: &[&Op]| ops.iter().any(|o| o.reads_existing());
        let (statics, rows) = (needs(&static_ops), needs(&row_ops) && self.names_rows());
        if !statics && !rows {
            return Ok(Vec::new());
        }
        let clusterings = if rows {
            self.clusterings(ctx)?
        } else {
            Vec::new()
        };
        let mut reads = Vec::new();
        for key in self.partition_keys(ctx)? {
            if statics {
                reads.push((key.clone(), None));
            }
            reads.extend(clusterings.iter().map(|c| (key.clone(), Some(c.clone()))));
        }
        Ok(reads)
    }

    pub(crate) fn partition_keys(&self, ctx: &ExecContext) -> CqlResult<Vec<PartitionKey>> {
        let restrictions::PartitionSelection::Keys(cols) = &self.restrictions.partition else {
            return Err(CqlError::invalid("Missing mandatory PRIMARY KEY part"));
        };
        slices::partition_keys(&self.layout, cols, ctx)
    }

    /// The operations on static columns, and the others.
    pub(crate) fn split_ops(&self) -> (Vec<&Op>, Vec<&Op>) {
        self.ops
            .iter()
            .partition(|o| o.column().kind == ColumnKind::Static)
    }

    /// The counter deltas this statement adds, per partition.
    pub fn counter_updates(
        &self,
        ctx: &ExecContext,
    ) -> CqlResult<Vec<(PartitionKey, Vec<CounterUpdate>)>> {
        let keys = self.partition_keys(ctx)?;
        let clusterings = self.clusterings(ctx)?;
        let mut updates = Vec::new();
        for op in &self.ops {
            let (col, operand, sign) = match op {
                Op::Add(c, o) => (c, o, 1i64),
                Op::Subtract(c, o) => (c, o, -1i64),
                _ => {
                    return Err(CqlError::invalid(
                        "Cannot mix counter and non counter updates",
                    ))
                }
            };
            let delta = match operand.resolve(ctx)? {
                Resolved::Value(b) => i64::from_be_bytes(
                    b.as_ref()
                        .try_into()
                        .map_err(|_| CqlError::invalid("Invalid counter delta"))?,
                ),
                Resolved::Unset => continue,
                Resolved::Null => {
                    return Err(CqlError::invalid(format!(
                        "Invalid null value for counter increment on {}",
                        col.name
                    )))
                }
            };
            let targets: Vec<Option<Bytes>> = if col.kind == ColumnKind::Static {
                vec![None]
            } else {
                clusterings.iter().cloned().map(Some).collect()
            };
            for clustering in targets {
                updates.push(CounterUpdate {
                    clustering,
                    column: mutation::column_name(&col.name),
                    delta: delta.wrapping_mul(sign),
                });
            }
        }
        Ok(keys.into_iter().map(|k| (k, updates.clone())).collect())
    }

    /// The write timestamp: `USING TIMESTAMP`, else the batch's or the client's, else now.
    pub(crate) fn timestamp(&self, ctx: &ExecContext) -> CqlResult<i64> {
        let timestamp = match &self.timestamp {
            Some(op) => match op.resolve(ctx)? {
                Resolved::Value(b) => i64::from_be_bytes(
                    b.as_ref()
                        .try_into()
                        .map_err(|_| CqlError::invalid("Invalid timestamp"))?,
                ),
                Resolved::Null => return Err(CqlError::invalid("Invalid null value of timestamp")),
                Resolved::Unset => ctx.default_timestamp(),
            },
            None => ctx.default_timestamp(),
        };
        // Cassandra keeps i64::MIN to mean "no timestamp" (UpdateParameters refuses it); here a
        // collection overwrite's tombstone at `timestamp - 1` would overflow too.
        if timestamp == i64::MIN {
            return Err(CqlError::invalid(format!(
                "Out of bound timestamp, must be in [{}, {}]",
                i64::MIN + 1,
                i64::MAX
            )));
        }
        Ok(timestamp)
    }

    fn ttl(&self, ctx: &ExecContext) -> CqlResult<i32> {
        let default = self.layout.table.options.default_time_to_live;
        let Some(op) = &self.ttl else {
            return Ok(default);
        };
        let v = match op.resolve(ctx)? {
            Resolved::Value(b) => i32::from_be_bytes(
                b.as_ref()
                    .try_into()
                    .map_err(|_| CqlError::invalid("Invalid TTL"))?,
            ) as i64,
            // As Cassandra: a null TTL writes without one, an unset TTL takes the default.
            Resolved::Null => return Ok(0),
            Resolved::Unset => return Ok(default),
        };
        if v < 0 {
            return Err(CqlError::invalid(format!(
                "A TTL must be greater or equal to 0, but was {v}"
            )));
        }
        if v > MAX_TTL {
            return Err(CqlError::invalid(format!(
                "ttl is too large. requested ({v}) maximum ({MAX_TTL})"
            )));
        }
        Ok(v as i32)
    }

    pub(crate) fn clusterings(&self, ctx: &ExecContext) -> CqlResult<Vec<Bytes>> {
        let names: Vec<String> = self
            .layout
            .table
            .clustering_columns()
            .map(|c| c.name.clone())
            .collect();
        let combos = slices::prefixes(&self.restrictions.clustering_eq, &names, ctx)?;
        for combo in &combos {
            crate::keys::check_key_length(combo)?;
        }
        Ok(combos.iter().map(|c| self.layout.clustering(c)).collect())
    }

    /// Whether the statement names whole rows (every clustering column given by `=` or `IN`).
    pub(crate) fn names_rows(&self) -> bool {
        self.restrictions.clustering_eq_columns() == self.layout.clustering_types.len()
            && self.restrictions.clustering_slice.is_none()
            && self.restrictions.multi_slice.is_none()
    }

    /// A DELETE of whole rows: a row, range or partition deletion.
    fn deletion_update(&self, ctx: &ExecContext, ts: i64) -> CqlResult<PartitionUpdate> {
        let mut update = PartitionUpdate::default();
        let deletion = DeletionTime::new(ts, ctx.now_seconds);
        let unrestricted = self.restrictions.clustering_eq.is_empty()
            && self.restrictions.clustering_slice.is_none()
            && self.restrictions.multi_slice.is_none();
        if self.layout.clustering_types.is_empty() {
            let mut row = Row::new(self.layout.clustering(&[]));
            row.deletion = deletion;
            update.rows.push(row);
        } else if unrestricted {
            update.partition_deletion = deletion;
        } else if self.names_rows() {
            for c in self.clusterings(ctx)? {
                let mut row = Row::new(c);
                row.deletion = deletion;
                update.rows.push(row);
            }
        } else {
            for (start, end) in slices::clustering_slices(&self.layout, &self.restrictions, ctx)? {
                update.range_tombstones.push(RangeTombstone {
                    start,
                    end,
                    deletion,
                });
            }
        }
        Ok(update)
    }

    /// What this statement writes to one partition; `stored` holds its rows as read before
    /// the write when an operation needs them.
    fn partition_update(
        &self,
        w: &Write,
        stored: Option<(&PartitionKey, &StoredRows)>,
    ) -> CqlResult<PartitionUpdate> {
        if self.kind == Kind::Delete && self.ops.is_empty() {
            return self.deletion_update(w.ctx, w.ts);
        }
        let mut update = PartitionUpdate::default();
        let row_of =
            |clustering: Option<&Bytes>| stored.and_then(|(key, rows)| rows.row(key, clustering));
        let (static_ops, row_ops) = self.split_ops();
        if !static_ops.is_empty() {
            let mut row = Row::new(Bytes::new());
            for op in static_ops {
                cells::apply(&mut row, op, w, row_of(None))?;
            }
            sort_columns(&mut row);
            update.static_row = Some(row);
        }
        let no_rows = row_ops.is_empty() && self.kind != Kind::Insert;
        if no_rows || !self.names_rows() {
            return Ok(update);
        }
        for c in self.clusterings(w.ctx)? {
            let existing = row_of(Some(&c));
            let mut row = Row::new(c);
            if self.kind == Kind::Insert {
                row.liveness = Some(if w.ttl > 0 {
                    LivenessInfo::expiring(w.ts, w.ttl, w.ctx.now_seconds)
                } else {
                    LivenessInfo::new(w.ts)
                });
            }
            for op in &row_ops {
                cells::apply(&mut row, op, w, existing)?;
            }
            sort_columns(&mut row);
            update.rows.push(row);
        }
        Ok(update)
    }
}

/// Rows as stored, read before a write whose operations need them, by partition and
/// clustering (`None`: the static row).
#[derive(Default)]
pub struct StoredRows(Vec<(PartitionKey, Option<Bytes>, Row)>);

impl StoredRows {
    pub fn add(&mut self, key: PartitionKey, clustering: Option<Bytes>, row: Row) {
        self.0.push((key, clustering, row));
    }

    fn row(&self, key: &PartitionKey, clustering: Option<&Bytes>) -> Option<&Row> {
        self.0
            .iter()
            .find(|(k, c, _)| k == key && c.as_ref() == clustering)
            .map(|(_, _, row)| row)
    }
}

/// `INSERT JSON`: every column's value read from the document (a constant document is read
/// now; a bind marker's when the statement runs).
fn json_values(
    table: &TableMetadata,
    value: &cql::ast::Term,
    default_unset: bool,
    binder: &mut Binder,
) -> CqlResult<Vec<(ColumnMetadata, Operand)>> {
    let text = terms::analyze(
        value,
        &spec(table, "[json]", CqlType::Native(NativeType::Text)),
        binder,
    )?;
    let columns: Vec<ColumnMetadata> = crate::selection::select_order(table);
    let document = Arc::new(crate::json::JsonDocument {
        text,
        columns: columns
            .iter()
            .map(|c| (c.name.clone(), c.ty.clone()))
            .collect(),
        default_unset,
    });
    let constant = match &document.text {
        Operand::Const(Some(bytes)) => Some(crate::json::decode_document(
            &String::from_utf8_lossy(bytes),
            &document.columns,
        )?),
        _ => None,
    };
    let mut assigned = Vec::with_capacity(columns.len());
    for (column, col) in columns.into_iter().enumerate() {
        let operand = match constant.as_ref().map(|values| values[column].clone()) {
            Some(Some(v)) => Operand::Const(v),
            Some(None) if default_unset && !is_primary_key(&col) => continue,
            Some(None) => Operand::null(),
            None => Operand::Json(Box::new(crate::json::JsonField {
                document: document.clone(),
                column,
            })),
        };
        assigned.push((col, operand));
    }
    Ok(assigned)
}

/// Cassandra's checks of a conditional DELETE that does not name whole rows: it may only
/// delete static columns, under conditions on static columns.
fn conditional_delete(
    table: &TableMetadata,
    restrictions: &Restrictions,
    ops: &[Op],
    conditions: &Conditions,
) -> CqlResult<()> {
    let names_rows = restrictions.clustering_eq_columns() == table.clustering.len()
        && restrictions.clustering_slice.is_none()
        && restrictions.multi_slice.is_none();
    if names_rows {
        return Ok(());
    }
    const PREFIX: &str =
        "DELETE statements must restrict all PRIMARY KEY columns with equality relations";
    if ops.is_empty() || ops.iter().any(|o| o.column().kind != ColumnKind::Static) {
        return Err(CqlError::invalid(format!(
            "{PREFIX} in order to delete non static columns"
        )));
    }
    if conditions.on_regular_columns() {
        return Err(CqlError::invalid(format!(
            "{PREFIX} in order to use IF condition on non static columns"
        )));
    }
    Ok(())
}

fn is_primary_key(col: &ColumnMetadata) -> bool {
    matches!(col.kind, ColumnKind::PartitionKey | ColumnKind::Clustering)
}

fn is_key_set(
    table: &TableMetadata,
    col: &ColumnMetadata,
    pk: &[Option<Values>],
    ck: &[Option<Values>],
) -> bool {
    let pos = col.position.max(0) as usize;
    let _ = table;
    match col.kind {
        ColumnKind::PartitionKey => pk.get(pos).is_some_and(Option::is_some),
        ColumnKind::Clustering => ck.get(pos).is_some_and(Option::is_some),
        _ => false,
    }
}

fn sort_columns(row: &mut Row) {
    row.columns.sort_by(|a, b| a.name.cmp(&b.name));
}

fn where_clause(
    table: &TableMetadata,
    relations: &[Relation],
    kind: StatementKind,
    only_static: bool,
    binder: &mut Binder,
) -> CqlResult<Restrictions> {
    if only_static && !table.clustering.is_empty() {
        let restrictions = restrictions::analyze(table, relations, StatementKind::Delete, binder)?;
        only_static_rows(&restrictions, "UPDATE")?;
        return Ok(restrictions);
    }
    restrictions::analyze(table, relations, kind, binder)
}

/// A statement writing only static columns names no clustering (Cassandra's check).
fn only_static_rows(restrictions: &Restrictions, statement: &str) -> CqlResult<()> {
    let clustering = !restrictions.clustering_eq.is_empty()
        || restrictions.clustering_slice.is_some()
        || restrictions.multi_slice.is_some();
    if clustering {
        return Err(CqlError::invalid(format!(
            "Invalid restrictions on clustering columns since the {statement} statement modifies only static columns"
        )));
    }
    Ok(())
}

/// How a statement writes a column, as the collection guardrails see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriteKind {
    /// A whole value set or added to (`c = v`, `c = c + v`): collections are counted.
    Whole,
    /// An element, a deletion or a prepend: only the cells are sized.
    Part,
}

impl ModifyPlan {
    pub fn partition(&self) -> Option<&restrictions::PartitionSelection> {
        Some(&self.restrictions.partition)
    }

    pub(crate) fn restrictions(&self) -> &Restrictions {
        &self.restrictions
    }

    /// The IF clause, when the statement is a lightweight transaction.
    pub fn conditions(&self) -> Option<&Conditions> {
        self.conditions.as_ref()
    }

    /// Whether the statement writes regular rows (Cassandra's `updatesRegularRows`): the table
    /// has no clustering columns, or the statement restricts them.
    pub(crate) fn updates_regular_rows(&self) -> bool {
        self.layout.clustering_types.is_empty()
            || !self.restrictions.clustering_eq.is_empty()
            || self.restrictions.clustering_slice.is_some()
            || self.restrictions.multi_slice.is_some()
    }

    /// Whether the statement writes static columns.
    pub(crate) fn updates_static_row(&self) -> bool {
        self.ops
            .iter()
            .any(|o| o.column().kind == ColumnKind::Static)
    }

    /// The columns whose operations need their stored cells.
    pub(crate) fn read_columns(&self) -> impl Iterator<Item = &ColumnMetadata> {
        self.ops
            .iter()
            .filter(|o| o.reads_existing())
            .map(Op::column)
    }

    /// Whether the partition key is restricted by `IN`.
    pub(crate) fn key_has_in(&self) -> bool {
        match &self.restrictions.partition {
            restrictions::PartitionSelection::Keys(values) => {
                values.iter().any(|v| !matches!(v, Values::Eq(_)))
            }
            _ => false,
        }
    }

    /// Whether a clustering column is restricted by `IN`.
    pub(crate) fn clustering_has_in(&self) -> bool {
        self.restrictions
            .clustering_eq
            .iter()
            .any(|p| !matches!(p, Prefix::Column(Values::Eq(_))))
    }

    /// How Cassandra names the statement's kind in its LWT refusals.
    pub(crate) fn kind_plural(&self) -> &'static str {
        match self.kind {
            Kind::Update => "updates",
            _ => "deletions",
        }
    }

    /// Whether the statement has `USING TIMESTAMP`.
    pub(crate) fn timestamp_set(&self) -> bool {
        self.timestamp.is_some()
    }

    /// The columns written, in statement order.
    pub(crate) fn writes(&self) -> impl Iterator<Item = (&ColumnMetadata, WriteKind)> {
        self.ops.iter().map(|op| {
            let kind = match op {
                Op::Set(..) | Op::Add(..) => WriteKind::Whole,
                _ => WriteKind::Part,
            };
            (op.column(), kind)
        })
    }
}
