//! Result-metadata `[option]` encoding of CQL types (spec §4.2.5.2).
//!
//! TODO(types): replace with `CqlType::write_option` once it lands in the `types` crate.
use crate::wire::put_string;
use bytes::{BufMut, BytesMut};
use types::{CqlType, NativeType};

fn native_id(n: NativeType) -> u16 {
    use NativeType::*;
    match n {
        Ascii => 0x0001,
        Bigint => 0x0002,
        Blob => 0x0003,
        Boolean => 0x0004,
        Counter => 0x0005,
        Decimal => 0x0006,
        Double => 0x0007,
        Float => 0x0008,
        Int => 0x0009,
        Timestamp => 0x000B,
        Uuid => 0x000C,
        Text => 0x000D,
        Varint => 0x000E,
        Timeuuid => 0x000F,
        Inet => 0x0010,
        Date => 0x0011,
        Time => 0x0012,
        Smallint => 0x0013,
        Tinyint => 0x0014,
        Duration => 0x0015,
    }
}

/// Writes `ty` as an `[option]`. Frozen is transparent; vectors go as a custom class name.
pub fn write_type_option(ty: &CqlType, out: &mut BytesMut) {
    match ty {
        CqlType::Native(n) => out.put_u16(native_id(*n)),
        CqlType::List(e) => write_wrapped(0x0020, &[e], out),
        CqlType::Set(e) => write_wrapped(0x0022, &[e], out),
        CqlType::Map(k, v) => write_wrapped(0x0021, &[k, v], out),
        CqlType::Frozen(inner) => write_type_option(inner, out),
        CqlType::Tuple(items) => {
            out.put_u16(0x0031);
            out.put_u16(items.len() as u16);
            items.iter().for_each(|t| write_type_option(t, out));
        }
        CqlType::Udt(udt) => {
            out.put_u16(0x0030);
            put_string(out, &udt.keyspace);
            put_string(out, &udt.name);
            out.put_u16(udt.fields.len() as u16);
            for (name, t) in &udt.fields {
                put_string(out, name);
                write_type_option(t, out);
            }
        }
        CqlType::Vector(..) | CqlType::Custom(_) => {
            out.put_u16(0x0000);
            put_string(out, &marshal_class(ty));
        }
    }
}

fn write_wrapped(id: u16, inner: &[&CqlType], out: &mut BytesMut) {
    out.put_u16(id);
    inner.iter().for_each(|t| write_type_option(t, out));
}

const MARSHAL: &str = "org.apache.cassandra.db.marshal.";

fn native_class(n: NativeType) -> &'static str {
    use NativeType::*;
    match n {
        Ascii => "AsciiType",
        Bigint => "LongType",
        Blob => "BytesType",
        Boolean => "BooleanType",
        Counter => "CounterColumnType",
        Date => "SimpleDateType",
        Decimal => "DecimalType",
        Double => "DoubleType",
        Duration => "DurationType",
        Float => "FloatType",
        Inet => "InetAddressType",
        Int => "Int32Type",
        Smallint => "ShortType",
        Text => "UTF8Type",
        Time => "TimeType",
        Timestamp => "TimestampType",
        Timeuuid => "TimeUUIDType",
        Tinyint => "ByteType",
        Uuid => "UUIDType",
        Varint => "IntegerType",
    }
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn class_list(types: &[&CqlType]) -> String {
    let names: Vec<String> = types.iter().map(|t| marshal_class(t)).collect();
    names.join(",")
}

/// The Java `AbstractType` class name Cassandra prints for `ty` (used inside custom types).
fn marshal_class(ty: &CqlType) -> String {
    match ty {
        CqlType::Native(n) => format!("{MARSHAL}{}", native_class(*n)),
        CqlType::List(e) => format!("{MARSHAL}ListType({})", marshal_class(e)),
        CqlType::Set(e) => format!("{MARSHAL}SetType({})", marshal_class(e)),
        CqlType::Map(k, v) => format!("{MARSHAL}MapType({})", class_list(&[k, v])),
        CqlType::Frozen(inner) => format!("{MARSHAL}FrozenType({})", marshal_class(inner)),
        CqlType::Tuple(items) => {
            let items: Vec<&CqlType> = items.iter().collect();
            format!("{MARSHAL}TupleType({})", class_list(&items))
        }
        CqlType::Udt(udt) => {
            let fields: Vec<String> = udt
                .fields
                .iter()
                .map(|(n, t)| format!("{}:{}", hex(n), marshal_class(t)))
                .collect();
            format!(
                "{MARSHAL}UserType({},{},{})",
                udt.keyspace,
                hex(&udt.name),
                fields.join(",")
            )
        }
        CqlType::Vector(e, n) => format!("{MARSHAL}VectorType({},{n})", marshal_class(e)),
        CqlType::Custom(class) => class.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use types::UdtType;

    fn encode(ty: &CqlType) -> Vec<u8> {
        let mut out = BytesMut::new();
        write_type_option(ty, &mut out);
        out.to_vec()
    }

    fn text() -> CqlType {
        CqlType::Native(NativeType::Text)
    }

    #[test]
    fn natives_and_collections() {
        assert_eq!(encode(&text()), vec![0, 0x0D]);
        let map = CqlType::Map(Box::new(text()), Box::new(CqlType::Native(NativeType::Int)));
        assert_eq!(encode(&map), vec![0, 0x21, 0, 0x0D, 0, 0x09]);
        let frozen = CqlType::Frozen(Box::new(CqlType::List(Box::new(text()))));
        assert_eq!(encode(&frozen), vec![0, 0x20, 0, 0x0D]);
        let tuple = CqlType::Tuple(vec![text(), CqlType::Native(NativeType::Uuid)]);
        assert_eq!(encode(&tuple), vec![0, 0x31, 0, 2, 0, 0x0D, 0, 0x0C]);
    }

    #[test]
    fn udt_layout() {
        let udt = UdtType {
            keyspace: "k".into(),
            name: "u".into(),
            fields: vec![("f".into(), text())],
        };
        let got = encode(&CqlType::Udt(Arc::new(udt)));
        assert_eq!(
            got,
            vec![0, 0x30, 0, 1, b'k', 0, 1, b'u', 0, 1, 0, 1, b'f', 0, 0x0D]
        );
    }

    #[test]
    fn vector_is_a_custom_class() {
        let v = CqlType::Vector(Box::new(CqlType::Native(NativeType::Float)), 3);
        let got = encode(&v);
        let class = "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType,3)";
        assert_eq!(&got[..4], &[0, 0, 0, class.len() as u8]);
        assert_eq!(&got[4..], class.as_bytes());
    }
}
