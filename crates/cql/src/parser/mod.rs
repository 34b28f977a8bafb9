//! Hand-written recursive-descent parser over the token stream. This module
//! owns the cursor (token access, keyword matching, identifiers, error
//! construction) and statement dispatch; the grammar is split by area into
//! the submodules.

mod auth;
mod describe;
mod float_literal;
mod functions;
mod modify;
mod objects;
mod schema;
mod select;
mod table;
mod terms;
mod types;

use std::cell::Cell;

use crate::ast::{ArithOp, BindMarker, QualifiedName, Statement};
use crate::error::{Place, SyntaxError};
use crate::keywords::is_reserved;
use crate::lexer::{quoted_name_value, tokenize_to_error, Kind, Token};
use ::types::limits::{MAX_IDENTIFIER_BYTES, MAX_NESTING};

pub(crate) type PResult<T> = Result<T, SyntaxError>;

/// A statement plus the bind markers it declares, in index order.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedStatement {
    pub statement: Statement,
    pub bind_markers: Vec<BindMarker>,
}

/// Parses exactly one statement, optionally followed by semicolons (`query: cqlStatement
/// (';')* EOF` in Cassandra's Cql.g).
///
/// A character the lexer cannot read is reported if the parser reads up to it, as Cassandra's
/// lexer runs only as far as its parser reads: a syntax error before it comes first.
pub fn parse(text: &str) -> PResult<ParsedStatement> {
    let mut parser = Parser::new(text);
    let parsed = parser.statement_to_end();
    match parser.lex_error.take() {
        Some(lex_error) if parser.read_to_end.get() => Err(lex_error),
        _ => parsed.map(|statement| ParsedStatement {
            statement,
            bind_markers: parser.markers,
        }),
    }
}

