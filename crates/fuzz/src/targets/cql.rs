//! The CQL lexer and parser (`cql::parse`) on text: the statements of the test suite
//! mutated token by token (deleted, repeated, swapped, spliced from other statements,
//! nested a hundred levels deep, literals replaced by extreme ones) and by bytes, and
//! generated statements with deep terms and types. Any answer but a panic or a hang is fine.

use crate::driver::Target;
use crate::rng::Rng;

pub const TARGET: Target = Target {
    name: "cql",
    seeds,
    generate,
    mutate: Some(mutate_tokens),
    run,
    short_iterations: 3000,
};

const CORPUS: &str = include_str!("../../corpus/cql.txt");

fn seeds() -> Vec<Vec<u8>> {
    CORPUS.lines().map(|l| l.as_bytes().to_vec()).collect()
}

fn run(input: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(input);
    let _ = cql::parse(&text);
    Ok(())
}

const KEYWORDS: [&str; 40] = [
    "SELECT",
    "FROM",
    "WHERE",
    "AND",
    "INSERT",
    "INTO",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE",
    "IF",
    "EXISTS",
    "NOT",
    "CREATE",
    "TABLE",
    "KEYSPACE",
    "TYPE",
    "INDEX",
    "PRIMARY",
    "KEY",
    "WITH",
    "USING",
    "TTL",
    "TIMESTAMP",
    "BEGIN",
    "BATCH",
    "APPLY",
    "IN",
    "CONTAINS",
    "LIMIT",
    "ORDER",
    "BY",
    "ALLOW",
    "FILTERING",
    "JSON",
    "DISTINCT",
    "AS",
    "CAST",
    "TOKEN",
    "frozen",
];

const PUNCTUATION: [&str; 18] = [
    "(", ")", "[", "]", "{", "}", ",", ";", ".", ":", "?", "=", "<", ">", "<=", "+", "-", "..",
];

/// Literals on the edges of what the lexer and the literal parsers accept.
const EXTREME_LITERALS: [&str; 16] = [
    "99999999999999999999999999999999",
    "-9223372036854775809",
    "1e400",
    "-0.0e-400",
    "NaN",
    "-Infinity",
    "0x",
    "0xzz",
    "''''",
    "$$ $ $$",
    "1y2mo3w4d5h6m7s8ms9us10ns",
    "P0001-02-03T04:05:06",
    "123e4567-e89b-12d3-a456-426614174000",
    "'\u{0}\u{10ffff}'",
    "\"\"\"\"",
    "-",
];

/// Splits a statement into rough tokens: quoted runs, word runs, single other characters.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        let mut token = c.to_string();
        if c == '\'' || c == '"' {
            for next in chars.by_ref() {
                token.push(next);
                if next == c {
                    break;
                }
            }
        } else if c.is_alphanumeric() || c == '_' {
            while let Some(&next) = chars.peek() {
                if !(next.is_alphanumeric() || next == '_' || next == '.') {
                    break;
                }
                token.push(next);
                chars.next();
            }
        }
        out.push(token);
    }
    out
}

fn mutate_tokens(rng: &mut Rng, base: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    let mut toks = tokens(&String::from_utf8_lossy(base));
    for _ in 0..1 + rng.below(3) {
        mutate_once(rng, &mut toks, others);
    }
    join(rng, &toks).into_bytes()
}

fn mutate_once(rng: &mut Rng, toks: &mut Vec<String>, others: &[Vec<u8>]) {
    let n = toks.len();
    let at = rng.below(n + 1);
    match rng.below(9) {
        0 if n > 0 => {
            toks.remove(at.min(n - 1));
        }
        1 if n > 0 => {
            let t = toks[at.min(n - 1)].clone();
            toks.insert(at, t);
        }
        2 if n > 1 => toks.swap(rng.below(n), rng.below(n)),
        3 => {
            let other = tokens(&another(rng, others));
            if !other.is_empty() {
                toks.insert(at, rng.pick(&other).clone());
            }
        }
        4 => toks.insert(at, rng.pick(&KEYWORDS).to_string()),
        5 => toks.insert(at, rng.pick(&PUNCTUATION).to_string()),
        6 => nest(rng, toks, at),
        7 if n > 0 => toks[at.min(n - 1)] = extreme_literal(rng),
        _ => {
            let other = another(rng, others);
            toks.push(";".into());
            toks.extend(tokens(&other));
        }
    }
}

