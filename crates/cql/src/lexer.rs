//! Tokenizer for CQL text (mirrors Cassandra's `Lexer.g`): turns a query into
//! zero-copy tokens (kind + byte span). Keywords are not separate kinds: they
//! are `Ident` tokens classified by the parser (see `keywords`).
//!
//! Quoted names, strings, comments and durations are scanned by hand-written callbacks, and
//! whitespace and comments are dropped by `tokenize` rather than skipped by logos: logos's
//! generated code recurses once per iteration of such loops (and per skipped token) in debug
//! builds, so a long literal or many comments would overflow the stack.

use logos::{FilterResult, Logos};

use crate::error::SyntaxError;

type Lex<'s> = logos::Lexer<'s, Kind>;

/// The kind of one token; its text is the source slice given by its span.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    #[regex(r"[ \t\r\n\f]+")]
    Whitespace,
    #[token("--", line_comment)]
    #[token("//", line_comment)]
    #[token("/*", block_comment)]
    Comment,
    #[regex("[a-zA-Z][a-zA-Z0-9_]*")]
    Ident,
    /// `"..."`, possibly empty (`""`, Cassandra's EMPTY_QUOTED_NAME).
    #[token("\"", |lex| closing_quote(lex, b'"'))]
    QuotedName,
    #[token("'", |lex| closing_quote(lex, b'\''))]
    #[token("$$", closing_dollars)]
    String,
    #[regex("-?[0-9]+")]
    Integer,
    #[regex(r"-?[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?")]
    #[regex(r"-?[0-9]+[eE][+-]?[0-9]+")]
    Float,
    /// `-NaN` and `-Infinity` (the positive forms are identifiers). Cassandra's lexer commits
    /// to them after `-n` or `-i`: one cut short (`-i`, `-inf`, `-nax`) is an error.
    #[regex("-(?i:nan|infinity)")]
    #[regex("-(?i:n|na|i|in|inf|infi|infin|infini|infinit)", |_| false)]
    NegativeSpecial,
    #[regex("-?[0-9]+(?i:y|mo|w|d|h|m|s|ms|us|µs|ns)", more_duration_units)]
    #[regex(
        r"-?P(T([0-9]+H([0-9]+M)?([0-9]+S)?|[0-9]+M([0-9]+S)?|[0-9]+S)|[0-9]+W|([0-9]+Y([0-9]+M)?([0-9]+D)?|[0-9]+M([0-9]+D)?|[0-9]+D)(T([0-9]+H([0-9]+M)?([0-9]+S)?|[0-9]+M([0-9]+S)?|[0-9]+S))?|[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9])",
        priority = 10
    )]
    Duration,
    #[regex("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")]
    Uuid,
    #[regex("0[xX][0-9a-fA-F]*")]
    Hex,
    #[token("?")]
    QMark,
    #[token(":")]
    Colon,
    #[token("..")]
    Range,
    #[token(".")]
    Dot,
    #[token(",")]
    Comma,
    #[token(";")]
    Semicolon,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("=")]
    Eq,
    #[token("!=")]
    Neq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Lte,
    #[token(">")]
    Gt,
    #[token(">=")]
    Gte,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("+=")]
    PlusEq,
    #[token("-=")]
    MinusEq,
    /// Cassandra's `'expr('` token that opens a custom index expression.
    #[regex("(?i:expr)\\(")]
    ExprOpen,
}

impl Kind {
    /// The name Cassandra's error messages use for an expected token.
    pub fn expected_name(self) -> &'static str {
        match self {
            Kind::Whitespace => "WS",
            Kind::Comment => "COMMENT",
            Kind::Ident => "IDENT",
            Kind::QuotedName => "QUOTED_NAME",
            Kind::String => "STRING_LITERAL",
            Kind::Integer => "INTEGER",
            Kind::Float => "FLOAT",
            Kind::NegativeSpecial => "K_NEGATIVE_NAN",
            Kind::Duration => "DURATION",
            Kind::Uuid => "UUID",
            Kind::Hex => "HEXNUMBER",
            Kind::QMark => "QMARK",
            Kind::Colon => "':'",
            Kind::Range => "RANGE",
            Kind::Dot => "'.'",
            Kind::Comma => "','",
            Kind::Semicolon => "';'",
            Kind::LParen => "'('",
            Kind::RParen => "')'",
            Kind::LBracket => "'['",
            Kind::RBracket => "']'",
            Kind::LBrace => "'{'",
            Kind::RBrace => "'}'",
            Kind::Eq => "'='",
            Kind::Neq => "'!='",
            Kind::Lt => "'<'",
            Kind::Lte => "'<='",
            Kind::Gt => "'>'",
            Kind::Gte => "'>='",
            Kind::Plus => "'+'",
            Kind::Minus => "'-'",
            Kind::Star => "'*'",
            Kind::Slash => "'/'",
            Kind::Percent => "'%'",
            Kind::PlusEq => "'+='",
            Kind::MinusEq => "'-='",
            Kind::ExprOpen => "'expr('",
        }
    }
}

