//! Masking functions (Cassandra 5.0's dynamic data masking): `mask_null`, `mask_default`,
//! `mask_replace`, `mask_inner`, `mask_outer` and `mask_hash`.
use bytes::Bytes;
use num_bigint::BigInt;
use types::value::calendar::DATE_EPOCH;
use types::value::Duration;
use types::{CqlError, CqlResult, CqlType, NativeType, Value};

use super::factory::{wrong_argument, Generic};
use super::resolve::Arg;
use super::{Env, Function, Registry};

pub fn register(r: &mut Registry) {
    r.add_factory("mask_null", same_type("mask_null", |_, _| None));
    let mask_default = Generic::first_typed("mask_default", "any", 1..=1, |_, ty| {
        let default = default_value(&ty);
        let f = Function::scalar("mask_default", vec![ty.clone()], ty, move |_, _| {
            Ok(Some(default.clone()))
        });
        Ok(f.legacy_timeuuid())
    });
    r.add_factory("mask_default", mask_default);
    let mask_replace = Generic::first_typed("mask_replace", "any, any", 2..=2, |_, ty| {
        let params = vec![ty.clone(), ty.clone()];
        let f = Function::scalar("mask_replace", params, ty, |args, _| Ok(args[1].clone()));
        Ok(f.legacy_timeuuid())
    });
    r.add_factory("mask_replace", mask_replace);
    for (name, inner) in [("mask_inner", true), ("mask_outer", false)] {
        r.add_factory(name, partial(name, inner));
    }
    let mask_hash = Generic::first_typed("mask_hash", "any, [text]", 1..=2, hash_function);
    r.add_factory("mask_hash", mask_hash);
}

/// A mask of one argument returning a value of its type.
fn same_type(name: &'static str, f: fn(&[Option<Value>], &Env) -> Option<Value>) -> Generic {
    Generic::first_typed(name, "any", 1..=1, move |_, ty| {
        let f = Function::scalar(name, vec![ty.clone()], ty, move |args, env| {
            Ok(f(args, env))
        });
        Ok(f.legacy_timeuuid())
    })
}

/// The value `mask_default` gives a type: `****`, zero, false, the epoch, empty collections,
/// composites of defaults.
pub fn default_value(ty: &CqlType) -> Value {
    use NativeType as N;
    match ty.unfrozen() {
        CqlType::Native(n) => match n {
            N::Ascii => Value::Ascii("****".into()),
            N::Text => Value::Text("****".into()),
            N::Bigint => Value::Bigint(0),
            N::Counter => Value::Counter(0),
            N::Blob => Value::Blob(Bytes::new()),
            N::Boolean => Value::Boolean(false),
            N::Date => Value::Date(DATE_EPOCH as u32),
            N::Decimal => Value::Decimal {
                unscaled: BigInt::from(0),
                scale: 0,
            },
            N::Double => Value::Double(0.0),
            N::Duration => Value::Duration(Duration {
                months: 0,
                days: 0,
                nanos: 0,
            }),
            N::Float => Value::Float(0.0),
            N::Inet => Value::Inet(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED)),
            N::Int => Value::Int(0),
            N::Smallint => Value::Smallint(0),
            N::Time => Value::Time(0),
            N::Timestamp => Value::Timestamp(0),
            N::Timeuuid => Value::Timeuuid(super::time::min_timeuuid(0)),
            N::Tinyint => Value::Tinyint(0),
            N::Uuid => Value::Uuid(uuid::Uuid::nil()),
            N::Varint => Value::Varint(BigInt::from(0)),
        },
        CqlType::List(_) => Value::List(Vec::new()),
        CqlType::Set(_) => Value::Set(Vec::new()),
        CqlType::Map(..) => Value::Map(Vec::new()),
        CqlType::Tuple(types) => {
            Value::Tuple(types.iter().map(|t| Some(default_value(t))).collect())
        }
        CqlType::Udt(udt) => Value::Udt(
            udt.fields
                .iter()
                .map(|(name, t)| (name.clone(), Some(default_value(t))))
                .collect(),
        ),
        CqlType::Vector(elem, n) => Value::Vector(vec![default_value(elem); *n as usize]),
        CqlType::Custom(_) | CqlType::Frozen(_) => Value::Blob(Bytes::new()),
    }
}

