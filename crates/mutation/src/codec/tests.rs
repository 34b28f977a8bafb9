use std::ops::Bound;

use bytes::{BufMut, Bytes};
use uuid::Uuid;

use super::row::put_varint;
use super::*;
use crate::counter_context::{CounterContext, Shard};
use crate::model::{Cell, ColumnData, ColumnValue, LivenessInfo};

pub(crate) fn sample() -> Mutation {
    let mut row = Row::new(Bytes::from_static(b"c1"));
    row.liveness = Some(LivenessInfo::expiring(10, 5, 100));
    row.deletion = DeletionTime::new(3, 4);
    row.columns = vec![
        ColumnData::simple("a", Cell::live(10, Bytes::from_static(b"x"))),
        ColumnData::simple("b", Cell::tombstone(11, 7)),
        ColumnData::simple("n", Cell::counter(12, &counter_context())),
        ColumnData::complex(
            "m",
            DeletionTime::new(9, 9),
            vec![Cell::live(10, Bytes::new()).with_path(Bytes::from_static(b"p"))],
        ),
        ColumnData::simple("e", Cell::expiring(10, 60, 100, Bytes::from_static(b"y"))),
    ];
    Mutation {
        table: TableId(Uuid::from_u128(42)),
        key: PartitionKey {
            token: -7,
            key: Bytes::from_static(b"pk"),
        },
        update: PartitionUpdate {
            partition_deletion: DeletionTime::new(1, 2),
            static_row: Some(Row::new(Bytes::new())),
            rows: vec![row],
            range_tombstones: vec![RangeTombstone {
                start: Bound::Excluded(Bytes::from_static(b"a")),
                end: Bound::Unbounded,
                deletion: DeletionTime::new(5, 6),
            }],
        },
    }
}

fn counter_context() -> CounterContext {
    CounterContext::single(Shard {
        id: [3; 16],
        clock: 2,
        count: -5,
    })
}

/// The legacy encoding of `row`, as nodes wrote it before the compact form.
fn legacy_row(row: &Row) -> Vec<u8> {
    let mut out = Vec::new();
    put_bytes(&mut out, &row.clustering);
    match &row.liveness {
        Some(l) => {
            out.put_u8(1);
            out.put_i64(l.timestamp);
            out.put_i32(l.ttl);
            out.put_i32(l.local_expiration_time);
        }
        None => out.put_u8(0),
    }
    put_deletion(&mut out, &row.deletion);
    put_len(&mut out, row.columns.len());
    for column in &row.columns {
        put_bytes(&mut out, &column.name);
        match &column.value {
            ColumnValue::Simple(cell) => {
                out.put_u8(0);
                legacy_cell(&mut out, cell);
            }
            ColumnValue::Complex(complex) => {
                out.put_u8(1);
                put_deletion(&mut out, &complex.deletion);
                put_len(&mut out, complex.cells.len());
                for cell in &complex.cells {
                    legacy_cell(&mut out, cell);
                }
            }
        }
    }
    out
}

fn legacy_cell(out: &mut Vec<u8>, cell: &Cell) {
    let flags = (u8::from(cell.value.is_some()) * HAS_VALUE)
        | (u8::from(cell.path.is_some()) * HAS_PATH)
        | (u8::from(cell.counter) * IS_COUNTER);
    out.put_u8(flags);
    out.put_i64(cell.timestamp);
    out.put_i32(cell.ttl);
    out.put_i32(cell.local_deletion_time);
    if let Some(value) = &cell.value {
        put_bytes(out, value);
    }
    if let Some(path) = &cell.path {
        put_bytes(out, path);
    }
}

fn encoded(row: &Row) -> Vec<u8> {
    let mut out = Vec::new();
    put_row(&mut out, row);
    out
}

/// A `standard1` row as `helenus stress write` makes it: five 34-byte values, one timestamp.
fn standard1_row() -> Row {
    let mut row = Row::new(Bytes::new());
    row.liveness = Some(LivenessInfo::new(1_700_000_000_000_000));
    row.columns = (0..5)
        .map(|i| {
            let value = Bytes::from(vec![i as u8; 34]);
            ColumnData::simple(format!("C{i}"), Cell::live(1_700_000_000_000_000, value))
        })
        .collect();
    row
}

