//! A cassandra-stress user profile (YAML, as `StressProfile` reads it): keyspace and table
//! with their optional definitions, `extra_definitions`, `columnspec`, `insert` and
//! `queries`, with cassandra-stress's defaults and its `ops(...)` names checked.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::dist::DistSpec;
use crate::runner::PhaseOp;

/// A YAML scalar that may be written as a number (`partitions: 1`) or a string.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Scalar {
    Int(i64),
    Float(f64),
    Text(String),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Text(s) => s.clone(),
        }
    }
}

#[derive(Debug, Deserialize)]
struct Yaml {
    keyspace: String,
    keyspace_definition: Option<String>,
    table: String,
    table_definition: Option<String>,
    #[serde(default)]
    extra_definitions: Vec<String>,
    #[serde(default)]
    columnspec: Vec<ColumnYaml>,
    #[serde(default)]
    insert: BTreeMap<String, Scalar>,
    #[serde(default)]
    queries: BTreeMap<String, QueryYaml>,
}

#[derive(Debug, Deserialize)]
struct ColumnYaml {
    name: String,
    size: Option<Scalar>,
    population: Option<Scalar>,
    cluster: Option<Scalar>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum QueryYaml {
    Full { cql: String, fields: Option<String> },
    Plain(String),
}

/// `columnspec` of one column, defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnSpec {
    pub size: DistSpec,
    pub population: DistSpec,
    pub cluster: DistSpec,
}

impl Default for ColumnSpec {
    /// cassandra-stress's: size `uniform(4..8)`, population `uniform(1..100B)`, cluster `fixed(1)`.
    fn default() -> ColumnSpec {
        ColumnSpec {
            size: DistSpec::uniform(4, 8),
            population: DistSpec::uniform(1, 100_000_000_000),
            cluster: DistSpec::fixed(1),
        }
    }
}

/// `select: DIST/DIVISOR`: the chance that a generated row is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    pub dist: DistSpec,
    pub divisor: f64,
}

/// The batch an insert sends when it writes more than one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchKind {
    Logged,
    Unlogged,
}

/// The `insert` section.
#[derive(Debug, Clone, PartialEq)]
pub struct InsertSpec {
    pub partitions: DistSpec,
    pub batch: BatchKind,
    pub select: Ratio,
    /// How many inserts write one partition's rows (`visits`, default `fixed(1)`).
    pub visits: DistSpec,
    /// Which part-written partition an insert continues (`revisit`, default `uniform(1..1M)`).
    pub revisit: DistSpec,
}

/// One named query; `multirow` takes each bound value from a random row of the partition.
#[derive(Debug, Clone, PartialEq)]
pub struct QuerySpec {
    pub name: String,
    pub cql: String,
    pub multirow: bool,
}

/// A loaded profile and the `ops(...)` chosen from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub keyspace: String,
    pub keyspace_definition: Option<String>,
    pub table: String,
    pub table_definition: Option<String>,
    pub extra_definitions: Vec<String>,
    pub columns: BTreeMap<String, ColumnSpec>,
    pub insert: InsertSpec,
    pub queries: Vec<QuerySpec>,
    pub ops: Vec<(String, f64)>,
}

/// Operation id of `insert`; query `i` is `i + 1`.
pub const INSERT: usize = 0;

impl Profile {
    /// Reads `path` (a file name or a `file://` URL) and checks `ops` against it.
    pub fn load(path: &str, ops: &[(String, f64)]) -> Result<Profile, String> {
        let file = path.strip_prefix("file://").unwrap_or(path);
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("Cannot read profile {path}: {e}"))?;
        Profile::parse(&text, ops).map_err(|e| format!("Invalid profile {path}: {e}"))
    }

    pub fn parse(text: &str, ops: &[(String, f64)]) -> Result<Profile, String> {
        let y: Yaml = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
        let queries = y
            .queries
            .into_iter()
            .map(|(name, q)| query(name, q))
            .collect::<Result<Vec<_>, _>>()?;
        let profile = Profile {
            keyspace: y.keyspace,
            keyspace_definition: y.keyspace_definition,
            table: y.table,
            table_definition: y.table_definition,
            extra_definitions: y.extra_definitions,
            columns: y
                .columnspec
                .into_iter()
                .map(column)
                .collect::<Result<_, _>>()?,
            insert: insert(&y.insert)?,
            queries,
            ops: if ops.is_empty() {
                vec![("insert".to_string(), 1.0)]
            } else {
                ops.to_vec()
            },
        };
        profile.check_ops()?;
        Ok(profile)
    }

    fn op_id(&self, name: &str) -> Option<usize> {
        if name.eq_ignore_ascii_case("insert") {
            return Some(INSERT);
        }
        self.queries
            .iter()
            .position(|q| q.name.eq_ignore_ascii_case(name))
            .map(|i| i + 1)
    }

    fn check_ops(&self) -> Result<(), String> {
        match self.ops.iter().find(|(n, _)| self.op_id(n).is_none()) {
            Some((name, _)) => Err(format!(
                "Unknown operation {name}: not insert nor a query of the profile"
            )),
            None => Ok(()),
        }
    }

    /// The `ops(...)` as the runner's operations, named as written.
    pub fn phase_ops(&self) -> Vec<PhaseOp> {
        self.ops
            .iter()
            .filter_map(|(name, weight)| {
                Some(PhaseOp {
                    id: self.op_id(name)?,
                    name: name.clone(),
                    weight: *weight,
                })
            })
            .collect()
    }

    /// The spec of column `name` (case-insensitive), defaults if it has none.
    pub fn column(&self, name: &str) -> ColumnSpec {
        self.columns
            .get(&name.to_ascii_lowercase())
            .cloned()
            .unwrap_or_default()
    }
}

