//! CREATE, ALTER and DROP TYPE with Cassandra 5.0's rules and messages: fields of a type are
//! never counters nor non-frozen user types; ALTER TYPE adds a field (never one that makes
//! the type nest itself, nor to a type in a partition key) or renames fields, and every type
//! and table using the type sees the new definition; DROP TYPE refuses a type still used by
//! another type or by a table.
use std::collections::BTreeMap;
use std::sync::Arc;

use cql::ast::{self, AlterTypeAction, TypeExpr};
use schema::{references_type, KeyspaceMetadata, Schema};
use types::result::{SchemaChangeKind, SchemaChangeTarget};
use types::{CqlError, CqlResult, CqlType, NativeType, UdtType};

use super::{check_bounds, keyspace, resolve_keyspace, resolve_type, user_modifiable, DdlOutcome};

pub(super) fn create_type(
    s: &ast::CreateType,
    session: Option<&str>,
    schema: &Schema,
) -> CqlResult<DdlOutcome> {
    let ks_name = resolve_keyspace(&s.name, session)?;
    let ks = keyspace(schema, &ks_name)?;
    if ks.user_type(&s.name.name).is_some() {
        if s.if_not_exists {
            return Ok(DdlOutcome::none());
        }
        return Err(CqlError::invalid(format!(
            "A user type with name '{}' already exists",
            s.name.name
        )));
    }
    user_modifiable(&ks_name)?;
    let mut fields = Vec::with_capacity(s.fields.len());
    for (name, ty) in &s.fields {
        if fields.iter().any(|(n, _): &(String, CqlType)| n == name) {
            return Err(CqlError::invalid(format!(
                "Duplicate field name {} in type {}",
                name, s.name.name
            )));
        }
        fields.push((name.clone(), field_type(ty, ks)?));
    }
    let udt = UdtType::new(&ks_name, &s.name.name, fields);
    check_bounds(&CqlType::Udt(Arc::new(udt.clone())))?;
    Ok(DdlOutcome::save(
        ks.with_type(udt),
        SchemaChangeKind::Created,
        SchemaChangeTarget::Type,
        &s.name.name,
    ))
}

/// Cassandra 5.0 refuses a column of a non-frozen user type with a field declared as a
/// non-frozen collection (`suffix` names the column in ALTER TABLE ADD).
pub(super) fn check_nested_collections(ty: &CqlType, suffix: &str) -> CqlResult<()> {
    match ty {
        CqlType::Udt(udt) if udt.fields.iter().any(|(_, t)| t.is_multi_cell()) => {
            Err(CqlError::invalid(format!(
                "Non-frozen UDTs with nested non-frozen collections are not supported{suffix}"
            )))
        }
        _ => Ok(()),
    }
}

/// The type of a field: a non-frozen user type or a counter is refused, anything else is
/// kept as declared (`list<int>` stays a list: inside a user type's value it is one value,
/// as a frozen one).
fn field_type(ty: &TypeExpr, ks: &KeyspaceMetadata) -> CqlResult<CqlType> {
    if matches!(ty, TypeExpr::UserType(_)) {
        return Err(CqlError::invalid(
            "A user type cannot contain non-frozen UDTs",
        ));
    }
    let resolved = resolve_type(ty, ks)?;
    if has_counter(&resolved) {
        return Err(CqlError::invalid("A user type cannot contain counters"));
    }
    Ok(resolved)
}

fn has_counter(ty: &CqlType) -> bool {
    match ty {
        CqlType::Native(n) => *n == NativeType::Counter,
        CqlType::List(e) | CqlType::Set(e) | CqlType::Frozen(e) | CqlType::Vector(e, _) => {
            has_counter(e)
        }
        CqlType::Map(k, v) => has_counter(k) || has_counter(v),
        CqlType::Tuple(items) => items.iter().any(has_counter),
        CqlType::Udt(udt) => udt.fields.iter().any(|(_, t)| has_counter(t)),
        CqlType::Custom(_) => false,
    }
}

