//! Grammar of the other schema objects: user types, secondary indexes,
//! materialized views and triggers.

use super::{PResult, Parser};
use crate::ast::{
    AlterMaterializedView, AlterType, AlterTypeAction, CreateIndex, CreateMaterializedView,
    CreateTrigger, CreateType, DropTrigger, IndexTarget, IndexTargetKind, TypeExpr,
};
use crate::error::SyntaxError;
use crate::lexer::{string_value, Kind};

impl Parser<'_> {
    pub(crate) fn create_type(&mut self) -> PResult<CreateType> {
        self.expect_kw("type")?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.user_type_name()?;
        self.expect(Kind::LParen)?;
        let mut fields = vec![self.type_field()?];
        while self.eat(Kind::Comma) {
            if !self.empty_list_element() {
                fields.push(self.type_field()?);
            }
        }
        self.expect(Kind::RParen)?;
        Ok(CreateType {
            name,
            if_not_exists,
            fields,
        })
    }

    /// `name type` in CREATE TYPE.
    fn type_field(&mut self) -> PResult<(String, TypeExpr)> {
        let field = self.ident()?;
        Ok((field, self.type_expr()?))
    }

    pub(crate) fn alter_type(&mut self) -> PResult<AlterType> {
        self.expect_kw("type")?;
        let if_exists = self.if_exists()?;
        let name = self.user_type_name()?;
        let action = if self.eat_kw("alter") {
            let field = self.ident()?;
            self.expect_kw("type")?;
            AlterTypeAction::AlterField {
                field,
                ty: self.type_expr()?,
            }
        } else if self.eat_kw("add") {
            let if_not_exists = self.if_not_exists()?;
            let field = self.ident()?;
            AlterTypeAction::Add {
                if_not_exists,
                field,
                ty: self.type_expr()?,
            }
        } else if self.eat_kw("rename") {
            let if_exists = self.if_exists()?;
            AlterTypeAction::Rename {
                if_exists,
                renames: self.renames()?,
            }
        } else {
            return self.no_viable();
        };
        Ok(AlterType {
            name,
            if_exists,
            action,
        })
    }

    pub(crate) fn create_index(&mut self) -> PResult<CreateIndex> {
        let custom = self.eat_kw("custom");
        self.expect_kw("index")?;
        let if_not_exists = self.if_not_exists()?;
        let name = if self.at_kw("on") {
            None
        } else {
            Some(self.index_name()?)
        };
        self.expect_kw("on")?;
        let table = self.qualified_name("table")?;
        self.expect(Kind::LParen)?;
        let mut targets = Vec::new();
        if !self.at(Kind::RParen) {
            targets.push(self.index_target()?);
            while self.eat(Kind::Comma) {
                targets.push(self.index_target()?);
            }
        }
        self.expect(Kind::RParen)?;
        let using = if self.eat_kw("using") {
            Some(self.string_literal()?)
        } else {
            None
        };
        let options = if self.eat_kw("with") {
            self.properties()?
        } else {
            Vec::new()
        };
        Ok(CreateIndex {
            custom,
            if_not_exists,
            name,
            table,
            targets,
            using,
            options,
        })
    }

    fn index_name(&mut self) -> PResult<String> {
        if self.at(Kind::QMark) {
            return Err(SyntaxError::bare(
                "Bind variables cannot be used for index names",
            ));
        }
        self.ident()
    }

    /// `c`, `KEYS(c)`, `VALUES(c)`, `ENTRIES(c)`, `FULL(c)`.
    fn index_target(&mut self) -> PResult<IndexTarget> {
        let wrapper = match self.word_at(0).map(str::to_ascii_lowercase).as_deref() {
            Some("keys") => Some(IndexTargetKind::Keys),
            Some("values") => Some(IndexTargetKind::Values),
            Some("entries") => Some(IndexTargetKind::Entries),
            Some("full") => Some(IndexTargetKind::Full),
            _ => None,
        };
        match wrapper {
            Some(kind) if self.kind_at(1) == Some(Kind::LParen) => {
                self.pos += 2;
                let column = self.cident()?;
                self.expect(Kind::RParen)?;
                Ok(IndexTarget { kind, column })
            }
            _ => Ok(IndexTarget {
                kind: IndexTargetKind::Simple,
                column: self.cident()?,
            }),
        }
    }

    /// A string literal's unescaped contents.
    pub(crate) fn string_literal(&mut self) -> PResult<String> {
        if !self.at(Kind::String) {
            return self.mismatched("STRING_LITERAL");
        }
        Ok(string_value(self.advance()))
    }

    pub(crate) fn create_view(&mut self) -> PResult<CreateMaterializedView> {
        self.expect_kw("materialized")?;
        self.expect_kw("view")?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.qualified_name("table")?;
        self.expect_kw("as")?;
        self.expect_kw("select")?;
        let selectors = self.selectors()?;
        self.expect_kw("from")?;
        let base_table = self.qualified_name("table")?;
        let where_clause = if self.eat_kw("where") {
            self.where_clause()?
        } else {
            Vec::new()
        };
        let key = self.primary_key()?;
        let props = if self.eat_kw("with") {
            self.table_properties()?
        } else {
            Default::default()
        };
        if props.compact_storage {
            return Err(SyntaxError::bare(
                "COMPACT STORAGE tables are not allowed starting with version 4.0",
            ));
        }
        Ok(CreateMaterializedView {
            name,
            if_not_exists,
            base_table,
            selectors,
            where_clause,
            partition_key: key.partition_key,
            clustering: key.clustering,
            clustering_order: props.clustering_order,
            options: props.options,
        })
    }

    pub(crate) fn alter_view(&mut self) -> PResult<AlterMaterializedView> {
        self.expect_kw("materialized")?;
        self.expect_kw("view")?;
        let if_exists = self.if_exists()?;
        let name = self.qualified_name("table")?;
        self.expect_kw("with")?;
        let options = self.properties()?;
        Ok(AlterMaterializedView {
            name,
            if_exists,
            options,
        })
    }

    pub(crate) fn create_trigger(&mut self) -> PResult<CreateTrigger> {
        self.expect_kw("trigger")?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.ident()?;
        self.expect_kw("on")?;
        let table = self.qualified_name("table")?;
        self.expect_kw("using")?;
        let class = self.string_literal()?;
        Ok(CreateTrigger {
            name,
            if_not_exists,
            table,
            class,
        })
    }

    pub(crate) fn drop_trigger(&mut self) -> PResult<DropTrigger> {
        self.expect_kw("trigger")?;
        let if_exists = self.if_exists()?;
        let name = self.ident()?;
        self.expect_kw("on")?;
        let table = self.qualified_name("table")?;
        Ok(DropTrigger {
            name,
            if_exists,
            table,
        })
    }
}
