//! `helenus-fuzz`: the long mode of the fuzz targets.
//!
//! ```text
//! helenus-fuzz list
//! helenus-fuzz long [--duration 1h] [--jobs N] [--out DIR] [--seed N] [--hang-secs N] [TARGET...]
//! helenus-fuzz replay TARGET FILE...
//! helenus-fuzz worker TARGET --seed N --seconds S --progress FILE --out DIR   (internal)
//! ```

use std::path::PathBuf;
use std::time::Duration;

use fuzz::driver::{hex_preview, run_one, Target};
use fuzz::{long, targets, worker};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("list") => {
            targets::ALL.iter().for_each(|t| println!("{}", t.name));
            0
        }
        Some("long") => run_long(&args[1..]),
        Some("replay") => replay(&args[1..]),
        Some("worker") => run_worker(&args[1..]),
        _ => {
            eprintln!("usage: helenus-fuzz list | long [--duration 1h] [--jobs N] [--out DIR] [--seed N] [--hang-secs N] [TARGET...] | replay TARGET FILE...");
            2
        }
    };
    std::process::exit(code);
}

fn fail(message: String) -> ! {
    eprintln!("helenus-fuzz: {message}");
    std::process::exit(2)
}

fn target(name: &str) -> &'static Target {
    targets::by_name(name).unwrap_or_else(|| fail(format!("no target named {name} (see `list`)")))
}

/// `--name value` pairs and the other arguments.
fn split_flags(args: &[String]) -> (Vec<(String, String)>, Vec<String>) {
    let (mut flags, mut rest) = (Vec::new(), Vec::new());
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.strip_prefix("--") {
            Some(name) => {
                let value = it
                    .next()
                    .unwrap_or_else(|| fail(format!("--{name} needs a value")));
                flags.push((name.to_string(), value.clone()));
            }
            None => rest.push(arg.clone()),
        }
    }
    (flags, rest)
}

fn flag<'a>(flags: &'a [(String, String)], name: &str) -> Option<&'a str> {
    flags
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

fn number(flags: &[(String, String)], name: &str, default: u64) -> u64 {
    flag(flags, name).map_or(default, |v| {
        v.parse()
            .unwrap_or_else(|_| fail(format!("--{name}: not a number: {v}")))
    })
}

/// `90`, `90s`, `30m`, `2h` as seconds.
fn duration(text: &str) -> f64 {
    let (digits, unit) = match text.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((at, _)) => text.split_at(at),
        None => (text, "s"),
    };
    let value: f64 = digits
        .parse()
        .unwrap_or_else(|_| fail(format!("not a duration: {text}")));
    match unit {
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => fail(format!("not a duration: {text} (use s, m or h)")),
    }
}

fn run_long(args: &[String]) -> i32 {
    let (flags, names) = split_flags(args);
    let targets: Vec<&'static Target> = match names.is_empty() {
        true => targets::ALL.iter().collect(),
        false => names.iter().map(|n| target(n)).collect(),
    };
    let options = long::Options {
        seconds: duration(flag(&flags, "duration").unwrap_or("10m")),
        jobs: number(&flags, "jobs", 1) as usize,
        out: PathBuf::from(flag(&flags, "out").unwrap_or("fuzz-out")),
        seed: number(&flags, "seed", 1),
        hang: Duration::from_secs(number(&flags, "hang-secs", 60)),
        targets,
    };
    let tallies = long::run(&options);
    let summary = long::summary(&tallies);
    print!("{summary}");
    let _ = std::fs::write(options.out.join("summary.txt"), &summary);
    let found: u64 = tallies
        .iter()
        .map(|t| t.failures + t.aborts + t.hangs)
        .sum();
    if found > 0 {
        println!("failing inputs are in {}", options.out.display());
    }
    i32::from(found > 0)
}

fn replay(args: &[String]) -> i32 {
    let Some((name, files)) = args.split_first() else {
        fail("replay needs a target and files".into())
    };
    let target = target(name);
    let mut failed = 0;
    for file in files {
        let input = std::fs::read(file).unwrap_or_else(|e| fail(format!("{file}: {e}")));
        match run_one(target, &input) {
            Ok(()) => println!("{file}: ok"),
            Err(message) => {
                failed += 1;
                println!(
                    "{file}: FAILED: {message}\n  input: {}",
                    hex_preview(&input)
                );
            }
        }
    }
    i32::from(failed > 0)
}

fn run_worker(args: &[String]) -> i32 {
    let (flags, names) = split_flags(args);
    let Some(name) = names.first() else {
        fail("worker needs a target".into())
    };
    let path = |n: &str| {
        PathBuf::from(flag(&flags, n).unwrap_or_else(|| fail(format!("--{n} is required"))))
    };
    worker::work(
        target(name),
        number(&flags, "seed", 1),
        flag(&flags, "seconds").map_or(10.0, duration),
        &path("progress"),
        &path("out"),
    );
    0
}
