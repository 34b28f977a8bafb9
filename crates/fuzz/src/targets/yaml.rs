//! The cassandra.yaml loader (`config::load_str`): every setting Helenus knows written out
//! with its default value, then lines mutated (dropped, repeated, re-indented, values
//! swapped or replaced by odd YAML: deep nesting, aliases, tags, huge numbers) and bytes
//! mutated. Any answer but a panic or a hang is fine.

use std::path::Path;

use crate::driver::Target;
use crate::rng::Rng;

pub const TARGET: Target = Target {
    name: "yaml",
    seeds,
    generate,
    mutate: Some(mutate_lines),
    run,
    short_iterations: 400,
};

fn run(input: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(input);
    let _ = config::load_str(&text, Path::new("/nonexistent/base"));
    Ok(())
}

/// `key: value` for every setting, its value as Cassandra prints it.
fn defaults() -> Vec<String> {
    config::Config::default()
        .settings()
        .into_iter()
        .map(|(key, value)| match value {
            Some(v) => format!("{key}: {}", quoted(&v)),
            None => format!("{key}:"),
        })
        .collect()
}

fn quoted(value: &str) -> String {
    let plain = value
        .chars()
        .all(|c| c.is_alphanumeric() || "._-/".contains(c));
    match plain && !value.is_empty() {
        true => value.to_string(),
        false => format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\"")),
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let all = defaults().join("\n");
    let seed_provider = "seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    parameters:\n      - seeds: \"127.0.0.1:7000\"\n";
    vec![all.into_bytes(), seed_provider.as_bytes().to_vec()]
}

const ODD_VALUES: [&str; 20] = [
    "10s",
    "16MiB",
    "-1",
    "null",
    "~",
    "true",
    "1e999",
    "99999999999999999999999",
    "0x1F",
    "[a, b, [c]]",
    "{a: 1, b: {c: 2}}",
    "&anchor 5",
    "*anchor",
    "!!binary aGVsbG8=",
    "|\n  block\n  text",
    "'it''s'",
    "\"\\u0000\\xff\"",
    "5ms",
    "2147483648KiB",
    "-9223372036854775808",
];

fn generate(rng: &mut Rng) -> Vec<u8> {
    let keys = defaults();
    let mut lines: Vec<String> = Vec::new();
    for _ in 0..rng.size(30) {
        let line = rng.pick(&keys);
        let key = line.split(':').next().unwrap_or_default();
        lines.push(format!("{key}: {}", value(rng)));
    }
    lines.join("\n").into_bytes()
}

fn value(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => {
            let depth = *rng.pick(&[10usize, 100, 1000, 20_000]);
            let (open, close) = *rng.pick(&[("[", "]"), ("{a: ", "}")]);
            format!("{}1{}", open.repeat(depth), close.repeat(depth))
        }
        1 => {
            let n = rng.size(50);
            let refs = vec!["*a"; n].join(", ");
            format!("&a [{refs}]")
        }
        _ => rng.pick(&ODD_VALUES).to_string(),
    }
}

fn mutate_lines(rng: &mut Rng, base: &[u8], _: &[Vec<u8>]) -> Vec<u8> {
    let text = String::from_utf8_lossy(base);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return generate(rng);
    }
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(lines.len());
        match rng.below(5) {
            0 => {
                lines.remove(at);
                if lines.is_empty() {
                    break;
                }
            }
            1 => lines.insert(at, lines[at].clone()),
            2 => lines[at] = format!("{}{}", " ".repeat(1 + rng.below(4)), lines[at]),
            3 => {
                let key = lines[at].split(':').next().unwrap_or_default().to_string();
                lines[at] = format!("{key}: {}", value(rng));
            }
            _ => lines.insert(at, "---".into()),
        }
    }
    lines.join("\n").into_bytes()
}
