//! Column value generators, after cassandra-stress's `generate.values`: a value is a pure
//! function of the column and a seed. The seed, xor the column's salt, seeds the column's
//! `population` distribution, whose draw is the value's identity (so a population of N gives
//! at most N distinct values); the identity then seeds the `size` draw (text/blob length,
//! collection elements) and the bytes. Inserts and queries therefore agree on every value.

use std::net::{IpAddr, Ipv4Addr};

use scylla::cluster::metadata::{CollectionType, ColumnType, NativeType};
use scylla::value::{CqlDate, CqlDecimal, CqlTime, CqlTimestamp, CqlTimeuuid, CqlValue, CqlVarint};
use uuid::Uuid;

use super::profile::ColumnSpec;
use crate::dist::Sampler;
use crate::javarand::FasterRandom;

/// The characters generated text is made of.
const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// 1582-10-15 (the UUID epoch) to 1970-01-01, in 100 ns units.
const UUID_EPOCH_OFFSET: i64 = 0x01B2_1DD2_1381_4000;

/// What a column holds.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Native(NativeType),
    List(Box<Kind>),
    Set(Box<Kind>),
    Map(Box<Kind>, Box<Kind>),
}

fn kind(t: &ColumnType<'_>) -> Result<Kind, String> {
    match t {
        ColumnType::Native(NativeType::Counter | NativeType::Duration) => {
            Err(format!("columns of type {t:?} are not supported"))
        }
        ColumnType::Native(n) => Ok(Kind::Native(n.clone())),
        ColumnType::Collection { typ, .. } => match typ {
            CollectionType::List(e) => Ok(Kind::List(Box::new(kind(e)?))),
            CollectionType::Set(e) => Ok(Kind::Set(Box::new(kind(e)?))),
            CollectionType::Map(k, v) => Ok(Kind::Map(Box::new(kind(k)?), Box::new(kind(v)?))),
            other => Err(format!("collections of type {other:?} are not supported")),
        },
        other => Err(format!("columns of type {other:?} are not supported")),
    }
}

/// Generates one column's values.
#[derive(Debug, Clone)]
pub struct ValueGen {
    kind: Kind,
    salt: i64,
    population: Sampler,
    size: Sampler,
    bytes: FasterRandom,
}

impl ValueGen {
    pub fn new(name: &str, typ: &ColumnType<'_>, spec: &ColumnSpec) -> Result<ValueGen, String> {
        let kind = kind(typ).map_err(|e| format!("column {name}: {e}"))?;
        Ok(ValueGen {
            kind,
            salt: ring::murmur3_token(name.as_bytes()),
            population: Sampler::new(spec.population.clone(), 0),
            size: Sampler::new(spec.size.clone(), 0),
            bytes: FasterRandom::new(),
        })
    }

    /// The value for `seed`.
    pub fn value(&mut self, seed: i64) -> CqlValue {
        self.population.set_seed(seed ^ self.salt);
        let identity = self.population.next();
        self.size.set_seed(identity);
        self.bytes.set_seed(!identity);
        let kind = self.kind.clone();
        self.of_kind(&kind, identity)
    }

    fn size(&mut self) -> usize {
        usize::try_from(self.size.next()).unwrap_or(0)
    }

    fn of_kind(&mut self, kind: &Kind, identity: i64) -> CqlValue {
        match kind {
            Kind::Native(n) => self.native(n, identity),
            Kind::List(e) => CqlValue::List(self.elements(e, identity)),
            Kind::Set(e) => CqlValue::Set(self.elements(e, identity)),
            Kind::Map(k, v) => {
                let n = self.size();
                let entries = (0..n as i64)
                    .map(|i| {
                        let seed = identity.wrapping_mul(31).wrapping_add(i);
                        (self.of_kind(k, seed), self.of_kind(v, !seed))
                    })
                    .collect();
                CqlValue::Map(entries)
            }
        }
    }

    fn elements(&mut self, e: &Kind, identity: i64) -> Vec<CqlValue> {
        let n = self.size();
        (0..n as i64)
            .map(|i| self.of_kind(e, identity.wrapping_mul(31).wrapping_add(i)))
            .collect()
    }

