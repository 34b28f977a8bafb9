//! Property and example tests of the comparators and the clustering encoding.
use std::cmp::Ordering;
use std::sync::Arc;

use num_bigint::BigInt;
use proptest::prelude::*;

use super::*;
use crate::{CqlType, NativeType, UdtType};

fn native(n: NativeType) -> CqlType {
    CqlType::Native(n)
}

fn frozen(ty: CqlType) -> CqlType {
    CqlType::Frozen(Box::new(ty))
}

/// Every clustering-capable native type plus representative frozen composites.
fn types_under_test() -> Vec<CqlType> {
    use NativeType::*;
    let natives = [
        Ascii, Bigint, Blob, Boolean, Date, Decimal, Double, Float, Inet, Int, Smallint, Text,
        Time, Timestamp, Timeuuid, Tinyint, Uuid, Varint,
    ];
    let mut types: Vec<CqlType> = natives.into_iter().map(native).collect();
    types.push(frozen(CqlType::List(Box::new(native(Int)))));
    types.push(frozen(CqlType::Set(Box::new(native(Text)))));
    types.push(frozen(CqlType::Map(
        Box::new(native(Int)),
        Box::new(native(Blob)),
    )));
    types.push(frozen(CqlType::Tuple(vec![
        native(Int),
        native(Text),
        native(Double),
    ])));
    types.push(frozen(CqlType::List(Box::new(frozen(CqlType::Tuple(
        vec![native(Varint), native(Timeuuid)],
    ))))));
    types.push(frozen(CqlType::Udt(Arc::new(UdtType::new(
        "ks",
        "u",
        vec![("a".into(), native(Decimal)), ("b".into(), native(Boolean))],
    )))));
    let inner = altered("i", vec![native(Int), native(Text)], 1);
    types.push(altered(
        "o",
        vec![native(Text), native(Int), native(Blob)],
        2,
    ));
    types.push(altered("n", vec![inner.clone(), native(Text)], 1));
    types.push(frozen(CqlType::List(Box::new(CqlType::Tuple(vec![
        native(Int),
        inner,
    ])))));
    types
}

/// A frozen user type whose last `added` fields ALTER TYPE ADD appended.
fn altered(name: &str, types: Vec<CqlType>, added: usize) -> CqlType {
    let fields = types
        .into_iter()
        .enumerate()
        .map(|(i, t)| (format!("f{i}"), t))
        .collect();
    let mut udt = UdtType::new("ks", name, fields);
    udt.added_fields = added;
    frozen(CqlType::Udt(Arc::new(udt)))
}

fn be<const N: usize>(bytes: [u8; N]) -> Vec<u8> {
    bytes.to_vec()
}

fn bigint(n: i64) -> Vec<u8> {
    BigInt::from(n).to_signed_bytes_be()
}

/// Serialized values of `ty`: mostly from small domains (so equal prefixes are common), some
/// empty, and for ints some malformed lengths.
fn value(ty: &CqlType) -> BoxedStrategy<Vec<u8>> {
    let strategy = match ty {
        CqlType::Native(n) => native_value(*n),
        CqlType::Frozen(inner) => return value(inner),
        CqlType::List(e) | CqlType::Set(e) => prop::collection::vec(value(e), 0..3)
            .prop_map(|items| serialize_collection(items.len(), items.into_iter().map(Some)))
            .boxed(),
        CqlType::Map(k, v) => prop::collection::vec((value(k), value(v)), 0..3)
            .prop_map(|entries| {
                let n = entries.len();
                serialize_collection(n, entries.into_iter().flat_map(|(k, v)| [Some(k), Some(v)]))
            })
            .boxed(),
        CqlType::Tuple(types) => fields_value(types.clone()),
        CqlType::Udt(udt) => {
            let full = fields_value(udt.fields.iter().map(|(_, t)| t.clone()).collect());
            if udt.added_fields == 0 {
                full
            } else {
                written_before_alter(full, udt.fields.len() - udt.added_fields)
            }
        }
        _ => prop::collection::vec(any::<u8>(), 0..4).boxed(),
    };
    prop_oneof![1 => Just(Vec::new()), 12 => strategy].boxed()
}

