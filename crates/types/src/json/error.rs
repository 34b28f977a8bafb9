//! Jackson's errors as Cassandra shows them: the exception class, the message and its
//! `at [Source: (String)"..."; line: L, column: C]` location.
use std::fmt;

use super::Json;

pub const EOF: &str = "com.fasterxml.jackson.core.io.JsonEOFException";
pub const PARSE: &str = "com.fasterxml.jackson.core.JsonParseException";
const MISMATCHED: &str = "com.fasterxml.jackson.databind.exc.MismatchedInputException";
const INVALID_FORMAT: &str = "com.fasterxml.jackson.databind.exc.InvalidFormatException";

/// How much of the document a location shows (Jackson's `DEFAULT_MAX_CONTENT_SNIPPET`).
const MAX_SNIPPET: usize = 500;

const MAP_TYPE: &str = "`java.util.LinkedHashMap<java.lang.Object,java.lang.Object>`";

/// A line and column (1-based, in UTF-16 units) of the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub line: usize,
    pub column: usize,
}

/// A Jackson exception: `Display` is its `getMessage()`, `java_string` its `toString()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    pub class: &'static str,
    pub message: String,
}

impl JsonError {
    pub fn new(class: &'static str, message: String, text: &str, place: Place) -> JsonError {
        JsonError {
            class,
            message: format!("{message}\n at {}", source(text, place)),
        }
    }

    /// `class: message`, as Java's `Throwable.toString()`.
    pub fn java_string(&self) -> String {
        format!("{}: {}", self.class, self.message)
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// `[Source: (String)"..."; line: L, column: C]`: at most 500 UTF-16 units of the document
/// (then `[truncated N chars]` after the closing quote), control characters other than `\r`
/// and `\n` escaped.
pub fn source(text: &str, place: Place) -> String {
    let mut snippet = String::new();
    let mut units = 0;
    for c in text.chars() {
        if units + c.len_utf16() > MAX_SNIPPET {
            if units < MAX_SNIPPET {
                snippet.push('?');
            }
            break;
        }
        units += c.len_utf16();
        if is_iso_control(c) && c != '\r' && c != '\n' {
            snippet.push_str(&format!("\\u{:04X}", c as u32));
        } else {
            snippet.push(c);
        }
    }
    let total: usize = text.chars().map(char::len_utf16).sum();
    let truncated = match total.checked_sub(MAX_SNIPPET) {
        Some(over) if over > 0 => format!("[truncated {over} chars]"),
        _ => String::new(),
    };
    format!(
        "[Source: (String)\"{snippet}\"{truncated}; line: {}, column: {}]",
        place.line, place.column
    )
}

fn is_iso_control(c: char) -> bool {
    matches!(c as u32, 0..=0x1f | 0x7f..=0x9f)
}

/// Jackson's description of a character in messages: `'x' (code 120)`, `(CTRL-CHAR, code 9)`,
/// `'é' (code 233)`, `'€' (code 8364 / 0x20ac)`. A character beyond the BMP is its high
/// surrogate to Java, which shows as `?`.
pub fn char_desc(c: char) -> String {
    let code = c as u32;
    if is_iso_control(c) {
        return format!("(CTRL-CHAR, code {code})");
    }
    if code > 0xffff {
        let mut units = [0u16; 2];
        let high = c.encode_utf16(&mut units)[0];
        return format!("'?' (code {high} / 0x{high:x})");
    }
    if code > 255 {
        return format!("'{c}' (code {code} / 0x{code:x})");
    }
    format!("'{c}' (code {code})")
}

/// Java's `Character.isJavaIdentifierStart`, closely enough for messages: letters, letter
/// numbers, `$`, `_` and currency signs.
pub fn is_identifier_start(c: char) -> bool {
    c.is_alphabetic()
        || c == '$'
        || c == '_'
        || ('\u{a2}'..='\u{a5}').contains(&c)
        || ('\u{20a0}'..='\u{20cf}').contains(&c)
}

/// Java's `Character.isJavaIdentifierPart`, closely enough for messages: identifier starts,
/// digits, and the control characters Java ignores in identifiers.
pub fn is_identifier_part(c: char) -> bool {
    is_identifier_start(c)
        || c.is_numeric()
        || matches!(c as u32, 0..=8 | 0x0e..=0x1b | 0x7f..=0x9f)
}

/// An empty or blank document (databind's error, always at line 1, column 0).
pub fn no_content(text: &str) -> JsonError {
    JsonError::new(
        MISMATCHED,
        "No content to map due to end-of-input".into(),
        text,
        Place { line: 1, column: 0 },
    )
}

/// A document that is not an object, read as a map (`place` is where the value starts).
pub fn not_a_map(text: &str, value: &Json, place: Place) -> JsonError {
    let (class, message) = match value {
        Json::String(s) if s.is_empty() => (
            INVALID_FORMAT,
            format!("Cannot coerce empty String (\"\") to element of {MAP_TYPE} (but could if coercion was enabled using `CoercionConfig`)"),
        ),
        Json::String(s) => (
            MISMATCHED,
            format!("Cannot construct instance of `java.util.LinkedHashMap` (although at least one Creator exists): no String-argument constructor/factory method to deserialize from String value ('{s}')"),
        ),
        other => {
            let (shape, token) = match other {
                Json::Array(_) => ("Array", "START_ARRAY"),
                Json::Bool(true) => ("Boolean", "VALUE_TRUE"),
                Json::Bool(false) => ("Boolean", "VALUE_FALSE"),
                Json::Double(_) => ("Floating-point", "VALUE_NUMBER_FLOAT"),
                _ => ("Integer", "VALUE_NUMBER_INT"),
            };
            (
                MISMATCHED,
                format!("Cannot deserialize value of type {MAP_TYPE} from {shape} value (token `JsonToken.{token}`)"),
            )
        }
    };
    JsonError::new(class, message, text, place)
}
