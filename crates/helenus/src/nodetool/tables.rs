//! `flush`, `compact`, `enable/disableautocompaction` (`[keyspace [tables...]]`) and
//! `tablestats`/`cfstats` (`[keyspace[.table]...]`, Cassandra 5.0.4's indented layout).

use std::collections::BTreeMap;

use admin::types::{
    AutocompactionRequest, GarbageCollectRequest, TableSelection, TableStats, TablesDone,
};

use super::client::Client;
use super::format::{file_size, java_double, memory};
use super::{node_error, unexpected, Failure, Output};

pub fn run(client: &Client, command: &str, args: &[String]) -> Output {
    if command == "tablestats" || command == "cfstats" {
        return tablestats(client, args);
    }
    if command == "garbagecollect" {
        let request = garbagecollect_request(args)?;
        let _: TablesDone = client
            .post("/v1/garbagecollect", &request)
            .map_err(as_usage)?;
        return Ok(String::new());
    }
    let selection = selection(args)?;
    let _: TablesDone = match command {
        "flush" => client.post("/v1/flush", &selection),
        "compact" => client.post("/v1/compact", &selection),
        _ => {
            let enabled = command == "enableautocompaction";
            client.post(
                "/v1/autocompaction",
                &AutocompactionRequest { selection, enabled },
            )
        }
    }
    .map_err(as_usage)?;
    Ok(String::new())
}

/// `[keyspace [tables...]]`.
pub(super) fn selection(args: &[String]) -> Result<TableSelection, Failure> {
    if let Some(flag) = args.iter().find(|a| a.starts_with('-')) {
        return Err(unexpected(std::slice::from_ref(flag)));
    }
    Ok(TableSelection {
        keyspace: args.first().cloned(),
        tables: args.iter().skip(1).cloned().collect(),
    })
}

/// `[(-g | --granularity) ROW|CELL] [(-j | --jobs) <jobs>] [<keyspace> <tables>...]`.
fn garbagecollect_request(args: &[String]) -> Result<GarbageCollectRequest, Failure> {
    let mut request = GarbageCollectRequest::default();
    let mut positional = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let mut value = || {
            words.next().cloned().ok_or_else(|| {
                Failure::Usage(format!("Required values for option '{word}' not provided"))
            })
        };
        match word.as_str() {
            "-g" | "--granularity" => {
                let granularity = value()?.to_ascii_uppercase();
                if granularity != "ROW" && granularity != "CELL" {
                    return Err(Failure::Usage(format!(
                        "granularity must be ROW or CELL, not {granularity}"
                    )));
                }
                request.granularity = Some(granularity);
            }
            "-j" | "--jobs" => {
                let jobs = value()?;
                let parsed = jobs.parse::<u32>().map_err(|_| {
                    Failure::Usage(format!("jobs must be a whole number, not {jobs}"))
                })?;
                request.jobs = Some(parsed);
            }
            _ => positional.push(word.clone()),
        }
    }
    request.selection = selection(&positional)?;
    Ok(request)
}

/// Unknown keyspaces and tables are argument errors, as nodetool reports them.
pub(super) fn as_usage(message: String) -> Failure {
    if message.starts_with("Keyspace [") || message.starts_with("Unknown") {
        Failure::Usage(message)
    } else {
        node_error(message)
    }
}

fn tablestats(client: &Client, args: &[String]) -> Output {
    let (flags, filters): (Vec<String>, Vec<String>) =
        args.iter().cloned().partition(|a| a.starts_with('-'));
    let ignore = flags.iter().any(|f| f == "-i");
    let human = flags.iter().any(|f| f == "-H" || f == "--human-readable");
    let unknown: Vec<String> = flags
        .into_iter()
        .filter(|f| !matches!(f.as_str(), "-i" | "-H" | "--human-readable"))
        .collect();
    if !unknown.is_empty() {
        return Err(unexpected(&unknown));
    }
    let all: Vec<TableStats> = client.get("/v1/tables").map_err(node_error)?;
    let chosen = filter(all, &filters, ignore)?;
    Ok(render(&chosen, human))
}

