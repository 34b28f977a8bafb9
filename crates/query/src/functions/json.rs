//! `toJson(any)` (a value's JSON text, as `SELECT JSON` writes it) and `fromJson(text)` (a
//! value of the receiving column's type read from JSON text; it needs a receiver, so it is
//! refused in the selection clause).
use types::json::{from_json, parse, to_json};
use types::{CqlError, CqlResult, CqlType, NativeType, Value};

use super::factory::Generic;
use super::{Function, Registry};

pub fn register(r: &mut Registry) {
    let to_json_of = Generic::first_typed("tojson", "any", 1..=1, |_, ty| {
        let text = CqlType::Native(NativeType::Text);
        Ok(Function::scalar("tojson", vec![ty], text, |args, _| {
            Ok(Some(Value::Text(to_json(args[0].as_ref()))))
        }))
    });
    r.add_factory("tojson", to_json_of);
}

/// `fromJson(text)` producing a value of `receiver`.
pub fn from_json_function(receiver: Option<&CqlType>) -> CqlResult<Function> {
    let Some(receiver) = receiver else {
        return Err(CqlError::invalid(
            "fromjson() cannot be used in the selection clause of a SELECT statement",
        ));
    };
    let ty = receiver.clone();
    let text = CqlType::Native(NativeType::Text);
    Ok(Function::scalar(
        "fromjson",
        vec![text],
        receiver.clone(),
        move |args, _| {
            let Some(Value::Text(json) | Value::Ascii(json)) = &args[0] else {
                return Ok(None);
            };
            let failure = |message: String| CqlError::FunctionFailure {
                message,
                keyspace: "system".into(),
                function: "fromjson".into(),
                arg_types: vec!["text".into()],
            };
            let parsed = parse(json).map_err(|e| {
            failure(format!(
                "execution of 'system.fromjson[text]' failed: Could not decode JSON string '{json}': {}",
                e.java_string()
            ))
        })?;
            from_json(&ty, &parsed).map_err(|e| {
                failure(format!(
                    "org.apache.cassandra.serializers.MarshalException: {}",
                    e.0
                ))
            })
        },
    ))
}
