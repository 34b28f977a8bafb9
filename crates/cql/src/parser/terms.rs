//! Grammar of terms (values): constants, bind markers, collection, tuple and
//! UDT literals, function calls, casts, negation and arithmetic.

use super::{float_literal, PResult, Parser};
use crate::ast::{ArithOp, BindMarker, Literal, LiteralKind, QualifiedName, Term};
use crate::keywords::is_reserved;
use crate::lexer::{string_value, Kind};

impl Parser<'_> {
    /// `term`: additive arithmetic over multiplicative terms.
    pub(crate) fn term(&mut self) -> PResult<Term> {
        let first = self.term_product()?;
        if self.additive_op().is_none() {
            self.check_term_end()?;
            return Ok(first);
        }
        let op = |p: &Self| p.additive_op().filter(|_| !p.prepend_follows());
        let term = self.fold_operations(first, op, Self::term_addend, arithmetic_term)?;
        if self.prepend_follows() {
            if !self.prepend_may_end_here() {
                return self.no_viable_between(self.pos, self.pos + 2);
            }
            return Ok(term);
        }
        self.check_term_end()?;
        Ok(term)
    }

    /// What follows a term: Cassandra's prediction of the operations after one reads the next
    /// token and, when that token may follow a term somewhere in its grammar, the one after it
    /// too; at any other token it finds no alternative (`WHERE k = 1 FROM`).
    fn check_term_end(&self) -> PResult<()> {
        let follows = match self.kind_at(0) {
            None => return Ok(()),
            Some(Kind::Ident) => TERM_FOLLOWING_KEYWORDS.iter().any(|kw| self.at_kw(kw)),
            Some(kind) => matches!(
                kind,
                Kind::Comma
                    | Kind::RParen
                    | Kind::RBracket
                    | Kind::RBrace
                    | Kind::Colon
                    | Kind::Range
                    | Kind::Semicolon
            ),
        };
        if !follows {
            return self.no_viable_between(self.pos, self.pos);
        }
        self.note_read(self.pos + 1);
        Ok(())
    }

    /// Whether `+ column` ends a column operation here (`SET l = [1] + l, ...` or `... WHERE`):
    /// elsewhere Cassandra's prediction finds no alternative on the token after the column.
    fn prepend_may_end_here(&self) -> bool {
        self.note_read(self.pos + 2);
        self.kind_at(2) == Some(Kind::Comma) || self.kw_at(2, "where")
    }

    /// The operand after `+` or `-` (or a negative number glued to the left one: `a -1`).
    fn term_addend(&mut self, op: ArithOp) -> PResult<Term> {
        if op == ArithOp::Sub && self.negative_number_follows() {
            return self.negative_number_as_positive();
        }
        self.pos += 1;
        self.term_product()
    }

    /// `+`, `-`, or a negative number glued to the left operand (`a -1`).
    pub(crate) fn additive_op(&self) -> Option<ArithOp> {
        match self.kind_at(0) {
            Some(Kind::Plus) => Some(ArithOp::Add),
            Some(Kind::Minus) => Some(ArithOp::Sub),
            _ if self.negative_number_follows() => Some(ArithOp::Sub),
            _ => None,
        }
    }

    /// `+ column` (as in `SET c = v + c`) is a prepend, never arithmetic: a bare column name
    /// cannot be a term (`+ ks.f` can only start a function call).
    fn prepend_follows(&self) -> bool {
        self.at(Kind::Plus)
            && self.ident_at(1)
            && !self.function_call_at(1)
            && self.kind_at(2) != Some(Kind::Dot)
    }

    fn negative_number_follows(&self) -> bool {
        matches!(self.kind_at(0), Some(Kind::Integer | Kind::Float))
            && self.text_at(0).starts_with('-')
    }

    /// Consumes `-5` and returns the literal `5`.
    pub(crate) fn negative_number_as_positive(&mut self) -> PResult<Term> {
        let kind = if self.at(Kind::Integer) {
            LiteralKind::Integer
        } else {
            LiteralKind::Float
        };
        let raw = self.advance();
        if kind == LiteralKind::Float {
            self.check_float(raw)?;
        }
        let text = raw.trim_start_matches('-').to_string();
        Ok(Term::Literal(Literal { kind, text }))
    }

    pub(crate) fn multiplicative_op(&self) -> Option<ArithOp> {
        match self.kind_at(0) {
            Some(Kind::Star) => Some(ArithOp::Mul),
            Some(Kind::Slash) => Some(ArithOp::Div),
            Some(Kind::Percent) => Some(ArithOp::Mod),
            _ => None,
        }
    }

    fn term_product(&mut self) -> PResult<Term> {
        let first = self.term_group()?;
        if self.multiplicative_op().is_none() {
            return Ok(first);
        }
        let factor = |p: &mut Self, _| {
            p.pos += 1;
            p.term_group()
        };
        self.fold_operations(first, Self::multiplicative_op, factor, arithmetic_term)
    }

    fn term_group(&mut self) -> PResult<Term> {
        if self.at(Kind::Minus) {
            return self.nested(|p| {
                p.pos += 1;
                Ok(Term::Negated(Box::new(p.simple_term()?)))
            });
        }
        self.simple_term()
    }

    /// `simpleTerm`: a value, function call, type hint or CAST.
    pub(crate) fn simple_term(&mut self) -> PResult<Term> {
        if let Some(literal) = self.constant()? {
            return Ok(Term::Literal(literal));
        }
        match self.kind_at(0) {
            Some(Kind::QMark | Kind::Colon) => Ok(Term::Bind(self.marker()?)),
            Some(Kind::LBracket) => self.nested(Self::list_literal),
            Some(Kind::LBrace) => self.nested(Self::brace_literal),
            Some(Kind::LParen) => self.nested(Self::paren_term),
            Some(Kind::Ident) if self.at_kw("null") => {
                self.pos += 1;
                Ok(Term::Null)
            }
            Some(Kind::Ident) if self.at_kw("cast") && self.kind_at(1) == Some(Kind::LParen) => {
                self.nested(Self::cast_term)
            }
            _ if self.function_call_follows() => self.nested(Self::function_call),
            _ => self.no_viable_between(self.pos, self.pos + self.function_prediction_length()),
        }
    }

    /// How many tokens Cassandra's prediction of a term reads here before it finds no
    /// alternative, when no term starts here: at a name (a column, say, as in `k = -k`) it
    /// looks for a function call (`f(`, `ks.f(`), so it fails on the token after the name, or
    /// on the first one after it that cannot continue `ks.f(`.
    fn function_prediction_length(&self) -> usize {
        let keyspace_at = |i| self.ident_at(i);
        let function_at = |i| {
            (self.ident_at(i) && !NOT_FUNCTION_NAMES.iter().any(|kw| self.kw_at(i, kw)))
                || self.kw_at(i, "token")
        };
        if !keyspace_at(0) && !function_at(0) {
            return 0;
        }
        if !keyspace_at(0) || self.kind_at(1) != Some(Kind::Dot) {
            return 1;
        }
        if function_at(2) {
            3
        } else {
            2
        }
    }

    /// Consumes a constant if one is next (`constant` in Parser.g); a float literal Cassandra's
    /// parser refuses (see `float_literal`) fails the statement.
    pub(crate) fn constant(&mut self) -> PResult<Option<Literal>> {
        let Some(kind) = self.constant_kind() else {
            return Ok(None);
        };
        if self.at(Kind::Float) {
            self.check_float(self.text_at(0))?;
        }
        let raw = self.advance();
        let text = match kind {
            LiteralKind::String => string_value(raw),
            LiteralKind::Float => special_float(raw).unwrap_or(raw).to_string(),
            _ => raw.to_string(),
        };
        Ok(Some(Literal { kind, text }))
    }

    /// The kind of the constant that starts here, if one does.
    fn constant_kind(&self) -> Option<LiteralKind> {
        let kind = match self.kind_at(0)? {
            Kind::String => LiteralKind::String,
            Kind::Integer => LiteralKind::Integer,
            Kind::Float | Kind::NegativeSpecial => LiteralKind::Float,
            Kind::Duration => LiteralKind::Duration,
            Kind::Uuid => LiteralKind::Uuid,
            Kind::Hex => LiteralKind::Hex,
            Kind::Ident => word_literal_kind(self.text_at(0))?,
            _ => return None,
        };
        Some(kind)
    }

    /// Fails the statement, as Cassandra does, on a float literal Java cannot read.
    fn check_float(&self, raw: &str) -> PResult<()> {
        match float_literal::refusal(raw) {
            Some(reason) => Err(self.number_format_failure(reason)),
            None => Ok(()),
        }
    }

    /// `?` or `:name`, numbered in order of appearance.
    pub(crate) fn marker(&mut self) -> PResult<BindMarker> {
        let name = if self.eat(Kind::QMark) {
            None
        } else {
            self.expect(Kind::Colon)?;
            Some(self.ident()?)
        };
        let marker = BindMarker {
            index: self.markers.len(),
            name,
        };
        self.markers.push(marker.clone());
        Ok(marker)
    }

    /// Whether a function call (`f(`, `ks.f(`) starts here.
    pub(crate) fn function_call_follows(&self) -> bool {
        self.function_call_at(0)
    }

    /// Whether a function call (`f(`, `ks.f(`) starts at `offset`.
    fn function_call_at(&self, offset: usize) -> bool {
        let name_at = |i| self.ident_at(offset + i) || self.kw_at(offset + i, "token");
        let kind = |i| self.kind_at(offset + i);
        name_at(0)
            && (kind(1) == Some(Kind::LParen)
                || (kind(1) == Some(Kind::Dot) && name_at(2) && kind(3) == Some(Kind::LParen)))
    }

    /// `[ks.]name` of a function (allows the reserved word TOKEN).
    pub(crate) fn function_name(&mut self) -> PResult<QualifiedName> {
        let first = self.function_name_part()?;
        if !self.eat(Kind::Dot) {
            return Ok(QualifiedName::simple(first));
        }
        let name = self.function_name_part()?;
        Ok(QualifiedName {
            keyspace: Some(first),
            name,
        })
    }

    pub(crate) fn function_name_part(&mut self) -> PResult<String> {
        if self.eat_kw("token") {
            return Ok("token".to_string());
        }
        self.ident()
    }

    fn function_call(&mut self) -> PResult<Term> {
        let start = self.pos;
        let name = self.function_name()?;
        self.expect(Kind::LParen)?;
        if !self.at(Kind::RParen) && !self.term_starts_here() {
            // Cassandra's prediction of the call reads up to here from its name.
            return self.no_viable_between(start, self.pos);
        }
        let args = self.terms_until(Kind::RParen)?;
        Ok(Term::FunctionCall { name, args })
    }

    /// Whether a term can start here (a token of FIRST(term) in Cassandra's grammar). Where a
    /// list of terms may be empty (`IN ()`, `[]`), Cassandra's parser skips it at any other
    /// token and wants the closing bracket.
    pub(crate) fn term_starts_here(&self) -> bool {
        match self.kind_at(0) {
            Some(Kind::Ident) => {
                !is_reserved(self.text_at(0)) || TERM_KEYWORDS.iter().any(|kw| self.at_kw(kw))
            }
            Some(kind) => matches!(
                kind,
                Kind::QuotedName
                    | Kind::Minus
                    | Kind::String
                    | Kind::Integer
                    | Kind::Float
                    | Kind::NegativeSpecial
                    | Kind::Duration
                    | Kind::Uuid
                    | Kind::Hex
                    | Kind::QMark
                    | Kind::Colon
                    | Kind::LBracket
                    | Kind::LBrace
                    | Kind::LParen
            ),
            None => false,
        }
    }

    /// Comma-separated terms up to and including `close` (possibly none).
    fn terms_until(&mut self, close: Kind) -> PResult<Vec<Term>> {
        let mut items = Vec::new();
        if self.eat(close) {
            return Ok(items);
        }
        if !self.term_starts_here() {
            return self.mismatched(close.expected_name());
        }
        loop {
            items.push(self.term()?);
            if !self.eat(Kind::Comma) {
                break;
            }
        }
        self.expect(close)?;
        Ok(items)
    }

    fn cast_term(&mut self) -> PResult<Term> {
        self.pos += 2;
        let term = self.simple_term()?;
        self.expect_kw("as")?;
        let ty = self.cast_type()?;
        self.expect(Kind::RParen)?;
        Ok(Term::Cast {
            term: Box::new(term),
            ty,
        })
    }

    fn list_literal(&mut self) -> PResult<Term> {
        self.expect(Kind::LBracket)?;
        Ok(Term::List(self.terms_until(Kind::RBracket)?))
    }

    /// `{}`, `{a, b}`, `{k: v}` or a UDT literal `{field: v}`.
    fn brace_literal(&mut self) -> PResult<Term> {
        self.expect(Kind::LBrace)?;
        if self.eat(Kind::RBrace) {
            return Ok(Term::Set(Vec::new()));
        }
        if self.ident_at(0) && self.kind_at(1) == Some(Kind::Colon) {
            return self.udt_literal_rest();
        }
        let first = self.term()?;
        if !self.eat(Kind::Colon) {
            let mut items = vec![first];
            while self.eat(Kind::Comma) {
                items.push(self.term()?);
            }
            self.expect(Kind::RBrace)?;
            return Ok(Term::Set(items));
        }
        let mut entries = vec![(first, self.term()?)];
        while self.eat(Kind::Comma) {
            let key = self.term()?;
            self.expect(Kind::Colon)?;
            entries.push((key, self.term()?));
        }
        self.expect(Kind::RBrace)?;
        Ok(Term::Map(entries))
    }

    fn udt_literal_rest(&mut self) -> PResult<Term> {
        let mut fields = Vec::new();
        loop {
            let field = self.ident()?;
            self.expect(Kind::Colon)?;
            fields.push((field, self.term()?));
            if !self.eat(Kind::Comma) {
                break;
            }
        }
        self.expect(Kind::RBrace)?;
        Ok(Term::UserTypeLiteral(fields))
    }

    /// `(type) term` or a tuple literal `(a, b)`.
    fn paren_term(&mut self) -> PResult<Term> {
        if let Some(ty) = self.try_term_type_hint()? {
            let term = self.simple_term()?;
            return Ok(Term::TypeCast {
                ty,
                term: Box::new(term),
            });
        }
        Ok(Term::Tuple(self.tuple_literal()?))
    }

    /// `(t1, t2, ...)`.
    pub(crate) fn tuple_literal(&mut self) -> PResult<Vec<Term>> {
        self.paren_list(|p| p.term())
    }
}