/// After an opening `quote`: consumes the text up to the closing one, where a doubled quote
/// stands for one. `false` (a lexing error at the opening quote) when it is never closed.
fn closing_quote(lex: &mut Lex<'_>, quote: u8) -> bool {
    let rest = lex.remainder().as_bytes();
    let mut from = 0;
    while let Some(offset) = rest[from..].iter().position(|&b| b == quote) {
        let at = from + offset;
        if rest.get(at + 1) == Some(&quote) {
            from = at + 2;
        } else {
            lex.bump(at + 1);
            return true;
        }
    }
    false
}

/// After an opening `$$`: consumes the text up to the closing `$$`.
fn closing_dollars(lex: &mut Lex<'_>) -> bool {
    bump_past(lex, "$$")
}

/// Consumes the remainder up to and including `end`; `false` when it does not occur.
fn bump_past(lex: &mut Lex<'_>, end: &str) -> bool {
    match lex.remainder().find(end) {
        Some(at) => {
            lex.bump(at + end.len());
            true
        }
        None => false,
    }
}

/// `--` or `//` comments run to the end of the line (or of the text).
fn line_comment(lex: &mut Lex<'_>) {
    let rest = lex.remainder();
    lex.bump(rest.find(['\r', '\n']).unwrap_or(rest.len()));
}

/// `/* ... */`; an unterminated one is an error.
fn block_comment(lex: &mut Lex<'_>) -> FilterResult<(), ()> {
    if bump_past(lex, "*/") {
        FilterResult::Emit(())
    } else {
        FilterResult::Error(())
    }
}

/// After the first `<digits><unit>` of a duration (`1h`): consumes the following ones
/// (`30m15s`), each unit the longest that matches, as the regex `([0-9]+unit)+` would.
fn more_duration_units(lex: &mut Lex<'_>) {
    loop {
        let rest = lex.remainder();
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let unit = match rest.get(digits..) {
            Some(after) if digits > 0 => duration_unit_len(after),
            _ => 0,
        };
        if unit == 0 {
            return;
        }
        lex.bump(digits + unit);
    }
}

/// The byte length of the duration unit `text` starts with (case-insensitive), or 0.
fn duration_unit_len(text: &str) -> usize {
    const UNITS: [&str; 11] = ["mo", "ms", "us", "µs", "ns", "y", "w", "d", "h", "m", "s"];
    UNITS
        .iter()
        .find(|unit| {
            text.get(..unit.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(unit))
        })
        .map_or(0, |unit| unit.len())
}

/// One token: its kind and byte range in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// Splits `text` into tokens, or reports the first unrecognised character.
#[cfg(test)]
pub fn tokenize(text: &str) -> Result<Vec<Token>, SyntaxError> {
    match tokenize_to_error(text) {
        (tokens, None) => Ok(tokens),
        (_, Some(error)) => Err(error),
    }
}

/// The tokens of `text` up to its first unrecognised character, and the error that character
/// is (Cassandra's lexer reports it only once its parser reads that far).
pub fn tokenize_to_error(text: &str) -> (Vec<Token>, Option<SyntaxError>) {
    let mut tokens: Vec<Token> = Vec::new();
    let mut lexer = Kind::lexer(text);
    while let Some(next) = lexer.next() {
        let span = lexer.span();
        let Ok(kind) = next else {
            return (tokens, Some(unrecognised(text, span)));
        };
        if matches!(kind, Kind::Whitespace | Kind::Comment) {
            continue;
        }
        push_token(
            &mut tokens,
            text,
            Token {
                kind,
                start: span.start,
                end: span.end,
            },
        );
    }
    (tokens, None)
}

/// Appends a token, splitting `1.` + `.` back into `1` + `..` (a slice range
/// such as `m[1..2]`), which Cassandra's lexer handles with lookahead.
fn push_token(tokens: &mut Vec<Token>, text: &str, token: Token) {
    if token.kind == Kind::Dot {
        if let Some(last) = tokens.last_mut() {
            let float_ending_in_dot = last.kind == Kind::Float && text[..last.end].ends_with('.');
            if float_ending_in_dot && last.end == token.start {
                last.kind = Kind::Integer;
                last.end -= 1;
                let range = Token {
                    kind: Kind::Range,
                    start: last.end,
                    end: token.end,
                };
                tokens.push(range);
                return;
            }
        }
    }
    tokens.push(token);
}

