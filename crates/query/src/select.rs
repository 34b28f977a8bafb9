//! SELECT: analysis (restrictions, selection, ordering, limits) and execution with paging,
//! per-partition limits, DISTINCT, post-query ordering of IN queries, filtering and
//! aggregates.
use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;
use cql::ast::{Operator, Order, Select};
use ring::ReplicationStrategy;
use schema::{ColumnKind, TableMetadata};
use storage::{KeyRange, Partition, PartitionKey, PartitionPosition, ReadFilter, ReadStats};
use types::comparable::compare;
use types::result::{ColumnSpec, Rows};
use types::{CqlError, CqlResult, CqlType, NativeType};

use crate::exec::ExecContext;
use crate::grouping::{self, Grouping};
use crate::keys::KeyLayout;
use crate::operand::{Binder, Operand, Resolved};
use crate::paging::PagingState;
use crate::restrictions::{self, Filter, PartitionSelection, Restrictions, StatementKind};
use crate::rows::RowView;
use crate::selection::{Evaluator, GroupState, Selection};
use crate::slices;
use crate::tombstones::{command_text, TombstoneGuard, TombstoneLimits};
use crate::virtual_tables::{PartitionReader, ReadScope};

/// Partitions fetched per storage call in range scans.
const SCAN_BATCH: usize = 128;

/// An analysed SELECT.
#[derive(Debug)]
pub struct SelectPlan {
    pub layout: KeyLayout,
    pub selection: Selection,
    restrictions: Restrictions,
    reversed: bool,
    /// How many clustering columns ORDER BY names (0 without ORDER BY).
    ordered: usize,
    distinct: bool,
    limit: Option<Operand>,
    per_partition_limit: Option<Operand>,
    grouping: Option<Grouping>,
    /// SELECT JSON: each row is one JSON object in a `[json]` column.
    json: bool,
    result_specs: Vec<ColumnSpec>,
}

impl SelectPlan {
    pub fn analyze(
        table: Arc<TableMetadata>,
        s: &Select,
        binder: &mut Binder,
    ) -> CqlResult<SelectPlan> {
        let selection = match &s.selectors {
            None => Selection::wildcard(&table),
            Some(sel) => Selection::analyze(&table, sel, binder)?,
        };
        let kind = StatementKind::Select {
            allow_filtering: s.allow_filtering,
        };
        let restrictions = restrictions::analyze(&table, &s.where_clause, kind, binder)?;
        let grouping = grouping::analyze(&table, &s.group_by, &restrictions, s.distinct)?;
        if s.distinct {
            check_distinct(&table, &selection, &restrictions)?;
        }
        let result_specs = if s.json {
            vec![crate::columns::spec(
                &table,
                "[json]",
                CqlType::Native(NativeType::Text),
            )]
        } else {
            selection.specs.clone()
        };
        let reversed = ordering(&table, s, &restrictions)?;
        let limit = limit_operand(&table, &s.limit, "[limit]", binder)?;
        let per_partition_limit = limit_operand(
            &table,
            &s.per_partition_limit,
            "[per_partition_limit]",
            binder,
        )?;
        Ok(SelectPlan {
            layout: KeyLayout::new(table),
            selection,
            restrictions,
            reversed,
            ordered: s.order_by.len(),
            distinct: s.distinct,
            limit,
            per_partition_limit,
            grouping,
            json: s.json,
            result_specs,
        })
    }

    pub fn result_specs(&self) -> &[ColumnSpec] {
        &self.result_specs
    }

    /// The GROUP BY of the statement (`None` without one); the hook of the `group_by_enabled`
    /// guardrail.
    pub fn grouping(&self) -> Option<&Grouping> {
        self.grouping.as_ref()
    }

    /// Whether rows are aggregated into groups (aggregates or GROUP BY).
    fn aggregating(&self) -> bool {
        self.selection.is_aggregate || self.grouping().is_some()
    }

    /// Whether the whole result is one group (aggregates without GROUP BY).
    fn single_group(&self) -> bool {
        self.selection.is_aggregate && self.grouping.is_none()
    }

