//! AST of role, permission and DESCRIBE statements.

use super::{Literal, QualifiedName, TypeExpr};

/// `CREATE ROLE` (and `CREATE USER`, with `user` set: USER implies LOGIN).
#[derive(Debug, Clone, PartialEq)]
pub struct CreateRole {
    pub name: String,
    pub user: bool,
    pub if_not_exists: bool,
    pub options: Vec<RoleOption>,
}

/// `ALTER ROLE` / `ALTER USER`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterRole {
    pub name: String,
    pub user: bool,
    pub if_exists: bool,
    pub options: Vec<RoleOption>,
}

/// `DROP ROLE` / `DROP USER`.
#[derive(Debug, Clone, PartialEq)]
pub struct DropRole {
    pub name: String,
    pub user: bool,
    pub if_exists: bool,
}

/// A role option (`WITH PASSWORD = 'x' AND LOGIN = true ...`).
#[derive(Debug, Clone, PartialEq)]
pub enum RoleOption {
    Password(String),
    HashedPassword(String),
    Login(bool),
    Superuser(bool),
    Options(Vec<(Literal, Literal)>),
    AccessToAllDatacenters,
    AccessToDatacenters(Vec<String>),
    AccessFromAllCidrs,
    AccessFromCidrs(Vec<String>),
}

/// `GRANT role TO grantee` / `REVOKE role FROM grantee`.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleGrant {
    pub role: String,
    pub grantee: String,
}

/// A permission name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    Create,
    Alter,
    Drop,
    Select,
    Modify,
    Authorize,
    Describe,
    Execute,
    Unmask,
    SelectMasked,
}

/// `ALL [PERMISSIONS]` (`None`) or a list of permissions.
pub type Permissions = Option<Vec<Permission>>;

/// What a permission applies to.
#[derive(Debug, Clone, PartialEq)]
pub enum Resource {
    AllKeyspaces,
    Keyspace(String),
    Table(QualifiedName),
    AllRoles,
    Role(String),
    AllFunctions,
    AllFunctionsInKeyspace(String),
    Function {
        name: QualifiedName,
        arg_types: Vec<TypeExpr>,
    },
    AllMbeans,
    Mbean(String),
    Mbeans(String),
}

/// `GRANT perms ON resource TO role` / `REVOKE ... FROM role`.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionChange {
    pub permissions: Permissions,
    pub resource: Resource,
    pub role: String,
}

/// `LIST perms [ON resource] [OF role] [NORECURSIVE]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPermissions {
    pub permissions: Permissions,
    pub resource: Option<Resource>,
    pub of: Option<String>,
    pub recursive: bool,
}

/// `LIST ROLES [OF role] [NORECURSIVE]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListRoles {
    pub of: Option<String>,
    pub recursive: bool,
}

/// `DESCRIBE ... [WITH INTERNALS]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Describe {
    pub target: DescribeTarget,
    pub with_internals: bool,
}

/// What to describe.
#[derive(Debug, Clone, PartialEq)]
pub enum DescribeTarget {
    Cluster,
    Schema,
    FullSchema,
    Keyspaces,
    /// `DESCRIBE [ONLY] KEYSPACE [name]`; `None` is the current keyspace.
    Keyspace {
        name: Option<String>,
        only: bool,
    },
    Tables,
    Table(QualifiedName),
    Index(QualifiedName),
    MaterializedView(QualifiedName),
    Types,
    Type(QualifiedName),
    Functions,
    Function(QualifiedName),
    Aggregates,
    Aggregate(QualifiedName),
    /// `DESCRIBE name` / `DESCRIBE ks.name`: a keyspace or any schema object.
    Generic(QualifiedName),
}
