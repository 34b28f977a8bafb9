//! One lightweight transaction (Cassandra's `CQL3CasRequest`): the partition, the condition
//! each of its rows must meet, the read that fetches them, and the updates made when they hold.
use std::collections::BTreeMap;
use std::ops::Bound;

use bytes::Bytes;
use mutation::{Mutation, Partition, PartitionKey, ReadFilter, Row, TableId};
use schema::{ColumnKind, ColumnMetadata, TableMetadata};
use types::{CqlError, CqlResult};

use super::merge;
use crate::conditions::bound::BoundCondition;
use crate::conditions::Conditions;
use crate::exec::ExecContext;
use crate::keys::KeyLayout;
use crate::modify::{ModifyPlan, StoredRows};

/// What one row (or the static row) must be for the transaction to apply.
enum RowCondition<'a> {
    Exists,
    NotExists,
    Columns(Vec<BoundCondition<'a>>),
}

/// A lightweight transaction's statements on one partition, bound to their values.
pub struct CasRequest<'a> {
    pub layout: &'a KeyLayout,
    pub table: &'a TableMetadata,
    pub key: PartitionKey,
    /// Conditions on rows by clustering (byte order is clustering order).
    rows: BTreeMap<Bytes, RowCondition<'a>>,
    static_row: Option<RowCondition<'a>>,
    updates: Vec<(&'a ModifyPlan, &'a ExecContext)>,
    /// The columns the conditions name (and those operations read), as the read fetches them.
    condition_columns: Vec<ColumnMetadata>,
    updates_regular: bool,
    updates_static: bool,
    /// The columns a failed transaction returns; `None` for all of them (IF [NOT] EXISTS).
    pub result_columns: Option<Vec<ColumnMetadata>>,
}

impl<'a> CasRequest<'a> {
    /// The request of one conditional statement, or of a batch with conditions (`batch`: the
    /// result also names each row's primary key).
    pub fn new(items: &[(&'a ModifyPlan, &'a ExecContext)], batch: bool) -> CqlResult<Self> {
        let Some((first, first_ctx)) = items.first() else {
            return Err(CqlError::invalid("A conditional batch needs a statement"));
        };
        let table = first.table().as_ref();
        let mut request = CasRequest {
            layout: &first.layout,
            table,
            key: single_key(first, first_ctx, batch)?,
            rows: BTreeMap::new(),
            static_row: None,
            updates: Vec::with_capacity(items.len()),
            condition_columns: Vec::new(),
            updates_regular: false,
            updates_static: false,
            result_columns: Some(if batch {
                table
                    .partition_key_columns()
                    .chain(table.clustering_columns())
                    .cloned()
                    .collect()
            } else {
                Vec::new()
            }),
        };
        for (plan, ctx) in items {
            request.add(plan, ctx, batch)?;
        }
        Ok(request)
    }

    fn add(&mut self, plan: &'a ModifyPlan, ctx: &'a ExecContext, batch: bool) -> CqlResult<()> {
        if single_key(plan, ctx, batch)? != self.key {
            return Err(CqlError::invalid(
                "Batch with conditions cannot span multiple partitions",
            ));
        }
        if plan.clustering_has_in() {
            return Err(CqlError::invalid(format!(
                "IN on the clustering key columns is not supported with conditional {}",
                plan.kind_plural()
            )));
        }
        self.updates.push((plan, ctx));
        self.updates_regular |= plan.updates_regular_rows();
        let Some(conditions) = plan.conditions() else {
            return Ok(());
        };
        self.updates_static |= plan.updates_static_row();
        let clustering = self.row_of(plan, ctx)?;
        match conditions {
            Conditions::Exists => self.add_existence(clustering, RowCondition::Exists)?,
            Conditions::NotExists => self.add_existence(clustering, RowCondition::NotExists)?,
            Conditions::Columns(list) => {
                let bound = list.iter().map(|c| c.bind(ctx));
                let bound = bound.collect::<CqlResult<Vec<BoundCondition<'a>>>>()?;
                let (statics, regulars): (Vec<_>, Vec<_>) = bound
                    .into_iter()
                    .partition(|c| c.column().kind == ColumnKind::Static);
                if !regulars.is_empty() {
                    self.add_columns(clustering, regulars)?;
                }
                if !statics.is_empty() {
                    self.add_columns(None, statics)?;
                }
            }
        }
        self.note_columns(plan, conditions);
        Ok(())
    }

