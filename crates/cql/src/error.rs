//! `SyntaxError`: a CQL syntax error with Cassandra-shaped messages
//! (`line 1:9 mismatched input 'FORM' expecting K_FROM (SELECT * [FORM]...)`).

use std::borrow::Cow;
use std::fmt;

use logos::Logos;

use crate::lexer::{quoted_name_value, string_value, Kind, Token};

/// How many token-stream positions (tokens, whitespace runs and comments) before the token the
/// parser stands at the snippet starts, as in Cassandra's `ErrorCollector`.
const SNIPPET_LOOKBACK: usize = 10;

/// How many token-stream positions after the token the parser stands at the snippet runs at
/// most (Cassandra's `ErrorCollector`: never past the last token read).
const SNIPPET_LOOKAHEAD: usize = 2;

/// Where Cassandra places an error at the end of the text: its lexer ends the token stream
/// with a token that has no place (ANTLR's line 0, position -1).
const END_OF_INPUT: (usize, isize) = (0, -1);

/// A syntax error. `position` is ANTLR's line (1-based) and position in it (0-based, in
/// characters), as Cassandra reports them: `(0, -1)` at the end of the text; `None` for a
/// message shown bare (like Cassandra's semantic checks in the grammar).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SyntaxError {
    pub position: Option<(usize, isize)>,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "line {line}:{column} {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl SyntaxError {
    /// An error without a position.
    pub fn bare(message: impl Into<String>) -> Self {
        SyntaxError {
            position: None,
            message: message.into(),
        }
    }

    /// An error located at byte `offset` of `text`.
    pub fn at_offset(text: &str, offset: usize, message: String) -> Self {
        let (line, column) = line_column(text, offset);
        SyntaxError {
            position: Some((line, isize::try_from(column).unwrap_or(isize::MAX))),
            message,
        }
    }

    /// An error about token `index` of `tokens` (or the end of the text when `index` is past
    /// the end); `describe` builds the message from the token's display text (`'FROM'`,
    /// `'<EOF>'`), a snippet is appended.
    pub fn at_token(
        text: &str,
        tokens: &[Token],
        index: usize,
        describe: impl FnOnce(&str) -> String,
    ) -> Self {
        let place = Place {
            current: index,
            failing: index,
            read: index,
        };
        Self::at_place(text, tokens, place, describe)
    }

    /// An error found at token `place.failing` (or the end of the text); see `Place`.
    pub fn at_place(
        text: &str,
        tokens: &[Token],
        place: Place,
        describe: impl FnOnce(&str) -> String,
    ) -> Self {
        let read = place.read.max(place.failing);
        let snippet = snippet(text, tokens, place.current, read).unwrap_or_default();
        match tokens.get(place.failing) {
            Some(token) => {
                let shown = format!("'{}'", token_text(text, token));
                let message = format!("{}{snippet}", describe(&shown));
                SyntaxError::at_offset(text, token.start, message)
            }
            None => SyntaxError {
                position: Some(END_OF_INPUT),
                message: format!("{}{snippet}", describe("'<EOF>'")),
            },
        }
    }
}

/// Where an error is found, in token indices (past the last token is the end of the text).
/// ANTLR names the token where its prediction failed (`failing`), which may lie ahead of the
/// one the parser stands at (`current`), which Cassandra's snippet brackets; the snippet runs
/// no further than the last token read so far (`read`, at least `failing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub current: usize,
    pub failing: usize,
    pub read: usize,
}

/// 1-based line and 0-based character column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count())
}

/// The text of a token as Cassandra's lexer sets it: a quoted name or a string without its
/// quotes (an empty quoted name `""` keeps them).
fn token_text<'a>(text: &'a str, token: &Token) -> Cow<'a, str> {
    let raw = &text[token.start..token.end];
    match token.kind {
        Kind::QuotedName if raw.len() > 2 => Cow::Owned(quoted_name_value(raw)),
        Kind::String => Cow::Owned(string_value(raw)),
        _ => Cow::Borrowed(raw),
    }
}

/// Where Cassandra's snippet takes a token to end: its start plus the length of its text
/// (`token_text`), which is shorter than the token for quoted names and strings.
fn snippet_end(text: &str, token: &Token) -> usize {
    let length = token_text(text, token).chars().count();
    text[token.start..]
        .char_indices()
        .nth(length)
        .map_or(text.len(), |(i, _)| token.start + i)
}

/// ` (SELECT * [FORM]...)`: the query around token `current`, which is put in brackets, from
/// ten stream positions before it to two after it but not past token `read`, the last one
/// read; `...` marks text cut at either end and newlines are dropped. None when the snippet
/// would reach the end of the text, as Cassandra's end token has no place.
fn snippet(text: &str, tokens: &[Token], current: usize, read: usize) -> Option<String> {
    let offending = tokens.get(current)?;
    let window = Window::new(text, tokens, current, read.max(current));
    let from = window.current.saturating_sub(SNIPPET_LOOKBACK);
    let to = (window.current + SNIPPET_LOOKAHEAD).min(window.last);
    let (start, _) = window.spans.get(from)?;
    let &(_, end) = window.spans.get(to)?;
    let highlight_end = snippet_end(text, offending);
    let mut out = String::from(" (");
    if *start > 0 {
        out.push_str("...");
    }
    out.push_str(&text[*start..offending.start]);
    out.push('[');
    out.push_str(&text[offending.start..highlight_end]);
    out.push(']');
    out.push_str(&text[highlight_end..end.max(highlight_end)]);
    if end < text.trim_end_matches('\n').len() {
        out.push_str("...");
    }
    out.push(')');
    Some(out.replace('\n', ""))
}

