//! The `compression` option: compressor class names (short names expanded), per-compressor
//! sub-options, `chunk_length_in_kb` and `{'enabled': 'false'}`.
use crate::error::SchemaError;
use std::collections::BTreeMap;

const PACKAGE: &str = "org.apache.cassandra.io.compress.";
const GENERIC: &[&str] = &[
    "chunk_length_in_kb",
    "min_compress_ratio",
    "max_compressed_length",
];

/// The compressors Cassandra 5.0 ships and the options specific to each.
const COMPRESSORS: &[(&str, &[&str])] = &[
    (
        "LZ4Compressor",
        &["lz4_compressor_type", "lz4_high_compressor_level"],
    ),
    ("ZstdCompressor", &["compression_level"]),
    ("SnappyCompressor", &[]),
    ("DeflateCompressor", &[]),
    ("NoopCompressor", &[]),
];

/// The default compression map: LZ4 with 16 KiB chunks.
pub(crate) fn default_compression() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("chunk_length_in_kb".to_string(), "16".to_string()),
        ("class".to_string(), format!("{PACKAGE}LZ4Compressor")),
    ])
}

fn disabled() -> BTreeMap<String, String> {
    BTreeMap::from([("enabled".to_string(), "false".to_string())])
}

/// Validates a `compression = {...}` map and returns it as Cassandra stores it.
pub(crate) fn parse_compression(
    entries: &[(String, String)],
) -> Result<BTreeMap<String, String>, SchemaError> {
    let mut map: BTreeMap<String, String> = entries.iter().cloned().collect();
    if map.is_empty() {
        return Ok(disabled());
    }
    if let Some(enabled) = map.remove("enabled") {
        if !enabled.eq_ignore_ascii_case("true") {
            return disabled_only(&map);
        }
    }
    let class = take_class(&mut map)?;
    let full = if class.contains('.') {
        class
    } else {
        format!("{PACKAGE}{class}")
    };
    let extra = COMPRESSORS
        .iter()
        .find(|(name, _)| full.strip_prefix(PACKAGE) == Some(name))
        .map(|(_, extra)| *extra)
        .ok_or_else(|| {
            SchemaError::Config(format!("Could not create Compression for type {full}"))
        })?;
    check_known(&map, extra)?;
    check_chunk_length(&mut map)?;
    map.insert("class".into(), full);
    Ok(map)
}

fn disabled_only(rest: &BTreeMap<String, String>) -> Result<BTreeMap<String, String>, SchemaError> {
    if rest.is_empty() {
        return Ok(disabled());
    }
    Err(SchemaError::Config(
        "If the 'enabled' option is set to false no other options must be specified".into(),
    ))
}

/// Removes and returns the class, also accepted under its pre-3.0 name `sstable_compression`.
fn take_class(map: &mut BTreeMap<String, String>) -> Result<String, SchemaError> {
    let class = map
        .remove("class")
        .or_else(|| map.remove("sstable_compression"));
    class.filter(|c| !c.is_empty()).ok_or_else(|| {
        SchemaError::Config("Missing sub-option 'class' for the 'compression' option.".into())
    })
}

fn check_known(map: &BTreeMap<String, String>, extra: &[&str]) -> Result<(), SchemaError> {
    let unknown: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|k| !GENERIC.contains(k) && !extra.contains(k))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(SchemaError::Config(format!(
        "Unknown compression options {}",
        unknown.join(", ")
    )))
}

fn check_chunk_length(map: &mut BTreeMap<String, String>) -> Result<(), SchemaError> {
    let text = map
        .entry("chunk_length_in_kb".into())
        .or_insert_with(|| "16".into());
    let kb: i32 = text
        .parse()
        .map_err(|_| SchemaError::Config("Invalid value for chunk_length_in_kb".into()))?;
    if kb <= 0 || kb.count_ones() != 1 {
        return Err(SchemaError::Config(
            "chunk_length_in_kb must be a power of 2".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(entries: &[(&str, &str)]) -> Result<BTreeMap<String, String>, SchemaError> {
        parse_compression(&crate::options::owned_pairs(entries))
    }

    fn message(entries: &[(&str, &str)]) -> String {
        parse(entries)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn short_names_and_default_chunk() -> Result<(), SchemaError> {
        assert_eq!(parse(&[("class", "LZ4Compressor")])?, default_compression());
        let zstd = parse(&[("class", "ZstdCompressor"), ("compression_level", "5")])?;
        assert_eq!(
            zstd.get("class").map(String::as_str),
            Some("org.apache.cassandra.io.compress.ZstdCompressor")
        );
        assert_eq!(zstd.get("compression_level").map(String::as_str), Some("5"));
        let snappy = parse(&[
            ("class", "org.apache.cassandra.io.compress.SnappyCompressor"),
            ("enabled", "true"),
        ])?;
        assert_eq!(snappy.len(), 2);
        Ok(())
    }

    #[test]
    fn disabling() -> Result<(), SchemaError> {
        assert_eq!(parse(&[("enabled", "false")])?, disabled());
        assert_eq!(parse(&[])?, disabled());
        assert_eq!(
            message(&[("enabled", "false"), ("class", "LZ4Compressor")]),
            "If the 'enabled' option is set to false no other options must be specified"
        );
        Ok(())
    }

    #[test]
    fn errors_match_cassandra() {
        assert_eq!(
            message(&[("enabled", "true")]),
            "Missing sub-option 'class' for the 'compression' option."
        );
        assert_eq!(
            message(&[("class", "Foo")]),
            "Could not create Compression for type org.apache.cassandra.io.compress.Foo"
        );
        assert_eq!(
            message(&[("class", "SnappyCompressor"), ("chunk_length_kb", "32")]),
            "Unknown compression options chunk_length_kb"
        );
        assert_eq!(
            message(&[("class", "DeflateCompressor"), ("chunk_length_in_kb", "3")]),
            "chunk_length_in_kb must be a power of 2"
        );
        assert_eq!(
            message(&[("class", "DeflateCompressor"), ("chunk_length_in_kb", "x")]),
            "Invalid value for chunk_length_in_kb"
        );
    }
}
