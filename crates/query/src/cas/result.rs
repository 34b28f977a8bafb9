//! What a lightweight transaction answers (Cassandra's `buildCasResultSet`): the `[applied]`
//! column and, when the conditions did not hold, the rows read with the columns Cassandra
//! shows (every column for IF [NOT] EXISTS, else the columns the conditions name, a batch's
//! rows prefixed by their primary key), one row per row read, or the static row alone.
use mutation::{Partition, Row};
use schema::ColumnMetadata;
use types::result::{ColumnSpec, Rows};
use types::{CqlResult, CqlType, NativeType};

use super::request::{exists, CasRequest};
use crate::columns::spec;
use crate::rows::RowView;

/// `[applied]` true, alone.
pub fn applied(request: &CasRequest) -> Rows {
    let mut rows = Rows::new(vec![applied_spec(request)]);
    rows.push_value(Some(&[1]));
    rows.end_row();
    rows
}

/// `[applied]` false and the rows `partition` holds, as `request` shows them.
pub fn not_applied(
    request: &CasRequest,
    partition: Option<&Partition>,
    now: i32,
) -> CqlResult<Rows> {
    let shown: Vec<&Partition> = partition.into_iter().collect();
    let layout = request.layout;
    let columns = match &request.result_columns {
        Some(list) => list.clone(),
        None => crate::selection::select_order(request.table),
    };
    let mut values: Vec<Vec<Option<bytes::Bytes>>> = Vec::new();
    for p in shown {
        let pk = layout.split_partition_key(&p.key.key)?;
        let static_row = p.static_row.as_ref().filter(|r| exists(r, now));
        let rows: Vec<&Row> = p.rows.iter().filter(|r| exists(r, now)).collect();
        let mut emit = |row: Option<&Row>, clustering: &[Option<bytes::Bytes>]| {
            let view = RowView {
                key: &p.key,
                pk: &pk,
                clustering,
                row,
                static_row,
                now,
            };
            let line = columns
                .iter()
                .map(|c| request.shows(c).then(|| view.value(c)).flatten())
                .collect();
            values.push(line);
        };
        if rows.is_empty() && static_row.is_some() {
            emit(None, &[]);
        }
        for row in rows {
            let clustering = layout.decode_clustering(&row.clustering)?;
            emit(Some(row), &clustering);
        }
    }
    let mut specs = vec![applied_spec(request)];
    if values.is_empty() {
        let mut out = Rows::new(specs);
        out.push_value(Some(&[0]));
        out.end_row();
        return Ok(out);
    }
    specs.extend(columns.iter().map(|c| column_spec(request, c)));
    let mut out = Rows::new(specs);
    for line in values {
        out.push_value(Some(&[0]));
        for value in &line {
            out.push_value(value.as_deref());
        }
        out.end_row();
    }
    Ok(out)
}

fn applied_spec(request: &CasRequest) -> ColumnSpec {
    spec(
        request.table,
        "[applied]",
        CqlType::Native(NativeType::Boolean),
    )
}

fn column_spec(request: &CasRequest, col: &ColumnMetadata) -> ColumnSpec {
    spec(request.table, &col.name, col.ty.clone())
}
