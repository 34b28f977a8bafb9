//! GROUP BY: which primary key prefix forms the groups, with Cassandra's rules (columns of the
//! primary key in their declared order, skipping only columns restricted by `=`, never part
//! of the partition key), and the client warnings of aggregation queries.
//!
//! Guardrails hook: a statement groups when `SelectPlan::grouping()` is `Some`; Cassandra's
//! `group_by_enabled` guardrail refuses such statements at analysis.
use cql::ast::SelectorExpr;
use schema::{ColumnKind, TableMetadata};
use types::{CqlError, CqlResult};

use crate::restrictions::{PartitionSelection, Restrictions, Values};

/// The groups of a GROUP BY query: rows with the same partition key and the same first
/// `clustering_prefix` clustering values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grouping {
    pub clustering_prefix: usize,
}

const ORDER: &str =
    "Group by currently only support groups of columns following their declared order in the PRIMARY KEY";

/// Analyses `GROUP BY` (`None` without one).
pub fn analyze(
    table: &TableMetadata,
    groups: &[SelectorExpr],
    restrictions: &Restrictions,
    distinct: bool,
) -> CqlResult<Option<Grouping>> {
    if groups.is_empty() {
        return Ok(None);
    }
    let mut key_columns = table
        .partition_key_columns()
        .chain(table.clustering_columns());
    let mut clustering_prefix = 0;
    for group in groups {
        let SelectorExpr::Column(name) = group else {
            return Err(CqlError::invalid(ORDER));
        };
        let column = crate::columns::column(table, name)?;
        if !matches!(
            column.kind,
            ColumnKind::PartitionKey | ColumnKind::Clustering
        ) {
            return Err(CqlError::invalid(format!(
                "Group by is currently only supported on the columns of the PRIMARY KEY, got {name}"
            )));
        }
        loop {
            let next = key_columns.next().ok_or_else(|| CqlError::invalid(ORDER))?;
            if next.kind == ColumnKind::Clustering {
                clustering_prefix += 1;
            }
            if next.name == column.name {
                break;
            }
            if !restricted_by_eq(restrictions, next) {
                return Err(CqlError::invalid(ORDER));
            }
        }
    }
    if key_columns
        .next()
        .is_some_and(|c| c.kind == ColumnKind::PartitionKey)
    {
        return Err(CqlError::invalid(
            "Group by is not supported on only a part of the partition key",
        ));
    }
    if clustering_prefix > 0 && distinct {
        return Err(CqlError::invalid(
            "Grouping on clustering columns is not allowed for SELECT DISTINCT queries",
        ));
    }
    Ok(Some(Grouping { clustering_prefix }))
}

fn restricted_by_eq(r: &Restrictions, column: &schema::ColumnMetadata) -> bool {
    let position = column.position.max(0) as usize;
    let values = match column.kind {
        ColumnKind::PartitionKey => match &r.partition {
            PartitionSelection::Keys(values) => values.get(position),
            PartitionSelection::Range(_) => None,
        },
        _ => r.clustering_values(position),
    };
    matches!(values, Some(Values::Eq(_)))
}

/// The warning Cassandra sends with an aggregation or GROUP BY query that reads more than
/// one partition.
pub fn warning(r: &Restrictions) -> Option<&'static str> {
    match &r.partition {
        PartitionSelection::Range(_) => Some("Aggregation query used without partition key"),
        PartitionSelection::Keys(values) if values.iter().any(|v| !matches!(v, Values::Eq(_))) => {
            Some("Aggregation query used on multiple partition keys (IN restriction)")
        }
        PartitionSelection::Keys(_) => None,
    }
}
