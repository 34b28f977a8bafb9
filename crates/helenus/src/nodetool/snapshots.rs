//! `snapshot`, `listsnapshots`, `clearsnapshot` and `tablehistograms`, in Cassandra 5.0.4's
//! layouts.

use std::time::{SystemTime, UNIX_EPOCH};

use admin::types::{
    ClearSnapshotRequest, HistogramPercentiles, SnapshotEntry, SnapshotRequest, SnapshotsCleared,
    TableHistograms, TablesDone,
};

use super::client::Client;
use super::format::{file_size, TableBuilder};
use super::{no_args, node_error, unexpected, Failure, Output};

pub fn run(client: &Client, command: &str, args: &[String]) -> Output {
    match command {
        "snapshot" => snapshot(client, args),
        "listsnapshots" => {
            no_args(args)?;
            let all: Vec<SnapshotEntry> = client.get("/v1/snapshots").map_err(node_error)?;
            Ok(render_list(&all))
        }
        "clearsnapshot" => clearsnapshot(client, args),
        _ => tablehistograms(client, args),
    }
}

/// `[-t tag] [keyspace...]`; options `-sf`/`--skip-flush` and `-kt` are not supported.
fn snapshot(client: &Client, args: &[String]) -> Output {
    let mut tag = None;
    let mut keyspaces = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-t" | "--tag" => {
                tag = Some(words.next().cloned().ok_or_else(|| {
                    Failure::Usage(format!("Required values for option '{word}' not provided"))
                })?)
            }
            w if w.starts_with('-') => return Err(unexpected(std::slice::from_ref(word))),
            _ => keyspaces.push(word.clone()),
        }
    }
    let tag = tag.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
            .to_string()
    });
    let request = SnapshotRequest {
        tag: tag.clone(),
        keyspaces: keyspaces.clone(),
    };
    let _: TablesDone = client.post("/v1/snapshots", &request).map_err(node_error)?;
    Ok(snapshot_text(&keyspaces, &tag))
}

fn keyspace_list(keyspaces: &[String]) -> String {
    if keyspaces.is_empty() {
        "all keyspaces".to_string()
    } else {
        keyspaces.join(", ")
    }
}

/// What `nodetool snapshot` prints once the snapshot is taken.
pub fn snapshot_text(keyspaces: &[String], tag: &str) -> String {
    format!(
        "Requested creating snapshot(s) for [{}] with snapshot name [{tag}] and options \
         {{skipFlush=false}}\nSnapshot directory: {tag}\n",
        keyspace_list(keyspaces)
    )
}

/// `-t tag | --all` and `[keyspace...]`.
fn clearsnapshot(client: &Client, args: &[String]) -> Output {
    let mut tag = None;
    let mut all = false;
    let mut keyspaces = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-t" => {
                tag = Some(words.next().cloned().ok_or_else(|| {
                    Failure::Usage("Required values for option '-t' not provided".into())
                })?)
            }
            "--all" => all = true,
            w if w.starts_with('-') => return Err(unexpected(std::slice::from_ref(word))),
            _ => keyspaces.push(word.clone()),
        }
    }
    match (&tag, all) {
        (None, false) => return Err(Failure::Usage("Specify snapshot name or --all".into())),
        (Some(_), true) => {
            return Err(Failure::Usage(
                "Specify only one of snapshot name or --all".into(),
            ))
        }
        _ => {}
    }
    let request = ClearSnapshotRequest {
        tag: tag.clone(),
        keyspaces: keyspaces.clone(),
    };
    let _: SnapshotsCleared = client
        .post("/v1/snapshots/clear", &request)
        .map_err(node_error)?;
    Ok(clear_text(&keyspaces, tag.as_deref()))
}

/// What `nodetool clearsnapshot` prints.
pub fn clear_text(keyspaces: &[String], tag: Option<&str>) -> String {
    let which = match tag {
        Some(tag) => format!("snapshot name [{tag}]"),
        None => "[all snapshots]".to_string(),
    };
    format!(
        "Requested clearing snapshot(s) for [{}] with {which}\n",
        keyspace_list(keyspaces)
    )
}