    /// Runs the query; returns the rows and the client warnings (tombstone_warn_threshold).
    pub fn execute(
        &self,
        ctx: &ExecContext,
        coord: &dyn PartitionReader,
        strategy: &ReplicationStrategy,
        limits: &TombstoneLimits,
    ) -> CqlResult<(Rows, Vec<String>)> {
        let limit = resolve_limit(&self.limit, ctx)?;
        let ppl = resolve_limit(&self.per_partition_limit, ctx)?;
        let filters = self.resolve_filters(ctx)?;
        let paged = ctx.page_size.is_some() && !self.single_group();
        let state = match (&ctx.paging_state, paged) {
            (Some(b), true) => Some(PagingState::decode(b)?),
            _ => None,
        };
        let tombstones = TombstoneGuard::new(limits, &self.layout.table.keyspace);
        let mut run = Run::new(self, ctx, coord, strategy, filters, ppl, tombstones);
        run.remaining = state
            .as_ref()
            .map(|s| s.remaining)
            .or(limit.filter(|_| !self.single_group()))
            .unwrap_or(i64::MAX);
        run.budget = if paged {
            run.remaining.min(ctx.page_size.unwrap_or(i32::MAX) as i64)
        } else {
            run.remaining
        };
        if self.post_query_ordering() {
            if paged {
                return Err(CqlError::invalid("Cannot page queries with both ORDER BY and a IN restriction on the partition key; you must either remove the ORDER BY or the IN and sort client side, or disable paging for this query"));
            }
            run.budget = i64::MAX;
        }
        match &self.restrictions.partition {
            PartitionSelection::Keys(cols) => {
                let keys = slices::partition_keys(&self.layout, cols, ctx)?;
                run.read_keys(keys, state.as_ref())?;
            }
            PartitionSelection::Range(slice) => {
                let range = slices::token_range(slice, ctx)?;
                run.scan(range, state.as_ref())?;
            }
        }
        let mut warnings: Vec<String> = Vec::new();
        if self.aggregating() {
            warnings.extend(grouping::warning(&self.restrictions).map(str::to_string));
        }
        warnings.extend(run.tombstone_warning());
        Ok((run.finish(limit)?, warnings))
    }

    fn post_query_ordering(&self) -> bool {
        self.ordered > 0
            && matches!(&self.restrictions.partition, PartitionSelection::Keys(cols)
                if cols.iter().any(|v| !matches!(v, restrictions::Values::Eq(_))))
    }

    fn resolve_filters(&self, ctx: &ExecContext) -> CqlResult<Vec<ResolvedFilter>> {
        self.restrictions
            .filters
            .iter()
            .map(|f| ResolvedFilter::new(f, ctx))
            .collect()
    }

    fn read_filter(&self, ctx: &ExecContext) -> CqlResult<ReadFilter> {
        let slices = if self.distinct {
            vec![(Bound::Unbounded, Bound::Unbounded)]
        } else {
            slices::clustering_slices(&self.layout, &self.restrictions, ctx)?
        };
        let table = &self.layout.table;
        let mut columns: Vec<Bytes> = table
            .regular_columns()
            .map(|c| Bytes::copy_from_slice(c.name.as_bytes()))
            .collect();
        columns.sort();
        Ok(ReadFilter {
            slices,
            reversed: self.reversed,
            row_limit: if self.distinct { Some(1) } else { None },
            include_static: table.static_columns().next().is_some(),
            columns: Some(columns),
        })
    }

    /// Compares two rows' clustering values on the ORDER BY columns only (as Cassandra does:
    /// rows equal on them keep their read order, partition by partition).
    fn order_rows(&self, a: &[Option<Bytes>], b: &[Option<Bytes>]) -> std::cmp::Ordering {
        let columns = self.layout.clustering_types.iter().take(self.ordered);
        for (i, (ty, desc)) in columns.enumerate() {
            let (x, y) = (a.get(i).cloned().flatten(), b.get(i).cloned().flatten());
            let natural = match (x, y) {
                (Some(x), Some(y)) => compare(ty, &x, &y),
                (x, y) => x.is_some().cmp(&y.is_some()),
            };
            let ordered = if *desc != self.reversed {
                natural.reverse()
            } else {
                natural
            };
            if ordered.is_ne() {
                return ordered;
            }
        }
        std::cmp::Ordering::Equal
    }

