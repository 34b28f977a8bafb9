//! SSTable readers on corrupted copies of real SSTables: three tables (LZ4 in 1 KiB chunks,
//! uncompressed, zstd) written by a real flush, then every component of a copy damaged by a
//! corruption program ([`corrupt`](super::corrupt)). Opening and every read (each partition,
//! single rows of a wide partition with a row index, absent keys, the partition iterator,
//! the key scan) must give the data the intact SSTable gives, or a clean error: never a
//! panic, a hang, other data, or data missing without an error.

use std::fs;
use std::sync::OnceLock;

use mutation::{KeyRange, PartitionKey, ReadFilter};
use storage::sstable::{Component, Descriptor, Sstable};

use super::{corrupt, dataset};
use crate::driver::Target;
use crate::rng::Rng;

pub const TARGET: Target = Target {
    name: "sstable",
    seeds,
    generate,
    mutate: None,
    run,
    short_iterations: 120,
};

const PARTITIONS: usize = 30;
/// Partition 7 is wide enough for a row index (64 KiB blocks).
const WIDE: usize = 7;
const WIDE_ROWS: usize = 1_200;

/// One SSTable's components and what the intact copy reads.
struct Intact {
    generation: u64,
    files: Vec<(String, Vec<u8>)>,
    reads: Observed,
}

/// Everything read from an SSTable, each answer as debug text (`Err` for an error).
#[derive(Debug, Default, PartialEq)]
struct Observed {
    open: bool,
    reads: Vec<Result<Option<String>, ()>>,
    partitions: Vec<Result<String, ()>>,
    keys: Vec<Result<String, ()>>,
}

fn intact() -> &'static [Intact] {
    static INTACT: OnceLock<Vec<Intact>> = OnceLock::new();
    INTACT.get_or_init(|| {
        let settings: [&[(&str, &str)]; 3] = [
            &[("class", "LZ4Compressor"), ("chunk_length_in_kb", "1")],
            &[("enabled", "false")],
            &[("class", "ZstdCompressor"), ("chunk_length_in_kb", "4")],
        ];
        settings.iter().map(|s| write_sstable(s)).collect()
    })
}

/// Flushes the data set into one SSTable and keeps its files in memory.
fn write_sstable(compression: &[(&str, &str)]) -> Intact {
    let dir = tempfile::tempdir().expect("a temporary directory for the fixture");
    let storage = dataset::open(dir.path(), |_| {}, compression).expect("storage opens");
    let rows = |n| if n == WIDE { WIDE_ROWS } else { 1 + n % 4 };
    dataset::write(
        &storage,
        (0..PARTITIONS).map(|n| dataset::mutation(n, rows(n))),
    )
    .expect("writes");
    storage.flush(dataset::TABLE).expect("flush");
    drop(storage);
    let toc = dataset::find(dir.path(), "-TOC.txt");
    let table_dir = toc[0].parent().expect("a table directory");
    let desc = storage::sstable::list(table_dir).expect("list").remove(0);
    let files = Component::ALL
        .iter()
        .map(|c| {
            let path = desc.path(*c);
            let name = path
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            (name, fs::read(&path).expect("a component"))
        })
        .collect();
    let reads = observe(&desc);
    assert!(
        reads.reads.iter().all(Result::is_ok),
        "the intact SSTable reads"
    );
    Intact {
        generation: desc.generation,
        files,
        reads,
    }
}

fn observe(desc: &Descriptor) -> Observed {
    let Ok(sstable) = Sstable::open(desc) else {
        return Observed::default();
    };
    let show =
        |r: storage::Result<Option<_>>| r.map(|d| d.map(|d| format!("{d:?}"))).map_err(|_| ());
    let mut reads: Vec<_> = (0..PARTITIONS + 3)
        .map(|n| show(sstable.read(&key_or_absent(n), &ReadFilter::all())))
        .collect();
    for i in [0, WIDE_ROWS / 2, WIDE_ROWS - 1, WIDE_ROWS + 5] {
        let filter = ReadFilter::row(dataset::clustering(i));
        reads.push(show(sstable.read(&dataset::key(WIDE), &filter)));
    }
    let partitions = sstable
        .iter()
        .take(PARTITIONS + 1)
        .map(|p| p.map(|p| format!("{p:?}")).map_err(|_| ()))
        .collect();
    let keys = sstable
        .scan_keys(&KeyRange::all())
        .take(PARTITIONS + 1)
        .map(|k| k.map(|k| format!("{k:?}")).map_err(|_| ()))
        .collect();
    Observed {
        open: true,
        reads,
        partitions,
        keys,
    }
}

