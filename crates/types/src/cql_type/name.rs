//! CQL type names: native type keywords and `cql_name`, the text Cassandra shows in
//! `system_schema` and DESCRIBE.
use super::{CqlType, NativeType};

/// Words Cassandra reserves; a UDT called like this must be quoted.
const RESERVED: &[&str] = &[
    "add",
    "allow",
    "alter",
    "and",
    "apply",
    "asc",
    "authorize",
    "batch",
    "begin",
    "by",
    "columnfamily",
    "create",
    "default",
    "delete",
    "desc",
    "describe",
    "drop",
    "entries",
    "execute",
    "from",
    "full",
    "grant",
    "if",
    "in",
    "index",
    "infinity",
    "insert",
    "into",
    "is",
    "keyspace",
    "limit",
    "materialized",
    "mbean",
    "mbeans",
    "modify",
    "nan",
    "norecursive",
    "not",
    "null",
    "of",
    "on",
    "or",
    "order",
    "primary",
    "rename",
    "replace",
    "revoke",
    "schema",
    "select",
    "set",
    "table",
    "to",
    "token",
    "truncate",
    "unlogged",
    "unset",
    "update",
    "use",
    "using",
    "view",
    "where",
    "with",
];

impl NativeType {
    /// The CQL keyword (`text`, not `varchar`).
    pub fn name(self) -> &'static str {
        use NativeType::*;
        match self {
            Ascii => "ascii",
            Bigint => "bigint",
            Blob => "blob",
            Boolean => "boolean",
            Counter => "counter",
            Date => "date",
            Decimal => "decimal",
            Double => "double",
            Duration => "duration",
            Float => "float",
            Inet => "inet",
            Int => "int",
            Smallint => "smallint",
            Text => "text",
            Time => "time",
            Timestamp => "timestamp",
            Timeuuid => "timeuuid",
            Tinyint => "tinyint",
            Uuid => "uuid",
            Varint => "varint",
        }
    }

    /// The native type named `name` (case-insensitive; `varchar` is `text`).
    pub fn from_name(name: &str) -> Option<NativeType> {
        let lower = name.to_ascii_lowercase();
        if lower == "varchar" {
            return Some(NativeType::Text);
        }
        NativeType::ALL.into_iter().find(|n| n.name() == lower)
    }
}

impl CqlType {
    /// The type as Cassandra prints it: `frozen<map<text, int>>`, `list<frozen<set<int>>>`,
    /// `frozen<tuple<int, text>>`, `vector<float, 3>`. Types nested in another type are
    /// always frozen, so they are shown with `frozen<...>` like Cassandra does.
    pub fn cql_name(&self) -> String {
        self.render(false)
    }

    fn render(&self, nested: bool) -> String {
        match self {
            CqlType::Frozen(inner) => format!("frozen<{}>", inner.render_body()),
            CqlType::Tuple(_) => format!("frozen<{}>", self.render_body()),
            CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) | CqlType::Udt(_) if nested => {
                format!("frozen<{}>", self.render_body())
            }
            _ => self.render_body(),
        }
    }

    fn render_body(&self) -> String {
        match self {
            CqlType::Native(n) => n.name().to_string(),
            CqlType::List(e) => format!("list<{}>", e.render(true)),
            CqlType::Set(e) => format!("set<{}>", e.render(true)),
            CqlType::Map(k, v) => format!("map<{}, {}>", k.render(true), v.render(true)),
            CqlType::Tuple(items) => {
                let inner: Vec<String> = items.iter().map(|t| t.render(true)).collect();
                format!("tuple<{}>", inner.join(", "))
            }
            CqlType::Udt(udt) => quote_identifier(&udt.name),
            CqlType::Frozen(inner) => inner.render_body(),
            CqlType::Vector(e, n) => format!("vector<{}, {}>", e.render(true), n),
            CqlType::Custom(class) => format!("'{}'", class.replace('\'', "''")),
        }
    }
}

/// Whether `word` (any case) is a reserved CQL keyword (Cassandra's ReservedKeywords).
pub fn is_reserved_keyword(word: &str) -> bool {
    RESERVED.contains(&word.to_ascii_lowercase().as_str())
}

/// An identifier as CQL text: bare when it is a lower-case unreserved word, else double-quoted.
pub fn quote_identifier(name: &str) -> String {
    let mut chars = name.chars();
    let plain = matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !is_reserved_keyword(name);
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cql_type::UdtType;
    use std::sync::Arc;

    fn int() -> Box<CqlType> {
        Box::new(CqlType::native(NativeType::Int))
    }

    #[test]
    fn native_names_round_trip() {
        for n in NativeType::ALL {
            assert_eq!(NativeType::from_name(n.name()), Some(n));
            assert_eq!(NativeType::from_name(&n.name().to_uppercase()), Some(n));
        }
        assert_eq!(NativeType::from_name("VarChar"), Some(NativeType::Text));
        assert_eq!(NativeType::from_name("string"), None);
    }

    #[test]
    fn collection_names() {
        assert_eq!(CqlType::List(int()).cql_name(), "list<int>");
        let map = CqlType::Map(Box::new(CqlType::native(NativeType::Text)), int());
        assert_eq!(map.clone().freeze().cql_name(), "frozen<map<text, int>>");
        let nested = CqlType::Map(
            Box::new(CqlType::native(NativeType::Text)),
            Box::new(CqlType::Set(Box::new(CqlType::native(NativeType::Uuid))).freeze()),
        );
        assert_eq!(nested.cql_name(), "map<text, frozen<set<uuid>>>");
        let implicit = CqlType::List(Box::new(CqlType::Set(int())));
        assert_eq!(implicit.cql_name(), "list<frozen<set<int>>>");
    }

    #[test]
    fn tuple_vector_custom_names() {
        let tuple = CqlType::Tuple(vec![*int(), CqlType::native(NativeType::Text)]);
        assert_eq!(tuple.cql_name(), "frozen<tuple<int, text>>");
        assert_eq!(tuple.freeze().cql_name(), "frozen<tuple<int, text>>");
        let vector = CqlType::Vector(Box::new(CqlType::native(NativeType::Float)), 3);
        assert_eq!(vector.cql_name(), "vector<float, 3>");
        assert_eq!(CqlType::Custom("a.B".into()).cql_name(), "'a.B'");
    }

    #[test]
    fn udt_names_quoted_when_needed() {
        let udt = |name: &str| CqlType::Udt(Arc::new(UdtType::new("ks", name, vec![])));
        assert_eq!(udt("address").cql_name(), "address");
        assert_eq!(udt("Address").cql_name(), "\"Address\"");
        assert_eq!(udt("select").cql_name(), "\"select\"");
        assert_eq!(udt("address").freeze().cql_name(), "frozen<address>");
        assert_eq!(
            CqlType::List(Box::new(udt("a"))).cql_name(),
            "list<frozen<a>>"
        );
    }
}