    fn native(&mut self, n: &NativeType, id: i64) -> CqlValue {
        match n {
            NativeType::Ascii => CqlValue::Ascii(self.text()),
            NativeType::Text => CqlValue::Text(self.text()),
            NativeType::Blob => CqlValue::Blob(self.blob()),
            NativeType::Boolean => CqlValue::Boolean(id & 1 == 1),
            NativeType::TinyInt => CqlValue::TinyInt(id as i8),
            NativeType::SmallInt => CqlValue::SmallInt(id as i16),
            NativeType::Int => CqlValue::Int(id as i32),
            NativeType::BigInt => CqlValue::BigInt(id),
            NativeType::Float => CqlValue::Float(id as f32),
            NativeType::Double => CqlValue::Double(id as f64),
            NativeType::Decimal => CqlValue::Decimal(
                CqlDecimal::from_signed_be_bytes_and_exponent(id.to_be_bytes().to_vec(), 2),
            ),
            NativeType::Varint => {
                CqlValue::Varint(CqlVarint::from_signed_bytes_be(id.to_be_bytes().to_vec()))
            }
            NativeType::Timestamp => CqlValue::Timestamp(CqlTimestamp(id)),
            NativeType::Date => CqlValue::Date(CqlDate(
                (1u32 << 31).wrapping_add(id.rem_euclid(36_525) as u32),
            )),
            NativeType::Time => CqlValue::Time(CqlTime(id.rem_euclid(86_400_000_000_000))),
            NativeType::Inet => CqlValue::Inet(IpAddr::V4(Ipv4Addr::from(id as u32))),
            NativeType::Uuid => CqlValue::Uuid(self.uuid(4, id)),
            NativeType::Timeuuid => CqlValue::Timeuuid(CqlTimeuuid::from(self.uuid(1, id))),
            // Counters and durations are rejected by `kind`.
            _ => CqlValue::Empty,
        }
    }

    fn blob(&mut self) -> Vec<u8> {
        let size = self.size();
        let mut out = Vec::with_capacity(size);
        while out.len() < size {
            let mut v = self.bytes.next_long();
            for _ in 0..(size - out.len()).min(8) {
                out.push(v as u8);
                v >>= 8;
            }
        }
        out
    }

    fn text(&mut self) -> String {
        self.blob()
            .into_iter()
            .map(|b| char::from(ALPHABET[usize::from(b) % ALPHABET.len()]))
            .collect()
    }

    /// A version 4 (random) or version 1 (time-based, time from the identity) UUID.
    fn uuid(&mut self, version: u8, id: i64) -> Uuid {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.bytes.next_long().to_be_bytes());
        b[8..].copy_from_slice(&self.bytes.next_long().to_be_bytes());
        if version == 1 {
            let t = id.wrapping_mul(10_000).wrapping_add(UUID_EPOCH_OFFSET) as u64;
            b[..4].copy_from_slice(&(t as u32).to_be_bytes());
            b[4..6].copy_from_slice(&((t >> 32) as u16).to_be_bytes());
            b[6..8].copy_from_slice(&((t >> 48) as u16 & 0x0FFF).to_be_bytes());
        }
        b[6] = (b[6] & 0x0F) | (version << 4);
        b[8] = (b[8] & 0x3F) | 0x80;
        Uuid::from_bytes(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::DistSpec;

    fn gen(t: ColumnType<'static>, spec: ColumnSpec) -> ValueGen {
        ValueGen::new("c", &t, &spec).expect("supported")
    }

    #[test]
    fn values_are_a_function_of_the_seed() {
        let mut g = gen(ColumnType::Native(NativeType::Text), ColumnSpec::default());
        assert_eq!(g.value(5), g.value(5));
        assert_ne!(g.value(5), g.value(6));
        let CqlValue::Text(s) = g.value(5) else {
            panic!("text")
        };
        assert!((4..=8).contains(&s.len()), "{s}");
    }

    #[test]
    fn population_bounds_distinct_values() {
        let spec = ColumnSpec {
            population: DistSpec::uniform(1, 3),
            ..ColumnSpec::default()
        };
        let mut g = gen(ColumnType::Native(NativeType::BigInt), spec);
        let distinct: std::collections::HashSet<String> =
            (0..200).map(|s| format!("{:?}", g.value(s))).collect();
        assert!(distinct.len() <= 3, "{distinct:?}");
    }

    #[test]
    fn every_simple_type_generates() {
        use NativeType::*;
        for n in [
            Ascii, Boolean, Blob, Date, Decimal, Double, Float, Int, BigInt, Text, Timestamp, Inet,
            SmallInt, TinyInt, Time, Timeuuid, Uuid, Varint,
        ] {
            let mut g = gen(ColumnType::Native(n.clone()), ColumnSpec::default());
            assert_ne!(g.value(1), CqlValue::Empty, "{n:?}");
        }
        let CqlValue::Timeuuid(t) =
            gen(ColumnType::Native(Timeuuid), ColumnSpec::default()).value(3)
        else {
            panic!("timeuuid")
        };
        assert_eq!(uuid::Uuid::from(t).get_version_num(), 1);
        let list = ColumnType::Collection {
            frozen: false,
            typ: CollectionType::List(Box::new(ColumnType::Native(Int))),
        };
        assert!(
            matches!(gen(list, ColumnSpec::default()).value(1), CqlValue::List(v) if (4..=8).contains(&v.len()))
        );
        assert!(ValueGen::new("c", &ColumnType::Native(Counter), &ColumnSpec::default()).is_err());
    }
}