fn fields_value(types: Vec<CqlType>) -> BoxedStrategy<Vec<u8>> {
    let fields: Vec<BoxedStrategy<Option<Vec<u8>>>> = types
        .iter()
        .map(|t| prop::option::weighted(0.9, value(t)).boxed())
        .collect();
    fields
        .prop_map(|fields| serialize_items(fields.into_iter()))
        .boxed()
}

/// Values of an altered user type, some written before the ALTER: their last fields cut off
/// (down to `fixed` fields).
fn written_before_alter(full: BoxedStrategy<Vec<u8>>, fixed: usize) -> BoxedStrategy<Vec<u8>> {
    (full, any::<bool>())
        .prop_map(move |(value, cut)| {
            if !cut {
                return value;
            }
            let mut rest = &value[..];
            for _ in 0..fixed {
                let len = i32::from_be_bytes(rest[..4].try_into().unwrap());
                rest = &rest[4 + usize::try_from(len).unwrap_or(0)..];
            }
            value[..value.len() - rest.len()].to_vec()
        })
        .boxed()
}

fn serialize_items(items: impl Iterator<Item = Option<Vec<u8>>>) -> Vec<u8> {
    let mut out = Vec::new();
    for item in items {
        match item {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(v) => {
                out.extend_from_slice(&(v.len() as i32).to_be_bytes());
                out.extend_from_slice(&v);
            }
        }
    }
    out
}

fn serialize_collection(count: usize, items: impl Iterator<Item = Option<Vec<u8>>>) -> Vec<u8> {
    let mut out = (count as i32).to_be_bytes().to_vec();
    out.extend(serialize_items(items));
    out
}

fn native_value(n: NativeType) -> BoxedStrategy<Vec<u8>> {
    use NativeType::*;
    match n {
        Tinyint => any::<i8>().prop_map(|v| be(v.to_be_bytes())).boxed(),
        Smallint => prop_oneof![-2i16..2, any::<i16>()]
            .prop_map(|v| be(v.to_be_bytes()))
            .boxed(),
        Int => prop_oneof![
            8 => prop_oneof![-2i32..2, any::<i32>()].prop_map(|v| be(v.to_be_bytes())),
            1 => prop::collection::vec(any::<u8>(), 1..7),
        ]
        .boxed(),
        Bigint | Timestamp | Counter => prop_oneof![-2i64..2, any::<i64>()]
            .prop_map(|v| be(v.to_be_bytes()))
            .boxed(),
        Date => prop_oneof![(1u32 << 31) - 1..(1 << 31) + 1, any::<u32>()]
            .prop_map(|v| be(v.to_be_bytes()))
            .boxed(),
        Time => (0i64..86_400_000_000_000)
            .prop_map(|v| be(v.to_be_bytes()))
            .boxed(),
        Boolean => (0u8..2).prop_map(|b| vec![b]).boxed(),
        Float => prop_oneof![
            any::<u32>(),
            prop::sample::select(vec![
                0.0f32,
                -0.0,
                1.0,
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY
            ])
            .prop_map(f32::to_bits),
        ]
        .prop_map(|bits| be(bits.to_be_bytes()))
        .boxed(),
        Double => prop_oneof![
            any::<u64>(),
            prop::sample::select(vec![0.0f64, -0.0, 1.0, f64::NAN, f64::INFINITY, -1.5])
                .prop_map(f64::to_bits),
        ]
        .prop_map(|bits| be(bits.to_be_bytes()))
        .boxed(),
        Uuid => (
            any::<[u8; 16]>(),
            prop::sample::select(vec![0x10u8, 0x40, 0x30, 0xF0]),
        )
            .prop_map(|(mut u, version)| {
                u[6] = version | (u[6] & 0x0F);
                u.to_vec()
            })
            .boxed(),
        Timeuuid => (any::<[u8; 16]>(), 0u8..2)
            .prop_map(|(mut u, small)| {
                u[6] = 0x10 | (u[6] & 0x0F);
                if small == 0 {
                    u[..8].copy_from_slice(&[0, 0, 0, 1, 0, 0, 0x10, 0]);
                }
                u.to_vec()
            })
            .boxed(),
        Varint => prop_oneof![
            (-300i64..300).prop_map(bigint),
            any::<i64>().prop_map(bigint),
            prop::collection::vec(any::<u8>(), 1..20),
        ]
        .boxed(),
        Decimal => (-3i32..3, prop_oneof![-30i64..30, any::<i64>()])
            .prop_map(|(scale, unscaled)| {
                let mut v = scale.to_be_bytes().to_vec();
                v.extend(bigint(unscaled));
                v
            })
            .boxed(),
        Inet => prop_oneof![
            any::<[u8; 4]>().prop_map(|a| a.to_vec()),
            any::<[u8; 16]>().prop_map(|a| a.to_vec())
        ]
        .boxed(),
        Ascii | Text => "[ab\u{e9}]{0,4}".prop_map(String::into_bytes).boxed(),
        Blob | Duration => {
            prop::collection::vec(prop::sample::select(vec![0u8, 1, 0x7F, 0x80, 0xFF]), 0..5)
                .boxed()
        }
    }
}