    /// The row a statement's conditions are on: its clustering, or `None` for the static row
    /// (a statement on static columns only names no clustering).
    fn row_of(&self, plan: &ModifyPlan, ctx: &ExecContext) -> CqlResult<Option<Bytes>> {
        if plan.layout.clustering_types.is_empty() {
            return Ok(Some(plan.layout.clustering(&[])));
        }
        if !plan.names_rows() {
            return Ok(None);
        }
        Ok(plan.clusterings(ctx)?.into_iter().next())
    }

    fn add_existence(
        &mut self,
        clustering: Option<Bytes>,
        condition: RowCondition<'a>,
    ) -> CqlResult<()> {
        let not = matches!(condition, RowCondition::NotExists);
        let previous = self.take(&clustering);
        let merged = match previous {
            None => condition,
            Some(RowCondition::Exists) if !not => RowCondition::Exists,
            Some(RowCondition::NotExists) if not => RowCondition::NotExists,
            Some(RowCondition::Exists | RowCondition::NotExists) => {
                return Err(CqlError::invalid(
                    "Cannot mix IF EXISTS and IF NOT EXISTS conditions for the same row",
                ))
            }
            Some(RowCondition::Columns(_)) => {
                return Err(CqlError::invalid(format!(
                    "Cannot mix IF conditions and IF {}EXISTS for the same row",
                    if not { "NOT " } else { "" }
                )))
            }
        };
        self.put(clustering, merged);
        Ok(())
    }

    fn add_columns(
        &mut self,
        clustering: Option<Bytes>,
        mut bound: Vec<BoundCondition<'a>>,
    ) -> CqlResult<()> {
        let merged = match self.take(&clustering) {
            None => RowCondition::Columns(bound),
            Some(RowCondition::Columns(mut previous)) => {
                previous.append(&mut bound);
                RowCondition::Columns(previous)
            }
            Some(_) => {
                return Err(CqlError::invalid(
                    "Cannot mix IF conditions and IF NOT EXISTS for the same row",
                ))
            }
        };
        self.put(clustering, merged);
        Ok(())
    }