fn unrecognised(text: &str, span: std::ops::Range<usize>) -> SyntaxError {
    let offset = span.start;
    let rest = &text[offset..];
    if rest.starts_with('-') && span.len() > 1 {
        return cut_special(text, span.end);
    }
    let expected_at_end = |what: char| {
        let message = format!("mismatched character '<EOF>' expecting '{what}'");
        SyntaxError::at_offset(text, text.len(), message)
    };
    if rest.starts_with("/*") {
        return expected_at_end('*');
    }
    if let Some(body) = rest.strip_prefix("$$") {
        return unterminated_dollars(text, body);
    }
    match rest.chars().next() {
        Some(quote @ ('\'' | '"')) => expected_at_end(quote),
        Some(c) => {
            let message = format!("no viable alternative at character '{c}'");
            SyntaxError::at_offset(text, offset, message)
        }
        None => SyntaxError::at_offset(
            text,
            offset,
            "no viable alternative at character '<EOF>'".to_string(),
        ),
    }
}

/// A `$$` string without its closing `$$`: Cassandra 5.0.4's lexer names the text's last
/// character (the end of the text when that is a `$` or the string is empty).
fn unterminated_dollars(text: &str, body: &str) -> SyntaxError {
    match body.char_indices().next_back() {
        Some((i, last)) if last != '$' => {
            let offset = text.len() - body.len() + i;
            let message = format!("mismatched character '{last}' expecting '$'");
            SyntaxError::at_offset(text, offset, message)
        }
        _ => SyntaxError::at_offset(
            text,
            text.len(),
            "mismatched character '<EOF>' expecting '$'".to_string(),
        ),
    }
}

/// A `-NaN` or `-Infinity` cut short at `offset`, as ANTLR reports a character its rule did
/// not expect.
fn cut_special(text: &str, offset: usize) -> SyntaxError {
    let found = text[offset..]
        .chars()
        .next()
        .map_or_else(|| "<EOF>".to_string(), String::from);
    let message = format!("mismatched character '{found}' expecting set null");
    SyntaxError::at_offset(text, offset, message)
}

/// Unescapes the body of a string literal token (`'...'` or `$$...$$`).
pub fn string_value(raw: &str) -> String {
    if let Some(body) = raw.strip_prefix("$$").and_then(|r| r.strip_suffix("$$")) {
        return body.to_string();
    }
    let body = raw.get(1..raw.len().saturating_sub(1)).unwrap_or("");
    body.replace("''", "'")
}