type Schema = Vec<(CqlType, bool)>;

fn schema() -> impl Strategy<Value = Schema> {
    prop::collection::vec(
        (prop::sample::select(types_under_test()), any::<bool>()),
        1..4,
    )
}

fn clustering(schema: &Schema) -> BoxedStrategy<Vec<Vec<u8>>> {
    let values: Vec<_> = schema.iter().map(|(ty, _)| value(ty)).collect();
    values.boxed()
}

/// A schema, a full clustering and, independently, a full clustering or prefix.
fn schema_and_pair() -> impl Strategy<Value = (Schema, Vec<Vec<u8>>, Vec<Vec<u8>>)> {
    schema().prop_flat_map(|s| {
        let n = s.len();
        (Just(s.clone()), clustering(&s), clustering(&s), 0..=n).prop_map(|(s, a, mut b, len)| {
            b.truncate(len);
            (s, a, b)
        })
    })
}

fn encode(schema: &Schema, values: &[Vec<u8>]) -> Vec<u8> {
    let refs: Vec<Option<&[u8]>> = values.iter().map(|v| Some(v.as_slice())).collect();
    let mut out = Vec::new();
    encode_clustering(schema, &refs, &mut out);
    out
}

fn bound(schema: &Schema, prefix: &[Vec<u8>], kind: BoundKind) -> Vec<u8> {
    let refs: Vec<Option<&[u8]>> = prefix.iter().map(|v| Some(v.as_slice())).collect();
    let mut out = Vec::new();
    encode_bound(schema, &refs, kind, &mut out);
    out
}

/// Cassandra's ClusteringComparator: component by component, reversed per column, shorter first.
fn compare_clusterings(schema: &Schema, a: &[Vec<u8>], b: &[Vec<u8>]) -> Ordering {
    schema
        .iter()
        .zip(a.iter().zip(b))
        .map(|((ty, reversed), (x, y))| {
            let o = compare(ty, x, y);
            if *reversed {
                o.reverse()
            } else {
                o
            }
        })
        .find(|o| o.is_ne())
        .unwrap_or(a.len().cmp(&b.len()))
}

