//! `SyntaxError`: a CQL syntax error with Cassandra-shaped messages
//! (`line 1:9 mismatched input 'FORM' expecting K_FROM (SELECT * [FORM]...)`).

use std::fmt;

use crate::lexer::Token;

/// How many token-stream positions (tokens and whitespace runs) before the
/// offending token the snippet starts, as in Cassandra's `ErrorCollector`.
const SNIPPET_LOOKBACK: usize = 10;

/// A syntax error. `line` is 1-based and `column` 0-based (in characters), as
/// Cassandra reports them; `line == 0` means the error has no position (such
/// messages are shown bare, like Cassandra's semantic checks in the grammar).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}:{} {}", self.line, self.column, self.message)
        }
    }
}

impl SyntaxError {
    /// An error without a position.
    pub fn bare(message: impl Into<String>) -> Self {
        SyntaxError {
            line: 0,
            column: 0,
            message: message.into(),
        }
    }

    /// An error located at byte `offset` of `text`.
    pub fn at_offset(text: &str, offset: usize, message: String) -> Self {
        let (line, column) = line_column(text, offset);
        SyntaxError {
            line,
            column,
            message,
        }
    }

    /// An error about token `index` of `tokens` (or end of input when `index`
    /// is past the end); `describe` builds the message from the token's
    /// display text (`'FROM'`, `'<EOF>'`), a snippet is appended.
    pub fn at_token(
        text: &str,
        tokens: &[Token],
        index: usize,
        describe: impl FnOnce(&str) -> String,
    ) -> Self {
        match tokens.get(index) {
            Some(token) => {
                let shown = format!("'{}'", &text[token.start..token.end]);
                let message = format!("{}{}", describe(&shown), snippet(text, tokens, index));
                SyntaxError::at_offset(text, token.start, message)
            }
            None => SyntaxError::at_offset(text, text.trim_end().len(), describe("'<EOF>'")),
        }
    }
}

/// 1-based line and 0-based character column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count())
}

/// ` (SELECT * [FORM]...)`: the query around the offending token, which is
/// put in brackets; `...` marks text cut at either end. Newlines are dropped.
fn snippet(text: &str, tokens: &[Token], index: usize) -> String {
    let Some(offending) = tokens.get(index) else {
        return String::new();
    };
    let from = snippet_start(tokens, index);
    let mut out = String::from(" (");
    if from > 0 {
        out.push_str("...");
    }
    out.push_str(&text[from..offending.start]);
    out.push('[');
    out.push_str(&text[offending.start..offending.end]);
    out.push(']');
    if offending.end < text.len() {
        out.push_str("...");
    }
    out.push(')');
    out.replace(['\n', '\r'], "")
}

/// Byte offset where the snippet for token `index` starts.
fn snippet_start(tokens: &[Token], index: usize) -> usize {
    let mut remaining = SNIPPET_LOOKBACK;
    let mut i = index;
    while i > 0 && remaining > 0 {
        let gap = tokens[i - 1].end < tokens[i].start;
        let cost = if gap { 2 } else { 1 };
        if cost > remaining {
            return tokens[i - 1].end;
        }
        remaining -= cost;
        i -= 1;
    }
    if i == 0 && remaining > 0 {
        0
    } else {
        tokens[i].start
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::tokenize;

    #[test]
    fn display_with_and_without_position() {
        let e = SyntaxError {
            line: 1,
            column: 9,
            message: "x".into(),
        };
        assert_eq!(e.to_string(), "line 1:9 x");
        assert_eq!(SyntaxError::bare("plain").to_string(), "plain");
    }

    #[test]
    fn line_and_column_count_characters() {
        assert_eq!(line_column("ab\ncdé f", 8), (2, 4));
        assert_eq!(line_column("abc", 0), (1, 0));
    }

    #[test]
    fn snippet_brackets_offending_token() {
        let text = "SELECT * FORM t";
        let tokens = tokenize(text).unwrap_or_default();
        assert_eq!(snippet(text, &tokens, 2), " (SELECT * [FORM]...)");
        let text = "CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND;";
        let tokens = tokenize(text).unwrap_or_default();
        let last = tokens.len() - 1;
        assert_eq!(
            snippet(text, &tokens, last),
            " (...'SimpleStrategy', 'replication_factor': 1} AND[;])"
        );
    }
}
