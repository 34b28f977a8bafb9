//! A JSON parser that reads as Cassandra's Jackson 2.13 does: the same number classes, the
//! same accepted documents (anything after the first value is ignored, except that a number
//! at the top must be followed by white space), and for every malformed document the error
//! Jackson raises first, with its class, message and `at [Source: ...]` location.
use super::error::{self, JsonError, Place, EOF, PARSE};
use super::Json;
use crate::limits::MAX_NESTING;
use num_bigint::BigInt;

/// Parses the first JSON value of `text`, as Jackson's `readValue(text, Object.class)`.
pub fn parse(text: &str) -> Result<Json, JsonError> {
    let mut parser = Parser::new(text);
    let Some(c) = parser.next_token_char()? else {
        return Err(error::no_content(text));
    };
    let start = parser.pos - c.len_utf8();
    parser.root_value(c, start)
}

/// Parses `text` as Jackson's `readValue(text, Map.class)`: an object's entries, `None` for
/// `null`, and databind's errors for any other value (`INSERT JSON`'s document).
pub fn parse_object(text: &str) -> Result<Option<Vec<(String, Json)>>, JsonError> {
    let mut parser = Parser::new(text);
    let Some(c) = parser.next_token_char()? else {
        return Err(error::no_content(text));
    };
    let start = parser.pos - c.len_utf8();
    let token = parser.place(start);
    let value = match c {
        '{' => return parser.object(start, 1, true).map(Some),
        '[' => Json::Array(Vec::new()),
        _ => parser.root_value(c, start)?,
    };
    match value {
        Json::Null => Ok(None),
        other => Err(error::not_a_map(text, &other, token)),
    }
}

struct Parser<'a> {
    text: &'a str,
    /// Byte offset of the next character.
    pos: usize,
    /// The current line (1-based) and the byte offset where it starts.
    line: usize,
    line_start: usize,
}

/// Where a value stands, for the one message that depends on it: a `}` where a value should
/// be is "expected a value" when Jackson reads the value with `nextToken()` (array elements,
/// the first entry of an object read as an untyped value) and "expected a valid value" when
/// it reads it with `nextFieldName()` (later entries, every entry of `INSERT JSON`'s map).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Root,
    ArrayElement,
    FirstEntry,
    Entry,
}