/// The tables `filters` (`ks` or `ks.table`) name, or all others with `-i`; unknown names fail.
fn filter(
    all: Vec<TableStats>,
    filters: &[String],
    ignore: bool,
) -> Result<Vec<TableStats>, Failure> {
    for name in filters {
        let (ks, table) = name
            .split_once('.')
            .map_or((name.as_str(), None), |(k, t)| (k, Some(t)));
        if !all.iter().any(|t| t.keyspace == ks) {
            return Err(Failure::Usage(format!("Unknown keyspace: {ks}")));
        }
        if let Some(table) = table {
            if !all.iter().any(|t| t.keyspace == ks && t.table == table) {
                return Err(Failure::Usage(format!(
                    "Unknown tables: [{table}] in keyspace: {ks}"
                )));
            }
        }
    }
    let named = |t: &TableStats| {
        filters
            .iter()
            .any(|f| *f == t.keyspace || *f == format!("{}.{}", t.keyspace, t.table))
    };
    Ok(all
        .into_iter()
        .filter(|t| filters.is_empty() || named(t) != ignore)
        .collect())
}

/// Cassandra's `TableStatsPrinter` layout: keyspaces, then their tables sorted by name.
/// `human`: sizes as `FileUtils.stringifyFileSize` prints them (`-H`).
pub fn render(tables: &[TableStats], human: bool) -> String {
    if tables.is_empty() {
        return String::new();
    }
    let mut by_keyspace: BTreeMap<&str, Vec<&TableStats>> = BTreeMap::new();
    for t in tables {
        by_keyspace.entry(&t.keyspace).or_default().push(t);
    }
    let mut out = format!(
        "Total number of tables: {}\n----------------\n",
        tables.len()
    );
    for (keyspace, mut tables) in by_keyspace {
        tables.sort_by(|a, b| a.table.cmp(&b.table));
        out.push_str(&keyspace_lines(keyspace, &tables));
        for t in tables {
            out.push_str(&table_lines(t, human));
        }
        out.push_str("----------------\n");
    }
    out
}

fn keyspace_lines(keyspace: &str, tables: &[&TableStats]) -> String {
    let reads: u64 = tables.iter().map(|t| t.local_read_count).sum();
    let writes: u64 = tables.iter().map(|t| t.local_write_count).sum();
    let read_micros: u64 = tables.iter().map(|t| t.local_read_total_micros).sum();
    let write_micros: u64 = tables.iter().map(|t| t.local_write_total_micros).sum();
    let mean = |micros: u64, count: u64| java_double(micros as f64 / 1000.0 / count as f64);
    format!(
        "Keyspace: {keyspace}\n\tRead Count: {reads}\n\tRead Latency: {} ms\n\tWrite Count: {writes}\n\
         \tWrite Latency: {} ms\n\tPending Flushes: 0\n",
        mean(read_micros, reads),
        mean(write_micros, writes)
    )
}

/// Levels Cassandra's leveled manifest reports (`LeveledGenerations.MAX_LEVEL_COUNT`).
const LEVELS: usize = 9;
/// The default `fanout_size` of LeveledCompactionStrategy.
const FANOUT: u64 = 10;

/// `SSTables in each level` (a count over the level's capacity shows `count/capacity`) and
/// `SSTable bytes in each level`.
fn level_lines(t: &TableStats, size: &dyn Fn(u64) -> String) -> Vec<(&'static str, String)> {
    let counts: Vec<String> = (0..LEVELS)
        .map(|level| {
            let count = t.sstables_per_level.get(level).copied().unwrap_or(0);
            let capacity = if level == 0 {
                4
            } else {
                FANOUT.pow(level as u32)
            };
            if count > capacity {
                format!("{count}/{capacity}")
            } else {
                count.to_string()
            }
        })
        .collect();
    let bytes: Vec<String> = (0..LEVELS)
        .map(|level| size(t.sstable_bytes_per_level.get(level).copied().unwrap_or(0)))
        .collect();
    vec![
        ("SSTables in each level", format!("[{}]", counts.join(", "))),
        (
            "SSTable bytes in each level",
            format!("[{}]", bytes.join(", ")),
        ),
    ]
}