#[test]
fn compact_rows_are_smaller_and_round_trip() {
    let row = standard1_row();
    let bytes = encoded(&row);
    assert_eq!(bytes.len(), 206);
    assert_eq!(legacy_row(&row).len(), 347);
    let mut reader = Reader { bytes: &bytes };
    assert_eq!(reader.row(), Ok(row));
    assert!(reader.bytes.is_empty());
}

#[test]
fn shared_rows_slice_their_bytes_out_of_the_source() {
    let row = sample().update.rows.remove(0);
    let source = Bytes::from(encoded(&row));
    let shared = Reader { bytes: &source }.shared_row(&source).unwrap();
    assert_eq!(shared, row);
    let within = |b: &Bytes| source.as_ptr_range().contains(&b.as_ptr());
    assert!(within(&shared.clustering));
    for column in &shared.columns {
        assert!(within(&column.name), "{:?}", column.name);
    }
    // A payload outside `source` is copied, not sliced.
    let elsewhere = Bytes::from(encoded(&row));
    let copied = Reader { bytes: &elsewhere }.shared_row(&source).unwrap();
    assert_eq!(copied, row);
    assert!(!within(&copied.clustering));
}

/// A column table numbering names as `number` says, each column's usual length its first.
struct Table<F> {
    number: F,
    lengths: Vec<u32>,
}

impl<F: FnMut(&[u8]) -> u64> ColumnTable for Table<F> {
    fn number(&mut self, name: &[u8], _: usize) -> u64 {
        (self.number)(name)
    }

    fn usual_length(&mut self, number: u64, len: usize) -> bool {
        let usual = &mut self.lengths[number as usize];
        if *usual == NO_USUAL_LENGTH {
            *usual = len as u32;
        }
        *usual == len as u32
    }
}

/// `row` numbered in `table`, its marker's timestamp from `base`.
fn numbered<F: FnMut(&[u8]) -> u64>(row: &Row, table: &mut Table<F>, base: i64) -> Vec<u8> {
    let mut out = vec![9]; // numbered rows append after what the buffer holds
    let mut base = Some(base);
    let mut spans = RowSpans::default();
    put_numbered_row(&mut out, &encoded(row), &mut spans, table, &mut base).unwrap();
    out.split_off(1)
}

fn numbering<'a>(names: &'a [Bytes], lengths: &'a [u32], timestamp_base: i64) -> Numbering<'a> {
    Numbering {
        names,
        lengths,
        timestamp_base,
    }
}

