//! The CQL cassandra-stress's predefined commands run: keyspace and table creation
//! (`standard1`, `counter1` with the `-schema` options) and the per-operation statements.

use crate::settings::{Columns, Schema};

pub fn create_keyspace(s: &Schema) -> String {
    let options = if s.replication.is_empty() {
        ", 'replication_factor': '1'".to_string()
    } else {
        s.replication
            .iter()
            .map(|(k, v)| format!(", '{k}' : '{v}'"))
            .collect()
    };
    format!(
        "CREATE KEYSPACE IF NOT EXISTS \"{}\" WITH replication = {{'class': '{}'{options}}} AND durable_writes = true",
        s.keyspace, s.strategy
    )
}

fn table_options(s: &Schema) -> String {
    let mut out = String::from(" WITH compression = {");
    if let Some(c) = &s.compression {
        out.push_str(&format!("'class' : '{c}'"));
    }
    out.push('}');
    if let Some(strategy) = &s.compaction {
        out.push_str(&format!(" AND compaction = {{ 'class' : '{strategy}'"));
        for (k, v) in &s.compaction_options {
            out.push_str(&format!(", '{k}' : '{v}'"));
        }
        out.push('}');
    }
    out
}

fn create_table(s: &Schema, c: &Columns, table: &str, column_type: &str) -> String {
    let cols: String = c
        .names
        .iter()
        .map(|n| format!("\n, \"{n}\" {column_type}"))
        .collect();
    format!(
        "CREATE TABLE IF NOT EXISTS {}.{table} (key blob PRIMARY KEY {cols}){}",
        s.keyspace,
        table_options(s)
    )
}

pub fn create_standard1(s: &Schema, c: &Columns) -> String {
    create_table(s, c, "standard1", "blob")
}

pub fn create_counter1(s: &Schema, c: &Columns) -> String {
    create_table(s, c, "counter1", "counter")
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(",")
}

/// `INSERT` of the key and the first `n` columns.
pub fn insert(keyspace: &str, names: &[String]) -> String {
    let marks = vec!["?"; names.len() + 1].join(",");
    format!(
        "INSERT INTO \"{keyspace}\".\"standard1\" (key,{}) VALUES ({marks})",
        quoted(names)
    )
}

pub fn select(keyspace: &str, table: &str, names: &[String]) -> String {
    format!(
        "SELECT {} FROM \"{keyspace}\".\"{table}\" WHERE KEY=?",
        quoted(names)
    )
}

pub fn counter_add(keyspace: &str, names: &[String]) -> String {
    let sets: Vec<String> = names.iter().map(|n| format!("\"{n}\"=\"{n}\"+?")).collect();
    format!(
        "UPDATE \"{keyspace}\".\"counter1\" SET {} WHERE KEY=?",
        sets.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::DistSpec;

    fn schema() -> Schema {
        Schema {
            keyspace: "keyspace1".into(),
            strategy: "org.apache.cassandra.locator.SimpleStrategy".into(),
            replication: vec![("replication_factor".into(), "1".into())],
            compaction: None,
            compaction_options: vec![],
            compression: None,
        }
    }

    fn cols() -> Columns {
        Columns {
            count: DistSpec::fixed(2),
            size: DistSpec::fixed(34),
            names: vec!["C0".into(), "C1".into()],
        }
    }

    #[test]
    fn statements_match_cassandra_stress() {
        assert_eq!(
            create_keyspace(&schema()),
            "CREATE KEYSPACE IF NOT EXISTS \"keyspace1\" WITH replication = {'class': 'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor' : '1'} AND durable_writes = true"
        );
        assert_eq!(
            create_standard1(&schema(), &cols()),
            "CREATE TABLE IF NOT EXISTS keyspace1.standard1 (key blob PRIMARY KEY \n, \"C0\" blob\n, \"C1\" blob) WITH compression = {}"
        );
        let mut s = schema();
        s.compaction = Some("LeveledCompactionStrategy".into());
        s.compaction_options = vec![("sstable_size_in_mb".into(), "160".into())];
        s.compression = Some("LZ4Compressor".into());
        assert!(create_counter1(&s, &cols()).ends_with(
            "\"C1\" counter) WITH compression = {'class' : 'LZ4Compressor'} AND compaction = { 'class' : 'LeveledCompactionStrategy', 'sstable_size_in_mb' : '160'}"
        ));
        assert_eq!(
            insert("ks", &cols().names),
            "INSERT INTO \"ks\".\"standard1\" (key,\"C0\",\"C1\") VALUES (?,?,?)"
        );
        assert_eq!(
            select("ks", "standard1", &cols().names),
            "SELECT \"C0\",\"C1\" FROM \"ks\".\"standard1\" WHERE KEY=?"
        );
        assert_eq!(
            counter_add("ks", &cols().names),
            "UPDATE \"ks\".\"counter1\" SET \"C0\"=\"C0\"+?,\"C1\"=\"C1\"+? WHERE KEY=?"
        );
    }
}
