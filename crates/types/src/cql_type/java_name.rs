//! Java class names of types (`org.apache.cassandra.db.marshal.VectorType(...)`), as custom
//! types and vectors travel in protocol `[option]`s.
use super::{CqlType, NativeType, UdtType};
use crate::limits::MAX_NESTING;

const PREFIX: &str = "org.apache.cassandra.db.marshal.";

impl NativeType {
    /// The marshal class name without its package (`Int32Type`).
    pub fn java_class(self) -> &'static str {
        use NativeType::*;
        match self {
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
}

impl CqlType {
    /// The fully qualified Java class name Cassandra gives this type.
    pub fn java_class_name(&self) -> String {
        self.java(false)
    }

    fn java(&self, ignore_freezing: bool) -> String {
        match self {
            CqlType::Native(n) => format!("{PREFIX}{}", n.java_class()),
            CqlType::Frozen(inner) => {
                let body = inner.java(true);
                if ignore_freezing || matches!(**inner, CqlType::Tuple(_)) {
                    body
                } else {
                    format!("{PREFIX}FrozenType({body})")
                }
            }
            CqlType::List(e) => format!("{PREFIX}ListType({})", e.java(ignore_freezing)),
            CqlType::Set(e) => format!("{PREFIX}SetType({})", e.java(ignore_freezing)),
            CqlType::Map(k, v) => format!(
                "{PREFIX}MapType({},{})",
                k.java(ignore_freezing),
                v.java(ignore_freezing)
            ),
            CqlType::Tuple(items) => format!("{PREFIX}TupleType({})", join(items, ignore_freezing)),
            CqlType::Udt(udt) => udt_class(udt, ignore_freezing),
            CqlType::Vector(e, n) => format!("{PREFIX}VectorType({},{n})", e.java(ignore_freezing)),
            CqlType::Custom(class) => class.clone(),
        }
    }

    /// Reads a class name made of natives, collections, tuples, frozen wrappers and vectors;
    /// `None` for anything else (UDTs, true custom types, or parameters nested more than
    /// `MAX_NESTING` levels).
    pub fn from_java_class(class: &str) -> Option<CqlType> {
        (paren_depth(class) <= MAX_NESTING).then(|| read_class(class))?
    }
}

/// The deepest nesting of parentheses in `text`.
fn paren_depth(text: &str) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn read_class(class: &str) -> Option<CqlType> {
    let class = class.trim();
    let (name, args) = match class.find('(') {
        Some(open) => (
            &class[..open],
            Some(class.strip_suffix(')')?.get(open + 1..)?),
        ),
        None => (class, None),
    };
    let short = name.strip_prefix(PREFIX).unwrap_or(name);
    match args {
        None => NativeType::ALL
            .into_iter()
            .find(|n| n.java_class() == short)
            .map(CqlType::Native),
        Some(args) => parameterised(short, &split_args(args)?),
    }
}

fn join(items: &[CqlType], ignore_freezing: bool) -> String {
    let names: Vec<String> = items.iter().map(|t| t.java(ignore_freezing)).collect();
    names.join(",")
}

fn udt_class(udt: &UdtType, ignore_freezing: bool) -> String {
    let mut out = format!("{PREFIX}UserType({},{}", udt.keyspace, hex(&udt.name));
    for (field, ty) in &udt.fields {
        out.push_str(&format!(",{}:{}", hex(field), ty.java(ignore_freezing)));
    }
    out.push(')');
    out
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn parameterised(short: &str, args: &[&str]) -> Option<CqlType> {
    let arg = |i: usize| args.get(i).and_then(|a| read_class(a));
    let nested = |i: usize| arg(i).map(CqlType::freeze);
    let ty = match (short, args.len()) {
        ("ListType", 1) => CqlType::List(Box::new(nested(0)?)),
        ("SetType", 1) => CqlType::Set(Box::new(nested(0)?)),
        ("MapType", 2) => CqlType::Map(Box::new(nested(0)?), Box::new(nested(1)?)),
        ("FrozenType", 1) => arg(0)?.freeze(),
        ("ReversedType", 1) => arg(0)?,
        ("TupleType", _) => {
            let items: Option<Vec<CqlType>> = (0..args.len()).map(nested).collect();
            CqlType::Tuple(items?)
        }
        ("VectorType", 2) => {
            let dimension = args[1].trim().parse::<u32>().ok().filter(|&n| n > 0)?;
            CqlType::Vector(Box::new(nested(0)?), dimension)
        }
        _ => return None,
    };
    Some(ty)
}

/// Splits `a,b(c,d),e` at its top-level commas.
fn split_args(args: &str) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in args.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.checked_sub(1)?,
            ',' if depth == 0 => {
                parts.push(&args[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&args[start..]);
    Some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> CqlType {
        CqlType::parse(s, &|_| None).unwrap_or(CqlType::Custom("bad".into()))
    }

    #[test]
    fn vector_class_name() {
        let v = parse("vector<float, 3>");
        let class = "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType,3)";
        assert_eq!(v.java_class_name(), class);
        assert_eq!(CqlType::from_java_class(class), Some(v));
    }

    #[test]
    fn frozen_collections_class_names() {
        let t = parse("list<frozen<set<int>>>");
        let class = t.java_class_name();
        assert_eq!(
            class,
            format!("{PREFIX}ListType({PREFIX}FrozenType({PREFIX}SetType({PREFIX}Int32Type)))")
        );
        assert_eq!(CqlType::from_java_class(&class), Some(t));
        let f = parse("frozen<list<frozen<set<int>>>>");
        assert_eq!(
            f.java_class_name(),
            format!("{PREFIX}FrozenType({PREFIX}ListType({PREFIX}SetType({PREFIX}Int32Type)))")
        );
        assert_eq!(CqlType::from_java_class(&f.java_class_name()), Some(f));
    }

    #[test]
    fn round_trips_of_class_names() {
        for s in [
            "vector<frozen<list<int>>, 2>",
            "frozen<tuple<int, text>>",
            "frozen<map<text, frozen<tuple<int, uuid>>>>",
            "vector<text, 5>",
        ] {
            let t = parse(s);
            assert_eq!(
                CqlType::from_java_class(&t.java_class_name()),
                Some(t),
                "{s}"
            );
        }
    }

    #[test]
    fn nesting_limit_at_and_past_on_a_worker_stack() {
        let lists = |d: usize| {
            format!(
                "{}{PREFIX}Int32Type{}",
                format!("{PREFIX}ListType(").repeat(d),
                ")".repeat(d)
            )
        };
        let read = |d: usize| {
            let class = lists(d);
            crate::limits::on_worker_stack(move || {
                CqlType::from_java_class(&class).map(|t| t.nesting_depth())
            })
        };
        assert_eq!(read(MAX_NESTING), Some(MAX_NESTING));
        assert_eq!(read(MAX_NESTING + 1), None);
        assert_eq!(read(100_000), None);
    }

    #[test]
    fn unknown_classes() {
        assert_eq!(CqlType::from_java_class("com.example.Foo"), None);
        assert_eq!(CqlType::from_java_class("ListType(Int32Type"), None);
        assert_eq!(CqlType::from_java_class("VectorType(FloatType,0)"), None);
        assert_eq!(
            CqlType::from_java_class("Int32Type"),
            Some(CqlType::native(NativeType::Int))
        );
    }
}