    /// Whether a partition with only static data yields a row.
    fn static_rows_count(&self) -> bool {
        self.restrictions.clustering_eq.is_empty()
            && self.restrictions.clustering_slice.is_none()
            && self.restrictions.multi_slice.is_none()
    }
}

fn check_distinct(table: &TableMetadata, sel: &Selection, r: &Restrictions) -> CqlResult<()> {
    for c in sel.plain_columns().flatten() {
        if !matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Static) {
            return Err(CqlError::invalid(format!(
                "SELECT DISTINCT queries must only request partition key columns and/or static columns (not {})",
                c.name
            )));
        }
    }
    let missing: Vec<&str> = table
        .partition_key_columns()
        .filter(|pk| !sel.plain_columns().flatten().any(|c| c.name == pk.name))
        .map(|c| c.name.as_str())
        .collect();
    if !sel.is_aggregate && !missing.is_empty() {
        return Err(CqlError::invalid(format!(
            "SELECT DISTINCT queries must request all the partition key columns (missing {})",
            missing.join(", ")
        )));
    }
    if !r.clustering_eq.is_empty() || r.clustering_slice.is_some() || r.multi_slice.is_some() {
        return Err(CqlError::invalid(
            "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.",
        ));
    }
    Ok(())
}

/// Validates ORDER BY and returns whether storage must read in reverse.
fn ordering(table: &TableMetadata, s: &Select, r: &Restrictions) -> CqlResult<bool> {
    if s.order_by.is_empty() {
        return Ok(false);
    }
    if !matches!(r.partition, PartitionSelection::Keys(_)) {
        return Err(CqlError::invalid(
            "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.",
        ));
    }
    let mut reversed = None;
    for (i, o) in s.order_by.iter().enumerate() {
        let col = table
            .column(&o.column)
            .ok_or_else(|| CqlError::invalid(format!("Undefined column name {}", o.column)))?;
        if col.kind != ColumnKind::Clustering {
            return Err(CqlError::invalid(format!(
                "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got {}",
                o.column
            )));
        }
        if col.position != i as i32 {
            return Err(CqlError::invalid(
                "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY",
            ));
        }
        let this = (o.order == Order::Desc) != crate::keys::is_reversed(col);
        if reversed.is_some_and(|r| r != this) {
            return Err(CqlError::invalid("Unsupported order by relation"));
        }
        reversed = Some(this);
    }
    Ok(reversed.unwrap_or(false))
}

fn limit_operand(
    table: &TableMetadata,
    term: &Option<cql::ast::Term>,
    name: &str,
    binder: &mut Binder,
) -> CqlResult<Option<Operand>> {
    let Some(term) = term else { return Ok(None) };
    let spec = ColumnSpec {
        keyspace: table.keyspace.clone(),
        table: table.name.clone(),
        name: name.to_string(),
        ty: CqlType::Native(NativeType::Int),
    };
    crate::terms::analyze(term, &spec, binder).map(Some)
}

fn resolve_limit(op: &Option<Operand>, ctx: &ExecContext) -> CqlResult<Option<i64>> {
    let Some(op) = op else { return Ok(None) };
    match op.resolve(ctx)? {
        Resolved::Value(b) => {
            let v = i32::from_be_bytes(
                b.as_ref()
                    .try_into()
                    .map_err(|_| CqlError::invalid("Invalid limit value"))?,
            );
            if v <= 0 {
                return Err(CqlError::invalid("LIMIT must be strictly positive"));
            }
            Ok(Some(v as i64))
        }
        Resolved::Null => Err(CqlError::invalid("Invalid null value of limit")),
        Resolved::Unset => Ok(None),
    }
}

/// A filter with its value resolved once per execution.
struct ResolvedFilter {
    column: schema::ColumnMetadata,
    op: Operator,
    value: Bytes,
}

impl ResolvedFilter {
    fn new(f: &Filter, ctx: &ExecContext) -> CqlResult<ResolvedFilter> {
        Ok(ResolvedFilter {
            column: f.column.clone(),
            op: f.op,
            value: f.value.resolve_required(ctx, &f.column.name)?,
        })
    }

