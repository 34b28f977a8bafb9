//! Grammar of CQL types (`comparatorType`): native, collection, tuple,
//! vector, frozen, user-defined and custom (quoted class) types.

use types::NativeType;

use super::terms::word_literal_kind;
use super::{PResult, Parser};
use crate::ast::{CastType, QualifiedName, TypeExpr};
use crate::error::SyntaxError;
use crate::lexer::{string_value, Kind};

impl Parser<'_> {
    /// A full type expression.
    pub(crate) fn type_expr(&mut self) -> PResult<TypeExpr> {
        if self.at(Kind::String) {
            return Ok(TypeExpr::Custom(string_value(self.advance())));
        }
        if let Some(native) = self.word_at(0).and_then(native_type_named) {
            self.pos += 1;
            return Ok(TypeExpr::Native(native));
        }
        if self.kind_at(1) == Some(Kind::Lt) {
            if let Some(word) = self.word_at(0) {
                return self.parameterised_type(&word.to_ascii_lowercase());
            }
        }
        self.user_type_name().map(TypeExpr::UserType)
    }

    /// `name<...>` types; unknown names fall back to a user type name error.
    fn parameterised_type(&mut self, word: &str) -> PResult<TypeExpr> {
        let ty = match word {
            "frozen" => self
                .type_params(1, 1)?
                .pop()
                .map(|t| TypeExpr::Frozen(Box::new(t))),
            "list" => self
                .type_params(1, 1)?
                .pop()
                .map(|t| TypeExpr::List(Box::new(t))),
            "set" => self
                .type_params(1, 1)?
                .pop()
                .map(|t| TypeExpr::Set(Box::new(t))),
            "map" => {
                let mut params = self.type_params(2, 2)?.into_iter();
                params
                    .next()
                    .zip(params.next())
                    .map(|(k, v)| TypeExpr::Map(Box::new(k), Box::new(v)))
            }
            "tuple" => Some(TypeExpr::Tuple(self.type_params(1, usize::MAX)?)),
            "vector" => Some(self.vector_type()?),
            _ => return self.user_type_name().map(TypeExpr::UserType),
        };
        match ty {
            Some(ty) => Ok(ty),
            None => self.no_viable(),
        }
    }

    /// `<t1, ..., tn>` after the type name, with `min..=max` parameters.
    fn type_params(&mut self, min: usize, max: usize) -> PResult<Vec<TypeExpr>> {
        self.nested(|p| {
            p.pos += 1;
            p.expect(Kind::Lt)?;
            let mut params = vec![p.type_expr()?];
            while params.len() < max && p.eat(Kind::Comma) {
                params.push(p.type_expr()?);
            }
            if params.len() < min {
                return p.mismatched("','");
            }
            p.expect(Kind::Gt)?;
            Ok(params)
        })
    }

    /// `vector<type, dimension>`.
    fn vector_type(&mut self) -> PResult<TypeExpr> {
        self.nested(Self::vector_type_rest)
    }

    fn vector_type_rest(&mut self) -> PResult<TypeExpr> {
        self.pos += 1;
        self.expect(Kind::Lt)?;
        let element = self.type_expr()?;
        self.expect(Kind::Comma)?;
        if !self.at(Kind::Integer) {
            return self.mismatched("INTEGER");
        }
        let text = self.advance();
        // Cassandra reads the dimension with Integer.parseInt, failing the whole statement.
        let dimension = text
            .parse::<i32>()
            .map_err(|_| self.number_format_failure(&format!("For input string: \"{text}\"")))?;
        self.expect(Kind::Gt)?;
        Ok(TypeExpr::Vector(Box::new(element), dimension))
    }

    /// The type of a CAST.
    pub(crate) fn cast_type(&mut self) -> PResult<CastType> {
        let word = self.word_at(0);
        match word.and_then(native_type_named) {
            Some(native) => {
                let varchar = word.is_some_and(|w| w.eq_ignore_ascii_case("varchar"));
                self.pos += 1;
                Ok(CastType { native, varchar })
            }
            None => self.no_viable(),
        }
    }

    /// `[ks.]name` of a user-defined type.
    pub(crate) fn user_type_name(&mut self) -> PResult<QualifiedName> {
        let name = self.qualified_name("type")?;
        if is_reserved_type_name(&name.name) {
            return Err(SyntaxError::bare(format!(
                "Invalid (reserved) user type name {}",
                name.name
            )));
        }
        Ok(name)
    }

    /// Tries `( type )` followed by the start of a value: the type hint of a selector
    /// (`(int) ?`), where `(a)` is a column. Restores the position and returns `None`
    /// otherwise; a type nested past the limit is an error.
    pub(crate) fn try_type_hint(&mut self) -> PResult<Option<TypeExpr>> {
        self.try_type_hint_before(Self::value_starts_here)
    }

    /// Tries `( type )`, whatever follows, as the type hint of a term: there `(a)` cannot be
    /// a tuple (a name is no term), so Cassandra takes it for a hint and then wants a value
    /// (`(int) -k` fails on the `-`). A constant spelled as a word (`(true)`) is a tuple.
    pub(crate) fn try_term_type_hint(&mut self) -> PResult<Option<TypeExpr>> {
        if self.kind_at(1) == Some(Kind::Ident) && word_literal_kind(self.text_at(1)).is_some() {
            return Ok(None);
        }
        self.try_type_hint_before(|_| true)
    }

    fn try_type_hint_before(
        &mut self,
        value_follows: impl Fn(&Self) -> bool,
    ) -> PResult<Option<TypeExpr>> {
        let start = self.pos;
        let looks_like_type = self.at(Kind::LParen)
            && matches!(self.kind_at(1), Some(Kind::Ident | Kind::QuotedName));
        if looks_like_type {
            self.pos += 1;
            match self.type_expr() {
                Ok(ty) if self.eat(Kind::RParen) && value_follows(self) => return Ok(Some(ty)),
                Err(too_deep) if self.too_deep => return Err(too_deep),
                _ => {}
            }
        }
        self.pos = start;
        Ok(None)
    }

    /// Whether a value (literal, marker, collection, name, ...) can start here.
    fn value_starts_here(&self) -> bool {
        match self.kind_at(0) {
            Some(Kind::Ident) => !self.at_kw("from") && !self.at_kw("as"),
            Some(kind) => {
                !matches!(
                    kind,
                    Kind::Comma
                        | Kind::RParen
                        | Kind::RBracket
                        | Kind::RBrace
                        | Kind::Semicolon
                        | Kind::Dot
                ) && !is_operator(kind)
            }
            None => false,
        }
    }
}

