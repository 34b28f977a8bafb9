//! Collection functions (Cassandra 5.0's `CollectionFcts`): `map_keys`, `map_values`,
//! `collection_count`, and `collection_min`/`max`/`sum`/`avg` over a set or list.
use std::cmp::Ordering;

use types::comparable::compare;
use types::{CqlResult, CqlType, NativeType, Value};

use super::factory::{wrong_argument, Generic};
use super::numeric::{self, is_numeric, Num};
use super::resolve::Arg;
use super::{Function, Operator, Registry};

pub fn register(r: &mut Registry) {
    r.add_factory("map_keys", map_part("map_keys", true));
    r.add_factory("map_values", map_part("map_values", false));
    r.add_factory("collection_count", count());
    for (name, want) in [
        ("collection_min", Ordering::Less),
        ("collection_max", Ordering::Greater),
    ] {
        r.add_factory(name, extreme(name, want));
    }
    r.add_factory("collection_sum", numeric_fold("collection_sum", false));
    r.add_factory("collection_avg", numeric_fold("collection_avg", true));
}

fn generic(
    name: &'static str,
    params: &'static str,
    build: impl Fn(&[Arg], CqlType) -> CqlResult<Function> + Send + Sync + 'static,
) -> Generic {
    Generic::first_typed(name, params, 1..=1, build)
}

fn map_part(name: &'static str, keys: bool) -> Generic {
    generic(name, "map<any, any>", move |args: &[Arg], ty: CqlType| {
        let CqlType::Map(k, v) = ty.unfrozen().clone() else {
            return Err(wrong_argument(name, "a map argument", &args[0], &ty));
        };
        let ret = if keys {
            CqlType::Set(k)
        } else {
            CqlType::List(v)
        };
        Ok(Function::scalar(name, vec![ty], ret, move |args, _| {
            Ok(match &args[0] {
                Some(Value::Map(pairs)) => Some(if keys {
                    Value::Set(pairs.iter().map(|(k, _)| k.clone()).collect())
                } else {
                    Value::List(pairs.iter().map(|(_, v)| v.clone()).collect())
                }),
                _ => None,
            })
        }))
    })
}

fn count() -> Generic {
    generic(
        "collection_count",
        "collection",
        |args: &[Arg], ty: CqlType| {
            if !matches!(
                ty.unfrozen(),
                CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)
            ) {
                return Err(wrong_argument(
                    "collection_count",
                    "a collection argument",
                    &args[0],
                    &ty,
                ));
            }
            Ok(Function::scalar(
                "collection_count",
                vec![ty],
                CqlType::Native(NativeType::Int),
                |args, _| {
                    Ok(args[0].as_ref().map(|v| {
                        Value::Int(match v {
                            Value::List(items) | Value::Set(items) => items.len() as i32,
                            Value::Map(pairs) => pairs.len() as i32,
                            _ => 0,
                        })
                    }))
                },
            ))
        },
    )
}

/// The element type of a set or list type.
fn element(ty: &CqlType) -> Option<CqlType> {
    match ty.unfrozen() {
        CqlType::List(e) | CqlType::Set(e) => Some(e.as_ref().clone()),
        _ => None,
    }
}

fn items(v: &Option<Value>) -> Option<&[Value]> {
    match v {
        Some(Value::List(items) | Value::Set(items)) if !items.is_empty() => Some(items),
        _ => None,
    }
}

fn extreme(name: &'static str, want: Ordering) -> Generic {
    generic(name, "collection", move |args: &[Arg], ty: CqlType| {
        let Some(elem) = element(&ty) else {
            return Err(wrong_argument(
                name,
                "a set or list argument",
                &args[0],
                &ty,
            ));
        };
        let cmp_ty = elem.clone();
        Ok(Function::scalar(name, vec![ty], elem, move |args, _| {
            let Some(items) = items(&args[0]) else {
                return Ok(None);
            };
            let mut best = &items[0];
            for item in &items[1..] {
                if compare(&cmp_ty, &item.to_bytes(), &best.to_bytes()) == want {
                    best = item;
                }
            }
            Ok(Some(best.clone()))
        }))
    })
}

fn numeric_fold(name: &'static str, average: bool) -> Generic {
    generic(
        name,
        "numeric_collection",
        move |args: &[Arg], ty: CqlType| {
            let elem = match element(&ty) {
                Some(CqlType::Native(n)) if is_numeric(n) => n,
                _ => {
                    return Err(wrong_argument(
                        name,
                        "a numeric set/list argument",
                        &args[0],
                        &ty,
                    ))
                }
            };
            Ok(Function::scalar(
                name,
                vec![ty],
                CqlType::Native(elem),
                move |args, _| {
                    let Some(items) = items(&args[0]) else {
                        return Ok(None);
                    };
                    let numbers: Vec<Num> = items.iter().filter_map(Num::of).collect();
                    Ok(fold(elem, &numbers, average).map(|n| n.into_value(elem)))
                },
            ))
        },
    )
}

/// The sum (or average) of numbers in their own type, as Cassandra's `NumberType` adds them.
fn fold(ty: NativeType, numbers: &[Num], average: bool) -> Option<Num> {
    let mut sum = Num::I32(0).convert(ty);
    for n in numbers {
        sum = numeric::arithmetic(Operator::Add, ty, &sum, n).ok()?;
    }
    if !average {
        return Some(sum);
    }
    let count = Num::I32(numbers.len() as i32);
    numeric::arithmetic(Operator::Div, ty, &sum, &count).ok()
}
