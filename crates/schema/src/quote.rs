//! Identifier quoting for CQL text: `quote_identifier` and the reserved keywords of CQL 3 as
//! Cassandra 5.0 lists them.

/// Cassandra 5.0's reserved keywords (lower case); such identifiers must be quoted.
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

/// Whether `word` (any case) is a reserved CQL keyword.
pub fn is_reserved_keyword(word: &str) -> bool {
    RESERVED.contains(&word.to_ascii_lowercase().as_str())
}

/// `name` as CQL text: bare when it is lower-case letters, digits and `_` starting with a
/// letter and not reserved; otherwise double-quoted with embedded `"` doubled.
pub fn quote_identifier(name: &str) -> String {
    let mut chars = name.chars();
    let bare = matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !is_reserved_keyword(name);
    if bare {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// `text` as a CQL string literal: single-quoted with embedded `'` doubled.
pub fn quote_string(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_identifiers_stay_bare() {
        assert_eq!(quote_identifier("users"), "users");
        assert_eq!(quote_identifier("a_1"), "a_1");
    }

    #[test]
    fn identifiers_needing_quotes() {
        assert_eq!(quote_identifier("C0"), "\"C0\"");
        assert_eq!(quote_identifier("IndexInfo"), "\"IndexInfo\"");
        assert_eq!(quote_identifier("1abc"), "\"1abc\"");
        assert_eq!(quote_identifier("_x"), "\"_x\"");
        assert_eq!(quote_identifier("select"), "\"select\"");
        assert_eq!(quote_identifier("a\"b"), "\"a\"\"b\"");
        assert_eq!(quote_identifier(""), "\"\"");
    }

    #[test]
    fn reserved_check_ignores_case() {
        assert!(is_reserved_keyword("SELECT"));
        assert!(!is_reserved_keyword("key"));
    }

    #[test]
    fn string_literals_double_quotes() {
        assert_eq!(quote_string("it's"), "'it''s'");
    }
}
