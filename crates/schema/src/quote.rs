//! Quoting for CQL text: string literals here; identifiers and reserved keywords come from
//! `types`, which needs them for type names too.

pub use types::cql_type::{is_reserved_keyword, quote_identifier};

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