/// Unescapes the body of a quoted identifier token (`"..."`).
pub fn quoted_name_value(raw: &str) -> String {
    let body = raw.get(1..raw.len().saturating_sub(1)).unwrap_or("");
    body.replace("\"\"", "\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, &str)> {
        let tokens = tokenize(text).unwrap_or_default();
        tokens
            .iter()
            .map(|t| (t.kind, &text[t.start..t.end]))
            .collect()
    }

    #[test]
    fn literals() {
        use Kind::*;
        assert_eq!(
            kinds("12 -3 1.5 -2e10 0xCAFE 1h30m 12mo PT5M P2W P1Y2M P0001-01-01T00:00:00 -NaN"),
            vec![
                (Integer, "12"),
                (Integer, "-3"),
                (Float, "1.5"),
                (Float, "-2e10"),
                (Hex, "0xCAFE"),
                (Duration, "1h30m"),
                (Duration, "12mo"),
                (Duration, "PT5M"),
                (Duration, "P2W"),
                (Duration, "P1Y2M"),
                (Duration, "P0001-01-01T00:00:00"),
                (NegativeSpecial, "-NaN"),
            ]
        );
    }

    #[test]
    fn uuids_beat_numbers_and_identifiers() {
        let text = "123e4567-e89b-12d3-a456-426614174000 deadbeef-dead-beef-dead-beefdeadbeef";
        let got = kinds(text);
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|(k, _)| *k == Kind::Uuid));
    }

    #[test]
    fn strings_names_and_comments() {
        use Kind::*;
        let text = "'it''s' $$a'b$$ \"Q\"\"x\" \"\" -- c\n/* multi\nline */ x // end";
        assert_eq!(
            kinds(text),
            vec![
                (String, "'it''s'"),
                (String, "$$a'b$$"),
                (QuotedName, "\"Q\"\"x\""),
                (QuotedName, "\"\""),
                (Ident, "x"),
            ]
        );
        assert_eq!(string_value("'it''s'"), "it's");
        assert_eq!(string_value("$$a'b$$"), "a'b");
        assert_eq!(quoted_name_value("\"Q\"\"x\""), "Q\"x");
    }

    #[test]
    fn ranges_and_operators() {
        use Kind::*;
        assert_eq!(
            kinds("m[1..2] a<=b c+=d"),
            vec![
                (Ident, "m"),
                (LBracket, "["),
                (Integer, "1"),
                (Range, ".."),
                (Integer, "2"),
                (RBracket, "]"),
                (Ident, "a"),
                (Lte, "<="),
                (Ident, "b"),
                (Ident, "c"),
                (PlusEq, "+="),
                (Ident, "d"),
            ]
        );
    }

    #[test]
    fn long_literals_and_many_comments_lex_on_a_worker_stack() {
        let big = 100_000;
        let cases = [
            format!("'{}'", "é".repeat(big)),
            format!("'{}'", "''".repeat(big)),
            format!("$${}$$", "$é".repeat(big)),
            format!("\"{}\"", "é".repeat(big)),
            format!("\"{}\"", "\"\"".repeat(big)),
            format!("/*{}*/ x", "*é".repeat(big)),
            format!("--{}\nx", "é".repeat(big)),
            format!("{}x", "/**/ -- c\n// d\n".repeat(big)),
            "1µs".repeat(big),
            "1mo2d".repeat(big),
        ];
        for text in cases {
            let count = types::limits::on_worker_stack(|| tokenize(&text).map(|t| t.len()));
            assert_eq!(
                count,
                Ok(1),
                "{}",
                text.chars().take(10).collect::<String>()
            );
        }
    }

    #[test]
    fn durations_take_the_longest_units() {
        use Kind::*;
        assert_eq!(
            kinds("1MO2ms3µs4m5s -6d 7mx"),
            vec![
                (Duration, "1MO2ms3µs4m5s"),
                (Duration, "-6d"),
                (Duration, "7m"),
                (Ident, "x"),
            ]
        );
    }

    #[test]
    fn unterminated_literals_and_comments() {
        let error = |text: &str| tokenize(text).err().map(|e| e.to_string());
        // Cassandra 5.0.4 points at the end of the text, or at the last character of a `$$`
        // string that does not end in `$`.
        for (text, expected) in [
            (
                "SELECT 'abc",
                "line 1:11 mismatched character '<EOF>' expecting '''",
            ),
            (
                "SELECT 'abc  ",
                "line 1:13 mismatched character '<EOF>' expecting '''",
            ),
            (
                "SELECT \"abc",
                "line 1:11 mismatched character '<EOF>' expecting '\"'",
            ),
            (
                "SELECT $$abc$",
                "line 1:13 mismatched character '<EOF>' expecting '$'",
            ),
            (
                "SELECT $$",
                "line 1:9 mismatched character '<EOF>' expecting '$'",
            ),
            (
                "SELECT $$abc",
                "line 1:11 mismatched character 'c' expecting '$'",
            ),
            (
                "SELECT $$ab$c",
                "line 1:12 mismatched character 'c' expecting '$'",
            ),
            (
                "SELECT $$abc  ",
                "line 1:13 mismatched character ' ' expecting '$'",
            ),
        ] {
            assert_eq!(error(text).as_deref(), Some(expected), "{text}");
        }
        assert_eq!(
            error("SELECT * FROM system.local /* x"),
            Some("line 1:31 mismatched character '<EOF>' expecting '*'".into())
        );
    }

    /// Cassandra 5.0.4: `SELECT -ip` fails at `p`, `SELECT -in ` at the space; `-v` is a
    /// minus and a name, `-NaN` one token.
    #[test]
    fn a_minus_before_n_or_i_must_start_nan_or_infinity() {
        let error = |text: &str| tokenize(text).err().map(|e| e.to_string());
        assert_eq!(
            error("SELECT -ip FROM t"),
            Some("line 1:9 mismatched character 'p' expecting set null".into())
        );
        assert_eq!(
            error("SELECT -in FROM t"),
            Some("line 1:10 mismatched character ' ' expecting set null".into())
        );
        assert_eq!(
            error("SELECT 1 - -NA"),
            Some("line 1:14 mismatched character '<EOF>' expecting set null".into())
        );
        use Kind::*;
        assert_eq!(
            kinds("-v - i -Infinity -nanx"),
            vec![
                (Minus, "-"),
                (Ident, "v"),
                (Minus, "-"),
                (Ident, "i"),
                (NegativeSpecial, "-Infinity"),
                (NegativeSpecial, "-nan"),
                (Ident, "x"),
            ]
        );
    }

    #[test]
    fn errors_carry_positions() {
        let err = tokenize("SELECT * FROM t\nWHERE a = @").err();
        let err = err.map(|e| (e.position, e.message));
        assert_eq!(
            err,
            Some((
                Some((2, 10)),
                "no viable alternative at character '@'".to_string()
            ))
        );
        let err = tokenize("SELECT 'abc").err().map(|e| e.message);
        assert_eq!(
            err.as_deref(),
            Some("mismatched character '<EOF>' expecting '''")
        );
    }
}