/// The words that may follow a term somewhere in Cassandra 5.0.4's grammar (those its parser
/// answers with `mismatched input` rather than `no viable alternative` after `WHERE k = 1`).
const TERM_FOLLOWING_KEYWORDS: [&str; 15] = [
    "and", "where", "if", "allow", "order", "limit", "group", "per", "asc", "desc", "primary",
    "apply", "insert", "update", "delete",
];

/// Reserved words that start a term: `null`, constants and `token(...)`.
const TERM_KEYWORDS: [&str; 6] = ["null", "true", "false", "nan", "infinity", "token"];

/// Unreserved keywords that may name a keyspace but not a function (`unreserved_keyword` less
/// `unreserved_function_keyword` and COUNT in Cassandra's Parser.g).
const NOT_FUNCTION_NAMES: [&str; 7] = [
    "ttl",
    "writetime",
    "maxwritetime",
    "key",
    "cast",
    "json",
    "distinct",
];

fn arithmetic_term(op: ArithOp, left: Term, right: Term) -> Term {
    Term::Arithmetic {
        op,
        left: Box::new(left),
        right: Box::new(right),
    }
}

/// NaN and (minus) Infinity as Cassandra's parser writes them whatever their case (`-nan` is
/// `NaN`).
fn special_float(raw: &str) -> Option<&'static str> {
    match raw.to_ascii_lowercase().as_str() {
        "nan" | "-nan" => Some("NaN"),
        "infinity" => Some("Infinity"),
        "-infinity" => Some("-Infinity"),
        _ => None,
    }
}

