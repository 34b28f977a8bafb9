//! CQL lexer, parser and AST for CQL 3 as Apache Cassandra 5.0 accepts it.
//!
//! Entry points: [`parse_statement`] for the statement alone and [`parse`]
//! for the statement plus its bind markers (what PREPARE needs).

pub mod ast;
mod error;
mod keywords;
mod lexer;
mod parser;

pub use ast::*;
pub use error::SyntaxError;
pub use parser::{parse, ParsedStatement};

/// Parses one statement; an optional trailing `;`, whitespace and comments
/// around it are allowed.
pub fn parse_statement(text: &str) -> Result<Statement, SyntaxError> {
    parse(text).map(|parsed| parsed.statement)
}

impl ParsedStatement {
    /// How many bind markers the statement declares.
    pub fn bind_marker_count(&self) -> usize {
        self.bind_markers.len()
    }
}
