//! The keyspace the statements run against, described once: the node creates it from this
//! description and the generator writes statements that fit it (or nearly do).

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    BigInt,
    Text,
    Blob,
    Boolean,
    Double,
    Decimal,
    Varint,
    Duration,
    Timestamp,
    Uuid,
    TimeUuid,
    Inet,
    Date,
    Time,
    Counter,
    /// `vector<float, 3>`
    Vector,
    /// `frozen<address>`
    Address,
    /// `tuple<int, text, frozen<list<double>>>`
    Tuple,
    /// `map<text, int>`
    Map,
    /// `list<int>`
    List,
    /// `set<text>`
    Set,
}

pub const KINDS: [Kind; 22] = [
    Kind::Int,
    Kind::BigInt,
    Kind::Text,
    Kind::Blob,
    Kind::Boolean,
    Kind::Double,
    Kind::Decimal,
    Kind::Varint,
    Kind::Duration,
    Kind::Timestamp,
    Kind::Uuid,
    Kind::TimeUuid,
    Kind::Inet,
    Kind::Date,
    Kind::Time,
    Kind::Counter,
    Kind::Vector,
    Kind::Address,
    Kind::Tuple,
    Kind::Map,
    Kind::List,
    Kind::Set,
];

impl Kind {
    pub fn cql(self) -> &'static str {
        match self {
            Kind::Int => "int",
            Kind::BigInt => "bigint",
            Kind::Text => "text",
            Kind::Blob => "blob",
            Kind::Boolean => "boolean",
            Kind::Double => "double",
            Kind::Decimal => "decimal",
            Kind::Varint => "varint",
            Kind::Duration => "duration",
            Kind::Timestamp => "timestamp",
            Kind::Uuid => "uuid",
            Kind::TimeUuid => "timeuuid",
            Kind::Inet => "inet",
            Kind::Date => "date",
            Kind::Time => "time",
            Kind::Counter => "counter",
            Kind::Vector => "vector<float, 3>",
            Kind::Address => "frozen<address>",
            Kind::Tuple => "tuple<int, text, frozen<list<double>>>",
            Kind::Map => "map<text, int>",
            Kind::List => "list<int>",
            Kind::Set => "set<text>",
        }
    }

    /// A non-frozen collection: its elements can be set, added and removed one by one.
    pub fn is_collection(self) -> bool {
        matches!(self, Kind::Map | Kind::List | Kind::Set)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Partition,
    Clustering,
    Static,
    Regular,
}

pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    pub role: Role,
}

pub struct Table {
    pub name: &'static str,
    pub columns: &'static [Column],
    /// What follows the column list, `WITH ...` or nothing.
    pub options: &'static str,
}

impl Table {
    pub fn with_role(&self, role: Role) -> impl Iterator<Item = &'static Column> + Clone {
        let columns: &'static [Column] = self.columns;
        columns.iter().filter(move |c| c.role == role)
    }

    /// The columns outside the primary key.
    pub fn values(&self) -> impl Iterator<Item = &'static Column> + Clone {
        let columns: &'static [Column] = self.columns;
        columns
            .iter()
            .filter(|c| matches!(c.role, Role::Static | Role::Regular))
    }

    pub fn is_counter(&self) -> bool {
        self.values().any(|c| c.kind == Kind::Counter)
    }

    /// `CREATE TABLE fuzz.<name> (...)` for this table.
    pub fn create(&self) -> String {
        let columns: Vec<String> = self
            .columns
            .iter()
            .map(|c| match c.role {
                Role::Static => format!("{} {} static", c.name, c.kind.cql()),
                _ => format!("{} {}", c.name, c.kind.cql()),
            })
            .collect();
        let names = |role| -> Vec<&str> { self.with_role(role).map(|c| c.name).collect() };
        let key = format!(
            "({}){}",
            names(Role::Partition).join(", "),
            names(Role::Clustering)
                .iter()
                .map(|c| format!(", {c}"))
                .collect::<String>()
        );
        format!(
            "CREATE TABLE {KEYSPACE}.{} ({}, PRIMARY KEY ({key})) {}",
            self.name,
            columns.join(", "),
            self.options
        )
    }
}

pub const KEYSPACE: &str = "fuzz";

const fn col(name: &'static str, kind: Kind, role: Role) -> Column {
    Column { name, kind, role }
}

use Kind::*;
use Role::*;

pub const TABLES: [Table; 5] = [
    Table {
        name: "t",
        columns: &[
            col("k", Int, Partition),
            col("v", Int, Regular),
            col("s", Text, Regular),
            col("m", Map, Regular),
            col("l", List, Regular),
            col("st", Set, Regular),
        ],
        options: "",
    },
    Table {
        name: "wide",
        columns: &[
            col("p", Int, Partition),
            col("c", Int, Clustering),
            col("c2", Text, Clustering),
            col("v", Blob, Regular),
            col("n", BigInt, Regular),
            col("s", Int, Static),
            col("sm", Map, Static),
        ],
        options: "WITH CLUSTERING ORDER BY (c DESC, c2 ASC)",
    },
    Table {
        name: "pair",
        columns: &[
            col("a", Int, Partition),
            col("b", Text, Partition),
            col("c", Timestamp, Clustering),
            col("d", Uuid, Clustering),
            col("v", Text, Regular),
            col("l", List, Regular),
        ],
        options: "WITH default_time_to_live = 0 AND gc_grace_seconds = 0",
    },
    Table {
        name: "typed",
        columns: &[
            col("k", Text, Partition),
            col("a", Address, Regular),
            col("tu", Tuple, Regular),
            col("ve", Vector, Regular),
            col("d", Decimal, Regular),
            col("vi", Varint, Regular),
            col("du", Duration, Regular),
            col("ts", Timestamp, Regular),
            col("u", Uuid, Regular),
            col("tid", TimeUuid, Regular),
            col("ip", Inet, Regular),
            col("da", Date, Regular),
            col("ti", Time, Regular),
            col("b", Boolean, Regular),
            col("db", Double, Regular),
        ],
        options: "",
    },
    Table {
        name: "counts",
        columns: &[
            col("k", Int, Partition),
            col("c", Text, Clustering),
            col("n", Counter, Regular),
            col("m", Counter, Regular),
        ],
        options: "",
    },
];

/// Everything the node creates before the first input: the keyspace, the user type, the
/// tables.
pub fn definitions() -> Vec<String> {
    let mut all = vec![
        format!("CREATE KEYSPACE {KEYSPACE} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"),
        format!("CREATE TYPE {KEYSPACE}.address (street text, zip int, tags frozen<set<text>>)"),
    ];
    all.extend(TABLES.iter().map(Table::create));
    all
}