    fn matches(&self, view: &RowView) -> bool {
        let Some(actual) = view.value(&self.column) else {
            return false;
        };
        let ty = &self.column.ty;
        let cmp = || compare(ty, &actual, &self.value);
        match self.op {
            Operator::Eq => cmp().is_eq(),
            Operator::Neq => !cmp().is_eq(),
            Operator::Lt => cmp().is_lt(),
            Operator::Lte => cmp().is_le(),
            Operator::Gt => cmp().is_gt(),
            Operator::Gte => cmp().is_ge(),
            Operator::In => crate::collections::split(&self.value, false)
                .map(|vs| vs.iter().any(|v| compare(ty, &actual, v).is_eq()))
                .unwrap_or(false),
            Operator::Contains | Operator::ContainsKey => {
                contains(ty, &actual, &self.value, self.op)
            }
            Operator::Like => false,
        }
    }
}

fn contains(ty: &CqlType, collection: &[u8], needle: &[u8], op: Operator) -> bool {
    let (is_map, elem) = match ty.unfrozen() {
        CqlType::Map(k, v) => (true, if op == Operator::ContainsKey { k } else { v }),
        CqlType::List(e) | CqlType::Set(e) => (false, e),
        _ => return false,
    };
    let Ok(items) = crate::collections::split(collection, is_map) else {
        return false;
    };
    let picked: Vec<&Bytes> = if is_map {
        let offset = if op == Operator::ContainsKey { 0 } else { 1 };
        items.iter().skip(offset).step_by(2).collect()
    } else {
        items.iter().collect()
    };
    picked.iter().any(|v| compare(elem, v, needle).is_eq())
}

/// The state of one execution.
/// A group being aggregated: its state, its key (partition key and clustering prefix) and
/// its first row's clustering (for post-query ordering).
struct OpenGroup {
    state: GroupState,
    key: Vec<Option<Bytes>>,
    clustering: Vec<Option<Bytes>>,
}

struct Run<'a> {
    plan: &'a SelectPlan,
    ctx: &'a ExecContext,
    coord: &'a dyn PartitionReader,
    strategy: &'a ReplicationStrategy,
    filters: Vec<ResolvedFilter>,
    per_partition: Option<i64>,
    rows: Rows,
    /// Rows (with their clustering) kept for post-query ordering.
    held: Vec<(Vec<Option<Bytes>>, Vec<Option<Bytes>>)>,
    eval: Evaluator<'a>,
    /// The group being aggregated.
    group: Option<OpenGroup>,
    count: i64,
    budget: i64,
    remaining: i64,
    last: Option<(PartitionKey, Option<Bytes>, i64)>,
    tombstones: TombstoneGuard<'a>,
    /// The partition of the last single-partition read (`None` after a scan).
    last_read: Option<PartitionKey>,
}