/// Cassandra's `ListSnapshots` layout.
pub fn render_list(snapshots: &[SnapshotEntry]) -> String {
    let mut out = String::from("Snapshot Details: \n");
    if snapshots.is_empty() {
        out.push_str("There are no snapshots\n");
        return out;
    }
    let mut table = TableBuilder::new(" ");
    table.add([
        "Snapshot name",
        "Keyspace name",
        "Column family name",
        "True size",
        "Size on disk",
        "Creation time",
        "Expiration time",
    ]);
    for s in snapshots {
        table.add([
            s.tag.clone(),
            s.keyspace.clone(),
            s.table.clone(),
            file_size(s.true_size),
            file_size(s.size_on_disk),
            s.created_at.clone().unwrap_or_default(),
            s.expires_at.clone().unwrap_or_default(),
        ]);
    }
    out.push_str(&table.render());
    let total: u64 = snapshots.iter().map(|s| s.true_size).sum();
    out.push_str(&format!(
        "\nTotal TrueDiskSpaceUsed: {}\n\n",
        file_size(total)
    ));
    out
}

/// `<keyspace> <table>` or `<keyspace.table>`.
fn tablehistograms(client: &Client, args: &[String]) -> Output {
    let (keyspace, table) =
        match args {
            [ks, t] => (ks.as_str(), t.as_str()),
            [name] if name.contains('.') => name.split_once('.').unwrap_or_default(),
            _ => return Err(Failure::Usage(
                "tablehistograms requires <keyspace> <table> or <keyspace.table> format argument."
                    .into(),
            )),
        };
    let histograms: TableHistograms = client
        .get(&format!("/v1/tables/{keyspace}/{table}/histograms"))
        .map_err(|m| {
            if m.starts_with("Keyspace [") || m.starts_with("Unknown") {
                Failure::Usage(m)
            } else {
                node_error(m)
            }
        })?;
    Ok(render_histograms(&histograms))
}

