//! Grammar of SELECT: selectors, WHERE relations, GROUP BY, ORDER BY,
//! limits. The WHERE clause and selectors are reused by UPDATE, DELETE and
//! materialized views.

use super::{PResult, Parser};
use crate::ast::{
    ArithOp, Operator, Order, Ordering, Relation, Select, Selector, SelectorExpr, Term,
};
use crate::lexer::Kind;

impl Parser<'_> {
    pub(crate) fn select_statement(&mut self) -> PResult<Select> {
        self.expect_kw("select")?;
        let modifier = self.pos;
        let json = self.kw_at(0, "json") && self.selector_list_follows(1);
        self.pos += usize::from(json);
        let distinct = self.kw_at(0, "distinct") && self.selector_list_follows(1);
        self.pos += usize::from(distinct);
        let selectors = match json || distinct {
            true => self.selectors_after(modifier)?,
            false => self.selectors()?,
        };
        self.expect_kw("from")?;
        let table = self.qualified_name("table")?;
        let where_clause = if self.eat_kw("where") {
            self.where_clause()?
        } else {
            Vec::new()
        };
        let group_by = self.group_by()?;
        let order_by = self.order_by()?;
        let per_partition_limit = self.per_partition_limit()?;
        let limit = if self.eat_kw("limit") {
            Some(self.int_value()?)
        } else {
            None
        };
        let allow_filtering = self.eat_kw("allow");
        if allow_filtering {
            self.expect_kw("filtering")?;
        }
        Ok(Select {
            json,
            distinct,
            selectors,
            table,
            where_clause,
            group_by,
            order_by,
            per_partition_limit,
            limit,
            allow_filtering,
        })
    }

    /// Whether the token at `offset` can start a selector list (so that a
    /// preceding JSON/DISTINCT is a modifier, not a column name).
    fn selector_list_follows(&self, offset: usize) -> bool {
        let ends_selector = matches!(self.kind_at(offset), Some(Kind::Comma | Kind::Dot) | None);
        let is_alias = self.kw_at(offset, "as") && self.kind_at(offset + 1) != Some(Kind::Comma);
        !ends_selector && !is_alias && !self.kw_at(offset, "from")
    }

    /// `*` (`None`) or a list of selectors, then FROM.
    pub(crate) fn selectors(&mut self) -> PResult<Option<Vec<Selector>>> {
        let selectors = self.selector_list()?;
        self.expect_from()?;
        Ok(selectors)
    }

    /// The selectors after JSON or DISTINCT (token `modifier` is the first of them). When a
    /// name or a marker follows the keyword, Cassandra tries the selectors as a syntactic
    /// predicate: when they do not parse, it takes the keyword for a column's name and fails
    /// on the token after it (`SELECT [DISTINCT] k x`).
    fn selectors_after(&mut self, modifier: usize) -> PResult<Option<Vec<Selector>>> {
        let next = self.tokens.get(modifier + 1).map(|t| t.kind);
        let predicate = matches!(next, Some(Kind::Ident | Kind::QuotedName | Kind::QMark));
        let selectors = match self.selector_list() {
            Err(_) if predicate && !self.too_deep => {
                return self.no_viable_between(modifier, modifier + 1)
            }
            parsed => parsed?,
        };
        self.expect_from()?;
        Ok(selectors)
    }

    /// `*` (`None`) or a list of selectors; a token after the last one that its prediction
    /// does not expect fails here (see `selector_prediction_ends`).
    fn selector_list(&mut self) -> PResult<Option<Vec<Selector>>> {
        if self.eat(Kind::Star) {
            return Ok(None);
        }
        let mut selectors = vec![self.selector()?];
        while self.eat(Kind::Comma) {
            selectors.push(self.selector()?);
        }
        let unaliased = selectors.last().filter(|last| last.alias.is_none());
        if let (Some(last), false) = (unaliased, self.at_kw("from")) {
            self.selector_prediction_ends(&last.expr)?;
        }
        Ok(Some(selectors))
    }

    fn expect_from(&self) -> PResult<()> {
        match self.at_kw("from") {
            true => Ok(()),
            false => self.mismatched("K_FROM"),
        }
    }

    /// Cassandra predicts a selector that starts with a name (`k`, `"k"`, `?`, `k.f`) from
    /// that name on: after a selector (or GROUP BY term) ending with one, a token the
    /// prediction does not expect is "no viable alternative", the snippet bracketing the name
    /// (`SELECT [k] x`); after one ending with a name or a constant, the prediction read one
    /// token further.
    fn selector_prediction_ends(&self, expr: &SelectorExpr) -> PResult<()> {
        if let Some(tokens) = self.trailing_name_tokens(expr) {
            if !self.may_follow_a_name_selector() {
                return self.no_viable_between(self.pos.saturating_sub(tokens), self.pos);
            }
        }
        if ends_in_name_or_constant(expr) {
            self.note_read(self.pos + 1);
        }
        Ok(())
    }

    /// How many tokens the name a selector just parsed ends with takes (`k` and `?` one, `k.f`
    /// three).
    fn trailing_name_tokens(&self, expr: &SelectorExpr) -> Option<usize> {
        self.trailing_name_at(expr, self.pos)
    }

    /// `trailing_name_tokens` of a selector whose last token is the one before token `end`.
    fn trailing_name_at(&self, expr: &SelectorExpr, end: usize) -> Option<usize> {
        match expr {
            SelectorExpr::Column(_) => Some(1),
            SelectorExpr::Term(Term::Bind(_)) => {
                let before = end.checked_sub(1)?;
                (self.tokens.get(before)?.kind == Kind::QMark).then_some(1)
            }
            SelectorExpr::Field(target, _) => {
                matches!(target.as_ref(), SelectorExpr::Column(_)).then_some(3)
            }
            SelectorExpr::Negated(inner) | SelectorExpr::Arithmetic { right: inner, .. } => {
                self.trailing_name_at(inner, end)
            }
            _ => None,
        }
    }

    /// Whether the token here is one Cassandra 5.0.4's prediction of a selector expects after
    /// a name (or the end of the text).
    fn may_follow_a_name_selector(&self) -> bool {
        match self.kind_at(0) {
            None => true,
            Some(Kind::Ident) => ["as", "from", "order", "per", "limit", "allow"]
                .iter()
                .any(|kw| self.at_kw(kw)),
            // `f(` may follow a name, not a marker: `? (` is no viable alternative.
            Some(Kind::LParen) => self
                .pos
                .checked_sub(1)
                .and_then(|i| self.tokens.get(i))
                .is_some_and(|t| t.kind != Kind::QMark),
            Some(kind) => matches!(
                kind,
                Kind::Comma
                    | Kind::Dot
                    | Kind::LBracket
                    | Kind::Plus
                    | Kind::Minus
                    | Kind::Star
                    | Kind::Slash
                    | Kind::Percent
                    | Kind::RParen
                    | Kind::RBracket
                    | Kind::RBrace
                    | Kind::Colon
                    | Kind::Semicolon
            ),
        }
    }

    fn selector(&mut self) -> PResult<Selector> {
        let expr = self.selector_expr()?;
        let alias = if self.eat_kw("as") {
            Some(self.ident()?)
        } else {
            None
        };
        Ok(Selector { expr, alias })
    }

    /// `unaliasedSelector`: selector arithmetic.
    pub(crate) fn selector_expr(&mut self) -> PResult<SelectorExpr> {
        let first = self.selector_product()?;
        if self.additive_op().is_none() {
            return Ok(first);
        }
        self.fold_operations(first, Self::additive_op, Self::selector_addend, arithmetic)
    }

    /// The operand after `+` or `-` (or a negative number glued to the left one: `a -1`).
    fn selector_addend(&mut self, _: ArithOp) -> PResult<SelectorExpr> {
        if self.at(Kind::Minus) || self.at(Kind::Plus) {
            self.pos += 1;
            return self.selector_product();
        }
        Ok(SelectorExpr::Term(self.negative_number_as_positive()?))
    }

    fn selector_product(&mut self) -> PResult<SelectorExpr> {
        let first = self.selector_group()?;
        if self.multiplicative_op().is_none() {
            return Ok(first);
        }
        let factor = |p: &mut Self, _| {
            p.pos += 1;
            p.selector_group()
        };
        self.fold_operations(first, Self::multiplicative_op, factor, arithmetic)
    }

    fn selector_group(&mut self) -> PResult<SelectorExpr> {
        if self.at(Kind::Minus) {
            return self.nested(|p| {
                p.pos += 1;
                Ok(SelectorExpr::Negated(Box::new(p.selector_group()?)))
            });
        }
        let base = self.selector_atom()?;
        self.selector_modifiers(base)
    }

    /// Field (`.f`), element (`[k]`) and slice (`[a..b]`) accesses.
    fn selector_modifiers(&mut self, mut expr: SelectorExpr) -> PResult<SelectorExpr> {
        let depth = self.depth;
        while self.at(Kind::Dot) || self.at(Kind::LBracket) {
            self.descend()?;
            if self.eat(Kind::Dot) {
                self.field_follows(&expr)?;
                expr = SelectorExpr::Field(Box::new(expr), self.ident()?);
            } else {
                self.pos += 1;
                expr = self.sub_selection(expr)?;
                self.expect(Kind::RBracket)?;
            }
        }
        self.depth = depth;
        Ok(expr)
    }

    /// After `name .`, Cassandra's prediction from the name wants a field's name: any other
    /// token is "no viable alternative", the snippet bracketing the name (`SELECT [k] . FROM`).
    fn field_follows(&self, expr: &SelectorExpr) -> PResult<()> {
        let dot = self.pos.saturating_sub(1);
        if self.ident_at(0) || self.trailing_name_at(expr, dot) != Some(1) {
            return Ok(());
        }
        self.no_viable_between(dot.saturating_sub(1), self.pos)
    }

    fn sub_selection(&mut self, target: SelectorExpr) -> PResult<SelectorExpr> {
        let target = Box::new(target);
        if self.eat(Kind::Range) {
            return Ok(SelectorExpr::Slice {
                target,
                from: None,
                to: Some(self.term()?),
            });
        }
        let first = self.term()?;
        if !self.eat(Kind::Range) {
            return Ok(SelectorExpr::Element(target, first));
        }
        let to = if self.at(Kind::RBracket) {
            None
        } else {
            Some(self.term()?)
        };
        Ok(SelectorExpr::Slice {
            target,
            from: Some(first),
            to,
        })
    }

    /// `selectionGroupWithoutField`.
    fn selector_atom(&mut self) -> PResult<SelectorExpr> {
        match self.kind_at(0) {
            Some(Kind::LParen) => self.nested(Self::paren_selector),
            Some(Kind::LBracket) => self.nested(|p| {
                p.pos += 1;
                Ok(SelectorExpr::List(p.selectors_until(Kind::RBracket)?))
            }),
            Some(Kind::LBrace) => self.nested(Self::brace_selector),
            Some(Kind::QMark | Kind::Colon) => Ok(SelectorExpr::Term(Term::Bind(self.marker()?))),
            _ => self.simple_selector(),
        }
    }

    fn simple_selector(&mut self) -> PResult<SelectorExpr> {
        if let Some(literal) = self.constant()? {
            return Ok(SelectorExpr::Term(Term::Literal(literal)));
        }
        if self.eat_kw("null") {
            return Ok(SelectorExpr::Term(Term::Null));
        }
        if self.kind_at(1) == Some(Kind::LParen) {
            if let Some(special) = self.nested(Self::special_function)? {
                return Ok(special);
            }
        }
        if self.function_call_follows() {
            return self.nested(|p| {
                let name = p.function_name()?;
                p.expect(Kind::LParen)?;
                let args = p.selectors_until(Kind::RParen)?;
                Ok(SelectorExpr::FunctionCall { name, args })
            });
        }
        self.cident().map(SelectorExpr::Column)
    }

    /// COUNT(*), WRITETIME/MAXWRITETIME/TTL(col) and CAST(x AS type).
    fn special_function(&mut self) -> PResult<Option<SelectorExpr>> {
        let Some(word) = self.word_at(0) else {
            return Ok(None);
        };
        let word = word.to_ascii_lowercase();
        if word == "count" && self.kind_at(2) == Some(Kind::Star) {
            self.pos += 3;
            self.expect(Kind::RParen)?;
            return Ok(Some(SelectorExpr::CountRows));
        }
        let wrap: fn(Box<SelectorExpr>) -> SelectorExpr = match word.as_str() {
            "writetime" => SelectorExpr::WriteTime,
            "maxwritetime" => SelectorExpr::MaxWriteTime,
            "ttl" => SelectorExpr::Ttl,
            "cast" => return self.cast_selector().map(Some),
            _ => return Ok(None),
        };
        self.pos += 2;
        let column = SelectorExpr::Column(self.cident()?);
        let target = self.selector_modifiers(column)?;
        self.expect(Kind::RParen)?;
        Ok(Some(wrap(Box::new(target))))
    }

    fn cast_selector(&mut self) -> PResult<SelectorExpr> {
        self.pos += 2;
        let inner = self.selector_expr()?;
        self.expect_kw("as")?;
        let ty = self.cast_type()?;
        self.expect(Kind::RParen)?;
        Ok(SelectorExpr::Cast(Box::new(inner), ty))
    }

    /// `(type) selector`, `(a)` or `(a, b)`.
    fn paren_selector(&mut self) -> PResult<SelectorExpr> {
        if let Some(ty) = self.try_type_hint()? {
            let inner = self.selector_atom()?;
            return Ok(SelectorExpr::TypeHint(ty, Box::new(inner)));
        }
        let mut items = self.paren_list(|p| p.selector_expr())?;
        match items.len() {
            1 => Ok(SelectorExpr::Parenthesized(Box::new(items.remove(0)))),
            _ => Ok(SelectorExpr::Tuple(items)),
        }
    }

    fn brace_selector(&mut self) -> PResult<SelectorExpr> {
        self.expect(Kind::LBrace)?;
        if self.eat(Kind::RBrace) {
            return Ok(SelectorExpr::Set(Vec::new()));
        }
        let first = self.selector_expr()?;
        if !self.eat(Kind::Colon) {
            let mut items = vec![first];
            while self.eat(Kind::Comma) {
                items.push(self.selector_expr()?);
            }
            self.expect(Kind::RBrace)?;
            return Ok(SelectorExpr::Set(items));
        }
        let mut entries = vec![(first, self.selector_expr()?)];
        while self.eat(Kind::Comma) {
            let key = self.selector_expr()?;
            self.expect(Kind::Colon)?;
            entries.push((key, self.selector_expr()?));
        }
        self.expect(Kind::RBrace)?;
        Ok(SelectorExpr::Map(entries))
    }

    fn selectors_until(&mut self, close: Kind) -> PResult<Vec<SelectorExpr>> {
        let mut items = Vec::new();
        if self.eat(close) {
            return Ok(items);
        }
        if !self.term_starts_here() {
            return self.mismatched(close.expected_name());
        }
        loop {
            items.push(self.selector_expr()?);
            if !self.eat(Kind::Comma) {
                break;
            }
        }
        self.expect(close)?;
        Ok(items)
    }

    // ---- WHERE --------------------------------------------------------

    /// `relation (AND relation)*`.
    pub(crate) fn where_clause(&mut self) -> PResult<Vec<Relation>> {
        let mut relations = Vec::new();
        loop {
            self.relation(&mut relations)?;
            if !self.eat_kw("and") {
                return Ok(relations);
            }
        }
    }

    /// One relation; parenthesised relations are flattened into `out`.
    fn relation(&mut self, out: &mut Vec<Relation>) -> PResult<()> {
        if self.eat(Kind::ExprOpen) {
            let index = self.qualified_name("index")?;
            self.expect(Kind::Comma)?;
            let value = self.term()?;
            self.expect(Kind::RParen)?;
            out.push(Relation::CustomIndex { index, value });
        } else if self.at(Kind::LParen) && !self.column_tuple_follows() {
            self.nested(|p| {
                p.pos += 1;
                p.relation(out)?;
                p.expect(Kind::RParen)
            })?;
        } else if self.at(Kind::LParen) {
            out.push(self.multi_column_relation()?);
        } else if self.at_kw("token") && self.kind_at(1) == Some(Kind::LParen) {
            self.pos += 1;
            let columns = self.paren_list(|p| p.cident())?;
            let op = self.comparison_op()?;
            out.push(Relation::Token {
                columns,
                op,
                value: self.term()?,
            });
        } else {
            out.push(self.single_column_relation()?);
        }
        Ok(())
    }

    /// Whether `(a, b, ...)` (a tuple of column names) starts here.
    fn column_tuple_follows(&self) -> bool {
        let name = matches!(self.kind_at(1), Some(Kind::QuotedName)) || self.ident_at(1);
        name && matches!(self.kind_at(2), Some(Kind::Comma | Kind::RParen))
    }

    fn single_column_relation(&mut self) -> PResult<Relation> {
        let start = self.pos;
        let column = self.cident()?;
        self.relation_operator_follows(start)?;
        if self.eat(Kind::LBracket) {
            let key = self.term()?;
            self.expect(Kind::RBracket)?;
            let op = self.comparison_op()?;
            return Ok(Relation::MapElement {
                column,
                key,
                op,
                value: self.term()?,
            });
        }
        if self.eat_kw("is") {
            self.expect_kw("not")?;
            self.expect_kw("null")?;
            return Ok(Relation::IsNotNull(column));
        }
        let (op, value) = self.operator_and_value()?;
        Ok(Relation::Single { column, op, value })
    }

    /// Cassandra predicts a relation on a column (from its name, token `start`) by the
    /// operator after it, and an IN relation by the token after IN: a token no relation has
    /// there is "no viable alternative", the snippet bracketing the column (`WHERE [k] x`).
    fn relation_operator_follows(&self, start: usize) -> PResult<()> {
        let operator = match self.kind_at(0) {
            Some(
                Kind::LBracket | Kind::Eq | Kind::Lt | Kind::Lte | Kind::Gt | Kind::Gte | Kind::Neq,
            ) => true,
            Some(Kind::Ident) => ["like", "contains", "is"].iter().any(|kw| self.at_kw(kw)),
            _ => false,
        };
        if operator {
            return Ok(());
        }
        if !self.at_kw("in") {
            return self.no_viable_between(start, self.pos);
        }
        match self.kind_at(1) {
            Some(Kind::LParen | Kind::QMark | Kind::Colon) => Ok(()),
            _ => self.no_viable_between(start, self.pos + 1),
        }
    }

    /// After a column: `op term`, `LIKE term`, `IN values`, `CONTAINS [KEY] term`.
    pub(crate) fn operator_and_value(&mut self) -> PResult<(Operator, Term)> {
        if self.eat_kw("in") {
            return Ok((Operator::In, self.in_values()?));
        }
        let op = if self.eat_kw("like") {
            Operator::Like
        } else if self.eat_kw("contains") {
            if self.eat_kw("key") {
                Operator::ContainsKey
            } else {
                Operator::Contains
            }
        } else {
            self.comparison_op()?
        };
        Ok((op, self.term()?))
    }

    /// `= < <= > >= !=`.
    pub(crate) fn comparison_op(&mut self) -> PResult<Operator> {
        let op = match self.kind_at(0) {
            Some(Kind::Eq) => Operator::Eq,
            Some(Kind::Lt) => Operator::Lt,
            Some(Kind::Lte) => Operator::Lte,
            Some(Kind::Gt) => Operator::Gt,
            Some(Kind::Gte) => Operator::Gte,
            Some(Kind::Neq) => Operator::Neq,
            _ => return self.no_viable(),
        };
        self.pos += 1;
        Ok(op)
    }

    /// `(t1, ...)` as a `Term::List`, or a bind marker.
    pub(crate) fn in_values(&mut self) -> PResult<Term> {
        if matches!(self.kind_at(0), Some(Kind::QMark | Kind::Colon)) {
            return Ok(Term::Bind(self.marker()?));
        }
        self.expect(Kind::LParen)?;
        let mut values = Vec::new();
        if !self.eat(Kind::RParen) {
            if !self.term_starts_here() {
                return self.mismatched(Kind::RParen.expected_name());
            }
            values.push(self.term()?);
            while self.eat(Kind::Comma) {
                values.push(self.term()?);
            }
            self.expect(Kind::RParen)?;
        }
        Ok(Term::List(values))
    }

    fn multi_column_relation(&mut self) -> PResult<Relation> {
        let columns = self.paren_list(|p| p.cident())?;
        if self.eat_kw("in") {
            return Ok(Relation::MultiColumn {
                columns,
                op: Operator::In,
                value: self.in_values()?,
            });
        }
        let op = self.comparison_op()?;
        let value = if self.at(Kind::LParen) {
            Term::Tuple(self.tuple_literal()?)
        } else {
            Term::Bind(self.marker()?)
        };
        Ok(Relation::MultiColumn { columns, op, value })
    }

    // ---- GROUP BY / ORDER BY / LIMIT ------------------------------------

    fn group_by(&mut self) -> PResult<Vec<SelectorExpr>> {
        if !self.eat_kw("group") {
            return Ok(Vec::new());
        }
        self.expect_kw("by")?;
        let mut groups = vec![self.selector_expr()?];
        while self.eat(Kind::Comma) {
            groups.push(self.selector_expr()?);
        }
        if let Some(last) = groups.last() {
            self.selector_prediction_ends(last)?;
        }
        Ok(groups)
    }

    fn order_by(&mut self) -> PResult<Vec<Ordering>> {
        if !self.eat_kw("order") {
            return Ok(Vec::new());
        }
        self.expect_kw("by")?;
        let mut orderings = vec![self.ordering()?];
        while self.eat(Kind::Comma) {
            orderings.push(self.ordering()?);
        }
        Ok(orderings)
    }

    fn ordering(&mut self) -> PResult<Ordering> {
        let column = self.cident()?;
        let ann_of = if self.eat_kw("ann") {
            self.expect_kw("of")?;
            Some(self.term()?)
        } else {
            None
        };
        let order = self.optional_order().unwrap_or(Order::Asc);
        Ok(Ordering {
            column,
            ann_of,
            order,
        })
    }

    /// Consumes `ASC` or `DESC` if present.
    pub(crate) fn optional_order(&mut self) -> Option<Order> {
        if self.eat_kw("asc") {
            Some(Order::Asc)
        } else if self.eat_kw("desc") {
            Some(Order::Desc)
        } else {
            None
        }
    }

    fn per_partition_limit(&mut self) -> PResult<Option<Term>> {
        if !self.eat_kw("per") {
            return Ok(None);
        }
        self.expect_kw("partition")?;
        self.expect_kw("limit")?;
        self.int_value().map(Some)
    }

    /// `intValue`: an integer literal or a bind marker.
    pub(crate) fn int_value(&mut self) -> PResult<Term> {
        if matches!(self.kind_at(0), Some(Kind::QMark | Kind::Colon)) {
            return Ok(Term::Bind(self.marker()?));
        }
        if !self.at(Kind::Integer) {
            return self.no_viable();
        }
        match self.constant()? {
            Some(literal) => Ok(Term::Literal(literal)),
            None => self.no_viable(),
        }
    }
}

/// Whether a selector ends with a name or a constant (`k`, `k.f`, `?`, `1`, `null`, `k + 1`).
fn ends_in_name_or_constant(expr: &SelectorExpr) -> bool {
    match expr {
        SelectorExpr::Column(_) | SelectorExpr::Field(..) => true,
        SelectorExpr::Term(term) => matches!(term, Term::Literal(_) | Term::Null | Term::Bind(_)),
        SelectorExpr::Negated(inner) | SelectorExpr::Arithmetic { right: inner, .. } => {
            ends_in_name_or_constant(inner)
        }
        _ => false,
    }
}

fn arithmetic(op: ArithOp, left: SelectorExpr, right: SelectorExpr) -> SelectorExpr {
    SelectorExpr::Arithmetic {
        op,
        left: Box::new(left),
        right: Box::new(right),
    }
}
