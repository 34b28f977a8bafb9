//! The native protocol `[option]` encoding of types (native_protocol_v5.spec, section 4.2.5.2).
//! Frozen wrappers are not visible on the wire; vectors travel as custom class names.
use super::{CqlType, NativeType, UdtType};
use crate::error::TypeError;
use crate::limits::MAX_NESTING;
use bytes::{BufMut, BytesMut};
use std::sync::Arc;

const CUSTOM: u16 = 0x0000;
const LEGACY_TEXT: u16 = 0x000A;
const LIST: u16 = 0x0020;
const MAP: u16 = 0x0021;
const SET: u16 = 0x0022;
const UDT: u16 = 0x0030;
const TUPLE: u16 = 0x0031;

impl NativeType {
    /// The protocol option id (`text` is sent as varchar, 0x000D).
    pub fn option_id(self) -> u16 {
        use NativeType::*;
        match self {
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

    fn from_option_id(id: u16) -> Option<NativeType> {
        if id == LEGACY_TEXT {
            return Some(NativeType::Text);
        }
        NativeType::ALL.into_iter().find(|n| n.option_id() == id)
    }
}

impl CqlType {
    /// Appends the type as a protocol `[option]`.
    pub fn write_option(&self, out: &mut BytesMut) {
        match self {
            CqlType::Native(n) => out.put_u16(n.option_id()),
            CqlType::Frozen(inner) => inner.write_option(out),
            CqlType::List(e) => write_nested(out, LIST, [e]),
            CqlType::Set(e) => write_nested(out, SET, [e]),
            CqlType::Map(k, v) => write_nested(out, MAP, [k, v]),
            CqlType::Udt(udt) => write_udt(out, udt),
            CqlType::Tuple(items) => {
                out.put_u16(TUPLE);
                put_short_len(out, items.len());
                items.iter().for_each(|t| t.write_option(out));
            }
            CqlType::Vector(..) | CqlType::Custom(_) => {
                out.put_u16(CUSTOM);
                put_string(out, &self.java_class_name());
            }
        }
    }

    /// Reads one `[option]`, advancing `buf`. Collections and UDTs come back non-frozen at the
    /// top (the wire does not say) and frozen when nested. A custom class naming a vector
    /// comes back as `Vector`.
    /// Collections, tuples and UDTs nest at most `MAX_NESTING` levels.
    pub fn read_option(buf: &mut &[u8]) -> Result<CqlType, TypeError> {
        read_option_at(buf, 0)
    }
}

/// Reads an `[option]` found `depth` composite levels down.
fn read_option_at(buf: &mut &[u8], depth: usize) -> Result<CqlType, TypeError> {
    let id = read_u16(buf)?;
    if let Some(native) = NativeType::from_option_id(id) {
        return Ok(CqlType::Native(native));
    }
    if matches!(id, LIST | SET | MAP | UDT | TUPLE) && depth >= MAX_NESTING {
        return Err(TypeError(format!(
            "Type nested too deeply in option: at most {MAX_NESTING} levels"
        )));
    }
    let depth = depth + 1;
    match id {
        CUSTOM => {
            let class = read_string(buf)?;
            Ok(match CqlType::from_java_class(&class) {
                Some(vector @ CqlType::Vector(..)) => vector,
                _ => CqlType::Custom(class),
            })
        }
        LIST => Ok(CqlType::List(Box::new(read_nested(buf, depth)?))),
        SET => Ok(CqlType::Set(Box::new(read_nested(buf, depth)?))),
        MAP => Ok(CqlType::Map(
            Box::new(read_nested(buf, depth)?),
            Box::new(read_nested(buf, depth)?),
        )),
        UDT => read_udt(buf, depth),
        TUPLE => {
            let count = read_u16(buf)?;
            let items: Result<Vec<CqlType>, TypeError> =
                (0..count).map(|_| read_nested(buf, depth)).collect();
            Ok(CqlType::Tuple(items?))
        }
        other => Err(TypeError(format!(
            "Unknown type id 0x{other:04x} in option"
        ))),
    }
}

fn write_nested<const N: usize>(out: &mut BytesMut, id: u16, types: [&CqlType; N]) {
    out.put_u16(id);
    types.iter().for_each(|t| t.write_option(out));
}

fn write_udt(out: &mut BytesMut, udt: &UdtType) {
    out.put_u16(UDT);
    put_string(out, &udt.keyspace);
    put_string(out, &udt.name);
    put_short_len(out, udt.fields.len());
    for (name, ty) in &udt.fields {
        put_string(out, name);
        ty.write_option(out);
    }
}

fn read_udt(buf: &mut &[u8], depth: usize) -> Result<CqlType, TypeError> {
    let keyspace = read_string(buf)?;
    let name = read_string(buf)?;
    let count = read_u16(buf)?;
    let mut fields = Vec::with_capacity(usize::from(count).min(buf.len()));
    for _ in 0..count {
        fields.push((read_string(buf)?, read_nested(buf, depth)?));
    }
    Ok(CqlType::Udt(Arc::new(UdtType::new(
        &keyspace, &name, fields,
    ))))
}

fn read_nested(buf: &mut &[u8], depth: usize) -> Result<CqlType, TypeError> {
    Ok(read_option_at(buf, depth)?.freeze())
}

/// Lengths in `[short]` fields; schema limits keep them far below `u16::MAX`.
fn put_short_len(out: &mut BytesMut, len: usize) {
    out.put_u16(u16::try_from(len).unwrap_or(u16::MAX));
}

fn put_string(out: &mut BytesMut, s: &str) {
    let len = s.len().min(usize::from(u16::MAX));
    out.put_u16(len as u16);
    out.put_slice(&s.as_bytes()[..len]);
}

fn read_u16(buf: &mut &[u8]) -> Result<u16, TypeError> {
    match buf.split_first_chunk::<2>() {
        Some((head, rest)) => {
            *buf = rest;
            Ok(u16::from_be_bytes(*head))
        }
        None => Err(TypeError("Not enough bytes to read an option".into())),
    }
}

fn read_string(buf: &mut &[u8]) -> Result<String, TypeError> {
    let len = usize::from(read_u16(buf)?);
    if buf.len() < len {
        return Err(TypeError("Not enough bytes to read a string".into()));
    }
    let (head, rest) = buf.split_at(len);
    *buf = rest;
    String::from_utf8(head.to_vec()).map_err(|_| TypeError("Invalid UTF-8 in option string".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(t: &CqlType) -> Vec<u8> {
        let mut out = BytesMut::new();
        t.write_option(&mut out);
        out.to_vec()
    }

    fn decode(bytes: &[u8]) -> Result<CqlType, TypeError> {
        let mut buf = bytes;
        let t = CqlType::read_option(&mut buf)?;
        assert!(buf.is_empty(), "trailing bytes");
        Ok(t)
    }

    fn parse(s: &str) -> CqlType {
        let udt = Arc::new(UdtType::new(
            "ks",
            "address",
            vec![
                ("street".into(), CqlType::native(NativeType::Text)),
                ("zips".into(), parse_plain("frozen<set<int>>")),
            ],
        ));
        CqlType::parse(s, &|_| Some(udt.clone())).unwrap_or(CqlType::Custom("bad".into()))
    }

    fn parse_plain(s: &str) -> CqlType {
        CqlType::parse(s, &|_| None).unwrap_or(CqlType::Custom("bad".into()))
    }

    #[test]
    fn native_ids() {
        assert_eq!(encode(&CqlType::native(NativeType::Counter)), [0, 5]);
        assert_eq!(encode(&CqlType::native(NativeType::Text)), [0, 0x0d]);
        assert_eq!(encode(&CqlType::native(NativeType::Duration)), [0, 0x15]);
        assert_eq!(decode(&[0, 0x0a]), Ok(CqlType::native(NativeType::Text)));
        for n in NativeType::ALL {
            assert_eq!(decode(&encode(&CqlType::native(n))), Ok(CqlType::native(n)));
        }
    }

    #[test]
    fn collections_lose_top_frozen_only() {
        assert_eq!(encode(&parse("frozen<list<int>>")), [0, 0x20, 0, 9]);
        assert_eq!(encode(&parse("map<text, int>")), [0, 0x21, 0, 0x0d, 0, 9]);
        for s in [
            "list<int>",
            "set<frozen<list<text>>>",
            "map<text, frozen<tuple<int, uuid>>>",
            "frozen<tuple<int, text>>",
            "address",
            "list<frozen<address>>",
            "'com.example.MyType'",
        ] {
            assert_eq!(decode(&encode(&parse(s))), Ok(parse(s)), "{s}");
        }
    }

    #[test]
    fn vector_as_custom() {
        let bytes = encode(&parse("vector<float, 3>"));
        let class = b"org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType,3)";
        assert_eq!(&bytes[..2], [0, 0]);
        assert_eq!(
            usize::from(u16::from_be_bytes([bytes[2], bytes[3]])),
            class.len()
        );
        assert_eq!(&bytes[4..], class);
        assert_eq!(decode(&bytes), Ok(parse("vector<float, 3>")));
    }

    #[test]
    fn nesting_limit_at_and_past_on_a_worker_stack() {
        let lists = |d: usize| {
            let mut bytes = [0u8, 0x20].repeat(d);
            bytes.extend([0, 9]);
            bytes
        };
        let read = |d: usize| {
            let bytes = lists(d);
            crate::limits::on_worker_stack(move || decode(&bytes).map(|t| t.nesting_depth()))
        };
        assert_eq!(read(MAX_NESTING), Ok(MAX_NESTING));
        let refused = Err(TypeError(
            "Type nested too deeply in option: at most 100 levels".into(),
        ));
        assert_eq!(read(MAX_NESTING + 1), refused);
        assert_eq!(read(1_000_000), refused);
    }

    #[test]
    fn truncated_and_unknown() {
        assert!(decode(&[0]).is_err());
        assert!(decode(&[0, 0x20]).is_err());
        assert!(decode(&[0, 0, 0, 5, b'a']).is_err());
        assert!(decode(&[0, 0x30, 0, 1, b'k']).is_err());
        assert!(decode(&[0, 0x99]).is_err());
    }
}
