//! Grammar of role and permission statements: CREATE/ALTER/DROP ROLE|USER,
//! GRANT/REVOKE (roles and permissions), LIST ROLES|USERS|PERMISSIONS.

use super::{PResult, Parser};
use crate::ast::{
    AlterRole, CreateRole, DropRole, ListPermissions, ListRoles, Permission, PermissionChange,
    Permissions, QualifiedName, Resource, RoleGrant, RoleOption, Statement,
};
use crate::error::SyntaxError;
use crate::lexer::{string_value, Kind};

impl Parser<'_> {
    pub(crate) fn create_role(&mut self) -> PResult<CreateRole> {
        let user = self.eat_kw("user");
        if !user {
            self.expect_kw("role")?;
        }
        let if_not_exists = self.if_not_exists()?;
        let name = self.role_name(user)?;
        let options = self.role_options(user)?;
        Ok(CreateRole {
            name,
            user,
            if_not_exists,
            options,
        })
    }

    pub(crate) fn alter_role(&mut self) -> PResult<AlterRole> {
        let user = self.eat_kw("user");
        if !user {
            self.expect_kw("role")?;
        }
        let if_exists = self.if_exists()?;
        let name = self.role_name(user)?;
        let options = self.role_options(user)?;
        Ok(AlterRole {
            name,
            user,
            if_exists,
            options,
        })
    }

    pub(crate) fn drop_role(&mut self) -> PResult<DropRole> {
        let user = self.eat_kw("user");
        if !user {
            self.expect_kw("role")?;
        }
        let if_exists = self.if_exists()?;
        let name = self.role_name(user)?;
        Ok(DropRole {
            name,
            user,
            if_exists,
        })
    }

    /// A role name (identifier or string); user names may not be quoted identifiers.
    fn role_name(&mut self, user: bool) -> PResult<String> {
        if self.at(Kind::QMark) {
            return Err(SyntaxError::bare(
                "Bind variables cannot be used for role names",
            ));
        }
        if self.at(Kind::String) {
            return Ok(string_value(self.advance()));
        }
        if user && self.at(Kind::QuotedName) {
            return Err(SyntaxError::bare(
                "Quoted strings are are not supported for user names and USER is deprecated, please use ROLE",
            ));
        }
        self.ident()
    }

    /// Role options (`WITH opt AND opt`) or the legacy user form
    /// (`WITH PASSWORD 'x' SUPERUSER`).
    fn role_options(&mut self, user: bool) -> PResult<Vec<RoleOption>> {
        let mut options = Vec::new();
        if user {
            if self.eat_kw("with") {
                options.push(self.user_password()?);
            }
            if self.eat_kw("superuser") {
                options.push(RoleOption::Superuser(true));
            } else if self.eat_kw("nosuperuser") {
                options.push(RoleOption::Superuser(false));
            }
            return Ok(options);
        }
        if !self.eat_kw("with") {
            return Ok(options);
        }
        loop {
            options.push(self.role_option()?);
            if !self.eat_kw("and") {
                return Ok(options);
            }
        }
    }

    fn user_password(&mut self) -> PResult<RoleOption> {
        let hashed = self.eat_kw("hashed");
        self.expect_kw("password")?;
        let password = self.string_literal()?;
        Ok(if hashed {
            RoleOption::HashedPassword(password)
        } else {
            RoleOption::Password(password)
        })
    }

    fn role_option(&mut self) -> PResult<RoleOption> {
        let word = self
            .word_at(0)
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        self.pos += 1;
        match word.as_str() {
            "password" => self
                .after_eq(|p| p.string_literal())
                .map(RoleOption::Password),
            "hashed" => {
                self.expect_kw("password")?;
                self.after_eq(|p| p.string_literal())
                    .map(RoleOption::HashedPassword)
            }
            "superuser" => self.after_eq(|p| p.boolean()).map(RoleOption::Superuser),
            "login" => self.after_eq(|p| p.boolean()).map(RoleOption::Login),
            "options" => self.after_eq(|p| p.constant_map()).map(RoleOption::Options),
            "access" => self.access_option(),
            _ => {
                self.pos -= 1;
                self.no_viable()
            }
        }
    }

    fn after_eq<T>(&mut self, value: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.expect(Kind::Eq)?;
        value(self)
    }

    fn boolean(&mut self) -> PResult<bool> {
        match self.word_at(0).map(str::to_ascii_lowercase).as_deref() {
            Some(word @ ("true" | "false")) => {
                let value = word == "true";
                self.pos += 1;
                Ok(value)
            }
            _ => self.mismatched("BOOLEAN"),
        }
    }

    /// `ACCESS TO [ALL] DATACENTERS ...` / `ACCESS FROM [ALL] CIDRS ...`.
    fn access_option(&mut self) -> PResult<RoleOption> {
        let datacenters = self.eat_kw("to");
        if !datacenters {
            self.expect_kw("from")?;
        }
        let all = self.eat_kw("all");
        self.expect_kw(if datacenters { "datacenters" } else { "cidrs" })?;
        if all {
            return Ok(if datacenters {
                RoleOption::AccessToAllDatacenters
            } else {
                RoleOption::AccessFromAllCidrs
            });
        }
        self.expect(Kind::LBrace)?;
        let mut names = vec![self.string_literal()?];
        while self.eat(Kind::Comma) {
            names.push(self.string_literal()?);
        }
        self.expect(Kind::RBrace)?;
        Ok(if datacenters {
            RoleOption::AccessToDatacenters(names)
        } else {
            RoleOption::AccessFromCidrs(names)
        })
    }

    /// GRANT/REVOKE of a role or of permissions.
    pub(crate) fn grant_or_revoke(&mut self) -> PResult<Statement> {
        let grant = self.at_kw("grant");
        self.pos += 1;
        let target_kw = if grant { "to" } else { "from" };
        if self.permissions_follow() {
            let permissions = self.permissions()?;
            self.expect_kw("on")?;
            let resource = self.resource()?;
            self.expect_kw(target_kw)?;
            let role = self.role_name(false)?;
            let change = PermissionChange {
                permissions,
                resource,
                role,
            };
            return Ok(if grant {
                Statement::GrantPermissions(change)
            } else {
                Statement::RevokePermissions(change)
            });
        }
        let role = self.role_name(false)?;
        self.expect_kw(target_kw)?;
        let grantee = self.role_name(false)?;
        let change = RoleGrant { role, grantee };
        Ok(if grant {
            Statement::GrantRole(change)
        } else {
            Statement::RevokeRole(change)
        })
    }

    fn permissions_follow(&self) -> bool {
        let second_is_name =
            self.kind_at(1) == Some(Kind::Ident) || self.kind_at(1) == Some(Kind::Comma);
        (self.at_kw("all")
            && self.kind_at(1).is_some()
            && !self.kw_at(1, "to")
            && !self.kw_at(1, "from"))
            || (self.word_at(0).and_then(permission_named).is_some()
                && (second_is_name || self.kw_at(1, "on")))
    }

    /// `ALL [PERMISSIONS]` or `perm [PERMISSION] (, perm [PERMISSION])*`.
    fn permissions(&mut self) -> PResult<Permissions> {
        if self.eat_kw("all") {
            self.eat_kw("permissions");
            return Ok(None);
        }
        let mut permissions = vec![self.permission()?];
        while self.eat(Kind::Comma) {
            permissions.push(self.permission()?);
        }
        Ok(Some(permissions))
    }

    fn permission(&mut self) -> PResult<Permission> {
        let Some(permission) = self.word_at(0).and_then(permission_named) else {
            return self.no_viable();
        };
        self.pos += 1;
        self.eat_kw("permission");
        Ok(permission)
    }

    fn resource(&mut self) -> PResult<Resource> {
        if self.eat_kw("all") {
            return self.all_resource();
        }
        let word = self
            .word_at(0)
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        match word.as_str() {
            "keyspace" => {
                self.pos += 1;
                Ok(Resource::Keyspace(self.keyspace_name()?))
            }
            "role" => {
                self.pos += 1;
                Ok(Resource::Role(self.role_name(false)?))
            }
            "function" => {
                self.pos += 1;
                let name = self.function_name()?;
                Ok(Resource::Function {
                    name,
                    arg_types: self.type_signature()?,
                })
            }
            "mbean" | "mbeans" => {
                self.pos += 1;
                let name = self.string_literal()?;
                Ok(if word == "mbean" {
                    Resource::Mbean(name)
                } else {
                    Resource::Mbeans(name)
                })
            }
            _ => {
                self.eat_kw("columnfamily");
                self.table_resource()
            }
        }
    }

    fn table_resource(&mut self) -> PResult<Resource> {
        let name: QualifiedName = self.qualified_name("table")?;
        Ok(Resource::Table(name))
    }

    /// After `ON ALL`: KEYSPACES, ROLES, MBEANS, FUNCTIONS [IN KEYSPACE ks].
    fn all_resource(&mut self) -> PResult<Resource> {
        if self.eat_kw("keyspaces") {
            return Ok(Resource::AllKeyspaces);
        }
        if self.eat_kw("roles") {
            return Ok(Resource::AllRoles);
        }
        if self.eat_kw("mbeans") {
            return Ok(Resource::AllMbeans);
        }
        self.expect_kw("functions")?;
        if !self.eat_kw("in") {
            return Ok(Resource::AllFunctions);
        }
        self.expect_kw("keyspace")?;
        Ok(Resource::AllFunctionsInKeyspace(self.keyspace_name()?))
    }

    /// LIST ROLES | USERS | permissions.
    pub(crate) fn list_statement(&mut self) -> PResult<Statement> {
        self.expect_kw("list")?;
        if self.eat_kw("users") {
            return Ok(Statement::ListUsers);
        }
        if self.eat_kw("roles") {
            let of = self.list_of()?;
            let recursive = !self.eat_kw("norecursive");
            return Ok(Statement::ListRoles(ListRoles { of, recursive }));
        }
        let permissions = self.permissions()?;
        let resource = if self.eat_kw("on") {
            Some(self.resource()?)
        } else {
            None
        };
        let of = self.list_of()?;
        let recursive = !self.eat_kw("norecursive");
        Ok(Statement::ListPermissions(ListPermissions {
            permissions,
            resource,
            of,
            recursive,
        }))
    }

    fn list_of(&mut self) -> PResult<Option<String>> {
        if self.eat_kw("of") {
            return self.role_name(false).map(Some);
        }
        Ok(None)
    }
}

fn permission_named(word: &str) -> Option<Permission> {
    let permission = match word.to_ascii_lowercase().as_str() {
        "create" => Permission::Create,
        "alter" => Permission::Alter,
        "drop" => Permission::Drop,
        "select" => Permission::Select,
        "modify" => Permission::Modify,
        "authorize" => Permission::Authorize,
        "describe" => Permission::Describe,
        "execute" => Permission::Execute,
        "unmask" => Permission::Unmask,
        "select_masked" => Permission::SelectMasked,
        _ => return None,
    };
    Some(permission)
}
