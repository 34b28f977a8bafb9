//! A tuple read from a constant, as Cassandra's `TupleType.fromString` reads it: Cassandra
//! takes any constant for a tuple (its `Constants.Literal` is weakly assignable to every
//! non-native type) and splits its text on the `:` not escaped as `\:`, `@` standing for
//! null, each part read by the component's type (`'1:a'` is `(1, 'a')`, `5` is `(5)`).
use bytes::{BufMut, Bytes, BytesMut};

use super::from_string;
use crate::cql_type::CqlType;
use crate::error::TypeError;

/// The serialized tuple of `types` that `text` spells (fewer parts leave the last
/// components out, as Cassandra stores them).
pub fn tuple_from_string(types: &[CqlType], text: &str, shown: &str) -> Result<Bytes, TypeError> {
    let parts = split(text);
    if parts.len() > types.len() {
        return Err(TypeError(format!(
            "Invalid tuple literal: too many elements. Type {shown} expects {} but got {}",
            types.len(),
            parts.len()
        )));
    }
    let mut out = BytesMut::new();
    for (part, ty) in parts.iter().zip(types) {
        if part == "@" {
            out.put_i32(-1);
            continue;
        }
        let field = component(ty, &part.replace("\\:", ":").replace("\\@", "@"))?;
        let len =
            i32::try_from(field.len()).map_err(|_| TypeError("Tuple field too large".into()))?;
        out.put_i32(len);
        out.put_slice(&field);
    }
    Ok(out.freeze())
}

fn component(ty: &CqlType, text: &str) -> Result<Bytes, TypeError> {
    match ty.unfrozen() {
        CqlType::Native(n) => from_string(*n, text).map(|v| v.to_bytes()),
        CqlType::Tuple(items) => tuple_from_string(items, text, &ty.cql_name()),
        CqlType::Udt(udt) => {
            let items: Vec<CqlType> = udt.fields.iter().map(|(_, t)| t.clone()).collect();
            tuple_from_string(&items, text, &ty.cql_name())
        }
        other => Err(TypeError(format!(
            "Unable to make {} from '{text}'",
            other.cql_name()
        ))),
    }
}

/// Cassandra's `AbstractCompositeType.split`: the parts between the `:` not preceded by `\`
/// (none for the empty text).
fn split(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut previous = None;
    for c in text.chars() {
        if c == ':' && previous != Some('\\') {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
        previous = Some(c);
    }
    parts.push(current);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cql_type::NativeType;

    fn int_text() -> Vec<CqlType> {
        vec![
            CqlType::Native(NativeType::Int),
            CqlType::Native(NativeType::Text),
        ]
    }

    fn field(bytes: &[u8]) -> Vec<u8> {
        [&(bytes.len() as i32).to_be_bytes()[..], bytes].concat()
    }

    #[test]
    fn parts_split_on_unescaped_colons_with_at_for_null() {
        let shown = "frozen<tuple<int, text>>";
        let one_a = [field(&1i32.to_be_bytes()), field(b"a:b")].concat();
        assert_eq!(
            tuple_from_string(&int_text(), "1:a\\:b", shown).map(|b| b.to_vec()),
            Ok(one_a)
        );
        let five = field(&5i32.to_be_bytes());
        assert_eq!(
            tuple_from_string(&int_text(), "5", shown).map(|b| b.to_vec()),
            Ok(five)
        );
        let null_first = [(-1i32).to_be_bytes().to_vec(), field(b"x")].concat();
        assert_eq!(
            tuple_from_string(&int_text(), "@:x", shown).map(|b| b.to_vec()),
            Ok(null_first)
        );
        assert_eq!(
            tuple_from_string(&int_text(), "(1, a)", shown),
            Err(TypeError("Unable to make int from '(1, a)'".into()))
        );
        assert_eq!(
            tuple_from_string(&int_text(), "1:a:2", shown),
            Err(TypeError(
                "Invalid tuple literal: too many elements. Type frozen<tuple<int, text>> expects 2 but got 3".into()
            ))
        );
    }
}
