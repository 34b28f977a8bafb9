//! Grammar of user-defined functions and aggregates (CREATE/DROP).

use super::{PResult, Parser};
use crate::ast::{CreateAggregate, CreateFunction, DropFunction, Statement, TypeExpr};
use crate::lexer::Kind;

impl Parser<'_> {
    /// `CREATE [OR REPLACE] FUNCTION|AGGREGATE ...` (after CREATE).
    pub(crate) fn create_function_or_aggregate(&mut self) -> PResult<Statement> {
        let or_replace = self.eat_kw("or");
        if or_replace {
            self.expect_kw("replace")?;
        }
        if self.eat_kw("aggregate") {
            return self
                .create_aggregate(or_replace)
                .map(Statement::CreateAggregate);
        }
        self.expect_kw("function")?;
        self.create_function(or_replace)
            .map(Statement::CreateFunction)
    }

    fn create_function(&mut self, or_replace: bool) -> PResult<CreateFunction> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.function_name()?;
        self.expect(Kind::LParen)?;
        let mut args = Vec::new();
        if !self.eat(Kind::RParen) {
            loop {
                let arg = self.ident()?;
                args.push((arg, self.type_expr()?));
                if !self.eat(Kind::Comma) {
                    break;
                }
            }
            self.expect(Kind::RParen)?;
        }
        let called_on_null_input = self.eat_kw("called");
        if !called_on_null_input {
            self.expect_kw("returns")?;
            self.expect_kw("null")?;
        }
        self.expect_kw("on")?;
        self.expect_kw("null")?;
        self.expect_kw("input")?;
        self.expect_kw("returns")?;
        let return_type = self.type_expr()?;
        self.expect_kw("language")?;
        let language = match self.word_at(0) {
            Some(word) => word.to_ascii_lowercase(),
            None => return self.mismatched("IDENT"),
        };
        self.pos += 1;
        self.expect_kw("as")?;
        let body = self.string_literal()?;
        Ok(CreateFunction {
            or_replace,
            if_not_exists,
            name,
            args,
            called_on_null_input,
            return_type,
            language,
            body,
        })
    }

    fn create_aggregate(&mut self, or_replace: bool) -> PResult<CreateAggregate> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.function_name()?;
        let arg_types = self.type_signature()?;
        self.expect_kw("sfunc")?;
        let state_function = self.function_name_part()?;
        self.expect_kw("stype")?;
        let state_type = self.type_expr()?;
        let final_function = if self.eat_kw("finalfunc") {
            Some(self.function_name_part()?)
        } else {
            None
        };
        let initial_condition = if self.eat_kw("initcond") {
            Some(self.term()?)
        } else {
            None
        };
        Ok(CreateAggregate {
            or_replace,
            if_not_exists,
            name,
            arg_types,
            state_function,
            state_type,
            final_function,
            initial_condition,
        })
    }

    /// `(type, ...)`, possibly empty.
    pub(crate) fn type_signature(&mut self) -> PResult<Vec<TypeExpr>> {
        self.expect(Kind::LParen)?;
        let mut types = Vec::new();
        if self.eat(Kind::RParen) {
            return Ok(types);
        }
        types.push(self.type_expr()?);
        while self.eat(Kind::Comma) {
            types.push(self.type_expr()?);
        }
        self.expect(Kind::RParen)?;
        Ok(types)
    }

    /// `DROP FUNCTION|AGGREGATE [IF EXISTS] name [(types)]` (after DROP).
    pub(crate) fn drop_function(&mut self) -> PResult<DropFunction> {
        self.pos += 1;
        let if_exists = self.if_exists()?;
        let name = self.function_name()?;
        let arg_types = if self.at(Kind::LParen) {
            Some(self.type_signature()?)
        } else {
            None
        };
        Ok(DropFunction {
            name,
            if_exists,
            arg_types,
        })
    }
}