#[test]
fn numbered_rows_name_columns_by_number_and_dense_rows_by_none() {
    let row = standard1_row();
    let names: Vec<Bytes> = (0..5).map(|i| Bytes::from(format!("C{i}"))).collect();
    let position = |name: &[u8]| names.iter().position(|n| n == name).unwrap() as u64;
    // Dense: numbers 0..4 in order, none written: 206 bytes less five 3-byte names, five
    // lengths (the columns' usual 34), and the marker's timestamp one second after the base:
    // 3 bytes instead of 8.
    let base = 1_700_000_000_000_000 - 1_000_000;
    let mut table = Table {
        number: position,
        lengths: vec![NO_USUAL_LENGTH; 5],
    };
    let dense = numbered(&row, &mut table, base);
    assert_eq!(dense.len(), 206 - 15 - 5 - 5);
    assert_eq!(table.lengths, vec![34; 5]);
    let lengths = table.lengths.clone();
    let source = Bytes::from(dense);
    let table_of = numbering(&names, &lengths, base);
    let decoded = Reader { bytes: &source }.shared_numbered_row(&source, table_of);
    assert_eq!(decoded.as_ref(), Ok(&row));
    for (column, name) in decoded.unwrap().columns.iter().zip(&names) {
        assert_eq!(
            column.name.as_ptr(),
            name.as_ptr(),
            "names are shared, not copied"
        );
    }
    // A value of another length writes it.
    let mut odd = row.clone();
    if let ColumnValue::Simple(cell) = &mut odd.columns[2].value {
        cell.value = Some(Bytes::from_static(b"seven.."));
    }
    let odd_bytes = numbered(&odd, &mut table, base);
    assert_eq!(odd_bytes.len(), 181 + 1 - 27);
    let decoded = Reader { bytes: &odd_bytes }.shared_numbered_row(&source, table_of);
    assert_eq!(decoded, Ok(odd));
    // Sparse: numbers written (one byte each) when they are not 0, 1, … in order; a timestamp
    // before the base takes a negative difference.
    let reversed: Vec<Bytes> = names.iter().rev().cloned().collect();
    let later = base + 2_000_000;
    let mut reversed_table = Table {
        number: |n: &[u8]| 4 - position(n),
        lengths: vec![NO_USUAL_LENGTH; 5],
    };
    let sparse = numbered(&row, &mut reversed_table, later);
    assert_eq!(sparse.len(), 206 - 10 - 5 - 5);
    let table = numbering(&reversed, &lengths, later);
    let decoded = Reader { bytes: &sparse }.shared_numbered_row(&source, table);
    assert_eq!(decoded, Ok(row.clone()));
    for len in 0..sparse.len() {
        let mut reader = Reader {
            bytes: &sparse[..len],
        };
        assert!(reader.shared_numbered_row(&source, table).is_err());
    }
    // A number past the table, a usual length the table lacks, and the flags of numbered rows
    // outside one, are refused.
    let two = numbering(&reversed[..2], &lengths, later);
    let short = Reader { bytes: &sparse }.shared_numbered_row(&source, two);
    assert_eq!(short, Err(DecodeError("unknown column number")));
    let unknown = numbering(&reversed, &[], later);
    assert!(Reader { bytes: &sparse }
        .shared_numbered_row(&source, unknown)
        .is_err());
    assert!(Reader { bytes: &source }.row().is_err());
}

#[test]
fn legacy_rows_still_decode() {
    for row in sample().update.rows.iter().chain([&standard1_row()]) {
        let old = legacy_row(row);
        let mut reader = Reader { bytes: &old };
        assert_eq!(reader.row().as_ref(), Ok(row));
        assert!(reader.bytes.is_empty());
        for len in 0..old.len() {
            assert!(Reader { bytes: &old[..len] }.row().is_err(), "prefix {len}");
        }
    }
}

#[test]
fn cells_written_before_counter_contexts_decode_unflagged() {
    // A legacy counter total as data written before contexts holds it: flags 1 (value).
    let mut old = vec![1u8];
    old.extend_from_slice(&9i64.to_be_bytes());
    old.extend_from_slice(&0i32.to_be_bytes());
    old.extend_from_slice(&i32::MAX.to_be_bytes());
    put_bytes(&mut old, &40i64.to_be_bytes());
    let cell = Reader { bytes: &old }
        .legacy_cell()
        .expect("legacy cell")
        .to_cell();
    assert_eq!(
        cell,
        Cell::live(9, Bytes::copy_from_slice(&40i64.to_be_bytes()))
    );
    assert!(!cell.counter);
}

fn row_of(cell: Cell) -> Row {
    let mut row = Row::new(Bytes::new());
    row.columns = vec![ColumnData::simple("c", cell)];
    row
}

#[test]
fn counter_cells_with_damaged_contexts_are_refused() {
    let bytes = encoded(&row_of(Cell::counter(1, &counter_context())));
    assert!(Reader { bytes: &bytes }.row().is_ok());
    // Row flags, clustering, count, name length, name, cell flags, timestamp: the value's length.
    let len_at = 5 + 1 + 8;
    assert_eq!(usize::from(bytes[len_at]), bytes.len() - len_at - 1);
    // Drop the context's last byte and shorten its length to match.
    let mut short = bytes[..bytes.len() - 1].to_vec();
    short[len_at] -= 1;
    assert!(Reader { bytes: &short }.row().is_err());
    let mut flagged_tombstone = encoded(&row_of(Cell::tombstone(1, 0)));
    flagged_tombstone[5] |= IS_COUNTER; // row flags, clustering, count, name length, name
    assert!(Reader {
        bytes: &flagged_tombstone
    }
    .row()
    .is_err());
}