/// Whether decoding gives back the very bytes (no varint, decimal or float anywhere inside).
fn is_canonical(ty: &CqlType) -> bool {
    use NativeType::*;
    match ty {
        CqlType::Native(n) => !matches!(n, Varint | Decimal | Float | Double),
        CqlType::Frozen(inner) | CqlType::List(inner) | CqlType::Set(inner) => is_canonical(inner),
        CqlType::Map(k, v) => is_canonical(k) && is_canonical(v),
        CqlType::Tuple(types) => types.iter().all(is_canonical),
        CqlType::Udt(udt) => {
            udt.added_fields == 0 && udt.fields.iter().all(|(_, t)| is_canonical(t))
        }
        _ => true,
    }
}

proptest! {
    #[test]
    fn encoding_orders_like_compare((schema, a, b) in schema_and_pair()) {
        let expected = compare_clusterings(&schema, &a, &b);
        prop_assert_eq!(encode(&schema, &a).cmp(&encode(&schema, &b)), expected);
    }

    #[test]
    fn decode_inverts_encode((schema, a, _b) in schema_and_pair()) {
        let encoded = encode(&schema, &a);
        let decoded = decode_clustering(&schema, &encoded).unwrap();
        prop_assert_eq!(decoded.len(), a.len());
        let again: Vec<Vec<u8>> = decoded.iter().flatten().map(|v| v.to_vec()).collect();
        prop_assert_eq!(encode(&schema, &again), encoded);
        for ((ty, _), (got, want)) in schema.iter().zip(decoded.iter().zip(&a)) {
            let got = got.as_ref().unwrap();
            prop_assert_eq!(compare(ty, got, want), Ordering::Equal);
            if is_canonical(ty) && !want.is_empty() {
                prop_assert_eq!(&got[..], &want[..]);
            }
        }
    }

    #[test]
    fn bounds_enclose_exactly_the_extensions((schema, c, other) in schema_and_pair(), take in 0usize..4, from_c in any::<bool>()) {
        let source = if from_c { &c } else { &other };
        let prefix = &source[..take.min(source.len())];
        let row = encode(&schema, &c);
        let before = bound(&schema, prefix, BoundKind::Before);
        let after = bound(&schema, prefix, BoundKind::After);
        let extends = compare_clusterings(&schema, prefix, &c[..prefix.len()]) == Ordering::Equal;
        prop_assert!(before < after);
        if extends {
            prop_assert!(before < row && row < after);
        } else {
            prop_assert_eq!(before < row, after < row);
        }
    }

    #[test]
    fn compare_never_panics(ty in prop::sample::select(types_under_test()), a in prop::collection::vec(any::<u8>(), 0..24), b in prop::collection::vec(any::<u8>(), 0..24)) {
        let forward = compare(&ty, &a, &b);
        prop_assert_eq!(forward.reverse(), compare(&ty, &b, &a));
        let schema = vec![(ty.clone(), false)];
        prop_assert_eq!(encode(&schema, std::slice::from_ref(&a)).cmp(&encode(&schema, std::slice::from_ref(&b))), forward);
        prop_assert!(decode_clustering(&schema, &encode(&schema, &[a])).is_ok());
    }

    #[test]
    fn decode_rejects_garbage_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..32), ty in prop::sample::select(types_under_test())) {
        let _ = decode_clustering(&[(ty, false), (native(NativeType::Int), true)], &bytes);
    }
}

fn int(v: i32) -> Vec<u8> {
    v.to_be_bytes().to_vec()
}

#[test]
fn reversed_columns_sort_descending_with_empty_last() {
    let schema = vec![(native(NativeType::Int), true)];
    assert!(encode(&schema, &[int(2)]) < encode(&schema, &[int(1)]));
    assert!(encode(&schema, &[int(-1)]) < encode(&schema, &[vec![]]));
    let ascending = vec![(native(NativeType::Int), false)];
    assert!(encode(&ascending, &[vec![]]) < encode(&ascending, &[int(i32::MIN)]));
}