pub(super) fn alter_type(
    s: &ast::AlterType,
    session: Option<&str>,
    schema: &Schema,
) -> CqlResult<DdlOutcome> {
    let ks_name = resolve_keyspace(&s.name, session)?;
    user_modifiable(&ks_name)?;
    let missing = || CqlError::invalid(format!("Type {ks_name}.{} doesn't exist", s.name.name));
    let found = schema
        .keyspace(&ks_name)
        .and_then(|ks| ks.user_type(&s.name.name).map(|udt| (ks, udt)));
    let Some((ks, udt)) = found else {
        return if s.if_exists {
            Ok(DdlOutcome::none())
        } else {
            Err(missing())
        };
    };
    let altered = match &s.action {
        AlterTypeAction::AlterField { .. } => {
            return Err(CqlError::invalid(
                "Altering field types is no longer supported",
            ))
        }
        AlterTypeAction::Add {
            if_not_exists,
            field,
            ty,
        } => add_field(ks, udt, field, ty, *if_not_exists)?,
        AlterTypeAction::Rename { if_exists, renames } => rename_fields(udt, renames, *if_exists)?,
    };
    let Some(altered) = altered else {
        return Ok(DdlOutcome::none());
    };
    check_bounds(&CqlType::Udt(Arc::new(altered.clone())))?;
    Ok(DdlOutcome::save(
        ks.with_altered_type(altered),
        SchemaChangeKind::Updated,
        SchemaChangeTarget::Type,
        &s.name.name,
    ))
}

/// The type with a new field (`None` when it has one of that name and IF NOT EXISTS says to
/// leave it).
fn add_field(
    ks: &KeyspaceMetadata,
    udt: &UdtType,
    field: &str,
    ty: &TypeExpr,
    if_not_exists: bool,
) -> CqlResult<Option<UdtType>> {
    let qualified = format!("{}.{}", udt.keyspace, udt.name);
    if udt.fields.iter().any(|(name, _)| name == field) {
        if if_not_exists {
            return Ok(None);
        }
        return Err(CqlError::invalid(format!(
            "Cannot add field {field} to type {qualified}: a field with name {field} already exists"
        )));
    }
    let resolved = field_type(ty, ks)?;
    let shown = raw_type_text(ty, &ks.name);
    if references_type(&resolved, &udt.keyspace, &udt.name) {
        return Err(CqlError::invalid(format!(
            "Cannot add new field {field} of type {shown} to user type {qualified} as it would create a circular reference"
        )));
    }
    let keyed: Vec<String> = ks
        .tables
        .values()
        .filter(|t| {
            t.partition_key_columns()
                .any(|c| references_type(&c.ty, &udt.keyspace, &udt.name))
        })
        .map(|t| format!("{}.{}", t.keyspace, t.name))
        .collect();
    if !keyed.is_empty() {
        return Err(CqlError::invalid(format!(
            "Cannot add new field {field} of type {shown} to user type {qualified} as the type is being used in partition key by the following tables: {}",
            keyed.join(", ")
        )));
    }
    let mut altered = udt.clone();
    altered.fields.push((field.to_string(), resolved));
    altered.added_fields += 1;
    Ok(Some(altered))
}

