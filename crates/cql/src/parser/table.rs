//! Grammar of CREATE TABLE and ALTER TABLE: column definitions, primary
//! keys, column masks and table properties (incl. CLUSTERING ORDER BY).

use super::{PResult, Parser};
use crate::ast::{
    AlterTable, AlterTableAction, ColumnDef, ColumnMask, CreateTable, Order, Properties,
};
use crate::lexer::Kind;

/// Table properties split the way Cassandra's `tableProperty` does.
#[derive(Default)]
pub(crate) struct TableProperties {
    pub options: Properties,
    pub clustering_order: Vec<(String, Order)>,
    pub compact_storage: bool,
}

/// The primary key of a table or view.
#[derive(Default)]
pub(crate) struct PrimaryKey {
    pub partition_key: Vec<String>,
    pub clustering: Vec<String>,
    /// The PRIMARY KEY clauses met so far.
    pub clauses: usize,
}

impl Parser<'_> {
    pub(crate) fn create_table(&mut self) -> PResult<CreateTable> {
        self.expect_kw("columnfamily")?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.qualified_name("table")?;
        self.expect(Kind::LParen)?;
        let mut columns = Vec::new();
        let mut key = PrimaryKey::default();
        self.table_element(&mut columns, &mut key)?;
        while self.eat(Kind::Comma) {
            if !self.empty_list_element() {
                self.table_element(&mut columns, &mut key)?;
            }
        }
        self.expect(Kind::RParen)?;
        let props = if self.eat_kw("with") {
            self.table_properties()?
        } else {
            TableProperties::default()
        };
        Ok(CreateTable {
            name,
            if_not_exists,
            columns,
            partition_key: key.partition_key,
            clustering: key.clustering,
            options: props.options,
            clustering_order: props.clustering_order,
            compact_storage: props.compact_storage,
            primary_key_clauses: key.clauses,
        })
    }

    /// A column definition or a `PRIMARY KEY (...)` clause.
    fn table_element(&mut self, columns: &mut Vec<ColumnDef>, key: &mut PrimaryKey) -> PResult<()> {
        if self.at_kw("primary") {
            let earlier = key.clauses;
            *key = self.primary_key()?;
            key.clauses += earlier;
            return Ok(());
        }
        let column = self.column_def()?;
        if self.eat_kw("primary") {
            self.expect_kw("key")?;
            key.partition_key = vec![column.name.clone()];
            key.clauses += 1;
        }
        columns.push(column);
        Ok(())
    }

    /// `name type [STATIC] [MASKED WITH ...]`.
    fn column_def(&mut self) -> PResult<ColumnDef> {
        let name = self.ident()?;
        let ty = self.type_expr()?;
        let is_static = self.eat_kw("static");
        let mask = if self.at_kw("masked") {
            Some(self.column_mask()?)
        } else {
            None
        };
        Ok(ColumnDef {
            name,
            ty,
            is_static,
            mask,
        })
    }

    /// `MASKED WITH DEFAULT` or `MASKED WITH fn(args)`.
    fn column_mask(&mut self) -> PResult<ColumnMask> {
        self.expect_kw("masked")?;
        self.expect_kw("with")?;
        if self.eat_kw("default") {
            return Ok(ColumnMask {
                function: None,
                args: Vec::new(),
            });
        }
        let function = Some(self.function_name()?);
        self.expect(Kind::LParen)?;
        let mut args = Vec::new();
        if !self.eat(Kind::RParen) {
            args.push(self.term()?);
            while self.eat(Kind::Comma) {
                args.push(self.term()?);
            }
            self.expect(Kind::RParen)?;
        }
        Ok(ColumnMask { function, args })
    }

    /// `PRIMARY KEY (pk | (pk1, pk2), ck1, ck2)`.
    pub(crate) fn primary_key(&mut self) -> PResult<PrimaryKey> {
        self.expect_kw("primary")?;
        self.expect_kw("key")?;
        self.expect(Kind::LParen)?;
        let partition_key = if self.at(Kind::LParen) {
            self.paren_list(|p| p.ident())?
        } else {
            vec![self.ident()?]
        };
        let mut clustering = Vec::new();
        while self.eat(Kind::Comma) {
            clustering.push(self.ident()?);
        }
        self.expect(Kind::RParen)?;
        Ok(PrimaryKey {
            partition_key,
            clustering,
            clauses: 1,
        })
    }

    /// `tableProperty (AND tableProperty)*`.
    pub(crate) fn table_properties(&mut self) -> PResult<TableProperties> {
        let mut props = TableProperties::default();
        loop {
            if self.eat_kw("compact") {
                self.expect_kw("storage")?;
                props.compact_storage = true;
            } else if self.at_kw("clustering") && self.kw_at(1, "order") {
                self.pos += 2;
                self.expect_kw("by")?;
                let order = self.paren_list(|p| p.clustering_order())?;
                props.clustering_order.extend(order);
            } else {
                props.options.push(self.property()?);
            }
            if !self.eat_kw("and") {
                return Ok(props);
            }
        }
    }

    fn clustering_order(&mut self) -> PResult<(String, Order)> {
        let column = self.ident()?;
        match self.optional_order() {
            Some(order) => Ok((column, order)),
            None => self.no_viable(),
        }
    }

    pub(crate) fn alter_table(&mut self) -> PResult<AlterTable> {
        self.expect_kw("columnfamily")?;
        let if_exists = self.if_exists()?;
        let name = self.qualified_name("table")?;
        let action = self.alter_table_action()?;
        Ok(AlterTable {
            name,
            if_exists,
            action,
        })
    }

    fn alter_table_action(&mut self) -> PResult<AlterTableAction> {
        let verb = self
            .word_at(0)
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        match verb.as_str() {
            "alter" => {
                self.pos += 1;
                self.alter_column()
            }
            "add" => {
                self.pos += 1;
                let if_not_exists = self.if_not_exists()?;
                let columns = if self.at(Kind::LParen) {
                    self.paren_list(|p| p.column_def())?
                } else {
                    vec![self.column_def()?]
                };
                Ok(AlterTableAction::Add {
                    if_not_exists,
                    columns,
                })
            }
            "drop" => {
                self.pos += 1;
                self.drop_columns()
            }
            "rename" => {
                self.pos += 1;
                let if_exists = self.if_exists()?;
                Ok(AlterTableAction::Rename {
                    if_exists,
                    renames: self.renames()?,
                })
            }
            "with" => {
                self.pos += 1;
                Ok(AlterTableAction::With(self.properties()?))
            }
            _ => self.no_viable(),
        }
    }

    /// After `ALTER TABLE t ALTER`: `c TYPE t`, `[IF EXISTS] c MASKED WITH ...`, `c DROP MASKED`.
    fn alter_column(&mut self) -> PResult<AlterTableAction> {
        let if_exists = self.if_exists()?;
        let column = self.cident()?;
        if !if_exists && self.eat_kw("type") {
            return Ok(AlterTableAction::AlterColumnType {
                column,
                ty: self.type_expr()?,
            });
        }
        if self.eat_kw("drop") {
            self.expect_kw("masked")?;
            return Ok(AlterTableAction::AlterColumnMask {
                column,
                if_exists,
                mask: None,
            });
        }
        let mask = Some(self.column_mask()?);
        Ok(AlterTableAction::AlterColumnMask {
            column,
            if_exists,
            mask,
        })
    }

    /// After `ALTER TABLE t DROP`: `COMPACT STORAGE` or columns.
    fn drop_columns(&mut self) -> PResult<AlterTableAction> {
        if self.at_kw("compact") && self.kw_at(1, "storage") {
            self.pos += 2;
            return Ok(AlterTableAction::DropCompactStorage);
        }
        let if_exists = self.if_exists()?;
        let columns = if self.at(Kind::LParen) {
            self.paren_list(|p| p.ident())?
        } else {
            vec![self.ident()?]
        };
        let timestamp = if self.eat_kw("using") {
            self.expect_kw("timestamp")?;
            if !self.at(Kind::Integer) {
                return self.mismatched("INTEGER");
            }
            self.constant()?
        } else {
            None
        };
        Ok(AlterTableAction::Drop {
            if_exists,
            columns,
            timestamp,
        })
    }

    /// `a TO b (AND c TO d)*`.
    pub(crate) fn renames(&mut self) -> PResult<Vec<(String, String)>> {
        let mut renames = Vec::new();
        loop {
            let from = self.ident()?;
            self.expect_kw("to")?;
            renames.push((from, self.ident()?));
            if !self.eat_kw("and") {
                return Ok(renames);
            }
        }
    }
}
