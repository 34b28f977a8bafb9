//! Aggregates (Cassandra's `AggregateFcts`): `count` (and `count(*)`, named `countRows`),
//! `min` and `max` of any type, `sum` and `avg` of each numeric type with Cassandra's
//! arithmetic: sums wrap in their own type (`sum` of ints is an int), averages of integers
//! sum exactly and truncate, floating point sums are Kahan-compensated, decimal averages are
//! a running average rounded half even.
use std::cmp::Ordering;

use bytes::Bytes;
use num_bigint::BigInt;
use types::comparable::compare;
use types::{CqlResult, CqlType, NativeType, Value};

use super::factory::Generic;
use super::numeric::{Decimal, Num, NUMERIC};
use super::{Accumulator, Function, Registry};

pub fn register(r: &mut Registry) {
    r.add(Function::aggregate(
        "countrows",
        vec![],
        native(NativeType::Bigint),
        || {
            Box::new(Count {
                count: 0,
                rows: true,
            })
        },
    ));
    for ty in NUMERIC {
        r.add(Function::aggregate(
            "sum",
            vec![native(ty)],
            native(ty),
            move || sum(ty),
        ));
        r.add(Function::aggregate(
            "avg",
            vec![native(ty)],
            native(ty),
            move || avg(ty),
        ));
    }
    r.add_factory(
        "count",
        any("count", |ty| {
            Function::aggregate("count", vec![ty], native(NativeType::Bigint), || {
                Box::new(Count {
                    count: 0,
                    rows: false,
                })
            })
        }),
    );
    for (name, want) in [("min", Ordering::Less), ("max", Ordering::Greater)] {
        r.add_factory(
            name,
            any(name, move |ty| {
                let compared = ty.clone();
                Function::aggregate(name, vec![ty.clone()], ty, move || {
                    Box::new(Extreme {
                        ty: compared.clone(),
                        want,
                        best: None,
                    })
                })
                .legacy_timeuuid()
            }),
        );
    }
}

fn native(n: NativeType) -> CqlType {
    CqlType::Native(n)
}

fn any(name: &'static str, make: impl Fn(CqlType) -> Function + Send + Sync + 'static) -> Generic {
    Generic::first_typed(name, "any", 1..=1, move |_, ty| Ok(make(ty)))
}

struct Count {
    count: i64,
    rows: bool,
}

impl Accumulator for Count {
    fn add(&mut self, args: &[Option<Value>]) -> CqlResult<()> {
        if self.rows || args.first().is_some_and(Option::is_some) {
            self.count += 1;
        }
        Ok(())
    }

    fn result(&self) -> CqlResult<Option<Value>> {
        Ok(Some(Value::Bigint(self.count)))
    }
}

struct Extreme {
    ty: CqlType,
    want: Ordering,
    best: Option<(Bytes, Value)>,
}

impl Accumulator for Extreme {
    fn add(&mut self, args: &[Option<Value>]) -> CqlResult<()> {
        let Some(Some(v)) = args.first() else {
            return Ok(());
        };
        let bytes = v.to_bytes();
        let better = match &self.best {
            None => true,
            Some((b, _)) => compare(&self.ty, &bytes, b) == self.want,
        };
        if better {
            self.best = Some((bytes, v.clone()));
        }
        Ok(())
    }

    fn result(&self) -> CqlResult<Option<Value>> {
        Ok(self.best.as_ref().map(|(_, v)| v.clone()))
    }
}

/// The numbers of one group.
#[derive(Default)]
struct Numbers {
    count: i64,
    /// Integers (tinyint to bigint and counters) summed exactly.
    exact: i128,
    /// Integers summed with wrapping in their type.
    wrapped: i64,
    kahan: Kahan,
    big: BigInt,
    decimal: Option<Decimal>,
    average: Option<Decimal>,
}

#[derive(Default)]
struct Kahan {
    sum: f64,
    compensation: f64,
    simple: f64,
}

impl Kahan {
    fn add(&mut self, d: f64) {
        self.simple += d;
        let tmp = d - self.compensation;
        let rounded = self.sum + tmp;
        self.compensation = (rounded - self.sum) - tmp;
        self.sum = rounded;
    }

    fn total(&self) -> f64 {
        let tmp = self.sum + self.compensation;
        if tmp.is_nan() && self.simple.is_infinite() {
            self.simple
        } else {
            tmp
        }
    }
}

struct Sum {
    ty: NativeType,
    average: bool,
    numbers: Numbers,
}

fn sum(ty: NativeType) -> Box<dyn Accumulator> {
    Box::new(Sum {
        ty,
        average: false,
        numbers: Numbers::default(),
    })
}

fn avg(ty: NativeType) -> Box<dyn Accumulator> {
    Box::new(Sum {
        ty,
        average: true,
        numbers: Numbers::default(),
    })
}

impl Accumulator for Sum {
    fn add(&mut self, args: &[Option<Value>]) -> CqlResult<()> {
        let Some(n) = args.first().and_then(|v| v.as_ref()).and_then(Num::of) else {
            return Ok(());
        };
        let s = &mut self.numbers;
        s.count += 1;
        match &n {
            Num::F32(_) | Num::F64(_) => s.kahan.add(n.to_f64()),
            Num::Big(v) => s.big += v,
            Num::Dec(d) => add_decimal(s, d),
            other => {
                let v = other.to_i64();
                s.exact += i128::from(v);
                s.wrapped = s.wrapped.wrapping_add(v);
            }
        }
        Ok(())
    }

    fn result(&self) -> CqlResult<Option<Value>> {
        let s = &self.numbers;
        let count = s.count.max(1);
        let n = match self.ty {
            NativeType::Float | NativeType::Double if self.average && s.count == 0 => Num::F64(0.0),
            NativeType::Float | NativeType::Double if self.average => {
                Num::F64(s.kahan.total() / count as f64)
            }
            NativeType::Float | NativeType::Double => Num::F64(s.kahan.total()),
            NativeType::Varint if self.average => Num::Big(&s.big / count),
            NativeType::Varint => Num::Big(s.big.clone()),
            NativeType::Decimal => {
                let chosen = if self.average { &s.average } else { &s.decimal };
                Num::Dec(chosen.clone().unwrap_or(Decimal::new(BigInt::from(0), 0)))
            }
            _ if self.average => Num::I64((s.exact / i128::from(count)) as i64),
            _ => Num::I64(s.wrapped),
        };
        Ok(Some(n.into_value(self.ty)))
    }
}

/// Adds to the decimal sum and to the running average `avg + (value - avg) / count`, each
/// division rounded half even at the difference's scale, as Cassandra computes it.
fn add_decimal(s: &mut Numbers, d: &Decimal) {
    let zero = Decimal::new(BigInt::from(0), 0);
    s.decimal = Some(s.decimal.take().unwrap_or(zero.clone()).add(d));
    let average = s.average.take().unwrap_or(zero);
    let step = d.sub(&average).div_half_even(s.count);
    s.average = Some(average.add(&step));
}