/// A stretch of Cassandra's token stream (hidden tokens, whitespace runs and comments,
/// included) as byte spans, from at most ten tokens before token `current` to token `last` or
/// the end of the text.
struct Window {
    spans: Vec<(usize, usize)>,
    /// The stream position of token `current`.
    current: usize,
    /// The stream position of token `last`: `spans.len()` at the end of the text.
    last: usize,
}

impl Window {
    fn new(text: &str, tokens: &[Token], current: usize, last: usize) -> Self {
        let first = current.saturating_sub(SNIPPET_LOOKBACK);
        let mut window = Window {
            spans: Vec::new(),
            current: 0,
            last: 0,
        };
        for i in first..=last.min(tokens.len()) {
            if i > first || i == 0 {
                let gap_start = i.checked_sub(1).map_or(0, |p| tokens[p].end);
                let gap_end = tokens.get(i).map_or(text.len(), |t| t.start);
                window.spans.extend(hidden_tokens(text, gap_start, gap_end));
            }
            if i == current {
                window.current = window.spans.len();
            }
            window.last = window.spans.len();
            if let Some(token) = tokens.get(i) {
                window.spans.push((token.start, snippet_end(text, token)));
            }
        }
        window
    }
}

/// The whitespace runs and comments between bytes `start` and `end` of `text`, each one
/// token of Cassandra's hidden channel.
fn hidden_tokens(text: &str, start: usize, end: usize) -> Vec<(usize, usize)> {
    let gap = text.get(start..end).unwrap_or("");
    Kind::lexer(gap)
        .spanned()
        .map(|(_, span)| (start + span.start, start + span.end))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::tokenize;

    #[test]
    fn display_with_and_without_position() {
        let e = SyntaxError {
            position: Some((1, 9)),
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

    fn snippet_of(text: &str, current: usize, failing: usize) -> Option<String> {
        let tokens = tokenize(text).unwrap_or_default();
        snippet(text, &tokens, current, failing)
    }

    #[test]
    fn snippet_brackets_offending_token() {
        assert_eq!(
            snippet_of("SELECT * FORM t", 2, 2).as_deref(),
            Some(" (SELECT * [FORM]...)")
        );
        let text = "CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND;";
        let last = tokenize(text).unwrap_or_default().len() - 1;
        assert_eq!(
            snippet_of(text, last, last).as_deref(),
            Some(" (...'SimpleStrategy', 'replication_factor': 1} AND[;])")
        );
    }

    /// Cassandra's snippet runs two stream positions past the token the parser stands at, as
    /// far as the token that was read last; comments count as tokens of their own, and one
    /// that would reach the end of the text is left out.
    #[test]
    fn snippet_runs_past_the_current_token_to_the_last_one_read() {
        // tokens: a = - k AND v / the end is token 6
        assert_eq!(
            snippet_of("a = -k AND v", 3, 4).as_deref(),
            Some(" (a = -[k] AND...)")
        );
        assert_eq!(snippet_of("a = -k;", 3, 4).as_deref(), Some(" (a = -[k];)"));
        assert_eq!(snippet_of("a = -k", 3, 4), None);
        assert_eq!(snippet_of("a = -k  ", 3, 4), None);
        assert_eq!(
            snippet_of("a = -k.x", 3, 6).as_deref(),
            Some(" (a = -[k].x)")
        );
        assert_eq!(
            snippet_of("a = -k /* a */ /* b */ AND v", 3, 4).as_deref(),
            Some(" (a = -[k] /* a */...)")
        );
        assert_eq!(
            snippet_of("SELECT * FROM t WHERE k = /* a */ /* b */ -k AND v", 8, 9).as_deref(),
            Some(" (... k = /* a */ /* b */ -[k] AND...)")
        );
    }

    /// Cassandra's lexer gives a quoted name or a string its unquoted text, whose length the
    /// snippet takes for the token's.
    #[test]
    fn quoted_tokens_are_as_long_as_their_text() {
        assert_eq!(
            snippet_of("a = -\"k\" AND v", 3, 4).as_deref(),
            Some(" (a = -[\"]k\" AND...)")
        );
        assert_eq!(
            snippet_of("a = 1 'abc'", 3, 3).as_deref(),
            Some(" (a = 1 ['ab]...)")
        );
        let text = "a = 1 \"x\"";
        let tokens = tokenize(text).unwrap_or_default();
        let error = SyntaxError::at_token(text, &tokens, 3, |shown| format!("at {shown}"));
        assert_eq!(error.to_string(), "line 1:6 at 'x' (a = 1 [\"]...)");
    }

    #[test]
    fn the_end_of_the_text_has_no_place() {
        let text = "a = -k";
        let tokens = tokenize(text).unwrap_or_default();
        let place = Place {
            current: 3,
            failing: 4,
            read: 4,
        };
        let error = SyntaxError::at_place(text, &tokens, place, |shown| format!("at {shown}"));
        assert_eq!(error.to_string(), "line 0:-1 at '<EOF>'");
        let error = SyntaxError::at_token(text, &tokens, 4, |shown| format!("at {shown}"));
        assert_eq!(error.to_string(), "line 0:-1 at '<EOF>'");
    }
}