fn filter_and_partition_lines(t: &TableStats) -> Vec<(&'static str, String)> {
    vec![
        (
            "Bloom filter false positives",
            t.bloom_filter_false_positives.to_string(),
        ),
        (
            "Bloom filter false ratio",
            format!("{:.5}", t.bloom_filter_false_ratio),
        ),
        (
            "Bloom filter space used",
            t.bloom_filter_space_used.to_string(),
        ),
        (
            "Bloom filter off heap memory used",
            t.bloom_filter_space_used.to_string(),
        ),
        (
            "Compacted partition minimum bytes",
            t.partition_bytes_min.to_string(),
        ),
        (
            "Compacted partition maximum bytes",
            t.partition_bytes_max.to_string(),
        ),
        (
            "Compacted partition mean bytes",
            t.partition_bytes_mean.to_string(),
        ),
    ]
}

/// Live cells and tombstones per slice: Java's `Double.toString` of the mean (`NaN` before the
/// first read) and the maximum; then the droppable tombstone ratio.
fn per_read_lines(t: &TableStats) -> Vec<(&'static str, String)> {
    let mean = |m: Option<f64>| java_double(m.unwrap_or(f64::NAN));
    vec![
        (
            "Average live cells per slice (last five minutes)",
            mean(t.live_cells_per_slice_mean),
        ),
        (
            "Maximum live cells per slice (last five minutes)",
            t.live_cells_per_slice_max.to_string(),
        ),
        (
            "Average tombstones per slice (last five minutes)",
            mean(t.tombstones_per_slice_mean),
        ),
        (
            "Maximum tombstones per slice (last five minutes)",
            t.tombstones_per_slice_max.to_string(),
        ),
        (
            "Droppable tombstone ratio",
            format!("{:.5}", t.droppable_tombstone_ratio),
        ),
    ]
}

fn latency(ms: Option<f64>) -> String {
    ms.map_or("NaN".to_string(), |v| format!("{v:.3}"))
}