/// The text of another input, if there is one.
fn another(rng: &mut Rng, others: &[Vec<u8>]) -> String {
    match others.get(rng.below(others.len())) {
        Some(other) => String::from_utf8_lossy(other).into_owned(),
        None => String::new(),
    }
}

/// Wraps the tokens after `at` (or nothing) in many brackets of one kind.
fn nest(rng: &mut Rng, toks: &mut Vec<String>, at: usize) {
    let depth = *rng.pick(&[2usize, 50, 99, 100, 101, 150, 400]);
    let (open, close) = *rng.pick(&[("(", ")"), ("[", "]"), ("{", "}"), ("frozen<", ">")]);
    let end = at + rng.below(toks.len() - at + 1);
    toks.insert(end, close.repeat(depth));
    toks.insert(at, open.repeat(depth));
}

fn extreme_literal(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => format!("'{}'", "x".repeat(rng.size(100_000))),
        1 => format!("\"{}\"", "y".repeat(rng.size(70_000))),
        _ => rng.pick(&EXTREME_LITERALS).to_string(),
    }
}

/// Tokens joined by spaces, now and then by a comment or a newline.
fn join(rng: &mut Rng, toks: &[String]) -> String {
    let mut out = String::new();
    for t in toks {
        out.push_str(t);
        out.push_str(match rng.below(40) {
            0 => "/* c */",
            1 => " -- c\n",
            2 => "\n",
            _ => " ",
        });
    }
    out
}

fn generate(rng: &mut Rng) -> Vec<u8> {
    let depth = rng.size(120);
    let text = match rng.below(5) {
        0 => format!("SELECT {} FROM ks.t", term(rng, depth)),
        1 => format!("INSERT INTO t (k, v) VALUES (0, {})", term(rng, depth)),
        2 => format!(
            "CREATE TABLE t (k int PRIMARY KEY, v {})",
            cql_type(rng, depth)
        ),
        3 => format!("SELECT * FROM t WHERE {}", relation(rng, depth)),
        _ => {
            let soup: Vec<String> = (0..rng.size(40))
                .map(|_| match rng.below(3) {
                    0 => rng.pick(&KEYWORDS).to_string(),
                    1 => rng.pick(&PUNCTUATION).to_string(),
                    _ => extreme_literal(rng),
                })
                .collect();
            soup.join(" ")
        }
    };
    text.into_bytes()
}

fn term(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return match rng.below(3) {
            0 => rng.below(100).to_string(),
            1 => "?".into(),
            _ => extreme_literal(rng),
        };
    }
    let inner = term(rng, depth - 1);
    match rng.below(7) {
        0 => format!("({inner})"),
        1 => format!("[{inner}, 1]"),
        2 => format!("{{{inner}: 1}}"),
        3 => format!("f({inner})"),
        4 => format!("{inner} + 1"),
        5 => format!("(int) {inner}"),
        _ => format!("({inner}, 2)"),
    }
}

fn cql_type(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return rng
            .pick(&["int", "text", "blob", "vector<float, 3>", "duration"])
            .to_string();
    }
    let inner = cql_type(rng, depth - 1);
    match rng.below(5) {
        0 => format!("frozen<list<{inner}>>"),
        1 => format!("frozen<map<int, {inner}>>"),
        2 => format!("tuple<{inner}, int>"),
        3 => format!("vector<{inner}, 2>"),
        _ => format!("frozen<set<{inner}>>"),
    }
}

fn relation(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return "k = 1".into();
    }
    let inner = relation(rng, depth - 1);
    match rng.below(3) {
        0 => format!("({inner})"),
        1 => format!("{inner} AND c > {}", term(rng, 2)),
        _ => format!("(k, c) IN (({}, 1))", term(rng, depth.min(3))),
    }
}
