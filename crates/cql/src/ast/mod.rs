//! The CQL abstract syntax tree: the `Statement` enum and shared building
//! blocks (names, literals, terms, types). Statement payloads live in
//! `dml` (queries and writes), `ddl` (schema) and `dcl` (auth, DESCRIBE).
//! Identifiers are already case-normalised: unquoted ones lowercased,
//! quoted ones kept verbatim.

mod dcl;
mod ddl;
mod dml;
mod term;

pub use dcl::*;
pub use ddl::*;
pub use dml::*;
pub use term::*;

/// A possibly keyspace-qualified name (`ks.tbl`, `tbl`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QualifiedName {
    pub keyspace: Option<String>,
    pub name: String,
}

impl QualifiedName {
    /// An unqualified name.
    pub fn simple(name: impl Into<String>) -> Self {
        QualifiedName {
            keyspace: None,
            name: name.into(),
        }
    }
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Asc,
    Desc,
}

/// One parsed CQL statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    Select(Select),
    Insert(Insert),
    Update(Update),
    Delete(Delete),
    Batch(Batch),
    Use(String),
    Truncate(QualifiedName),
    CreateKeyspace(CreateKeyspace),
    AlterKeyspace(AlterKeyspace),
    DropKeyspace(DropObject),
    CreateTable(CreateTable),
    AlterTable(AlterTable),
    DropTable(DropObject),
    CreateType(CreateType),
    AlterType(AlterType),
    DropType(DropObject),
    CreateIndex(CreateIndex),
    DropIndex(DropObject),
    CreateMaterializedView(CreateMaterializedView),
    AlterMaterializedView(AlterMaterializedView),
    DropMaterializedView(DropObject),
    CreateTrigger(CreateTrigger),
    DropTrigger(DropTrigger),
    CreateFunction(CreateFunction),
    DropFunction(DropFunction),
    CreateAggregate(CreateAggregate),
    DropAggregate(DropFunction),
    CreateRole(CreateRole),
    AlterRole(AlterRole),
    DropRole(DropRole),
    GrantRole(RoleGrant),
    RevokeRole(RoleGrant),
    GrantPermissions(PermissionChange),
    RevokePermissions(PermissionChange),
    ListPermissions(ListPermissions),
    ListRoles(ListRoles),
    ListUsers,
    Describe(Describe),
}

/// `DROP <object> [IF EXISTS] name` for keyspaces (name only), tables,
/// types, indexes and materialized views.
#[derive(Debug, Clone, PartialEq)]
pub struct DropObject {
    pub name: QualifiedName,
    pub if_exists: bool,
}
