//! YCSB's core workload properties: the built-in `workloada`…`workloadf`, property files
//! (`-P file`), `-p key=value` overrides, and the operation mix they define.

use std::collections::BTreeMap;

use scylla::statement::Consistency;

/// One YCSB operation type, in the order YCSB prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YcsbOp {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

impl YcsbOp {
    pub const ALL: [YcsbOp; 5] = [
        YcsbOp::Read,
        YcsbOp::Update,
        YcsbOp::Insert,
        YcsbOp::Scan,
        YcsbOp::ReadModifyWrite,
    ];

    pub fn name(self) -> &'static str {
        match self {
            YcsbOp::Read => "READ",
            YcsbOp::Update => "UPDATE",
            YcsbOp::Insert => "INSERT",
            YcsbOp::Scan => "SCAN",
            YcsbOp::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }
}

/// The properties of YCSB's bundled workload `name` (`workloada` … `workloadf`).
fn builtin(name: &str) -> Option<&'static str> {
    Some(match name {
        "workloada" => "readproportion=0.5\nupdateproportion=0.5\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian",
        "workloadb" => "readproportion=0.95\nupdateproportion=0.05\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian",
        "workloadc" => "readproportion=1\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian",
        "workloadd" => "readproportion=0.95\nupdateproportion=0\nscanproportion=0\ninsertproportion=0.05\nrequestdistribution=latest",
        "workloade" => "readproportion=0\nupdateproportion=0\nscanproportion=0.95\ninsertproportion=0.05\nrequestdistribution=zipfian\nmaxscanlength=100",
        "workloadf" => "readproportion=0.5\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nreadmodifywriteproportion=0.5\nrequestdistribution=zipfian",
        _ => return None,
    })
}

/// Workload properties as YCSB reads them (later settings win).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Properties(BTreeMap<String, String>);

impl Properties {
    /// `-P name`: a built-in workload, or a Java properties file.
    pub fn load(&mut self, name: &str) -> Result<(), String> {
        let base = name.rsplit('/').next().unwrap_or(name);
        let text = match builtin(base) {
            Some(t) => t.to_string(),
            None => std::fs::read_to_string(name)
                .map_err(|e| format!("Cannot read workload {name}: {e}"))?,
        };
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            self.set(line)?;
        }
        Ok(())
    }

    /// `key=value`.
    pub fn set(&mut self, kv: &str) -> Result<(), String> {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("Expected key=value, got {kv}"))?;
        self.0.insert(k.trim().to_string(), v.trim().to_string());
        Ok(())
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    pub fn str_or<'a>(&'a self, key: &str, default: &'a str) -> &'a str {
        self.get(key).unwrap_or(default)
    }

    pub fn num<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, String> {
        match self.get(key) {
            Some(v) => v.parse().map_err(|_| format!("Bad number for {key}: {v}")),
            None => Ok(default),
        }
    }

    /// A consistency level property (`cassandra.readconsistencylevel`,
    /// `cassandra.writeconsistencylevel`); YCSB's default is ONE.
    pub fn consistency(&self, key: &str) -> Result<Consistency, String> {
        let name = self.str_or(key, "ONE").to_ascii_uppercase();
        crate::client::level(&name)
            .ok_or_else(|| format!("Bad consistency level for {key}: {name}"))
    }

    /// The operation mix: `(op, proportion)` for every op with a positive proportion.
    pub fn mix(&self) -> Result<Vec<(YcsbOp, f64)>, String> {
        let keys = [
            ("readproportion", 0.95),
            ("updateproportion", 0.05),
            ("insertproportion", 0.0),
            ("scanproportion", 0.0),
            ("readmodifywriteproportion", 0.0),
        ];
        let mut mix = Vec::new();
        for (op, (key, default)) in YcsbOp::ALL.into_iter().zip(keys) {
            let p: f64 = self.num(key, default)?;
            if p > 0.0 {
                mix.push((op, p));
            }
        }
        if mix.is_empty() {
            return Err("The workload has no operations (all proportions are 0)".into());
        }
        Ok(mix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_workloads_and_overrides() {
        for (name, ops) in [
            ("workloada", 2),
            ("workloadb", 2),
            ("workloadc", 1),
            ("workloadd", 2),
            ("workloade", 2),
            ("workloadf", 2),
        ] {
            let mut p = Properties::default();
            p.load(name).expect("builtin");
            assert_eq!(p.mix().expect("mix").len(), ops, "{name}");
        }
        let mut p = Properties::default();
        p.load("workloads/workloada").expect("path form");
        p.set("requestdistribution=uniform").expect("set");
        assert_eq!(p.str_or("requestdistribution", "x"), "uniform");
        assert_eq!(
            p.mix().expect("mix"),
            vec![(YcsbOp::Read, 0.5), (YcsbOp::Update, 0.5)]
        );
        assert_eq!(p.num("recordcount", 1000u64), Ok(1000));
        p.set("recordcount=abc").expect("set");
        assert!(p.num("recordcount", 1u64).is_err());
        assert!(p.load("/nonexistent/workloadz").is_err());
        assert!(p.set("novalue").is_err());
    }

    #[test]
    fn consistency_levels_default_to_one_as_in_ycsb() {
        let mut p = Properties::default();
        assert_eq!(
            p.consistency("cassandra.readconsistencylevel"),
            Ok(Consistency::One)
        );
        p.set("cassandra.writeconsistencylevel=quorum")
            .expect("set");
        assert_eq!(
            p.consistency("cassandra.writeconsistencylevel"),
            Ok(Consistency::Quorum)
        );
        p.set("cassandra.readconsistencylevel=MOST").expect("set");
        assert!(p.consistency("cassandra.readconsistencylevel").is_err());
    }
}
