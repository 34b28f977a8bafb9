//! Commit-log replay on corrupted copies of real segments: mutations written through a real
//! `Storage` (16 KiB segments, so several), the segments damaged by a corruption program
//! ([`corrupt`](super::corrupt)), optionally with the record checksums recomputed so the
//! damage reaches the record decoder, then replayed into a fresh `Storage` with and without
//! `commit_failure_policy: ignore`-style skipping. Replay must succeed or fail cleanly; when
//! it succeeds, every acknowledged write whose record lies wholly before the first damaged
//! byte of its segment, and every write in an undamaged segment, must be readable.

use std::fs;
use std::sync::OnceLock;

use mutation::{ColumnValue, ReadFilter};
use storage::commitlog::{list_segments, read_segment};

use super::reseal::{reseal, Framing};
use super::{corrupt, dataset};
use crate::driver::Target;
use crate::rng::Rng;

pub const TARGET: Target = Target {
    name: "commitlog",
    seeds,
    generate,
    mutate: None,
    run,
    short_iterations: 40,
};

const SEGMENT_SIZE: u64 = 16 * 1024;
const WRITES: usize = 60;
/// A record frame: `length u32 | CRC32(length) | payload | CRC32(payload)`, then zeros.
const RECORDS: Framing = Framing {
    header_len: 8,
    crc_at: 4,
    zero_ends: true,
};

/// The segments as written and where each acknowledged write's record lies.
struct Written {
    segments: Vec<(String, Vec<u8>)>,
    /// (segment index, end of the record in it, the write's partition number).
    records: Vec<(usize, usize, usize)>,
}

fn written() -> &'static Written {
    static WRITTEN: OnceLock<Written> = OnceLock::new();
    WRITTEN.get_or_init(write_segments)
}

fn write_segments() -> Written {
    let dir = tempfile::tempdir().expect("a temporary directory for the fixture");
    let storage =
        dataset::open(dir.path(), |c| c.segment_size = SEGMENT_SIZE, &[]).expect("storage opens");
    dataset::write(
        &storage,
        (0..WRITES).map(|n| dataset::mutation(n, 1 + n % 3)),
    )
    .expect("writes");
    drop(storage);
    let files = list_segments(&dir.path().join("commitlog")).expect("segments");
    let mut segments = Vec::new();
    let mut records = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let contents = read_segment(&file.path, false, false).expect("intact segment");
        for record in &contents.records {
            if let Some(n) = (0..WRITES).find(|n| contains(&record.payload, &dataset::key(*n).key))
            {
                records.push((index, record.end() as usize, n));
            }
        }
        let name = file
            .path
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        segments.push((name, fs::read(&file.path).expect("a segment")));
    }
    assert_eq!(records.len(), WRITES, "one record per write");
    Written { segments, records }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn seeds() -> Vec<Vec<u8>> {
    let mut rng = Rng::new(31);
    (0..6).map(|_| generate(&mut rng)).collect()
}

/// Input: flags (bit 0: skip corruption, bit 1: recompute checksums), then a corruption
/// program over the segments.
fn generate(rng: &mut Rng) -> Vec<u8> {
    let w = written();
    let used = w.records.last().map_or(0, |r| r.1);
    let mut out = vec![rng.below(4) as u8];
    out.extend(corrupt::program(rng, w.segments.len(), used.max(64)));
    out
}

fn run(input: &[u8]) -> Result<(), String> {
    let Some((flags, program)) = input.split_first() else {
        return Ok(());
    };
    let w = written();
    let mut files: Vec<Vec<u8>> = w.segments.iter().map(|(_, b)| b.clone()).collect();
    let donors: Vec<Vec<&[u8]>> = (0..files.len())
        .map(|_| w.segments.iter().map(|(_, b)| &b[..]).collect())
        .collect();
    let damage = corrupt::apply(program, &mut files, &donors);
    if flags & 2 != 0 {
        files.iter_mut().for_each(|f| reseal(f, &RECORDS));
    }
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    let log = dir.path().join("commitlog");
    fs::create_dir_all(&log).map_err(|e| e.to_string())?;
    for ((name, _), bytes) in w.segments.iter().zip(&files) {
        fs::write(log.join(name), bytes).map_err(|e| format!("cannot write {name}: {e}"))?;
    }
    let configure = |c: &mut storage::StorageConfig| {
        c.segment_size = SEGMENT_SIZE;
        c.ignore_corruption = flags & 1 != 0;
    };
    let Ok(storage) = dataset::open(dir.path(), configure, &[]) else {
        return Ok(());
    };
    if storage.replay().is_err() {
        return Ok(());
    }
    for &(segment, end, n) in &w.records {
        let before_damage = damage[segment].is_none_or(|at| end <= at);
        if before_damage && !readable(&storage, n)? {
            return Err(format!(
                "write {n} (segment {segment}, record ending at {end}) was lost; damage: {damage:?}"
            ));
        }
    }
    Ok(())
}

/// Whether partition `n` reads back with the value it was written with.
fn readable(storage: &storage::Storage, n: usize) -> Result<bool, String> {
    let partition = storage
        .read(dataset::TABLE, &dataset::key(n), &ReadFilter::all(), 0)
        .map_err(|e| format!("reading write {n} after replay: {e}"))?;
    let want = Some(dataset::value(n));
    let first = dataset::clustering(0);
    Ok(partition.is_some_and(|p| {
        p.rows.iter().any(|row| {
            row.clustering == first
                && row.column(b"v").is_some_and(|c| {
                    matches!(&c.value, ColumnValue::Simple(cell) if cell.value.as_ref() == want.as_ref())
                })
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writes_span_several_segments_and_replay_whole() {
        let w = written();
        let used: std::collections::BTreeSet<usize> = w.records.iter().map(|r| r.0).collect();
        assert!(used.len() >= 2, "records in {} segment(s)", used.len());
        assert_eq!(run(&[0]), Ok(()));
        let mut resigned = w.segments[0].1.clone();
        reseal(&mut resigned, &RECORDS);
        assert_eq!(
            resigned, w.segments[0].1,
            "re-signing an intact segment changes nothing"
        );
    }
}
