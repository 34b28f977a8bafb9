//! Grammar of DESCRIBE / DESC statements (sent to the server by cqlsh 6+).

use super::{PResult, Parser};
use crate::ast::{Describe, DescribeTarget, QualifiedName};
use crate::lexer::Kind;

impl Parser<'_> {
    pub(crate) fn describe_statement(&mut self) -> PResult<Describe> {
        self.pos += 1;
        let target = self.describe_target()?;
        let with_internals = self.eat_kw("with");
        if with_internals {
            self.expect_kw("internals")?;
        }
        Ok(Describe {
            target,
            with_internals,
        })
    }

    fn describe_target(&mut self) -> PResult<DescribeTarget> {
        let word = self
            .word_at(0)
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        let followed_by_name = self.ident_at(1) || self.kw_at(1, "with");
        let plural = match word.as_str() {
            "cluster" => Some(DescribeTarget::Cluster),
            "schema" => Some(DescribeTarget::Schema),
            "keyspaces" => Some(DescribeTarget::Keyspaces),
            "tables" | "columnfamilies" => Some(DescribeTarget::Tables),
            "types" => Some(DescribeTarget::Types),
            "functions" => Some(DescribeTarget::Functions),
            "aggregates" => Some(DescribeTarget::Aggregates),
            _ => None,
        };
        if let Some(target) = plural.filter(|_| !self.generic_name_follows()) {
            self.pos += 1;
            return Ok(target);
        }
        match word.as_str() {
            "full" if self.kw_at(1, "schema") => {
                self.pos += 2;
                Ok(DescribeTarget::FullSchema)
            }
            "only" | "keyspace" => self.describe_keyspace(),
            "table" | "columnfamily" => self.named(DescribeTarget::Table, "table"),
            "index" => self.named(DescribeTarget::Index, "index"),
            "materialized" => {
                self.pos += 1;
                if !self.at_kw("view") {
                    return self.mismatched("K_VIEW");
                }
                self.named(DescribeTarget::MaterializedView, "table")
            }
            "type" if followed_by_name => self.named(DescribeTarget::Type, "type"),
            "function" if followed_by_name => self.named_function(DescribeTarget::Function),
            "aggregate" if followed_by_name => self.named_function(DescribeTarget::Aggregate),
            _ => Ok(DescribeTarget::Generic(self.qualified_name("table")?)),
        }
    }

    /// Whether the plural word is actually a `ks.name` generic target.
    fn generic_name_follows(&self) -> bool {
        self.kind_at(1) == Some(Kind::Dot)
    }

    fn describe_keyspace(&mut self) -> PResult<DescribeTarget> {
        let only = self.eat_kw("only");
        self.expect_kw("keyspace")?;
        let name = if self.ident_at(0) && !self.at_kw("with") {
            Some(self.keyspace_name()?)
        } else {
            None
        };
        Ok(DescribeTarget::Keyspace { name, only })
    }

    fn named(
        &mut self,
        wrap: fn(QualifiedName) -> DescribeTarget,
        what: &str,
    ) -> PResult<DescribeTarget> {
        self.pos += 1;
        Ok(wrap(self.qualified_name(what)?))
    }

    fn named_function(
        &mut self,
        wrap: fn(QualifiedName) -> DescribeTarget,
    ) -> PResult<DescribeTarget> {
        self.pos += 1;
        Ok(wrap(self.function_name()?))
    }
}