#[test]
fn only_the_one_encoding_decodes() {
    let row = row_of(Cell::live(7, Bytes::from_static(b"v")));
    let bytes = encoded(&row);
    // A varint with a redundant high zero byte.
    let mut long_count = bytes[..2].to_vec();
    long_count.extend_from_slice(&[0x81, 0x00]);
    long_count.extend_from_slice(&bytes[3..]);
    assert!(Reader { bytes: &long_count }.row().is_err());
    // A cell repeating the timestamp it would inherit.
    let mut marked = row.clone();
    marked.liveness = Some(LivenessInfo::new(7));
    let mut repeated = encoded(&marked);
    let flags_at = 1 + 1 + 8 + 1 + 2;
    repeated[flags_at] |= 8;
    repeated.splice(flags_at + 1..flags_at + 1, 7i64.to_be_bytes());
    assert!(Reader { bytes: &repeated }.row().is_err());
    // A live deletion written as if present.
    let mut live_deletion = vec![0x80 | 4, 0];
    put_deletion(&mut live_deletion, &DeletionTime::LIVE);
    live_deletion.push(0);
    assert!(Reader {
        bytes: &live_deletion
    }
    .row()
    .is_err());
}

#[test]
fn mutations_round_trip_and_every_prefix_is_an_error() {
    let m = sample();
    let mut out = Vec::new();
    put_mutation(&mut out, &m);
    let mut reader = Reader { bytes: &out };
    assert_eq!(reader.mutation(), Ok(m));
    assert!(reader.bytes.is_empty());
    for len in 0..out.len() {
        let mut reader = Reader { bytes: &out[..len] };
        assert!(reader.mutation().is_err(), "prefix of {len} bytes decoded");
    }
}

#[test]
fn the_size_hint_covers_the_encoding() {
    let m = sample();
    let mut out = Vec::new();
    put_mutation(&mut out, &m);
    assert!(mutation_size_hint(&m) >= out.len());
    assert!(
        mutation_size_hint(&m) < out.len() * 3,
        "a hint, not a waste"
    );
}

#[test]
fn varints_round_trip_at_their_boundaries() {
    for value in [0usize, 1, 127, 128, 16_383, 16_384, u32::MAX as usize] {
        let mut out = Vec::new();
        put_varint(&mut out, value);
        let mut reader = Reader { bytes: &out };
        assert_eq!(reader.varint(), Ok(value as u32));
        assert!(reader.bytes.is_empty());
    }
    assert!(Reader {
        bytes: &[0xff, 0xff, 0xff, 0xff, 0x1f]
    }
    .varint()
    .is_err());
}

/// Every part a visit hands over, as text.
#[derive(Default)]
struct Recorder(Vec<String>);

impl<'a> RowVisitor<'a> for Recorder {
    fn head(
        &mut self,
        clustering: &'a [u8],
        liveness: Option<LivenessInfo>,
        deletion: DeletionTime,
    ) {
        self.0
            .push(format!("head {clustering:?} {liveness:?} {deletion:?}"));
    }

    fn simple(&mut self, name: &'a [u8], cell: CellView<'a>) {
        self.0.push(format!("simple {name:?} {cell:?}"));
    }

    fn complex(&mut self, name: &'a [u8], deletion: DeletionTime) {
        self.0.push(format!("complex {name:?} {deletion:?}"));
    }

    fn complex_cell(&mut self, cell: CellView<'a>) {
        self.0.push(format!("cell {cell:?}"));
    }
}

#[test]
fn a_visit_of_the_encoding_sees_what_a_visit_of_the_row_sees() {
    let row = sample().update.rows.remove(0);
    let mut encoded = Vec::new();
    put_row(&mut encoded, &row);
    let (mut from_bytes, mut from_row) = (Recorder::default(), Recorder::default());
    let mut reader = Reader { bytes: &encoded };
    reader.visit_compact_row(&mut from_bytes).expect("visit");
    assert!(reader.bytes.is_empty());
    visit_decoded(&row, &mut from_row);
    assert_eq!(from_bytes.0, from_row.0);
    assert_eq!(
        from_row.0.len(),
        7,
        "head, 4 simple columns, a complex one and its cell"
    );
}
