//! The crate's files import each other in one direction only (issue 28 point 3): every module
//! path a file names (`crate::…`, `super::…`, a child module's `name::…`, the crate root's
//! re-exports resolved to where they come from) is an edge to the file that defines it, and
//! the edges have no cycle. Test modules are left out; the crate root only declares and
//! re-exports.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

#[test]
fn no_file_imports_one_that_imports_it_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = modules(&src);
    let reexports = reexports(&text_of(&src.join("lib.rs")));
    let mut edges: BTreeMap<&Module, BTreeSet<&Module>> = BTreeMap::new();
    for (module, path) in &files {
        if module.is_empty() {
            continue;
        }
        for named in paths(&text_of(path), module, &files) {
            let named = match named.as_slice() {
                [name] => reexports.get(name).cloned().unwrap_or(named),
                _ => named,
            };
            if let Some(target) = defining(&named, &files) {
                if target != module && !target.is_empty() {
                    edges.entry(module).or_default().insert(target);
                }
            }
        }
    }
    assert!(
        edges.values().map(BTreeSet::len).sum::<usize>() > 40,
        "the edges were not found: {edges:?}"
    );
    if let Some(cycle) = find_cycle(&edges) {
        let names: Vec<String> = cycle.iter().map(|m| m.join("::")).collect();
        panic!(
            "files import each other in a circle: {}",
            names.join(" -> ")
        );
    }
}

/// Every source file by its module path (`[]` for lib.rs), test-only files left out.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut found = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: Module = relative
                .iter()
                .map(|part| part.to_string_lossy().into_owned())
                .collect();
            match module.last().map(String::as_str) {
                Some("tests") => continue,
                Some("mod" | "lib") => {
                    module.pop();
                }
                _ => {}
            }
            found.insert(module, path);
        }
    }
    found
}

/// The file's code before its test module, without comments.
fn text_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    code.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Identifiers and the punctuation paths are made of.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            let mut ident = c.to_string();
            while let Some(&n) = chars.peek().filter(|n| n.is_alphanumeric() || **n == '_') {
                ident.push(n);
                chars.next();
            }
            out.push(ident);
        } else if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            out.push("::".into());
        } else if !c.is_whitespace() {
            out.push(c.to_string());
        }
    }
    out
}

/// The paths starting at token `at` (`a::b`, `a::{b, c::d}`), with the index after them.
fn path_at(tokens: &[String], mut at: usize) -> (Vec<Module>, usize) {
    let mut prefix: Module = vec![tokens[at].clone()];
    at += 1;
    while tokens.get(at).map(String::as_str) == Some("::") {
        match tokens.get(at + 1).map(String::as_str) {
            Some("{") => {
                let mut all = Vec::new();
                at += 2;
                while at < tokens.len() && tokens[at] != "}" {
                    if tokens[at] == "," {
                        at += 1;
                        continue;
                    }
                    let (inner, next) = path_at(tokens, at);
                    all.extend(inner.into_iter().map(|p| [prefix.clone(), p].concat()));
                    at = next;
                    while at < tokens.len() && tokens[at] != "," && tokens[at] != "}" {
                        at += 1; // `as name`
                    }
                }
                return (all, at + 1);
            }
            Some(name) => {
                prefix.push(name.to_string());
                at += 2;
            }
            None => break,
        }
    }
    (vec![prefix], at)
}

/// Every module path file `module` names, made absolute.
fn paths(text: &str, module: &Module, files: &BTreeMap<Module, PathBuf>) -> Vec<Module> {
    let tokens = tokens(text);
    let mut out = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        let starts = tokens[at].chars().all(|c| c.is_alphanumeric() || c == '_')
            && tokens.get(at + 1).map(String::as_str) == Some("::")
            && (at == 0 || tokens[at - 1] != "::");
        if !starts {
            at += 1;
            continue;
        }
        let (found, next) = path_at(&tokens, at);
        out.extend(found.into_iter().filter_map(|p| absolute(p, module, files)));
        at = next;
    }
    out
}

/// `path` from the crate root, when it names a module of this crate.
fn absolute(path: Module, module: &Module, files: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let mut base = module.clone();
    let mut rest = path.as_slice();
    match rest.first().map(String::as_str) {
        Some("crate") => return Some(rest[1..].to_vec()),
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        Some("self") => rest = &rest[1..],
        Some(child) if files.contains_key(&[module.clone(), vec![child.into()]].concat()) => {}
        _ => return None,
    }
    Some([base, rest.to_vec()].concat())
}

/// The crate root's `pub use` names, each with the path it re-exports.
fn reexports(lib: &str) -> BTreeMap<String, Module> {
    let tokens = tokens(lib);
    let mut out = BTreeMap::new();
    for at in 0..tokens.len() {
        if tokens[at] == "use" && at > 0 && tokens[at - 1] == "pub" {
            for path in path_at(&tokens, at + 1).0 {
                let name = path.last().cloned().unwrap_or_default();
                out.insert(name, path);
            }
        }
    }
    out
}

/// The file that defines `path`: the longest prefix of it that is a module.
fn defining<'a>(path: &Module, files: &'a BTreeMap<Module, PathBuf>) -> Option<&'a Module> {
    (1..=path.len())
        .rev()
        .find_map(|n| files.get_key_value(&path[..n]).map(|(m, _)| m))
}

/// A cycle of `edges`, from a depth-first search.
fn find_cycle<'a>(edges: &BTreeMap<&'a Module, BTreeSet<&'a Module>>) -> Option<Vec<&'a Module>> {
    fn visit<'a>(
        node: &'a Module,
        edges: &BTreeMap<&'a Module, BTreeSet<&'a Module>>,
        stack: &mut Vec<&'a Module>,
        done: &mut BTreeSet<&'a Module>,
    ) -> Option<Vec<&'a Module>> {
        if let Some(start) = stack.iter().position(|m| *m == node) {
            return Some([&stack[start..], &[node]].concat());
        }
        if !done.insert(node) {
            return None;
        }
        stack.push(node);
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}