/// Constants spelled as words: booleans, NaN and Infinity.
pub(super) fn word_literal_kind(word: &str) -> Option<LiteralKind> {
    let lower = word.to_ascii_lowercase();
    match lower.as_str() {
        "true" | "false" => Some(LiteralKind::Boolean),
        "nan" | "infinity" => Some(LiteralKind::Float),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(text: &str) -> Term {
        let mut parser = Parser::new(text);
        parser.term().unwrap_or_else(|e| panic!("{e}"))
    }

    fn lit(kind: LiteralKind, text: &str) -> Term {
        Term::Literal(Literal {
            kind,
            text: text.to_string(),
        })
    }

    #[test]
    fn constants() {
        assert_eq!(term("'it''s'"), lit(LiteralKind::String, "it's"));
        assert_eq!(term("TRUE"), lit(LiteralKind::Boolean, "TRUE"));
        assert_eq!(term("-Infinity"), lit(LiteralKind::Float, "-Infinity"));
        assert_eq!(term("NaN"), lit(LiteralKind::Float, "NaN"));
        assert_eq!(term("null"), Term::Null);
    }

    /// Cassandra 5.0.4 names them `NaN`, `Infinity`, `-Infinity` in its messages (`-NaN` is
    /// `NaN`).
    #[test]
    fn nan_and_infinity_are_written_as_cassandra_writes_them() {
        for (text, written) in [
            ("-NaN", "NaN"),
            ("-nan", "NaN"),
            ("nan", "NaN"),
            ("INFINITY", "Infinity"),
            ("-infinity", "-Infinity"),
        ] {
            assert_eq!(term(text), lit(LiteralKind::Float, written), "{text}");
        }
    }

    #[test]
    fn collections_and_udts() {
        let one = lit(LiteralKind::Integer, "1");
        assert_eq!(term("{}"), Term::Set(vec![]));
        assert_eq!(term("{1}"), Term::Set(vec![one.clone()]));
        assert_eq!(term("{1: 1}"), Term::Map(vec![(one.clone(), one.clone())]));
        assert_eq!(
            term("{a: 1}"),
            Term::UserTypeLiteral(vec![("a".into(), one.clone())])
        );
        assert_eq!(term("[1]"), Term::List(vec![one.clone()]));
        assert_eq!(term("(1, 1)"), Term::Tuple(vec![one.clone(), one]));
    }

    #[test]
    fn casts_functions_and_arithmetic() {
        assert!(
            matches!(term("(int) ?"), Term::TypeCast { term, .. } if matches!(*term, Term::Bind(_)))
        );
        assert!(
            matches!(term("ks.f(1, now())"), Term::FunctionCall { name, args }
            if name.keyspace.as_deref() == Some("ks") && args.len() == 2)
        );
        assert!(matches!(term("token(1)"), Term::FunctionCall { .. }));
        assert!(matches!(
            term("1 + 2 * 3"),
            Term::Arithmetic {
                op: ArithOp::Add,
                ..
            }
        ));
        assert!(matches!(
            term("5 -1"),
            Term::Arithmetic {
                op: ArithOp::Sub,
                ..
            }
        ));
        assert!(matches!(term("- ?"), Term::Negated(_)));
        assert!(matches!(term("CAST(1 AS text)"), Term::Cast { .. }));
    }

    /// `(name)` is a type hint in a term, even with no value after it; a constant spelled as
    /// a word in parentheses is a tuple of one element.
    #[test]
    fn parenthesised_names_are_type_hints_and_constants_tuples() {
        assert!(matches!(term("(k) 1"), Term::TypeCast { .. }));
        let mut parser = Parser::new("(k)");
        assert!(parser.term().is_err());
        for text in ["(true)", "(NaN)", "(1)", "(?)"] {
            assert!(matches!(term(text), Term::Tuple(_)), "{text}");
        }
    }
}
