//! CQL keyword classification. Keywords are lexed as identifiers; this module
//! says which words are reserved (never usable as unquoted identifiers), per
//! Cassandra 5.0's `Lexer.g` minus `Parser.g`'s `unreserved_keyword`.

/// Reserved keywords, lowercase, sorted for binary search.
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
    "delete",
    "desc",
    "describe",
    "drop",
    "entries",
    "execute",
    "false",
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
    "revoke",
    "schema",
    "select",
    "set",
    "table",
    "to",
    "token",
    "true",
    "truncate",
    "unlogged",
    "update",
    "use",
    "using",
    "view",
    "where",
    "with",
];

/// Whether `word` (any case) is a reserved keyword.
pub fn is_reserved(word: &str) -> bool {
    if word.len() > 12 || !word.is_ascii() {
        return false;
    }
    let lower = word.to_ascii_lowercase();
    RESERVED.binary_search(&lower.as_str()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_sorted_for_binary_search() {
        assert!(RESERVED.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn classification() {
        for word in ["SELECT", "from", "Table", "token", "NaN", "true"] {
            assert!(is_reserved(word), "{word}");
        }
        for word in [
            "key",
            "type",
            "ttl",
            "writetime",
            "count",
            "filtering",
            "values",
            "timestamp",
            "date",
            "text",
            "keys",
            "map",
            "list",
            "json",
            "distinct",
            "exists",
            "columnfamilies",
        ] {
            assert!(!is_reserved(word), "{word}");
        }
    }
}
