//! The memtable's counted bytes against what its writes really allocate: a counting global
//! allocator measures the heap a memtable keeps for cassandra-stress-shaped rows, and the
//! count the flush and back-pressure decisions use must be close to it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
#![allow(unsafe_code)] // a counting global allocator

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell as ThreadCell;

use bytes::Bytes;
use mutation::{Cell, ColumnData, PartitionKey, PartitionUpdate, Row};
use storage::{MemtableEngine, TableEngine};

/// Counts the bytes held by the calling thread (tests run on threads of their own).
struct Counting;

thread_local! {
    static HELD: ThreadCell<isize> = const { ThreadCell::new(0) };
}

fn count(delta: isize) {
    // `try_with`: the thread-local may already be gone while a thread exits.
    let _ = HELD.try_with(|held| held.set(held.get() + delta));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn held() -> isize {
    HELD.with(|held| held.get())
}

/// A write as the query layer builds it: a 10-byte key, `columns` 34-byte values sliced out of
/// one request body, column names copied per cell, in `rows` rows of one partition.
fn update(n: u64, rows: u64, columns: usize) -> (PartitionKey, PartitionUpdate) {
    let body = Bytes::from(vec![b'v'; 34 * columns * rows as usize + 40]);
    let rows = (0..rows)
        .map(|r| {
            let mut row = Row::new(Bytes::copy_from_slice(&r.to_be_bytes()));
            row.columns = (0..columns)
                .map(|c| {
                    let at = 40 + 34 * (c + columns * r as usize);
                    let name = Bytes::copy_from_slice(format!("C{c}").as_bytes());
                    ColumnData::simple(name, Cell::live(1, body.slice(at..at + 34)))
                })
                .collect();
            row
        })
        .collect();
    let key = PartitionKey {
        token: n.wrapping_mul(0x9E37_79B9_7F4A_7C15) as i64,
        key: Bytes::copy_from_slice(format!("{n:010}").as_bytes()),
    };
    let update = PartitionUpdate {
        rows,
        ..Default::default()
    };
    (key, update)
}

/// Applies `partitions` writes and returns (counted bytes, really held bytes).
fn footprint(partitions: u64, rows: u64, columns: usize) -> (f64, f64) {
    let engine = MemtableEngine::new();
    let before = held();
    for n in 0..partitions {
        let (key, update) = update(n, rows, columns);
        engine
            .apply(&key, &update)
            .expect("memtable writes never fail");
    }
    let real = (held() - before) as f64;
    (engine.memory_bytes() as f64, real)
}

fn assert_close(counted: f64, real: f64, what: &str) {
    let ratio = counted / real;
    println!("{what}: counted {counted} bytes, really held {real} (ratio {ratio:.2})");
    assert!(
        (0.8..=1.25).contains(&ratio),
        "{what}: counted {counted} bytes for {real} really held (ratio {ratio:.2})"
    );
}

#[test]
fn single_row_partitions_are_counted_as_allocated() {
    let (counted, real) = footprint(20_000, 1, 5);
    assert_close(counted, real, "stress standard1 rows");
}

#[test]
fn wide_partitions_are_counted_as_allocated() {
    let (counted, real) = footprint(200, 100, 2);
    assert_close(counted, real, "100-row partitions");
}