/// The keys written, then keys between and around them that were never written.
fn key_or_absent(n: usize) -> PartitionKey {
    match n.checked_sub(PARTITIONS) {
        None => dataset::key(n),
        Some(i) => PartitionKey {
            token: [-1_000_000, 500, 1_000_000][i % 3],
            key: bytes::Bytes::from(format!("absent-{i}")),
        },
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut rng = Rng::new(29);
    (0..6).map(|_| generate(&mut rng)).collect()
}

/// Input: which SSTable, then a corruption program over its components.
fn generate(rng: &mut Rng) -> Vec<u8> {
    let which = rng.below(3);
    let size = intact()[which]
        .files
        .iter()
        .map(|(_, b)| b.len())
        .max()
        .unwrap_or(0);
    let mut out = vec![which as u8];
    out.extend(corrupt::program(rng, Component::ALL.len(), size));
    out
}

fn run(input: &[u8]) -> Result<(), String> {
    let Some((which, program)) = input.split_first() else {
        return Ok(());
    };
    let sets = intact();
    let set = &sets[usize::from(*which) % sets.len()];
    let mut files: Vec<Vec<u8>> = set.files.iter().map(|(_, b)| b.clone()).collect();
    let donors: Vec<Vec<&[u8]>> = (0..files.len())
        .map(|c| sets.iter().map(|s| &s.files[c].1[..]).collect())
        .collect();
    corrupt::apply(program, &mut files, &donors);
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    for ((name, _), bytes) in set.files.iter().zip(&files) {
        fs::write(dir.path().join(name), bytes).map_err(|e| format!("cannot write {name}: {e}"))?;
    }
    compare(
        &set.reads,
        &observe(&Descriptor::new(dir.path(), set.generation)),
    )
}

/// Each answer of the damaged copy is the intact copy's or an error; a sequence may end in
/// an error but not stop early without one.
fn compare(intact: &Observed, damaged: &Observed) -> Result<(), String> {
    if !damaged.open {
        return Ok(());
    }
    for (i, (want, got)) in intact.reads.iter().zip(&damaged.reads).enumerate() {
        if got.is_ok() && got != want {
            return Err(format!(
                "read {i} of a damaged SSTable answered {got:?}, intact: {want:?}"
            ));
        }
    }
    prefix(
        "partition iterator",
        &intact.partitions,
        &damaged.partitions,
    )?;
    prefix("key scan", &intact.keys, &damaged.keys)
}

fn prefix(
    what: &str,
    intact: &[Result<String, ()>],
    damaged: &[Result<String, ()>],
) -> Result<(), String> {
    for (i, got) in damaged.iter().enumerate() {
        match (got, intact.get(i)) {
            (Err(()), _) => return Ok(()),
            (Ok(got), Some(Ok(want))) if got == want => {}
            (got, want) => {
                return Err(format!(
                    "{what} item {i} of a damaged SSTable: {got:?}, intact: {want:?}"
                ))
            }
        }
    }
    match damaged.len() == intact.len() {
        true => Ok(()),
        false => Err(format!(
            "{what} of a damaged SSTable ended after {} items without an error, intact has {}",
            damaged.len(),
            intact.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_intact_sstables_have_a_row_index_and_read_everything() {
        for set in intact() {
            assert_eq!(set.reads.partitions.len(), PARTITIONS);
            assert_eq!(set.reads.keys.len(), PARTITIONS);
            let absent = &set.reads.reads[PARTITIONS..PARTITIONS + 3];
            assert!(absent.iter().all(|r| *r == Ok(None)));
            let index = &set
                .files
                .iter()
                .find(|(n, _)| n.ends_with("Index.db"))
                .expect("index")
                .1;
            assert!(index.len() > 100, "an Index with a row index");
        }
        assert_eq!(run(&[0]), Ok(()), "an empty program damages nothing");
    }
}
