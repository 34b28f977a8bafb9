//! SELECT: analysis (restrictions, selection, ordering, limits) and execution with paging,
//! per-partition limits, DISTINCT, post-query ordering of IN queries, filtering and
//! aggregates.
use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;
use cql::ast::{Operator, Order, Select};
use mutation::{KeyRange, Partition, PartitionKey, PartitionPosition, ReadFilter, ReadStats, Row};
use schema::{ColumnKind, ColumnMetadata, TableMetadata};
use types::comparable::compare;
use types::result::{ColumnSpec, Rows};
use types::{CqlError, CqlResult, CqlType, NativeType};

use crate::exec::ExecContext;
use crate::grouping::{self, Grouping};
use crate::keys::KeyLayout;
use crate::operand::{Binder, Operand, Resolved};
use crate::paging::PagingState;
use crate::reads::{PartitionReader, ReadScope};
use crate::restrictions::{self, Filter, PartitionSelection, Restrictions, StatementKind};
use crate::rows::RowView;
use crate::selection::{Evaluator, GroupState, Selection};
use crate::slices;
use crate::tombstones::{command_text, TombstoneGuard, TombstoneLimits};
use coordinator::ReadPolicy;

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
    /// Shared with every page the statement answers.
    result_specs: Arc<Vec<ColumnSpec>>,
    /// The table's speculative retry and read repair, read from its options once.
    policy: ReadPolicy,
    /// The regular columns' names, sorted: what reads ask for.
    read_columns: Arc<[Bytes]>,
}