const VALID_VALUES: &str =
    "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')";

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        Parser {
            text,
            pos: 0,
            line: 1,
            line_start: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// The line and 1-based column of the character at byte offset `at` (columns count
    /// UTF-16 units, as Java's do).
    fn place(&self, at: usize) -> Place {
        let start = self.line_start.min(at);
        let units: usize = self.text[start..at].chars().map(char::len_utf16).sum();
        Place {
            line: self.line,
            column: units + 1,
        }
    }

    /// An error located at the current position.
    fn fail(&self, class: &'static str, message: String) -> JsonError {
        JsonError::new(class, message, self.text, self.place(self.pos))
    }

    fn unexpected(&self, c: char, comment: &str) -> JsonError {
        let message = format!("Unexpected character ({}): {comment}", error::char_desc(c));
        self.fail(PARSE, message)
    }

    /// Skips white space between tokens and returns the next character (consumed), `None` at
    /// the end. Comments are refused, as are control characters other than `\t`, `\r`, `\n`.
    fn next_token_char(&mut self) -> Result<Option<char>, JsonError> {
        loop {
            let Some(c) = self.bump() else {
                return Ok(None);
            };
            match c {
                ' ' | '\t' => {}
                '\n' => self.new_line(),
                '\r' => {
                    if self.peek() == Some('\n') {
                        self.pos += 1;
                    }
                    self.new_line();
                }
                '/' => {
                    return Err(self.unexpected(
                        '/',
                        "maybe a (non-standard) comment? (not recognized as one since Feature 'ALLOW_COMMENTS' not enabled for parser)",
                    ))
                }
                c if (c as u32) < 0x20 => {
                    return Err(self.fail(
                        PARSE,
                        format!(
                            "Illegal character ({}): only regular white space (\\r, \\n, \\t) is allowed between tokens",
                            error::char_desc(c)
                        ),
                    ))
                }
                c => return Ok(Some(c)),
            }
        }
    }

    fn new_line(&mut self) {
        self.line += 1;
        self.line_start = self.pos;
    }

    /// A value at the top of the document; a top-level close marker is Jackson's
    /// mismatched-marker error "for root".
    fn root_value(&mut self, c: char, start: usize) -> Result<Json, JsonError> {
        if matches!(c, ']' | '}') {
            let expected = if c == ']' { '}' } else { ']' };
            let message = format!(
                "Unexpected close marker '{c}': expected '{expected}' (for root starting at {})",
                error::source(self.text, Place { line: 1, column: 0 })
            );
            return Err(self.fail(PARSE, message));
        }
        self.value(c, start, Slot::Root, 0)
    }

    /// A value whose first character `c` (at byte `start`) was just consumed.
    fn value(
        &mut self,
        c: char,
        start: usize,
        slot: Slot,
        depth: usize,
    ) -> Result<Json, JsonError> {
        if depth > MAX_NESTING {
            return Err(self.fail(PARSE, format!("JSON nests more than {MAX_NESTING} levels")));
        }
        match c {
            '"' => self.string(false).map(Json::String),
            '[' => self.array(start, depth + 1),
            '{' => self.object(start, depth + 1, false).map(Json::Object),
            '}' if matches!(slot, Slot::ArrayElement | Slot::FirstEntry) => {
                Err(self.unexpected('}', "expected a value"))
            }
            't' => self.keyword("true", Json::Bool(true)),
            'f' => self.keyword("false", Json::Bool(false)),
            'n' => self.keyword("null", Json::Null),
            '-' | '0'..='9' => self.number(start, slot == Slot::Root),
            _ => Err(self.odd_value(c)),
        }
    }

    /// A character that starts no JSON value (Jackson's `_handleOddValue`).
    fn odd_value(&mut self, c: char) -> JsonError {
        let non_standard = |p: &mut Self, word: &str| {
            match p.match_rest(word, 1) {
            Err(e) => e,
            Ok(()) => p.fail(
                PARSE,
                format!(
                    "Non-standard token '{word}': enable JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS to allow"
                ),
            ),
        }
        };
        match c {
            'N' => non_standard(self, "NaN"),
            'I' => non_standard(self, "Infinity"),
            '+' => match self.bump() {
                None => self.fail(EOF, "Unexpected end-of-input in a Number value".into()),
                Some(next) => self.invalid_number_start(next, false),
            },
            c if error::is_identifier_start(c) => self.invalid_token(c.to_string()),
            c => self.unexpected(c, &format!("expected a valid value {VALID_VALUES}")),
        }
    }

    /// `true`, `false` or `null`, whose first letter was consumed.
    fn keyword(&mut self, word: &str, value: Json) -> Result<Json, JsonError> {
        self.match_rest(word, 1).map(|()| value)
    }

    /// Matches `word` from its `matched`-th character on (Jackson's `_matchToken`): a
    /// difference, the end, or a letter or digit right after it is "Unrecognized token".
    fn match_rest(&mut self, word: &str, matched: usize) -> Result<(), JsonError> {
        for (i, expected) in word.chars().enumerate().skip(matched) {
            if self.peek() != Some(expected) {
                return Err(self.invalid_token(word.chars().take(i).collect()));
            }
            self.pos += expected.len_utf8();
        }
        match self.peek() {
            Some(c) if c >= '0' && c != ']' && c != '}' && error::is_identifier_part(c) => {
                Err(self.invalid_token(word.to_string()))
            }
            _ => Ok(()),
        }
    }

    /// "Unrecognized token": the token is `prefix` and the identifier characters after it.
    fn invalid_token(&mut self, prefix: String) -> JsonError {
        let mut token = prefix;
        while let Some(c) = self.peek().filter(|c| error::is_identifier_part(*c)) {
            self.pos += c.len_utf8();
            token.push(c);
            if token.chars().count() >= 256 {
                token.push_str("...");
                break;
            }
        }
        self.fail(
            PARSE,
            format!("Unrecognized token '{token}': was expecting {VALID_VALUES}"),
        )
    }

    /// A sign followed by `c` (consumed), which is not a digit.
    fn invalid_number_start(&mut self, c: char, negative: bool) -> JsonError {
        let mut c = c;
        if c == 'I' {
            let Some(next) = self.bump() else {
                return self.fail(EOF, "Unexpected end-of-input in a Number value".into());
            };
            let sign = if negative { "-" } else { "+" };
            let word = match next {
                'N' => Some(format!("{sign}INF")),
                'n' => Some(format!("{sign}Infinity")),
                _ => None,
            };
            if let Some(word) = word {
                return match self.match_rest(&word, 3) {
                    Err(e) => e,
                    Ok(()) => self.fail(
                        PARSE,
                        format!("Non-standard token '{word}': enable JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS to allow"),
                    ),
                };
            }
            c = next;
        }
        self.number_char(
            c,
            "expected digit (0-9) to follow minus sign, for valid numeric value",
        )
    }

    fn number_char(&self, c: char, comment: &str) -> JsonError {
        let message = format!(
            "Unexpected character ({}) in numeric value: {comment}",
            error::char_desc(c)
        );
        self.fail(PARSE, message)
    }

    fn digits(&mut self) -> usize {
        let from = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - from
    }

    /// A number starting at byte `start`, its first character consumed. Jackson scans most
    /// numbers on a fast path that reports a bad fraction or exponent at the character after
    /// the first `.` or `e`; numbers with a leading zero take its slow path, which reports
    /// them after the offending character.
    fn number(&mut self, start: usize, root: bool) -> Result<Json, JsonError> {
        let negative = self.text[start..].starts_with('-');
        if negative {
            match self.bump() {
                None => {
                    return Err(self.fail(
                        EOF,
                        "Unexpected end-of-inputNo digit following minus sign".into(),
                    ))
                }
                Some(c) if !c.is_ascii_digit() => return Err(self.invalid_number_start(c, true)),
                Some(_) => {}
            }
        }
        let zero = self.text.as_bytes()[self.pos - 1] == b'0';
        if zero && self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return Err(self.fail(
                PARSE,
                "Invalid numeric value: Leading zeroes not allowed".into(),
            ));
        }
        self.digits();
        let mut mark = None;
        let mut floating = false;
        if self.peek() == Some('.') {
            self.pos += 1;
            mark = Some(self.pos);
            floating = true;
            if self.digits() == 0 {
                return Err(self.bad_number_part(
                    '.',
                    mark,
                    zero,
                    "Decimal point not followed by a digit",
                ));
            }
        }
        if let Some('e' | 'E') = self.peek() {
            self.pos += 1;
            mark.get_or_insert(self.pos);
            floating = true;
            if let Some('+' | '-') = self.peek() {
                self.pos += 1;
            }
            if self.peek().is_none() {
                return Err(self.fail(
                    EOF,
                    "Unexpected end-of-inputexpected a digit for number exponent".into(),
                ));
            }
            if self.digits() == 0 {
                return Err(self.bad_number_part(
                    'e',
                    mark,
                    zero,
                    "Exponent indicator not followed by a digit",
                ));
            }
        }
        if root {
            self.root_space()?;
        }
        let text = &self.text[start..self.pos];
        if floating {
            return Ok(Json::Double(text.parse().unwrap_or(f64::NAN)));
        }
        Ok(integer(text))
    }

    /// A fraction or exponent without digits: the character found instead (`at_end` when the
    /// text ends there), located as Jackson's fast or slow path locates it.
    fn bad_number_part(
        &mut self,
        at_end: char,
        mark: Option<usize>,
        slow: bool,
        comment: &str,
    ) -> JsonError {
        let Some(c) = self.peek() else {
            return self.number_char(at_end, comment);
        };
        self.pos += c.len_utf8();
        if !slow {
            self.pos = mark.unwrap_or(self.pos);
        }
        self.number_char(c, comment)
    }

    /// A number at the top of the document must be followed by white space or the end.
    fn root_space(&mut self) -> Result<(), JsonError> {
        match self.peek() {
            None | Some(' ' | '\t' | '\r' | '\n') => Ok(()),
            Some(c) => {
                self.pos += c.len_utf8();
                Err(self.unexpected(c, "Expected space separating root-level values"))
            }
        }
    }

    /// A string or field name after its opening quote. Escaped lone surrogates become `?`,
    /// as Java's UTF-8 encoder writes them.
    fn string(&mut self, name: bool) -> Result<String, JsonError> {
        let mut out = Utf16Builder::default();
        loop {
            let Some(c) = self.bump() else {
                let message = if name {
                    "Unexpected end-of-input in field name"
                } else {
                    "Unexpected end-of-input: was expecting closing quote for a string value"
                };
                return Err(self.fail(EOF, message.into()));
            };
            match c {
                '"' => return Ok(out.finish()),
                '\\' => self.escape(&mut out)?,
                c if (c as u32) < 0x20 => {
                    let context = if name { "name" } else { "string value" };
                    return Err(self.fail(
                        PARSE,
                        format!(
                            "Illegal unquoted character ({}): has to be escaped using backslash to be included in {context}",
                            error::char_desc(c)
                        ),
                    ));
                }
                c => out.push(c),
            }
        }
    }

    fn escape(&mut self, out: &mut Utf16Builder) -> Result<(), JsonError> {
        let eof = |p: &Self| {
            p.fail(
                EOF,
                "Unexpected end-of-input in character escape sequence".into(),
            )
        };
        let c = self.bump().ok_or_else(|| eof(self))?;
        let plain = match c {
            'b' => '\u{8}',
            't' => '\t',
            'n' => '\n',
            'f' => '\u{c}',
            'r' => '\r',
            '"' | '/' | '\\' => c,
            'u' => {
                let mut unit = 0u32;
                for _ in 0..4 {
                    let h = self.bump().ok_or_else(|| eof(self))?;
                    let digit = h.to_digit(16).ok_or_else(|| {
                        self.unexpected(h, "expected a hex-digit for character escape sequence")
                    })?;
                    unit = unit << 4 | digit;
                }
                out.push_unit(unit as u16);
                return Ok(());
            }
            other => {
                return Err(self.fail(
                    PARSE,
                    format!("Unrecognized character escape {}", error::char_desc(other)),
                ))
            }
        };
        out.push(plain);
        Ok(())
    }

    /// The close marker `c` where the other one was due: Jackson's mismatched-marker error.
    fn mismatched_close(&self, c: char, open: usize, what: &str) -> JsonError {
        let expected = if c == ']' { '}' } else { ']' };
        let message = format!(
            "Unexpected close marker '{c}': expected '{expected}' (for {what} starting at {})",
            error::source(self.text, self.place_of_open(open))
        );
        self.fail(PARSE, message)
    }

    /// The place of an opening bracket at byte `open` (on the current line or an earlier
    /// one).
    fn place_of_open(&self, open: usize) -> Place {
        let before = &self.text[..open];
        let line_start = before.rfind(['\n', '\r']).map_or(0, |i| i + 1);
        let line = 1 + before.matches('\n').count() + before.matches('\r').count()
            - before.matches("\r\n").count();
        let units: usize = before[line_start..].chars().map(char::len_utf16).sum();
        Place {
            line,
            column: units + 1,
        }
    }

    /// The end of the text inside an array or object: "expected close marker".
    fn unclosed(&self, open: usize, what: &str) -> JsonError {
        self.fail(
            EOF,
            format!(
                "Unexpected end-of-input: expected close marker for {what} (start marker at {})",
                error::source(self.text, self.place_of_open(open))
            ),
        )
    }

    /// The next token after a comma; the end there is "within/between ... entries".
    fn after_comma(&mut self, what: &str) -> Result<char, JsonError> {
        self.next_token_char()?.ok_or_else(|| {
            self.fail(
                PARSE,
                format!("Unexpected end-of-input within/between {what} entries"),
            )
        })
    }

    fn array(&mut self, open: usize, depth: usize) -> Result<Json, JsonError> {
        let mut items = Vec::new();
        let mut c = self
            .next_token_char()?
            .ok_or_else(|| self.unclosed(open, "Array"))?;
        if c == ']' {
            return Ok(Json::Array(items));
        }
        loop {
            if c == '}' && items.is_empty() {
                return Err(self.mismatched_close('}', open, "Array"));
            }
            let start = self.pos - c.len_utf8();
            items.push(self.value(c, start, Slot::ArrayElement, depth)?);
            match self.next_token_char()? {
                None => return Err(self.unclosed(open, "Array")),
                Some(']') => return Ok(Json::Array(items)),
                Some('}') => return Err(self.mismatched_close('}', open, "Array")),
                Some(',') => c = self.after_comma("Array")?,
                Some(other) => {
                    return Err(
                        self.unexpected(other, "was expecting comma to separate Array entries")
                    )
                }
            }
        }
    }

    /// An object's entries (a repeated key keeps its first place and its last value, as a
    /// `LinkedHashMap` does). `map` is set for `INSERT JSON`'s document, which Jackson reads
    /// as a typed map.
    fn object(
        &mut self,
        open: usize,
        depth: usize,
        map: bool,
    ) -> Result<Vec<(String, Json)>, JsonError> {
        let mut entries: Vec<(String, Json)> = Vec::new();
        let mut c = self
            .next_token_char()?
            .ok_or_else(|| self.unclosed(open, "Object"))?;
        match c {
            '}' => return Ok(entries),
            ']' => return Err(self.mismatched_close(']', open, "Object")),
            _ => {}
        }
        let mut slot = if map { Slot::Entry } else { Slot::FirstEntry };
        loop {
            if c != '"' {
                return Err(self.unexpected(c, "was expecting double-quote to start field name"));
            }
            let key = self.string(true)?;
            let between = |p: &Self| {
                p.fail(
                    EOF,
                    "Unexpected end-of-input within/between Object entries".into(),
                )
            };
            match self.next_token_char()? {
                Some(':') => {}
                Some(other) => {
                    return Err(self.unexpected(
                        other,
                        "was expecting a colon to separate field name and value",
                    ))
                }
                None => return Err(between(self)),
            }
            let v = self.next_token_char()?.ok_or_else(|| between(self))?;
            let start = self.pos - v.len_utf8();
            let value = self.value(v, start, slot, depth)?;
            slot = Slot::Entry;
            match entries.iter_mut().find(|(k, _)| *k == key) {
                Some(entry) => entry.1 = value,
                None => entries.push((key, value)),
            }
            match self.next_token_char()? {
                None => return Err(self.unclosed(open, "Object")),
                Some('}') => return Ok(entries),
                Some(']') => return Err(self.mismatched_close(']', open, "Object")),
                Some(',') => c = self.after_comma("Object")?,
                Some(other) => {
                    return Err(
                        self.unexpected(other, "was expecting comma to separate Object entries")
                    )
                }
            }
        }
    }
}