fn dist(s: &Scalar) -> Result<DistSpec, String> {
    let text = s.text();
    match text.parse::<i64>() {
        Ok(v) => Ok(DistSpec::fixed(v)),
        Err(_) => DistSpec::parse(text.trim()),
    }
}

fn column(c: ColumnYaml) -> Result<(String, ColumnSpec), String> {
    let mut spec = ColumnSpec::default();
    if let Some(s) = &c.size {
        spec.size = dist(s)?;
    }
    if let Some(s) = &c.population {
        spec.population = dist(s)?;
    }
    if let Some(s) = &c.cluster {
        spec.cluster = dist(s)?;
    }
    Ok((c.name.to_ascii_lowercase(), spec))
}

fn query(name: String, q: QueryYaml) -> Result<QuerySpec, String> {
    let (cql, fields) = match q {
        QueryYaml::Full { cql, fields } => (cql, fields),
        QueryYaml::Plain(cql) => (cql, None),
    };
    let multirow = match fields.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("samerow") => false,
        Some("multirow") => true,
        Some(other) => {
            return Err(format!(
                "query {name}: fields must be samerow or multirow, not {other}"
            ))
        }
    };
    Ok(QuerySpec {
        name,
        cql: cql.trim().trim_end_matches(';').to_string(),
        multirow,
    })
}

fn insert(map: &BTreeMap<String, Scalar>) -> Result<InsertSpec, String> {
    let mut spec = InsertSpec {
        partitions: DistSpec::fixed(1),
        batch: BatchKind::Logged,
        select: Ratio {
            dist: DistSpec::fixed(1),
            divisor: 1.0,
        },
        visits: DistSpec::fixed(1),
        revisit: DistSpec::uniform(1, 1_000_000),
    };
    for (key, value) in map {
        match key.to_ascii_lowercase().as_str() {
            "partitions" => spec.partitions = dist(value)?,
            "batchtype" => spec.batch = batch_kind(&value.text())?,
            "select" | "row-population-ratio" => spec.select = ratio(&value.text())?,
            "visits" => spec.visits = dist(value)?,
            "revisit" => spec.revisit = dist(value)?,
            other => return Err(format!("Unknown insert option {other}")),
        }
    }
    if spec.partitions.min() < 1 {
        return Err("insert partitions must be at least 1".into());
    }
    if spec.visits.min() < 1 {
        return Err("insert visits must be at least 1".into());
    }
    if spec.revisit.min() < 0 || spec.revisit.max() > i64::from(i32::MAX) {
        return Err("insert revisit must lie within 0..2147483647".into());
    }
    Ok(spec)
}

fn batch_kind(v: &str) -> Result<BatchKind, String> {
    match v.trim().to_ascii_uppercase().as_str() {
        "LOGGED" => Ok(BatchKind::Logged),
        "UNLOGGED" => Ok(BatchKind::Unlogged),
        other => Err(format!("batchtype must be LOGGED or UNLOGGED, not {other}")),
    }
}

/// `DIST/DIVISOR` (`fixed(1)/1`, `uniform(1..10)/10`); a bare distribution divides by 1.
fn ratio(v: &str) -> Result<Ratio, String> {
    let (d, divisor) = match v.rsplit_once('/') {
        Some((d, n)) => (
            d,
            n.trim()
                .parse::<f64>()
                .map_err(|_| format!("Invalid ratio {v}"))?,
        ),
        None => (v, 1.0),
    };
    if divisor <= 0.0 {
        return Err(format!("Invalid ratio {v}"));
    }
    Ok(Ratio {
        dist: DistSpec::parse(d.trim())?,
        divisor,
    })
}

#[cfg(test)]
mod tests;
