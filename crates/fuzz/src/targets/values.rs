//! Value decoding of every CQL type (`Value::deserialize`, `Value::validate`) and the
//! protocol `[option]` type decoder. The input is a type as an `[option]` then value bytes.
//! Properties: decoding and validation agree; a decoded value serializes to bytes that
//! decode again and serialize to the same bytes; a decoded type re-encodes the same way.

use std::sync::Arc;

use bytes::{BufMut, BytesMut};
use types::value::vint;
use types::{CqlType, NativeType, UdtType, Value};

use crate::driver::Target;
use crate::rng::Rng;

pub const TARGET: Target = Target {
    name: "values",
    seeds,
    generate,
    mutate: None,
    run,
    short_iterations: 3000,
};

/// Deepest type the generator builds (the decoders' limit, 100, is tested beside them;
/// byte mutations of nested options reach it too).
const GENERATED_DEPTH: usize = 5;

fn seeds() -> Vec<Vec<u8>> {
    let mut rng = Rng::new(5);
    let mut seeds: Vec<Vec<u8>> = NativeType::ALL
        .iter()
        .map(|n| input(&CqlType::Native(*n), &native_bytes(&mut rng, *n)))
        .collect();
    seeds.extend((0..32).map(|_| generate(&mut rng)));
    seeds
}

/// `u16` length of the type's `[option]`, the option, the value.
fn input(ty: &CqlType, value: &[u8]) -> Vec<u8> {
    let mut option = BytesMut::new();
    ty.write_option(&mut option);
    let mut out = Vec::with_capacity(2 + option.len() + value.len());
    out.put_u16(option.len() as u16);
    out.extend_from_slice(&option);
    out.extend_from_slice(value);
    out
}

fn generate(rng: &mut Rng) -> Vec<u8> {
    let ty = cql_type(rng, GENERATED_DEPTH);
    let value = value_bytes(rng, &ty);
    input(&ty, &value)
}

fn cql_type(rng: &mut Rng, depth: usize) -> CqlType {
    if depth == 0 || rng.one_in(3) {
        return CqlType::Native(*rng.pick(&NativeType::ALL));
    }
    let inner = |rng: &mut Rng| Box::new(cql_type(rng, depth - 1));
    match rng.below(8) {
        0 => CqlType::List(inner(rng)),
        1 => CqlType::Set(inner(rng)),
        2 => CqlType::Map(inner(rng), inner(rng)),
        3 => CqlType::Tuple(
            (0..1 + rng.below(4))
                .map(|_| cql_type(rng, depth - 1))
                .collect(),
        ),
        4 => CqlType::Udt(Arc::new(UdtType::new(
            "ks",
            &format!("u{}", rng.below(100)),
            (0..1 + rng.below(4))
                .map(|i| (format!("f{i}"), cql_type(rng, depth - 1)))
                .collect(),
        ))),
        5 => CqlType::Vector(inner(rng), 1 + rng.below(4) as u32),
        6 => CqlType::Custom("org.apache.cassandra.db.marshal.BytesType".into()),
        _ => CqlType::Frozen(inner(rng)),
    }
}

/// A valid serialized value of `ty` (written here, independently of `Value::serialize`).
fn value_bytes(rng: &mut Rng, ty: &CqlType) -> Vec<u8> {
    match ty {
        CqlType::Native(n) => native_bytes(rng, *n),
        CqlType::Frozen(inner) => value_bytes(rng, inner),
        CqlType::Custom(_) => rng.blob(32),
        CqlType::List(e) | CqlType::Set(e) => collection(rng, &[e.as_ref()]),
        CqlType::Map(k, v) => collection(rng, &[k.as_ref(), v.as_ref()]),
        CqlType::Tuple(items) => fields(rng, items.iter()),
        CqlType::Udt(udt) => fields(rng, udt.fields.iter().map(|(_, t)| t)),
        CqlType::Vector(e, n) => vector(rng, e, *n),
    }
}

fn put_prefixed(out: &mut Vec<u8>, bytes: &[u8]) {
    out.put_i32(bytes.len() as i32);
    out.extend_from_slice(bytes);
}

fn collection(rng: &mut Rng, types: &[&CqlType]) -> Vec<u8> {
    let count = rng.below(4);
    let mut out = Vec::new();
    out.put_i32(count as i32);
    for _ in 0..count {
        for ty in types {
            let value = value_bytes(rng, ty);
            put_prefixed(&mut out, &value);
        }
    }
    out
}

