//! Vector similarity functions (Cassandra 5.0's `VectorFcts`): `similarity_cosine`,
//! `similarity_euclidean` and `similarity_dot_product` of two `vector<float, n>`, each scaled
//! into [0, 1] as Cassandra's vector search scores them.
use types::{CqlError, CqlResult, CqlType, NativeType, Value};

use super::factory::{wrong_argument, Generic};
use super::resolve::{Arg, ArgKind};
use super::{Function, Registry};

type Similarity = fn(&[f32], &[f32]) -> Option<f32>;

pub fn register(r: &mut Registry) {
    let functions: [(&'static str, Similarity); 3] = [
        ("similarity_cosine", cosine),
        ("similarity_euclidean", euclidean),
        ("similarity_dot_product", dot_product),
    ];
    for (name, similarity) in functions {
        r.add_factory(name, generic(name, similarity));
    }
}

fn generic(name: &'static str, similarity: Similarity) -> Generic {
    Generic {
        name,
        params: "vector<float, n>, vector<float, n>",
        arity: 2..=2,
        typed: 0,
        build: Box::new(move |args, _| {
            let ty = vector_type(name, args)?;
            let f = Function::scalar(
                name,
                vec![ty.clone(), ty],
                CqlType::Native(NativeType::Float),
                move |args, _| {
                    let (Some(a), Some(b)) = (floats(&args[0]), floats(&args[1])) else {
                        return Ok(None);
                    };
                    similarity(&a, &b)
                        .map(|v| Some(Value::Float(v)))
                        .ok_or_else(|| {
                            CqlError::invalid(format!(
                                "Function system.{name} doesn't support all-zero vectors."
                            ))
                        })
                },
            );
            Ok(f)
        }),
    }
}

/// The `vector<float, n>` both arguments must be (Cassandra's `FunctionParameter.vector`): a
/// typed argument must be a float vector, a list literal of `n` elements is one, markers and
/// nulls take the other argument's type; every argument must have the same dimension.
fn vector_type(name: &str, args: &[Arg]) -> CqlResult<CqlType> {
    let float = CqlType::Native(NativeType::Float);
    let mut types = Vec::with_capacity(args.len());
    for arg in args {
        let ty = match &arg.kind {
            ArgKind::ListLiteral(n) => Some(CqlType::Vector(Box::new(float.clone()), *n as u32)),
            _ => arg.inferred_type(),
        };
        if let Some(ty) = &ty {
            if !matches!(ty.unfrozen(), CqlType::Vector(e, _) if **e == float) {
                return Err(wrong_argument(name, "a float vector argument", arg, ty));
            }
        }
        types.push(ty);
    }
    let known: Vec<&CqlType> = types.iter().flatten().collect();
    let Some(first) = known.first() else {
        return Err(CqlError::invalid(format!(
            "Cannot infer type of argument {} in call to function system.{name}(vector<float, n>, vector<float, n>): use type casts to disambiguate",
            args[0].text
        )));
    };
    if known.iter().any(|t| t.unfrozen() != first.unfrozen()) {
        return Err(CqlError::invalid(
            "All arguments must have the same vector dimensions",
        ));
    }
    Ok((*first).clone())
}

fn floats(v: &Option<Value>) -> Option<Vec<f32>> {
    match v {
        Some(Value::Vector(items)) => items
            .iter()
            .map(|i| match i {
                Value::Float(f) => Some(*f),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// jvector's cosine: float sums, the square root of the norms' product taken in double.
fn cosine(a: &[f32], b: &[f32]) -> Option<f32> {
    let norms = f64::from(dot(a, a)) * f64::from(dot(b, b));
    let cosine = (f64::from(dot(a, b)) / norms.sqrt()) as f32;
    (norms != 0.0).then(|| (1.0 + cosine) / 2.0)
}

fn euclidean(a: &[f32], b: &[f32]) -> Option<f32> {
    let squared: f32 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    Some(1.0 / (1.0 + squared))
}

fn dot_product(a: &[f32], b: &[f32]) -> Option<f32> {
    Some((1.0 + dot(a, b)) / 2.0)
}
