//! Grammar of writes: INSERT, UPDATE, DELETE and BATCH, with USING options,
//! SET assignments and IF conditions.

use super::{PResult, Parser};
use crate::ast::{
    Assignment, Batch, BatchKind, Condition, ConditionTarget, Conditions, Delete, DeleteTarget,
    Insert, InsertValues, Literal, LiteralKind, Operator, Statement, Term, Update, UsingOption,
};
use crate::error::SyntaxError;
use crate::lexer::{string_value, Kind};

impl Parser<'_> {
    pub(crate) fn insert_statement(&mut self) -> PResult<Insert> {
        self.expect_kw("insert")?;
        self.expect_kw("into")?;
        let table = self.qualified_name("table")?;
        let values = if self.eat_kw("json") {
            self.json_values()?
        } else {
            self.column_values()?
        };
        let if_not_exists = self.if_not_exists()?;
        let using = self.using_clause()?;
        Ok(Insert {
            table,
            values,
            if_not_exists,
            using,
        })
    }

    fn column_values(&mut self) -> PResult<InsertValues> {
        let columns = self.paren_list(|p| p.cident())?;
        self.expect_kw("values")?;
        let values = self.tuple_literal()?;
        Ok(InsertValues::Columns { columns, values })
    }

    fn json_values(&mut self) -> PResult<InsertValues> {
        let value = if self.at(Kind::String) {
            let text = string_value(self.advance());
            Term::Literal(Literal {
                kind: LiteralKind::String,
                text,
            })
        } else if matches!(self.kind_at(0), Some(Kind::QMark | Kind::Colon)) {
            Term::Bind(self.marker()?)
        } else {
            return self.no_viable();
        };
        let mut default_unset = false;
        if self.eat_kw("default") {
            default_unset = self.eat_kw("unset");
            if !default_unset {
                self.expect_kw("null")?;
            }
        }
        Ok(InsertValues::Json {
            value,
            default_unset,
        })
    }

    /// Optional `USING TTL x AND TIMESTAMP y`.
    fn using_clause(&mut self) -> PResult<Vec<UsingOption>> {
        let mut options = Vec::new();
        if !self.eat_kw("using") {
            return Ok(options);
        }
        loop {
            if self.eat_kw("ttl") {
                options.push(UsingOption::Ttl(self.int_value()?));
            } else if self.eat_kw("timestamp") {
                options.push(UsingOption::Timestamp(self.int_value()?));
            } else {
                return self.no_viable();
            }
            if !self.eat_kw("and") {
                return Ok(options);
            }
        }
    }

    pub(crate) fn update_statement(&mut self) -> PResult<Update> {
        self.expect_kw("update")?;
        let table = self.qualified_name("table")?;
        let using = self.using_clause()?;
        self.expect_kw("set")?;
        let mut assignments = vec![self.assignment()?];
        while self.eat(Kind::Comma) {
            assignments.push(self.assignment()?);
        }
        self.expect_kw("where")?;
        let where_clause = self.where_clause()?;
        let conditions = self.conditions()?;
        Ok(Update {
            table,
            using,
            assignments,
            where_clause,
            conditions,
        })
    }

    /// `columnOperation`.
    fn assignment(&mut self) -> PResult<Assignment> {
        let column = self.cident()?;
        match self.kind_at(0) {
            Some(Kind::Eq) => {
                self.pos += 1;
                self.assignment_value(column)
            }
            Some(Kind::PlusEq) => {
                self.pos += 1;
                Ok(Assignment::Add(column, self.term()?))
            }
            Some(Kind::MinusEq) => {
                self.pos += 1;
                Ok(Assignment::Subtract(column, self.term()?))
            }
            Some(Kind::LBracket) => {
                self.pos += 1;
                let key = self.term()?;
                self.expect(Kind::RBracket)?;
                self.expect(Kind::Eq)?;
                Ok(Assignment::SetElement(column, key, self.term()?))
            }
            Some(Kind::Dot) => {
                self.pos += 1;
                let field = self.ident()?;
                self.expect(Kind::Eq)?;
                Ok(Assignment::SetField(column, field, self.term()?))
            }
            _ => self.no_viable(),
        }
    }

    /// After `c =`: `v`, `c + v`, `c - v`, `c -3` or `v + c`.
    fn assignment_value(&mut self, column: String) -> PResult<Assignment> {
        let names_column = self.ident_at(0) && !self.function_call_follows();
        if names_column {
            let other = self.cident()?;
            let assignment = if self.eat(Kind::Plus) {
                Assignment::Add(column.clone(), self.term()?)
            } else if self.eat(Kind::Minus) {
                Assignment::Subtract(column.clone(), self.term()?)
            } else if self.at(Kind::Integer) && self.text_at(0).starts_with('-') {
                Assignment::Add(column.clone(), self.term()?)
            } else {
                return self.no_viable_between(self.pos.saturating_sub(1), self.pos);
            };
            return match other == column {
                true => Ok(assignment),
                false => Err(SyntaxError::bare(
                    "Only expressions of the form X = X +<value> are supported.",
                )),
            };
        }
        let value = self.term()?;
        if !self.eat(Kind::Plus) {
            return Ok(Assignment::Set(column, value));
        }
        if self.cident()? != column {
            return Err(SyntaxError::bare(
                "Only expressions of the form X = <value> + X are supported.",
            ));
        }
        Ok(Assignment::Prepend(column, value))
    }

    /// Optional `IF EXISTS` or `IF cond AND cond ...`.
    fn conditions(&mut self) -> PResult<Option<Conditions>> {
        if !self.eat_kw("if") {
            return Ok(None);
        }
        if self.eat_kw("exists") {
            return Ok(Some(Conditions::Exists));
        }
        let mut conditions = vec![self.condition()?];
        while self.eat_kw("and") {
            conditions.push(self.condition()?);
        }
        Ok(Some(Conditions::Columns(conditions)))
    }

    fn condition(&mut self) -> PResult<Condition> {
        let column = self.cident()?;
        let target = if self.eat(Kind::LBracket) {
            let element = self.term()?;
            self.expect(Kind::RBracket)?;
            ConditionTarget::Element(column, element)
        } else if self.eat(Kind::Dot) {
            ConditionTarget::Field(column, self.ident()?)
        } else {
            ConditionTarget::Column(column)
        };
        let (op, value) = self.operator_and_value()?;
        if op == Operator::Like {
            return Err(SyntaxError::bare("LIKE is not supported in conditions"));
        }
        Ok(Condition { target, op, value })
    }

    pub(crate) fn delete_statement(&mut self) -> PResult<Delete> {
        self.expect_kw("delete")?;
        let mut columns = Vec::new();
        if !self.at_kw("from") {
            columns.push(self.delete_target()?);
            while self.eat(Kind::Comma) {
                columns.push(self.delete_target()?);
            }
        }
        self.expect_kw("from")?;
        let table = self.qualified_name("table")?;
        let using_timestamp = if self.eat_kw("using") {
            self.expect_kw("timestamp")?;
            Some(self.int_value()?)
        } else {
            None
        };
        self.expect_kw("where")?;
        let where_clause = self.where_clause()?;
        let conditions = self.conditions()?;
        Ok(Delete {
            columns,
            table,
            using_timestamp,
            where_clause,
            conditions,
        })
    }

    fn delete_target(&mut self) -> PResult<DeleteTarget> {
        let start = self.pos;
        let column = self.cident()?;
        if self.eat(Kind::LBracket) {
            let element = self.term()?;
            self.expect(Kind::RBracket)?;
            return Ok(DeleteTarget::Element(column, element));
        }
        if self.eat(Kind::Dot) {
            return Ok(DeleteTarget::Field(column, self.ident()?));
        }
        // Cassandra predicts a deletion from the token after the column's name: one that ends
        // none (not `,` or FROM) is "no viable alternative", the snippet bracketing the name.
        if !self.at(Kind::Comma) && !self.at_kw("from") {
            return self.no_viable_between(start, self.pos);
        }
        Ok(DeleteTarget::Column(column))
    }

    pub(crate) fn batch_statement(&mut self) -> PResult<Batch> {
        self.expect_kw("begin")?;
        let kind = if self.eat_kw("unlogged") {
            BatchKind::Unlogged
        } else if self.eat_kw("counter") {
            BatchKind::Counter
        } else {
            BatchKind::Logged
        };
        self.expect_kw("batch")?;
        let using = self.using_clause()?;
        let mut statements = Vec::new();
        while !self.at_kw("apply") {
            statements.push(self.batch_member()?);
            self.eat(Kind::Semicolon);
        }
        self.expect_kw("apply")?;
        self.expect_kw("batch")?;
        Ok(Batch {
            kind,
            using,
            statements,
        })
    }

    fn batch_member(&mut self) -> PResult<Statement> {
        if self.at_kw("insert") {
            self.insert_statement().map(Statement::Insert)
        } else if self.at_kw("update") {
            self.update_statement().map(Statement::Update)
        } else if self.at_kw("delete") {
            self.delete_statement().map(Statement::Delete)
        } else {
            self.no_viable()
        }
    }
}