impl SelectPlan {
    pub fn analyze(
        table: Arc<TableMetadata>,
        s: &Select,
        binder: &mut Binder,
    ) -> CqlResult<SelectPlan> {
        binder.on_table(&table);
        let selection = match &s.selectors {
            None => Selection::wildcard(&table),
            Some(sel) => Selection::analyze(&table, sel, binder)?,
        };
        let kind = StatementKind::Select {
            allow_filtering: s.allow_filtering,
        };
        let restrictions = restrictions::analyze(&table, &s.where_clause, kind, binder)?;
        let grouping = grouping::analyze(&table, &s.group_by, &restrictions, s.distinct)?;
        check_static_only(&selection, &restrictions)?;
        if s.distinct {
            if s.per_partition_limit.is_some() {
                return Err(CqlError::invalid(
                    "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries",
                ));
            }
            check_distinct(&table, &selection, &restrictions)?;
        }
        if selection.is_aggregate && grouping.is_none() && s.per_partition_limit.is_some() {
            return Err(CqlError::invalid(
                "PER PARTITION LIMIT is not allowed with aggregate queries.",
            ));
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
        let policy =
            ReadPolicy::from_options(&table.options.speculative_retry, &table.options.read_repair);
        let mut read_columns: Vec<Bytes> = table
            .regular_columns()
            .map(|c| Bytes::copy_from_slice(c.name.as_bytes()))
            .collect();
        read_columns.sort();
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
            result_specs: Arc::new(result_specs),
            policy,
            read_columns: read_columns.into(),
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
    pub async fn execute(
        &self,
        ctx: &ExecContext,
        coord: &dyn PartitionReader,
        limits: &TombstoneLimits,
    ) -> CqlResult<(Rows, Vec<String>)> {
        self.selection.check_bound(ctx)?;
        let limit = resolve_limit(&self.limit, ctx)?;
        let ppl = resolve_limit(&self.per_partition_limit, ctx)?;
        let filters = self.resolve_filters(ctx)?;
        let paged = ctx.page_size.is_some() && !self.single_group();
        let state = match (&ctx.paging_state, paged) {
            (Some(b), true) => Some(PagingState::decode(b)?),
            _ => None,
        };
        let tombstones = TombstoneGuard::new(limits, &self.layout.table.keyspace);
        let mut run = Run::new(self, ctx, coord, filters, ppl, tombstones);
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
                let mut keys = slices::partition_keys(&self.layout, cols, ctx)?;
                if let Some(token) = &self.restrictions.key_token {
                    let range = slices::token_range(token, ctx)?;
                    keys.retain(|key| range.contains(key));
                }
                run.read_keys(keys, state.as_ref()).await?;
            }
            PartitionSelection::Range(slice) => {
                let range = slices::token_range(slice, ctx)?;
                run.scan(range, state.as_ref()).await?;
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
        Ok(ReadFilter {
            slices,
            reversed: self.reversed,
            row_limit: if self.distinct { Some(1) } else { None },
            total_row_limit: None,
            include_static: table.static_columns().next().is_some(),
            columns: Some(self.read_columns.clone()),
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

/// Whether any clustering column is restricted, by a slice or `=`/`IN` or filtered.
fn restricts_clustering(r: &Restrictions) -> bool {
    !r.clustering_eq.is_empty()
        || r.clustering_slice.is_some()
        || r.multi_slice.is_some()
        || r.filters
            .iter()
            .any(|f| f.column.kind == ColumnKind::Clustering)
}

/// A selection of static columns (and partition key columns) reads no rows, so it cannot
/// restrict them.
fn check_static_only(sel: &Selection, r: &Restrictions) -> CqlResult<()> {
    let read: Vec<&ColumnMetadata> = sel.leaves.iter().filter_map(|l| l.column()).collect();
    let any_static = read.iter().any(|c| c.kind == ColumnKind::Static);
    let only_static = read
        .iter()
        .all(|c| matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Static));
    if any_static && only_static && restricts_clustering(r) {
        return Err(CqlError::invalid(
            "Cannot restrict clustering columns when selecting only static columns",
        ));
    }
    Ok(())
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
    // Every column the selection reads counts, inside functions and aggregates too
    // (`COUNT(p)` reads p, `COUNT(*)` nothing), as Cassandra's selection columns.
    let read = |name: &str| {
        sel.leaves
            .iter()
            .filter_map(|l| l.column())
            .any(|c| c.name == name)
    };
    let missing: Vec<&str> = table
        .partition_key_columns()
        .filter(|pk| !read(&pk.name))
        .map(|c| c.name.as_str())
        .collect();
    // Partitions named by `=`/`IN` need no key to tell them apart: static columns alone do.
    let key_range = matches!(r.partition, PartitionSelection::Range(_));
    if key_range && !missing.is_empty() {
        return Err(CqlError::invalid(format!(
            "SELECT DISTINCT queries must request all the partition key columns (missing {})",
            missing.join(", ")
        )));
    }
    let filters_rows = r
        .filters
        .iter()
        .any(|f| !matches!(f.column.kind, ColumnKind::PartitionKey | ColumnKind::Static));
    if restricts_clustering(r) || filters_rows {
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
    /// A map entry's key: the entry's value is compared, not the column's.
    key: Option<Bytes>,
}

impl ResolvedFilter {
    fn new(f: &Filter, ctx: &ExecContext) -> CqlResult<ResolvedFilter> {
        let name = &f.column.name;
        let value = match (f.op, f.value.resolve(ctx)?) {
            (_, Resolved::Value(value)) => value,
            (Operator::Contains | Operator::ContainsKey, Resolved::Null) => {
                return Err(CqlError::invalid(format!(
                    "Unsupported null value for column {name}"
                )))
            }
            (Operator::Contains | Operator::ContainsKey, Resolved::Unset) => {
                return Err(CqlError::invalid(format!(
                    "Unsupported unset value for column {name}"
                )))
            }
            (_, Resolved::Null) if !f.column.kind.is_primary_key() => {
                let what = if f.key.is_some() {
                    "map value"
                } else {
                    "value"
                };
                return Err(CqlError::invalid(format!(
                    "Unsupported null {what} for column {name}"
                )));
            }
            _ => f.value.resolve_required(ctx, name)?,
        };
        let key = match f.key.as_ref().map(|key| key.resolve(ctx)).transpose()? {
            Some(Resolved::Value(key)) => Some(key),
            Some(Resolved::Null) => {
                return Err(CqlError::invalid(format!(
                    "Unsupported null map key for column {name}"
                )))
            }
            Some(Resolved::Unset) => {
                return Err(CqlError::invalid(format!(
                    "Unsupported unset map key for column {name}"
                )))
            }
            None => None,
        };
        Ok(ResolvedFilter {
            column: f.column.clone(),
            op: f.op,
            value,
            key,
        })
    }

    fn matches(&self, view: &RowView) -> bool {
        let Some(actual) = view.value(&self.column) else {
            return false;
        };
        if let Some(key) = &self.key {
            return entry_matches(&self.column.ty, &actual, key, &self.value);
        }
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

/// Whether map `map` (of type `ty`) holds `key` with value `value`.
fn entry_matches(ty: &CqlType, map: &[u8], key: &[u8], value: &[u8]) -> bool {
    let CqlType::Map(key_type, value_type) = ty.unfrozen() else {
        return false;
    };
    let Ok(flat) = crate::collections::split(map, true) else {
        return false;
    };
    flat.chunks(2).any(|pair| {
        pair.len() == 2
            && compare(key_type, &pair[0], key).is_eq()
            && compare(value_type, &pair[1], value).is_eq()
    })
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

/// How far one partition has been returned.
struct Progress {
    /// Rows returned from it, by earlier pages too (for PER PARTITION LIMIT).
    emitted: i64,
    /// Its live static row, from its first read.
    static_row: Option<Row>,
    /// Whether nothing of it was returned or read yet (so it may yield a static-only row).
    fresh: bool,
}

impl Progress {
    fn fresh() -> Progress {
        Progress {
            emitted: 0,
            static_row: None,
            fresh: true,
        }
    }
}

/// Keeps the partition's static row from its first read that has one.
fn keep_static_row(p: &Partition, progress: &mut Progress) {
    if progress.static_row.is_none() {
        progress.static_row = p.static_row.clone();
    }
}

/// A group being aggregated: its state, its key (partition key and clustering prefix) and
/// its first row's clustering (for post-query ordering).
struct OpenGroup {
    state: GroupState,
    key: Vec<Option<Bytes>>,
    clustering: Vec<Option<Bytes>>,
}

/// A result row kept back for ordering: its clustering values, then its output values.
type HeldRow = (Vec<Option<Bytes>>, Vec<Option<Bytes>>);

/// The state of one execution.
struct Run<'a> {
    plan: &'a SelectPlan,
    ctx: &'a ExecContext,
    coord: &'a dyn PartitionReader,
    filters: Vec<ResolvedFilter>,
    per_partition: Option<i64>,
    rows: Rows,
    /// Rows (with their clustering) kept for post-query ordering.
    held: Vec<HeldRow>,
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
    /// Whether this is a range scan (its reads name no partition in messages).
    scanning: bool,
}

impl<'a> Run<'a> {
    fn new(
        plan: &'a SelectPlan,
        ctx: &'a ExecContext,
        coord: &'a dyn PartitionReader,
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
            scanning: false,
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

    async fn read_keys(
        &mut self,
        keys: Vec<PartitionKey>,
        state: Option<&PagingState>,
    ) -> CqlResult<()> {
        let base = self.plan.read_filter(self.ctx)?;
        let scope = self.scope();
        let first = state
            .and_then(|s| keys.iter().position(|k| k.key == s.partition_key))
            .unwrap_or(0);
        for key in keys.into_iter().skip(first) {
            if let Some((filter, progress)) = self.resume_filter(&base, &key, state) {
                self.read_partition(&scope, &key, filter, progress).await?;
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
            keyspace: &self.plan.layout.table.keyspace,
            table: mutation::TableId(self.plan.layout.table.id),
            cl: self.ctx.consistency,
            now: self.ctx.now_seconds,
            trace: self.ctx.trace(),
            policy: &self.plan.policy,
        }
    }

    /// The filter for `key` given the paging state: for the paged partition, its slices after
    /// the last row returned and the rows already returned from it; `None` when the key is the
    /// paged one and was fully returned by earlier pages. Keys before the paged one are
    /// skipped by the callers.
    fn resume_filter(
        &self,
        base: &ReadFilter,
        key: &PartitionKey,
        state: Option<&PagingState>,
    ) -> Option<(ReadFilter, Progress)> {
        let Some(s) = state.filter(|s| s.partition_key == key.key) else {
            return Some((base.clone(), Progress::fresh()));
        };
        let last = s.last_clustering.as_ref()?;
        let progress = Progress {
            emitted: s.in_partition,
            static_row: None,
            fresh: false,
        };
        Some((base.after(last), progress))
    }

    /// The live rows the page (or LIMIT) still wants; `None` for no limit.
    fn page_left(&self) -> Option<usize> {
        let unlimited =
            self.budget == i64::MAX || self.plan.aggregating() || self.plan.post_query_ordering();
        let left = (self.budget - self.count).max(0);
        (!unlimited).then(|| usize::try_from(left).unwrap_or(usize::MAX))
    }

    /// The live rows still wanted from a partition that returned `emitted` rows: what the
    /// page and PER PARTITION LIMIT leave; `None` for no limit.
    fn rows_wanted(&self, emitted: i64) -> Option<usize> {
        let partition_left = self
            .per_partition
            .map(|cap| usize::try_from(cap - emitted).unwrap_or(0));
        match (self.page_left(), partition_left) {
            (Some(page), Some(partition)) => Some(page.min(partition)),
            (page, partition) => page.or(partition),
        }
    }

    /// Reads partition `key` from `filter` on and emits its rows.
    async fn read_partition(
        &mut self,
        scope: &ReadScope<'_>,
        key: &PartitionKey,
        mut filter: ReadFilter,
        progress: Progress,
    ) -> CqlResult<()> {
        let limit = self.chunk_limit(progress.emitted);
        if limit == Some(0) {
            return Ok(());
        }
        filter.row_limit = limit;
        if let Some(p) = self.read_chunk(scope, key, &filter).await? {
            self.emit_partition(scope, p, filter, progress).await?;
        }
        Ok(())
    }

    /// The row limit of the next read of a partition that returned `emitted` rows.
    fn chunk_limit(&self, emitted: i64) -> Option<usize> {
        if self.plan.distinct {
            Some(1)
        } else if self.plan.aggregating() {
            // Groups are formed over whole partitions, and PER PARTITION LIMIT counts groups.
            None
        } else {
            self.rows_wanted(emitted)
        }
    }

    /// One read of partition `key`, its statistics counted.
    async fn read_chunk(
        &mut self,
        scope: &ReadScope<'_>,
        key: &PartitionKey,
        filter: &ReadFilter,
    ) -> CqlResult<Option<Partition>> {
        let mut stats = ReadStats::default();
        self.trace_partition_read();
        let mut found = self.coord.read(scope, key, filter, &mut stats).await?;
        if let Some(p) = found.as_mut() {
            crate::dropped::forget_dropped(&self.plan.layout.table, p);
        }
        let named = (!self.scanning).then_some(key);
        self.count(stats, named, key.token)?;
        Ok(found)
    }

    /// Emits `chunk`, the first rows of a partition read with `filter`, then reads on after the
    /// last row read while the read was cut at its row limit and the page and PER PARTITION
    /// LIMIT still want rows (filters may have rejected some).
    async fn emit_partition(
        &mut self,
        scope: &ReadScope<'_>,
        mut chunk: Partition,
        mut filter: ReadFilter,
        mut progress: Progress,
    ) -> CqlResult<()> {
        if self.plan.aggregating() {
            return self.grouped_partition(&chunk, &mut progress);
        }
        loop {
            self.partition(&chunk, &mut progress)?;
            let cut = filter.row_limit.is_some_and(|l| chunk.rows.len() >= l);
            let capped = progress.emitted >= self.per_partition.unwrap_or(i64::MAX);
            let last_read = chunk.rows.last().map(|r| r.clustering.clone());
            let next = last_read.filter(|_| cut && !capped && !self.plan.distinct);
            let Some(last_read) = next else {
                self.last = Some((chunk.key.clone(), None, progress.emitted));
                return Ok(());
            };
            if self.full() {
                return Ok(());
            }
            filter = filter.after(&last_read);
            filter.include_static = false;
            filter.row_limit = self.chunk_limit(progress.emitted);
            match self.read_chunk(scope, &chunk.key, &filter).await? {
                Some(p) => chunk = p,
                None => {
                    self.last = Some((chunk.key.clone(), None, progress.emitted));
                    return Ok(());
                }
            }
        }
    }

    async fn scan(&mut self, mut range: KeyRange, state: Option<&PagingState>) -> CqlResult<()> {
        self.scanning = true;
        let base = self.plan.read_filter(self.ctx)?;
        let scope = self.scope();
        if let Some(s) = state {
            let key = PartitionKey {
                token: ring::murmur3_token(&s.partition_key),
                key: s.partition_key.clone(),
            };
            if let Some((filter, progress)) = self.resume_filter(&base, &key, state) {
                self.read_partition(&scope, &key, filter, progress).await?;
            }
            range.start = Bound::Excluded(PartitionPosition::Key(key));
        }
        while !self.full() {
            let mut filter = base.clone();
            filter.row_limit = self.chunk_limit(0);
            filter.total_row_limit = self.page_left().filter(|_| !self.plan.distinct);
            let mut stats = ReadStats::default();
            let batch = self
                .coord
                .scan(&scope, &range, &filter, SCAN_BATCH, &mut stats)
                .await?;
            let token = batch.last().map_or(0, |p| p.key.token);
            self.count(stats, None, token)?;
            let n = batch.len();
            let mut rows_left = filter.total_row_limit.unwrap_or(usize::MAX);
            for mut p in batch {
                // The row limit storage read this partition with.
                let mut partition_filter = filter.clone();
                partition_filter.row_limit = match (filter.row_limit, filter.total_row_limit) {
                    (None, None) => None,
                    (limit, _) => Some(limit.unwrap_or(usize::MAX).min(rows_left)),
                };
                rows_left = rows_left.saturating_sub(p.rows.len());
                crate::dropped::forget_dropped(&self.plan.layout.table, &mut p);
                let key = p.key.clone();
                self.emit_partition(&scope, p, partition_filter, Progress::fresh())
                    .await?;
                if self.full() {
                    return Ok(());
                }
                range.start = Bound::Excluded(PartitionPosition::Key(key));
            }
            if n < SCAN_BATCH && rows_left > 0 {
                break;
            }
        }
        Ok(())
    }

    /// Emits the rows of one read of a partition (a static-only row for a partition without
    /// rows, if it counts and none of it was returned before).
    fn partition(&mut self, p: &Partition, progress: &mut Progress) -> CqlResult<()> {
        let layout = &self.plan.layout;
        let pk = layout.split_partition_key(&p.key.key)?;
        keep_static_row(p, progress);
        let cap = self.per_partition.unwrap_or(i64::MAX);
        if self.plan.distinct && crate::dropped::only_forgotten(&layout.table, p) {
            return Ok(());
        }
        if !crate::dropped::has_rows(p) || self.plan.distinct {
            if self.static_row_counts(progress) && progress.emitted < cap {
                let view = self.row_view(p, &pk, &[], None, progress.static_row.as_ref());
                if self.emit(&view)? {
                    progress.emitted += 1;
                }
            }
            progress.fresh = false;
            return Ok(());
        }
        progress.fresh = false;
        for row in p.rows.iter().filter(|r| !crate::dropped::is_empty(r)) {
            if progress.emitted >= cap || self.full() {
                break;
            }
            let clustering = layout.decode_clustering(&row.clustering)?;
            let view = self.row_view(p, &pk, &clustering, Some(row), progress.static_row.as_ref());
            if self.emit(&view)? {
                progress.emitted += 1;
                let at = Some(row.clustering.clone());
                self.last = Some((p.key.clone(), at, progress.emitted));
            }
        }
        Ok(())
    }

    /// Whether a partition without rows (or any partition of a DISTINCT query) yields its
    /// static row: only when none of the partition was returned or read before.
    fn static_row_counts(&self, progress: &Progress) -> bool {
        let static_live = progress
            .static_row
            .as_ref()
            .is_some_and(|r| !r.columns.is_empty());
        let counts = self.plan.distinct || (static_live && self.plan.static_rows_count());
        counts && progress.fresh
    }

    fn row_view<'p>(
        &self,
        p: &'p Partition,
        pk: &'p [Bytes],
        clustering: &'p [Option<Bytes>],
        row: Option<&'p Row>,
        static_row: Option<&'p Row>,
    ) -> RowView<'p> {
        RowView {
            key: &p.key,
            pk,
            clustering,
            row,
            static_row,
            now: self.ctx.now_seconds,
        }
    }

    /// Aggregates a partition's rows into groups. A group ends when a row of another group
    /// comes or the partition ends (groups always hold one partition key); an ended group is
    /// an output row, counted against the limits, so pages end between groups and the
    /// paging state points at the last row of the last group returned. Aggregating reads
    /// take whole partitions (see `chunk_limit`), so this sets `last` itself.
    fn grouped_partition(&mut self, p: &Partition, progress: &mut Progress) -> CqlResult<()> {
        let layout = &self.plan.layout;
        let pk = layout.split_partition_key(&p.key.key)?;
        keep_static_row(p, progress);
        let cap = self.per_partition.unwrap_or(i64::MAX);
        let mut last_row: Option<Bytes> = None;
        if self.plan.distinct && crate::dropped::only_forgotten(&layout.table, p) {
            return Ok(());
        }
        if !crate::dropped::has_rows(p) || self.plan.distinct {
            let view = self.row_view(p, &pk, &[], None, progress.static_row.as_ref());
            let counts = self.static_row_counts(progress) && progress.emitted < cap;
            if counts && self.passes(&view) {
                self.feed(&view)?;
            }
        } else {
            for row in p.rows.iter().filter(|r| !crate::dropped::is_empty(r)) {
                let clustering = layout.decode_clustering(&row.clustering)?;
                let view =
                    self.row_view(p, &pk, &clustering, Some(row), progress.static_row.as_ref());
                if !self.passes(&view) {
                    continue;
                }
                if self.starts_new_group(&view) {
                    progress.emitted += self.close_group()?;
                    if self.full() {
                        self.last = Some((p.key.clone(), last_row.take(), progress.emitted));
                        return Ok(());
                    }
                }
                if progress.emitted >= cap {
                    break;
                }
                self.feed(&view)?;
                last_row = Some(row.clustering.clone());
            }
        }
        progress.fresh = false;
        if self.plan.grouping.is_some() {
            progress.emitted += self.close_group()?;
        }
        self.last = Some((p.key.clone(), None, progress.emitted));
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
        self.output(&clustering, values);
        Ok(1)
    }

    /// Emits a row if it passes the filters; returns whether it did.
    fn emit(&mut self, view: &RowView) -> CqlResult<bool> {
        if !self.passes(view) {
            return Ok(false);
        }
        let values = self.eval.row(view)?;
        self.count += 1;
        self.output(view.clustering, values);
        Ok(true)
    }

    /// Adds an output row to the result (held back, with its clustering, for post-query
    /// ordering).
    fn output(&mut self, clustering: &[Option<Bytes>], values: Vec<Option<Bytes>>) {
        if self.plan.post_query_ordering() {
            self.held.push((clustering.to_vec(), values));
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

impl SelectPlan {
    pub fn partition(&self) -> Option<&PartitionSelection> {
        Some(&self.restrictions.partition)
    }

    pub(crate) fn restrictions(&self) -> &Restrictions {
        &self.restrictions
    }

    /// Whether Cassandra pages this execution (and so checks its page size): an aggregate
    /// given a page size, or a page size below the LIMIT.
    pub(crate) fn pages(&self, ctx: &ExecContext) -> CqlResult<bool> {
        let Some(page_size) = ctx.page_size.filter(|p| *p > 0) else {
            return Ok(false);
        };
        let limit = resolve_limit(&self.limit, ctx)?.unwrap_or(i64::MAX);
        Ok(self.selection.is_aggregate || limit > i64::from(page_size))
    }
}
