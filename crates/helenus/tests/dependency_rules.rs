//! The crates keep the dependency rules of docs/architecture.md: the table under "Dependency
//! rules" names, for each crate, the workspace crates it may depend on, and `cargo metadata`
//! says which it does. A dependency the table does not allow, a crate the table does not name,
//! or a row naming a crate that does not exist fails this test.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Crate → the workspace crates it may depend on (`None`: any).
type Rules = BTreeMap<String, Option<BTreeSet<String>>>;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Reads the rules table: the first table after the "Dependency rules" paragraph.
fn rules() -> Rules {
    let doc = std::fs::read_to_string(workspace_root().join("docs/architecture.md")).unwrap();
    let start = doc
        .find("**Dependency rules.**")
        .expect("a Dependency rules paragraph");
    let table = doc[start..]
        .lines()
        .skip_while(|line| !line.starts_with("| crate | may depend on |"))
        .skip(2)
        .take_while(|line| line.starts_with('|'));
    let mut rules = Rules::new();
    for line in table {
        let cells: Vec<&str> = line.trim_matches('|').split('|').collect();
        assert_eq!(cells.len(), 2, "a rule row has two cells: {line}");
        let allowed = match cells[1].trim() {
            "`*`" => None,
            other => Some(names(other)),
        };
        for name in names(cells[0]) {
            assert!(
                rules.insert(name.clone(), allowed.clone()).is_none(),
                "{name} twice"
            );
        }
    }
    assert!(!rules.is_empty(), "no rules read");
    rules
}

/// The names in backquotes in a cell.
fn names(cell: &str) -> BTreeSet<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Every workspace crate and its normal (not dev or build) workspace dependencies.
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let workspace: BTreeSet<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    packages
        .iter()
        .map(|package| {
            let deps = package["dependencies"].as_array().unwrap().iter();
            let normal = deps
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap())
                .filter(|name| workspace.contains(name))
                .map(str::to_string)
                .collect();
            (package["name"].as_str().unwrap().to_string(), normal)
        })
        .collect()
}

#[test]
fn crates_depend_only_on_what_the_architecture_allows() {
    let rules = rules();
    let actual = dependencies();
    let mut broken = Vec::new();
    for (name, deps) in &actual {
        match rules.get(name) {
            None => broken.push(format!("{name} has no row in the rules table")),
            Some(None) => {}
            Some(Some(allowed)) => broken.extend(
                deps.difference(allowed)
                    .map(|dep| format!("{name} depends on {dep}, which its row does not allow")),
            ),
        }
    }
    let stale = rules.keys().filter(|name| !actual.contains_key(*name));
    broken.extend(stale.map(|name| format!("the rules name {name}, which is no crate")));
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_rules_table_parses_names_and_wildcards() {
    assert_eq!(
        names("`a`, `bc`"),
        BTreeSet::from(["a".to_string(), "bc".to_string()])
    );
    let rules = rules();
    assert_eq!(rules.get("helenus"), Some(&None));
    assert_eq!(rules.get("types"), Some(&Some(BTreeSet::new())));
    let clock_only = BTreeSet::from(["clock".to_string()]);
    assert_eq!(rules.get("mutation"), Some(&Some(clock_only)));
}