/// The type with its fields renamed (a field renamed twice takes the last name; `None` when
/// IF EXISTS skipped every rename). Names are checked against the type before any rename.
fn rename_fields(
    udt: &UdtType,
    renames: &[(String, String)],
    if_exists: bool,
) -> CqlResult<Option<UdtType>> {
    let mut by_old: BTreeMap<&str, &str> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (old, new) in renames {
        if by_old.insert(old, new).is_none() {
            order.push(old);
        }
    }
    let mut altered = udt.clone();
    let mut changed = false;
    for old in order {
        let Some(position) = udt.fields.iter().position(|(name, _)| name == old) else {
            if if_exists {
                continue;
            }
            return Err(CqlError::invalid(format!(
                "Unkown field {old} in user type {}.{}",
                udt.keyspace, udt.name
            )));
        };
        altered.fields[position].0 = by_old[old].to_string();
        changed = true;
    }
    let names: Vec<&str> = altered.fields.iter().map(|(n, _)| n.as_str()).collect();
    if let Some(duplicate) = names
        .iter()
        .find(|n| names.iter().filter(|m| m == n).count() > 1)
    {
        // Cassandra 5.0.4 names the keyspace where the type belongs in this message.
        return Err(CqlError::invalid(format!(
            "Duplicate field name {duplicate} in type {}",
            udt.keyspace
        )));
    }
    Ok(changed.then_some(altered))
}

/// A type as written, user types qualified by their keyspace (`frozen<ks.a>`), as
/// Cassandra's messages print a raw type.
pub(super) fn raw_type_text(ty: &TypeExpr, keyspace: &str) -> String {
    let text = |t: &TypeExpr| raw_type_text(t, keyspace);
    match ty {
        TypeExpr::Native(n) => n.name().to_string(),
        TypeExpr::List(e) => format!("list<{}>", text(e)),
        TypeExpr::Set(e) => format!("set<{}>", text(e)),
        TypeExpr::Map(k, v) => format!("map<{}, {}>", text(k), text(v)),
        TypeExpr::Tuple(items) => {
            let items: Vec<String> = items.iter().map(text).collect();
            format!("tuple<{}>", items.join(", "))
        }
        TypeExpr::Frozen(inner) => format!("frozen<{}>", text(inner)),
        TypeExpr::Vector(e, n) => format!("vector<{}, {n}>", text(e)),
        TypeExpr::UserType(name) => format!(
            "{}.{}",
            name.keyspace.as_deref().unwrap_or(keyspace),
            name.name
        ),
        TypeExpr::Custom(class) => format!("'{class}'"),
    }
}