/// Builds a string from characters and escaped UTF-16 units, pairing surrogates.
#[derive(Default)]
struct Utf16Builder {
    out: String,
    high: Option<u16>,
}

impl Utf16Builder {
    fn push(&mut self, c: char) {
        self.flush();
        self.out.push(c);
    }

    fn push_unit(&mut self, unit: u16) {
        match (self.high.take(), unit) {
            (Some(high), 0xDC00..=0xDFFF) => {
                let code =
                    0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
                self.out.push(char::from_u32(code).unwrap_or('?'));
            }
            (pending, 0xD800..=0xDBFF) => {
                if pending.is_some() {
                    self.out.push('?');
                }
                self.high = Some(unit);
            }
            (pending, unit) => {
                if pending.is_some() {
                    self.out.push('?');
                }
                self.out
                    .push(char::from_u32(u32::from(unit)).unwrap_or('?'));
            }
        }
    }

    fn flush(&mut self) {
        if self.high.take().is_some() {
            self.out.push('?');
        }
    }

    fn finish(mut self) -> String {
        self.flush();
        self.out
    }
}

/// A whole number in the smallest of Java's `int`, `long` and `BigInteger` that holds it.
fn integer(text: &str) -> Json {
    if let Ok(v) = text.parse::<i32>() {
        return Json::Int(v);
    }
    if let Ok(v) = text.parse::<i64>() {
        return Json::Long(v);
    }
    match text.parse::<BigInt>() {
        Ok(v) => Json::BigInt(v),
        Err(_) => Json::Double(f64::NAN),
    }
}
