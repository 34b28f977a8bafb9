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

pub fn seeds() -> Vec<Vec<u8>> {
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

pub fn mutate_tokens(rng: &mut Rng, base: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
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

pub fn extreme_literal(rng: &mut Rng) -> String {
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

pub fn generate(rng: &mut Rng) -> Vec<u8> {
    let depth = rng.size(120);
    let text = match rng.below(5) {
        0 => format!("SELECT {} FROM ks.t", nested(rng, depth, TERMS)),
        1 => format!(
            "INSERT INTO t (k, v) VALUES (0, {})",
            nested(rng, depth, TERMS)
        ),
        2 => format!(
            "CREATE TABLE t (k int PRIMARY KEY, v {})",
            nested(rng, depth, TYPES)
        ),
        3 => format!("SELECT * FROM t WHERE {}", nested(rng, depth, RELATIONS)),
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

/// A grammar fragment: leaves, and templates that wrap what they nest at `$`.
struct Fragment {
    leaves: &'static [&'static str],
    wrappers: &'static [&'static str],
}

const TERMS: Fragment = Fragment {
    leaves: &["0", "?", ":name", "'text'", "-1.5e3", "0xcafe", "now()"],
    wrappers: &[
        "($)", "[$, 1]", "{$: 1}", "f($)", "$ + 1", "(int) $", "($, 2)", "{$}",
    ],
};

const TYPES: Fragment = Fragment {
    leaves: &[
        "int",
        "text",
        "blob",
        "vector<float, 3>",
        "duration",
        "counter",
    ],
    wrappers: &[
        "frozen<list<$>>",
        "frozen<map<int, $>>",
        "tuple<$, int>",
        "vector<$, 2>",
        "frozen<set<$>>",
    ],
};

const RELATIONS: Fragment = Fragment {
    leaves: &[
        "k = 1",
        "(k, c) IN ((1, 1))",
        "token(k) > 0",
        "c CONTAINS KEY 1",
    ],
    wrappers: &["($)", "$ AND c > 1", "$ AND v = [1, (2)]"],
};

/// `depth` wrappers of `fragment` around one of its leaves (or an extreme literal).
fn nested(rng: &mut Rng, depth: usize, fragment: Fragment) -> String {
    let mut text = match rng.one_in(4) {
        true => extreme_literal(rng),
        false => rng.pick(fragment.leaves).to_string(),
    };
    for _ in 0..depth {
        text = rng.pick(fragment.wrappers).replace('$', &text);
    }
    text
}
