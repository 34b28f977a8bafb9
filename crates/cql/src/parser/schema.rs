//! Grammar of schema statement dispatch (CREATE/ALTER/DROP ...), USE,
//! TRUNCATE, keyspaces, DROP statements and `WITH` properties.

use super::{PResult, Parser};
use crate::ast::{
    AlterKeyspace, CreateKeyspace, DropObject, Literal, OptionValue, Properties, QualifiedName,
    Statement,
};
use crate::error::SyntaxError;
use crate::lexer::Kind;

impl Parser<'_> {
    pub(crate) fn use_statement(&mut self) -> PResult<Statement> {
        self.expect_kw("use")?;
        Ok(Statement::Use(self.keyspace_name()?))
    }

    pub(crate) fn truncate_statement(&mut self) -> PResult<Statement> {
        self.expect_kw("truncate")?;
        self.eat_kw("columnfamily");
        Ok(Statement::Truncate(self.qualified_name("table")?))
    }

    pub(crate) fn keyspace_name(&mut self) -> PResult<String> {
        if self.at(Kind::QMark) {
            return Err(crate::error::SyntaxError::bare(
                "Bind variables cannot be used for keyspace names",
            ));
        }
        self.ident()
    }

    pub(crate) fn create_statement(&mut self) -> PResult<Statement> {
        self.expect_kw("create")?;
        if self.at_kw("or") || self.at_kw("function") || self.at_kw("aggregate") {
            return self.create_function_or_aggregate();
        }
        let object = self
            .word_at(0)
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        match object.as_str() {
            "keyspace" => self.create_keyspace().map(Statement::CreateKeyspace),
            "table" | "columnfamily" => self.create_table().map(Statement::CreateTable),
            "index" | "custom" => self.create_index().map(Statement::CreateIndex),
            "type" => self.create_type().map(Statement::CreateType),
            "materialized" => self.create_view().map(Statement::CreateMaterializedView),
            "trigger" => self.create_trigger().map(Statement::CreateTrigger),
            "role" | "user" => self.create_role().map(Statement::CreateRole),
            _ => self.no_viable(),
        }
    }

    pub(crate) fn alter_statement(&mut self) -> PResult<Statement> {
        self.expect_kw("alter")?;
        let object = self
            .word_at(0)
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        match object.as_str() {
            "keyspace" => self.alter_keyspace().map(Statement::AlterKeyspace),
            "table" | "columnfamily" => self.alter_table().map(Statement::AlterTable),
            "type" => self.alter_type().map(Statement::AlterType),
            "materialized" => self.alter_view().map(Statement::AlterMaterializedView),
            "role" | "user" => self.alter_role().map(Statement::AlterRole),
            _ => self.no_viable(),
        }
    }

    pub(crate) fn drop_statement(&mut self) -> PResult<Statement> {
        self.expect_kw("drop")?;
        let object = self
            .word_at(0)
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        match object.as_str() {
            "keyspace" => {
                self.pos += 1;
                let if_exists = self.if_exists()?;
                let name = QualifiedName::simple(self.keyspace_name()?);
                Ok(Statement::DropKeyspace(DropObject { name, if_exists }))
            }
            "table" | "columnfamily" => self.drop_object(1, "table").map(Statement::DropTable),
            "index" => self.drop_object(1, "index").map(Statement::DropIndex),
            "type" => self.drop_object(1, "type").map(Statement::DropType),
            "materialized" => {
                self.pos += 1;
                if !self.at_kw("view") {
                    return self.mismatched("K_VIEW");
                }
                self.drop_object(1, "table")
                    .map(Statement::DropMaterializedView)
            }
            "function" => self.drop_function().map(Statement::DropFunction),
            "aggregate" => self.drop_function().map(Statement::DropAggregate),
            "trigger" => self.drop_trigger().map(Statement::DropTrigger),
            "role" | "user" => self.drop_role().map(Statement::DropRole),
            _ => self.no_viable(),
        }
    }

    /// `<skip keywords> [IF EXISTS] [ks.]name`.
    fn drop_object(&mut self, keywords: usize, what: &str) -> PResult<DropObject> {
        self.pos += keywords;
        let if_exists = self.if_exists()?;
        let name = self.qualified_name(what)?;
        Ok(DropObject { name, if_exists })
    }

    fn create_keyspace(&mut self) -> PResult<CreateKeyspace> {
        self.expect_kw("keyspace")?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.keyspace_name()?;
        self.expect_kw("with")?;
        let options = self.properties()?;
        Ok(CreateKeyspace {
            name,
            if_not_exists,
            options,
        })
    }

    fn alter_keyspace(&mut self) -> PResult<AlterKeyspace> {
        self.expect_kw("keyspace")?;
        let if_exists = self.if_exists()?;
        let name = self.keyspace_name()?;
        self.expect_kw("with")?;
        let options = self.properties()?;
        Ok(AlterKeyspace {
            name,
            if_exists,
            options,
        })
    }

    /// `property (AND property)*`.
    pub(crate) fn properties(&mut self) -> PResult<Properties> {
        let mut properties = vec![self.property()?];
        while self.eat_kw("and") {
            let (name, value) = self.property()?;
            if properties.iter().any(|(seen, _)| *seen == name) {
                return Err(SyntaxError::bare(format!(
                    "Multiple definitions for property '{name}'"
                )));
            }
            properties.push((name, value));
        }
        Ok(properties)
    }

    /// `name = constant | word | {map}`.
    pub(crate) fn property(&mut self) -> PResult<(String, OptionValue)> {
        let name = self.ident()?;
        self.expect(Kind::Eq)?;
        if let Some(literal) = self.constant()? {
            return Ok((name, OptionValue::Constant(literal)));
        }
        if self.at(Kind::LBrace) {
            return Ok((name, OptionValue::Map(self.constant_map()?)));
        }
        if self.ident_at(0) && self.at(Kind::Ident) {
            return Ok((name, OptionValue::Identifier(self.take_name()?)));
        }
        self.no_viable()
    }

    /// `{const: const, ...}` (a property map; may be empty).
    pub(crate) fn constant_map(&mut self) -> PResult<Vec<(Literal, Literal)>> {
        self.expect(Kind::LBrace)?;
        let mut entries = Vec::new();
        if self.eat(Kind::RBrace) {
            return Ok(entries);
        }
        loop {
            let key = self.required_constant()?;
            if entries.iter().any(|(seen, _)| seen.text == key.text) {
                return Err(SyntaxError::bare(format!(
                    "Multiple definition for property {}",
                    key.text
                )));
            }
            self.expect(Kind::Colon)?;
            entries.push((key, self.required_constant()?));
            if !self.eat(Kind::Comma) {
                break;
            }
        }
        self.expect(Kind::RBrace)?;
        Ok(entries)
    }

    pub(crate) fn required_constant(&mut self) -> PResult<Literal> {
        match self.constant()? {
            Some(literal) => Ok(literal),
            None => self.no_viable(),
        }
    }
}