impl<'a> Run<'a> {
    fn new(
        plan: &'a SelectPlan,
        ctx: &'a ExecContext,
        coord: &'a dyn PartitionReader,
        strategy: &'a ReplicationStrategy,
        filters: Vec<ResolvedFilter>,
        per_partition: Option<i64>,
        tombstones: TombstoneGuard<'a>,
    ) -> Run<'a> {
        let mut rows = Rows::new(plan.result_specs.clone());
        rows.skip_metadata = ctx.skip_metadata;
        Run {
            plan,
            ctx,
            coord,
            strategy,
            filters,
            per_partition,
            rows,
            held: Vec::new(),
            eval: Evaluator {
                selection: &plan.selection,
                ctx,
            },
            group: None,
            count: 0,
            budget: i64::MAX,
            remaining: i64::MAX,
            last: None,
            tombstones,
            last_read: None,
        }
    }

    /// Adds one read's statistics to the statement's, failing past the tombstone threshold.
    fn count(&mut self, stats: ReadStats, key: Option<&PartitionKey>, token: i64) -> CqlResult<()> {
        self.last_read = key.cloned();
        let (plan, budget) = (self.plan, self.budget);
        let text = || command_text(&plan.layout, &plan.selection, key, budget);
        self.tombstones
            .add(stats, token, self.ctx.consistency, text)
    }

    /// The client warning when the statement met more tombstones than the warn threshold.
    fn tombstone_warning(&self) -> Option<String> {
        let plan = self.plan;
        let key = self.last_read.as_ref();
        self.tombstones
            .warning(|| command_text(&plan.layout, &plan.selection, key, self.budget))
    }

    /// Cassandra's first event of a single-partition read, naming the table.
    fn trace_partition_read(&self) {
        let table = &self.plan.layout.table.name;
        coordinator::trace::trace(self.ctx.trace(), || {
            format!("Executing single-partition query on {table}")
        });
    }

    fn full(&self) -> bool {
        self.count >= self.budget
    }

    fn read_keys(&mut self, keys: Vec<PartitionKey>, state: Option<&PagingState>) -> CqlResult<()> {
        let base = self.plan.read_filter(self.ctx)?;
        let scope = self.scope();
        let first = state
            .and_then(|s| keys.iter().position(|k| k.key == s.partition_key))
            .unwrap_or(0);
        for key in keys.into_iter().skip(first) {
            let Some(filter) = self.resume_filter(&base, &key, state) else {
                continue;
            };
            let mut stats = ReadStats::default();
            self.trace_partition_read();
            let found = self.coord.read(&scope, &key, &filter.0, &mut stats)?;
            self.count(stats, Some(&key), key.token)?;
            if let Some(p) = found {
                self.partition(&p, filter.1)?;
            }
            if self.full() {
                break;
            }
        }
        Ok(())
    }

    /// What every read of this execution shares.
    fn scope(&self) -> ReadScope<'a> {
        ReadScope {
            strategy: self.strategy,
            table: storage::TableId(self.plan.layout.table.id),
            cl: self.ctx.consistency,
            now: self.ctx.now_seconds,
            trace: self.ctx.trace(),
        }
    }

    /// The filter for `key` given the paging state, and the rows already returned from it;
    /// `None` when the key is the paged one and was fully returned by earlier pages. Keys
    /// before the paged one are skipped by the callers.
    fn resume_filter(
        &self,
        base: &ReadFilter,
        key: &PartitionKey,
        state: Option<&PagingState>,
    ) -> Option<(ReadFilter, i64)> {
        let Some(s) = state.filter(|s| s.partition_key == key.key) else {
            return Some((base.clone(), 0));
        };
        let last = s.last_clustering.clone()?;
        let mut f = base.clone();
        f.include_static = false;
        f.slices = f
            .slices
            .into_iter()
            .filter_map(|sl| after(sl, &last, self.plan.reversed))
            .collect();
        Some((f, s.in_partition))
    }

    fn scan(&mut self, mut range: KeyRange, state: Option<&PagingState>) -> CqlResult<()> {
        let base = self.plan.read_filter(self.ctx)?;
        let scope = self.scope();
        if let Some(s) = state {
            let key = PartitionKey {
                token: ring::murmur3_token(&s.partition_key),
                key: s.partition_key.clone(),
            };
            if let Some((filter, done)) = self.resume_filter(&base, &key, state) {
                let mut stats = ReadStats::default();
                self.trace_partition_read();
                let found = self.coord.read(&scope, &key, &filter, &mut stats)?;
                self.count(stats, None, key.token)?;
                if let Some(p) = found {
                    self.partition(&p, done)?;
                }
            }
            range.start = Bound::Excluded(PartitionPosition::Key(key));
        }
        while !self.full() {
            let mut stats = ReadStats::default();
            let batch = self
                .coord
                .scan(&scope, &range, &base, SCAN_BATCH, &mut stats)?;
            let token = batch.last().map_or(0, |p| p.key.token);
            self.count(stats, None, token)?;
            let n = batch.len();
            for p in &batch {
                self.partition(p, 0)?;
                if self.full() {
                    return Ok(());
                }
            }
            match batch.last() {
                Some(p) if n == SCAN_BATCH => {
                    range.start = Bound::Excluded(PartitionPosition::Key(p.key.clone()))
                }
                _ => break,
            }
        }
        Ok(())
    }

    fn partition(&mut self, p: &Partition, already: i64) -> CqlResult<()> {
        if self.plan.aggregating() {
            return self.grouped_partition(p, already);
        }
        let layout = &self.plan.layout;
        let pk = layout.split_partition_key(&p.key.key)?;
        let mut in_partition = already;
        let cap = self.per_partition.unwrap_or(i64::MAX);
        if p.rows.is_empty() || self.plan.distinct {
            if self.static_row_counts(p) && in_partition < cap {
                let view = self.static_view(p, &pk);
                if self.emit(&view)? {
                    in_partition += 1;
                }
            }
            self.last = Some((p.key.clone(), None, in_partition));
            return Ok(());
        }
        for row in &p.rows {
            if in_partition >= cap || self.full() {
                break;
            }
            let clustering = layout.decode_clustering(&row.clustering)?;
            let view = self.row_view(p, &pk, &clustering, row);
            if self.emit(&view)? {
                in_partition += 1;
                self.last = Some((p.key.clone(), Some(row.clustering.clone()), in_partition));
            }
        }
        if in_partition >= cap || !self.full() {
            self.last = Some((p.key.clone(), None, in_partition));
        }
        Ok(())
    }

    /// Whether a partition without rows (or any partition of a DISTINCT query) yields its
    /// static row.
    fn static_row_counts(&self, p: &Partition) -> bool {
        let static_live = p.static_row.as_ref().is_some_and(|r| !r.columns.is_empty());
        self.plan.distinct || (static_live && self.plan.static_rows_count())
    }

    fn static_view<'p>(&self, p: &'p Partition, pk: &'p [Bytes]) -> RowView<'p> {
        RowView {
            key: &p.key,
            pk,
            clustering: &[],
            row: None,
            static_row: p.static_row.as_ref(),
            now: self.ctx.now_seconds,
        }
    }

    fn row_view<'p>(
        &self,
        p: &'p Partition,
        pk: &'p [Bytes],
        clustering: &'p [Option<Bytes>],
        row: &'p storage::Row,
    ) -> RowView<'p> {
        RowView {
            key: &p.key,
            pk,
            clustering,
            row: Some(row),
            static_row: p.static_row.as_ref(),
            now: self.ctx.now_seconds,
        }
    }

    /// Aggregates a partition's rows into groups. A group ends when a row of another group
    /// comes or the partition ends (groups always hold one partition key); an ended group is
    /// an output row, counted against the limits, so pages end between groups and the
    /// paging state points at the last row of the last group returned.
    fn grouped_partition(&mut self, p: &Partition, already: i64) -> CqlResult<()> {
        let layout = &self.plan.layout;
        let pk = layout.split_partition_key(&p.key.key)?;
        let cap = self.per_partition.unwrap_or(i64::MAX);
        let mut in_partition = already;
        let mut last_row: Option<Bytes> = None;
        if p.rows.is_empty() || self.plan.distinct {
            let view = self.static_view(p, &pk);
            if self.static_row_counts(p) && in_partition < cap && self.passes(&view) {
                self.feed(&view)?;
            }
        } else {
            for row in &p.rows {
                let clustering = layout.decode_clustering(&row.clustering)?;
                let view = self.row_view(p, &pk, &clustering, row);
                if !self.passes(&view) {
                    continue;
                }
                if self.starts_new_group(&view) {
                    in_partition += self.close_group()?;
                    if self.full() {
                        self.last = Some((p.key.clone(), last_row.take(), in_partition));
                        return Ok(());
                    }
                }
                if in_partition >= cap {
                    break;
                }
                self.feed(&view)?;
                last_row = Some(row.clustering.clone());
            }
        }
        if self.plan.grouping.is_some() {
            in_partition += self.close_group()?;
        }
        self.last = Some((p.key.clone(), None, in_partition));
        Ok(())
    }

    /// The group key of a row: its partition key and the grouped clustering prefix.
    fn group_key(&self, view: &RowView) -> Vec<Option<Bytes>> {
        let prefix = self
            .plan
            .grouping
            .as_ref()
            .map_or(0, |g| g.clustering_prefix);
        let mut key = vec![Some(view.key.key.clone())];
        key.extend((0..prefix).map(|i| view.clustering.get(i).cloned().flatten()));
        key
    }

    /// Whether the row belongs to another group than the current one (never without GROUP BY).
    fn starts_new_group(&self, view: &RowView) -> bool {
        self.plan.grouping.is_some()
            && self
                .group
                .as_ref()
                .is_some_and(|group| group.key != self.group_key(view))
    }

    fn passes(&self, view: &RowView) -> bool {
        self.filters.iter().all(|f| f.matches(view))
    }

    /// Adds a row to the current group (starting one if needed).
    fn feed(&mut self, view: &RowView) -> CqlResult<()> {
        if self.group.is_none() {
            let state = GroupState::new(&self.eval);
            self.group = Some(OpenGroup {
                state,
                key: self.group_key(view),
                clustering: view.clustering.to_vec(),
            });
        }
        if let Some(group) = self.group.as_mut() {
            group.state.add(&self.eval, view)?;
        }
        Ok(())
    }

    /// Outputs the current group, if any; returns how many groups were output (0 or 1).
    fn close_group(&mut self) -> CqlResult<i64> {
        let Some(OpenGroup {
            state, clustering, ..
        }) = self.group.take()
        else {
            return Ok(0);
        };
        if state.is_empty() && self.plan.grouping.is_some() {
            return Ok(0);
        }
        let values = state.finish(&self.eval)?;
        self.count += 1;
        self.output(clustering, values);
        Ok(1)
    }

    /// Emits a row if it passes the filters; returns whether it did.
    fn emit(&mut self, view: &RowView) -> CqlResult<bool> {
        if !self.passes(view) {
            return Ok(false);
        }
        let values = self.eval.row(view)?;
        self.count += 1;
        self.output(view.clustering.to_vec(), values);
        Ok(true)
    }

    /// Adds an output row to the result (held back for post-query ordering).
    fn output(&mut self, clustering: Vec<Option<Bytes>>, values: Vec<Option<Bytes>>) {
        if self.plan.post_query_ordering() {
            self.held.push((clustering, values));
        } else {
            self.push_row(&values);
        }
    }

    fn push_row(&mut self, values: &[Option<Bytes>]) {
        if self.plan.json {
            let json = crate::json::row_json(&self.plan.selection, values);
            self.rows.push_value(Some(json.as_bytes()));
        } else {
            for v in values {
                self.rows.push_value(v.as_deref());
            }
        }
        self.rows.end_row();
    }

    fn finish(mut self, limit: Option<i64>) -> CqlResult<Rows> {
        if self.plan.single_group() {
            let values = match self.group.take() {
                Some(group) => group.state.finish(&self.eval)?,
                None => GroupState::new(&self.eval).finish(&self.eval)?,
            };
            self.push_row(&values);
            return Ok(self.rows);
        }
        if self.plan.post_query_ordering() {
            let mut held = std::mem::take(&mut self.held);
            held.sort_by(|a, b| self.plan.order_rows(&a.0, &b.0));
            for (_, values) in held.into_iter().take(limit.unwrap_or(i64::MAX) as usize) {
                self.push_row(&values);
            }
            return Ok(self.rows);
        }
        if self.full() && self.remaining > self.count {
            if let Some((key, clustering, in_partition)) = self.last.take() {
                let state = PagingState {
                    partition_key: key.key,
                    last_clustering: clustering,
                    remaining: self.remaining - self.count,
                    in_partition,
                };
                self.rows.paging_state = Some(state.encode());
            }
        }
        Ok(self.rows)
    }
}

/// The part of a slice after `last` in read order.
fn after(
    slice: (Bound<Bytes>, Bound<Bytes>),
    last: &Bytes,
    reversed: bool,
) -> Option<(Bound<Bytes>, Bound<Bytes>)> {
    let (start, end) = slice;
    let (start, end) = if reversed {
        (start, tighter_end(end, last))
    } else {
        (tighter_start(start, last), end)
    };
    if storage::filter::slice_is_empty(&start, &end) {
        None
    } else {
        Some((start, end))
    }
}

fn tighter_start(start: Bound<Bytes>, last: &Bytes) -> Bound<Bytes> {
    match &start {
        Bound::Included(s) | Bound::Excluded(s) if s > last => start,
        _ => Bound::Excluded(last.clone()),
    }
}

fn tighter_end(end: Bound<Bytes>, last: &Bytes) -> Bound<Bytes> {
    match &end {
        Bound::Included(e) | Bound::Excluded(e) if e < last => end,
        _ => Bound::Excluded(last.clone()),
    }
}

impl SelectPlan {
    pub fn partition(&self) -> Option<&PartitionSelection> {
        Some(&self.restrictions.partition)
    }
}
