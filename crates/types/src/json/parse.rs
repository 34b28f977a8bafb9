//! A JSON parser with Jackson's number classes and (for the common mistakes) its messages.
use super::Json;
use crate::limits::MAX_NESTING;
use num_bigint::BigInt;

/// Parses the first JSON value of `text` (leading whitespace allowed; anything after the value
/// is ignored, as Jackson's `readValue` does by default). The error is Jackson's message for
/// the first problem, with its `at [Source: ...]` location.
pub fn parse(text: &str) -> Result<Json, String> {
    let mut parser = Parser { text, pos: 0 };
    parser.skip_space();
    parser.value(0)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Jackson's location suffix: the source text and a 1-based line and column.
    fn location(&self, at: usize) -> String {
        let before = &self.text[..at.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        format!(
            "\n at [Source: (String)\"{}\"; line: {line}, column: {column}]",
            self.text
        )
    }

    fn error(&self, message: String, at: usize) -> String {
        format!("{message}{}", self.location(at))
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_NESTING {
            return Err(self.error(
                format!("JSON nests more than {MAX_NESTING} levels"),
                self.pos,
            ));
        }
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Json::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            None => Err(self.error("No content to map due to end-of-input".into(), self.pos)),
            Some(_) => self.word(),
        }
    }

    /// `true`, `false`, `null` or Jackson's "Unrecognized token" for anything else.
    fn word(&mut self) -> Result<Json, String> {
        let start = self.pos;
        let rest = &self.text[start..];
        let len = rest
            .char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map_or(rest.len(), |(i, _)| i)
            .max(rest.chars().next().map_or(0, char::len_utf8));
        let word = &rest[..len];
        self.pos += len;
        match word {
            "true" => Ok(Json::Bool(true)),
            "false" => Ok(Json::Bool(false)),
            "null" => Ok(Json::Null),
            _ => Err(self.error(
                format!(
                    "Unrecognized token '{word}': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
                ),
                self.pos,
            )),
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut end = start + usize::from(bytes[start] == b'-');
        let digits_start = end;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        if end == digits_start {
            self.pos = end;
            return Err(self.error(
                "Unexpected character: expected digit after minus sign".into(),
                end + 1,
            ));
        }
        let mut floating = false;
        if bytes.get(end) == Some(&b'.') {
            floating = true;
            end += 1;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
        }
        if matches!(bytes.get(end), Some(b'e' | b'E')) {
            floating = true;
            end += 1;
            if matches!(bytes.get(end), Some(b'+' | b'-')) {
                end += 1;
            }
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
        }
        self.pos = end;
        let text = &self.text[start..end];
        if floating {
            return text
                .parse::<f64>()
                .map(Json::Double)
                .map_err(|_| self.error(format!("Malformed numeric value ('{text}')"), end));
        }
        Ok(integer(text))
    }

    fn string(&mut self) -> Result<String, String> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.pos..];
            let Some(c) = rest.chars().next() else {
                return Err(self.error(
                    "Unexpected end-of-input: was expecting closing quote for a string value"
                        .into(),
                    self.pos,
                ));
            };
            self.pos += c.len_utf8();
            match c {
                '"' => return Ok(out),
                '\\' => out.push(self.escape()?),
                c if (c as u32) < 0x20 => {
                    return Err(self.error(
                        format!(
                            "Illegal unquoted character ((CTRL-CHAR, code {})): has to be escaped using backslash to be included in string value",
                            c as u32
                        ),
                        self.pos,
                    ))
                }
                c => out.push(c),
            }
            if self.pos > self.text.len() {
                return Err(self.error("Unexpected end-of-input".into(), start));
            }
        }
    }

    fn escape(&mut self) -> Result<char, String> {
        let Some(c) = self.text[self.pos..].chars().next() else {
            return Err(self.error(
                "Unexpected end-of-input in character escape sequence".into(),
                self.pos,
            ));
        };
        self.pos += c.len_utf8();
        Ok(match c {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => return self.unicode_escape(),
            other => {
                return Err(self.error(
                    format!(
                        "Unrecognized character escape '{other}' (code {})",
                        other as u32
                    ),
                    self.pos,
                ))
            }
        })
    }

    fn unicode_escape(&mut self) -> Result<char, String> {
        let first = self.hex4()?;
        if !(0xD800..0xDC00).contains(&first) {
            return Ok(char::from_u32(first).unwrap_or('\u{fffd}'));
        }
        if self.text[self.pos..].starts_with("\\u") {
            self.pos += 2;
            let second = self.hex4()?;
            let combined =
                0x10000 + ((first - 0xD800) << 10) + (second.wrapping_sub(0xDC00) & 0x3ff);
            return Ok(char::from_u32(combined).unwrap_or('\u{fffd}'));
        }
        Ok('\u{fffd}')
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.text.get(self.pos..self.pos + 4).unwrap_or("");
        let value = u32::from_str_radix(digits, 16)
            .ok()
            .filter(|_| digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_hexdigit()));
        self.pos += digits.len();
        value.ok_or_else(|| {
            self.error(
                "Unexpected character: expected a hex-digit for character escape sequence".into(),
                self.pos,
            )
        })
    }

    fn array(&mut self, depth: usize) -> Result<Json, String> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.skip_space();
            items.push(self.value(depth + 1)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                other => return Err(self.separator_error(other, ']', "ARRAY")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, String> {
        self.pos += 1;
        let mut entries: Vec<(String, Json)> = Vec::new();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Json::Object(entries));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Err(self.key_error());
            }
            let key = self.string()?;
            self.skip_space();
            if self.peek() != Some(b':') {
                return Err(self.separator_error(self.peek(), ':', "OBJECT"));
            }
            self.pos += 1;
            self.skip_space();
            let value = self.value(depth + 1)?;
            match entries.iter_mut().find(|(k, _)| *k == key) {
                Some(entry) => entry.1 = value,
                None => entries.push((key, value)),
            }
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Object(entries));
                }
                other => return Err(self.separator_error(other, '}', "OBJECT")),
            }
        }
    }

    fn key_error(&mut self) -> String {
        let found = self.text[self.pos..].chars().next();
        self.pos += found.map_or(0, char::len_utf8);
        match found {
            None => self.error(
                "Unexpected end-of-input: expected close marker for OBJECT".into(),
                self.pos,
            ),
            Some(c) => self.error(
                format!(
                    "Unexpected character ('{c}' (code {})): was expecting double-quote to start field name",
                    c as u32
                ),
                self.pos,
            ),
        }
    }

    fn separator_error(&mut self, found: Option<u8>, close: char, what: &str) -> String {
        match found {
            None => self.error(
                format!("Unexpected end-of-input: expected close marker for {what}"),
                self.pos,
            ),
            Some(_) => {
                let c = self.text[self.pos..].chars().next().unwrap_or(' ');
                self.pos += c.len_utf8();
                let expected = if close == ':' {
                    "was expecting a colon to separate field name and value".to_string()
                } else {
                    format!("was expecting comma to separate {what} entries")
                };
                self.error(
                    format!(
                        "Unexpected character ('{c}' (code {})): {expected}",
                        c as u32
                    ),
                    self.pos,
                )
            }
        }
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