/// Cassandra's `TableHistograms` layout: `%-10s%18s%18s%18s%18s%18s` rows.
pub fn render_histograms(h: &TableHistograms) -> String {
    let mut out = String::new();
    if h.sstables == 0 {
        out.push_str(
            "No SSTables exists, unable to calculate 'Partition Size' and 'Cell Count' percentiles\n",
        );
    }
    out.push_str(&format!("{}/{} histograms\n", h.keyspace, h.table));
    let row = |cells: [&str; 6]| {
        format!(
            "{:<10}{:>18}{:>18}{:>18}{:>18}{:>18}\n",
            cells[0], cells[1], cells[2], cells[3], cells[4], cells[5]
        )
    };
    out.push_str(&row([
        "Percentile",
        "Read Latency",
        "Write Latency",
        "SSTables",
        "Partition Size",
        "Cell Count",
    ]));
    out.push_str(&row(["", "(micros)", "(micros)", "", "(bytes)", ""]));
    let pick =
        |p: &HistogramPercentiles, i: usize| [p.p50, p.p75, p.p95, p.p98, p.p99, p.min, p.max][i];
    let fixed = |p: &HistogramPercentiles, i: usize| format!("{:.2}", pick(p, i));
    let whole = |p: &Option<HistogramPercentiles>, i: usize| {
        p.as_ref().map_or("NaN".to_string(), |p| {
            format!("{}", pick(p, i).round() as i64)
        })
    };
    for (i, label) in ["50%", "75%", "95%", "98%", "99%", "Min", "Max"]
        .iter()
        .enumerate()
    {
        out.push_str(&row([
            label,
            &fixed(&h.read_latency_micros, i),
            &fixed(&h.write_latency_micros, i),
            &fixed(&h.sstables_per_read, i),
            &whole(&h.partition_size_bytes, i),
            &whole(&h.cell_count, i),
        ]));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn percentiles(values: [f64; 7]) -> HistogramPercentiles {
        let [p50, p75, p95, p98, p99, min, max] = values;
        HistogramPercentiles {
            p50,
            p75,
            p95,
            p98,
            p99,
            min,
            max,
        }
    }

    #[test]
    fn tablehistograms_without_sstables() {
        // matches Cassandra 5.0.4 (`refcass nodetool tablehistograms hx t` on an empty table)
        let h = TableHistograms {
            keyspace: "hx".into(),
            table: "t".into(),
            sstables: 0,
            read_latency_micros: HistogramPercentiles::default(),
            write_latency_micros: HistogramPercentiles::default(),
            sstables_per_read: HistogramPercentiles::default(),
            partition_size_bytes: None,
            cell_count: None,
        };
        let expected =
            "No SSTables exists, unable to calculate 'Partition Size' and 'Cell Count' percentiles
hx/t histograms
Percentile      Read Latency     Write Latency          SSTables    Partition Size        Cell Count
                    (micros)          (micros)                             (bytes)                  
50%                     0.00              0.00              0.00               NaN               NaN
75%                     0.00              0.00              0.00               NaN               NaN
95%                     0.00              0.00              0.00               NaN               NaN
98%                     0.00              0.00              0.00               NaN               NaN
99%                     0.00              0.00              0.00               NaN               NaN
Min                     0.00              0.00              0.00               NaN               NaN
Max                     0.00              0.00              0.00               NaN               NaN

";
        assert_eq!(render_histograms(&h), expected);
    }

    #[test]
    fn tablehistograms_with_data() {
        // matches Cassandra 5.0.4 (`refcass nodetool tablehistograms hx t` after a flush and
        // a read)
        let h = TableHistograms {
            keyspace: "hx".into(),
            table: "t".into(),
            sstables: 1,
            read_latency_micros: percentiles([446.0, 446.0, 446.0, 446.0, 446.0, 373.0, 446.0]),
            write_latency_micros: percentiles([8.0, 310.0, 310.0, 310.0, 310.0, 8.0, 310.0]),
            sstables_per_read: percentiles([1.0; 7]),
            partition_size_bytes: Some(percentiles([29.0, 29.0, 29.0, 29.0, 29.0, 25.0, 29.0])),
            cell_count: Some(percentiles([1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0])),
        };
        let expected = "hx/t histograms
Percentile      Read Latency     Write Latency          SSTables    Partition Size        Cell Count
                    (micros)          (micros)                             (bytes)                  
50%                   446.00              8.00              1.00                29                 1
75%                   446.00            310.00              1.00                29                 1
95%                   446.00            310.00              1.00                29                 1
98%                   446.00            310.00              1.00                29                 1
99%                   446.00            310.00              1.00                29                 1
Min                   373.00              8.00              1.00                25                 0
Max                   446.00            310.00              1.00                29                 1

";
        assert_eq!(render_histograms(&h), expected);
    }

    #[test]
    fn snapshot_and_clear_messages() {
        // matches Cassandra 5.0.4 (`refcass nodetool snapshot -t hxtag hx`, `clearsnapshot`)
        assert_eq!(
            snapshot_text(&["hx".into()], "hxtag"),
            "Requested creating snapshot(s) for [hx] with snapshot name [hxtag] and options {skipFlush=false}\nSnapshot directory: hxtag\n"
        );
        assert_eq!(
            clear_text(&[], Some("hxtag")),
            "Requested clearing snapshot(s) for [all keyspaces] with snapshot name [hxtag]\n"
        );
        assert_eq!(
            clear_text(&["hx".into()], None),
            "Requested clearing snapshot(s) for [hx] with [all snapshots]\n"
        );
    }

    #[test]
    fn listsnapshots_layout() {
        // matches Cassandra 5.0.4 (`refcass nodetool listsnapshots`)
        let entry = |tag: &str, ks: &str, table: &str, size: u64, created: &str| SnapshotEntry {
            tag: tag.into(),
            keyspace: ks.into(),
            table: table.into(),
            true_size: size,
            size_on_disk: size,
            created_at: Some(created.into()),
            expires_at: None,
        };
        let text = render_list(&[
            entry(
                "dropped-1795355192019-o",
                "helper_schema_ks",
                "o",
                994,
                "2026-11-22T13:46:32.019Z",
            ),
            entry(
                "dropped-1795356804905-n",
                "scratch",
                "n",
                11500,
                "2026-11-22T14:13:24.905Z",
            ),
        ]);
        let expected = "Snapshot Details: 
Snapshot name           Keyspace name    Column family name True size Size on disk Creation time            Expiration time
dropped-1795355192019-o helper_schema_ks o                  994 bytes 994 bytes    2026-11-22T13:46:32.019Z                
dropped-1795356804905-n scratch          n                  11.23 KiB 11.23 KiB    2026-11-22T14:13:24.905Z                
";
        assert!(text.starts_with(expected), "{text}");
        assert!(
            text.ends_with("\nTotal TrueDiskSpaceUsed: 12.2 KiB\n\n"),
            "{text}"
        );
        assert_eq!(
            render_list(&[]),
            "Snapshot Details: \nThere are no snapshots\n"
        );
    }

    #[test]
    fn clearsnapshot_needs_a_tag_or_all() {
        let client = Client::new("127.0.0.1", 1, None);
        assert_eq!(
            clearsnapshot(&client, &[]).unwrap_err(),
            Failure::Usage("Specify snapshot name or --all".into())
        );
        assert_eq!(
            clearsnapshot(&client, &["-t".into(), "x".into(), "--all".into()]).unwrap_err(),
            Failure::Usage("Specify only one of snapshot name or --all".into())
        );
        assert!(tablehistograms(&client, &["nodot".into()]).is_err());
    }
}
