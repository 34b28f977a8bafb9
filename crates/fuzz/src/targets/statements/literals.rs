//! CQL literals (and a few function calls) for each kind of column: mostly valid ones near
//! the edges of their type, now and then null, a literal of another kind or one of the
//! extreme literals of the CQL target.

use super::schema::{Kind, KINDS};
use crate::rng::Rng;
use crate::targets::cql;

/// A term for a column of `kind`.
pub fn term(rng: &mut Rng, kind: Kind) -> String {
    match rng.below(40) {
        0 => "null".into(),
        1 => cql::extreme_literal(rng),
        2 => {
            let other = *rng.pick(&KINDS);
            valid(rng, other)
        }
        _ => valid(rng, kind),
    }
}

/// A small integer most of the time, so that statements meet the rows others wrote; now
/// and then one on the edge of `int` or beyond it.
pub fn key_int(rng: &mut Rng) -> String {
    match rng.below(32) {
        0 => rng.edgy_i64().to_string(),
        1..=3 => (rng.edgy_i64() as i32).to_string(),
        _ => rng.below(6).to_string(),
    }
}

pub fn key_text(rng: &mut Rng) -> String {
    rng.pick(&["'a'", "'b'", "''", "'ü'", "'it''s'", "$$c$$"])
        .to_string()
}

fn valid(rng: &mut Rng, kind: Kind) -> String {
    match kind {
        Kind::Int | Kind::Counter => key_int(rng),
        Kind::BigInt => rng.edgy_i64().to_string(),
        Kind::Text => text(rng),
        Kind::Blob => blob(rng),
        Kind::Boolean => rng.pick(&["true", "false", "TRUE"]).to_string(),
        Kind::Double => double(rng),
        Kind::Decimal => rng
            .pick(&[
                "0",
                "-1.5",
                "123456789012345678901234567890.000001",
                "1e-300",
                "2E+10",
            ])
            .to_string(),
        Kind::Varint => rng
            .pick(&[
                "0",
                "-1",
                "170141183460469231731687303715884105728",
                "-9223372036854775809",
            ])
            .to_string(),
        Kind::Duration => rng
            .pick(&[
                "1h30m",
                "-2d",
                "P1Y2M",
                "P0001-02-03T04:05:06",
                "PT0S",
                "89w",
                "1mo2ns",
            ])
            .to_string(),
        Kind::Timestamp => timestamp(rng),
        Kind::Uuid => rng
            .pick(&[
                "uuid()",
                "123e4567-e89b-12d3-a456-426614174000",
                "00000000-0000-0000-0000-000000000000",
            ])
            .to_string(),
        Kind::TimeUuid => rng
            .pick(&[
                "now()",
                "minTimeuuid('2024-01-01')",
                "50554d6e-29bb-11e5-b345-feff819cdc9f",
            ])
            .to_string(),
        Kind::Inet => rng
            .pick(&[
                "'127.0.0.1'",
                "'::1'",
                "'255.255.255.255'",
                "'fe80::1:2:3:4'",
            ])
            .to_string(),
        Kind::Date => rng
            .pick(&[
                "'2024-02-29'",
                "'1970-01-01'",
                "'-5877641-06-23'",
                "'5881580-07-11'",
                "2147483648",
                "0",
            ])
            .to_string(),
        Kind::Time => rng
            .pick(&[
                "'08:12:54.123456789'",
                "'00:00:00'",
                "'23:59:59.999999999'",
                "86399999999999",
                "0",
            ])
            .to_string(),
        compound => compound_literal(rng, compound),
    }
}

fn compound_literal(rng: &mut Rng, kind: Kind) -> String {
    match kind {
        Kind::Vector => {
            let n = match rng.one_in(6) {
                true => rng.below(5),
                false => 3,
            };
            format!("[{}]", list_of(rng, n, double))
        }
        Kind::Address => address(rng),
        Kind::Tuple => {
            let doubles = rng.size(4);
            let doubles = list_of(rng, doubles, double);
            match rng.below(6) {
                0 => format!("({})", key_int(rng)),
                _ => format!("({}, {}, [{doubles}])", key_int(rng), text(rng)),
            }
        }
        Kind::Map => {
            let n = rng.size(6);
            let pairs: Vec<String> = (0..n)
                .map(|_| format!("{}: {}", key_text(rng), key_int(rng)))
                .collect();
            format!("{{{}}}", pairs.join(", "))
        }
        Kind::List => {
            let n = rng.size(8);
            format!("[{}]", list_of(rng, n, key_int))
        }
        _ => {
            let n = rng.size(6);
            format!("{{{}}}", list_of(rng, n, key_text))
        }
    }
}

fn list_of(rng: &mut Rng, n: usize, element: fn(&mut Rng) -> String) -> String {
    (0..n).map(|_| element(rng)).collect::<Vec<_>>().join(", ")
}

fn text(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => format!("'{}'", "t".repeat(rng.size(20_000))),
        1 => "textAsBlob('x')".into(),
        _ => key_text(rng),
    }
}

fn blob(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => "textAsBlob('b')".into(),
        1 => "intAsBlob(7)".into(),
        _ => {
            let n = rng.size(64);
            let hex: String = rng.bytes(n).iter().map(|b| format!("{b:02x}")).collect();
            format!("0x{hex}")
        }
    }
}

fn double(rng: &mut Rng) -> String {
    rng.pick(&[
        "0.0",
        "-0.0",
        "1.5",
        "NaN",
        "-Infinity",
        "1e308",
        "4.9e-324",
        "3",
    ])
    .to_string()
}

fn timestamp(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => "toTimestamp(now())".into(),
        1 => rng.edgy_i64().to_string(),
        _ => rng
            .pick(&[
                "'2024-01-01 00:00:00+0000'",
                "'2011-02-03T04:05'",
                "'1970-01-01'",
                "'9999-12-31 23:59:59.999Z'",
            ])
            .to_string(),
    }
}

fn address(rng: &mut Rng) -> String {
    let mut fields = vec![
        format!("street: {}", text(rng)),
        format!("zip: {}", key_int(rng)),
        format!("tags: {{{}}}", list_of(rng, 2, key_text)),
    ];
    match rng.below(5) {
        0 => {
            fields.truncate(rng.below(3));
        }
        1 => fields.push("nope: 1".into()),
        _ => {}
    }
    format!("{{{}}}", fields.join(", "))
}
