//! Parsing type text (`frozen<map<text, int>>`, `vector<float, 3>`, `'org.Custom'`, UDT names)
//! as written in CQL and stored in `system_schema.columns.type`.
use super::{CqlType, NativeType, UdtType};
use crate::error::TypeError;
use crate::limits::MAX_NESTING;
use std::sync::Arc;

#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Str(String),
    Lt,
    Gt,
    Comma,
}

type UdtLookup<'a> = &'a dyn Fn(&str) -> Option<Arc<UdtType>>;

impl CqlType {
    /// Parses type text; UDT names are resolved through `udts` (unquoted names lower-cased).
    /// Types nested in `frozen<...>`, tuples and vectors are frozen; a non-frozen collection or
    /// UDT inside a non-frozen collection is an error, as in Cassandra.
    pub fn parse(s: &str, udts: UdtLookup<'_>) -> Result<CqlType, TypeError> {
        let tokens = tokenize(s)?;
        let mut parser = Parser {
            tokens,
            pos: 0,
            udts,
            text: s,
            depth: 0,
        };
        let ty = parser.parse_type(false)?;
        match parser.tokens.get(parser.pos) {
            None => Ok(ty),
            Some(_) => Err(parser.syntax_error()),
        }
    }
}

fn tokenize(s: &str) -> Result<Vec<Token>, TypeError> {
    let mut tokens = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '<' => tokens.push(Token::Lt),
            '>' => tokens.push(Token::Gt),
            ',' => tokens.push(Token::Comma),
            '"' => tokens.push(Token::Quoted(quoted(&mut chars, '"', s)?)),
            '\'' => tokens.push(Token::Str(quoted(&mut chars, '\'', s)?)),
            c if is_word_char(c) => {
                let mut word = c.to_string();
                while let Some(&next) = chars.peek().filter(|&&n| is_word_char(n)) {
                    word.push(next);
                    chars.next();
                }
                tokens.push(Token::Word(word));
            }
            _ => return Err(TypeError(format!("Invalid type syntax: {s}"))),
        }
    }
    Ok(tokens)
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.' || c == '$'
}

/// Reads up to the closing `quote`, where a doubled quote stands for one.
fn quoted(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    quote: char,
    s: &str,
) -> Result<String, TypeError> {
    let mut out = String::new();
    while let Some(c) = chars.next() {
        if c != quote {
            out.push(c);
        } else if chars.peek() == Some(&quote) {
            out.push(quote);
            chars.next();
        } else {
            return Ok(out);
        }
    }
    Err(TypeError(format!("Invalid type syntax: {s}")))
}

struct Parser<'a> {
    tokens: Vec<Token>,
    pos: usize,
    udts: UdtLookup<'a>,
    text: &'a str,
    /// `<` levels open at the cursor.
    depth: usize,
}

