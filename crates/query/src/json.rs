//! JSON rows: `SELECT JSON` turns each result row into one JSON object, `INSERT JSON` reads
//! one into column values (Cassandra's `Json` class).
use bytes::Bytes;
use types::json::{json_key, quote_string, to_json};
use types::Value;

use crate::selection::Selection;

/// A result row as Cassandra's `SELECT JSON` writes it: `{"k": 1, "\"Mixed\"": "x"}`, keys
/// (the result column names, see `json_key`) in selection order, repeats kept, values as each
/// type's JSON text.
pub fn row_json(selection: &Selection, values: &[Option<Bytes>]) -> String {
    let mut out = String::from("{");
    let columns = selection.specs.iter().zip(&selection.types);
    for (i, ((spec, ty), value)) in columns.zip(values).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&quote_string(&json_key(&spec.name)));
        out.push_str(": ");
        let decoded = value.as_ref().and_then(|b| Value::deserialize(ty, b).ok());
        out.push_str(&to_json(decoded.as_ref()));
    }
    out.push('}');
    out
}

/// An `INSERT JSON` document and what reading it needs: the table's columns and the
/// statement's DEFAULT. Shared by the operands of every column (`JsonField`).
#[derive(Debug, PartialEq)]
pub struct JsonDocument {
    /// The JSON text (a constant or a bind marker).
    pub text: crate::operand::Operand,
    /// Every column of the table (name, type), in Cassandra's order.
    pub columns: Vec<(String, types::CqlType)>,
    /// `DEFAULT UNSET`: a column missing from the document is left as it is (else null).
    pub default_unset: bool,
}

/// One column's value of an `INSERT JSON` document whose text is known only when the
/// statement runs; the document is decoded once per execution (`ExecContext::json_values`).
#[derive(Clone, Debug, PartialEq)]
pub struct JsonField {
    pub document: std::sync::Arc<JsonDocument>,
    /// The index of the column in `JsonDocument::columns`.
    pub column: usize,
}

/// Every column's value of an `INSERT JSON` document, in `columns` order: `None` when the
/// document lacks the column (unset or null as the statement's DEFAULT says, decided by the
/// caller), `Some(None)` for `null`. As Cassandra's `Json.parseJson`, values are decoded in
/// column order first; a key naming no column is refused after them.
pub fn decode_document(
    text: &str,
    columns: &[(String, types::CqlType)],
) -> types::CqlResult<Vec<Option<Option<Bytes>>>> {
    let mut found: Vec<Option<types::json::Json>> = vec![None; columns.len()];
    let mut unknown = None;
    for (key, value) in json_object(text)? {
        let name = column_name(&key);
        match columns.iter().position(|(c, _)| *c == name) {
            Some(index) => found[index] = Some(value),
            None => {
                unknown.get_or_insert(name);
            }
        }
    }
    let values = columns
        .iter()
        .zip(found)
        .map(|((name, ty), json)| json.map(|j| decode_value(name, ty, &j)).transpose())
        .collect::<types::CqlResult<Vec<_>>>()?;
    match unknown {
        Some(name) => Err(types::CqlError::invalid(format!(
            "JSON values map contains unrecognized column: {name}"
        ))),
        None => Ok(values),
    }
}

fn decode_value(
    name: &str,
    ty: &types::CqlType,
    json: &types::json::Json,
) -> types::CqlResult<Option<Bytes>> {
    types::json::from_json(ty, json)
        .map(|v| v.map(|v| v.to_bytes()))
        .map_err(|e| e.into_cql(&format!("Error decoding JSON value for {name}: ")))
}

/// A JSON key as a column name: quoted keys as written, others lower-cased.
fn column_name(key: &str) -> String {
    match key.strip_prefix('"').and_then(|k| k.strip_suffix('"')) {
        Some(quoted) if key.len() >= 2 => quoted.replace("\"\"", "\""),
        _ => key.to_lowercase(),
    }
}

/// The document's entries, with Cassandra's messages for a document that is not an object.
fn json_object(text: &str) -> types::CqlResult<Vec<(String, types::json::Json)>> {
    match types::json::parse_object(text) {
        Ok(Some(entries)) => Ok(entries),
        Ok(None) => Err(types::CqlError::invalid("Got null for INSERT JSON values")),
        Err(e) => Err(types::CqlError::invalid(format!(
            "Could not decode JSON string as a map: {}. (String was: {text})",
            e.java_string()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::{CqlType, NativeType};

    fn columns() -> Vec<(String, CqlType)> {
        vec![
            ("k".into(), CqlType::Native(NativeType::Int)),
            ("Mixed".into(), CqlType::Native(NativeType::Text)),
        ]
    }

    #[test]
    fn keys_match_lower_cased_names_or_quoted_ones() {
        let doc = r#"{"K": 7, "\"Mixed\"": "x"}"#;
        assert_eq!(
            decode_document(doc, &columns()),
            Ok(vec![
                Some(Some(Value::Int(7).to_bytes())),
                Some(Some(Value::Text("x".into()).to_bytes()))
            ])
        );
    }

    #[test]
    fn a_missing_column_is_left_to_the_default_and_null_is_null() {
        assert_eq!(
            decode_document(r#"{"k": 1}"#, &columns()),
            Ok(vec![Some(Some(Value::Int(1).to_bytes())), None])
        );
        assert_eq!(
            decode_document(r#"{"\"Mixed\"": null}"#, &columns()),
            Ok(vec![None, Some(None)])
        );
    }

    #[test]
    fn unknown_columns_and_bad_values_are_refused_with_cassandras_messages() {
        assert_eq!(
            decode_document(r#"{"k": 1, "Mixed": "x"}"#, &columns()),
            Err(types::CqlError::invalid(
                "JSON values map contains unrecognized column: mixed"
            ))
        );
        // Values are decoded before unknown keys are refused, as Cassandra does.
        assert_eq!(
            decode_document(r#"{"nosuch": 1, "k": 1.5}"#, &columns()),
            Err(types::CqlError::invalid(
                "Error decoding JSON value for k: Expected an int value, but got a Double: 1.5"
            ))
        );
        assert_eq!(
            decode_document("null", &columns()),
            Err(types::CqlError::invalid("Got null for INSERT JSON values"))
        );
        let bad = decode_document("[1]", &columns());
        assert!(
            matches!(&bad, Err(types::CqlError::Invalid(m)) if m.starts_with("Could not decode JSON string as a map: com.fasterxml.jackson.databind.exc.MismatchedInputException") && m.ends_with(". (String was: [1])")),
            "{bad:?}"
        );
    }
}