fn is_operator(kind: Kind) -> bool {
    use Kind::*;
    matches!(
        kind,
        Eq | Neq
            | Lt
            | Lte
            | Gt
            | Gte
            | Plus
            | Minus
            | Star
            | Slash
            | Percent
            | PlusEq
            | MinusEq
            | Colon
            | Range
    )
}

/// Names Cassandra refuses for user types (`Parser.reservedTypeNames`).
fn is_reserved_type_name(name: &str) -> bool {
    matches!(
        name,
        "byte" | "complex" | "enum" | "date" | "interval" | "macaddr" | "bitstring"
    )
}

/// The native type a (case-insensitive) word names, if any.
pub(crate) fn native_type_named(word: &str) -> Option<NativeType> {
    let lower = word.to_ascii_lowercase();
    let native = match lower.as_str() {
        "ascii" => NativeType::Ascii,
        "bigint" => NativeType::Bigint,
        "blob" => NativeType::Blob,
        "boolean" => NativeType::Boolean,
        "counter" => NativeType::Counter,
        "date" => NativeType::Date,
        "decimal" => NativeType::Decimal,
        "double" => NativeType::Double,
        "duration" => NativeType::Duration,
        "float" => NativeType::Float,
        "inet" => NativeType::Inet,
        "int" => NativeType::Int,
        "smallint" => NativeType::Smallint,
        "text" | "varchar" => NativeType::Text,
        "time" => NativeType::Time,
        "timestamp" => NativeType::Timestamp,
        "timeuuid" => NativeType::Timeuuid,
        "tinyint" => NativeType::Tinyint,
        "uuid" => NativeType::Uuid,
        "varint" => NativeType::Varint,
        _ => return None,
    };
    Some(native)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> PResult<TypeExpr> {
        Parser::new(text).type_expr()
    }

    #[test]
    fn native_and_collections() {
        assert_eq!(ty("VARCHAR"), Ok(TypeExpr::Native(NativeType::Text)));
        let set_of_int = TypeExpr::Set(Box::new(TypeExpr::Native(NativeType::Int)));
        assert_eq!(ty("set<int>"), Ok(set_of_int.clone()));
        assert_eq!(
            ty("frozen<set<int>>"),
            Ok(TypeExpr::Frozen(Box::new(set_of_int)))
        );
        assert!(matches!(
            ty("map<text, frozen<list<int>>>"),
            Ok(TypeExpr::Map(..))
        ));
        assert!(matches!(ty("tuple<int, text, ks.addr>"), Ok(TypeExpr::Tuple(v)) if v.len() == 3));
        assert!(matches!(ty("vector<float, 3>"), Ok(TypeExpr::Vector(_, 3))));
        assert!(matches!(
            ty("vector<float, -1>"),
            Ok(TypeExpr::Vector(_, -1))
        ));
        assert!(ty("vector<float, 2147483648>").is_err());
        assert_eq!(ty("'org.X'"), Ok(TypeExpr::Custom("org.X".into())));
        assert_eq!(
            ty("ks.\"Addr\""),
            Ok(TypeExpr::UserType(QualifiedName {
                keyspace: Some("ks".into()),
                name: "Addr".into()
            }))
        );
    }

    #[test]
    fn bad_types() {
        assert!(ty("map<int>").is_err());
        assert!(ty("vector<float, x>").is_err());
        assert!(ty("interval").is_err());
        assert!(ty("select").is_err());
    }
}