impl Parser<'_> {
    fn syntax_error(&self) -> TypeError {
        TypeError(format!("Invalid type syntax: {}", self.text))
    }

    fn next(&mut self) -> Option<&Token> {
        let token = self.tokens.get(self.pos);
        self.pos += 1;
        token
    }

    fn expect(&mut self, expected: Token) -> Result<(), TypeError> {
        match self.next() {
            Some(t) if *t == expected => Ok(()),
            _ => Err(self.syntax_error()),
        }
    }

    /// Consumes the `<` of a parameterised type: one nesting level deeper, at most
    /// `MAX_NESTING`, so that no type text can exhaust the stack.
    fn open(&mut self) -> Result<(), TypeError> {
        self.expect(Token::Lt)?;
        if self.depth >= MAX_NESTING {
            return Err(TypeError(format!(
                "Invalid type syntax: types nest at most {MAX_NESTING} levels"
            )));
        }
        self.depth += 1;
        Ok(())
    }

    /// Consumes the `>` that closes a level opened by `open`.
    fn close(&mut self) -> Result<(), TypeError> {
        self.expect(Token::Gt)?;
        self.depth -= 1;
        Ok(())
    }

    fn at_comma(&self) -> bool {
        self.tokens.get(self.pos) == Some(&Token::Comma)
    }

    fn parse_type(&mut self, in_frozen: bool) -> Result<CqlType, TypeError> {
        match self.next() {
            Some(Token::Str(class)) => Ok(CqlType::Custom(class.clone())),
            Some(Token::Quoted(name)) => {
                let name = name.clone();
                self.udt(&name)
            }
            Some(Token::Word(word)) => {
                let word = word.to_ascii_lowercase();
                self.parse_word(&word, in_frozen)
            }
            _ => Err(self.syntax_error()),
        }
    }

    fn parse_word(&mut self, word: &str, in_frozen: bool) -> Result<CqlType, TypeError> {
        match word {
            "frozen" => self.parse_frozen(),
            "list" => Ok(CqlType::List(Box::new(self.single_param(in_frozen)?))),
            "set" => Ok(CqlType::Set(Box::new(self.single_param(in_frozen)?))),
            "map" => self.parse_map(in_frozen),
            "tuple" => self.parse_tuple(),
            "vector" => self.parse_vector(),
            _ => match NativeType::from_name(word) {
                Some(native) => Ok(CqlType::Native(native)),
                None => self.udt(word),
            },
        }
    }

    fn udt(&self, name: &str) -> Result<CqlType, TypeError> {
        match (self.udts)(name) {
            Some(udt) => Ok(CqlType::Udt(udt)),
            None => Err(TypeError(format!("Unknown type {name}"))),
        }
    }

    /// `frozen<…>` marks the type inside it and is no level of its own: the schema's text of a
    /// type nested to the limit (`frozen<tuple<frozen<tuple<…>>>>`, as system_schema writes
    /// it) parses like the CQL the client wrote.
    fn parse_frozen(&mut self) -> Result<CqlType, TypeError> {
        self.expect(Token::Lt)?;
        let inner = self.parse_type(true)?;
        self.expect(Token::Gt)?;
        match inner {
            CqlType::Native(_) | CqlType::Vector(..) | CqlType::Custom(_) => Err(TypeError(
                format!(
                    "frozen<> is only allowed on collections, tuples, and user-defined types (got {})",
                    inner.cql_name()
                ),
            )),
            other => Ok(other.freeze()),
        }
    }

    fn single_param(&mut self, in_frozen: bool) -> Result<CqlType, TypeError> {
        self.open()?;
        let element = self.collection_element(in_frozen)?;
        self.close()?;
        Ok(element)
    }

    fn parse_map(&mut self, in_frozen: bool) -> Result<CqlType, TypeError> {
        self.open()?;
        let key = self.collection_element(in_frozen)?;
        self.expect(Token::Comma)?;
        let value = self.collection_element(in_frozen)?;
        self.close()?;
        Ok(CqlType::Map(Box::new(key), Box::new(value)))
    }

    /// A collection element: frozen inside `frozen<...>`, otherwise it must not be multi-cell.
    fn collection_element(&mut self, in_frozen: bool) -> Result<CqlType, TypeError> {
        let element = self.parse_type(in_frozen)?;
        if element.is_counter() {
            return Err(TypeError(format!(
                "Counters are not allowed inside collections: {}",
                self.text
            )));
        }
        match element {
            CqlType::Udt(_) if !in_frozen => Err(TypeError(format!(
                "Non-frozen UDTs are not allowed inside collections: {}",
                self.text
            ))),
            e if e.is_multi_cell() && !in_frozen => Err(TypeError(format!(
                "Non-frozen collections are not allowed inside collections: {}",
                self.text
            ))),
            e => Ok(e.freeze()),
        }
    }

    fn parse_tuple(&mut self) -> Result<CqlType, TypeError> {
        self.open()?;
        let mut items = vec![self.parse_type(true)?.freeze()];
        while self.at_comma() {
            self.pos += 1;
            items.push(self.parse_type(true)?.freeze());
        }
        self.close()?;
        Ok(CqlType::Tuple(items))
    }

    fn parse_vector(&mut self) -> Result<CqlType, TypeError> {
        self.open()?;
        let element = self.parse_type(true)?.freeze();
        self.expect(Token::Comma)?;
        let dimension = match self.next() {
            Some(Token::Word(w)) => w.clone(),
            _ => return Err(self.syntax_error()),
        };
        self.close()?;
        match dimension.parse::<u32>() {
            Ok(n) if n > 0 && n <= i32::MAX as u32 => Ok(CqlType::Vector(Box::new(element), n)),
            _ => Err(TypeError(format!(
                "vectors may only have positive dimensions; given {dimension}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address() -> Arc<UdtType> {
        Arc::new(UdtType::new(
            "ks",
            "address",
            vec![("street".into(), CqlType::native(NativeType::Text))],
        ))
    }

    fn lookup(name: &str) -> Option<Arc<UdtType>> {
        (name == "address").then(address)
    }

    fn parse(s: &str) -> Result<CqlType, TypeError> {
        CqlType::parse(s, &lookup)
    }

    fn round_trip(s: &str) {
        assert_eq!(parse(s).map(|t| t.cql_name()), Ok(s.to_string()), "{s}");
    }

    #[test]
    fn natives_case_insensitive() {
        assert_eq!(parse("INT"), Ok(CqlType::native(NativeType::Int)));
        assert_eq!(parse(" varchar "), Ok(CqlType::native(NativeType::Text)));
        assert_eq!(parse("TimeUUID"), Ok(CqlType::native(NativeType::Timeuuid)));
    }

    #[test]
    fn cassandra_texts_round_trip() {
        for s in [
            "int",
            "list<int>",
            "frozen<list<int>>",
            "map<text, frozen<set<uuid>>>",
            "frozen<tuple<int, text>>",
            "vector<float, 3>",
            "address",
            "frozen<address>",
            "list<frozen<address>>",
            "frozen<map<frozen<list<int>>, frozen<tuple<int, frozen<address>>>>>",
            "'org.apache.cassandra.db.marshal.DynamicCompositeType'",
        ] {
            round_trip(s);
        }
    }

    #[test]
    fn implicit_freezing() {
        assert_eq!(
            parse("tuple<int,text>").map(|t| t.cql_name()),
            Ok("frozen<tuple<int, text>>".into())
        );
        assert_eq!(
            parse("FROZEN<list<set<int>>>").map(|t| t.cql_name()),
            Ok("frozen<list<frozen<set<int>>>>".into())
        );
        assert_eq!(
            parse("tuple<list<int>>").map(|t| t.cql_name()),
            Ok("frozen<tuple<frozen<list<int>>>>".into())
        );
    }

    #[test]
    fn quoted_udt_names_keep_case() {
        let upper = |name: &str| (name == "Addr").then(address);
        assert!(CqlType::parse("\"Addr\"", &upper).is_ok());
        assert!(CqlType::parse("Addr", &upper).is_err());
    }

    #[test]
    fn nesting_limit_at_and_past_on_a_worker_stack() {
        let nested =
            |d: usize| format!("{}int{}", "frozen<list<".repeat(d / 2), ">>".repeat(d / 2));
        let at_limit = nested(MAX_NESTING);
        let parsed = crate::limits::on_worker_stack(|| parse(&at_limit).map(|t| t.nesting_depth()));
        assert_eq!(parsed, Ok(MAX_NESTING / 2));
        // a type at the limit reads back from its schema text, where each level is frozen
        let frozen_tuples =
            |d: usize| format!("{}int{}", "frozen<tuple<".repeat(d), ">>".repeat(d));
        let schema_text = crate::limits::on_worker_stack(|| parse(&frozen_tuples(MAX_NESTING)));
        assert!(schema_text.is_ok(), "{schema_text:?}");
        let tuples = |d: usize| format!("{}int{}", "tuple<".repeat(d), ">".repeat(d));
        assert!(parse(&tuples(MAX_NESTING)).is_ok());
        for depth in [MAX_NESTING + 1, 3_000, 100_000] {
            let refused = crate::limits::on_worker_stack(|| parse(&tuples(depth)));
            assert_eq!(
                refused,
                Err(TypeError(
                    "Invalid type syntax: types nest at most 100 levels".into()
                )),
                "{depth}"
            );
        }
    }

    #[test]
    fn errors() {
        assert_eq!(parse("foo"), Err(TypeError("Unknown type foo".into())));
        assert!(parse("list<int").is_err());
        assert!(parse("list<int>>").is_err());
        assert!(parse("map<int>").is_err());
        assert!(parse("").is_err());
        assert!(parse("vector<float, 0>").is_err());
        assert!(parse("vector<float, x>").is_err());
        assert!(parse("frozen<int>").is_err());
        assert!(parse("'unterminated").is_err());
        assert_eq!(
            parse("list<set<int>>"),
            Err(TypeError(
                "Non-frozen collections are not allowed inside collections: list<set<int>>".into()
            ))
        );
        assert!(parse("list<address>").is_err());
        assert!(parse("set<counter>").is_err());
    }
}