fn table_lines(t: &TableStats, human: bool) -> String {
    let size = |bytes: u64| {
        if human {
            file_size(bytes)
        } else {
            bytes.to_string()
        }
    };
    let compression = if t.uncompressed_bytes == 0 {
        -1.0
    } else {
        t.space_used_live as f64 / t.uncompressed_bytes as f64
    };
    let ratio = if t.local_write_count == 0 {
        0.0
    } else {
        t.local_read_count as f64 / t.local_write_count as f64
    };
    let mut lines = vec![
        ("Table", t.table.clone()),
        ("SSTable count", t.sstables.to_string()),
        ("Old SSTable count", "0".into()),
        ("Max SSTable size", memory(t.max_sstable_bytes)),
    ];
    if t.leveled {
        lines.extend(level_lines(t, &size));
    }
    lines.extend([
        ("Space used (live)", size(t.space_used_live)),
        ("Space used (total)", size(t.space_used_total)),
        ("Space used by snapshots (total)", size(0)),
        ("SSTable Compression Ratio", format!("{compression:.5}")),
        (
            "Number of partitions (estimate)",
            t.partitions_estimate.to_string(),
        ),
        ("Memtable data size", size(t.memtable_bytes)),
        ("Memtable switch count", t.memtable_switch_count.to_string()),
        ("Speculative retries", "0".into()),
        ("Local read count", t.local_read_count.to_string()),
        (
            "Local read latency",
            format!("{} ms", latency(t.local_read_latency_ms)),
        ),
        ("Local write count", t.local_write_count.to_string()),
        (
            "Local write latency",
            format!("{} ms", latency(t.local_write_latency_ms)),
        ),
        ("Local read/write ratio", format!("{ratio:.5}")),
        ("Pending flushes", "0".into()),
        (
            "Percent repaired",
            java_double((t.percent_repaired * 100.0).round() / 100.0),
        ),
        ("Bytes repaired", memory(t.bytes_repaired)),
        ("Bytes unrepaired", memory(t.bytes_unrepaired)),
        ("Bytes pending repair", memory(t.bytes_pending_repair)),
    ]);
    lines.extend(filter_and_partition_lines(t));
    lines.extend(per_read_lines(t));
    let mut out: String = lines
        .iter()
        .map(|(k, v)| format!("\t\t{k}: {v}\n"))
        .collect();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(keyspace: &str, table: &str) -> TableStats {
        TableStats {
            keyspace: keyspace.into(),
            table: table.into(),
            sstables: 1,
            sstables_per_level: vec![1],
            max_sstable_bytes: 5102,
            space_used_live: 5102,
            space_used_total: 5102,
            uncompressed_bytes: 6918,
            partitions_estimate: 3,
            memtable_bytes: 0,
            memtable_switch_count: 1,
            pending_compactions: 0,
            local_read_count: 1,
            local_read_latency_ms: Some(0.149),
            local_read_total_micros: 145,
            local_range_read_count: 0,
            local_write_count: 3,
            local_write_latency_ms: Some(0.064),
            local_write_total_micros: 193,
            partition_bytes_min: 25,
            partition_bytes_max: 29,
            partition_bytes_mean: 29,
            leveled: false,
            sstable_bytes_per_level: vec![5102],
            bloom_filter_false_positives: 1,
            bloom_filter_false_ratio: 0.25,
            bloom_filter_space_used: 16,
            live_cells_per_slice_mean: Some(1.5),
            live_cells_per_slice_max: 2,
            tombstones_per_slice_mean: None,
            tombstones_per_slice_max: 0,
            droppable_tombstone_ratio: 0.0,
            percent_repaired: 200.0 / 3.0,
            bytes_repaired: 4612,
            bytes_unrepaired: 28,
            bytes_pending_repair: 2278,
            corrupt_reads: 0,
        }
    }

    #[test]
    fn tablestats_layout() {
        // matches Cassandra 5.0.4 (`refcass nodetool tablestats nt_helper`) line for line, for
        // the lines Helenus can fill
        let text = render(&[stats("nt_helper", "kv")], false);
        let expected_prefix = "Total number of tables: 1\n----------------\nKeyspace: nt_helper\n\tRead Count: 1\n\
\tRead Latency: 0.145 ms\n\tWrite Count: 3\n\tWrite Latency: 0.06433333333333334 ms\n\tPending Flushes: 0\n\
\t\tTable: kv\n\t\tSSTable count: 1\n\t\tOld SSTable count: 0\n\t\tMax SSTable size: 4.982KiB\n\
\t\tSpace used (live): 5102\n\t\tSpace used (total): 5102\n\t\tSpace used by snapshots (total): 0\n\
\t\tSSTable Compression Ratio: 0.73750\n\t\tNumber of partitions (estimate): 3\n";
        assert!(text.starts_with(expected_prefix), "{text}");
        assert!(text.contains("\t\tLocal read count: 1\n\t\tLocal read latency: 0.149 ms\n\t\tLocal write count: 3\n\t\tLocal write latency: 0.064 ms\n\t\tLocal read/write ratio: 0.33333\n\t\tPending flushes: 0\n"));
        assert!(text.contains("\t\tPending flushes: 0\n\t\tPercent repaired: 66.67\n\t\tBytes repaired: 4.504KiB\n\t\tBytes unrepaired: 28B\n\t\tBytes pending repair: 2.225KiB\n\t\tBloom filter false positives: 1\n\t\tBloom filter false ratio: 0.25000\n\t\tBloom filter space used: 16\n\t\tBloom filter off heap memory used: 16\n\t\tCompacted partition minimum bytes: 25\n"));
        assert!(text.ends_with("\t\tCompacted partition mean bytes: 29\n\t\tAverage live cells per slice (last five minutes): 1.5\n\t\tMaximum live cells per slice (last five minutes): 2\n\t\tAverage tombstones per slice (last five minutes): NaN\n\t\tMaximum tombstones per slice (last five minutes): 0\n\t\tDroppable tombstone ratio: 0.00000\n\n----------------\n"));
        assert!(!text.contains("SSTables in each level"));
    }

    #[test]
    fn leveled_tables_print_their_levels() {
        // Cassandra 5.0.4's lines for a leveled table; L0 over its 4 shows `count/4`
        let mut t = stats("ks", "lcs");
        (t.leveled, t.sstables_per_level) = (true, vec![5, 2]);
        t.sstable_bytes_per_level = vec![100, 200];
        let text = render(&[t], false);
        assert!(text.contains("\t\tMax SSTable size: 4.982KiB\n\t\tSSTables in each level: [5/4, 2, 0, 0, 0, 0, 0, 0, 0]\n\t\tSSTable bytes in each level: [100, 200, 0, 0, 0, 0, 0, 0, 0]\n\t\tSpace used (live)"), "{text}");
    }

    #[test]
    fn empty_tables_print_nan_latencies() {
        // matches Cassandra 5.0.4 (`refcass nodetool tablestats system_auth`)
        let mut t = stats("system_auth", "cidr_groups");
        (
            t.local_read_count,
            t.local_write_count,
            t.uncompressed_bytes,
        ) = (0, 0, 0);
        (t.local_read_latency_ms, t.local_write_latency_ms) = (None, None);
        (t.local_read_total_micros, t.local_write_total_micros) = (0, 0);
        let text = render(&[t], false);
        assert!(text.contains("\tRead Count: 0\n\tRead Latency: NaN ms\n"));
        assert!(text.contains("\t\tSSTable Compression Ratio: -1.00000\n"));
        assert!(text.contains("\t\tLocal read latency: NaN ms\n"));
        assert!(text.contains("\t\tLocal read/write ratio: 0.00000\n"));
    }

    #[test]
    fn human_readable_sizes() {
        let text = render(&[stats("nt_helper", "kv")], true);
        assert!(text.contains("\t\tSpace used (live): 4.98 KiB\n\t\tSpace used (total): 4.98 KiB\n\t\tSpace used by snapshots (total): 0 bytes\n"));
    }

    #[test]
    fn filters_name_keyspaces_and_tables() {
        let all = vec![stats("a", "t1"), stats("a", "t2"), stats("b", "t1")];
        let only = filter(all.clone(), &["a.t2".into()], false).unwrap();
        assert_eq!(only.len(), 1);
        assert_eq!(filter(all.clone(), &["a".into()], true).unwrap().len(), 1);
        assert_eq!(
            filter(all.clone(), &["zz".into()], false).unwrap_err(),
            Failure::Usage("Unknown keyspace: zz".into())
        );
        assert_eq!(
            filter(all, &["a.nosuch".into()], false).unwrap_err(),
            Failure::Usage("Unknown tables: [nosuch] in keyspace: a".into())
        );
        assert_eq!(render(&[], false), "");
    }

    #[test]
    fn garbagecollect_options() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let r = garbagecollect_request(&words("-g cell -j 4 ks t1 t2")).unwrap();
        assert_eq!(r.granularity.as_deref(), Some("CELL"));
        assert_eq!(r.jobs, Some(4));
        assert_eq!(
            (r.selection.keyspace.as_deref(), r.selection.tables.len()),
            (Some("ks"), 2)
        );
        let plain = garbagecollect_request(&[]).unwrap();
        assert_eq!((plain.granularity, plain.jobs), (None, None));
        assert!(garbagecollect_request(&words("-g partition")).is_err());
        assert!(garbagecollect_request(&words("-j")).is_err());
        assert!(garbagecollect_request(&words("-x ks")).is_err());
    }

    #[test]
    fn selections() {
        let s = selection(&["ks".into(), "t1".into(), "t2".into()]).unwrap();
        assert_eq!((s.keyspace.as_deref(), s.tables.len()), (Some("ks"), 2));
        assert!(selection(&["-x".into()]).is_err());
    }
}