#[test]
fn static_row_and_empty_bounds() {
    let schema = vec![(native(NativeType::Text), false)];
    let row = encode(&schema, &[b"a".to_vec()]);
    let before = bound(&schema, &[], BoundKind::Before);
    let after = bound(&schema, &[], BoundKind::After);
    assert_eq!(before, vec![0x20]);
    assert_eq!(after, vec![0x60]);
    assert!(Vec::<u8>::new() < before && before < row && row < after);
    assert_eq!(decode_clustering(&schema, &[]), Ok(vec![]));
}

#[test]
fn example_layouts() {
    let schema = vec![
        (native(NativeType::Int), false),
        (native(NativeType::Blob), false),
    ];
    assert_eq!(
        encode(&schema, &[int(1), vec![0x00, 0x07]]),
        vec![0x40, 0x80, 0, 0, 1, 0x40, 0x00, 0xFF, 0x07, 0x00, 0x38]
    );
    let nulls = [None, Some(&[][..])];
    let mut out = Vec::new();
    encode_clustering(&schema, &nulls, &mut out);
    assert_eq!(out, vec![0x3E, 0x3F, 0x38]);
    assert_eq!(
        decode_clustering(&schema, &out),
        Ok(vec![None, Some(bytes::Bytes::new())])
    );
}