    fn take(&mut self, clustering: &Option<Bytes>) -> Option<RowCondition<'a>> {
        match clustering {
            None => self.static_row.take(),
            Some(c) => self.rows.remove(c),
        }
    }

    fn put(&mut self, clustering: Option<Bytes>, condition: RowCondition<'a>) {
        match clustering {
            None => self.static_row = Some(condition),
            Some(c) => {
                self.rows.insert(c, condition);
            }
        }
    }

    /// Records the columns a conditional statement's read needs and its result shows.
    fn note_columns(&mut self, plan: &ModifyPlan, conditions: &Conditions) {
        let named: Vec<ColumnMetadata> = conditions
            .columns()
            .chain(plan.read_columns())
            .cloned()
            .collect();
        for col in named {
            if !self.condition_columns.iter().any(|c| c.name == col.name) {
                self.condition_columns.push(col);
            }
        }
        if conditions.is_existence() {
            self.result_columns = None;
        } else if let Some(result) = &mut self.result_columns {
            for col in conditions.columns() {
                if !result.iter().any(|c| c.name == col.name) {
                    result.push(col.clone());
                }
            }
        }
    }

    /// The read of the rows the conditions are on: those rows, or (conditions on the static
    /// row only) the first live row, to tell an empty partition from one without statics.
    pub fn read_filter(&self) -> ReadFilter {
        if self.rows.is_empty() {
            return ReadFilter {
                row_limit: Some(1),
                ..ReadFilter::all()
            };
        }
        ReadFilter {
            slices: self
                .rows
                .keys()
                .map(|c| (Bound::Included(c.clone()), Bound::Included(c.clone())))
                .collect(),
            include_static: self.updates_static
                || self
                    .condition_columns
                    .iter()
                    .any(|c| c.kind == ColumnKind::Static),
            ..ReadFilter::all()
        }
    }

    /// Whether a failed transaction shows `col` (the read fetched it).
    pub fn shows(&self, col: &ColumnMetadata) -> bool {
        let named = || self.condition_columns.iter().any(|c| c.name == col.name);
        match col.kind {
            ColumnKind::Static => self.updates_static || named(),
            ColumnKind::Regular => self.updates_regular || named(),
            _ => true,
        }
    }

    /// Whether every condition holds for the partition as read.
    pub fn applies_to(&self, partition: Option<&Partition>, now: i32) -> bool {
        let static_row = partition
            .and_then(|p| p.static_row.as_ref())
            .filter(|r| exists(r, now));
        if let Some(condition) = &self.static_row {
            if !self.holds(condition, static_row, now) {
                return false;
            }
        }
        self.rows.iter().all(|(clustering, condition)| {
            let row = partition
                .and_then(|p| p.rows.iter().find(|r| r.clustering == *clustering))
                .filter(|r| exists(r, now));
            self.holds(condition, row, now)
        })
    }

    fn holds(&self, condition: &RowCondition, row: Option<&Row>, now: i32) -> bool {
        match condition {
            RowCondition::Exists => row.is_some(),
            RowCondition::NotExists => row.is_none(),
            RowCondition::Columns(list) => list.iter().all(|c| c.applies_to(&self.key, row, now)),
        }
    }

    /// The statements' updates at `ts`, as one mutation of the partition; `partition` (as read)
    /// gives the operations that need stored cells their rows.
    pub fn mutation(&self, partition: Option<&Partition>, ts: i64) -> CqlResult<Mutation> {
        let mut stored = StoredRows::default();
        if let Some(p) = partition {
            if let Some(row) = &p.static_row {
                stored.add(self.key.clone(), None, row.clone());
            }
            for row in &p.rows {
                stored.add(self.key.clone(), Some(row.clustering.clone()), row.clone());
            }
        }
        let mut update = mutation::PartitionUpdate::default();
        for (plan, ctx) in &self.updates {
            for m in plan.mutations_at(ctx, &stored, ts)? {
                merge::merge_update(&mut update, m.update);
            }
        }
        merge::deletions_before(&mut update, ts);
        Ok(Mutation {
            table: TableId(self.table.id),
            key: self.key.clone(),
            update,
        })
    }
}

/// Whether a row as read holds live data: a live primary key liveness or a live cell.
pub fn exists(row: &Row, now: i32) -> bool {
    row.liveness.is_some_and(|l| l.is_live(now))
        || row.columns.iter().any(|c| match &c.value {
            mutation::ColumnValue::Simple(cell) => cell.is_live(now),
            mutation::ColumnValue::Complex(complex) => {
                complex.cells.iter().any(|cell| cell.is_live(now))
            }
        })
}

/// The one partition a conditional statement writes (Cassandra refuses `IN` on its key).
fn single_key(plan: &ModifyPlan, ctx: &ExecContext, batch: bool) -> CqlResult<PartitionKey> {
    if plan.key_has_in() {
        return Err(if batch {
            CqlError::Server(
                "java.lang.IllegalArgumentException: Batch with conditions cannot span multiple partitions (you cannot use IN on the partition key)".into(),
            )
        } else {
            CqlError::invalid(format!(
                "IN on the partition key is not supported with conditional {}",
                plan.kind_plural()
            ))
        });
    }
    plan.partition_keys(ctx)?
        .into_iter()
        .next()
        .ok_or_else(|| CqlError::invalid("Missing mandatory PRIMARY KEY part"))
}
