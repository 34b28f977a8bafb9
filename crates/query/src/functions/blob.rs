//! Blob conversions (Cassandra's `BytesConversionFcts`): `<type>asblob` and `blobas<type>`
//! for every native type (`varchar` as well as `text`), the bytes unchanged.
use types::{CqlError, CqlType, NativeType, Value};

use super::{Function, Registry};

pub fn register(r: &mut Registry) {
    let blob = CqlType::Native(NativeType::Blob);
    let named = NativeType::ALL
        .into_iter()
        .filter(|n| *n != NativeType::Blob)
        .map(|n| (n.name(), n))
        .chain([("varchar", NativeType::Text)]);
    for (name, n) in named {
        let ty = CqlType::Native(n);
        r.add(Function::scalar(
            &format!("{name}asblob"),
            vec![ty.clone()],
            blob.clone(),
            |args, _| Ok(args[0].as_ref().map(|v| Value::Blob(v.to_bytes()))),
        ));
        let function = format!("system.blobas{name}");
        let target = ty.clone();
        r.add(Function::scalar(&format!("blobas{name}"), vec![blob.clone()], ty, move |args, _| {
            let Some(Value::Blob(bytes)) = &args[0] else {
                return Ok(None);
            };
            Value::deserialize(&target, bytes).map(Some).map_err(|_| {
                CqlError::invalid(format!(
                    "In call to function {function}, value 0x{} is not a valid binary representation for type {}",
                    bytes.iter().map(|b| format!("{b:02x}")).collect::<String>(),
                    name
                ))
            })
        }));
    }
}