fn partial(name: &'static str, inner: bool) -> Generic {
    let params = "[text|varchar|ascii], int, int, [text]";
    Generic::first_typed(name, params, 3..=4, move |args, ty| {
        if !matches!(
            ty.unfrozen(),
            CqlType::Native(NativeType::Text | NativeType::Ascii)
        ) {
            let what = "an argument of type [text|varchar|ascii]";
            return Err(wrong_argument(name, what, &args[0], &ty));
        }
        let pad = padding(name, args)?;
        let int = CqlType::Native(NativeType::Int);
        let mut params = vec![ty.clone(), int.clone(), int];
        if args.len() == 4 {
            params.push(CqlType::Native(NativeType::Text));
        }
        Ok(Function::scalar(name, params, ty, move |args, _| {
            Ok(mask_text(args, inner, pad))
        }))
    })
}

/// The padding character: the fourth argument when it is a constant, else `*`.
fn padding(name: &str, args: &[Arg]) -> CqlResult<char> {
    let Some(Arg {
        kind: super::ArgKind::Literal(_, text),
        ..
    }) = args.get(3)
    else {
        return Ok('*');
    };
    let count = text.chars().count();
    let mut chars = text.chars();
    match (chars.next(), count) {
        (Some(c), 1) => Ok(c),
        _ => Err(CqlError::invalid(format!(
            "The padding argument for function system.{name} should be single-character, but '{text}' has {count} characters."
        ))),
    }
}

fn int_arg(v: &Option<Value>) -> usize {
    match v {
        Some(Value::Int(n)) if *n > 0 => *n as usize,
        _ => 0,
    }
}

/// `mask_inner` keeps `begin` characters at the start and `end` at the end and pads the
/// rest; `mask_outer` pads those and keeps the rest.
fn mask_text(args: &[Option<Value>], inner: bool, pad: char) -> Option<Value> {
    let (text, ascii) = match &args[0] {
        Some(Value::Text(s)) => (s, false),
        Some(Value::Ascii(s)) => (s, true),
        _ => return None,
    };
    let pad = match args.get(3) {
        Some(Some(Value::Text(p))) => p.chars().next().unwrap_or(pad),
        _ => pad,
    };
    let chars: Vec<char> = text.chars().collect();
    let len = chars.len();
    let (begin, end) = (int_arg(&args[1]).min(len), int_arg(&args[2]).min(len));
    let masked: String = chars
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let outer = i < begin || i >= len - end;
            if outer != inner {
                pad
            } else {
                *c
            }
        })
        .collect();
    Some(if ascii {
        Value::Ascii(masked)
    } else {
        Value::Text(masked)
    })
}

fn hash_function(args: &[Arg], ty: CqlType) -> CqlResult<Function> {
    if let Some(Arg {
        kind: super::ArgKind::Literal(_, algorithm),
        ..
    }) = args.get(1)
    {
        digest(algorithm, b"")?;
    }
    let mut params = vec![ty];
    if args.len() == 2 {
        params.push(CqlType::Native(NativeType::Text));
    }
    Ok(Function::scalar(
        "mask_hash",
        params,
        CqlType::Native(NativeType::Blob),
        |args, _| {
            let Some(value) = &args[0] else {
                return Ok(None);
            };
            let algorithm = match args.get(1) {
                Some(Some(Value::Text(a))) => a.as_str(),
                _ => "SHA-256",
            };
            digest(algorithm, &value.to_bytes()).map(|d| Some(Value::Blob(Bytes::from(d))))
        },
    ))
}

/// Java's `MessageDigest` by name (any case): MD5, SHA-1, SHA-224, SHA-256, SHA-384, SHA-512.
fn digest(algorithm: &str, data: &[u8]) -> CqlResult<Vec<u8>> {
    use sha2::Digest;
    Ok(match algorithm.to_ascii_uppercase().as_str() {
        "MD5" => md5::Md5::digest(data).to_vec(),
        "SHA-1" | "SHA1" | "SHA" => sha1::Sha1::digest(data).to_vec(),
        "SHA-224" => sha2::Sha224::digest(data).to_vec(),
        "SHA-256" => sha2::Sha256::digest(data).to_vec(),
        "SHA-384" => sha2::Sha384::digest(data).to_vec(),
        "SHA-512" => sha2::Sha512::digest(data).to_vec(),
        _ => {
            return Err(CqlError::invalid(format!(
                "Hash algorithm not found: {algorithm}"
            )))
        }
    })
}