#[test]
fn known_comparisons() {
    use NativeType::*;
    let t = |n| native(n);
    assert_eq!(compare(&t(Int), &int(-1), &int(1)), Ordering::Less);
    assert_eq!(compare(&t(Int), &[], &int(i32::MIN)), Ordering::Less);
    assert_eq!(
        compare(&t(Date), &0x8000_0000u32.to_be_bytes(), &1u32.to_be_bytes()),
        Ordering::Greater
    );
    assert_eq!(compare(&t(Boolean), &[0], &[5]), Ordering::Less);
    assert_eq!(
        compare(
            &t(Double),
            &f64::NAN.to_be_bytes(),
            &f64::INFINITY.to_be_bytes()
        ),
        Ordering::Greater
    );
    assert_eq!(
        compare(&t(Float), &(-0.0f32).to_be_bytes(), &0.0f32.to_be_bytes()),
        Ordering::Less
    );
    assert_eq!(compare(&t(Text), b"ab", b"b"), Ordering::Less);
    // Version 1 UUIDs order by timestamp (time_hi first), not by their leading bytes.
    let early = [0xFF, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let late = [0x00, 0, 0, 0, 0, 0, 0x10, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(compare(&t(Timeuuid), &early, &late), Ordering::Less);
    assert_eq!(compare(&t(Uuid), &early, &late), Ordering::Less);
    // TimeUUIDType compares the low half as signed bytes, UUIDType as unsigned.
    let mut neg = late;
    neg[8] = 0x80;
    assert_eq!(compare(&t(Timeuuid), &neg, &late), Ordering::Less);
    assert_eq!(compare(&t(Uuid), &neg, &late), Ordering::Greater);
    // Lower UUID versions sort first.
    let mut v4 = early;
    v4[6] = 0x40;
    assert_eq!(compare(&t(Uuid), &v4, &late), Ordering::Greater);
    let list =
        |items: &[i32]| serialize_collection(items.len(), items.iter().map(|i| Some(int(*i))));
    let list_ty = frozen(CqlType::List(Box::new(t(Int))));
    assert_eq!(
        compare(&list_ty, &list(&[1]), &list(&[1, 0])),
        Ordering::Less
    );
    assert_eq!(
        compare(&list_ty, &list(&[2]), &list(&[1, 5])),
        Ordering::Greater
    );
}

fn text(v: &str) -> Option<Vec<u8>> {
    Some(v.as_bytes().to_vec())
}

fn fields(items: Vec<Option<Vec<u8>>>) -> Vec<u8> {
    serialize_items(items.into_iter())
}

#[test]
fn alter_type_add_keeps_keys() {
    let before = altered("ty", vec![native(NativeType::Text)], 0);
    let after = altered(
        "ty",
        vec![native(NativeType::Text), native(NativeType::Text)],
        1,
    );
    let old = fields(vec![text("foo")]);
    let with_null = fields(vec![text("foo"), None]);
    let with_bar = fields(vec![text("foo"), text("b")]);
    let with_empty = fields(vec![text("foo"), text("")]);
    let key = encode(&vec![(before.clone(), false)], std::slice::from_ref(&old));
    assert_eq!(key, vec![0x40, 0x40, b'f', b'o', b'o', 0x00, 0x38]);
    let schema = vec![(after.clone(), false)];
    assert_eq!(encode(&schema, std::slice::from_ref(&old)), key);
    assert_eq!(encode(&schema, std::slice::from_ref(&with_null)), key);
    assert_eq!(
        decode_clustering(&schema, &key),
        Ok(vec![Some(with_null.clone().into())])
    );
    assert_eq!(
        encode(&schema, std::slice::from_ref(&with_bar)),
        vec![0x40, 0x40, b'f', b'o', b'o', 0x00, 0xFE, 0x40, b'b', 0x00, 0x20, 0x38]
    );
    let ascending = [&old, &with_empty, &with_bar, &fields(vec![text("fop")])];
    for reversed in [false, true] {
        let schema = vec![(after.clone(), reversed)];
        let keys: Vec<Vec<u8>> = ascending
            .iter()
            .map(|v| encode(&schema, std::slice::from_ref(*v)))
            .collect();
        for pair in keys.windows(2) {
            assert_eq!(pair[0] < pair[1], !reversed);
        }
        for (key, value) in keys.iter().zip(ascending) {
            let decoded = decode_clustering(&schema, key).unwrap();
            let decoded = decoded[0].as_ref().unwrap();
            assert_eq!(compare(&after, decoded, value), Ordering::Equal);
        }
    }
}

#[test]
fn unaltered_types_spell_every_field() {
    let ty = altered(
        "u",
        vec![native(NativeType::Int), native(NativeType::Text)],
        0,
    );
    let value = fields(vec![Some(int(1))]);
    assert_eq!(
        encode(&vec![(ty, false)], &[value]),
        vec![0x40, 0x40, 0x80, 0, 0, 1, 0x3E, 0x38]
    );
}

/// `u0` has an int and an added text; each `u{i+1}` has `u{i}` and an added text. `levels`
/// values, each setting the added field of one level.
fn chain(levels: usize) -> (CqlType, Vec<Vec<u8>>) {
    let mut ty = altered(
        "u0",
        vec![native(NativeType::Int), native(NativeType::Text)],
        1,
    );
    let mut values: Vec<Vec<u8>> = vec![
        fields(vec![Some(int(1))]),
        fields(vec![Some(int(1)), text("x")]),
    ];
    for level in 1..levels {
        values = values.into_iter().map(|v| fields(vec![Some(v)])).collect();
        values.push(fields(vec![Some(values[0].clone()), text("x")]));
        ty = altered(&format!("u{level}"), vec![ty, native(NativeType::Text)], 1);
    }
    (ty, values)
}

#[test]
fn types_ending_together_order_by_the_inner_one() {
    for levels in [2, 3, 33] {
        let (ty, values) = chain(levels);
        for reversed in [false, true] {
            let schema = vec![(ty.clone(), reversed)];
            for a in &values {
                let key = encode(&schema, std::slice::from_ref(a));
                let decoded = decode_clustering(&schema, &key).unwrap();
                assert_eq!(
                    encode(&schema, &[decoded[0].clone().unwrap().to_vec()]),
                    key
                );
                for b in &values {
                    let expected = compare_clusterings(
                        &schema,
                        std::slice::from_ref(a),
                        std::slice::from_ref(b),
                    );
                    let other = encode(&schema, std::slice::from_ref(b));
                    assert_eq!(key.cmp(&other), expected, "{levels} levels");
                }
            }
        }
    }
}