/// Cursor over the tokens of one query.
pub(crate) struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    markers: Vec<BindMarker>,
    /// Nesting levels open at the cursor (see `nested`).
    depth: usize,
    /// Set once the nesting limit was hit, so backtracking does not hide that error.
    too_deep: bool,
    /// The furthest token a prediction of Cassandra's parser would have read (see
    /// `note_read`); only the lookaheads that show in its messages are noted.
    read: Cell<usize>,
    /// The first character the lexer could not read: the tokens stop before it.
    lex_error: Option<SyntaxError>,
    /// Set once the parser looks past the last token (at the end of the text, or at the
    /// character the lexer could not read).
    read_to_end: Cell<bool>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        let (tokens, lex_error) = tokenize_to_error(text);
        Parser {
            text,
            tokens,
            pos: 0,
            markers: Vec::new(),
            depth: 0,
            too_deep: false,
            read: Cell::new(0),
            lex_error,
            read_to_end: Cell::new(false),
        }
    }

    /// `cqlStatement (';')* EOF`.
    fn statement_to_end(&mut self) -> PResult<Statement> {
        let statement = self.statement()?;
        while self.eat(Kind::Semicolon) {}
        if !self.at_end() {
            return self.mismatched("EOF");
        }
        Ok(statement)
    }

    fn statement(&mut self) -> PResult<Statement> {
        let Some(word) = self.word_at(0) else {
            return self.no_viable();
        };
        match word.to_ascii_lowercase().as_str() {
            "select" => self.select_statement().map(Statement::Select),
            "insert" => self.insert_statement().map(Statement::Insert),
            "update" => self.update_statement().map(Statement::Update),
            "delete" => self.delete_statement().map(Statement::Delete),
            "begin" => self.batch_statement().map(Statement::Batch),
            "use" => self.use_statement(),
            "truncate" => self.truncate_statement(),
            "create" => self.create_statement(),
            "alter" => self.alter_statement(),
            "drop" => self.drop_statement(),
            "grant" | "revoke" => self.grant_or_revoke(),
            "list" => self.list_statement(),
            "describe" | "desc" => self.describe_statement().map(Statement::Describe),
            _ => self.no_viable(),
        }
    }

    // ---- token access -------------------------------------------------

    fn at_end(&self) -> bool {
        self.token_at(0).is_none()
    }

    /// The token at `offset`, noting a look past the last one.
    fn token_at(&self, offset: usize) -> Option<&Token> {
        let token = self.tokens.get(self.pos + offset);
        if token.is_none() {
            self.read_to_end.set(true);
        }
        token
    }

    fn kind_at(&self, offset: usize) -> Option<Kind> {
        self.token_at(offset).map(|t| t.kind)
    }

    fn at(&self, kind: Kind) -> bool {
        self.kind_at(0) == Some(kind)
    }

    fn text_at(&self, offset: usize) -> &'a str {
        let text = self.text;
        self.token_at(offset).map_or("", |t| &text[t.start..t.end])
    }

    /// The text of the token at `offset` when it is an unquoted word.
    fn word_at(&self, offset: usize) -> Option<&'a str> {
        (self.kind_at(offset) == Some(Kind::Ident)).then(|| self.text_at(offset))
    }

    /// Consumes the current token, returning its text.
    fn advance(&mut self) -> &'a str {
        let text = self.text_at(0);
        self.pos += 1;
        text
    }

    fn eat(&mut self, kind: Kind) -> bool {
        let matched = self.at(kind);
        if matched {
            self.pos += 1;
        }
        matched
    }

    fn expect(&mut self, kind: Kind) -> PResult<()> {
        if self.eat(kind) {
            Ok(())
        } else {
            self.mismatched(kind.expected_name())
        }
    }

    // ---- nesting ------------------------------------------------------

    /// Parses `f` one nesting level deeper: a term, selector, relation or type inside another
    /// one. Past `MAX_NESTING` levels this is a syntax error, so that no statement can exhaust
    /// the stack of the recursive descent (or of the analysis that walks its tree).
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.descend()?;
        let result = f(self);
        self.depth -= 1;
        result
    }

    /// Opens one nesting level at the cursor. Loops that build a left-deep tree (`a + b + c`,
    /// `m[1][2]`) open one per node and restore `depth` when the loop ends.
    fn descend(&mut self) -> PResult<()> {
        if self.depth >= MAX_NESTING {
            self.too_deep = true;
            return Err(self.error_here(|shown| {
                format!(
                    "nesting too deep at input {shown}: terms, selectors, relations and types \
                     nest at most {MAX_NESTING} levels"
                )
            }));
        }
        self.depth += 1;
        Ok(())
    }

    /// The rest of a left-deep chain of operations (`a + b - c`) after its first operand:
    /// while `op` finds an operator, `operand` parses the next operand (consuming the operator)
    /// and `join` folds it in; each operation is one nesting level. Callers reach it only when
    /// an operator follows, so that its frame is not paid by every nesting level.
    fn fold_operations<T>(
        &mut self,
        first: T,
        op: impl Fn(&Self) -> Option<ArithOp>,
        operand: impl Fn(&mut Self, ArithOp) -> PResult<T>,
        join: impl Fn(ArithOp, T, T) -> T,
    ) -> PResult<T> {
        let depth = self.depth;
        let mut left = first;
        while let Some(found) = op(self) {
            self.descend()?;
            let right = operand(self, found)?;
            left = join(found, left, right);
        }
        self.depth = depth;
        Ok(left)
    }

    // ---- keywords -----------------------------------------------------

    /// Whether the token at `offset` is keyword `kw` (lowercase), including
    /// Cassandra's aliases (TABLE = COLUMNFAMILY, TABLES = COLUMNFAMILIES).
    fn kw_at(&self, offset: usize, kw: &str) -> bool {
        self.word_at(offset).is_some_and(|w| {
            w.eq_ignore_ascii_case(kw)
                || keyword_alias(kw).is_some_and(|a| w.eq_ignore_ascii_case(a))
        })
    }

    fn at_kw(&self, kw: &str) -> bool {
        self.kw_at(0, kw)
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        let matched = self.at_kw(kw);
        if matched {
            self.pos += 1;
        }
        matched
    }

    fn expect_kw(&mut self, kw: &str) -> PResult<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            self.mismatched(&format!("K_{}", kw.to_ascii_uppercase()))
        }
    }

    /// Optional `IF EXISTS`.
    fn if_exists(&mut self) -> PResult<bool> {
        if !self.eat_kw("if") {
            return Ok(false);
        }
        self.expect_kw("exists")?;
        Ok(true)
    }

    /// Optional `IF NOT EXISTS`.
    fn if_not_exists(&mut self) -> PResult<bool> {
        if !self.eat_kw("if") {
            return Ok(false);
        }
        self.expect_kw("not")?;
        self.expect_kw("exists")?;
        Ok(true)
    }

    // ---- identifiers --------------------------------------------------

    /// Whether the token at `offset` can be an identifier.
    fn ident_at(&self, offset: usize) -> bool {
        match self.kind_at(offset) {
            Some(Kind::Ident) => !is_reserved(self.text_at(offset)),
            Some(Kind::QuotedName) => self.text_at(offset).len() > 2,
            _ => false,
        }
    }

    /// An identifier: unquoted (lowercased, not reserved) or quoted.
    fn ident(&mut self) -> PResult<String> {
        if !self.ident_at(0) {
            return self.no_viable();
        }
        self.take_name()
    }

    /// A column identifier; unlike `ident` it accepts the empty name `""`.
    fn cident(&mut self) -> PResult<String> {
        if self.at(Kind::QuotedName) {
            return self.take_name();
        }
        self.ident()
    }

    /// Consumes a name token; names longer than a protocol `[string]` holds are refused.
    fn take_name(&mut self) -> PResult<String> {
        let quoted = self.at(Kind::QuotedName);
        let start = self.tokens.get(self.pos).map_or(0, |t| t.start);
        let raw = self.advance();
        let name = if quoted {
            quoted_name_value(raw)
        } else {
            raw.to_ascii_lowercase()
        };
        if name.len() > MAX_IDENTIFIER_BYTES {
            let message = format!(
                "identifier too long ({} bytes): names are at most {MAX_IDENTIFIER_BYTES} bytes",
                name.len()
            );
            return Err(SyntaxError::at_offset(self.text, start, message));
        }
        Ok(name)
    }

    /// `[keyspace.]name`; `what` names the object in the bind-marker error.
    fn qualified_name(&mut self, what: &str) -> PResult<QualifiedName> {
        if self.at(Kind::QMark) {
            return Err(SyntaxError::bare(format!(
                "Bind variables cannot be used for {what} names"
            )));
        }
        let start = self.pos;
        let first = self.ident()?;
        if !self.eat(Kind::Dot) {
            if what == "table" {
                self.table_name_ends(start)?;
            }
            return Ok(QualifiedName::simple(first));
        }
        if self.at(Kind::QMark) {
            return Err(SyntaxError::bare(format!(
                "Bind variables cannot be used for {what} names"
            )));
        }
        let name = self.ident()?;
        Ok(QualifiedName {
            keyspace: Some(first),
            name,
        })
    }

    /// Cassandra predicts whether a table's name (`columnFamilyName`, from token `start`) has a
    /// keyspace from the token after its first part: one that follows a table's name nowhere
    /// in its grammar is "no viable alternative" there, the snippet bracketing the name
    /// (`SELECT * FROM [t] x`); after one that may follow, the prediction has read one token
    /// further.
    fn table_name_ends(&self, start: usize) -> PResult<()> {
        let follows = match self.kind_at(0) {
            None | Some(Kind::Semicolon | Kind::LParen) => true,
            Some(Kind::Ident) => TABLE_NAME_FOLLOWERS.iter().any(|kw| self.at_kw(kw)),
            Some(_) => false,
        };
        if !follows {
            return self.no_viable_between(start, self.pos);
        }
        self.note_read(self.pos + 1);
        Ok(())
    }

    /// A comma-separated, parenthesised, non-empty list.
    fn paren_list<T>(&mut self, mut item: impl FnMut(&mut Self) -> PResult<T>) -> PResult<Vec<T>> {
        self.expect(Kind::LParen)?;
        let mut items = vec![item(self)?];
        while self.eat(Kind::Comma) {
            items.push(item(self)?);
        }
        self.expect(Kind::RParen)?;
        Ok(items)
    }

    /// Whether the list element after a comma is absent (`(a int, , b int)`, `(a int,)`):
    /// Cassandra's grammar writes the column list of CREATE TABLE and the field list of
    /// CREATE TYPE as `'(' element ( ',' element? )* ')'`.
    fn empty_list_element(&self) -> bool {
        self.at(Kind::Comma) || self.at(Kind::RParen)
    }

    // ---- errors -------------------------------------------------------

    fn no_viable<T>(&self) -> PResult<T> {
        Err(self.error_here(|shown| format!("no viable alternative at input {shown}")))
    }

    /// No viable alternative found at token `failing` by a prediction that began at token
    /// `start` (ANTLR looks ahead from where the parser stands: the error names the token where
    /// the prediction failed, the snippet brackets the one it began at).
    fn no_viable_between<T>(&self, start: usize, failing: usize) -> PResult<T> {
        let place = Place {
            current: start,
            failing,
            read: self.read.get(),
        };
        Err(SyntaxError::at_place(
            self.text,
            &self.tokens,
            place,
            |shown| format!("no viable alternative at input {shown}"),
        ))
    }

    /// Notes that a prediction of Cassandra's parser reads up to token `index` here (its
    /// token stream keeps what it read, and its snippets run up to that).
    fn note_read(&self, index: usize) {
        self.read.set(self.read.get().max(index));
    }

    fn mismatched<T>(&self, expected: &str) -> PResult<T> {
        Err(self.error_here(|shown| format!("mismatched input {shown} expecting {expected}")))
    }

    /// A `NumberFormatException` thrown by an action of Cassandra's parser, which fails the
    /// statement with the text as it came (not trimmed).
    fn number_format_failure(&self, reason: &str) -> SyntaxError {
        SyntaxError::bare(format!(
            "Failed parsing statement: [{}] reason: NumberFormatException {reason}",
            self.text
        ))
    }

    fn error_here(&self, describe: impl FnOnce(&str) -> String) -> SyntaxError {
        let place = Place {
            current: self.pos,
            failing: self.pos,
            read: self.read.get(),
        };
        SyntaxError::at_place(self.text, &self.tokens, place, describe)
    }
}

/// The keywords that follow a table's name somewhere in Cassandra 5.0.4's grammar (besides
/// `;`, `(` and the end): the clauses of SELECT (and of a materialized view's), INSERT,
/// UPDATE, DELETE and ALTER TABLE, `AS` of CREATE MATERIALIZED VIEW, `USING` of CREATE
/// TRIGGER, and what follows a resource in GRANT, REVOKE and LIST.
const TABLE_NAME_FOLLOWERS: [&str; 20] = [
    "where",
    "group",
    "order",
    "per",
    "limit",
    "allow",
    "primary",
    "json",
    "using",
    "set",
    "alter",
    "add",
    "drop",
    "rename",
    "with",
    "as",
    "to",
    "from",
    "of",
    "norecursive",
];

/// The other spelling of keywords that Cassandra's lexer merges.
fn keyword_alias(kw: &str) -> Option<&'static str> {
    match kw {
        "columnfamily" => Some("table"),
        "tables" => Some("columnfamilies"),
        _ => None,
    }
}

#[cfg(test)]
mod limit_tests;
#[cfg(test)]
mod tests;