fn fields<'a>(rng: &mut Rng, types: impl Iterator<Item = &'a CqlType>) -> Vec<u8> {
    let mut out = Vec::new();
    for ty in types {
        match rng.one_in(5) {
            true => out.put_i32(-1),
            false => {
                let value = value_bytes(rng, ty);
                put_prefixed(&mut out, &value);
            }
        }
    }
    out
}

fn vector(rng: &mut Rng, element: &CqlType, dimension: u32) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..dimension {
        let mut value = value_bytes(rng, element);
        match element.fixed_length() {
            Some(len) => value.resize(len, 0),
            None => vint::write_unsigned(&mut out, value.len() as u64),
        }
        out.extend_from_slice(&value);
    }
    out
}

fn native_bytes(rng: &mut Rng, n: NativeType) -> Vec<u8> {
    use NativeType::*;
    if n.accepts_empty() && rng.one_in(10) {
        return Vec::new();
    }
    match n {
        Ascii => (0..rng.size(40)).map(|_| rng.byte() & 0x7f).collect(),
        Text => text(rng).into_bytes(),
        Blob | Varint => rng.blob(40),
        Decimal => [rng.bytes(4), rng.blob(20)].concat(),
        Bigint | Counter | Timestamp | Time | Double => rng.edgy_i64().to_be_bytes().to_vec(),
        Int | Float | Date => (rng.edgy_i64() as i32).to_be_bytes().to_vec(),
        Smallint => (rng.edgy_i64() as i16).to_be_bytes().to_vec(),
        Tinyint | Boolean => vec![rng.byte()],
        Uuid => rng.bytes(16),
        Timeuuid => {
            let mut b = rng.bytes(16);
            b[6] = 0x10 | (b[6] & 0x0f);
            b
        }
        Inet => match rng.one_in(2) {
            true => rng.bytes(4),
            false => rng.bytes(16),
        },
        Duration => duration(rng),
    }
}

fn text(rng: &mut Rng) -> String {
    const PIECES: [&str; 6] = ["a", "é", "日本", "🦀", "\0", "'"];
    (0..rng.size(20)).map(|_| *rng.pick(&PIECES)).collect()
}

fn duration(rng: &mut Rng) -> Vec<u8> {
    let sign: i64 = if rng.one_in(2) { 1 } else { -1 };
    let mut out = Vec::new();
    vint::write_signed(
        &mut out,
        sign * i64::from(rng.edgy_i64() as i32).abs() % i64::from(i32::MAX),
    );
    vint::write_signed(&mut out, sign * (rng.below(1 << 20) as i64));
    vint::write_signed(&mut out, sign * (rng.edgy_i64() >> 1).abs());
    out
}

fn run(input: &[u8]) -> Result<(), String> {
    let Some((len, rest)) = input.split_first_chunk::<2>() else {
        return Ok(());
    };
    let (mut option, value) = rest.split_at((u16::from_be_bytes(*len) as usize).min(rest.len()));
    let Ok(ty) = CqlType::read_option(&mut option) else {
        return Ok(());
    };
    check_option_round_trip(&ty)?;
    check_value(&ty, value)
}

/// Writing a decoded type and reading it back is a fixed point.
fn check_option_round_trip(ty: &CqlType) -> Result<(), String> {
    let mut written = BytesMut::new();
    ty.write_option(&mut written);
    let again = CqlType::read_option(&mut &written[..])
        .map_err(|e| format!("the option written for {ty:?} does not read back: {e}"))?;
    let mut rewritten = BytesMut::new();
    again.write_option(&mut rewritten);
    match rewritten == written {
        true => Ok(()),
        false => Err(format!(
            "the option of {ty:?} changes when read and written again"
        )),
    }
}

fn check_value(ty: &CqlType, bytes: &[u8]) -> Result<(), String> {
    let decoded = Value::deserialize(ty, bytes);
    let validated = Value::validate(ty, bytes);
    if decoded.is_ok() != validated.is_ok() {
        return Err(format!(
            "deserialize ({decoded:?}) and validate ({validated:?}) disagree on a {ty:?}"
        ));
    }
    let Ok(value) = decoded else {
        return Ok(());
    };
    let serialized = value.to_bytes();
    let again = Value::deserialize(ty, &serialized)
        .map_err(|e| format!("{value:?} serializes to bytes that do not decode as {ty:?}: {e}"))?;
    match again.to_bytes() == serialized {
        true => Ok(()),
        false => Err(format!(
            "{value:?} of {ty:?} does not serialize to a fixed point"
        )),
    }
}