pub(super) fn drop_type(
    name: &ast::QualifiedName,
    if_exists: bool,
    session: Option<&str>,
    schema: &Schema,
) -> CqlResult<DdlOutcome> {
    let ks_name = resolve_keyspace(name, session)?;
    user_modifiable(&ks_name)?;
    let found = schema
        .keyspace(&ks_name)
        .filter(|ks| ks.user_type(&name.name).is_some());
    let Some(ks) = found else {
        if if_exists {
            return Ok(DdlOutcome::none());
        }
        return Err(CqlError::invalid(format!(
            "Type '{ks_name}.{}' doesn't exist",
            name.name
        )));
    };
    let still_used = |what: &str, names: Vec<&str>| {
        CqlError::invalid(format!(
            "Cannot drop user type '{ks_name}.{}' as it is still used by {what} {}",
            name.name,
            names.join(", ")
        ))
    };
    let types = ks.types_using(&name.name);
    if !types.is_empty() {
        return Err(still_used("user types", types));
    }
    let tables: Vec<&str> = ks
        .tables_using(&name.name)
        .into_iter()
        .map(|t| t.name.as_str())
        .collect();
    if !tables.is_empty() {
        return Err(still_used("tables", tables));
    }
    let mut next = ks.as_ref().clone();
    next.types.remove(&name.name);
    Ok(DdlOutcome::save(
        next,
        SchemaChangeKind::Dropped,
        SchemaChangeTarget::Type,
        &name.name,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cql::ast::QualifiedName;

    fn udt(fields: &[&str]) -> UdtType {
        UdtType::new(
            "ks",
            "a",
            fields
                .iter()
                .map(|f| (f.to_string(), CqlType::Native(NativeType::Int)))
                .collect(),
        )
    }

    fn renames(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    fn names(t: &UdtType) -> Vec<&str> {
        t.fields.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn a_field_renamed_twice_takes_the_last_name() {
        let renamed = rename_fields(
            &udt(&["x", "w"]),
            &renames(&[("x", "y"), ("x", "z")]),
            false,
        );
        let renamed = renamed
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!());
        assert_eq!(names(&renamed), ["z", "w"]);
    }

    #[test]
    fn added_fields_are_counted() {
        let ks = KeyspaceMetadata::new("ks", BTreeMap::new(), true);
        let int = TypeExpr::Native(NativeType::Int);
        let add = |udt: &UdtType, field: &str| {
            add_field(&ks, udt, field, &int, false)
                .unwrap_or_else(|e| panic!("{e}"))
                .unwrap_or_else(|| panic!("no field added"))
        };
        let once = add(&udt(&["x"]), "y");
        let twice = add(&once, "z");
        assert_eq!(
            (names(&twice), twice.added_fields),
            (vec!["x", "y", "z"], 2)
        );
        let renamed = rename_fields(&twice, &renames(&[("x", "w")]), false);
        assert_eq!(renamed.map(|t| t.map(|t| t.added_fields)), Ok(Some(2)));
    }

    #[test]
    fn renames_are_checked_against_the_type_before_them() {
        let refused = rename_fields(&udt(&["f"]), &renames(&[("f", "g"), ("g", "h")]), false);
        assert_eq!(
            refused,
            Err(CqlError::invalid("Unkown field g in user type ks.a"))
        );
        let skipped = rename_fields(&udt(&["f"]), &renames(&[("nosuch", "g")]), true);
        assert_eq!(skipped, Ok(None));
    }

    #[test]
    fn a_rename_onto_another_field_names_the_keyspace_as_cassandra_does() {
        let refused = rename_fields(&udt(&["x", "w"]), &renames(&[("x", "w")]), false);
        assert_eq!(
            refused,
            Err(CqlError::invalid("Duplicate field name w in type ks"))
        );
    }

    #[test]
    fn raw_types_name_user_types_with_their_keyspace() {
        let ty = TypeExpr::Frozen(Box::new(TypeExpr::Map(
            Box::new(TypeExpr::Native(NativeType::Int)),
            Box::new(TypeExpr::UserType(QualifiedName::simple("a".to_string()))),
        )));
        assert_eq!(raw_type_text(&ty, "ks"), "frozen<map<int, ks.a>>");
    }

    /// Cassandra 5.0.4 keeps `l list<int>` as declared (DESCRIBE TYPE and
    /// system_schema.types show `list<int>`) and refuses a column of the type non-frozen.
    #[test]
    fn collection_fields_stay_as_declared() {
        let ks = KeyspaceMetadata::new("ks", BTreeMap::new(), true);
        let list = TypeExpr::List(Box::new(TypeExpr::Native(NativeType::Int)));
        let declared = field_type(&list, &ks).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(declared.cql_name(), "list<int>");
        let frozen = field_type(&TypeExpr::Frozen(Box::new(list)), &ks);
        assert_eq!(frozen.map(|t| t.cql_name()), Ok("frozen<list<int>>".into()));
        let mut with_list = udt(&["a"]);
        with_list.fields.push(("l".into(), declared));
        let column = CqlType::Udt(Arc::new(with_list));
        assert_eq!(
            check_nested_collections(&column, " for column w"),
            Err(CqlError::invalid(
                "Non-frozen UDTs with nested non-frozen collections are not supported for column w"
            ))
        );
        assert_eq!(
            check_nested_collections(&column.clone().freeze(), ""),
            Ok(())
        );
        let plain = CqlType::Udt(Arc::new(udt(&["a"])));
        assert_eq!(check_nested_collections(&plain, ""), Ok(()));
    }

    #[test]
    fn counters_hide_nowhere_in_a_field() {
        let counter = CqlType::Native(NativeType::Counter);
        let nested = CqlType::Tuple(vec![CqlType::List(Box::new(counter))]);
        assert!(has_counter(&nested));
        assert!(!has_counter(&CqlType::Native(NativeType::Int)));
    }
}
